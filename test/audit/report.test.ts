// PolicyReport objects (src/audit/report.ts), pinned field by field: the constants other tools
// read (group, version, name, labels, the omitted-results annotation), the order of results (worst
// first, then pods before NADs, name, policy, rule, message), the first-seen timestamps kept
// across runs, the digest that decides whether a report is written again, and the documented caps
// (1,000 results, 512 KiB of them, 1 KiB a message: docs/operating.md).
import t from 'tap';
import {
  firstSeenOf,
  launcherVmiOf,
  MANAGED_BY,
  policyReport,
  REPORT_API_VERSION,
  REPORT_GROUP,
  REPORT_NAME,
  REPORT_SOURCE,
  REPORT_VERSION,
  reportDigest,
  RESULT_ORDER,
  resultKey,
  TRUNCATED_ANNOTATION,
  MAX_RESULTS,
  MAX_RESULTS_BYTES,
  type ReportResultObject,
} from '../../src/audit/report.js';
import type { AuditFinding, NadAudit, PodAudit, ReportResult } from '../../src/audit/types.js';

const finding = (over: Partial<AuditFinding> = {}): AuditFinding => ({
  policy: 'p',
  rule: 'r',
  action: 'Enforce',
  result: 'fail',
  severity: 'high',
  message: 'm',
  ...over,
});
/** A pod of namespace `ns` with uid `uid-NAME` (none when `uid` is null). */
const pod = (name: string, findings: AuditFinding[], uid: string | null = `uid-${name}`): PodAudit => ({
  pod: { namespace: 'ns', name, ...(uid ? { uid } : {}) },
  findings,
});
const nadAudit = (name: string, findings: AuditFinding[], uid?: string): NadAudit => ({
  nad: { namespace: 'ns', name, ...(uid ? { uid } : {}) },
  findings,
});
/** One line per result: what the order is about. */
const order = (results: readonly ReportResultObject[]): string[] =>
  results.map((r) => `${r.result} ${r.resources[0]!.kind}/${r.resources[0]!.name} ${r.policy} ${r.rule} ${r.message}`);

t.test('the names other tools read', async (t) => {
  t.equal(REPORT_GROUP, 'wgpolicyk8s.io');
  t.equal(REPORT_VERSION, 'v1alpha2');
  t.equal(REPORT_API_VERSION, 'wgpolicyk8s.io/v1alpha2');
  t.equal(REPORT_NAME, 'netattach');
  t.equal(REPORT_SOURCE, 'netattach');
  t.strictSame(MANAGED_BY, { 'app.kubernetes.io/managed-by': 'netattach' });
  t.equal(TRUNCATED_ANNOTATION, 'netattach.io/results-omitted');
  t.strictSame(RESULT_ORDER, { fail: 0, error: 1, warn: 2, skip: 3, pass: 4 });
});

t.test('the documented caps: 1,000 results, 512 KiB of them', async (t) => {
  t.equal(MAX_RESULTS, 1000);
  t.equal(MAX_RESULTS_BYTES, 524_288);
});

t.test('a report: its object, summary and one result per finding, field by field', async (t) => {
  const report = policyReport(
    'ns',
    [
      pod('a', [finding({ action: 'Warn', result: 'warn', severity: 'medium', message: 'w' })]),
      pod('clean', []),
      pod('b', [finding()], null),
    ],
    { now: 1234 },
    [nadAudit('n1', [finding({ policy: 'builtin', rule: 'nadValid', message: 'bad' })], 'nad-uid'), nadAudit('n2', [])],
  );
  t.strictSame(report, {
    apiVersion: 'wgpolicyk8s.io/v1alpha2',
    kind: 'PolicyReport',
    metadata: { name: 'netattach', namespace: 'ns', labels: { 'app.kubernetes.io/managed-by': 'netattach' } },
    scope: { apiVersion: 'v1', kind: 'Namespace', name: 'ns' },
    summary: { pass: 2, fail: 2, warn: 1, error: 0, skip: 0 },
    results: [
      {
        source: 'netattach',
        policy: 'p',
        rule: 'r',
        category: 'Secondary networks',
        result: 'fail',
        severity: 'high',
        scored: true,
        message: 'm',
        resources: [{ apiVersion: 'v1', kind: 'Pod', namespace: 'ns', name: 'b' }],
        properties: { action: 'Enforce' },
        timestamp: { seconds: 1234, nanos: 0 },
      },
      {
        source: 'netattach',
        policy: 'builtin',
        rule: 'nadValid',
        category: 'Secondary networks',
        result: 'fail',
        severity: 'high',
        scored: true,
        message: 'bad',
        resources: [{ apiVersion: 'k8s.cni.cncf.io/v1', kind: 'NetworkAttachmentDefinition', namespace: 'ns', name: 'n1', uid: 'nad-uid' }],
        properties: { action: 'Enforce' },
        timestamp: { seconds: 1234, nanos: 0 },
      },
      {
        source: 'netattach',
        policy: 'p',
        rule: 'r',
        category: 'Secondary networks',
        result: 'warn',
        severity: 'medium',
        scored: true,
        message: 'w',
        resources: [{ apiVersion: 'v1', kind: 'Pod', namespace: 'ns', name: 'a', uid: 'uid-a' }],
        properties: { action: 'Warn' },
        timestamp: { seconds: 1234, nanos: 0 },
      },
    ],
  });
  t.equal(policyReport('empty', [], { now: 1 }).metadata.annotations, undefined, 'no annotation when nothing was left out');
});

t.test('every result value is counted in the summary', async (t) => {
  const results: ReportResult[] = ['fail', 'error', 'warn', 'skip', 'fail'];
  const report = policyReport(
    'ns',
    [
      pod(
        'a',
        results.map((result) => finding({ result })),
      ),
      pod('b', []),
      pod('c', []),
    ],
    { now: 1 },
  );
  t.strictSame(report.summary, { pass: 2, fail: 2, warn: 1, error: 1, skip: 1 });
});

t.test('results are sorted worst first, then pods before NADs, then name, policy, rule, message', async (t) => {
  const rows: Array<[string, Partial<AuditFinding>]> = [
    ['b', { result: 'skip' }],
    ['b', { result: 'warn' }],
    ['b', { result: 'error' }],
    ['b', { result: 'fail', message: 'm2' }],
    ['b', { result: 'fail', message: 'm1' }],
    ['b', { result: 'fail', rule: 'q', message: 'm9' }],
    ['b', { result: 'fail', policy: 'o', rule: 'z' }],
    ['a', { result: 'fail', policy: 'z' }],
  ];
  // Inputs in both orders give the same report.
  for (const input of [rows, [...rows].reverse()]) {
    const byPod = new Map<string, AuditFinding[]>();
    for (const [name, f] of input) byPod.set(name, [...(byPod.get(name) ?? []), finding(f)]);
    const report = policyReport(
      'ns',
      [...byPod].map(([name, fs]) => pod(name, fs)),
      { now: 1 },
      [nadAudit('a', [finding({ result: 'fail', policy: 'a' })]), nadAudit('c', [finding({ result: 'warn' })])],
    );
    t.strictSame(order(report.results), [
      'fail Pod/a z r m',
      'fail Pod/b o z m',
      'fail Pod/b p q m9',
      'fail Pod/b p r m1',
      'fail Pod/b p r m2',
      'fail NetworkAttachmentDefinition/a a r m',
      'error Pod/b p r m',
      'warn Pod/b p r m',
      'warn NetworkAttachmentDefinition/c p r m',
      'skip Pod/b p r m',
    ]);
  }
});

t.test('equal results keep a stable order (the comparison answers 0 for equals)', async (t) => {
  const twice = [pod('a', [finding({ severity: 'high' }), finding({ severity: 'info' })])];
  t.strictSame(
    policyReport('ns', twice, { now: 1 }).results.map((r) => r.severity),
    ['high', 'info'],
  );
  const reversed = [pod('a', [finding({ severity: 'info' }), finding({ severity: 'high' })])];
  t.strictSame(
    policyReport('ns', reversed, { now: 1 }).results.map((r) => r.severity),
    ['info', 'high'],
  );
});

t.test('first-seen times: kept for results seen before, now for new ones; read back from a report', async (t) => {
  const first = policyReport('ns', [pod('a', [finding({ message: 'old' })])], { now: 100 }, [nadAudit('a', [finding({ message: 'old' })])]);
  const seen = firstSeenOf(first);
  t.strictSame(
    [...seen],
    [
      [`a\u0000p\u0000r\u0000old`, 100],
      [`NetworkAttachmentDefinition/a\u0000p\u0000r\u0000old`, 100],
    ],
  );
  const asked: string[] = [];
  const second = policyReport(
    'ns',
    [pod('a', [finding({ message: 'old' }), finding({ message: 'new' })])],
    {
      now: 200,
      firstSeen: (k) => {
        asked.push(k);
        return seen.get(k);
      },
    },
    [nadAudit('a', [finding({ message: 'old' })])],
  );
  t.strictSame(
    second.results.map((r) => `${r.resources[0]!.kind}/${r.message}@${r.timestamp.seconds}`),
    ['Pod/new@200', 'Pod/old@100', 'NetworkAttachmentDefinition/old@100'],
  );
  // Asked once to measure a result, once to build it.
  t.strictSame(
    [...new Set(asked)],
    [
      resultKey('a', { policy: 'p', rule: 'r', message: 'new' }),
      resultKey('a', { policy: 'p', rule: 'r', message: 'old' }),
      resultKey('NetworkAttachmentDefinition/a', finding({ message: 'old' })),
    ],
  );
  t.equal(resultKey('x', { policy: 'p', rule: 'r', message: 'm' }), 'x\u0000p\u0000r\u0000m');
});

t.test('firstSeenOf: results missing a name, policy, rule, message or time are skipped; no report is empty', async (t) => {
  const ok = {
    resources: [{ apiVersion: 'v1', kind: 'Pod', namespace: 'ns', name: 'a' }],
    policy: 'p',
    rule: 'r',
    message: 'm',
    timestamp: { seconds: 5, nanos: 0 },
  };
  const base = `a\u0000p\u0000r\u0000m`;
  t.strictSame([...firstSeenOf({ results: [ok] })], [[base, 5]]);
  t.strictSame([...firstSeenOf(undefined)], []);
  t.strictSame([...firstSeenOf({})], []);
  const { resources: _r, ...noResources } = ok;
  for (const [why, r] of [
    ['no resources', noResources],
    ['an empty list of resources', { ...ok, resources: [] }],
    ['an empty name', { ...ok, resources: [{ ...ok.resources[0]!, name: '' }] }],
    ['no policy', { ...ok, policy: undefined }],
    ['no rule', { ...ok, rule: undefined }],
    ['no message', { ...ok, message: undefined }],
    ['no timestamp', { ...ok, timestamp: undefined }],
    ['a timestamp that is no number', { ...ok, timestamp: { seconds: '5' } }],
  ] as const) {
    t.strictSame(
      [...firstSeenOf({ results: [r as Partial<ReportResultObject>, { ...ok, message: 'kept' }] })],
      [[`a\u0000p\u0000r\u0000kept`, 5]],
      why,
    );
  }
  // Empty strings are values: a result whose policy, rule or message is '' is still read.
  t.strictSame([...firstSeenOf({ results: [{ ...ok, policy: '', rule: '', message: '' }] })], [[`a\u0000\u0000\u0000`, 5]]);
  // A result without a kind names a pod, as before NADs were reported.
  t.strictSame([...firstSeenOf({ results: [{ ...ok, resources: [{ name: 'a' } as never] }] })], [[base, 5]]);
});

t.test('the digest: changes with what a write would change, not with the timestamps', async (t) => {
  const a = policyReport('ns', [pod('a', [finding()])], { now: 1 });
  const b = policyReport('ns', [pod('a', [finding()])], { now: 999 });
  t.equal(reportDigest(a), reportDigest(b), 'timestamps only');
  t.strictSame(JSON.parse(reportDigest(a)), {
    summary: { pass: 0, fail: 1, warn: 0, error: 0, skip: 0 },
    omitted: '0',
    results: [
      {
        source: 'netattach',
        policy: 'p',
        rule: 'r',
        category: 'Secondary networks',
        result: 'fail',
        severity: 'high',
        scored: true,
        message: 'm',
        resources: [{ apiVersion: 'v1', kind: 'Pod', namespace: 'ns', name: 'a', uid: 'uid-a' }],
        properties: { action: 'Enforce' },
      },
    ],
  });
  t.not(reportDigest(a), reportDigest(policyReport('ns', [pod('a', [finding({ message: 'other' })])], { now: 1 })), 'a message');
  t.not(reportDigest(a), reportDigest(policyReport('ns', [pod('a', [finding()]), pod('b', [])], { now: 1 })), 'the summary');
  t.not(
    reportDigest(a),
    reportDigest({ ...a, metadata: { ...a.metadata, annotations: { [TRUNCATED_ANNOTATION]: '3' } } }),
    'the omitted count',
  );
  t.equal(JSON.parse(reportDigest({ ...a, metadata: { ...a.metadata, annotations: { [TRUNCATED_ANNOTATION]: '3' } } })).omitted, '3');
  t.equal(
    JSON.parse(reportDigest({ ...a, metadata: { ...a.metadata, annotations: {} } })).omitted,
    '0',
    'annotations without the count: 0',
  );
});

t.test('1,000 results are kept, the 1,001st is counted in the annotation', async (t) => {
  const many = (n: number): PodAudit[] => Array.from({ length: n }, (_, i) => pod(`p${String(i).padStart(4, '0')}`, [finding()]));
  const full = policyReport('ns', many(1000), { now: 1 });
  t.equal(full.results.length, 1000);
  t.equal(full.metadata.annotations, undefined);
  const over = policyReport('ns', many(1001), { now: 1 });
  t.equal(over.results.length, 1000);
  t.strictSame(over.metadata.annotations, { [TRUNCATED_ANNOTATION]: '1' });
  t.equal(over.summary.fail, 1001, 'the summary counts every finding');
  t.equal(over.results.at(-1)!.resources[0]!.name, 'p0999', 'the first 1,000 in order are kept');
});

t.test('512 KiB of results: the last one that fits is kept, one byte more is left out', async (t) => {
  // Results of one size: n results take n * (size + 1) bytes (a comma each) within 524,288.
  const sized = (name: string, message: string): PodAudit => pod(name, [finding({ message })], null);
  const probe = policyReport('ns', [sized('p000', 'x')], { now: 1 });
  const base = Buffer.byteLength(JSON.stringify(probe.results[0])) - 1; // without the message's one byte
  // 600 results of 873 to 874 bytes: 600 * 874 = 524,400 > 524,288; pick the size where exactly 599 fit.
  const each = Math.floor(524_288 / 599) - 1; // a result of `each` bytes plus its comma: 599 fit exactly or with room
  const message = 'x'.repeat(each - base);
  t.ok(message.length <= 1024, 'messages within 1 KiB, so not cut');
  const pods = Array.from({ length: 700 }, (_, i) => sized(`p${String(i).padStart(3, '0')}`, message));
  const report = policyReport('ns', pods, { now: 1 });
  const fit = Math.floor(524_288 / (each + 1));
  t.equal(report.results.length, fit);
  t.equal(report.metadata.annotations?.[TRUNCATED_ANNOTATION], String(700 - fit));
  // Exactly at the limit: the results' bytes plus one per result are 524,288.
  const exact = 524_288 / 512; // 1,024 bytes a result with its comma: 512 results fill the budget exactly
  const exactMessage = 'x'.repeat(exact - 1 - base);
  const atLimit = policyReport(
    'ns',
    Array.from({ length: 513 }, (_, i) => sized(`p${String(i).padStart(3, '0')}`, exactMessage)),
    { now: 1 },
  );
  t.equal(atLimit.results.length, 512, '512 results of 1,023 bytes and their commas are 524,288 bytes: all kept');
  t.equal(atLimit.metadata.annotations?.[TRUNCATED_ANNOTATION], '1');
  const oneMore = policyReport(
    'ns',
    Array.from({ length: 513 }, (_, i) => sized(`p${String(i).padStart(3, '0')}`, exactMessage + 'x')),
    { now: 1 },
  );
  t.equal(oneMore.results.length, 511, 'one byte more each: 511 kept');
});

t.test('messages are cut to 1 KiB in the report, and results are looked up by the cut message', async (t) => {
  const exact = 'y'.repeat(1024);
  const over = 'y'.repeat(1025);
  const asked: string[] = [];
  const report = policyReport('ns', [pod('a', [finding({ message: exact })]), pod('b', [finding({ message: over })])], {
    now: 1,
    firstSeen: (k) => {
      asked.push(k);
      return undefined;
    },
  });
  t.equal(report.results[0]!.message, exact, 'exactly 1,024 bytes: kept whole');
  const cut = report.results[1]!.message;
  const m = /^(y+)\.\.\.\((\d+) bytes cut\)\.\.\.(y+)$/.exec(cut);
  t.ok(
    m && Buffer.byteLength(cut) <= 1024 && Buffer.byteLength(cut) > 1000,
    `one byte more: cut within 1,024 bytes (${Buffer.byteLength(cut)})`,
  );
  t.equal(m![1]!.length + Number(m![2]) + m![3]!.length, 1025, 'the marker counts what was cut');
  t.equal(asked[1], resultKey('b', { policy: 'p', rule: 'r', message: report.results[1]!.message }));
});

t.test('NADs of one result are sorted by name, whatever their input order', async (t) => {
  const nads = [nadAudit('c', [finding()]), nadAudit('b', [finding()]), nadAudit('a', [finding()])];
  t.strictSame(order(policyReport('ns', [pod('z', [finding()])], { now: 1 }, nads).results), [
    'fail Pod/z p r m',
    'fail NetworkAttachmentDefinition/a p r m',
    'fail NetworkAttachmentDefinition/b p r m',
    'fail NetworkAttachmentDefinition/c p r m',
  ]);
});

// Issue 42: the background reports find a VM's findings by the VM, as `netattach audit` names them.
t.test('a KubeVirt launcher pod: its result names the VMI beside the pod, and the VM as a property', async (t) => {
  const launcher: PodAudit = {
    pod: {
      namespace: 'ns',
      name: 'virt-launcher-db-1-x7k2p',
      uid: 'pod-u',
      controller: { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', name: 'db-1', uid: 'vmi-u' },
    },
    findings: [finding()],
  };
  const other: PodAudit = {
    pod: { namespace: 'ns', name: 'rs-pod', controller: { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'db-1' } },
    findings: [finding({ message: 'n' })],
  };
  const report = policyReport('ns', [launcher, other], { now: 1 });
  const [vmResult, podResult] = [report.results.find((r) => r.message === 'm')!, report.results.find((r) => r.message === 'n')!];
  t.strictSame(vmResult.resources, [
    { apiVersion: 'v1', kind: 'Pod', namespace: 'ns', name: 'virt-launcher-db-1-x7k2p', uid: 'pod-u' },
    { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', namespace: 'ns', name: 'db-1', uid: 'vmi-u' },
  ]);
  t.strictSame(vmResult.properties, { action: 'Enforce', vm: 'db-1' });
  t.equal(podResult.resources.length, 1, 'a pod of another controller names no VM');
  t.strictSame(podResult.properties, { action: 'Enforce' });
  t.same(firstSeenOf(report).size, 2, 'results are still found by their pod');
});

t.test('launcherVmiOf: only a KubeVirt VirtualMachineInstance controls a launcher pod', async (t) => {
  const pod = (controller?: { apiVersion: string; kind: string; name: string }) => ({
    namespace: 'ns',
    name: 'p',
    ...(controller ? { controller } : {}),
  });
  const vmi = { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', name: 'db-1' };
  t.equal(launcherVmiOf(pod(vmi)), vmi);
  const older = { ...vmi, apiVersion: 'kubevirt.io/v1alpha3' };
  t.equal(launcherVmiOf(pod(older)), older, 'any version of kubevirt.io');
  const others: Array<[string, { apiVersion: string; kind: string; name: string }]> = [
    ['another KubeVirt kind', { ...vmi, kind: 'VirtualMachine' }],
    ['the kind in another group', { ...vmi, apiVersion: 'example.com/v1' }],
    ['a group that only ends like KubeVirt', { ...vmi, apiVersion: 'notkubevirt.io/v1' }],
    ['a ReplicaSet', { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'db-1' }],
  ];
  for (const [why, controller] of others) t.equal(launcherVmiOf(pod(controller)), undefined, why);
  t.equal(launcherVmiOf(pod()), undefined, 'no controller');
});
