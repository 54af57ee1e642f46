// Address claims: names, Lease round trip, and the store against an in-memory Lease API with the
// API server's create/delete semantics (two stores sharing it are two replicas).
import t, { type Test } from 'tap';
import { ClaimStore, claimName, parseClaim, wantedClaims, outcomeFinding, type ClaimHolder } from '../../src/policy/index.js';
import { claimObject } from '../../src/policy/claims.js';
import type { AddressClaim, Action } from '../../src/policy/types.js';
import { FakeLeases } from './fake-leases.js';

const GUID = '00:11:22:33:44:55:66:77';

function claim(pod: string, opts: { value?: string; action?: Action; scope?: 'Network' | 'Cluster'; uid?: string; network?: string } = {}): AddressClaim {
  const network = opts.network ?? 'fabric/ib';
  return {
    kind: 'infiniband-guid',
    value: opts.value ?? GUID,
    scope: `network:${network}`,
    pod: { namespace: 'team', name: pod, uid: opts.uid ?? `uid-${pod}` },
    unique: { policy: 'ib', action: opts.action ?? 'Enforce', scope: opts.scope ?? 'Network', path: 'metadata.annotations[k8s.v1.cni.cncf.io/networks][0].infiniband-guid', label: `GUID ${opts.value ?? GUID}` },
  };
}

/** A replica's store over the shared fake; `live` holds the pods its pod watch sees. */
function replica(t: Test, fake: FakeLeases, live: Set<string>, over: { pendingMs?: number; timeoutMs?: number; current?: () => boolean } = {}) {
  const store = new ClaimStore({
    api: fake.api(),
    transport: fake.transport(),
    live: (h: ClaimHolder) => live.has(`${h.namespace}/${h.name}`),
    livenessCurrent: over.current ?? (() => true),
    pendingMs: over.pendingMs ?? 60_000,
    timeoutMs: over.timeoutMs ?? 1_000,
    backoffMs: 5,
  });
  t.teardown(() => store.stop());
  return store;
}

t.test('names: fixed length, valid object names, one per scope and address', async (t) => {
  const a = claimName('infiniband-guid', 'cluster', GUID);
  t.match(a, /^guid-[0-9a-f]{40}$/);
  t.match(claimName('mac', 'network:a/b', '02:00:00:00:00:01'), /^mac-[0-9a-f]{40}$/);
  t.not(claimName('infiniband-guid', 'network:fabric/ib', GUID), a, 'the scope is part of the name');
  t.equal(claimName('infiniband-guid', 'cluster', GUID), a, 'deterministic: every replica derives the same name');
  const [network] = wantedClaims([claim('p1')]);
  const [cluster] = wantedClaims([claim('p1', { scope: 'Cluster' })]);
  t.equal(network!.scope, 'network:fabric/ib');
  t.equal(cluster!.scope, 'cluster');
  t.same(wantedClaims([{ ...claim('p1'), unique: undefined } as AddressClaim]), [], 'no rule judged it: nothing to claim');
  t.same(wantedClaims([claim('p1', { action: 'Audit' })]), [], 'an Audit rule only observes: no claim');
  t.equal(wantedClaims([claim('p1', { action: 'Warn' })]).length, 1, 'a Warn rule claims');
  t.same(wantedClaims([{ ...claim('p1'), pod: { namespace: 'team', generateName: 'p-' } }]), [], 'no name yet: nothing to claim');
  t.equal(wantedClaims([claim('p1'), claim('p1')]).length, 1, 'one claim per name');
});

t.test('a claim round-trips through its Lease', async (t) => {
  const [w] = wantedClaims([claim('p1')]);
  const lease = claimObject(w!, 'netattach-system', 60, new Date('2026-01-01T00:00:00Z')) as { metadata: Record<string, unknown>; spec: Record<string, unknown> };
  t.same(lease.spec, { holderIdentity: 'Pod team/p1', leaseDurationSeconds: 60, acquireTime: '2026-01-01T00:00:00.000000Z' });
  const back = parseClaim({ ...lease, metadata: { ...lease.metadata, uid: 'u', resourceVersion: '7', creationTimestamp: '2026-01-01T00:00:00Z' } });
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
  t.equal(parseClaim({ metadata: { name: 'x', uid: 'u' } }), undefined, 'not a claim');
  t.equal(parseClaim(null), undefined);
});

t.test('50 concurrent creates of one GUID through two replicas: exactly one wins', async (t) => {
  const fake = new FakeLeases();
  const live = new Set<string>();
  const a = replica(t, fake, live);
  const b = replica(t, fake, live);
  const outcomes = await Promise.all(Array.from({ length: 50 }, (_, i) => (i % 2 ? a : b).claim([claim(`p${i}`)], { dryRun: false })!));
  const results = outcomes.map((o) => o[0]!.result);
  t.equal(results.filter((r) => r === 'won').length, 1);
  t.equal(results.filter((r) => r === 'lost').length, 49);
  t.equal(fake.objects.size, 1);
  const winner = outcomes.findIndex((o) => o[0]!.result === 'won');
  const lost = outcomes.find((o) => o[0]!.result === 'lost')![0]!;
  t.match(outcomeFinding(lost, 'team')!.finding.error.reason, `policy "ib" (uniqueAddresses): GUID ${GUID} is already used by pod team/p${winner} (being created) on network fabric/ib (scope Network)`);
  t.equal(outcomeFinding(lost, 'other')!.finding.error.reason.includes('a pod in another namespace'), true, 'other namespaces are not named');
  live.add(`team/p${winner}`);
  const again = await a.claim([claim('late')], { dryRun: false })!;
  t.match(outcomeFinding(again[0]!, 'team')!.finding.error.reason, `pod team/p${winner} (running)`);
});

t.test('the same pod again (a retry, the other replica) wins without a second object', async (t) => {
  const fake = new FakeLeases();
  const a = replica(t, fake, new Set());
  const b = replica(t, fake, new Set());
  t.equal((await a.claim([claim('p1')], { dryRun: false })!)[0]!.result, 'won');
  t.equal((await b.claim([claim('p1')], { dryRun: false })!)[0]!.result, 'won');
  t.equal((await a.claim([claim('p1')], { dryRun: false })!)[0]!.result, 'won');
  t.equal(fake.objects.size, 1);
  t.equal(a.claim([{ ...claim('p1'), unique: undefined } as AddressClaim], { dryRun: false }), undefined, 'nothing to arbitrate: no promise');
});

t.test('dry run reads, never writes', async (t) => {
  const fake = new FakeLeases();
  const a = replica(t, fake, new Set());
  await a.start();
  t.equal((await a.claim([claim('p1')], { dryRun: true })!)[0]!.result, 'won');
  t.equal(fake.calls.create + fake.calls.delete, 0);
  await a.claim([claim('p1')], { dryRun: false });
  const creates = fake.calls.create;
  const dry = await a.claim([claim('p2')], { dryRun: true })!;
  t.equal(dry[0]!.result, 'lost', 'the claim of another pod is seen');
  t.equal(fake.calls.create, creates, 'and nothing was written');
});

t.test('API server unreachable or silent: unavailable within the budget, never a throw', async (t) => {
  const fake = new FakeLeases();
  const a = replica(t, fake, new Set(), { timeoutMs: 100 });
  fake.down = true;
  const [down] = await a.claim([claim('p1')], { dryRun: false })!;
  t.match(down, { result: 'unavailable', reason: /ECONNREFUSED/ });
  t.match(outcomeFinding(down!, 'team'), { unavailable: true, finding: { action: 'Enforce', error: { reason: /could not be claimed in the API server .*; retry/ } } });
  const [warn] = await a.claim([claim('p2', { action: 'Warn' })], { dryRun: false })!;
  t.match(outcomeFinding(warn!, 'team'), { unavailable: false, finding: { action: 'Warn', error: { reason: /admitted without the check across replicas/ } } });
  fake.down = false;
  fake.frozen = true;
  // AbortSignal.timeout's timer does not hold the process open (the server's sockets do).
  const alive = setInterval(() => {}, 1_000);
  t.teardown(() => clearInterval(alive));
  const started = Date.now();
  const [silent] = await a.claim([claim('p3')], { dryRun: false })!;
  t.match(silent, { result: 'unavailable', reason: 'the API server did not answer within 100 ms' });
  t.ok(Date.now() - started < 5_000, 'bounded');
});

t.test('release on pod end, sweep of claims whose pod never came, take-over of a stale claim', async (t) => {
  const fake = new FakeLeases();
  const live = new Set<string>();
  let current = true;
  const a = replica(t, fake, live, { pendingMs: 1_000, current: () => current });
  await a.start();
  await a.claim([claim('ended')], { dryRun: false });
  await a.claim([claim('never', { value: '00:00:00:00:00:00:00:02' })], { dryRun: false });
  await a.claim([claim('running', { value: '00:00:00:00:00:00:00:03' })], { dryRun: false });
  live.add('team/ended').add('team/running');
  t.equal(a.size(), 3);

  t.equal(await a.releaseHolder({ kind: 'Pod', namespace: 'team', name: 'ended', uid: 'another-incarnation' }), 0, 'another incarnation of the name: not its claim');
  t.equal(await a.releaseHolder({ kind: 'Pod', namespace: 'team', name: 'ended', uid: 'uid-ended' }), 1);
  t.equal(await a.releaseHolder({ kind: 'Pod', namespace: 'team', name: 'ended', uid: 'uid-ended' }), 0, 'idempotent');
  live.delete('team/ended');
  t.equal(fake.objects.size, 2);

  t.equal(await a.sweep(), 0, 'young claims stay: their pods may be being created');
  // Age the remaining claims past the pending bound.
  for (const o of fake.objects.values()) (o.metadata as Record<string, unknown>).creationTimestamp = new Date(Date.now() - 5_000).toISOString();
  await a.stop();
  const b = replica(t, fake, live, { pendingMs: 1_000, current: () => current });
  await b.start();
  current = false;
  t.equal(await b.sweep(), 0, 'nothing is swept while the pod watch is not current');
  current = true;
  t.equal(await b.sweep(), 1, 'the claim of the pod that never came is swept');
  t.same([...fake.objects.values()].map((o) => (o.metadata.annotations as Record<string, string>)['netattach.io/holder']), ['team/running']);
  t.equal(await b.sweep(), 0, 'idempotent');

  // A stale claim (old, holder gone) is taken over by a new pod instead of denying it.
  fake.put(claimObject(wantedClaims([claim('gone', { value: '00:00:00:00:00:00:00:09' })])[0]!, 'netattach-system', 1, new Date()), 5_000);
  const [taken] = await b.claim([claim('new', { value: '00:00:00:00:00:00:00:09' })], { dryRun: false })!;
  t.equal(taken!.result, 'won');
  t.equal(fake.objects.get(claimName('infiniband-guid', 'network:fabric/ib', '00:00:00:00:00:00:00:09'))!.metadata.annotations && (fake.objects.get(claimName('infiniband-guid', 'network:fabric/ib', '00:00:00:00:00:00:00:09'))!.metadata.annotations as Record<string, string>)['netattach.io/holder'], 'team/new');
});

t.test('1,000 pods created and deleted through two replicas: the claim count equals the live count', async (t) => {
  const fake = new FakeLeases();
  const live = new Set<string>();
  const replicas = [replica(t, fake, live, { pendingMs: 1_000 }), replica(t, fake, live, { pendingMs: 1_000 })];
  await Promise.all(replicas.map((r) => r.start()));
  const guid = (i: number): string => `00:00:00:00:00:00:${((i >> 8) & 0xff).toString(16).padStart(2, '0')}:${(i & 0xff).toString(16).padStart(2, '0')}`;
  for (let i = 0; i < 1000; i += 50) {
    await Promise.all(
      Array.from({ length: 50 }, (_, j) => i + j).map(async (n) => {
        const [o] = await replicas[n % 2]!.claim([claim(`p${n}`, { value: guid(n) })], { dryRun: false })!;
        if (o!.result !== 'won') throw new Error(`p${n}: ${o!.result}`);
        if (n % 10 !== 9) live.add(`team/p${n}`); // every tenth pod never comes to exist
      }),
    );
  }
  // The pod watch of both replicas sees each deletion; both release (one finds nothing).
  for (let n = 0; n < 1000; n += 2) {
    if (!live.delete(`team/p${n}`)) continue;
    await Promise.all(replicas.map((r) => r.releaseHolder({ kind: 'Pod', namespace: 'team', name: `p${n}`, uid: `uid-p${n}` })));
  }
  for (const o of fake.objects.values()) (o.metadata as Record<string, unknown>).creationTimestamp = new Date(Date.now() - 5_000).toISOString();
  await Promise.all(replicas.map((r) => r.stop()));
  const sweeper = replica(t, fake, live, { pendingMs: 1_000 });
  await sweeper.start();
  await sweeper.sweep();
  t.equal(fake.objects.size, live.size, `${fake.objects.size} claims for ${live.size} live pods`);
  const holders = new Set([...fake.objects.values()].map((o) => (o.metadata.annotations as Record<string, string>)['netattach.io/holder']));
  t.same([...holders].sort(), [...live].sort(), 'and they are the live pods');
});
