// `kubectl netattach explain` over the compatibility corpus: for every pod a real client creates,
// the explanation's verdict is the one the server's pipeline gives the same pod (the same engine,
// not a second evaluator), and what it says of each network is derived from the plugin table and
// the inputs, not copied from a run.
import t, { type Test } from 'tap';
import * as core from '../../src/admission/index.js';
import { REQUEST_KEYS } from '../../src/admission/builtin.js';
import { livePodOf } from '../../src/audit/index.js';
import { explainPod, readerText, renderExplanation, type Explanation } from '../../src/explain/index.js';
import { renderError } from '../../src/field/index.js';
import { nadFromObject, PLUGIN_FACTS, IPAM_FACTS, type Nad } from '../../src/nads/index.js';
import { DEFAULT_SHARING_OWNERS, podNetworkFacts, sharingOwnerOf } from '../../src/policy/index.js';
import { handleReview } from '../../src/server/index.js';
import { CORPUS, KUBEVIRT_CONTROLLER, NADS, NS } from '../compat/corpus.js';
import { ALICE, corpusDeps, corpusPolicies, stepReview } from '../compat/pipeline.js';

const PARSED: Nad[] = NADS.map((o) => nadFromObject(o, { defaultNamespace: NS }));
type Obj = Record<string, unknown>;

/** Could the plugin table let `type` read the selection key `key` at all (by any road)? Read from the table's fields. */
function tableAllows(type: string, ipam: string | undefined, key: string): boolean {
  const f = PLUGIN_FACTS.get(type);
  if (!f) return false;
  if (key === 'mac') return f.macFromCniArgs || f.runtimeConfig.includes('mac');
  if (key === 'ips')
    return (
      f.delegatesIpam &&
      ipam !== undefined &&
      IPAM_FACTS.get(ipam) !== undefined &&
      (IPAM_FACTS.get(ipam)!.ipFromCniArgs !== 'no' || IPAM_FACTS.get(ipam)!.ipsFromRuntimeConfig)
    );
  if (key === 'infiniband-guid') return f.runtimeConfig.includes('infinibandGUID');
  if (key === 'cni-args.guid') return f.argsCni.includes('guid');
  if (key === 'cni-args.mac') return f.argsCni.includes('mac');
  return f.runtimeConfig.includes(key as never);
}

function assertNetworks(t: Test, e: Explanation, pod: Obj, validate: core.AdmissionResponse): void {
  const text = renderExplanation(e);
  const message = validate.status?.message ?? '';
  for (const n of e.networks) {
    const nad = PARSED.find((x) => `${x.namespace}/${x.name}` === n.selection.split('@')[0]);
    t.equal(n.nad.status, nad ? 'found' : 'not-found', `${n.selection}: NAD found as in the corpus`);
    if (!nad) {
      t.match(message, n.selection.split('@')[0]!, `${n.selection}: admission names the missing NAD`);
      continue;
    }
    t.same(
      n.nad.chain?.map((p) => p.type),
      nad.cni?.pluginTypes,
      `${n.selection}: the chain is the NAD's`,
    );
    t.same(n.device?.resourceNames, nad.resourceNames, `${n.selection}: the device's resources are the NAD's resourceName`);
    const written = Object.keys(
      (JSON.parse(JSON.stringify(pod)) as { metadata: { annotations: Record<string, string> } }).metadata.annotations,
    );
    t.ok(written.length > 0);
    for (const r of n.requested) {
      if (r.status === 'read') {
        const plugin = n.nad.chain!.find((p) => p.type === r.by);
        t.ok(plugin, `${r.field}: the reader ${r.by} is in the chain`);
        const capable = tableAllows(r.by!, plugin?.ipam, r.field) || (plugin?.capabilities.includes(r.field) ?? false);
        t.ok(capable, `${r.field}: the plugin table lets ${r.by} read it`);
        // The readers before it in the chain do not read it by the table (the first reader is named).
        const before = n.nad.chain!.slice(0, n.nad.chain!.indexOf(plugin!));
        t.notOk(
          before.some((p) => PLUGIN_FACTS.has(p.type) && r.field === 'mac' && tableAllows(p.type, p.ipam, 'mac')),
          `${r.field}: no earlier plugin reads it`,
        );
      }
      if (r.status === 'ignored' && r.field in Object.fromEntries(REQUEST_KEYS)) {
        // Every plugin known and none reads it: the capability check's finding, at the same path.
        t.ok(
          n.nad.chain!.every((p) => PLUGIN_FACTS.has(p.type) && !tableAllows(p.type, p.ipam, r.field)),
          `${r.field}: no plugin of the chain may read it`,
        );
        t.ok(
          e.admission.errors.some((x) => x.path === r.path) ||
            e.policies.some((p) => p.rules.some((x) => x.rule === 'capabilities' && x.verdict !== 'pass')),
          `${r.field}: the capability rule fires at ${r.path}`,
        );
      }
      if (r.status === 'unknown')
        t.ok(
          r.types!.some((ty) => !PLUGIN_FACTS.has(ty.split(' ')[0]!) || / \(IPAM /.test(ty)),
          `${r.field}: unknown names a type the table lacks`,
        );
      t.ok(
        text.split('\n').some((l) => l.trim().startsWith(r.field) && l.includes(readerText(r))),
        `${r.field}: the text says "${readerText(r)}"`,
      );
    }
  }
}

for (const c of CORPUS) {
  t.test(`${c.name}: explain says what admission does`, async (t) => {
    const policies = corpusPolicies(c);
    const deps = corpusDeps(policies);
    // The pods admitted so far, as serve's pod watch would hold them (with their owner).
    const running = new Map<string, NonNullable<ReturnType<typeof livePodOf>>>();
    let explained = 0;
    for (const [i, step] of c.steps.entries()) {
      const r = await handleReview(stepReview(step, `explain-${i}`, step.before ? KUBEVIRT_CONTROLLER : ALICE), 'validate', 1000, deps);
      if (r.status !== 200) throw new Error(r.error);
      const validate = r.review.response!;
      if (!step.before) {
        const e = explainPod({
          pod: step.pod,
          source: 'file',
          defaultNamespace: NS,
          nads: PARSED,
          policies,
          userInfo: ALICE,
          livePods: [...running.values()],
        });
        explained++;
        t.equal(
          e.admission.verdict,
          validate.allowed ? 'allowed' : 'denied',
          `step ${i}: explain's verdict is admission's (${validate.status?.message ?? 'allowed'})`,
        );
        if (!validate.allowed) t.equal(core.denialMessage(e.admission.errors), validate.status?.message, `step ${i}: the same reasons`);
        t.equal(e.admission.warnings.length, (validate.warnings ?? []).length, `step ${i}: as many warnings`);
        // Every denial reason is printed, rendered as admission renders it.
        const text = renderExplanation(e);
        for (const err of e.admission.errors) t.ok(text.includes(`error: ${renderError(err)}`), `step ${i}: the text carries ${err.path}`);
        t.match(text, validate.allowed ? /^Admission: +would be allowed/m : /^Admission: +would be denied/m, `step ${i}: the verdict line`);
        // A policy rule's verdict is deny exactly when admission denied with that policy's finding.
        for (const p of e.policies) {
          for (const rule of p.rules) {
            if (rule.verdict === 'deny')
              t.match(
                validate.status?.message ?? '',
                p.name === 'builtin' ? /./ : new RegExp(`policy "${p.name}"`),
                `step ${i}: ${p.name}/${rule.rule} denies, and admission says so`,
              );
          }
        }
        assertNetworks(t, e, step.pod, validate);
      }
      if (validate.allowed) {
        const live = livePodOf(step.pod, NS)!;
        const owner = sharingOwnerOf(
          (step.pod as Obj)['metadata'],
          DEFAULT_SHARING_OWNERS,
          (step.pod as { metadata: { namespace: string } }).metadata.namespace,
        );
        running.set(`${live.namespace}/${live.name}`, live);
        // The pod runs now: serve's pod watch holds it (explain runs after that, against running pods).
        deps.reservations.setPod(
          { namespace: live.namespace, name: live.name, ...(owner ? { owner } : {}) },
          podNetworkFacts(live.namespace, live.networks, live.defaultNetwork).addresses,
        );
      }
    }
    t.ok(explained > 0 || c.steps.every((s) => s.before), 'every CREATE explained');
  });
}
