// The address Lease store (src/policy/address-lease-store.ts) through the fake Lease API (fake-leases.ts): the
// documented numbers at their defaults (the 35 s window, 64 addresses a pod, 32 calls in flight and
// 512 waiting, 8 background deletes, 4,096 unconfirmed Leases and 512 a namespace, 1.5 s a Lease,
// 10 s a delete), and each decision an I/O answer leads to: when a Lease is released, swept or
// taken over, and what is reported and logged. The scenarios across replicas are in address-leases.test.ts.
import t, { type Test } from 'tap';
import {
  AddressLeaseStore,
  leaseSweepMs,
  DEFAULT_LEASE_PENDING_MS,
  type LeaseEvent,
  type AddressLeaseStoreOptions,
} from '../../src/policy/address-lease-store.js';
import { leaseName, leaseObject, wantedLeases, type LeaseHolder, type LeaseOutcome } from '../../src/policy/address-leases.js';
import type { HeldAddress } from '../../src/policy/types.js';
import type { KubeTransport, LeaseApi } from '../../src/kube/index.js';
import { FakeLeases, heldMacs as macs, nthMac as mac } from './fake-leases.js';

/** A Pod holder; `null`: without a uid. */
const pod = (name: string, uid: string | null = `uid-${name}`, namespace = 'team'): LeaseHolder => ({
  kind: 'Pod',
  namespace,
  name,
  ...(uid === null ? {} : { uid }),
});
const nameOf = (i: number): string => leaseName('mac', 'network:team/a', mac(i));

interface Setup {
  fake: FakeLeases;
  store: AddressLeaseStore;
  /** Holders whose pod the pod watch shows (`ns/name`), with every address. */
  live: Set<string>;
  events: LeaseEvent[];
  logs: Array<[string, Record<string, unknown>, string]>;
  current: { value: boolean };
}

function setup(
  t: Test,
  over: Omit<Partial<AddressLeaseStoreOptions>, 'api' | 'transport'> & {
    api?: (base: LeaseApi) => LeaseApi;
    transport?: (base: KubeTransport) => KubeTransport;
  } = {},
): Setup {
  const fake = new FakeLeases();
  const live = new Set<string>();
  const events: LeaseEvent[] = [];
  const logs: Setup['logs'] = [];
  const current = { value: true };
  const log = (level: string) => (obj: object, msg: string) => void logs.push([level, obj as Record<string, unknown>, msg]);
  const { api, transport, ...rest } = over;
  const store = new AddressLeaseStore({
    api: api ? api(fake.api()) : fake.api(),
    transport: transport ? transport(fake.transport()) : fake.transport(),
    live: (h) => live.has(`${h.namespace}/${h.name}`),
    livenessCurrent: () => current.value,
    backoffMs: 5,
    logger: { info: log('info'), warn: log('warn'), error: log('error'), debug: log('debug') },
    onEvent: (e) => void events.push(e),
    ...rest,
  });
  t.teardown(() => store.stop());
  return { fake, store, live, events, logs, current };
}

const one = async (s: Setup, claims: HeldAddress[], dryRun = false): Promise<LeaseOutcome> =>
  (await s.store.acquire(claims, { dryRun })!)[0]!;
const count = <T>(xs: T[], x: T): number => xs.filter((y) => y === x).length;

/** Records the delay of every AbortSignal.timeout made while `fn` runs. */
async function timeouts(fn: () => Promise<unknown>): Promise<number[]> {
  const original = AbortSignal.timeout;
  const seen: number[] = [];
  AbortSignal.timeout = (ms: number) => (seen.push(ms), original.call(AbortSignal, ms));
  try {
    await fn();
  } finally {
    AbortSignal.timeout = original;
  }
  return seen;
}

t.test(
  "the sweep period: half the window (17.5 s by default, so a never-created pod's claim goes within 1.5 windows, 52.5 s), at least 500 ms",
  async (t) => {
    t.equal(leaseSweepMs(DEFAULT_LEASE_PENDING_MS), 17_500);
    t.equal(leaseSweepMs(DEFAULT_LEASE_PENDING_MS) + DEFAULT_LEASE_PENDING_MS, 52_500, 'docs/policy.md: deleted within 53 s');
    for (const [pending, sweep] of [
      [1_000, 500],
      [1_001, 500.5],
      [999, 500],
      [60_000, 30_000],
    ] as const)
      t.equal(leaseSweepMs(pending), sweep, `window ${pending} ms`);
  },
);

t.test("the defaults: a 35 s window, written as the Lease's duration; 1.5 s a claim, 10 s a delete", async (t) => {
  t.equal(DEFAULT_LEASE_PENDING_MS, 35_000);
  const s = setup(t);
  const onClaim = await timeouts(() => one(s, macs('web', 1)));
  t.strictSame(onClaim, [1_500], 'one deadline for the request, 1.5 s');
  t.equal((s.fake.objects.get(nameOf(0))!.spec as Record<string, unknown>).leaseDurationSeconds, 35);
  const onRelease = await timeouts(() => s.store.releaseHolder(pod('web')));
  t.strictSame(onRelease, [11_000], 'one deadline for the delete: 10 s, and the tenth during which later deletes share it');
  // The window in whole seconds, rounded up; the request's budget as given.
  for (const [pendingMs, seconds] of [
    [1_000, 1],
    [1_001, 2],
    [1_500, 2],
    [35_000, 35],
  ] as const) {
    const r = setup(t, { pendingMs, timeoutMs: 250, writeTimeoutMs: 300 });
    t.strictSame(await timeouts(() => one(r, macs('web', 1))), [250]);
    t.equal(
      (r.fake.objects.get(nameOf(0))!.spec as Record<string, unknown>).leaseDurationSeconds,
      seconds,
      `${pendingMs} ms: ${seconds} s`,
    );
    t.strictSame(await timeouts(() => r.store.releaseHolder(pod('web'))), [330]);
  }
});

t.test('background deletes started within a tenth of their budget share one deadline; later ones get their own', async (t) => {
  const s = setup(t, { writeTimeoutMs: 60_000 });
  await s.store.start();
  for (let i = 0; i < 5; i++) t.equal((await one(s, macs(`web-${i}`, 1, { from: i }))).result, 'won');
  const made = await timeouts(async () => {
    for (let i = 0; i < 5; i++) t.equal(await s.store.releaseHolder(pod(`web-${i}`)), 1, `web-${i} released`);
  });
  t.strictSame(made, [66_000], 'five releases, one timer');
  t.strictSame(count(s.events, 'released'), 5);
  // A budget shorter than the time since: the next delete gets a deadline of its own.
  const short = setup(t, { writeTimeoutMs: 20 });
  await short.store.start();
  t.equal((await one(short, macs('a', 1))).result, 'won');
  t.equal((await one(short, macs('b', 1, { from: 1 }))).result, 'won');
  const first = await timeouts(() => short.store.releaseHolder(pod('a')));
  await new Promise((r) => setTimeout(r, 10));
  const second = await timeouts(() => short.store.releaseHolder(pod('b')));
  t.strictSame([first, second], [[22], [22]], 'two deadlines, each 20 ms and a tenth');
});

t.test('the window decides at the default: unconfirmed claims block others 35 s, then yield', async (t) => {
  let skew = 0;
  const s = setup(t, { now: () => Date.now() + skew });
  await s.store.start();
  t.equal((await one(s, macs('ghost', 1))).result, 'won');
  const young = await one(s, macs('real', 1));
  t.match(young, { result: 'lost', live: false });
  t.ok(
    young.result === 'lost' && young.yieldsInMs! > 34_000 && young.yieldsInMs! <= 35_000,
    `yields in ${young.result === 'lost' ? young.yieldsInMs : '?'} ms`,
  );
  skew = 34_000;
  t.equal(await s.store.sweep(), 0, '34 s old: kept');
  t.match(await one(s, macs('real', 1)), { result: 'lost' });
  skew = 36_000;
  t.equal((await one(s, macs('real', 1))).result, 'won', '36 s old: taken over');
  t.equal(count(s.events, 'taken-over'), 1);
  t.match(
    s.logs.find(([, , m]) => m === 'took over a stale address claim'),
    ['info', { claim: nameOf(0), from: 'Pod team/ghost', to: 'Pod team/real' }],
  );
});

t.test('per request: the first 64 addresses are claimed, the rest reported once', async (t) => {
  const s = setup(t, { timeoutMs: 10_000 });
  const exact = await s.store.acquire(macs('p64', 64), { dryRun: false })!;
  t.equal(exact.length, 64);
  t.equal(exact.filter((o) => o.result === 'won').length, 64, '64: all claimed, no warning');
  const over = await s.store.acquire(macs('p65', 65, { from: 100 }), { dryRun: false })!;
  t.equal(over.length, 65);
  t.equal(over.filter((o) => o.result === 'won').length, 64);
  t.match(over[64], { result: 'not-claimed', count: 1, limit: 64, wanted: { address: { value: mac(164) } } });
  t.equal(s.fake.calls.create, 128);
  t.equal(count(s.events, 'won'), 128, 'an event per outcome');
  t.equal(count(s.events, 'not-claimed'), 1);
  const few = setup(t, { limits: { perPod: 2 } });
  const out = await few.store.acquire(macs('p', 5), { dryRun: false })!;
  t.strictSame(
    out.map((o) => o.result),
    ['won', 'won', 'not-claimed'],
  );
  t.match(out[2], { count: 3, limit: 2, wanted: { address: { value: mac(2) } } }, 'named by the first address not claimed');
});

t.test('unconfirmed claims: 512 a namespace and 4,096 in all by default; a confirmation frees room', async (t) => {
  const s = setup(t, { timeoutMs: 30_000 });
  const claimPods = async (namespace: string, pods: number, base: number) => {
    for (let p = 0; p < pods; p++) {
      const out = await s.store.acquire(macs(`p${p}`, 64, { namespace, from: base + p * 64 }), { dryRun: false })!;
      if (out.some((o) => o.result !== 'won'))
        throw new Error(`${namespace}/p${p}: ${JSON.stringify(out.find((o) => o.result !== 'won'))}`);
    }
  };
  await claimPods('ns0', 8, 0);
  t.equal(s.store.stats().unconfirmed, 512);
  t.match(await one(s, macs('more', 1, { namespace: 'ns0', from: 100_000 })), {
    result: 'unavailable',
    reason: '512 address claims in namespace ns0 are waiting for their pods to appear (at most 512)',
  });
  for (let n = 1; n < 8; n++) await claimPods(`ns${n}`, 8, n * 1_000);
  t.strictSame(
    s.store.stats(),
    { leases: 4096, unconfirmed: 4096, inFlight: 0, waiting: 0, peakInFlight: 32 },
    '32 calls in flight at most',
  );
  t.match(await one(s, macs('more', 1, { namespace: 'ns8', from: 100_001 })), {
    result: 'unavailable',
    reason: '4096 address claims are waiting for their pods to appear (at most 4096)',
  });
  t.equal(s.fake.objects.size, 4096, 'no Lease written beyond the bounds');
  // ns0/p0's pod appears: its 64 Leases are confirmed.
  s.live.add('ns0/p0');
  s.store.confirm(pod('p0', 'uid-p0', 'ns0'));
  t.equal(s.store.stats().unconfirmed, 4096 - 64);
  t.equal((await one(s, macs('more', 1, { namespace: 'ns8', from: 100_001 }))).result, 'won');
  t.equal((await one(s, macs('more', 1, { namespace: 'ns0', from: 100_002 }))).result, 'won');
});

t.test('calls: 32 in flight, 512 more waiting; beyond them, unavailable at once', async (t) => {
  const s = setup(t, { timeoutMs: 400 });
  s.fake.frozen = true;
  const alive = setInterval(() => {}, 1_000);
  t.teardown(() => clearInterval(alive));
  const all = Array.from(
    { length: 9 },
    (_, n) => s.store.acquire(macs(`p${n}`, 64, { namespace: `ns${n}`, from: n * 100 }), { dryRun: false })!,
  );
  t.strictSame(s.store.stats(), { leases: 0, unconfirmed: 576, inFlight: 32, waiting: 512, peakInFlight: 32 });
  const reasons = (await Promise.all(all)).flat().map((o) => (o.result === 'unavailable' ? o.reason : o.result));
  t.equal(reasons.length, 576);
  t.equal(count(reasons, '32 claim calls in flight and 512 waiting (the bounds)'), 32, 'the calls past 544 are refused at once');
  t.equal(count(reasons, 'won') + count(reasons, 'lost'), 0);
  t.equal(s.fake.peakInFlight, 32);
  t.strictSame(s.store.stats(), { leases: 0, unconfirmed: 0, inFlight: 0, waiting: 0, peakInFlight: 32 }, 'every count given back');
});

t.test('the sweep: at most 8 deletes at once, each swept claim counted, logged and forgotten', async (t) => {
  const s = setup(t, { pendingMs: 1_000 });
  for (let i = 0; i < 20; i++)
    s.fake.put(leaseObject(wantedLeases(macs(`ghost-${i}`, 1, { from: i }))[0]!, s.fake.namespace, 1, new Date()), 5_000);
  await s.store.start();
  t.equal(s.store.size(), 20);
  s.fake.delayMs = 10;
  t.equal(await s.store.sweep(), 20);
  t.equal(s.fake.peakInFlight, 8);
  t.equal(s.fake.objects.size, 0);
  t.equal(s.store.size(), 0);
  t.equal(count(s.events, 'swept'), 20);
  t.match(s.logs.filter(([, , m]) => m === 'swept a stale address claim').length, 20);
  t.match(
    s.logs.find(([, , m]) => m === 'swept a stale address claim'),
    ['info', { claim: /^mac-/, holder: /^Pod team\/ghost-/, address: /^02:00/, scope: 'network:team/a' }],
  );
  t.strictSame(s.store.stats(), { leases: 0, unconfirmed: 0, inFlight: 0, waiting: 0, peakInFlight: 8 });
});

t.test('the sweep runs only when it can judge: synced, the pod watch current, not already running', async (t) => {
  const s = setup(t, { pendingMs: 1_000 });
  s.fake.put(leaseObject(wantedLeases(macs('ghost', 1))[0]!, s.fake.namespace, 1, new Date()), 5_000);
  t.equal(await s.store.sweep(), 0, 'before the first list');
  await s.store.start();
  s.current.value = false;
  t.equal(await s.store.sweep(), 0, 'the pod watch is not current');
  t.equal(s.fake.objects.size, 1);
  s.current.value = true;
  s.fake.delayMs = 20;
  const [first, second] = await Promise.all([s.store.sweep(), s.store.sweep()]);
  t.strictSame([first, second], [1, 0], 'a sweep while one runs does nothing');
  t.equal(s.fake.calls.delete, 1);
  s.fake.put(leaseObject(wantedLeases(macs('ghost2', 1, { from: 1 }))[0]!, s.fake.namespace, 1, new Date()), 5_000);
  t.equal(await s.store.sweep(), 1, 'and the next runs again');
});

t.test('before the first list the sweep deletes nothing, even a stale claim this replica made', async (t) => {
  let skew = 0;
  const s = setup(t, { pendingMs: 1_000, now: () => Date.now() + skew });
  t.equal((await one(s, macs('ghost', 1))).result, 'won');
  t.equal(s.store.size(), 1, 'known from its own create');
  skew = 5_000;
  t.equal(await s.store.sweep(), 0, 'not synced: whether its holder was seen is not known yet');
  t.equal(s.fake.objects.size, 1);
  await s.store.start();
  t.equal(await s.store.sweep(), 1, 'synced: swept');
});

t.test('the sweep judges by holder: a gone holder at once, a live one never, an unconfirmed one past the window', async (t) => {
  let skew = 0;
  const s = setup(t, { now: () => Date.now() + skew });
  await s.store.start();
  for (const name of ['live', 'gone', 'late', 'never'])
    await one(s, macs(name, 1, { from: ['live', 'gone', 'late', 'never'].indexOf(name) }));
  s.live.add('team/live').add('team/gone');
  s.store.confirm(pod('live'));
  s.store.confirm(pod('gone'));
  t.equal(s.store.stats().unconfirmed, 2);
  // `late`'s pod appears without an event for it (a Lease learnt after its pod): the sweep confirms it.
  s.live.add('team/late');
  t.equal(await s.store.sweep(), 0, 'all young or live');
  t.equal(s.store.stats().unconfirmed, 1, 'the sweep caught up the confirmation');
  s.live.delete('team/gone');
  s.live.delete('team/late');
  t.equal(await s.store.sweep(), 2, 'gone holders at once, young as their claims are');
  t.strictSame(
    s.store
      .leases()
      .map((c) => c.holder.name)
      .sort(),
    ['live', 'never'],
  );
  skew = 36_000;
  t.equal(await s.store.sweep(), 1, 'the never-seen one past the window');
  t.strictSame(
    s.store.leases().map((c) => c.holder.name),
    ['live'],
    'a live holder is never swept',
  );
});

t.test('deletes that fail: counted and logged, kept for the next sweep; those that find no slot are logged once', async (t) => {
  let failing = true;
  const s = setup(t, {
    pendingMs: 1_000,
    api: (base) => ({
      ...base,
      delete: (name, pre, signal) =>
        failing ? Promise.resolve({ status: 'failed' as const, reason: 'HTTP 500: boom' }) : base.delete(name, pre, signal),
    }),
  });
  s.fake.put(leaseObject(wantedLeases(macs('ghost', 1))[0]!, s.fake.namespace, 1, new Date()), 5_000);
  await s.store.start();
  t.equal(await s.store.sweep(), 0);
  t.strictSame(s.events, ['release-failed']);
  t.match(s.logs, [['warn', { claim: nameOf(0), err: 'HTTP 500: boom' }, 'could not delete an address claim; the sweep retries']]);
  t.equal(s.store.size(), 1, 'kept');
  failing = false;
  t.equal(await s.store.sweep(), 1);
  t.strictSame(s.events, ['release-failed', 'swept']);

  // The one slot is held by a request's create (frozen): the 3 deletes find no slot within 100 ms.
  const b = setup(t, { pendingMs: 1_000, timeoutMs: 1_000, writeTimeoutMs: 100, limits: { inFlight: 1, background: 1 } });
  for (let i = 0; i < 3; i++)
    b.fake.put(leaseObject(wantedLeases(macs(`g${i}`, 1, { from: i }))[0]!, b.fake.namespace, 1, new Date()), 5_000);
  await b.store.start();
  b.fake.frozen = true;
  const alive = setInterval(() => {}, 1_000);
  t.teardown(() => clearInterval(alive));
  const held = b.store.acquire(macs('web', 1, { from: 9 }), { dryRun: false })!;
  t.equal(await b.store.sweep(), 0);
  t.strictSame(b.events, ['release-failed', 'release-failed', 'release-failed']);
  t.strictSame(
    b.logs,
    [['warn', { claims: 3 }, 'address claim deletes found no free call slot in time; the next sweep retries']],
    'one line for the sweep, none per claim',
  );
  t.match(await held, [{ result: 'unavailable' }]);
  b.fake.frozen = false;
  t.equal(await b.store.sweep(), 3, 'the next sweep deletes them');
  t.equal(b.logs.filter(([, , m]) => m.startsWith('address claim deletes found no free')).length, 1, 'a sweep with no refusal logs none');
});

t.test("release: the holder's claims, by uid when both have one; another replica's delete is not counted", async (t) => {
  const s = setup(t);
  await s.store.start();
  await one(s, macs('web', 1));
  t.equal(await s.store.releaseHolder(pod('web', 'other')), 0, 'another incarnation');
  t.equal(await s.store.releaseHolder({ ...pod('web'), kind: 'VirtualMachineInstance' }), 0, 'another kind');
  t.equal(await s.store.releaseHolder(pod('web', null, 'other')), 0, 'another namespace');
  t.equal(await s.store.releaseHolder(pod('web', null)), 1, "a holder without a uid releases the name's claims");
  t.strictSame(s.events, ['won', 'released']);
  t.match(
    s.logs.find(([, , m]) => m === 'released an address claim'),
    ['debug', { claim: nameOf(0), holder: 'Pod team/web', address: mac(0), scope: 'network:team/a' }],
  );
  t.notOk(
    s.logs.some(([level, , m]) => level !== 'debug' && m === 'released an address claim'),
    'a release is routine: debug, not info',
  );
  // A Lease without a holder uid (written by an older replica) is released by the pod of the name.
  const lease = leaseObject(
    { ...wantedLeases(macs('old', 1, { from: 1 }))[0]!, holder: pod('old', null) },
    s.fake.namespace,
    35,
    new Date(),
  );
  s.fake.put(lease);
  await new Promise((r) => setImmediate(r));
  t.equal(s.store.leases().find((c) => c.holder.name === 'old')?.holder.uid, undefined);
  t.equal(await s.store.releaseHolder(pod('old', 'any')), 1);
  // Deleted meanwhile by another replica (the watch event not here yet): forgotten, not counted.
  await one(s, macs('twice', 1, { from: 2 }));
  s.fake.objects.delete(nameOf(2));
  const before = s.events.length;
  t.equal(await s.store.releaseHolder(pod('twice')), 0);
  t.equal(s.store.size(), 0, 'forgotten');
  t.strictSame(s.events.slice(before), [], 'no event');
  t.equal(s.store.stats().unconfirmed, 0);
});

t.test('release of a claim replaced meanwhile (another uid): kept, not counted', async (t) => {
  const s = setup(t, { api: (base) => ({ ...base, delete: async () => ({ status: 'changed' as const }) }) });
  await s.store.start();
  await one(s, macs('web', 1));
  t.equal(await s.store.releaseHolder(pod('web')), 0);
  t.equal(s.store.size(), 1, 'the watch brings the newer object');
  t.strictSame(s.events, ['won']);
  t.equal(s.store.stats().unconfirmed, 1);
});

t.test('create, read, take over: each answer of the API server', async (t) => {
  type Step = Partial<Record<'create' | 'get' | 'delete', unknown>>;
  /** An API whose answers come from a script, then from the fake. */
  const scripted =
    (script: Step[]) =>
    (base: LeaseApi): LeaseApi => ({
      ...base,
      create: (l, sig) =>
        (script[0]?.create ? Promise.resolve(script[0].create as never) : base.create(l, sig)).finally(
          () => script[0] && delete script[0].create,
        ),
      get: (n, sig) =>
        (script[0]?.get ? Promise.resolve(script[0].get as never) : base.get(n, sig)).finally(() => script[0] && delete script[0].get),
      delete: (n, p, sig) =>
        (script[0]?.delete ? Promise.resolve(script[0].delete as never) : base.delete(n, p, sig)).finally(() => script.shift()),
    });
  const stale = () => leaseObject(wantedLeases(macs('ghost', 1))[0]!, 'netattach-system', 1, new Date());

  const failed = setup(t, { api: scripted([{ create: { status: 'failed', reason: 'HTTP 403: no' } }]) });
  t.match(await one(failed, macs('web', 1)), { result: 'unavailable', reason: 'HTTP 403: no' });
  t.equal(failed.store.stats().unconfirmed, 0, 'the count of a create that failed is given back');

  const absent = setup(t, { api: scripted([{ create: { status: 'exists' }, get: { status: 'absent' }, delete: undefined }]) });
  t.equal((await one(absent, macs('web', 1))).result, 'won', 'deleted between create and read: created again');
  t.equal(absent.fake.calls.create, 1);
  t.equal(absent.store.size(), 1, 'remembered at once');

  const getFailed = setup(t, { api: scripted([{ create: { status: 'exists' }, get: { status: 'failed', reason: 'HTTP 503' } }]) });
  t.match(await one(getFailed, macs('web', 1)), { result: 'unavailable', reason: 'HTTP 503' });

  const garbage = setup(t, {
    api: scripted([{ create: { status: 'exists' }, get: { status: 'found', object: { metadata: { name: 'x' } } } }]),
  });
  t.match(await one(garbage, macs('web', 1)), { result: 'unavailable', reason: `claim ${nameOf(0)} is not a well-formed claim` });

  const delFailed = setup(t, { pendingMs: 1_000, api: scripted([{ delete: { status: 'failed', reason: 'HTTP 500' } }]) });
  delFailed.fake.put(stale(), 5_000);
  t.match(await one(delFailed, macs('web', 1)), { result: 'unavailable', reason: 'HTTP 500' });
  t.equal(delFailed.fake.objects.size, 1);

  const changing = setup(t, {
    pendingMs: 1_000,
    api: scripted([
      { delete: { status: 'changed' } },
      { delete: { status: 'changed' } },
      { delete: { status: 'changed' } },
      { delete: { status: 'changed' } },
    ]),
  });
  changing.fake.put(stale(), 5_000);
  t.match(await one(changing, macs('web', 1)), { result: 'unavailable', reason: `claim ${nameOf(0)} kept changing` });
  t.equal(changing.fake.calls.create, 3, 'three rounds');
  t.strictSame(changing.events, ['unavailable'], 'nothing taken over');

  const once = setup(t, { pendingMs: 1_000, api: scripted([{ delete: { status: 'changed' } }]) });
  once.fake.put(stale(), 5_000);
  t.equal((await one(once, macs('web', 1))).result, 'won', 'changed once: the second round deletes, the third creates');
  t.strictSame(once.events, ['taken-over', 'won']);
  t.match(once.fake.objects.get(nameOf(0))!.metadata.annotations, { 'netattach.io/holder': 'team/web' });

  // Changed twice: the third round deletes the stale Lease but has no round left to create.
  const twice = setup(t, { pendingMs: 1_000, api: scripted([{ delete: { status: 'changed' } }, { delete: { status: 'changed' } }]) });
  twice.fake.put(stale(), 5_000);
  t.match(await one(twice, macs('web', 1)), { result: 'unavailable', reason: `claim ${nameOf(0)} kept changing` });
  t.strictSame(twice.events, ['taken-over', 'unavailable']);
  t.equal(twice.fake.objects.size, 0, 'a retry creates it');

  const gone = setup(t, { pendingMs: 1_000, api: scripted([{ delete: { status: 'absent' } }]) });
  gone.fake.put(stale(), 5_000);
  gone.fake.objects.clear();
  t.equal((await one(gone, macs('web', 1))).result, 'won', 'deleted by someone else meanwhile: created again');
  t.strictSame(gone.events, ['won'], 'not a take-over of ours');
});

t.test('who loses, and what the loser is told', async (t) => {
  let skew = 0;
  const s = setup(t, { now: () => Date.now() + skew });
  await s.store.start();
  await one(s, macs('a', 1));
  await one(s, macs('b', 1, { from: 1 }));
  await one(s, macs('c', 1, { from: 2 }));
  s.live.add('team/a').add('team/b');
  s.store.confirm(pod('a'));
  s.store.confirm(pod('b'));
  s.live.delete('team/b');
  const live = await one(s, macs('x', 1));
  t.strictSame(
    { ...live, wanted: undefined },
    { wanted: undefined, result: 'lost', holder: pod('a'), live: true },
    'a live holder: no time to yield',
  );
  // b is gone but the pod watch is not current: nothing is taken over.
  s.current.value = false;
  t.match(await one(s, macs('x', 1, { from: 1 })), { result: 'lost', holder: pod('b'), live: false, yieldsInMs: 0 });
  t.equal(s.fake.calls.delete, 0);
  skew = 10_000;
  const young = await one(s, macs('x', 1, { from: 2 }));
  t.ok(young.result === 'lost' && young.yieldsInMs! > 24_000 && young.yieldsInMs! <= 25_000, 'unconfirmed: the rest of the window');
  skew = 40_000;
  t.match(
    await one(s, macs('x', 1, { from: 2 })),
    { result: 'lost', yieldsInMs: 0 },
    'past the window but the pod watch is not current: lost',
  );
  s.current.value = true;
  t.equal((await one(s, macs('x', 1, { from: 1 }))).result, 'won', "current again: the gone holder's claim is taken over");
  t.equal((await one(s, macs('x', 1, { from: 2 }))).result, 'won');
  // Dry run: a Lease that would be taken over is won without a write.
  await one(s, macs('y', 1, { from: 3 }));
  skew = 80_000;
  const creates = s.fake.calls.create;
  t.equal((await one(s, macs('z', 1, { from: 3 }), true)).result, 'won');
  t.equal((await one(s, macs('z', 1, { from: 4 }), true)).result, 'won', 'and an address nobody claimed');
  t.equal(s.fake.calls.create, creates, 'nothing written');
  t.equal(s.fake.calls.delete, 2);
});

t.test('the same holder: won without a write, unless an earlier incarnation that does not run', async (t) => {
  const s = setup(t);
  await s.store.start();
  await one(s, macs('web', 1));
  t.equal((await one(s, macs('web', 1))).result, 'won');
  t.equal(s.store.acquire(macs('web', 1, { uid: null }), { dryRun: false }), undefined, 'a request without a uid claims nothing');
  t.equal(s.fake.calls.create, 1);
  s.live.add('team/web');
  t.equal((await one(s, macs('web', 1, { uid: 'second' }))).result, 'won', 'running: the second create fails AlreadyExists');
  t.equal(s.fake.calls.create, 1);
  s.live.delete('team/web');
  t.equal((await one(s, macs('web', 1, { uid: 'second' }))).result, 'won', 'not running: taken over');
  t.equal(s.fake.calls.delete, 1);
  t.match(s.fake.objects.get(nameOf(0))!.metadata.annotations, { 'netattach.io/holder-uid': 'second' });
  t.strictSame(
    s.events.filter((e) => e === 'taken-over'),
    ['taken-over'],
  );
  // A lease without a holder uid is the holder's whatever its uid.
  const b = setup(t);
  b.fake.put(leaseObject({ ...wantedLeases(macs('web', 1))[0]!, holder: pod('web', null) }, b.fake.namespace, 35, new Date()));
  await b.store.start();
  t.equal((await one(b, macs('web', 1, { uid: 'u9' }))).result, 'won');
  t.equal(b.fake.calls.create + b.fake.calls.delete, 0);
});

t.test('the claim watch: a delete of another object of the name is ignored; a newer object replaces the old', async (t) => {
  const s = setup(t);
  await s.store.start();
  await one(s, macs('web', 1));
  const obj = s.fake.objects.get(nameOf(0))!;
  s.fake.emit({ type: 'DELETED', object: { ...obj, metadata: { ...obj.metadata, uid: 'someone-else' } } });
  await new Promise((r) => setImmediate(r));
  t.equal(s.store.size(), 1, 'not this object');
  s.fake.emit({ type: 'DELETED', object: { metadata: { uid: obj.metadata.uid } } });
  await new Promise((r) => setImmediate(r));
  t.equal(s.store.size(), 1, 'no name');
  s.fake.emit({ type: 'ADDED', object: { metadata: { name: 'x', uid: 'y' } } });
  await new Promise((r) => setImmediate(r));
  t.equal(s.store.size(), 1, 'not a claim: ignored');
  // Another replica replaced it (a take-over): the newer object, of another holder, counts once.
  s.fake.emit({
    type: 'MODIFIED',
    object: {
      ...obj,
      metadata: {
        ...obj.metadata,
        uid: 'newer',
        annotations: {
          ...(obj.metadata.annotations as object),
          'netattach.io/holder': 'team/other',
          'netattach.io/holder-uid': 'uid-other',
        },
      },
    },
  });
  await new Promise((r) => setImmediate(r));
  t.strictSame(
    s.store.leases().map((c) => [c.uid, c.holder.name]),
    [['newer', 'other']],
  );
  t.equal(s.store.stats().unconfirmed, 1);
  t.equal(await s.store.releaseHolder(pod('web')), 0, 'the old holder holds nothing');
  s.fake.emit({ type: 'DELETED', object: { ...obj, metadata: { ...obj.metadata, uid: 'newer' } } });
  await new Promise((r) => setImmediate(r));
  t.equal(s.store.size(), 0);
  t.equal(s.store.stats().unconfirmed, 0, 'forgotten with its count');
});

t.test(
  'a claim that looks stale, whose pod the API server shows running (a lagging pod watch): kept, not taken over or swept',
  async (t) => {
    let skew = 0;
    /** What the API server answers of each holder pod (`name`): true runs with the address, false not, undefined cannot tell, 'throw'. */
    const api = new Map<string, boolean | undefined | 'throw'>();
    const asked: string[] = [];
    const s = setup(t, {
      now: () => Date.now() + skew,
      holderRuns: async (h, address) => {
        asked.push(`${h.kind} ${h.namespace}/${h.name} ${h.uid} ${address.kind} ${address.value}`);
        const a = api.get(h.name);
        if (a === 'throw') throw new Error('socket hang up');
        return a;
      },
    });
    await s.store.start();
    t.equal((await one(s, macs('running', 1))).result, 'won');
    skew = 36_000;
    api.set('running', true);
    // The window passed and the watch never showed `running`: the GET says it runs with the address.
    t.match(await one(s, macs('late', 1)), { result: 'lost', live: true, holder: pod('running') }, 'denied as against a running pod');
    t.strictSame(asked, [`Pod team/running uid-running mac ${mac(0)}`], "asked once, with the claim's holder and address");
    t.equal(count(s.events, 'kept-running'), 1);
    t.equal(count(s.events, 'taken-over'), 0);
    t.match(
      s.logs.find(([, , m]) => m.startsWith('an address claim looked stale')),
      ['warn', { claim: nameOf(0), holder: 'Pod team/running' }],
    );
    t.equal(await s.store.sweep(), 0, 'the sweep keeps it too');
    t.equal(count(s.events, 'kept-running'), 2);
    t.match(s.fake.objects.get(nameOf(0))!.metadata.annotations, { 'netattach.io/holder': 'team/running' });
    // Once the API server says it does not run (ended, another uid, not this address), the window decides.
    api.set('running', false);
    t.equal((await one(s, macs('late', 1))).result, 'won', 'taken over');
    t.equal(count(s.events, 'taken-over'), 1);
  },
);

t.test('the lookup cannot tell (an error, undefined, no answer in time): the window decides, as without it', async (t) => {
  for (const answer of ['throw', undefined] as const) {
    let skew = 0;
    const s = setup(t, {
      now: () => Date.now() + skew,
      holderRuns: async () => {
        if (answer === 'throw') throw new Error('HTTP 503');
        return answer;
      },
    });
    await s.store.start();
    await one(s, macs('ghost', 1));
    skew = 36_000;
    t.equal((await one(s, macs('real', 1))).result, 'won', `${answer}: taken over`);
    await one(s, macs('ghost2', 1, { from: 1 }));
    skew = 80_000;
    t.equal(await s.store.sweep(), 2, `${answer}: both never-seen claims swept past the window`);
    t.equal(s.store.size(), 0);
    t.equal(count(s.events, 'kept-running'), 0);
  }
});

t.test('the lookup is asked only of claims never confirmed, held by a pod, of another holder', async (t) => {
  let skew = 0;
  const asked: string[] = [];
  const s = setup(t, {
    now: () => Date.now() + skew,
    holderRuns: async (h) => (asked.push(h.name), true),
  });
  await s.store.start();
  // A Lease whose pod the watch saw, then no longer: gone, swept at once without asking.
  await one(s, macs('gone', 1));
  s.live.add('team/gone');
  s.store.confirm(pod('gone'));
  s.live.delete('team/gone');
  t.equal(await s.store.sweep(), 1, 'gone: swept');
  // A young unconfirmed Lease: not stale, nothing to ask.
  await one(s, macs('young', 1, { from: 1 }));
  t.equal(await s.store.sweep(), 0);
  t.match(await one(s, macs('other', 1, { from: 1 })), { result: 'lost', live: false });
  // The same name, another uid (an earlier incarnation): not asked (its create fails as AlreadyExists if it runs).
  skew = 36_000;
  t.equal(
    (await one(s, [{ ...macs('young', 1, { from: 1 })[0]!, pod: { namespace: 'team', name: 'young', uid: 'uid-young-2' } }])).result,
    'won',
  );
  t.strictSame(asked, [], 'no lookup so far');
  // A VMI's claim (its pods share the address): confirmed through any of its pods, never looked up.
  const owner = { key: 'uid-vm', label: 'VM team/vm', namespace: 'team', kind: 'VirtualMachineInstance', name: 'vm' };
  const vmPod = (name: string, uid: string): HeldAddress[] =>
    macs(name, 1, { from: 7, uid }).map((c) => ({ ...c, pod: { ...c.pod, owner } }));
  t.equal((await one(s, vmPod('launcher-1', 'uid-l1'))).result, 'won');
  skew = 80_000;
  t.equal((await one(s, macs('thief', 1, { from: 7 }))).result, 'won', 'taken over past the window');
  t.strictSame(asked, [], 'a VMI holder is not looked up');
  // And a pod's Lease is: the store asks.
  await one(s, macs('p', 1, { from: 9 }));
  skew = 120_000;
  t.match(await one(s, macs('q', 1, { from: 9 })), { result: 'lost', live: true });
  t.strictSame(asked, ['p']);
});

// Found by the part's first run (2 December, the decisions: release, sweep, take-over).
t.test("create, read: the holder's own claim, made by the other replica, is won without a delete", async (t) => {
  const s = setup(t);
  // Not started: this replica has not seen the Lease the other one wrote for the same pod.
  const theirs = s.fake.put(leaseObject(wantedLeases(macs('web', 1))[0]!, s.fake.namespace, 35, new Date()));
  t.equal((await one(s, macs('web', 1))).result, 'won');
  t.strictSame(s.fake.calls, { create: 1, get: 1, delete: 0 }, 'read, not taken over');
  t.equal(s.fake.objects.get(nameOf(0))!.metadata.uid, theirs.metadata.uid, 'the same object');
  t.strictSame(s.events, ['won']);
});

/**
 * A store whose one background slot is held by the release of `held`, whose delete hangs until its
 * budget ends, while the Lease of `ghost` is stale (confirmed 5 s ago): a take-over's calls must
 * not wait behind it. Budgets of seconds: the take-over needs a few calls, and the machine may be loaded.
 */
async function withStuckRelease(t: Test, options: Parameters<typeof setup>[1] & { timeoutMs: number; writeTimeoutMs: number }) {
  const stuck = nameOf(1);
  const s = setup(t, {
    pendingMs: 1_000,
    limits: { inFlight: 4, background: 1 },
    ...options,
    api: (base) => ({
      ...base,
      delete: (name, pre, signal) =>
        name === stuck
          ? new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason), { once: true }))
          : base.delete(name, pre, signal),
    }),
  });
  const alive = setInterval(() => {}, 1_000);
  t.teardown(() => clearInterval(alive));
  s.fake.put(leaseObject(wantedLeases(macs('ghost', 1))[0]!, s.fake.namespace, 1, new Date()), 5_000);
  s.fake.put(leaseObject(wantedLeases(macs('held', 1, { from: 1 }))[0]!, s.fake.namespace, 1, new Date()));
  await s.store.start();
  const release = s.store.releaseHolder(pod('held'));
  await new Promise((r) => setImmediate(r));
  t.equal(s.store.stats().inFlight, 1, 'the release holds the background slot');
  return { s, release };
}

t.test("a take-over deletes on the request's priority: it does not wait behind releases and sweeps", async (t) => {
  const { s, release } = await withStuckRelease(t, { timeoutMs: 3_000, writeTimeoutMs: 4_000 });
  const won = await one(s, macs('web', 1));
  t.strictSame({ ...won, wanted: undefined }, { wanted: undefined, result: 'won' });
  t.strictSame(s.events, ['taken-over', 'won']);
  t.equal(await release, 0);
});

t.test('a take-over forgets the stale claim at once, also when its last round has no create left', async (t) => {
  let skew = 0;
  let changes = 2;
  const s = setup(t, {
    pendingMs: 1_000,
    now: () => Date.now() + skew,
    api: (base) => ({
      ...base,
      delete: (name, pre, signal) => (changes-- > 0 ? Promise.resolve({ status: 'changed' as const }) : base.delete(name, pre, signal)),
    }),
  });
  // Not started (no watch to bring the DELETED): only this replica's own create made it known.
  t.equal((await one(s, macs('ghost', 1))).result, 'won');
  t.strictSame(s.store.stats().unconfirmed, 1);
  skew = 5_000;
  t.match(await one(s, macs('web', 1)), { result: 'unavailable', reason: `claim ${nameOf(0)} kept changing` });
  t.equal(s.fake.objects.size, 0, 'deleted in the third round');
  t.equal(s.store.size(), 0, 'and forgotten');
  t.equal(s.store.stats().unconfirmed, 0, 'with its count');
});

// Found by the whole file's run (2 December): the Lease watch, confirmation and relists, the
// optional hooks, the priorities of the holder lookups, and the bounds on listeners and memory.

/** The fake's read side, recording each list and watch; `relist` ends the watch as a 410 Gone does (its resourceVersion too old), and resolves once the list that follows is in. */
function relisting(base: KubeTransport) {
  const reads: Array<{ verb: 'list' | 'watch'; path: string; labelSelector: string | undefined; accept: string | undefined }> = [];
  let lists = 0;
  let end: (() => void) | undefined;
  const transport: KubeTransport = {
    ...base,
    getJson: async (path, query, accept, signal) => {
      reads.push({ verb: 'list', path, labelSelector: query.labelSelector, accept });
      const page = await base.getJson(path, query, accept, signal);
      lists++;
      return page;
    },
    watch: (path, query, accept, onEvent, signal, onOpen) => {
      reads.push({ verb: 'watch', path, labelSelector: query.labelSelector, accept });
      const mine = new AbortController();
      signal.addEventListener('abort', () => mine.abort(), { once: true });
      end = () => (onEvent({ type: 'ERROR', object: { code: 410 } }), mine.abort());
      return base.watch(path, query, accept, onEvent, mine.signal, onOpen);
    },
  };
  const settle = () => new Promise((r) => setImmediate(r));
  const relist = async (): Promise<void> => {
    while (!end) await settle(); // the watch opens after the first list
    const before = lists;
    const stop = end;
    end = undefined;
    stop();
    while (lists === before || !end) await settle(); // listed, and watching again
  };
  return { transport, reads, relist };
}

t.test('the claim watch reads the claim Leases only, as JSON; a store needs a transport or credentials', async (t) => {
  let r: ReturnType<typeof relisting> | undefined;
  const s = setup(t, { transport: (base) => (r = relisting(base)).transport });
  await s.store.start();
  await r!.relist();
  const path = s.fake.api().path;
  const read = { path, labelSelector: 'netattach.io/address-claim=true', accept: 'application/json' };
  t.strictSame(r!.reads, [
    { verb: 'list', ...read },
    { verb: 'watch', ...read },
    { verb: 'list', ...read },
    { verb: 'watch', ...read },
  ]);
  t.throws(() => new AddressLeaseStore({ api: s.fake.api(), live: () => false, livenessCurrent: () => true }), {
    message: 'AddressLeaseStore needs cluster credentials or a transport',
  });
});

t.test('a failing claim list is logged and retried; without a logger it is retried too', async (t) => {
  const alive = setInterval(() => {}, 1_000); // the retry's timer is unref'd
  t.teardown(() => clearInterval(alive));
  for (const logged of [true, false]) {
    const s = setup(t, logged ? {} : { logger: undefined });
    s.fake.down = true;
    const started = s.store.start();
    while (!s.store.lastFailure()) await new Promise((r) => setImmediate(r));
    s.fake.down = false;
    await started;
    t.ok(s.store.synced(), `${logged ? 'with' : 'without'} a logger: synced after the retry`);
    if (logged) t.strictSame(s.logs[0], ['warn', { err: 'connect ECONNREFUSED' }, 'address claim watch failed; retrying']);
  }
});

t.test('the claim watch: a DELETED object without metadata changes nothing', async (t) => {
  const s = setup(t);
  await s.store.start();
  await one(s, macs('web', 1));
  t.doesNotThrow(() => s.fake.emit({ type: 'DELETED', object: {} }));
  t.equal(s.store.size(), 1);
});

t.test(
  'a relist: claims deleted meanwhile are forgotten, a confirmed claim stays confirmed, an unconfirmed one stays unconfirmed',
  async (t) => {
    let r: ReturnType<typeof relisting> | undefined;
    const s = setup(t, { transport: (base) => (r = relisting(base)).transport });
    await s.store.start();
    await one(s, macs('gone', 1));
    await one(s, macs('young', 1, { from: 1 }));
    await one(s, macs('vanished', 1, { from: 2 }));
    s.live.add('team/gone');
    s.store.confirm(pod('gone'));
    s.live.delete('team/gone');
    t.equal(s.store.stats().unconfirmed, 2, 'young and vanished');
    // Deleted while the watch was away: the relist does not list it.
    s.fake.objects.delete(nameOf(2));
    await r!.relist();
    t.strictSame(
      s.store
        .leases()
        .map((c) => c.holder.name)
        .sort(),
      ['gone', 'young'],
      'the vanished claim is forgotten',
    );
    t.equal(s.store.stats().unconfirmed, 1, "young only: gone's confirmation kept, vanished's count given back");
    t.equal(await s.store.sweep(), 1, 'gone: swept at once; young: within its window');
    t.strictSame(
      s.store.leases().map((c) => c.holder.name),
      ['young'],
    );
    t.equal(s.store.stats().unconfirmed, 1);
    t.equal(await s.store.releaseHolder(pod('young')), 1);
    t.equal(s.store.stats().unconfirmed, 0);
  },
);

t.test("confirm: only the holder's claims whose address its pod uses, each once; a confirmed claim released leaves no count", async (t) => {
  const s = setup(t);
  await s.store.start();
  t.doesNotThrow(() => s.store.confirm(pod('nobody')), 'a holder without claims: nothing to do');
  await one(s, macs('web', 1));
  s.store.confirm(pod('web'));
  t.equal(s.store.stats().unconfirmed, 1, 'its pod does not use the address (yet): not confirmed');
  s.live.add('team/web');
  s.store.confirm(pod('web'));
  s.store.confirm(pod('web'));
  t.equal(s.store.stats().unconfirmed, 0, 'confirmed once, however many pod events');
  t.equal(await s.store.releaseHolder(pod('web')), 1);
  t.equal(s.store.stats().unconfirmed, 0, 'a confirmed claim was not counted: none to give back');
  // A Lease made while its holder's pod already uses the address: confirmed as it is learnt.
  s.live.add('team/early');
  await one(s, macs('early', 1, { from: 1 }));
  t.equal(s.store.stats().unconfirmed, 0);
  s.live.delete('team/early');
  t.equal(await s.store.sweep(), 1, 'its holder gone: swept at once, young as it is');
  t.equal(s.store.stats().unconfirmed, 0);
});

t.test('a create whose answer is not a well-formed claim: won, learnt from the watch later', async (t) => {
  const s = setup(t, {
    api: (base) => ({ ...base, create: async () => ({ status: 'created' as const, object: { metadata: { name: 'x' } } as never }) }),
  });
  t.equal((await one(s, macs('web', 1))).result, 'won');
  t.equal(s.store.size(), 0);
  t.equal(s.store.stats().unconfirmed, 0);
});

t.test('without a logger or onEvent: a failed delete, a sweep without slots and a lookup that keeps a claim all complete', async (t) => {
  const bare = { logger: undefined, onEvent: undefined };
  const failing = setup(t, {
    ...bare,
    api: (base) => ({ ...base, delete: async () => ({ status: 'failed' as const, reason: 'HTTP 500' }) }),
  });
  await failing.store.start();
  await one(failing, macs('web', 1));
  t.equal(await failing.store.releaseHolder(pod('web')), 0);
  t.equal(failing.store.size(), 1);

  const busy = setup(t, { ...bare, pendingMs: 1_000, timeoutMs: 1_000, writeTimeoutMs: 100, limits: { inFlight: 1, background: 1 } });
  busy.fake.put(leaseObject(wantedLeases(macs('ghost', 1))[0]!, busy.fake.namespace, 1, new Date()), 5_000);
  await busy.store.start();
  busy.fake.frozen = true;
  const alive = setInterval(() => {}, 1_000);
  t.teardown(() => clearInterval(alive));
  const held = busy.store.acquire(macs('web', 1, { from: 9 }), { dryRun: false })!;
  t.equal(await busy.store.sweep(), 0, 'no slot: nothing deleted');
  await held;

  let skew = 0;
  const kept = setup(t, { ...bare, now: () => Date.now() + skew, holderRuns: async () => true });
  await kept.store.start();
  await one(kept, macs('running', 1));
  skew = 36_000;
  t.match(await one(kept, macs('late', 1)), { result: 'lost', live: true });
  t.equal(await kept.store.sweep(), 0);

  // A logger without debug: a release (logged at debug) still counts.
  const plain = setup(t, { logger: { info: () => {}, warn: () => {}, error: () => {} } });
  await plain.store.start();
  await one(plain, macs('web', 1));
  t.equal(await plain.store.releaseHolder(pod('web')), 1);
  t.strictSame(plain.events, ['won', 'released']);
});

t.test("holder lookups run at their caller's priority: the sweep's as background calls, a take-over's as the request's", async (t) => {
  let running = 0;
  let peak = 0;
  const s = setup(t, {
    pendingMs: 1_000,
    holderRuns: async () => {
      peak = Math.max(peak, ++running);
      await new Promise((r) => setTimeout(r, 10));
      running--;
      return false;
    },
  });
  for (let i = 0; i < 20; i++)
    s.fake.put(leaseObject(wantedLeases(macs(`ghost-${i}`, 1, { from: i }))[0]!, s.fake.namespace, 1, new Date()), 5_000);
  await s.store.start();
  t.equal(await s.store.sweep(), 20);
  t.equal(peak, 8, "the sweep's lookups share the 8 background slots");

  // The one background slot held by a release that hangs: a take-over's lookup does not wait for it.
  const { s: r, release } = await withStuckRelease(t, { timeoutMs: 2_000, writeTimeoutMs: 2_500, holderRuns: async () => true });
  t.match(await one(r, macs('web', 1)), { result: 'lost', live: true, holder: pod('ghost') }, 'the lookup ran: its pod runs');
  t.strictSame(r.events, ['kept-running', 'lost']);
  t.equal(await release, 0);
});

// The request's deadline gets a limit of its own (4 an address and 10), so its waiters count; the
// releases' shared deadline is unlimited, as an AbortSignal's default already is on Node 26.
t.test('many calls on one deadline: no MaxListenersExceededWarning, for a request of 64 addresses or 30 releases at once', async (t) => {
  const warnings: string[] = [];
  const onWarning = (w: Error) => void warnings.push(`${w.name}: ${w.message}`);
  process.on('warning', onWarning);
  t.teardown(() => void process.off('warning', onWarning));
  const s = setup(t, { timeoutMs: 30_000 });
  await s.store.start();
  s.fake.delayMs = 5;
  const out = await s.store.acquire(macs('wide', 64), { dryRun: false })!;
  t.equal(out.filter((o) => o.result === 'won').length, 64);
  t.equal(s.store.stats().peakInFlight, 32, 'half of them waited for a slot, listening on the deadline');
  for (let i = 0; i < 30; i++) await one(s, macs(`p${i}`, 1, { from: 100 + i }));
  const released = await Promise.all(Array.from({ length: 30 }, (_, i) => s.store.releaseHolder(pod(`p${i}`))));
  t.equal(released.filter((n) => n === 1).length, 30, '8 at once, the others waiting on the shared deadline');
  await new Promise((r) => setImmediate(r));
  t.strictSame(
    warnings.filter((w) => w.startsWith('MaxListenersExceededWarning')),
    [],
  );
});

t.test('background writes share a deadline while less than a tenth of the budget has passed, not at a tenth', async (t) => {
  let clock = 1_000;
  const original = Object.getOwnPropertyDescriptor(performance, 'now');
  Object.defineProperty(performance, 'now', { value: () => clock, configurable: true, writable: true });
  t.teardown(() =>
    original ? Object.defineProperty(performance, 'now', original) : delete (performance as unknown as Record<string, unknown>).now,
  );
  const s = setup(t, { writeTimeoutMs: 1_000 });
  await s.store.start();
  for (let i = 0; i < 3; i++) await one(s, macs(`p${i}`, 1, { from: i }));
  const made: number[][] = [];
  for (const [i, at] of [
    [0, 1_000],
    [1, 1_099.9],
    [2, 1_100],
  ] as const) {
    clock = at;
    made.push(await timeouts(() => s.store.releaseHolder(pod(`p${i}`))));
  }
  t.strictSame(made, [[1_100], [], [1_100]], 'shared until 100 ms later; at 100 ms, a new deadline');
});

t.test('the maps a store keeps for its claims hold nothing once the claims are gone', async (t) => {
  // Memory, not behaviour: no public answer shows these maps (a namespace or holder entry left
  // empty reads as absent), but one left per namespace or holder ever seen would grow without bound.
  const s = setup(t);
  await s.store.start();
  for (let i = 0; i < 4; i++) await one(s, macs(`p${i}`, 2, { namespace: `ns${i}`, from: 10 * i }));
  const inner = s.store as unknown as { byHolder: Map<string, Set<string>>; unconfirmed: Map<string, number> };
  t.equal(inner.byHolder.size, 4);
  t.strictSame(
    [...inner.unconfirmed],
    [
      ['ns0', 2],
      ['ns1', 2],
      ['ns2', 2],
      ['ns3', 2],
    ],
  );
  for (let i = 0; i < 4; i++) t.equal(await s.store.releaseHolder(pod(`p${i}`, `uid-p${i}`, `ns${i}`)), 2);
  t.equal(inner.byHolder.size, 0, 'no holder entry left');
  t.equal(inner.unconfirmed.size, 0, 'no namespace entry left');
});

// Lease objects are only created and deleted, so one uid is one holder's Lease: coming again (a
// MODIFIED event, a relist, the GET after a conflicting create) it keeps the confirmation it had.
/** A Lease of `web`, confirmed with its pod, whose pod then goes before the pod watch's DELETED reaches the Leases. */
async function confirmedThenGone(t: Test) {
  const s = setup(t);
  await s.store.start();
  await one(s, macs('web', 1));
  s.live.add('team/web');
  s.store.confirm(pod('web'));
  t.equal(s.store.stats().unconfirmed, 0, 'confirmed');
  s.live.delete('team/web');
  return { s, obj: s.fake.objects.get(nameOf(0))! };
}

t.test('a confirmed claim whose object comes again in a MODIFIED event stays confirmed: its gone holder is swept at once', async (t) => {
  const { s, obj } = await confirmedThenGone(t);
  s.fake.emit({ type: 'MODIFIED', object: obj });
  await new Promise((r) => setImmediate(r));
  t.equal(s.store.stats().unconfirmed, 0, 'still confirmed (it counted as unconfirmed again before)');
  t.equal(await s.store.sweep(), 1, 'swept at once, not after the 35 s window');
  t.equal(s.store.size(), 0);
});

t.test('a confirmed claim read again by the GET after a conflicting create stays confirmed: its gone holder is taken over', async (t) => {
  const { s } = await confirmedThenGone(t);
  t.match(await one(s, macs('other', 1)), { result: 'won' }, 'taken over at once');
  t.strictSame(s.events.slice(-2), ['taken-over', 'won']);
  t.strictSame(
    s.store.leases().map((c) => c.holder.name),
    ['other'],
  );
});

t.test('a claim object whose holder was changed by hand (same uid) starts unconfirmed', async (t) => {
  const { s, obj } = await confirmedThenGone(t);
  const edited = {
    ...obj,
    metadata: {
      ...obj.metadata,
      annotations: { ...(obj.metadata.annotations as object), 'netattach.io/holder': 'team/other', 'netattach.io/holder-uid': 'uid-other' },
    },
  };
  s.fake.emit({ type: 'MODIFIED', object: edited });
  await new Promise((r) => setImmediate(r));
  t.strictSame(
    s.store.leases().map((c) => c.holder.name),
    ['other'],
  );
  t.equal(s.store.stats().unconfirmed, 1, 'the new holder is not confirmed by the old one');
  t.equal(await s.store.sweep(), 0, 'young: kept for the window');
});

t.test('a new object of the claim (another uid), even of the same holder name, starts unconfirmed', async (t) => {
  // Deleted and created again (a pod of that name admitted anew) while this replica's watch saw only
  // the newer object: the new incarnation has not been seen with the address yet.
  const { s, obj } = await confirmedThenGone(t);
  s.fake.emit({ type: 'MODIFIED', object: { ...obj, metadata: { ...obj.metadata, uid: 'newer' } } });
  await new Promise((r) => setImmediate(r));
  t.strictSame(
    s.store.leases().map((c) => [c.uid, c.holder.name]),
    [['newer', 'web']],
  );
  t.equal(s.store.stats().unconfirmed, 1, 'not confirmed by the object it replaced');
  t.equal(await s.store.sweep(), 0, 'young: kept for the window');
});
