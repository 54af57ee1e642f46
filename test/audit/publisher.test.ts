// PolicyReports: their shape, and the writer: only with the CRD, only while holding the Lease,
// only what changed (diff before write), at most N writes a round, first-seen times kept.
import t from 'tap';
import {
  firstSeenOf,
  Lease,
  MAX_RESULTS,
  microTime,
  policyReport,
  reportDigest,
  ReportPublisher,
  TRUNCATED_ANNOTATION,
  type NadAudit,
  type PodAudit,
} from '../../src/audit/index.js';
import { REPORT_RETRY_MAX_MS } from '../../src/audit/publisher.js';
import { KubeRequestError, type KubeTransport } from '../../src/kube/index.js';
import { Registry } from 'prom-client';
import { registerAuditMetrics } from '../../src/audit/index.js';
import { auditWith, live } from './helpers.js';

const finding = (rule: string, result: 'fail' | 'warn' = 'fail') => ({
  policy: 'p',
  rule,
  action: 'Enforce' as const,
  result,
  severity: 'high' as const,
  message: `m-${rule}`,
});

t.test('policyReport: one result per finding, worst first, summary over all, clean pods counted as pass', async (t) => {
  const audits: PodAudit[] = [
    { pod: live('a', 'z'), findings: [finding('r1', 'warn')] },
    { pod: live('a', 'b'), findings: [finding('r2'), finding('r1')] },
    { pod: live('a', 'clean'), findings: [] },
  ];
  const r = policyReport('a', audits, { now: 1000 });
  t.match(r, {
    apiVersion: 'wgpolicyk8s.io/v1alpha2',
    kind: 'PolicyReport',
    metadata: { name: 'netattach', namespace: 'a', labels: { 'app.kubernetes.io/managed-by': 'netattach' } },
    summary: { pass: 1, fail: 2, warn: 1, error: 0, skip: 0 },
  });
  t.same(
    r.results.map((x) => `${x.resources[0]!.name}/${x.rule}/${x.result}`),
    ['b/r1/fail', 'b/r2/fail', 'z/r1/warn'],
  );
  t.same(r.results[0]!.resources, [{ apiVersion: 'v1', kind: 'Pod', namespace: 'a', name: 'b', uid: 'uid-b' }]);
  t.same(r.results[0]!.properties, { action: 'Enforce' });
  t.same(r.results[0]!.timestamp, { seconds: 1000, nanos: 0 });
  const later = policyReport('a', audits, { now: 2000 });
  t.equal(reportDigest(later), reportDigest(r), 'timestamps alone do not make a write');
});

t.test(
  "policyReport: NAD results name the NetworkAttachmentDefinition, after the pods' of the same result; clean NADs count as pass",
  async (t) => {
    const audits: PodAudit[] = [
      { pod: live('a', 'same'), findings: [finding('r1')] },
      { pod: live('a', 'clean'), findings: [] },
    ];
    const nads: NadAudit[] = [
      { nad: { namespace: 'a', name: 'same', uid: 'n1' }, findings: [{ ...finding('nadValid'), policy: 'builtin' }] },
      { nad: { namespace: 'a', name: 'ok' }, findings: [] },
    ];
    const r = policyReport('a', audits, { now: 1000 }, nads);
    t.same(r.summary, { pass: 2, fail: 2, warn: 0, error: 0, skip: 0 });
    t.same(
      r.results.map((x) => `${x.resources[0]!.kind}/${x.resources[0]!.name}/${x.policy}/${x.rule}`),
      ['Pod/same/p/r1', 'NetworkAttachmentDefinition/same/builtin/nadValid'],
    );
    t.same(r.results[1]!.resources, [
      { apiVersion: 'k8s.cni.cncf.io/v1', kind: 'NetworkAttachmentDefinition', namespace: 'a', name: 'same', uid: 'n1' },
    ]);
    t.match(r.results[1], { result: 'fail', severity: 'high', properties: { action: 'Enforce' }, source: 'netattach' });
    // First-seen times: a pod and a NAD of the same name are different results.
    const seen = firstSeenOf({
      results: [
        { ...r.results[0]!, timestamp: { seconds: 10, nanos: 0 } },
        { ...r.results[1]!, timestamp: { seconds: 20, nanos: 0 } },
      ],
    });
    const later = policyReport('a', audits, { now: 2000, firstSeen: (k) => seen.get(k) }, nads);
    t.same(
      later.results.map((x) => x.timestamp.seconds),
      [10, 20],
    );
  },
);

t.test('policyReport: at most MAX_RESULTS results; the annotation counts the rest', async (t) => {
  const audits: PodAudit[] = Array.from({ length: MAX_RESULTS + 5 }, (_, i) => ({
    pod: live('a', `p${String(i).padStart(5, '0')}`),
    findings: [finding('r')],
  }));
  const r = policyReport('a', audits, { now: 1 });
  t.equal(r.results.length, MAX_RESULTS);
  t.equal(r.summary.fail, MAX_RESULTS + 5);
  t.equal(r.metadata.annotations?.[TRUNCATED_ANNOTATION], '5');
});

t.test('microTime has six fractional digits', async (t) => {
  t.equal(microTime(Date.UTC(2026, 0, 2, 3, 4, 5, 678)), '2026-01-02T03:04:05.678000Z');
});

/** An apiserver holding Leases and PolicyReports in memory; server-side apply honours resourceVersion. */
function fakeApi(opts: { crd?: boolean } = {}) {
  const objects = new Map<string, { rv: number; body: Record<string, unknown> }>();
  const writes: string[] = [];
  /** Every PATCH path, refused ones included. */
  const requests: string[] = [];
  let rv = 1;
  let crd = opts.crd ?? true;
  let failApply: number | undefined;
  /** Namespaces whose report writes are refused, with the status (413: too large). */
  const refused = new Map<string, number>();
  const bare = (path: string) => path.split('?')[0]!;
  const transport: KubeTransport = {
    async getJson(path, query) {
      if (path === '/apis/wgpolicyk8s.io/v1alpha2') {
        if (!crd) throw new KubeRequestError(404, 'not found');
        return { resources: [{ name: 'policyreports' }, { name: 'policyreports/status' }] };
      }
      if (path === '/apis/wgpolicyk8s.io/v1alpha2/policyreports') {
        t.equal(query['labelSelector'], 'app.kubernetes.io/managed-by=netattach');
        return { items: [...objects].filter(([k]) => k.includes('/policyreports/')).map(([, o]) => o.body) };
      }
      const o = objects.get(path);
      if (!o) throw new KubeRequestError(404, `${path} not found`);
      return o.body;
    },
    async watch() {},
    async patchJson(path, body, contentType) {
      t.equal(contentType, 'application/apply-patch+yaml');
      t.match(path, /\?fieldManager=netattach&force=true$/);
      requests.push(bare(path));
      if (failApply && path.includes('/policyreports/')) throw new KubeRequestError(failApply, 'refused');
      const ns = /\/namespaces\/([^/]+)\/policyreports\//.exec(path)?.[1];
      if (ns !== undefined && refused.has(ns))
        throw new KubeRequestError(refused.get(ns)!, 'the server has rejected the request: request entity too large');
      const key = bare(path);
      const b = body as { metadata: { resourceVersion?: string } };
      const cur = objects.get(key);
      if (b.metadata.resourceVersion !== undefined && String(cur?.rv) !== b.metadata.resourceVersion)
        throw new KubeRequestError(409, 'conflict');
      const next = ++rv;
      objects.set(key, { rv: next, body: { ...(body as object), metadata: { ...b.metadata, resourceVersion: String(next) } } });
      writes.push(key);
      return objects.get(key)!.body;
    },
  };
  return {
    transport,
    objects,
    writes,
    requests,
    setCrd: (v: boolean) => void (crd = v),
    failApplyWith: (code: number | undefined) => void (failApply = code),
    refuse: (ns: string, code: number | undefined) => void (code === undefined ? refused.delete(ns) : refused.set(ns, code)),
    report: (ns: string) =>
      objects.get(`/apis/wgpolicyk8s.io/v1alpha2/namespaces/${ns}/policyreports/netattach`)?.body as
        | { summary: Record<string, number>; results: Array<{ resources: Array<{ name: string }>; timestamp: { seconds: number } }> }
        | undefined,
    lease: () =>
      objects.get('/apis/coordination.k8s.io/v1/namespaces/netattach-system/leases/netattach-audit')?.body as
        | { spec: Record<string, unknown> }
        | undefined,
  };
}

t.test('without the CRD nothing is written and no Lease is taken', async (t) => {
  const api = fakeApi({ crd: false });
  const pub = new ReportPublisher(api.transport, auditWith([{ ns: 'a', name: 'p', networks: 'missing' }]), {
    leaseNamespace: 'netattach-system',
    identity: 'me',
  });
  await pub.round();
  t.same(api.writes, []);
  t.notOk(pub.isLeader());
  api.setCrd(true);
  await pub.round();
  t.ok(pub.isLeader(), 'the CRD installed later is noticed');
  t.ok(api.report('a'));
});

t.test('the leader writes a report per namespace with findings, then only what changed', async (t) => {
  const api = fakeApi();
  let now = 1_000_000;
  const audit = auditWith([
    { ns: 'a', name: 'p', networks: 'missing' },
    { ns: 'b', name: 'q', networks: 'gone' },
  ]);
  audit.upsert({ metadata: { namespace: 'c', name: 'clean', annotations: {} } });
  const pub = new ReportPublisher(api.transport, audit, { leaseNamespace: 'netattach-system', identity: 'me', now: () => now });
  await pub.round();
  t.same(api.writes.filter((w) => w.includes('policyreports')).sort(), [
    '/apis/wgpolicyk8s.io/v1alpha2/namespaces/a/policyreports/netattach',
    '/apis/wgpolicyk8s.io/v1alpha2/namespaces/b/policyreports/netattach',
  ]);
  t.match(api.lease()?.spec, { holderIdentity: 'me', leaseDurationSeconds: 30 });
  t.same(api.report('a')!.summary, { pass: 0, fail: 1, warn: 0, error: 0, skip: 0 });
  t.equal(api.report('a')!.results[0]!.timestamp.seconds, 1000);

  api.writes.length = 0;
  now += 10_000;
  await pub.round();
  t.same(
    api.writes,
    ['/apis/coordination.k8s.io/v1/namespaces/netattach-system/leases/netattach-audit'],
    'nothing changed: only the Lease renewed',
  );

  // The pod in a is fixed: its report is emptied, b's is left alone.
  audit.upsert({ metadata: { namespace: 'a', name: 'p', uid: 'u-p', annotations: {} } });
  audit.drain();
  api.writes.length = 0;
  await pub.round();
  t.same(
    api.writes.filter((w) => w.includes('policyreports')),
    ['/apis/wgpolicyk8s.io/v1alpha2/namespaces/a/policyreports/netattach'],
  );
  t.same(api.report('a')!.results, []);
});

t.test('another holder with a fresh Lease keeps this replica from writing; an expired one is taken over', async (t) => {
  const api = fakeApi();
  let now = Date.parse('2026-01-01T00:00:00Z');
  await new Lease(api.transport, {
    namespace: 'netattach-system',
    name: 'netattach-audit',
    identity: 'other',
    durationSeconds: 30,
    now: () => now,
  }).acquire();
  const pub = new ReportPublisher(api.transport, auditWith([{ ns: 'a', name: 'p', networks: 'missing' }]), {
    leaseNamespace: 'netattach-system',
    identity: 'me',
    now: () => now,
  });
  now += 10_000;
  await pub.round();
  t.notOk(pub.isLeader());
  t.notOk(api.report('a'));
  now += 25_000;
  await pub.round();
  t.ok(pub.isLeader());
  t.match(api.lease()?.spec, { holderIdentity: 'me', leaseTransitions: 1 });
  t.ok(api.report('a'));
});

t.test('a replica that stops releases the Lease: another takes over at once, not after it expires', async (t) => {
  const api = fakeApi();
  const now = Date.parse('2026-01-01T00:00:00Z');
  const first = new ReportPublisher(api.transport, auditWith([{ ns: 'a', name: 'p', networks: 'missing' }]), {
    leaseNamespace: 'netattach-system',
    identity: 'one',
    now: () => now,
  });
  await first.round();
  t.ok(first.isLeader());
  await first.stop();
  t.notOk(first.isLeader());
  t.match(api.lease()?.spec, { holderIdentity: '' });
  const second = new ReportPublisher(api.transport, auditWith([{ ns: 'a', name: 'p', networks: 'missing' }]), {
    leaseNamespace: 'netattach-system',
    identity: 'two',
    now: () => now + 1000,
  });
  await second.round();
  t.ok(second.isLeader(), 'taken 1 s later');
  // A replica that does not hold it releases nothing.
  await new Lease(api.transport, {
    namespace: 'netattach-system',
    name: 'netattach-audit',
    identity: 'one',
    durationSeconds: 30,
  }).release();
  t.match(api.lease()?.spec, { holderIdentity: 'two' });
});

t.test('a race lost on the Lease (409) is not an error: not the leader', async (t) => {
  const api = fakeApi();
  const lease = new Lease(api.transport, { namespace: 'netattach-system', name: 'netattach-audit', identity: 'me', durationSeconds: 30 });
  t.ok(await lease.acquire());
  const stale = { ...api.transport, getJson: async () => ({ metadata: { resourceVersion: '1' }, spec: { holderIdentity: 'me' } }) };
  t.notOk(
    await new Lease(stale, { namespace: 'netattach-system', name: 'netattach-audit', identity: 'me', durationSeconds: 30 }).acquire(),
  );
});

t.test('a new leader diffs against the reports written before: no rewrite, first-seen times kept', async (t) => {
  const api = fakeApi();
  let now = 5_000_000;
  const first = new ReportPublisher(api.transport, auditWith([{ ns: 'a', name: 'p', networks: 'missing' }]), {
    leaseNamespace: 'netattach-system',
    identity: 'one',
    now: () => now,
  });
  await first.round();
  t.equal(api.report('a')!.results[0]!.timestamp.seconds, 5000);
  now += 60_000; // the first replica is gone; its lease expired
  const audit = auditWith([
    { ns: 'a', name: 'p', networks: 'missing' },
    { ns: 'a', name: 'p2', networks: 'missing' },
  ]);
  const second = new ReportPublisher(api.transport, audit, { leaseNamespace: 'netattach-system', identity: 'two', now: () => now });
  api.writes.length = 0;
  await second.round();
  t.equal(api.writes.filter((w) => w.includes('policyreports')).length, 1);
  const results = api.report('a')!.results;
  t.same(
    results.map((r) => [r.resources[0]!.name, r.timestamp.seconds]),
    [
      ['p', 5000],
      ['p2', 5060],
    ],
  );
  // Same findings again under a third leader: nothing to write.
  now += 60_000;
  const third = new ReportPublisher(api.transport, audit, { leaseNamespace: 'netattach-system', identity: 'three', now: () => now });
  api.writes.length = 0;
  await third.round();
  t.same(
    api.writes.filter((w) => w.includes('policyreports')),
    [],
  );
});

t.test('a new leader reads the reports written before in pages', async (t) => {
  const api = fakeApi();
  const pods = Array.from({ length: 45 }, (_, i) => ({ ns: `ns${String(i).padStart(2, '0')}`, name: 'p', networks: 'missing' }));
  const first = new ReportPublisher(api.transport, auditWith(pods), {
    leaseNamespace: 'netattach-system',
    identity: 'one',
    now: () => 1_000_000,
  });
  await first.round();
  await first.stop();
  const queries: Array<Record<string, string | undefined>> = [];
  const paged: KubeTransport = {
    ...api.transport,
    async getJson(path, query) {
      if (path !== '/apis/wgpolicyk8s.io/v1alpha2/policyreports') return api.transport.getJson(path, query);
      queries.push(query);
      const all = ((await api.transport.getJson(path, { labelSelector: query['labelSelector'] })) as { items: unknown[] }).items;
      const start = Number(query['continue'] ?? 0);
      const end = start + Number(query['limit']);
      return { items: all.slice(start, end), metadata: end < all.length ? { continue: String(end) } : {} };
    },
  };
  const second = new ReportPublisher(paged, auditWith(pods), { leaseNamespace: 'netattach-system', identity: 'two', now: () => 1_001_000 });
  api.writes.length = 0;
  await second.round();
  t.same(
    queries.map((q) => q['continue'] ?? ''),
    ['', '20', '40'],
    'three pages of at most 20',
  );
  t.same(
    api.writes.filter((w) => w.includes('policyreports')),
    [],
    'all 45 reports were read: nothing to rewrite',
  );
});

t.test('never a write storm: at most maxWritesPerRound reports a round, the rest next round', async (t) => {
  const api = fakeApi();
  const pods = Array.from({ length: 7 }, (_, i) => ({ ns: `ns${i}`, name: 'p', networks: 'missing' }));
  const pub = new ReportPublisher(api.transport, auditWith(pods), {
    leaseNamespace: 'netattach-system',
    identity: 'me',
    maxWritesPerRound: 3,
  });
  const reports = () => api.writes.filter((w) => w.includes('policyreports')).length;
  await pub.round();
  t.equal(reports(), 3);
  await pub.round();
  t.equal(reports(), 6);
  await pub.round();
  t.equal(reports(), 7);
  await pub.round();
  t.equal(reports(), 7);
});

t.test('a failed write is retried after a growing delay; the failure never throws out of a round', async (t) => {
  const api = fakeApi();
  let now = 1_000_000;
  const audit = auditWith([{ ns: 'a', name: 'p', networks: 'missing' }]);
  const lease = new Lease(api.transport, {
    namespace: 'netattach-system',
    name: 'netattach-audit',
    identity: 'me',
    durationSeconds: 30,
    now: () => now,
  });
  await lease.acquire();
  const pub = new ReportPublisher(api.transport, audit, { leaseNamespace: 'netattach-system', identity: 'me', now: () => now });
  const attempts = () => api.requests.filter((r) => r.includes('/policyreports/')).length;
  api.failApplyWith(500);
  await pub.round();
  t.ok(pub.isLeader(), 'the Lease was taken');
  t.notOk(api.report('a'));
  t.equal(attempts(), 1);
  t.same(pub.failingNamespaces(), ['a']);
  await pub.round();
  t.equal(attempts(), 1, 'not again within the delay');
  now += 5_000;
  await pub.round();
  t.equal(attempts(), 2, 'retried after one interval');
  now += 5_000;
  await pub.round();
  t.equal(attempts(), 2, 'the second delay is twice the first');
  api.failApplyWith(undefined);
  now += 5_000;
  await pub.round();
  t.ok(api.report('a'));
  t.same(pub.failingNamespaces(), []);
});

t.test('a namespace whose report is refused holds up no other namespace: logged and counted, retried later', async (t) => {
  const api = fakeApi();
  let now = 1_000_000;
  const logs: string[] = [];
  const logger = { info: (_o: object, m: string) => logs.push(m), warn: (o: object, m: string) => logs.push(`${m} ${JSON.stringify(o)}`) };
  const registry = new Registry();
  const metrics = registerAuditMetrics(registry);
  const failing = async () => (await registry.getSingleMetric('netattach_audit_report_namespaces_failing')?.get())?.values[0]?.value;
  const audit = auditWith(['a', 'b', 'c'].map((ns) => ({ ns, name: 'p', networks: 'missing' })));
  api.refuse('a', 413);
  const pub = new ReportPublisher(api.transport, audit, {
    leaseNamespace: 'netattach-system',
    identity: 'me',
    now: () => now,
    logger,
    metrics,
  });
  await pub.round();
  t.notOk(api.report('a'));
  t.ok(api.report('b'), 'a namespace after the refused one is written');
  t.ok(api.report('c'));
  t.equal(await failing(), 1);
  t.match(
    logs.filter((l) => /failed/.test(l)),
    [/PolicyReport of a namespace failed.*"namespace":"a".*413/],
  );
  // Later rounds: the others' changes go out while a still fails.
  audit.upsert({ metadata: { namespace: 'b', name: 'p', uid: 'u-p', annotations: {} } });
  audit.drain();
  for (let i = 0; i < 5; i++) {
    now += 5_000;
    await pub.round();
  }
  t.same(api.report('b')!.results, []);
  t.notOk(api.report('a'));
  t.equal(logs.filter((l) => /failed/.test(l)).length, 1, 'the same refusal is logged once');
  api.refuse('a', undefined);
  now += 5 * 60_000;
  await pub.round();
  t.ok(api.report('a'), 'written once the apiserver accepts it');
  t.equal(await failing(), 0);
});

t.test('a failing namespace whose findings are gone leaves no failing entry behind', async (t) => {
  const api = fakeApi();
  let now = 1_000_000;
  const audit = auditWith([{ ns: 'a', name: 'p', networks: 'missing' }]);
  api.refuse('a', 413);
  const pub = new ReportPublisher(api.transport, audit, { leaseNamespace: 'netattach-system', identity: 'me', now: () => now });
  await pub.round();
  t.same(pub.failingNamespaces(), ['a']);
  // The pod goes (or the namespace is deleted): nothing left to write for a.
  audit.upsert({ metadata: { namespace: 'a', name: 'p', uid: 'u-p', annotations: {} } });
  audit.drain();
  now += 5 * 60_000;
  await pub.round();
  t.notOk(api.report('a'), 'nothing written');
  t.same(pub.failingNamespaces(), [], 'and no longer counted as failing');
});

t.test('a namespace whose only finding is a NAD gets a report; the NAD deleted empties it', async (t) => {
  const api = fakeApi();
  const audit = auditWith([]);
  const bad = {
    apiVersion: 'k8s.cni.cncf.io/v1',
    kind: 'NetworkAttachmentDefinition',
    metadata: { namespace: 'n', name: 'bad', uid: 'u-bad', resourceVersion: '1' },
    spec: { config: '{"cniVersion":"1.0.0","name":"x"}' },
  };
  audit.nadWatch.upsert(bad);
  audit.drain();
  const pub = new ReportPublisher(api.transport, audit, { leaseNamespace: 'netattach-system', identity: 'me' });
  await pub.round();
  const report = api.report('n') as unknown as {
    summary: Record<string, number>;
    results: Array<{ rule: string; resources: Array<Record<string, string>> }>;
  };
  t.same(report.summary, { pass: 0, fail: 1, warn: 0, error: 0, skip: 0 });
  t.same(
    report.results.map((r) => r.rule),
    ['nadValid'],
  );
  t.match(report.results[0]!.resources[0], { kind: 'NetworkAttachmentDefinition', name: 'bad', uid: 'u-bad' });
  audit.nadWatch.remove(bad);
  await pub.round();
  t.same(api.report('n')!.results, []);
});

// --- The documented numbers of the writer (docs/operating.md): the Lease netattach-audit of
// 30 s, rounds every 5 s, at most 50 writes a round, a refused namespace retried after one round
// and then twice as long each time up to 5 min. ---

t.test('the defaults: the Lease netattach-audit of 30 s, renewed every 5 s round', async (t) => {
  const api = fakeApi();
  const intervals: number[] = [];
  const realSetInterval = globalThis.setInterval;
  globalThis.setInterval = ((fn: () => void, ms: number) => {
    intervals.push(ms);
    return realSetInterval(fn, 3_600_000);
  }) as typeof setInterval;
  const pub = new ReportPublisher(api.transport, auditWith([{ ns: 'a', name: 'p', networks: 'missing' }]), {
    leaseNamespace: 'netattach-system',
    identity: 'me',
    now: () => 1_000_000,
  });
  try {
    pub.start();
  } finally {
    globalThis.setInterval = realSetInterval;
  }
  t.strictSame(intervals, [5_000], 'a round every 5 s');
  await pub.round();
  await pub.stop();
  t.match(api.lease()?.spec, { leaseDurationSeconds: 30 }, 'the Lease netattach-system/netattach-audit, of 30 s');
  t.ok(api.writes.includes('/apis/coordination.k8s.io/v1/namespaces/netattach-system/leases/netattach-audit'));
});

t.test('the default: at most 50 report writes a round', async (t) => {
  const api = fakeApi();
  const pods = Array.from({ length: 53 }, (_, i) => ({ ns: `ns${String(i).padStart(2, '0')}`, name: 'p', networks: 'missing' }));
  const pub = new ReportPublisher(api.transport, auditWith(pods), { leaseNamespace: 'netattach-system', identity: 'me' });
  const reports = () => api.writes.filter((w) => w.includes('policyreports')).length;
  await pub.round();
  t.equal(reports(), 50);
  await pub.round();
  t.equal(reports(), 53);
});

t.test('refused writes: retried after 5 s, then twice as long each time, up to 5 min', async (t) => {
  t.equal(REPORT_RETRY_MAX_MS, 300_000);
  const api = fakeApi();
  let now = 1_000_000;
  const pub = new ReportPublisher(api.transport, auditWith([{ ns: 'a', name: 'p', networks: 'missing' }]), {
    leaseNamespace: 'netattach-system',
    identity: 'me',
    now: () => now,
  });
  const attempts = () => api.requests.filter((r) => r.includes('/policyreports/')).length;
  api.refuse('a', 413);
  await pub.round();
  t.equal(attempts(), 1);
  const delays = [5, 10, 20, 40, 80, 160, 300, 300].map((s) => s * 1000);
  for (const [i, delay] of delays.entries()) {
    now += delay - 1;
    await pub.round();
    t.equal(attempts(), i + 1, `not 1 ms before ${delay / 1000} s`);
    now += 1;
    await pub.round();
    t.equal(attempts(), i + 2, `after ${delay / 1000} s`);
  }
  // The Lease of 30 s was renewed on every round meanwhile; written once accepted.
  api.refuse('a', undefined);
  now += 300_000;
  await pub.round();
  t.ok(api.report('a'));
  t.same(pub.failingNamespaces(), []);
});
