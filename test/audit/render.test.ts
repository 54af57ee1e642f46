// `netattach audit` output (src/audit/render.ts): rows, the table and the JSON written exactly,
// the exit-code question, and the per-namespace bounds (1,000 findings, 512 KiB of them, the worst
// kept, each message cut to 1 KiB; docs/operating.md).
import t from 'tap';
import {
  AUDIT_JSON_FORMAT_VERSION,
  boundedRowsOf,
  renderAuditJson,
  renderAuditTable,
  rowsOf,
  summaryOf,
  violatesEnforce,
} from '../../src/audit/render.js';
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
const pod = (namespace: string, name: string, findings: AuditFinding[], uid: string | null = `uid-${name}`): PodAudit => ({
  pod: { namespace, name, ...(uid ? { uid } : {}) },
  findings,
});
const nadAudit = (namespace: string, name: string, findings: AuditFinding[], uid?: string): NadAudit => ({
  nad: { namespace, name, ...(uid ? { uid } : {}) },
  findings,
});

t.test('rowsOf: one row per finding, pods first then NADs; pod rows also name the pod', async (t) => {
  const rows = rowsOf(
    [pod('a', 'p1', [finding({ message: 'one' }), finding({ message: 'two' })]), pod('a', 'clean', []), pod('b', 'p2', [finding()], null)],
    [nadAudit('a', 'n1', [finding({ rule: 'nadValid' })], 'nu')],
  );
  t.strictSame(rows, [
    {
      namespace: 'a',
      kind: 'Pod',
      name: 'p1',
      pod: 'p1',
      uid: 'uid-p1',
      policy: 'p',
      rule: 'r',
      action: 'Enforce',
      result: 'fail',
      severity: 'high',
      message: 'one',
    },
    {
      namespace: 'a',
      kind: 'Pod',
      name: 'p1',
      pod: 'p1',
      uid: 'uid-p1',
      policy: 'p',
      rule: 'r',
      action: 'Enforce',
      result: 'fail',
      severity: 'high',
      message: 'two',
    },
    {
      namespace: 'b',
      kind: 'Pod',
      name: 'p2',
      pod: 'p2',
      policy: 'p',
      rule: 'r',
      action: 'Enforce',
      result: 'fail',
      severity: 'high',
      message: 'm',
    },
    {
      namespace: 'a',
      kind: 'NetworkAttachmentDefinition',
      name: 'n1',
      uid: 'nu',
      policy: 'p',
      rule: 'nadValid',
      action: 'Enforce',
      result: 'fail',
      severity: 'high',
      message: 'm',
    },
  ]);
  t.strictSame(rowsOf([pod('a', 'p', [finding()])]).length, 1, 'NADs default to none');
});

t.test('summaryOf: pods, NADs, clean ones as pass, each finding by result', async (t) => {
  const results: ReportResult[] = ['fail', 'warn', 'error', 'skip', 'fail'];
  t.strictSame(
    summaryOf(
      [
        pod(
          'a',
          'p',
          results.map((result) => finding({ result })),
        ),
        pod('a', 'c', []),
      ],
      [nadAudit('a', 'n', []), nadAudit('a', 'm', [finding()])],
    ),
    { pods: 2, nads: 2, pass: 2, fail: 3, warn: 1, error: 1, skip: 1 },
  );
  t.strictSame(summaryOf([]), { pods: 0, nads: 0, pass: 0, fail: 0, warn: 0, error: 0, skip: 0 });
});

t.test('violatesEnforce: only an Enforce finding that fails, of a pod or a NAD', async (t) => {
  const cases: Array<[string, PodAudit[], NadAudit[], boolean]> = [
    ['nothing', [], [], false],
    ['a clean pod', [pod('a', 'p', [])], [], false],
    ['Enforce fail on a pod', [pod('a', 'p', [finding()])], [], true],
    ['Enforce fail on a NAD', [pod('a', 'p', [])], [nadAudit('a', 'n', [finding()])], true],
    ['Enforce skip', [pod('a', 'p', [finding({ result: 'skip' })])], [], false],
    ['Enforce error', [pod('a', 'p', [finding({ result: 'error' })])], [], false],
    ['Audit fail', [pod('a', 'p', [finding({ action: 'Audit' })])], [], false],
    ['Warn warn', [pod('a', 'p', [finding({ action: 'Warn', result: 'warn' })])], [], false],
    ['a later finding', [pod('a', 'p', [finding({ action: 'Audit' }), finding()])], [], true],
  ];
  for (const [why, pods, nads, want] of cases) t.equal(violatesEnforce(pods, nads), want, why);
  t.equal(violatesEnforce([pod('a', 'p', [finding()])]), true, 'NADs default to none');
  t.equal(violatesEnforce([pod('a', 'p', [finding({ action: 'Audit' })])]), false, 'NADs default to none: nothing else is looked at');
});

t.test('the table: columns padded to the widest cell, the message last; the summary line', async (t) => {
  const table = renderAuditTable(
    [
      pod('team-a', 'du-0', [finding({ policy: 'unique-macs', rule: 'uniqueAddresses', message: 'metadata: Forbidden' })]),
      pod('team-a', 'oam', [finding({ policy: 'prod', rule: 'allowedNetworks', action: 'Warn', result: 'warn', message: 'x' })]),
      pod('b', 'ok', []),
    ],
    [nadAudit('team-a', 'legacy', [finding({ policy: 'builtin', rule: 'nadValid', message: 'bad' })]), nadAudit('b', 'fine', [])],
  );
  t.equal(
    table,
    [
      'NAMESPACE  RESOURCE               POLICY       RULE             RESULT  ACTION   MESSAGE',
      'team-a     pod/du-0               unique-macs  uniqueAddresses  fail    Enforce  metadata: Forbidden',
      'team-a     pod/oam                prod         allowedNetworks  warn    Warn     x',
      'team-a     net-attach-def/legacy  builtin      nadValid         fail    Enforce  bad',
      '3 pods with networks and 2 NADs audited: 2 clean, 2 fail, 1 warn, 0 skip, 0 error',
      '',
    ].join('\n'),
  );
  t.equal(
    renderAuditTable([pod('a', 'p', [])], [nadAudit('a', 'n', [])]),
    '1 pod with networks and 1 NAD audited: 2 clean, 0 fail, 0 warn, 0 skip, 0 error\n',
    'no findings: the summary alone, singular',
  );
  t.equal(renderAuditTable([]), '0 pods with networks and 0 NADs audited: 0 clean, 0 fail, 0 warn, 0 skip, 0 error\n');
  t.equal(
    renderAuditTable([pod('a', 'p', [finding({ result: 'skip', action: 'Warn' }), finding({ result: 'error' })])]),
    [
      'NAMESPACE  RESOURCE  POLICY  RULE  RESULT  ACTION   MESSAGE',
      'a          pod/p     p       r     skip    Warn     m',
      'a          pod/p     p       r     error   Enforce  m',
      '1 pod with networks and 0 NADs audited: 0 clean, 0 fail, 0 warn, 1 skip, 1 error',
      '',
    ].join('\n'),
    'skip and error counted; rows in input order',
  );
});

t.test('JSON: the stable format, omitted only when something was left out', async (t) => {
  t.equal(AUDIT_JSON_FORMAT_VERSION, 1);
  const json = renderAuditJson([pod('a', 'p', [finding()])], [nadAudit('a', 'n', [finding({ rule: 'nadValid' })])]);
  t.ok(json.endsWith('}\n'), 'ends with a newline');
  t.ok(json.startsWith('{\n  "formatVersion": 1,\n  "summary": {\n    "pods": 1,'), 'indented by two');
  t.strictSame(JSON.parse(json), {
    formatVersion: 1,
    summary: { pods: 1, nads: 1, pass: 0, fail: 2, warn: 0, error: 0, skip: 0 },
    findings: [
      {
        namespace: 'a',
        kind: 'Pod',
        name: 'p',
        pod: 'p',
        uid: 'uid-p',
        policy: 'p',
        rule: 'r',
        action: 'Enforce',
        result: 'fail',
        severity: 'high',
        message: 'm',
      },
      {
        namespace: 'a',
        kind: 'NetworkAttachmentDefinition',
        name: 'n',
        policy: 'p',
        rule: 'nadValid',
        action: 'Enforce',
        result: 'fail',
        severity: 'high',
        message: 'm',
      },
    ],
  });
  t.strictSame(JSON.parse(renderAuditJson([])), {
    formatVersion: 1,
    summary: { pods: 0, nads: 0, pass: 0, fail: 0, warn: 0, error: 0, skip: 0 },
    findings: [],
  });
});

/** `n` pods of namespace `ns`, each with one finding of `result`. */
const many = (ns: string, n: number, result: ReportResult = 'fail', message = 'm'): PodAudit[] =>
  Array.from({ length: n }, (_, i) => pod(ns, `p${String(i).padStart(4, '0')}`, [finding({ result, message })], null));

t.test('bounds: 1,000 findings a namespace are printed, the 1,001st counted; each namespace on its own', async (t) => {
  const audits = [...many('a', 1001), ...many('b', 1000)];
  const { rows, omitted } = boundedRowsOf(audits);
  t.equal(rows.filter((r) => r.namespace === 'a').length, 1000);
  t.equal(rows.filter((r) => r.namespace === 'b').length, 1000);
  t.strictSame(omitted, [{ namespace: 'a', findings: 1 }]);
  t.equal(rows[999]!.name, 'p0999', 'the first 1,000 in order');
  const json = JSON.parse(renderAuditJson(audits));
  t.strictSame(json.omitted, [{ namespace: 'a', findings: 1 }]);
  t.equal(json.summary.fail, 2001, 'the summary counts every finding');
  const table = renderAuditTable(audits);
  t.match(
    table,
    /\n\.\.\. and 1 more finding in namespace a \(not shown; counted below\)\n2001 pods with networks and 0 NADs audited: 0 clean, 2001 fail/,
  );
  t.match(renderAuditTable(many('c', 1002)), /\n\.\.\. and 2 more findings in namespace c \(not shown; counted below\)\n/);
  t.notOk('omitted' in JSON.parse(renderAuditJson(many('b', 1000))), 'nothing left out: no omitted key');
});

t.test('bounds: the worst are printed first, and the rest keep their input order', async (t) => {
  const audits = [
    ...many('a', 600, 'skip', 's'),
    ...many('a', 300, 'warn', 'w'),
    ...many('a', 300, 'error', 'e'),
    ...many('a', 300, 'fail', 'f'),
  ];
  // Names repeat across the four groups; only the order matters here.
  const { rows, omitted } = boundedRowsOf(audits);
  t.strictSame(omitted, [{ namespace: 'a', findings: 500 }]);
  const counts = (r: ReportResult): number => rows.filter((x) => x.result === r).length;
  t.strictSame([counts('fail'), counts('error'), counts('warn'), counts('skip')], [300, 300, 300, 100], 'fail, error, warn, then skip');
  t.strictSame(
    rows.map((r) => r.result).filter((r, i, all) => i === 0 || all[i - 1] !== r),
    ['skip', 'warn', 'error', 'fail'],
    'the printed rows stay in rowsOf order',
  );
  t.strictSame(
    rows.filter((r) => r.result === 'skip').map((r) => r.name),
    many('a', 100).map((a) => a.pod.name),
    'the first skips are kept',
  );
});

t.test('bounds: 512 KiB of rows a namespace; messages cut to 1 KiB', async (t) => {
  const rowBytes = (message: string): number => Buffer.byteLength(JSON.stringify(rowsOf(many('a', 1, 'fail', message))[0]));
  const base = rowBytes('');
  // 1,023 bytes a row and one for its comma: 512 rows are 524,288 bytes, all printed; the 513th is not.
  const exact = 'x'.repeat(1023 - base);
  t.equal(rowBytes(exact), 1023);
  const fits = boundedRowsOf(many('a', 513, 'fail', exact));
  t.equal(fits.rows.length, 512);
  t.strictSame(fits.omitted, [{ namespace: 'a', findings: 1 }]);
  t.equal(boundedRowsOf(many('a', 513, 'fail', exact + 'x')).rows.length, 511, 'one byte more a row: 511');
  const long = boundedRowsOf([pod('a', 'p', [finding({ message: 'z'.repeat(1024) }), finding({ message: 'z'.repeat(1025) })])]).rows;
  t.equal(long[0]!.message, 'z'.repeat(1024), '1,024 bytes: whole');
  t.ok(Buffer.byteLength(long[1]!.message) <= 1024 && /^z+\.\.\.\(\d+ bytes cut\)\.\.\.z+$/.test(long[1]!.message), '1,025 bytes: cut');
});

t.test('bounds: each namespace over the cap has its own "and N more" line, in order, before the summary', async (t) => {
  const table = renderAuditTable([...many('a', 1001), ...many('c', 1002)]);
  t.ok(
    table.endsWith(
      '\n... and 1 more finding in namespace a (not shown; counted below)\n... and 2 more findings in namespace c (not shown; counted below)\n2003 pods with networks and 0 NADs audited: 0 clean, 2003 fail, 0 warn, 0 skip, 0 error\n',
    ),
    table.slice(-300),
  );
});

t.test("a KubeVirt launcher pod is reported by its VM (the controller VMI of the VM's name)", async (t) => {
  const launcher: PodAudit = {
    pod: {
      namespace: 'vms',
      name: 'virt-launcher-db-1-x7k2p',
      uid: 'u',
      controller: { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', name: 'db-1', uid: 'vmi-u' },
    },
    findings: [finding({ message: 'mac' })],
  };
  const other: PodAudit = {
    pod: { namespace: 'vms', name: 'rs-pod', controller: { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'db-1' } },
    findings: [finding()],
  };
  const rows = rowsOf([launcher, other]);
  t.match(rows[0], { kind: 'Pod', name: 'virt-launcher-db-1-x7k2p', pod: 'virt-launcher-db-1-x7k2p', vm: 'db-1' });
  t.notOk('vm' in rows[1]!, 'a pod of another controller names no VM');
  const table = renderAuditTable([launcher, other]);
  t.match(table, /\nvms\s+vm\/db-1 \(pod\/virt-launcher-db-1-x7k2p\)\s+p/);
  t.match(table, /\nvms\s+pod\/rs-pod\s+p/);
});
