// The background audit: the same findings as `netattach audit` on the same state, re-judgement on
// every kind of change (pod, NAD, namespace labels, policy), and bounded work per tick.
import t from 'tap';
import { auditSnapshot, BackgroundAudit, type LivePod } from '../../src/audit/index.js';
import { DEFAULT_ADMISSION_CONFIG } from '../../src/admission/index.js';
import { nadKey, type Nad } from '../../src/nads/index.js';
import { AddressIndex, EMPTY_POLICY_SET, NadUsage, PolicyEngine, podNetworkFacts, type PolicySet } from '../../src/policy/index.js';
import { live, nad, policiesOf, ONLY_SRIOV, UNIQUE_MACS } from './helpers.js';

const config = DEFAULT_ADMISSION_CONFIG;
const NETWORKS = 'k8s.v1.cni.cncf.io/networks';

/** What serve wires: the pod watch feeding the index, the NAD usage and the audit, in that order. */
function world(
  opts: {
    policies?: PolicySet;
    nads?: Nad[];
    labels?: Record<string, Record<string, string>>;
    podsPerSecond?: number;
    tickMs?: number;
  } = {},
) {
  const nads = new Map((opts.nads ?? []).map((n) => [nadKey(n.namespace, n.name), n]));
  const labels = { ...opts.labels };
  const index = new AddressIndex();
  const usage = new NadUsage();
  const engine = new PolicyEngine({ index, policies: opts.policies ?? EMPTY_POLICY_SET });
  const audit = new BackgroundAudit({
    nads: { get: (ns, name) => nads.get(nadKey(ns, name)), list: () => [...nads.values()], synced: () => true },
    namespaceLabels: (ns) => ({ ...labels[ns], 'kubernetes.io/metadata.name': ns }),
    engine,
    index,
    config,
    podsUsingNad: (ns, name) => usage.podsUsing(ns, name),
    ready: () => true,
    ...(opts.podsPerSecond ? { podsPerSecond: opts.podsPerSecond } : {}),
    ...(opts.tickMs ? { tickMs: opts.tickMs } : {}),
    // The counts are what these tests pin; the 2 ms wall-clock slice would make them depend on
    // the machine's load (a cold first tick on a busy CI machine judged fewer pods).
    sliceMs: 60_000,
  });
  const objectOf = (p: LivePod) => ({
    metadata: {
      namespace: p.namespace,
      name: p.name,
      uid: p.uid,
      annotations: (p.networks ? { [NETWORKS]: p.networks } : {}) as Record<string, string>,
    },
  });
  const pods = new Map<string, LivePod>();
  return {
    nads,
    labels,
    engine,
    audit,
    pods,
    add(p: LivePod) {
      pods.set(`${p.namespace}/${p.name}`, p);
      const facts = podNetworkFacts(p.namespace, p.networks);
      index.setPod({ namespace: p.namespace, name: p.name, ...(p.uid ? { uid: p.uid } : {}) }, facts.addresses);
      usage.setPod(p.namespace, p.name, facts.nads);
      audit.upsert(objectOf(p));
    },
    remove(p: LivePod) {
      pods.delete(`${p.namespace}/${p.name}`);
      index.removePod(p.namespace, p.name);
      usage.removePod(p.namespace, p.name);
      audit.remove(objectOf(p));
    },
    snapshot: () =>
      auditSnapshot({
        pods: [...pods.values()],
        nads: [...nads.values()],
        namespaceLabels: (ns) => labels[ns],
        policies: engine.policies(),
        config,
      }).filter((a) => a.findings.length > 0),
    found: () =>
      audit.allFindings().map((a) => `${a.pod.namespace}/${a.pod.name}:${a.findings.map((f) => `${f.policy}/${f.rule}`).join(',')}`),
  };
}

const sortAudits = <T extends { pod: LivePod }>(a: T[]): T[] =>
  [...a].sort((x, y) => `${x.pod.namespace}/${x.pod.name}`.localeCompare(`${y.pod.namespace}/${y.pod.name}`));

t.test("serve's audit and netattach audit find the same, with the same messages", async (t) => {
  const w = world({
    policies: policiesOf(UNIQUE_MACS + '---\n' + ONLY_SRIOV),
    nads: [nad('a', 'sriov-net'), nad('a', 'macvlan', ['ips']), nad('b', 'sriov-net', ['ips'])],
  });
  const mac = (m: string) => `[{"name":"sriov-net","mac":"02:00:00:00:00:0${m}"}]`;
  for (const p of [
    live('a', 'p1', mac('1')),
    live('a', 'p2', mac('1')),
    live('a', 'p3', 'macvlan'),
    live('b', 'q1', mac('3')),
    live('b', 'q2', 'gone'),
    live('a', 'clean', 'sriov-net'),
  ])
    w.add(p);
  w.audit.drain();
  const background = w.audit.allFindings();
  t.ok(background.length >= 4);
  t.same(sortAudits(background), sortAudits(w.snapshot()));
});

t.test('a pod added with a MAC another pod holds: both get the finding; removing one clears both', async (t) => {
  const w = world({ policies: policiesOf(UNIQUE_MACS), nads: [nad('a', 'sriov-net')] });
  const p1 = live('a', 'p1', '[{"name":"sriov-net","mac":"02:00:00:00:00:01"}]');
  w.add(p1);
  w.audit.drain();
  t.same(w.found(), []);
  const p2 = live('a', 'p2', p1.networks);
  w.add(p2);
  w.audit.drain();
  t.same(w.found(), ['a/p1:unique-macs/uniqueAddresses', 'a/p2:unique-macs/uniqueAddresses']);
  w.remove(p2);
  w.audit.drain();
  t.same(w.found(), []);
  t.same(w.audit.takeChanged(), ['a']);
});

t.test('a policy added after the pods exist, then deleted', async (t) => {
  const w = world({ nads: [nad('a', 'sriov-net'), nad('a', 'macvlan', ['ips'])] });
  w.add(live('a', 'ok', 'sriov-net'));
  w.add(live('a', 'bad', 'macvlan'));
  w.audit.drain();
  t.same(w.found(), []);
  w.engine.setPolicies(policiesOf(ONLY_SRIOV));
  w.audit.drain();
  t.same(w.found(), ['a/bad:only-sriov/allowedNetworks']);
  w.engine.setPolicies(EMPTY_POLICY_SET);
  w.audit.drain();
  t.same(w.found(), []);
});

t.test('a NAD losing a capability, or deleted, shows the pods that use it', async (t) => {
  const w = world({ nads: [nad('a', 'sriov-net')] });
  w.add(live('a', 'p', '[{"name":"sriov-net","mac":"02:00:00:00:00:01"}]'));
  w.add(live('a', 'q', 'sriov-net'));
  w.audit.drain();
  t.same(w.found(), []);
  w.nads.set('a/sriov-net', nad('a', 'sriov-net', ['ips']));
  w.audit.drain();
  t.same(w.found(), ['a/p:builtin/capabilities']);
  w.nads.delete('a/sriov-net');
  w.audit.drain();
  t.same(w.found(), ['a/p:builtin/networkExists', 'a/q:builtin/networkExists']);
  w.nads.set('a/sriov-net', nad('a', 'sriov-net'));
  w.audit.drain();
  t.same(w.found(), []);
});

t.test('namespace labels changing which policy applies', async (t) => {
  const w = world({
    policies: policiesOf(ONLY_SRIOV.replace('rules:', 'namespaceSelector: {matchLabels: {tier: prod}}\n  rules:')),
    nads: [nad('a', 'macvlan', ['ips'])],
  });
  w.add(live('a', 'p', 'macvlan'));
  w.audit.drain();
  t.same(w.found(), []);
  w.labels['a'] = { tier: 'prod' };
  w.audit.drain();
  t.same(w.found(), ['a/p:only-sriov/allowedNetworks']);
});

t.test('a pod losing its networks, or changing them, is judged again', async (t) => {
  const w = world({ nads: [nad('a', 'sriov-net')] });
  w.add(live('a', 'p', 'missing'));
  w.audit.drain();
  t.same(w.found(), ['a/p:builtin/networkExists']);
  w.add(live('a', 'p', 'sriov-net'));
  w.audit.drain();
  t.same(w.found(), []);
  w.add(live('a', 'p', 'missing'));
  w.add(live('a', 'p'));
  w.audit.drain();
  t.same(w.found(), []);
  t.equal(w.audit.podCount(), 0);
});

t.test('a relist drops the pods it no longer lists', async (t) => {
  const w = world();
  w.add(live('a', 'p', 'missing'));
  w.add(live('a', 'q', 'missing'));
  w.audit.drain();
  t.equal(w.found().length, 2);
  w.audit.resync();
  w.audit.upsert({ metadata: { namespace: 'a', name: 'q', uid: 'uid-q', annotations: { [NETWORKS]: 'missing' } } });
  w.audit.resynced();
  t.same(w.found(), ['a/q:builtin/networkExists']);
});

t.test('bounded work: one tick judges at most podsPerSecond * tickMs / 1000 pods', async (t) => {
  const w = world({ podsPerSecond: 100, tickMs: 100 });
  for (let i = 0; i < 35; i++) w.add(live('a', `p${i}`, 'missing'));
  t.equal(w.audit.pending(), 35);
  w.audit.tick();
  t.equal(w.audit.pending(), 25);
  t.notOk(w.audit.complete(), 'the first pass is not done while pods wait');
  for (let i = 0; i < 3; i++) w.audit.tick();
  t.equal(w.audit.pending(), 0);
  t.ok(w.audit.complete());
  t.equal(w.found().length, 35);
});

t.test('nothing is judged before the sources have synced', async (t) => {
  let ready = false;
  const index = new AddressIndex();
  const audit = new BackgroundAudit({
    nads: { get: () => undefined, list: () => [], synced: () => true },
    namespaceLabels: () => ({}),
    engine: new PolicyEngine({ index }),
    config,
    podsUsingNad: () => [],
    ready: () => ready,
  });
  audit.upsert({ metadata: { namespace: 'a', name: 'p', annotations: { [NETWORKS]: 'x' } } });
  audit.tick();
  t.equal(audit.pending(), 1);
  ready = true;
  audit.tick();
  t.equal(audit.pending(), 0);
  t.equal(audit.allFindings().length, 1);
});

// --- NADs judged themselves: their objects come from the NAD cache's watch (nadWatch) ---

const NAD_API = 'k8s.cni.cncf.io/v1';
let rv = 100;
const nadObj = (ns: string, name: string, config: string, annotations: Record<string, string> = {}) => ({
  apiVersion: NAD_API,
  kind: 'NetworkAttachmentDefinition',
  metadata: { namespace: ns, name, uid: `nad-${name}`, resourceVersion: String(++rv), annotations },
  spec: { config },
});
const GOOD = '{"cniVersion":"1.0.0","name":"x","type":"macvlan"}';
const NO_TYPE = '{"cniVersion":"1.0.0","name":"x"}';
const nadsFound = (w: ReturnType<typeof world>) =>
  w.audit.allNadFindings().map((a) => `${a.nad.namespace}/${a.nad.name}:${a.findings.map((f) => `${f.policy}/${f.rule}`).join(',')}`);

t.test('a NAD added invalid is a finding; fixed, it is gone; deleted, it is gone', async (t) => {
  const w = world();
  w.audit.nadWatch.resync();
  w.audit.nadWatch.upsert(nadObj('a', 'good', GOOD));
  w.audit.nadWatch.resynced();
  w.audit.drain();
  t.same(nadsFound(w), []);
  t.same(
    w.audit.namespaceNadAudits('a').map((x) => `${x.nad.name}:${x.findings.length}`),
    ['good:0'],
    'a clean NAD is known (a pass in the report)',
  );

  const bad = nadObj('a', 'bad', NO_TYPE);
  w.audit.nadWatch.upsert(bad);
  t.equal(w.audit.pending(), 1, 'queued, judged by the ticks');
  w.audit.drain();
  t.same(nadsFound(w), ['a/bad:builtin/nadValid']);
  t.match(w.audit.allNadFindings()[0]!.findings[0]!.message, /^spec\.config\.type: Required value/);
  t.same(w.audit.allNadFindings()[0]!.nad, { namespace: 'a', name: 'bad', uid: 'nad-bad' });
  t.same(w.audit.takeChanged(), ['a']);

  w.audit.nadWatch.upsert(nadObj('a', 'bad', GOOD));
  w.audit.drain();
  t.same(nadsFound(w), [], 'fixed');

  w.audit.nadWatch.upsert(nadObj('a', 'bad', NO_TYPE));
  w.audit.drain();
  t.same(nadsFound(w), ['a/bad:builtin/nadValid']);
  w.audit.takeChanged();
  w.audit.nadWatch.remove(nadObj('a', 'bad', NO_TYPE));
  t.same(nadsFound(w), [], 'deleted: its findings go at once');
  t.same(w.audit.takeChanged(), ['a'], "its namespace's report is written again");
  t.same(
    w.audit.namespaceNadAudits('a').map((x) => x.nad.name),
    ['good'],
  );
});

t.test('a NAD relist: the same resourceVersion is not judged again; NADs it no longer lists are dropped', async (t) => {
  const w = world();
  const bad = nadObj('a', 'bad', NO_TYPE);
  const other = nadObj('b', 'other', NO_TYPE);
  w.audit.nadWatch.resync();
  w.audit.nadWatch.upsert(bad);
  w.audit.nadWatch.upsert(other);
  w.audit.nadWatch.resynced();
  w.audit.drain();
  t.same(nadsFound(w), ['a/bad:builtin/nadValid', 'b/other:builtin/nadValid']);
  w.audit.nadWatch.resync();
  w.audit.nadWatch.upsert(bad);
  t.equal(w.audit.pending(), 0, 'same version: nothing to judge');
  w.audit.nadWatch.resynced();
  t.same(nadsFound(w), ['a/bad:builtin/nadValid']);
  t.equal(w.audit.nadCount(), 1);
});

t.test('NADs in namespaces the NAD webhook does not see are not reported, and come back when it does', async (t) => {
  const w = world({ labels: { off: { 'netattach.io/admission': 'disabled' } } });
  w.audit.nadWatch.upsert(nadObj('kube-system', 'bad', NO_TYPE));
  w.audit.nadWatch.upsert(nadObj('off', 'bad', NO_TYPE));
  w.audit.drain();
  t.same(nadsFound(w), []);
  t.same(w.audit.namespaceNadAudits('off'), []);
  delete w.labels['off'];
  w.audit.drain();
  t.same(nadsFound(w), ['off/bad:builtin/nadValid'], 'admission enabled for the namespace: its stored NADs are reported');
});

t.test("bounded work: NADs share the ticks' budget with pods, NADs first", async (t) => {
  const w = world({ podsPerSecond: 100, tickMs: 100 });
  for (let i = 0; i < 15; i++) w.audit.nadWatch.upsert(nadObj('a', `n${i}`, NO_TYPE));
  for (let i = 0; i < 10; i++) w.add(live('a', `p${i}`, 'missing'));
  t.equal(w.audit.pending(), 25);
  w.audit.tick();
  t.equal(w.audit.pending(), 15);
  t.equal(nadsFound(w).length, 10);
  t.equal(w.found().length, 0);
  w.audit.tick();
  t.equal(w.audit.pending(), 5);
  t.notOk(w.audit.complete());
  w.audit.tick();
  t.equal(w.audit.pending(), 0);
  t.ok(w.audit.complete());
  t.equal(nadsFound(w).length, 15);
  t.equal(w.found().length, 10);
});

// --- The documented pace (docs/operating.md): --audit-rate 1,000 a second, in slices of at most
// 2 ms every 20 ms; changes noticed within a second; every pod again every 10 minutes. Each
// default is pinned through a fake clock (the audit's `now`, and the wall clock of a slice). ---

/** The audit as serve builds it, with only the defaults of the pace, a fake clock and 25 pods naming a missing NAD. */
function paced(opts: { sliceMs?: number; onLabels?: () => void } = {}) {
  let now = 1_000_000;
  const nads = new Map<string, Nad>();
  const audit = new BackgroundAudit({
    nads: { get: (ns, name) => nads.get(nadKey(ns, name)), list: () => [...nads.values()], synced: () => true },
    namespaceLabels: () => {
      opts.onLabels?.();
      return {};
    },
    engine: new PolicyEngine({ index: new AddressIndex(), policies: EMPTY_POLICY_SET }),
    config,
    podsUsingNad: (ns, name) => (ns === 'a' && name === 'net' ? Array.from({ length: 25 }, (_, i) => `a/p${i}`) : []),
    ready: () => true,
    now: () => now,
    // 60 s: the count per tick is what these tests pin, not the machine's speed (but for the slice test).
    sliceMs: opts.sliceMs ?? 60_000,
  });
  for (let i = 0; i < 25; i++)
    audit.upsert({ metadata: { namespace: 'a', name: `p${i}`, uid: `u${i}`, annotations: { [NETWORKS]: 'net' } } });
  return {
    audit,
    nads,
    advance: (ms: number) => void (now += ms),
  };
}

t.test('the default rate: 1,000 pods a second in ticks of 20 ms, so 20 pods a tick', async (t) => {
  const w = paced();
  t.equal(w.audit.pending(), 25);
  w.audit.tick();
  t.equal(w.audit.pending(), 5, '20 judged');
  w.audit.tick();
  t.equal(w.audit.pending(), 0);
  t.equal(w.audit.allFindings().length, 25);
});

t.test('the default slice: a tick stops once more than 2 ms of wall time are spent', async (t) => {
  // The wall clock of a slice is performance.now(): a fake one, moved 0.5 ms each time a pod's
  // namespace labels are read (twice per pod judged: whether it is audited, and its judgement).
  const real = performance.now;
  let wall = 0;
  performance.now = () => wall;
  t.teardown(() => void (performance.now = real));
  let judging = false;
  const w = paced({ onLabels: () => void (judging && (wall += 0.5)) });
  // The default slice, not the tests' 60 s.
  const audit = new BackgroundAudit({
    ...(w.audit as unknown as { o: ConstructorParameters<typeof BackgroundAudit>[0] }).o,
    sliceMs: undefined as never,
  });
  for (let i = 0; i < 25; i++)
    audit.upsert({ metadata: { namespace: 'a', name: `p${i}`, uid: `u${i}`, annotations: { [NETWORKS]: 'net' } } });
  judging = true;
  audit.tick();
  t.equal(25 - audit.pending(), 3, 'judged: the first (1 ms), the second (2 ms: not more than 2), the third (3 ms); then stopped');
});

t.test('changes are noticed once a second: a NAD created at 999 ms is not seen, at 1,000 ms it is', async (t) => {
  const w = paced();
  w.audit.drain();
  t.equal(w.audit.allFindings().length, 25, 'the NAD is missing');
  w.nads.set(nadKey('a', 'net'), nad('a', 'net'));
  w.advance(999);
  w.audit.tick();
  t.equal(w.audit.pending(), 0);
  t.equal(w.audit.allFindings().length, 25, 'not noticed within the second');
  w.advance(1);
  w.audit.tick();
  t.equal(w.audit.pending(), 5, 'noticed: the 25 pods that use it queued, 20 judged');
  w.audit.tick();
  t.equal(w.audit.allFindings().length, 0);
});

t.test('every pod is judged again every 10 minutes, not before', async (t) => {
  // Changes are looked for once a second, so each case is one look after the first pass.
  const after = (ms: number): number => {
    const w = paced();
    w.audit.tick();
    w.audit.tick();
    t.equal(w.audit.pending(), 0, 'the first pass');
    w.advance(ms);
    w.audit.tick();
    return w.audit.pending();
  };
  t.equal(after(1000), 0);
  t.equal(after(600_000 - 1), 0, 'nothing queued 1 ms before 10 minutes');
  t.equal(after(600_000), 5, 'at 10 minutes: all 25 queued, 20 judged');
  // And the next pass 10 minutes after that one.
  const w = paced();
  w.audit.tick();
  w.audit.tick();
  w.advance(600_000);
  w.audit.tick();
  w.audit.tick();
  t.equal(w.audit.pending(), 0);
  w.advance(600_000 - 1);
  w.audit.tick();
  t.equal(w.audit.pending(), 0, 'not before 10 minutes after the last pass');
  w.advance(1000);
  w.audit.tick();
  t.equal(w.audit.pending(), 5, 'then again');
});
