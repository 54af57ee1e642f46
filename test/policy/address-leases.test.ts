// Address Leases: names, Lease round trip, and the store against an in-memory Lease API with the
// API server's create/delete semantics (two stores sharing it are two replicas).
import t, { type Test } from 'tap';
import {
  AddressIndex,
  AddressLeaseStore,
  leaseName,
  parseLease,
  wantedLeases,
  outcomeFinding,
  type LeaseHolder,
} from '../../src/policy/index.js';
import * as leases from '../../src/policy/address-leases.js';
import type { AddressLeaseLimits } from '../../src/policy/address-lease-store.js';
import type { HeldAddress, AddressKind, Action } from '../../src/policy/types.js';
import { FakeLeases, heldMacs as manyMacs, nthMac as mac } from './fake-leases.js';

const GUID = '00:11:22:33:44:55:66:77';

function claim(
  pod: string,
  opts: { value?: string; action?: Action; scope?: 'Network' | 'Cluster'; uid?: string; network?: string } = {},
): HeldAddress {
  const network = opts.network ?? 'fabric/ib';
  return {
    kind: 'infiniband-guid',
    value: opts.value ?? GUID,
    scope: `network:${network}`,
    pod: { namespace: 'team', name: pod, uid: opts.uid ?? `uid-${pod}` },
    unique: {
      policy: 'ib',
      action: opts.action ?? 'Enforce',
      scope: opts.scope ?? 'Network',
      path: 'metadata.annotations[k8s.v1.cni.cncf.io/networks][0].infiniband-guid',
      label: `GUID ${opts.value ?? GUID}`,
    },
  };
}

interface ReplicaOptions {
  pendingMs?: number;
  timeoutMs?: number;
  current?: () => boolean;
  limits?: Partial<AddressLeaseLimits>;
  now?: () => number;
  /** Liveness from a real index (uid and address aware, as serve wires it) instead of `live`. */
  index?: AddressIndex;
}

const stores = new WeakMap<Set<string>, AddressLeaseStore[]>();

/** A replica's store over the shared fake; `live` holds the pods its pod watch sees (`ns/name`). */
function replica(t: Test, fake: FakeLeases, live: Set<string>, over: ReplicaOptions = {}) {
  const index = over.index;
  const store = new AddressLeaseStore({
    api: fake.api(),
    transport: fake.transport(),
    // On the source before issue 24 `live` got the holder only: the index's name check then.
    live: index
      ? (h: LeaseHolder, a?: { kind: AddressKind; value: string }) =>
          a ? index.heldBy(a.kind, a.value, h) : index.hasPod(h.namespace, h.name)
      : (h: LeaseHolder) => live.has(`${h.namespace}/${h.name}`),
    livenessCurrent: over.current ?? (() => true),
    pendingMs: over.pendingMs ?? 60_000,
    timeoutMs: over.timeoutMs ?? 1_000,
    backoffMs: 5,
    ...(over.limits ? { limits: over.limits } : {}),
    ...(over.now ? { now: over.now } : {}),
  });
  t.teardown(() => store.stop());
  stores.set(live, [...(stores.get(live) ?? []), store]);
  return store;
}

/** A pod appears in every replica's pod watch (`team/<name>`): its Leases are confirmed. */
function appear(live: Set<string>, name: string, uid = `uid-${name}`): void {
  live.add(`team/${name}`);
  for (const s of stores.get(live) ?? []) s.confirm?.({ kind: 'Pod', namespace: 'team', name, uid });
}

t.test('names: fixed length, valid object names, one per scope and address', async (t) => {
  const a = leaseName('infiniband-guid', 'cluster', GUID);
  t.match(a, /^guid-[0-9a-f]{40}$/);
  t.match(leaseName('mac', 'network:a/b', '02:00:00:00:00:01'), /^mac-[0-9a-f]{40}$/);
  t.not(leaseName('infiniband-guid', 'network:fabric/ib', GUID), a, 'the scope is part of the name');
  t.equal(leaseName('infiniband-guid', 'cluster', GUID), a, 'deterministic: every replica derives the same name');
  const [network] = wantedLeases([claim('p1')]);
  const [cluster] = wantedLeases([claim('p1', { scope: 'Cluster' })]);
  t.equal(network!.scope, 'network:fabric/ib');
  t.equal(cluster!.scope, 'cluster');
  t.same(wantedLeases([{ ...claim('p1'), unique: undefined } as HeldAddress]), [], 'no rule judged it: nothing to claim');
  t.same(wantedLeases([claim('p1', { action: 'Audit' })]), [], 'an Audit rule only observes: no claim');
  t.equal(wantedLeases([claim('p1', { action: 'Warn' })]).length, 1, 'a Warn rule claims');
  t.same(wantedLeases([{ ...claim('p1'), pod: { namespace: 'team', generateName: 'p-' } }]), [], 'no name yet: nothing to claim');
  t.equal(wantedLeases([claim('p1'), claim('p1')]).length, 1, 'one claim per name');
});

t.test('a claim round-trips through its Lease', async (t) => {
  const [w] = wantedLeases([claim('p1')]);
  const lease = leases.leaseObject(w!, 'netattach-system', 60, new Date('2026-01-01T00:00:00Z')) as {
    metadata: Record<string, unknown>;
    spec: Record<string, unknown>;
  };
  t.same(lease.spec, { holderIdentity: 'Pod team/p1', leaseDurationSeconds: 60, acquireTime: '2026-01-01T00:00:00.000000Z' });
  const back = parseLease({
    ...lease,
    metadata: { ...lease.metadata, uid: 'u', resourceVersion: '7', creationTimestamp: '2026-01-01T00:00:00Z' },
  });
  t.same(back, {
    name: w!.name,
    uid: 'u',
    resourceVersion: '7',
    kind: 'infiniband-guid',
    address: GUID,
    scope: 'network:fabric/ib',
    holder: { kind: 'Pod', namespace: 'team', name: 'p1', uid: 'uid-p1' },
    created: Date.parse('2026-01-01T00:00:00Z'),
  });
  t.equal(parseLease({ metadata: { name: 'x', uid: 'u' } }), undefined, 'not a claim');
  t.equal(parseLease(null), undefined);
});

t.test('50 concurrent creates of one GUID through two replicas: exactly one wins', async (t) => {
  const fake = new FakeLeases();
  const live = new Set<string>();
  const a = replica(t, fake, live);
  const b = replica(t, fake, live);
  const outcomes = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 ? a : b).acquire([claim(`p${i}`)], { dryRun: false })!));
  const results = outcomes.map((o) => o[0]!.result);
  t.equal(results.filter((r) => r === 'won').length, 1);
  t.equal(results.filter((r) => r === 'lost').length, 49);
  t.equal(fake.objects.size, 1);
  const winner = outcomes.findIndex((o) => o[0]!.result === 'won');
  const lost = outcomes.find((o) => o[0]!.result === 'lost')![0]!;
  t.match(
    outcomeFinding(lost, 'team')!.finding.error.reason,
    `policy "ib" (uniqueAddresses): GUID ${GUID} is already used by pod team/p${winner} (being created) on network fabric/ib (scope Network)`,
  );
  t.equal(
    outcomeFinding(lost, 'other')!.finding.error.reason.includes('a pod in another namespace'),
    true,
    'other namespaces are not named',
  );
  live.add(`team/p${winner}`);
  const again = await a.acquire([claim('late')], { dryRun: false })!;
  t.match(outcomeFinding(again[0]!, 'team')!.finding.error.reason, `pod team/p${winner} (running)`);
});

t.test('the same pod again (a retry, the other replica) wins without a second object', async (t) => {
  const fake = new FakeLeases();
  const a = replica(t, fake, new Set());
  const b = replica(t, fake, new Set());
  t.equal((await a.acquire([claim('p1')], { dryRun: false })!)[0]!.result, 'won');
  t.equal((await b.acquire([claim('p1')], { dryRun: false })!)[0]!.result, 'won');
  t.equal((await a.acquire([claim('p1')], { dryRun: false })!)[0]!.result, 'won');
  t.equal(fake.objects.size, 1);
  t.equal(
    a.acquire([{ ...claim('p1'), unique: undefined } as HeldAddress], { dryRun: false }),
    undefined,
    'nothing to arbitrate: no promise',
  );
});

t.test('dry run reads, never writes', async (t) => {
  const fake = new FakeLeases();
  const a = replica(t, fake, new Set());
  await a.start();
  t.equal((await a.acquire([claim('p1')], { dryRun: true })!)[0]!.result, 'won');
  t.equal(fake.calls.create + fake.calls.delete, 0);
  await a.acquire([claim('p1')], { dryRun: false });
  const creates = fake.calls.create;
  const dry = await a.acquire([claim('p2')], { dryRun: true })!;
  t.equal(dry[0]!.result, 'lost', 'the claim of another pod is seen');
  t.equal(fake.calls.create, creates, 'and nothing was written');
});

t.test('API server unreachable or silent: unavailable within the budget, never a throw', async (t) => {
  const fake = new FakeLeases();
  const a = replica(t, fake, new Set(), { timeoutMs: 100 });
  fake.down = true;
  const [down] = await a.acquire([claim('p1')], { dryRun: false })!;
  t.match(down, { result: 'unavailable', reason: /ECONNREFUSED/ });
  t.match(outcomeFinding(down!, 'team'), {
    unavailable: true,
    finding: { action: 'Enforce', error: { reason: /could not be claimed in the API server .*; retry/ } },
  });
  const [warn] = await a.acquire([claim('p2', { action: 'Warn' })], { dryRun: false })!;
  t.match(outcomeFinding(warn!, 'team'), {
    unavailable: false,
    finding: { action: 'Warn', error: { reason: /admitted without the check across replicas/ } },
  });
  fake.down = false;
  fake.frozen = true;
  // AbortSignal.timeout's timer does not hold the process open (the server's sockets do).
  const alive = setInterval(() => {}, 1_000);
  t.teardown(() => clearInterval(alive));
  const started = Date.now();
  const [silent] = await a.acquire([claim('p3')], { dryRun: false })!;
  t.match(silent, { result: 'unavailable', reason: 'the API server did not answer within 100 ms' });
  t.ok(Date.now() - started < 5_000, 'bounded');
});

t.test('release on pod end, sweep of claims whose pod never came, take-over of a stale claim', async (t) => {
  const fake = new FakeLeases();
  const live = new Set<string>();
  let current = true;
  const a = replica(t, fake, live, { pendingMs: 1_000, current: () => current });
  await a.start();
  await a.acquire([claim('ended')], { dryRun: false });
  await a.acquire([claim('never', { value: '00:00:00:00:00:00:00:02' })], { dryRun: false });
  await a.acquire([claim('running', { value: '00:00:00:00:00:00:00:03' })], { dryRun: false });
  live.add('team/ended').add('team/running');
  t.equal(a.size(), 3);

  t.equal(
    await a.releaseHolder({ kind: 'Pod', namespace: 'team', name: 'ended', uid: 'another-incarnation' }),
    0,
    'another incarnation of the name: not its claim',
  );
  t.equal(await a.releaseHolder({ kind: 'Pod', namespace: 'team', name: 'ended', uid: 'uid-ended' }), 1);
  t.equal(await a.releaseHolder({ kind: 'Pod', namespace: 'team', name: 'ended', uid: 'uid-ended' }), 0, 'idempotent');
  live.delete('team/ended');
  t.equal(fake.objects.size, 2);

  t.equal(await a.sweep(), 0, 'young claims stay: their pods may be being created');
  // Age the remaining Leases past the pending bound.
  for (const o of fake.objects.values())
    (o.metadata as Record<string, unknown>).creationTimestamp = new Date(Date.now() - 5_000).toISOString();
  await a.stop();
  const b = replica(t, fake, live, { pendingMs: 1_000, current: () => current });
  await b.start();
  current = false;
  t.equal(await b.sweep(), 0, 'nothing is swept while the pod watch is not current');
  current = true;
  t.equal(await b.sweep(), 1, 'the claim of the pod that never came is swept');
  t.same(
    [...fake.objects.values()].map((o) => (o.metadata.annotations as Record<string, string>)['netattach.io/holder']),
    ['team/running'],
  );
  t.equal(await b.sweep(), 0, 'idempotent');

  // A stale Lease (old, holder gone) is taken over by a new pod instead of denying it.
  fake.put(
    leases.leaseObject(wantedLeases([claim('gone', { value: '00:00:00:00:00:00:00:09' })])[0]!, 'netattach-system', 1, new Date()),
    5_000,
  );
  const [taken] = await b.acquire([claim('new', { value: '00:00:00:00:00:00:00:09' })], { dryRun: false })!;
  t.equal(taken!.result, 'won');
  t.equal(
    fake.objects.get(leaseName('infiniband-guid', 'network:fabric/ib', '00:00:00:00:00:00:00:09'))!.metadata.annotations &&
      (
        fake.objects.get(leaseName('infiniband-guid', 'network:fabric/ib', '00:00:00:00:00:00:00:09'))!.metadata.annotations as Record<
          string,
          string
        >
      )['netattach.io/holder'],
    'team/new',
  );
});

t.test('1,000 pods created and deleted through two replicas: the claim count equals the live count', async (t) => {
  const fake = new FakeLeases();
  const live = new Set<string>();
  const replicas = [replica(t, fake, live, { pendingMs: 1_000 }), replica(t, fake, live, { pendingMs: 1_000 })];
  await Promise.all(replicas.map((r) => r.start()));
  const guid = (i: number): string =>
    `00:00:00:00:00:00:${((i >> 8) & 0xff).toString(16).padStart(2, '0')}:${(i & 0xff).toString(16).padStart(2, '0')}`;
  for (let i = 0; i < 1000; i += 50) {
    await Promise.all(
      Array.from({ length: 50 }, (_, j) => i + j).map(async (n) => {
        const [o] = await replicas[n % 2]!.acquire([claim(`p${n}`, { value: guid(n) })], { dryRun: false })!;
        if (o!.result !== 'won') throw new Error(`p${n}: ${o!.result}`);
        if (n % 10 !== 9) appear(live, `p${n}`); // every tenth pod never comes to exist
      }),
    );
  }
  // The pod watch of both replicas sees each deletion; both release (one finds nothing).
  for (let n = 0; n < 1000; n += 2) {
    if (!live.delete(`team/p${n}`)) continue;
    await Promise.all(replicas.map((r) => r.releaseHolder({ kind: 'Pod', namespace: 'team', name: `p${n}`, uid: `uid-p${n}` })));
  }
  for (const o of fake.objects.values())
    (o.metadata as Record<string, unknown>).creationTimestamp = new Date(Date.now() - 5_000).toISOString();
  await Promise.all(replicas.map((r) => r.stop()));
  const sweeper = replica(t, fake, live, { pendingMs: 1_000 });
  await sweeper.start();
  await sweeper.sweep();
  t.equal(fake.objects.size, live.size, `${fake.objects.size} claims for ${live.size} live pods`);
  const holders = new Set([...fake.objects.values()].map((o) => (o.metadata.annotations as Record<string, string>)['netattach.io/holder']));
  t.same([...holders].sort(), [...live].sort(), 'and they are the live pods');
});

// ---- Issue 24: bounded state, Leases confirmed by their holder, keyed by uid ----------------

t.test('leaseIsStale: a gone holder at once, an unseen one only past the window, a live one never', async (t) => {
  // Recipe (issue 30): `now - c.created >= pendingMs * 2` instead of `> pendingMs` must fail here.
  const window = 10_000;
  const c = { created: 1_000_000 } as leases.StoredLease;
  const cases: Array<[leases.HolderState, number, boolean]> = [
    ['unconfirmed', 0, false],
    ['unconfirmed', window, false],
    ['unconfirmed', window + 1, true],
    ['unconfirmed', window * 2 - 1, true],
    ['gone', 0, true],
    ['live', window * 100, false],
  ];
  for (const [state, age, stale] of cases)
    t.equal(leases.leaseIsStale(c, state, c.created + age, window), stale, `${state}, ${age} ms old: ${stale ? 'stale' : 'kept'}`);
  t.equal(leases.yieldsIn(c, c.created + 4_000, window), 6_000);
  t.equal(leases.yieldsIn(c, c.created + 40_000, window), 0);
});

t.test('sameHolder compares the kind: a VMI and a pod of one name are two holders', async (t) => {
  // Recipe (issue 30): sameHolder ignoring the holder's kind must fail here.
  const pod: LeaseHolder = { kind: 'Pod', namespace: 'team', name: 'vm1', uid: 'u1' };
  const vmi: LeaseHolder = { kind: 'VirtualMachineInstance', namespace: 'team', name: 'vm1', uid: 'u1' };
  t.notOk(leases.sameHolder(pod, vmi));
  t.notOk(leases.sameHolder(pod, { ...pod, namespace: 'other' }));
  t.notOk(leases.sameHolder(pod, { ...pod, name: 'vm2' }));
  t.ok(leases.sameHolder(pod, { ...pod, uid: 'u2' }), "the uid is the callers' to compare");
  // In the store: a running VMI's claim is not won by a pod that happens to bear its name.
  const fake = new FakeLeases();
  const live = new Set<string>(['team/vm1']);
  const a = replica(t, fake, live);
  const vmClaim = {
    ...claim('virt-launcher-vm1-x'),
    pod: {
      namespace: 'team',
      name: 'virt-launcher-vm1-x',
      uid: 'p1',
      owner: { key: 'u1', label: 'VM team/vm1', namespace: 'team', kind: 'VirtualMachineInstance', name: 'vm1' },
    },
  };
  t.equal((await a.acquire([vmClaim], { dryRun: false })!)[0]!.result, 'won');
  const [o] = await a.acquire([{ ...claim('vm1'), pod: { namespace: 'team', name: 'vm1', uid: 'u1' } }], { dryRun: false })!;
  t.equal(o!.result, 'lost', "the pod named vm1 does not hold the VM's GUID");
});

t.test('finding 4: one forged review of 1,000 MACs writes at most 64 Leases, at most `inFlight` at once', async (t) => {
  const fake = new FakeLeases();
  fake.delayMs = 5;
  const a = replica(t, fake, new Set(), { limits: { inFlight: 8 }, timeoutMs: 10_000 });
  const outcomes = await a.acquire(manyMacs('ghost-1', 1_000), { dryRun: false })!;
  t.equal(fake.calls.create, 64, 'the first 64 addresses are claimed');
  t.equal(fake.objects.size, 64);
  t.ok(fake.peakInFlight <= 8, `${fake.peakInFlight} calls in flight at most (bound 8)`);
  t.equal(outcomes.filter((o) => o.result === 'won').length, 64);
  const rest = outcomes.filter((o) => o.result === 'not-claimed');
  t.equal(rest.length, 1, 'one outcome for the rest, not 936');
  t.match(rest[0], { result: 'not-claimed', count: 936, limit: 64 });
  const f = outcomeFinding(rest[0]!, 'team')!;
  t.equal(f.unavailable, false);
  t.equal(f.finding.action, 'Warn', 'never a denial: those addresses were judged against the running pods');
  t.match(f.finding.error, {
    type: 'Too many',
    path: 'metadata.annotations[k8s.v1.cni.cncf.io/networks][64].mac',
    reason: /936 addresses from here on were judged against running pods only, not claimed across replicas \(at most 64 per pod are\)/,
  });
});

t.test('finding 4: calls that find no slot before their deadline, or no room to wait, are unavailable', async (t) => {
  const fake = new FakeLeases();
  fake.frozen = true;
  const alive = setInterval(() => {}, 1_000);
  t.teardown(() => clearInterval(alive));
  const a = replica(t, fake, new Set(), { limits: { inFlight: 2, waiting: 3 }, timeoutMs: 200 });
  const outcomes = await a.acquire(manyMacs('ghost-1', 10), { dryRun: false })!;
  t.equal(fake.peakInFlight, 2, 'two calls reached the API server');
  const reasons = outcomes.map((o) => (o.result === 'unavailable' ? o.reason : o.result));
  t.equal(reasons.filter((r) => /2 claim calls in flight and 3 waiting \(the bounds\)/.test(r)).length, 5, 'five refused at once');
  t.equal(
    reasons.filter((r) => /no free slot among the 2 claim calls in flight before the deadline/.test(r)).length,
    3,
    'three waited until the deadline',
  );
  t.equal(reasons.filter((r) => /did not answer within 200 ms/.test(r)).length, 2);
  t.match(outcomeFinding(outcomes[9]!, 'team'), {
    unavailable: true,
    finding: { error: { reason: /could not be claimed in the API server \(2 claim calls in flight.*\); retry/ } },
  });
  t.same(a.stats().inFlight, 0, 'every slot given back');
  fake.frozen = false;
  t.equal((await a.acquire(manyMacs('real', 1, { from: 500 }), { dryRun: false })!)[0]!.result, 'won', 'and the next request is served');
});

t.test('finding 4: claims not confirmed are bounded per namespace and in all; confirmation frees room', async (t) => {
  const fake = new FakeLeases();
  const live = new Set<string>();
  const index = new AddressIndex();
  const a = replica(t, fake, live, { index, limits: { unconfirmedPerNamespace: 3, unconfirmed: 5 } });
  const one = async (pod: string, i: number, namespace = 'team') =>
    (await a.acquire(manyMacs(pod, 1, { namespace, from: i }), { dryRun: false })!)[0]!;
  for (let i = 0; i < 3; i++) t.equal((await one(`ghost-${i}`, i)).result, 'won');
  t.match(await one('ghost-3', 3), {
    result: 'unavailable',
    reason: '3 address claims in namespace team are waiting for their pods to appear (at most 3)',
  });
  t.equal((await one('other-0', 10, 'other')).result, 'won', 'another namespace is not affected by the first');
  t.equal((await one('other-1', 11, 'other')).result, 'won');
  t.match(await one('third-0', 20, 'third'), {
    result: 'unavailable',
    reason: '5 address claims are waiting for their pods to appear (at most 5)',
  });
  t.equal(fake.objects.size, 5);
  // ghost-0's pod appears with its MAC: its Lease is confirmed and no longer counts.
  index.setPod({ namespace: 'team', name: 'ghost-0', uid: 'uid-ghost-0' }, [{ kind: 'mac', value: mac(0), network: 'team/a' }]);
  a.confirm?.({ kind: 'Pod', namespace: 'team', name: 'ghost-0', uid: 'uid-ghost-0' });
  t.equal(a.stats().unconfirmed, 4);
  t.equal((await one('ghost-3', 3)).result, 'won', 'room again');
});

t.test('finding 4: a claim whose pod never appears blocks others for the window only, then yields', async (t) => {
  const fake = new FakeLeases();
  const index = new AddressIndex();
  let skew = 0;
  const a = replica(t, fake, new Set(), { index, pendingMs: 35_000, now: () => Date.now() + skew });
  await a.start();
  t.equal((await a.acquire(manyMacs('ghost-1', 1), { dryRun: false })!)[0]!.result, 'won', 'a forged review claims');
  skew = 5_000;
  const [early] = await a.acquire(manyMacs('real', 1), { dryRun: false })!;
  t.match(early, { result: 'lost', live: false });
  t.match(
    outcomeFinding(early!, 'team')!.finding.error.reason,
    /already used by pod team\/ghost-1 \(being created\) on network team\/a \(scope Network\); unless that pod appears, its claim yields in 3\d s$/,
  );
  skew = 36_000;
  const [late] = await a.acquire(manyMacs('real', 1), { dryRun: false })!;
  t.equal(late!.result, 'won', 'past the window the real pod takes the address over, without waiting for the sweep');
  t.equal(fake.objects.size, 1);
  t.match([...fake.objects.values()][0]!.metadata.annotations, {
    'netattach.io/holder': 'team/real',
    'netattach.io/holder-uid': 'uid-real',
  });
});

t.test('finding 5: a claim is confirmed by its holder using the address, by uid; the sweep removes the rest', async (t) => {
  const fake = new FakeLeases();
  const live = new Set<string>();
  const index = new AddressIndex();
  let skew = 0;
  const a = replica(t, fake, live, { index, pendingMs: 35_000, now: () => Date.now() + skew });
  await a.start();
  // A running pod team/web (uid U1) with MAC 0, claimed when it was created.
  t.equal((await a.acquire(manyMacs('web', 1, { uid: 'U1' }), { dryRun: false })!)[0]!.result, 'won');
  index.setPod({ namespace: 'team', name: 'web', uid: 'U1' }, [{ kind: 'mac', value: mac(0), network: 'team/a' }]);
  a.confirm?.({ kind: 'Pod', namespace: 'team', name: 'web', uid: 'U1' });
  // Forged: "web" again under another uid (a create of an existing name fails AlreadyExists after
  // admission), claiming MAC 1; and "web" with its own uid claiming MAC 2, which web does not use.
  t.equal((await a.acquire(manyMacs('web', 1, { uid: 'U2', from: 1 }), { dryRun: false })!)[0]!.result, 'won');
  t.equal((await a.acquire(manyMacs('web', 1, { uid: 'U1', from: 2 }), { dryRun: false })!)[0]!.result, 'won');
  t.equal(fake.objects.size, 3);
  t.equal(a.stats().unconfirmed, 2, 'the running pod confirms only its own address, under its own uid');
  skew = 36_000;
  t.equal(await a.sweep(), 2, 'past the window both are swept although a pod named web runs');
  t.same(
    [...fake.objects.values()].map((o) => (o.metadata.annotations as Record<string, string>)['netattach.io/address']),
    [mac(0)],
    'web keeps its own claim',
  );
  // The pod's end releases its Lease by uid; a Lease made for another uid under its name is not its.
  t.equal((await a.acquire(manyMacs('web', 1, { uid: 'U3', from: 5 }), { dryRun: false })!)[0]!.result, 'won');
  index.removePod('team', 'web');
  t.equal(await a.releaseHolder({ kind: 'Pod', namespace: 'team', name: 'web', uid: 'U1' }), 1);
  t.equal(fake.objects.size, 1, 'the U3 claim stays until it yields or is swept');
});

t.test('finding 5: a pod seen with the address and then gone frees it at once (a StatefulSet pod recreated)', async (t) => {
  const fake = new FakeLeases();
  const live = new Set<string>();
  const index = new AddressIndex();
  const a = replica(t, fake, live, { index, pendingMs: 35_000 });
  await a.start();
  t.equal((await a.acquire(manyMacs('db-0', 1, { uid: 'old' }), { dryRun: false })!)[0]!.result, 'won');
  index.setPod({ namespace: 'team', name: 'db-0', uid: 'old' }, [{ kind: 'mac', value: mac(0), network: 'team/a' }]);
  a.confirm?.({ kind: 'Pod', namespace: 'team', name: 'db-0', uid: 'old' });
  const [running] = await a.acquire(manyMacs('db-0', 1, { uid: 'new' }), { dryRun: false })!;
  t.equal(running!.result, 'won', 'a second create of a running name is admitted without a write (it fails AlreadyExists)');
  t.equal(fake.calls.create, 1);
  index.removePod('team', 'db-0'); // the release has not happened yet (the watch event is on its way)
  t.equal(
    (await a.acquire(manyMacs('db-0', 1, { uid: 'new' }), { dryRun: false })!)[0]!.result,
    'won',
    'the next incarnation takes the claim over at once',
  );
  t.match([...fake.objects.values()][0]!.metadata.annotations, { 'netattach.io/holder-uid': 'new' });
  t.equal(
    (
      await a.acquire(
        manyMacs('ghost', 1, { from: 7 }).map((c) => ({ ...c, pod: { namespace: 'team', name: 'ghost' } })),
        { dryRun: false },
      )
    )?.length ?? 0,
    0,
    "a review without a uid (not from the apiserver's validating call) claims nothing",
  );
});

t.test(
  "a create refused after netattach's call and retried under the same name (new uid) takes its unconfirmed claim over at once",
  async (t) => {
    const fake = new FakeLeases();
    const live = new Set<string>();
    const index = new AddressIndex();
    const a = replica(t, fake, live, { index, pendingMs: 35_000 });
    await a.start();
    // web-0 (uid first) is admitted and takes a Lease on MAC 0; another webhook or quota then refuses the
    // create, so no pod appears. The StatefulSet retries at once: web-0 again, uid second.
    t.equal((await a.acquire(manyMacs('web-0', 1, { uid: 'first' }), { dryRun: false })!)[0]!.result, 'won');
    const [retry] = await a.acquire(manyMacs('web-0', 1, { uid: 'second' }), { dryRun: false })!;
    t.equal(retry!.result, 'won', 'not denied for the confirmation window by its own earlier attempt');
    t.equal(fake.objects.size, 1);
    t.match([...fake.objects.values()][0]!.metadata.annotations, { 'netattach.io/holder-uid': 'second' });
    // Another pod is still kept off the address by the retried pod's young claim.
    t.match((await a.acquire(manyMacs('other', 1), { dryRun: false })!)[0], { result: 'lost' });
  },
);

t.test('the call gate: requests first, a guaranteed share for releases and sweeps, refusals as data', async (t) => {
  const { LeaseWriteGate, GateRefused } = await import('../../src/policy/lease-write-gate.js');
  const gate = new LeaseWriteGate({ inFlight: 3, background: 2, backgroundGuaranteed: 1, waiting: 2 });
  const never = new AbortController().signal;
  const release: Array<() => void> = [];
  const hold = () => new Promise<void>((r) => release.push(r));
  const started: string[] = [];
  const run = (p: 'request' | 'background', name: string) => gate.run(p, never, () => (started.push(name), hold()));
  const jobs = [
    run('request', 'r1'),
    run('request', 'r2'),
    run('request', 'r3'),
    run('background', 'b1'),
    run('request', 'r4'),
    run('request', 'r5'),
  ];
  const refused = await run('request', 'r6').catch((err: unknown) => err);
  t.ok(refused instanceof GateRefused, 'a third waiting request is refused at once');
  t.same(started, ['r1', 'r2', 'r3'], 'three in flight');
  release.shift()!();
  await new Promise((r) => setImmediate(r));
  t.same(started.slice(3), ['b1'], 'the guaranteed background share goes first while requests wait');
  release.shift()!();
  await new Promise((r) => setImmediate(r));
  t.same(started.slice(4), ['r4'], 'then the requests');
  const late = new AbortController();
  const timedOut = gate.run('request', late.signal, async () => 'never').catch((err: unknown) => err);
  late.abort();
  t.ok((await timedOut) instanceof GateRefused, 'a waiting request whose deadline passes is refused');
  while (release.length > 0 || gate.stats().inFlight > 0) {
    release.shift()?.();
    await new Promise((r) => setImmediate(r));
  }
  await Promise.all(jobs);
  t.same(gate.stats(), { inFlight: 0, waiting: 0, peak: 3 }, 'every slot given back; never more than three');
});
