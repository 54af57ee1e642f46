// One verdict everywhere (issue 25): over the compatibility corpus (KubeVirt live migration
// included) and a few cases that exercise the other inputs (namespace labels, the default-network
// annotation, Warn and Audit actions), the three faces judge each pod alike:
// - serve: the server's pipeline (handleReview: decode, NAD lookups, review, reservation), both webhooks;
// - check: `netattach check -o json` (src/cli/check.ts run) on the NADs and pods as files;
// - audit: `netattach audit -o json` (src/cli/audit.ts run) on the NADs, the pods admitted before
//   and the pod itself, as `kubectl get -o yaml` would give them once created.
// Each face through its public entry, none through a shared shortcut.
//
// Compared: allowed or denied; the denial's field errors; the points (field paths) of the warnings
// and the Audit-action findings. Differences of form, by design (docs/operating.md):
// - serve aggregates the errors in one message and cuts each warning to a kubectl line; check
//   and audit list them whole (so warnings are compared by their point);
// - the audit does not know the requester (a requestedFields message says "this user"), and it
//   names an earlier pod as running where serve and check hold it as being created;
// - the audit reports what admission denies or a policy grades: a Warn finding is a `warn` row,
//   an Audit finding a `fail` row with action Audit; the webhook's own warnings (notes such as
//   "may be ignored") are not findings, for pods as for NADs;
// - UPDATE steps (NIC hotplug) are admission only: check and audit judge a pod as its CREATE.
import t from 'tap';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { stringify } from 'yaml';
import type * as core from '../../src/admission/index.js';
import { run as runCheck } from '../../src/cli/check.js';
import { run as runAudit } from '../../src/cli/audit.js';
import type { CliIO } from '../../src/cli/io.js';
import { renderError, type FieldError } from '../../src/field/index.js';
import { NAME_LABEL } from '../../src/policy/index.js';
import { handleReview } from '../../src/server/index.js';
import { CORPUS, launcher, NADS, NS, plainPod, type CorpusCase } from './corpus.js';
import { ALICE, corpusDeps, corpusPolicies, stepReview } from './pipeline.js';

const _NETWORKS = 'k8s.v1.cni.cncf.io/networks';
const DEFAULT_NETWORK = 'v1.multus-cni.io/default-network';

interface Case extends CorpusCase {
  /** Labels of the pods' namespace (a Namespace object for check and audit, the namespace watch for serve). */
  namespaceLabels?: Record<string, string>;
}

const policy = (name: string, rules: string, extra = ''): string =>
  `apiVersion: netattach.io/v1alpha1\nkind: NetworkAttachmentPolicy\nmetadata:\n  name: ${name}\nspec:\n${extra}  rules:\n${rules}`;
const PROD_SRIOV_ONLY = policy(
  'prod-sriov-only',
  '    allowedNetworks:\n      networks: ["*/sriov-*"]\n',
  '  namespaceSelector:\n    matchLabels:\n      tier: prod\n',
);
const SRIOV_MAC = `[{"name":"sriov-net","namespace":"${NS}","mac":"de:ad:00:00:be:af","interface":"pod16477688c0e"}]`;
const withDefaultNetwork = (pod: Record<string, unknown>, value: string): Record<string, unknown> => {
  const copy = structuredClone(pod) as { metadata: { annotations: Record<string, string> } };
  copy.metadata.annotations[DEFAULT_NETWORK] = value;
  return copy;
};

/** Beyond the corpus: the inputs the corpus does not vary. */
const MORE: Case[] = [
  {
    name: 'a policy selecting labelled namespaces, the namespace labelled',
    why: 'namespace labels reach the policy selector alike (serve: the namespace watch; check and audit: the Namespace object)',
    policy: PROD_SRIOV_ONLY,
    namespaceLabels: { tier: 'prod' },
    steps: [
      { pod: plainPod('prod-br', '[{"name":"br1"}]'), allowed: false, errors: [/policy "prod-sriov-only" \(allowedNetworks\)/] },
      { pod: plainPod('prod-sriov', '[{"name":"sriov-net"}]'), allowed: true },
    ],
  },
  {
    name: 'the same policy, the namespace not labelled',
    why: 'the selector does not match: the policy does not apply',
    policy: PROD_SRIOV_ONLY,
    namespaceLabels: { tier: 'dev' },
    steps: [{ pod: plainPod('dev-br', '[{"name":"br1"}]'), allowed: true }],
  },
  {
    name: 'the default-network annotation',
    why: 'read by all three from the pod, a missing NAD denied alike',
    steps: [
      { pod: withDefaultNetwork(plainPod('dn-ok', '[{"name":"br1"}]'), `${NS}/macvlan-conf`), allowed: true },
      { pod: withDefaultNetwork(plainPod('dn-gone', '[{"name":"br1"}]'), `${NS}/nowhere`), allowed: false, errors: [/nowhere/] },
    ],
  },
  {
    name: 'uniqueness graded Warn, and a migration under it',
    why: 'two VMs with one MAC: admitted with a warning, an audit warn row; the migration target of the first: nothing',
    policy: policy('unique-mac-warn', '    uniqueAddresses:\n      mac: Network\n      action: Warn\n'),
    steps: [
      { pod: launcher('vm-w1', 'src01', SRIOV_MAC), allowed: true },
      {
        pod: launcher('vm-w2', 'src02', SRIOV_MAC, { vmiUid: '7c4f1c52-0000-4000-8000-00000000c003' }),
        allowed: true,
        warnings: [/already used by VM vms\/vm-w1/],
      },
      { pod: launcher('vm-w1', 'dst01', SRIOV_MAC, { migrationJob: 'mig-w' }), allowed: true },
    ],
  },
  {
    name: 'a rule graded Audit',
    why: 'admitted; check lists it under audits, the audit as a fail row with action Audit',
    policy: policy('no-bridge-audit', '    allowedNetworks:\n      networks: ["*/sriov-*"]\n      action: Audit\n'),
    steps: [{ pod: plainPod('audited', '[{"name":"br1"}]'), allowed: true }],
  },
];

interface Verdict {
  allowed: boolean;
  /** The denial's field errors, rendered (`path: Type: value: reason`), sorted. */
  errors: string[];
  /** Warnings as each face gives them. */
  warnings: string[];
  /** Findings of Audit-action rules, rendered, sorted. */
  audits: string[];
}

/** The field errors of a denial message (denialMessage: one error, or `N errors:` and a line each). */
function errorsOfMessage(message: string | undefined): string[] {
  if (message === undefined) return [];
  const m = /^\d+ errors:\n/.exec(message);
  return (
    m
      ? message
          .slice(m[0].length)
          .split('\n')
          .map((l) => l.replace(/^- /, ''))
      : [message]
  ).sort();
}

const FIELD_ERROR =
  /^(.*?): (?:Invalid value|Forbidden|Not found|Required value|Unsupported value|Duplicate value|Too long|Too many|Internal error)\b/;
/** Where a warning points: the field path of a field error, '' for a note. */
const pointOf = (warning: string): string => FIELD_ERROR.exec(warning)?.[1] ?? '';
/**
 * What the audit words differently, by design: it does not know who created the pod (`this user`
 * where admission names the user), and the pods admitted before are running where serve and
 * check hold them as being created (reservations).
 */
const asAuditSays = (message: string): string =>
  message.replace(/user "[^"]*" may not/g, 'this user may not').replace(/ \((?:a pod )?(?:being created|running)\)/g, '');
/** A warning from a policy rule graded Warn (the audit reports those, not the webhook's notes). */
const fromPolicy = (warning: string): boolean => / policy "[^"]+" \(/.test(warning);

async function serve(c: Case): Promise<Array<Verdict | undefined>> {
  // As ClusterNamespaceLabels gives them: the namespace's labels and the name label.
  const deps = corpusDeps(corpusPolicies(c), {
    namespaceLabels: (ns: string) => ({ ...(ns === NS ? c.namespaceLabels : {}), [NAME_LABEL]: ns }),
  });
  const out: Array<Verdict | undefined> = [];
  for (const [i, step] of c.steps.entries()) {
    const body = stepReview(step, `one-verdict-${i}`, ALICE);
    const responses: core.AdmissionResponse[] = [];
    for (const endpoint of step.before ? (['validate'] as const) : (['mutate', 'validate'] as const)) {
      const r = await handleReview(body, endpoint, 1000, deps);
      if (r.status !== 200) throw new Error(r.error);
      responses.push(r.review.response!);
    }
    if (step.before) {
      out.push(undefined); // admission only (see above)
      continue;
    }
    const [mutate, validate] = responses as [core.AdmissionResponse, core.AdmissionResponse];
    if (mutate.allowed !== validate.allowed) throw new Error(`step ${i}: the two webhooks disagree`);
    // The mutating webhook's warnings are the validating one's and its own (the patch's notes).
    out.push({ allowed: validate.allowed, errors: errorsOfMessage(validate.status?.message), warnings: mutate.warnings ?? [], audits: [] });
  }
  return out;
}

function captured(stdin = ''): CliIO & { out: () => string; err: () => string } {
  const out: string[] = [];
  const err: string[] = [];
  return {
    stdout: (s) => out.push(s),
    stderr: (s) => err.push(s),
    stdin: Readable.from(stdin ? [stdin] : []),
    env: {},
    cwd: process.cwd(),
    out: () => out.join(''),
    err: () => err.join(''),
  };
}

const namespaceObject = (c: Case) =>
  c.namespaceLabels ? [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS, labels: c.namespaceLabels } }] : [];
const yamlOf = (objects: unknown[]): string => objects.map((o) => stringify(o)).join('---\n');

interface RenderedError {
  path: string;
  type: string;
  value?: unknown;
  reason: string;
}
const render = (e: RenderedError): string => renderError(e as FieldError);

/** `netattach check -o json` on every CREATE of the case, in order (as corpus.test.ts checks them). */
async function check(c: Case, dir: string): Promise<Verdict[]> {
  const creates = c.steps.filter((s) => !s.before).map((s) => s.pod);
  if (creates.length === 0) return [];
  const file = join(dir, 'check.yaml');
  writeFileSync(file, yamlOf([...namespaceObject(c), ...NADS, ...creates]));
  const args = ['-o', 'json', '--user', ALICE.username, ...ALICE.groups.flatMap((g) => ['--group', g])];
  if (c.policy) args.push('--policy', join(dir, 'policy.yaml'));
  const io = captured();
  const code = await runCheck([...args, file], io);
  if (code === 2) throw new Error(`check: exit 2: ${io.err()}`);
  const doc = JSON.parse(io.out()) as {
    results: Array<{ kind?: string; allowed: boolean; errors: RenderedError[]; warnings: string[]; audits: RenderedError[] }>;
  };
  return doc.results
    .filter((r) => r.kind === 'Pod')
    .map((r) => ({ allowed: r.allowed, errors: r.errors.map(render).sort(), warnings: r.warnings, audits: r.audits.map(render).sort() }));
}

interface AuditRowJson {
  kind: string;
  name: string;
  action: string;
  result: string;
  message: string;
}

/** `netattach audit -o json` of the pods admitted before and this one: this pod's rows as a verdict. */
async function audit(
  c: Case,
  dir: string,
  live: Array<Record<string, unknown>>,
  pod: Record<string, unknown>,
): Promise<Verdict & { rows: AuditRowJson[] }> {
  const file = join(dir, 'audit.yaml');
  writeFileSync(file, yamlOf([...namespaceObject(c), ...NADS, ...live, pod]));
  const io = captured();
  const code = await runAudit([...(c.policy ? ['--policy', join(dir, 'policy.yaml')] : []), '-o', 'json', file], io);
  if (code === 2) throw new Error(`audit: exit 2: ${io.err()}`);
  const name = (pod as { metadata: { name: string } }).metadata.name;
  const rows = (JSON.parse(io.out()) as { findings: AuditRowJson[] }).findings.filter((f) => f.kind === 'Pod' && f.name === name);
  const enforced = rows.filter((f) => f.action === 'Enforce' && f.result === 'fail');
  return {
    rows,
    allowed: enforced.length === 0,
    errors: enforced.map((f) => f.message).sort(),
    warnings: rows.filter((f) => f.result === 'warn').map((f) => f.message),
    audits: rows
      .filter((f) => f.action === 'Audit')
      .map((f) => f.message)
      .sort(),
  };
}

for (const c of [...(CORPUS as Case[]), ...MORE]) {
  t.test(`${c.name}: serve, check and audit give one verdict`, async (t) => {
    const dir = t.testdir(c.policy ? { 'policy.yaml': c.policy } : {});
    const served = await serve(c);
    const checked = await check(c, dir);
    const live: Array<Record<string, unknown>> = [];
    let created = 0;
    for (const [i, step] of c.steps.entries()) {
      const s = served[i];
      if (!s) continue; // an UPDATE: admission only
      t.equal(s.allowed, step.allowed, `step ${i}: serve gives the corpus verdict`);
      const k = checked[created++]!;
      const a = await audit(c, dir, live, step.pod);
      t.equal(k.allowed, s.allowed, `step ${i}: check agrees on allowed`);
      t.equal(a.allowed, s.allowed, `step ${i}: audit agrees on allowed (${a.rows.map((r) => r.message).join('; ') || 'no findings'})`);
      t.same(k.errors, s.errors, `step ${i}: check gives serve's field errors`);
      t.same(a.errors.map(asAuditSays), s.errors.map(asAuditSays), `step ${i}: audit gives serve's field errors`);
      // Warnings: check's whole, serve's cut to a kubectl line (values cut in the middle): the same points.
      t.same(k.warnings.map(pointOf), s.warnings.map(pointOf), `step ${i}: check's warnings point where serve's do`);
      for (const w of step.warnings ?? [])
        t.ok(
          k.warnings.some((x) => w.test(x)),
          `step ${i}: warning ${w}`,
        );
      // The audit's warn rows are the warnings of Warn-graded rules, whole, as check gives them.
      t.same(
        a.warnings.map(asAuditSays).sort(),
        k.warnings.filter(fromPolicy).map(asAuditSays).sort(),
        `step ${i}: audit's warn rows are the policy warnings`,
      );
      t.same(a.audits.map(asAuditSays), k.audits.map(asAuditSays), `step ${i}: the Audit-action findings alike`);
      t.notOk(
        a.rows.some((r) => r.result === 'skip' || r.result === 'error'),
        `step ${i}: nothing the audit could not judge`,
      );
      if (s.allowed) live.push(step.pod);
    }
    t.equal(created, checked.length, 'every CREATE was compared');
  });
}
