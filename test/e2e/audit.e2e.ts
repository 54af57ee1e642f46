/**
 * End-to-end: the background audit (of pods and of NADs themselves), PolicyReports and observe mode, against a real
 * kube-apiserver with netattach installed from manifests/ (its RBAC: the Lease and the reports)
 * and the optional PolicyReport CRD component. One cluster; the subtests build on each other.
 */
import t from 'tap';
import path from 'node:path';
import { readFile } from 'node:fs/promises';
import { startE2e, type E2e } from './lib/env.js';
import { REPO } from './lib/netattach.js';
import { parseManifests } from './infra/webhook.js';
import { macvlanConfig, namespace, nad, pod, policy, sriovConfig } from './lib/objects.js';

type Obj = Record<string, unknown>;
interface Report {
  summary: Record<string, number>;
  results?: Array<{
    policy: string;
    rule: string;
    result: string;
    severity?: string;
    message: string;
    resources: Array<{ name: string; kind?: string; apiVersion?: string; namespace?: string; uid?: string }>;
    properties?: Record<string, string>;
  }>;
}

const NS = 'e2e-audit';
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
let e: E2e;

t.before(async () => {
  e = await startE2e((m) => t.comment(m));
  const crd = parseManifests(await readFile(path.join(REPO, 'manifests/components/policyreport-crd/crd-policyreport.yaml'), 'utf8'));
  await e.applyOk(crd);
  await e.cluster.kubectlOk(['wait', '--for=condition=Established', '--timeout=60s', 'crd/policyreports.wgpolicyk8s.io']);
});

t.teardown(async () => {
  if (e && !t.passing()) process.stderr.write(`\n[e2e] failure: log tails\n${e.tails(80)}\n`);
  await e?.stop();
});

async function eventually<T>(what: string | (() => string), probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await probe();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline)
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${typeof what === 'string' ? what : what()}${last ? `: ${String(last)}` : ''}`,
      );
    await sleep(500);
  }
}

async function report(ns: string): Promise<Report | undefined> {
  const r = await e.cluster.kubectl(['get', 'policyreports.wgpolicyk8s.io', '-n', ns, 'netattach', '-o', 'json', '--ignore-not-found']);
  return r.code === 0 && r.stdout.trim() ? (JSON.parse(r.stdout) as Report) : undefined;
}

/** `pod policy/rule result` for each result of the namespace's report. */
const rows = (r: Report | undefined): string[] =>
  (r?.results ?? []).map((x) => `${x.resources[0]!.name} ${x.policy}/${x.rule} ${x.result}`).sort();

/** Waits until the report's rows are exactly `want`. */
async function reportRows(ns: string, want: string[]): Promise<Report> {
  let seen: string[] = [];
  return eventually(
    () => `report ${ns} = ${JSON.stringify(want)} (last: ${JSON.stringify(seen)})`,
    async () => {
      const r = await report(ns);
      seen = rows(r);
      return r && JSON.stringify(seen) === JSON.stringify(want) ? r : undefined;
    },
  );
}

t.test('pods running before a policy: the policy added later yields a report naming exactly the violating pods', async (t) => {
  await e.applyOk([
    namespace(NS),
    nad({ namespace: NS, name: 'sriov', config: sriovConfig('sriov') }),
    nad({ namespace: NS, name: 'macvlan', config: macvlanConfig('macvlan') }),
  ]);
  await e.applyOk([
    pod(NS, 'fast-1', [{ name: 'sriov', mac: '02:00:00:00:aa:01' }]),
    pod(NS, 'fast-2', 'sriov'),
    pod(NS, 'slow-1', 'macvlan'),
    pod(NS, 'slow-2', 'macvlan'),
    pod(NS, 'no-networks'),
  ]);
  // Clean pods: no report is created for a namespace without findings.
  await sleep(6000);
  t.notOk(await report(NS), 'no findings, no report');

  await e.applyOk(
    policy('e2e-sriov-only', {
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': NS } },
      rules: { allowedNetworks: { networks: ['*/sriov'] } },
    }),
  );
  const r = await reportRows(NS, ['slow-1 e2e-sriov-only/allowedNetworks fail', 'slow-2 e2e-sriov-only/allowedNetworks fail']);
  t.match(r.results![0]!.message, /policy "e2e-sriov-only" \(allowedNetworks\)/);
  t.same(r.results![0]!.properties, { action: 'Enforce' });
  // pass: the two clean pods with networks and the namespace's two (valid) NADs.
  t.match(r.summary, { fail: 2, pass: 4 });
  const table = await e.cluster.kubectlOk(['get', 'polr', '-n', NS]);
  t.match(table, /netattach\s+4\s+2\s+0\s+0\s+0/, 'kubectl get polr shows pass and fail counts');
  t.comment(table.trim());
  t.equal(
    await e.netattach.metric('netattach_audit_findings', { policy: 'e2e-sriov-only', rule: 'allowedNetworks', action: 'Enforce' }),
    2,
    'metric: findings by policy, rule, action',
  );
  t.equal(await e.netattach.metric('netattach_audit_leader'), 1, 'this replica holds the Lease');
  const lease = await e.getJson<{ spec: { holderIdentity: string } }>(['lease', '-n', 'netattach-system', 'netattach-audit']);
  t.ok(lease.spec.holderIdentity, `Lease held by ${lease.spec.holderIdentity}`);
});

t.test('deleting a violating pod and fixing the other clear the report; unchanged reports are not rewritten', async (t) => {
  await e.cluster.kubectlOk(['delete', 'pod', '-n', NS, 'slow-1', '--wait=false']);
  await reportRows(NS, ['slow-2 e2e-sriov-only/allowedNetworks fail']);
  const writes = await e.netattach.metric('netattach_audit_report_writes_total', { result: 'created-or-updated' });
  await sleep(11_000); // two writer rounds with nothing new
  t.equal(
    await e.netattach.metric('netattach_audit_report_writes_total', { result: 'created-or-updated' }),
    writes,
    'no write without a change',
  );
  // The fix: the policy allows macvlan too.
  await e.applyOk(
    policy('e2e-sriov-only', {
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': NS } },
      rules: { allowedNetworks: { networks: ['*/sriov', '*/macvlan'] } },
    }),
  );
  const r = await reportRows(NS, []);
  t.match(r.summary, { fail: 0, pass: 5 }, 'three pods and two NADs');
});

t.test('a NAD change that breaks running pods shows up; restoring it clears the finding', async (t) => {
  // fast-1 asks for a MAC: the NAD changed to a chain that reads none (ipvlan) makes it deniable.
  // (Dropping the mac capability alone would not: sriov and tuning read MAC= from CNI_ARGS.)
  const noMac: Obj = {
    cniVersion: '0.3.1',
    name: 'sriov',
    type: 'ipvlan',
    master: 'eth1',
    ipam: { type: 'host-local', subnet: '10.56.217.0/24' },
  };
  await e.applyOk(nad({ namespace: NS, name: 'sriov', config: noMac }));
  const r = await reportRows(NS, ['fast-1 builtin/capabilities fail']);
  t.match(r.results![0]!.message, /e2e-audit\/sriov/);
  t.match(r.results![0]!.message, /"mac"/);
  const del = await e.cluster.kubectl(['delete', 'network-attachment-definitions.k8s.cni.cncf.io', '-n', NS, 'sriov']);
  t.equal(del.code, 0, del.stderr);
  await reportRows(NS, ['fast-1 builtin/networkExists fail', 'fast-2 builtin/networkExists fail']);
  await e.applyOk(nad({ namespace: NS, name: 'sriov', config: sriovConfig('sriov') }));
  await reportRows(NS, []);
});

t.test('a NAD stored while the webhook did not see its namespace is reported itself; fixing it in place clears it', async (t) => {
  // The NAD webhook skips namespaces labelled netattach.io/admission=disabled: the apiserver
  // stores this NAD as written, as it would before netattach was installed.
  const ns = 'e2e-audit-nads';
  const broken = nad({ namespace: ns, name: 'legacy', config: { cniVersion: '0.3.1', name: 'legacy', master: 'eth1' } });
  const denied = await e.apply(nad({ namespace: NS, name: 'legacy', config: { cniVersion: '0.3.1', name: 'legacy', master: 'eth1' } }), [
    '--dry-run=server',
  ]);
  t.not(denied.code, 0, 'where the webhook sees it, such a NAD is denied');
  t.match(denied.stderr, /spec\.config\.type: Required value/);
  await e.applyOk([namespace(ns, { 'netattach.io/admission': 'disabled' })]);
  await e.applyOk(broken);
  await sleep(3000);
  t.notOk((await report(ns))?.results?.length, 'admission disabled there: not audited either');

  await e.cluster.kubectlOk(['label', 'namespace', ns, 'netattach.io/admission-']);
  const r = await reportRows(ns, ['legacy builtin/nadValid fail']);
  const result = r.results![0]!;
  t.match(result.resources[0], { apiVersion: 'k8s.cni.cncf.io/v1', kind: 'NetworkAttachmentDefinition', namespace: ns, name: 'legacy' });
  t.ok(result.resources[0]!.uid, "the NAD's uid");
  t.match(result, { severity: 'high', properties: { action: 'Enforce' } });
  t.match(result.message, /^spec\.config\.type: Required value/);
  t.ok(denied.stderr.includes(result.message), 'the message is the one the webhook denies such a NAD with');
  // The metric follows the namespace's labels at the audit's next change check (once a second),
  // which may come after the report was written from the labels as they are now.
  const nadFindings = await eventually(
    'the NAD finding in the metric',
    async () => {
      const n = await e.netattach.metric('netattach_audit_findings', { policy: 'builtin', rule: 'nadValid', action: 'Enforce' });
      return n === 1 ? n : undefined;
    },
    10_000,
  ).catch(() => e.netattach.metric('netattach_audit_findings', { policy: 'builtin', rule: 'nadValid', action: 'Enforce' }));
  t.equal(nadFindings, 1, 'metric: the NAD finding');

  // An update of a NAD that was already invalid is admitted (with a warning): fixed in place.
  await e.applyOk(nad({ namespace: ns, name: 'legacy', config: macvlanConfig('legacy') }));
  const fixed = await reportRows(ns, []);
  t.match(fixed.summary, { fail: 0, pass: 1 }, 'the fixed NAD counts as a pass');
});

t.test('observe mode admits what enforce denies, warns, counts it, and the report names the pod', async (t) => {
  const bad = pod(NS, 'observed', 'does-not-exist');
  const denied = await e.apply(bad, ['--dry-run=server']);
  t.not(denied.code, 0, 'enforce: denied');
  t.match(denied.stderr, /no such NetworkAttachmentDefinition/);

  await e.netattach.stop();
  e.netattach.options.extraArgs = ['--enforcement=observe'];
  e.netattach.start();
  await e.netattach.waitReady();
  const admitted = await e.apply(bad);
  t.equal(admitted.code, 0, `observe: admitted (${admitted.stderr.trim()})`);
  t.match(admitted.stderr, /Warning: netattach observe mode: would be denied; admitted unchanged/);
  t.match(admitted.stderr, /Warning: .*no such NetworkAttachmentDefinition/);
  t.ok((await e.netattach.metric('netattach_admission_would_deny_total', { reason: 'networkExists' })) >= 1, 'counted');
  t.ok(
    e.netattach.logLines().some((l) => l['msg'] === 'would deny (observe mode); admitted' && l['objectName'] === 'observed'),
    'logged',
  );
  // The policy of the first cases is still in force: the pod breaks it too.
  const r = await reportRows(NS, ['observed builtin/networkExists fail', 'observed e2e-sriov-only/allowedNetworks fail']);
  t.ok(r.results!.some((x) => /"e2e-audit\/does-not-exist": no such NetworkAttachmentDefinition/.test(x.message)));

  await e.netattach.stop();
  e.netattach.options.extraArgs = [];
  e.netattach.start();
  await e.netattach.waitReady();
  const again = await e.apply(pod(NS, 'observed-2', 'does-not-exist'));
  t.not(again.code, 0, 'back in enforce mode: denied');
});
