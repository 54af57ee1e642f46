import t from 'tap';
import { setTimeout as sleep } from 'node:timers/promises';
import { AddressIndex, PolicyEngine, policySet, type AddressClaim } from '../../src/policy/index.js';
import { input, policies, policyYaml } from './helpers.js';

const mac = (value: string, network = 'ns/a') => ({ kind: 'mac' as const, value, network });
const claim = (value: string, pod: AddressClaim['pod'], scope = 'network:ns/a'): AddressClaim => ({ kind: 'mac', value, scope, pod });
const other = { namespace: 'ns', name: 'other', uid: 'u-other' };

t.test('live pods: set, replace, remove, scopes', async (t) => {
  const i = new AddressIndex();
  i.setPod({ namespace: 'ns', name: 'p', uid: 'u1' }, [mac('02:00:00:00:00:01'), mac('02:00:00:00:00:02', 'ns/b')]);
  t.equal(i.conflicts('mac', '02:00:00:00:00:01', 'ns/a', 'Network', other).length, 1);
  t.equal(i.conflicts('mac', '02:00:00:00:00:01', 'ns/b', 'Network', other).length, 0);
  t.equal(i.conflicts('mac', '02:00:00:00:00:01', 'ns/b', 'Cluster', other).length, 1);
  t.equal(i.conflicts('infiniband-guid', '02:00:00:00:00:01', 'ns/a', 'Cluster', other).length, 0, 'kinds are separate');
  i.setPod({ namespace: 'ns', name: 'p', uid: 'u1' }, [mac('02:00:00:00:00:03')]);
  t.equal(i.conflicts('mac', '02:00:00:00:00:01', 'ns/a', 'Cluster', other).length, 0, 'a changed annotation releases the old address');
  i.setPod({ namespace: 'ns', name: 'q', uid: 'u2' }, [mac('02:00:00:00:00:03')]);
  t.equal(i.conflicts('mac', '02:00:00:00:00:03', 'ns/a', 'Network', other).length, 2, 'two holders');
  i.removePod('ns', 'p');
  t.same(i.conflicts('mac', '02:00:00:00:00:03', 'ns/a', 'Network', other).map((h) => h.pod), ['ns/q']);
  t.same(i.stats(), { pods: 1, addresses: 1, reservations: 0 });
});

t.test('resync removes pods not listed again', async (t) => {
  const i = new AddressIndex();
  i.setPod({ namespace: 'ns', name: 'gone', uid: 'u1' }, [mac('02:00:00:00:00:01')]);
  i.setPod({ namespace: 'ns', name: 'stays', uid: 'u2' }, [mac('02:00:00:00:00:02')]);
  i.beginResync();
  i.setPod({ namespace: 'ns', name: 'stays', uid: 'u2' }, [mac('02:00:00:00:00:02')]);
  i.endResync();
  t.same(i.stats(), { pods: 1, addresses: 1, reservations: 0 });
});

t.test('reservations: conflict, expire after the TTL, confirmed by the watch', async (t) => {
  let now = 1000;
  const i = new AddressIndex({ reservationTtlMs: 30_000, now: () => now });
  i.reserve([claim('02:00:00:00:00:01', { namespace: 'ns', name: 'new', uid: 'u-new' })]);
  const h = i.conflicts('mac', '02:00:00:00:00:01', 'ns/a', 'Network', other);
  t.equal(h.length, 1);
  t.equal(h[0]!.expires, 31_000);
  t.equal(i.conflicts('mac', '02:00:00:00:00:01', 'ns/a', 'Network', { namespace: 'ns', name: 'new' }).length, 0, 'not with itself');
  now = 31_001;
  t.equal(i.conflicts('mac', '02:00:00:00:00:01', 'ns/a', 'Network', other).length, 0, 'expired');
  t.equal(i.stats().reservations, 0);

  i.reserve([claim('02:00:00:00:00:02', { namespace: 'ns', generateName: 'web-', uid: 'u-gen' })]);
  i.setPod({ namespace: 'ns', name: 'web-x1', uid: 'u-gen' }, [mac('02:00:00:00:00:02')]);
  t.equal(i.stats().reservations, 0, 'confirmed by uid');
  t.equal(i.conflicts('mac', '02:00:00:00:00:02', 'ns/a', 'Network', other).length, 1, 'the live pod holds it now');

  i.reserve([claim('02:00:00:00:00:03', { namespace: 'ns', name: 'n1' }, 'cluster')]);
  t.equal(i.conflicts('mac', '02:00:00:00:00:03', 'ns/zzz', 'Network', other).length, 1, 'a claim of unknown network conflicts in every scope');
  i.setPod({ namespace: 'ns', name: 'n1' }, []);
  t.equal(i.stats().reservations, 0, 'confirmed by name');
  i.reserve([claim('02:00:00:00:00:04', { namespace: 'ns', name: 'n2' })]);
  now += 60_000;
  i.sweep();
  t.equal(i.stats().reservations, 0, 'sweep drops expired reservations');
});

// The server's pipeline: resolve NADs (await), then evaluate and reserve with no await between.
async function admit(engine: PolicyEngine, index: AddressIndex, name: string, reserveLate: boolean): Promise<boolean> {
  await sleep(Math.floor(Math.random() * 5));
  const result = engine.evaluate(input('[{"name":"ib","infiniband-guid":"00:11:22:33:44:55:66:77"}]', { pod: { name, uid: `uid-${name}` } }));
  const allowed = !result.findings.some((f) => f.action === 'Enforce');
  if (!allowed) return false;
  if (reserveLate) await sleep(1); // the mistake the pipeline avoids: yielding before reserving
  index.reserve(result.claims);
  return true;
}

t.test('race: 50 concurrent admissions of one GUID through one replica, exactly one wins', async (t) => {
  const set = policySet(policies(policyYaml('ib', 'rules:\n  uniqueAddresses: {infiniband-guid: Cluster}')));
  for (const reserveLate of [false, true]) {
    const index = new AddressIndex();
    const engine = new PolicyEngine({ policies: set, index });
    const results = await Promise.all(Array.from({ length: 50 }, (_, n) => admit(engine, index, `pod-${n}`, reserveLate)));
    const winners = results.filter(Boolean).length;
    if (reserveLate) t.ok(winners > 1, `control: yielding between evaluate and reserve lets ${winners} win`);
    else t.equal(winners, 1, 'synchronous evaluate + reserve');
  }
});

t.test('mutate then validate of one pod: never a conflict with itself', async (t) => {
  const set = policySet(policies(policyYaml('u', 'rules:\n  uniqueAddresses: {mac: Network}')));
  const index = new AddressIndex();
  const engine = new PolicyEngine({ policies: set, index });
  const ann = '[{"name":"a","mac":"02:00:00:00:00:01"}]';
  const admit = (pod: { name?: string; generateName?: string; uid?: string }): boolean => {
    const r = engine.evaluate(input(ann, { pod }));
    const ok = !r.findings.some((f) => f.action === 'Enforce');
    if (ok) index.reserve(r.claims);
    return ok;
  };
  // generateName: the mutating call has no identity, claims nothing; the validating call judges.
  t.ok(admit({ generateName: 'web-' }), 'mutate');
  t.ok(admit({ generateName: 'web-' }), 'mutate reinvoked');
  t.equal(index.stats().reservations, 0);
  t.ok(admit({ generateName: 'web-', name: 'web-x1', uid: 'u1' }), 'validate');
  t.notOk(admit({ generateName: 'web-', name: 'web-x2', uid: 'u2' }), 'a second replica with the same MAC is denied');
  // A named pod: mutate reserves by name, validate (now with a uid) is the same pod.
  const ann2 = '[{"name":"a","mac":"02:00:00:00:00:02"}]';
  const r1 = engine.evaluate(input(ann2, { pod: { name: 'db-0' } }));
  index.reserve(r1.claims);
  t.same(engine.evaluate(input(ann2, { pod: { name: 'db-0', uid: 'u9' } })).findings, []);
});

t.test('reservations are idempotent per pod; other pods still conflict', async (t) => {
  let now = 0;
  const i = new AddressIndex({ reservationTtlMs: 45_000, now: () => now });
  // A named pod: mutate (no uid yet), validate (uid), a reinvocation: one reservation.
  i.reserve([claim('02:00:00:00:00:01', { namespace: 'ns', name: 'db-0' })]);
  now = 10_000;
  i.reserve([claim('02:00:00:00:00:01', { namespace: 'ns', name: 'db-0', uid: 'u-db' })]);
  i.reserve([claim('02:00:00:00:00:01', { namespace: 'ns', name: 'db-0', uid: 'u-db' })]);
  t.equal(i.stats().reservations, 1, 'one reservation per pod and address');
  const held = i.conflicts('mac', '02:00:00:00:00:01', 'ns/a', 'Network', other);
  t.same(held.map((h) => [h.pod, h.uid, h.expires]), [['ns/db-0', 'u-db', 55_000]], 'refreshed, uid filled in');
  t.same(i.conflicts('mac', '02:00:00:00:00:01', 'ns/a', 'Network', { namespace: 'ns', uid: 'u-db' }), [], 'the pod by uid alone is itself');
  // The same address on another network is a reservation of its own.
  i.reserve([claim('02:00:00:00:00:01', { namespace: 'ns', name: 'db-0', uid: 'u-db' }, 'network:ns/b')]);
  t.equal(i.stats().reservations, 2);
  // Another pod asking for the same address is not the same reservation.
  i.reserve([claim('02:00:00:00:00:01', { namespace: 'ns', name: 'db-1', uid: 'u-db1' })]);
  t.equal(i.stats().reservations, 3);
  t.same(i.conflicts('mac', '02:00:00:00:00:01', 'ns/a', 'Network', { namespace: 'ns', name: 'db-1', uid: 'u-db1' }).map((h) => h.pod), ['ns/db-0']);
  // A reservation by uid only (no name) is matched by that uid when the name arrives.
  i.reserve([claim('02:00:00:00:00:09', { namespace: 'ns', generateName: 'web-', uid: 'u-web' })]);
  i.reserve([claim('02:00:00:00:00:09', { namespace: 'ns', generateName: 'web-', name: 'web-x1', uid: 'u-web' })]);
  t.same(i.conflicts('mac', '02:00:00:00:00:09', 'ns/a', 'Network', other).map((h) => h.pod), ['ns/web-x1'], 'one reservation, now named');
  // Two unnamed pods of one generateName without uids are never merged.
  i.reserve([claim('02:00:00:00:00:0a', { namespace: 'ns', generateName: 'web-' })]);
  i.reserve([claim('02:00:00:00:00:0a', { namespace: 'ns', generateName: 'web-' })]);
  t.equal(i.conflicts('mac', '02:00:00:00:00:0a', 'ns/a', 'Network', other).length, 2);
});
