// The address index's decisions, through its public functions only (issue 30): what a lookup
// finds, who conflicts with whom, what leaves with a pod, what a reservation holds and for how
// long, and the documented numbers (docs/policy.md, docs/security.md "Reservations"). Nothing
// here reads the index's internal layout, so these stay valid when that layout changes.
import t from 'tap';
// The module itself, not src/policy/index.js: loading the whole policy tree costs seconds per
// run, and the mutation part runs this file once per mutant.
import { AddressIndex, podKey, RESERVATION_LIMITS } from '../../src/policy/address-index.js';
import type { HeldAddress } from '../../src/policy/types.js';
import type { SharingOwner } from '../../src/policy/owner.js';

const M1 = '02:00:00:00:00:01';
const M2 = '02:00:00:00:00:02';
/** An InfiniBand GUID (23 characters) and a 20-byte IPoIB hardware address (59 characters). */
const GUID = '00:11:22:33:44:55:66:77';
const IB_MAC = '00:00:00:00:fe:80:00:00:00:00:00:00:02:00:5e:10:00:00:00:01';
const mac = (value: string, network = 'ns/a') => ({ kind: 'mac' as const, value, network });
const guid = (value: string, network = 'ns/a') => ({ kind: 'infiniband-guid' as const, value, network });
const claim = (value: string, pod: HeldAddress['pod'], scope = 'network:ns/a', kind: HeldAddress['kind'] = 'mac'): HeldAddress => ({
  kind,
  value,
  scope,
  pod,
});
const stranger = { namespace: 'x', name: 'stranger', uid: 'u-stranger' };
const vmOwner = (name: string, key = `uid-${name}`): SharingOwner => ({
  key,
  label: `VM ns/${name}`,
  namespace: 'ns',
  kind: 'VirtualMachineInstance',
  name,
});
const pods = (
  i: AddressIndex,
  value: string,
  network = 'ns/a',
  self: Parameters<AddressIndex['conflicts']>[4] = stranger,
  scope: 'Network' | 'Cluster' = 'Network',
) => i.conflicts('mac', value, network, scope, self).map((h) => h.pod);

t.test('documented numbers: 45 s reservations, 64 per pod, 16 per address, 10,000 per namespace, 50,000 in all', async (t) => {
  t.same({ ...RESERVATION_LIMITS }, { perPod: 64, perAddress: 16, perNamespace: 10_000, total: 50_000 });
  t.ok(Object.isFrozen(RESERVATION_LIMITS), 'the defaults cannot be changed at run time');
  t.same(new AddressIndex().reservationLimits(), { perPod: 64, perAddress: 16, perNamespace: 10_000, total: 50_000 });
  t.same(
    new AddressIndex({ limits: { perAddress: 3 } }).reservationLimits(),
    { perPod: 64, perAddress: 3, perNamespace: 10_000, total: 50_000 },
    'an override changes only its own bound',
  );
  // The default time to live, read through a conflict's expiry.
  const now = 1_000_000;
  const i = new AddressIndex({ now: () => now });
  i.reserve([claim(M1, { namespace: 'ns', name: 'p', uid: 'u-p' })]);
  t.same(
    i.conflicts('mac', M1, 'ns/a', 'Network', stranger).map((h) => h.expires),
    [now + 45_000],
    'a reservation lapses 45 s after it is made',
  );
  t.same(new AddressIndex().reservationsCapped(), { pod: 0, address: 0, namespace: 0, total: 0 }, 'nothing capped at start');
});

t.test('limits: every bound must be a positive integer, and the error names it', async (t) => {
  for (const name of ['perPod', 'perAddress', 'perNamespace', 'total'] as const) {
    for (const bad of [0, -1, 2.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      t.throws(
        () => new AddressIndex({ limits: { [name]: bad } }),
        { name: 'RangeError', message: `reservation limit ${name}: ${bad} is not a positive integer` },
        `${name} ${bad}`,
      );
    }
    t.doesNotThrow(() => new AddressIndex({ limits: { [name]: 1 } }), `${name} 1 is allowed`);
  }
});

t.test('a reservation holds up to its expiry, exclusive: lookups and the sweep agree', async (t) => {
  let now = 0;
  const i = new AddressIndex({ now: () => now, reservationTtlMs: 100 });
  i.reserve([claim(M1, { namespace: 'ns', name: 'p', uid: 'u-p' })]);
  for (const [at, held] of [
    [0, 1],
    [99, 1],
    [100, 0],
  ] as const) {
    now = at;
    t.equal(i.conflicts('mac', M1, 'ns/a', 'Network', stranger).length, held, `lookup at ${at} ms: ${held ? 'held' : 'lapsed'}`);
  }
  t.equal(i.stats().reservations, 0, 'the lapsed one found by a lookup is dropped');
  now = 0;
  i.reserve([claim(M2, { namespace: 'ns', name: 'q', uid: 'u-q' })]);
  now = 99;
  i.sweep();
  t.equal(i.stats().reservations, 1, 'sweep at 99 ms keeps it');
  now = 100;
  i.sweep();
  t.equal(i.stats().reservations, 0, 'sweep at 100 ms drops it');
});

t.test('pending: false judges live pods only; reservations stay for later lookups', async (t) => {
  let now = 0;
  const i = new AddressIndex({ now: () => now, reservationTtlMs: 10 });
  i.setPod({ namespace: 'ns', name: 'live', uid: 'u-live' }, [mac(M1)]);
  i.reserve([claim(M1, { namespace: 'ns', name: 'pending', uid: 'u-pending' })]);
  t.same(
    i.conflicts('mac', M1, 'ns/a', 'Network', stranger, false).map((h) => h.pod),
    ['ns/live'],
  );
  t.same(
    i.conflicts('mac', M1, 'ns/a', 'Network', stranger).map((h) => h.pod),
    ['ns/live', 'ns/pending'],
    'live holders first, then reservations',
  );
  now = 50;
  i.conflicts('mac', M1, 'ns/a', 'Network', stranger, false);
  t.equal(i.stats().reservations, 1, 'a live-only lookup does not touch reservations');
});

t.test('scopes: who conflicts with whom, for live pods and reservations alike', async (t) => {
  // [holder's network, asked network, scope, conflicts]; '*' is a claim of scope cluster (network unknown).
  const cases: Array<[string, string, 'Network' | 'Cluster', boolean]> = [
    ['ns/a', 'ns/a', 'Network', true],
    ['ns/a', 'ns/b', 'Network', false],
    ['ns/a', 'ns/b', 'Cluster', true],
    ['ns/a', 'other/a', 'Network', false],
    ['*', 'ns/b', 'Network', true],
    ['ns/a', '*', 'Network', true],
  ];
  for (const [held, asked, scope, conflicts] of cases) {
    const name = `${held} held, ${asked} asked, ${scope}`;
    const i = new AddressIndex();
    if (held !== '*') {
      i.setPod({ namespace: 'ns', name: 'live', uid: 'u-live' }, [mac(M1, held)]);
      t.equal(i.conflicts('mac', M1, asked, scope, stranger).length, conflicts ? 1 : 0, `live: ${name}`);
    }
    const j = new AddressIndex();
    j.reserve([claim(M1, { namespace: 'ns', name: 'pending', uid: 'u-pending' }, held === '*' ? 'cluster' : `network:${held}`)]);
    t.equal(j.conflicts('mac', M1, asked, scope, stranger).length, conflicts ? 1 : 0, `reserved: ${name}`);
  }
});

t.test('what a conflict reports: the pod, its network, uid and expiry for reservations, the owner', async (t) => {
  const now = 5_000;
  const i = new AddressIndex({ now: () => now, reservationTtlMs: 1_000 });
  const vm = vmOwner('vm1');
  i.setPod({ namespace: 'ns', name: 'plain', uid: 'u-plain' }, [mac(M1)]);
  i.setPod({ namespace: 'ns', name: 'launcher', uid: 'u-launcher', owner: vm }, [mac(M1)]);
  i.reserve([claim(M1, { namespace: 'ns', name: 'named', uid: 'u-named' })]);
  i.reserve([claim(M1, { namespace: 'ns', generateName: 'web-' }, 'cluster')]);
  i.reserve([claim(M1, { namespace: 'ns', name: 'vm-target', uid: 'u-target', owner: vmOwner('vm2') })]);
  t.same(i.conflicts('mac', M1, 'ns/a', 'Network', stranger), [
    { pod: 'ns/plain', network: 'ns/a' },
    { pod: 'ns/launcher', network: 'ns/a', owner: vm },
    { pod: 'ns/named', network: 'ns/a', expires: 6_000, uid: 'u-named' },
    { pod: 'ns/web-*', network: '*', expires: 6_000 },
    { pod: 'ns/vm-target', network: 'ns/a', expires: 6_000, uid: 'u-target', owner: vmOwner('vm2') },
  ]);
});

t.test('podKey: by name, else by generateName with a star', async (t) => {
  t.equal(podKey({ namespace: 'ns', name: 'p', generateName: 'web-' }), 'ns/p');
  t.equal(podKey({ namespace: 'ns', generateName: 'web-' }), 'ns/web-*');
  t.equal(podKey({ namespace: 'ns' }), 'ns/*');
  t.equal(podKey({ namespace: 'ns', name: '', generateName: 'g-' }), 'ns/g-*', 'an empty name is no name');
});

t.test('self: a pod never conflicts with itself, by name or uid, nor with pods of its sharing owner', async (t) => {
  const vm = vmOwner('vm1');
  const i = new AddressIndex();
  i.setPod({ namespace: 'ns', name: 'src', uid: 'u-src', owner: vm }, [mac(M1)]);
  i.reserve([claim(M1, { namespace: 'ns', name: 'pending', uid: 'u-pending' })]);
  i.reserve([claim(M1, { namespace: 'ns', generateName: 'g-', uid: 'u-gen' })]);
  const cases: Array<[string, Parameters<AddressIndex['conflicts']>[4], string[]]> = [
    ['a stranger sees all', stranger, ['ns/src', 'ns/pending', 'ns/g-*']],
    ['the live pod by name', { namespace: 'ns', name: 'src' }, ['ns/pending', 'ns/g-*']],
    ["the live pod's name in another namespace is not it", { namespace: 'other', name: 'src' }, ['ns/src', 'ns/pending', 'ns/g-*']],
    ['the pending pod by name', { namespace: 'ns', name: 'pending' }, ['ns/src', 'ns/g-*']],
    ['the pending pod by uid alone', { namespace: 'ns', uid: 'u-pending' }, ['ns/src', 'ns/g-*']],
    ['the unnamed reservation by uid', { namespace: 'ns', generateName: 'g-', uid: 'u-gen' }, ['ns/src', 'ns/pending']],
    ['another unnamed pod of the same generateName is not it', { namespace: 'ns', generateName: 'g-' }, ['ns/src', 'ns/pending', 'ns/g-*']],
    ['a migration target of the same VM', { namespace: 'ns', name: 'dst', uid: 'u-dst', owner: vm }, ['ns/pending', 'ns/g-*']],
    ['a pod of another VM', { namespace: 'ns', name: 'dst', uid: 'u-dst', owner: vmOwner('vm2') }, ['ns/src', 'ns/pending', 'ns/g-*']],
  ];
  for (const [name, self, expected] of cases) t.same(pods(i, M1, 'ns/a', self), expected, name);

  // A reservation made for an owner is the owner's: its other pods do not conflict with it.
  const j = new AddressIndex();
  j.reserve([claim(M2, { namespace: 'ns', name: 'dst', uid: 'u-dst', owner: vm })]);
  t.same(pods(j, M2, 'ns/a', { namespace: 'ns', name: 'src', uid: 'u-src', owner: vm }), [], 'the same owner');
  t.same(pods(j, M2, 'ns/a', { namespace: 'ns', name: 'src', uid: 'u-src', owner: vmOwner('vm2') }), ['ns/dst'], 'another owner');
  t.same(pods(j, M2, 'ns/a', { namespace: 'ns', name: 'src', uid: 'u-src' }), ['ns/dst'], 'no owner');
});

t.test('live pods: what is held, replaced and released; kinds and lengths of values', async (t) => {
  const i = new AddressIndex();
  i.setPod({ namespace: 'ns', name: 'p', uid: 'u-p' }, [mac(M1), guid(GUID, 'ns/ib'), mac(IB_MAC, 'ns/ipoib')]);
  t.same(i.stats(), { pods: 1, addresses: 3, reservations: 0 });
  t.ok(i.hasPod('ns', 'p'));
  t.same(
    i.conflicts('infiniband-guid', GUID, 'ns/ib', 'Network', stranger).map((h) => h.pod),
    ['ns/p'],
    'a GUID is found as a GUID',
  );
  t.same(i.conflicts('mac', GUID, 'ns/ib', 'Cluster', stranger), [], 'not as a MAC');
  t.same(pods(i, IB_MAC, 'ns/ipoib'), ['ns/p'], 'a 20-byte MAC is a MAC');
  i.removePod('ns', 'p');
  t.same(i.stats(), { pods: 0, addresses: 0, reservations: 0 }, 'every kind released with the pod');
  t.notOk(i.hasPod('ns', 'p'));
  t.same(i.conflicts('infiniband-guid', GUID, 'ns/ib', 'Cluster', stranger), []);
  t.same(pods(i, IB_MAC, 'ns/ipoib', stranger, 'Cluster'), []);

  // One value on two networks, and held by several pods: removing one pod leaves the others whole.
  i.setPod({ namespace: 'ns', name: 'p1', uid: 'u1' }, [mac(M1, 'ns/a'), mac(M1, 'ns/b')]);
  i.setPod({ namespace: 'ns', name: 'p2', uid: 'u2' }, [mac(M1, 'ns/a')]);
  i.setPod({ namespace: 'ns', name: 'p3', uid: 'u3' }, [mac(M1, 'ns/a')]);
  t.same(pods(i, M1, 'ns/b', stranger, 'Cluster'), ['ns/p1', 'ns/p1', 'ns/p2', 'ns/p3'], 'one entry per network held');
  i.removePod('ns', 'p2');
  t.same(pods(i, M1, 'ns/a'), ['ns/p1', 'ns/p3']);
  i.removePod('ns', 'p1');
  t.same(pods(i, M1, 'ns/a', stranger, 'Cluster'), ['ns/p3'], 'both networks of p1 gone');
  t.same(i.stats(), { pods: 1, addresses: 1, reservations: 0 });
  i.setPod({ namespace: 'ns', name: 'p4', uid: 'u4' }, [mac(M1)]);
  t.same(pods(i, M1, 'ns/a'), ['ns/p3', 'ns/p4'], 'a holder added after removals');
  i.removePod('ns', 'p3');
  i.removePod('ns', 'p4');
  t.same(i.stats(), { pods: 0, addresses: 0, reservations: 0 });

  // Removing a pod that is not there, or twice, changes nothing.
  i.setPod({ namespace: 'ns', name: 'p', uid: 'u' }, [mac(M1)]);
  i.removePod('ns', 'absent');
  i.removePod('other', 'p');
  t.same(i.stats(), { pods: 1, addresses: 1, reservations: 0 });
  i.removePod('ns', 'p');
  i.removePod('ns', 'p');
  t.same(i.stats(), { pods: 0, addresses: 0, reservations: 0 });

  // Pods of one name in two namespaces are two pods.
  i.setPod({ namespace: 'a', name: 'p' }, [mac(M1)]);
  i.setPod({ namespace: 'b', name: 'p' }, [mac(M2)]);
  i.removePod('a', 'p');
  t.ok(i.hasPod('b', 'p'));
  t.notOk(i.hasPod('a', 'p'));
  t.same(pods(i, M2, 'ns/a'), ['b/p']);
  t.same(i.stats(), { pods: 1, addresses: 1, reservations: 0 });
});

t.test('a pod with no addresses is not indexed (it holds nothing), and replacing with none releases all', async (t) => {
  const i = new AddressIndex();
  i.setPod({ namespace: 'ns', name: 'none' }, []);
  t.notOk(i.hasPod('ns', 'none'));
  t.same(i.stats(), { pods: 0, addresses: 0, reservations: 0 });
  i.setPod({ namespace: 'ns', name: 'p' }, [mac(M1), mac(M2)]);
  i.setPod({ namespace: 'ns', name: 'p' }, [mac(M1)]);
  t.same(i.stats(), { pods: 1, addresses: 1, reservations: 0 }, 'a changed annotation: only the new set');
  i.setPod({ namespace: 'ns', name: 'p' }, []);
  t.same(i.stats(), { pods: 0, addresses: 0, reservations: 0 });
  t.notOk(i.hasPod('ns', 'p'));
});

t.test('resync: pods listed again stay, the rest leave; a second resync starts afresh', async (t) => {
  const i = new AddressIndex();
  i.setPod({ namespace: 'ns', name: 'a' }, [mac(M1)]);
  i.setPod({ namespace: 'ns', name: 'b' }, [mac(M2)]);
  i.beginResync();
  i.setPod({ namespace: 'ns', name: 'a' }, [mac(M1)]);
  i.setPod({ namespace: 'ns', name: 'c' }, [mac('02:00:00:00:00:03')]);
  i.endResync();
  t.ok(i.hasPod('ns', 'a'));
  t.notOk(i.hasPod('ns', 'b'), 'not listed again: gone');
  t.ok(i.hasPod('ns', 'c'), 'new in the relist: kept');
  t.same(pods(i, M2, 'ns/a'), []);
  i.beginResync();
  i.setPod({ namespace: 'ns', name: 'c' }, [mac('02:00:00:00:00:03')]);
  i.endResync();
  t.notOk(i.hasPod('ns', 'a'), 'listed in the first relist, not the second: gone');
  t.ok(i.hasPod('ns', 'c'));
  t.same(i.stats(), { pods: 1, addresses: 1, reservations: 0 });
  // A pod set between resyncs (a watch event) belongs to the current generation.
  i.setPod({ namespace: 'ns', name: 'd' }, [mac(M1)]);
  i.endResync();
  t.ok(i.hasPod('ns', 'd'), 'an endResync without a new list removes nothing seen since the last one');
  t.ok(i.hasPod('ns', 'c'));
});

t.test('heldBy: a claim is confirmed only by its holder using that address', async (t) => {
  const vm = vmOwner('vm1', 'uid-vm1');
  const i = new AddressIndex();
  i.setPod({ namespace: 'ns', name: 'p', uid: 'u-p' }, [mac(M1), guid(GUID)]);
  i.setPod({ namespace: 'ns', name: 'launcher', uid: 'u-l', owner: vm }, [mac(M2)]);
  const cases: Array<
    [string, 'mac' | 'infiniband-guid', string, { kind: string; namespace: string; name: string; uid?: string }, boolean]
  > = [
    ['the pod, any incarnation', 'mac', M1, { kind: 'Pod', namespace: 'ns', name: 'p' }, true],
    ['the pod, this incarnation', 'mac', M1, { kind: 'Pod', namespace: 'ns', name: 'p', uid: 'u-p' }, true],
    ['the pod, another incarnation', 'mac', M1, { kind: 'Pod', namespace: 'ns', name: 'p', uid: 'u-old' }, false],
    ['the pod, its GUID', 'infiniband-guid', GUID, { kind: 'Pod', namespace: 'ns', name: 'p' }, true],
    ['the pod, its GUID asked as a MAC', 'mac', GUID, { kind: 'Pod', namespace: 'ns', name: 'p' }, false],
    ['the pod, an address it does not use', 'mac', M2, { kind: 'Pod', namespace: 'ns', name: 'p' }, false],
    ['another pod of the namespace', 'mac', M1, { kind: 'Pod', namespace: 'ns', name: 'q' }, false],
    ["the pod's name in another namespace", 'mac', M1, { kind: 'Pod', namespace: 'other', name: 'p' }, false],
    ['the VM', 'mac', M2, { kind: 'VirtualMachineInstance', namespace: 'ns', name: 'vm1' }, true],
    ['the VM by its uid', 'mac', M2, { kind: 'VirtualMachineInstance', namespace: 'ns', name: 'vm1', uid: 'uid-vm1' }, true],
    ['the VM, another uid', 'mac', M2, { kind: 'VirtualMachineInstance', namespace: 'ns', name: 'vm1', uid: 'uid-old' }, false],
    ['another VM', 'mac', M2, { kind: 'VirtualMachineInstance', namespace: 'ns', name: 'vm2' }, false],
    ["the VM's name under another kind", 'mac', M2, { kind: 'VirtualMachine', namespace: 'ns', name: 'vm1' }, false],
    ["the VM's name as a Pod", 'mac', M2, { kind: 'Pod', namespace: 'ns', name: 'vm1' }, false],
    ['the launcher pod as a Pod', 'mac', M2, { kind: 'Pod', namespace: 'ns', name: 'launcher' }, true],
    ["a pod without an owner is no VM's", 'mac', M1, { kind: 'VirtualMachineInstance', namespace: 'ns', name: 'p' }, false],
    ['the VM in another namespace', 'mac', M2, { kind: 'VirtualMachineInstance', namespace: 'other', name: 'vm1' }, false],
    ['an address nobody holds', 'mac', '02:00:00:00:00:99', { kind: 'Pod', namespace: 'ns', name: 'p' }, false],
  ];
  for (const [name, kind, value, holder, held] of cases) t.equal(i.heldBy(kind, value, holder), held, name);
  // Among several holders of one address, the match is found wherever it is.
  i.setPod({ namespace: 'ns', name: 'q1' }, [mac(M1)]);
  i.setPod({ namespace: 'ns', name: 'q2' }, [mac(M1)]);
  t.ok(i.heldBy('mac', M1, { kind: 'Pod', namespace: 'ns', name: 'q2' }), 'the last of three holders');
  t.ok(i.heldBy('mac', M1, { kind: 'Pod', namespace: 'ns', name: 'p', uid: 'u-p' }), 'the first of three holders');
  i.removePod('ns', 'p');
  t.notOk(i.heldBy('mac', M1, { kind: 'Pod', namespace: 'ns', name: 'p' }), 'a pod gone holds nothing');
});

t.test('ownerHasPods: counted per owner, true while any pod of the owner holds addresses', async (t) => {
  const vm = vmOwner('vm1');
  const i = new AddressIndex();
  t.notOk(i.ownerHasPods(vm.key));
  i.setPod({ namespace: 'ns', name: 'src', owner: vm }, [mac(M1)]);
  i.setPod({ namespace: 'ns', name: 'dst', owner: vm }, [mac(M1)]);
  i.setPod({ namespace: 'ns', name: 'other', owner: vmOwner('vm2') }, [mac(M2)]);
  i.setPod({ namespace: 'ns', name: 'src', owner: vm }, [mac(M1)]);
  t.ok(i.ownerHasPods(vm.key));
  i.removePod('ns', 'src');
  t.ok(i.ownerHasPods(vm.key), 'the target still runs (a re-set pod was counted once)');
  i.removePod('ns', 'dst');
  t.notOk(i.ownerHasPods(vm.key), 'the last pod gone');
  t.ok(i.ownerHasPods(vmOwner('vm2').key), 'another owner is untouched');
  i.setPod({ namespace: 'ns', name: 'other', owner: vmOwner('vm2') }, []);
  t.notOk(i.ownerHasPods(vmOwner('vm2').key), 'a pod that stops holding addresses stops counting');
  i.setPod({ namespace: 'ns', name: 'none', owner: vm }, []);
  t.notOk(i.ownerHasPods(vm.key), 'a pod without addresses never counts');
  i.setPod({ namespace: 'ns', name: 'plain' }, [mac(M1)]);
  i.removePod('ns', 'plain');
  t.notOk(i.ownerHasPods(vm.key));
});

t.test('confirm: the watch seeing a pod ends its own reservations, by name or uid, on every address', async (t) => {
  const i = new AddressIndex();
  i.reserve([claim(M1, { namespace: 'ns', name: 'p' }), claim(M2, { namespace: 'ns', name: 'p' })]);
  i.reserve([claim(M1, { namespace: 'ns', generateName: 'g-', uid: 'u-g' })]);
  i.reserve([claim(M1, { namespace: 'ns', name: 'q', uid: 'u-q' })]);
  i.reserve([claim(M1, { namespace: 'other', name: 'p' })]);
  i.setPod({ namespace: 'ns', name: 'p' }, [mac(M1)]);
  t.same(pods(i, M1, 'ns/a'), ['ns/p', 'ns/g-*', 'ns/q', 'other/p'], 'p confirmed by name (also with no uid), not other/p');
  t.same(pods(i, M2, 'ns/a'), [], 'its reservation of another address is gone too');
  i.setPod({ namespace: 'ns', name: 'g-x1', uid: 'u-g' }, []);
  t.same(pods(i, M1, 'ns/a'), ['ns/p', 'ns/q', 'other/p'], 'by uid, even with no address held');
  i.setPod({ namespace: 'ns', name: 'renamed', uid: 'u-q' }, []);
  t.same(pods(i, M1, 'ns/a'), ['ns/p', 'other/p'], 'by uid under any name');
  t.equal(i.stats().reservations, 1);
});

t.test("release: only the same pod's reservation of that address on that network", async (t) => {
  const i = new AddressIndex();
  const p = { namespace: 'ns', name: 'p', uid: 'u-p' };
  i.reserve([claim(M1, p), claim(M1, p, 'network:ns/b'), claim(M1, p, 'cluster'), claim(GUID, p, 'network:ns/a', 'infiniband-guid')]);
  i.reserve([claim(M1, { namespace: 'ns', name: 'q', uid: 'u-q' })]);
  i.reserve([claim(M1, { namespace: 'ns', generateName: 'g-' })]);
  t.equal(i.stats().reservations, 6);
  i.release([claim(M1, p, 'network:ns/b')]);
  t.same(pods(i, M1, 'ns/b', stranger), ['ns/p'], "ns/b released; p's cluster-scope one (*) still conflicts there");
  i.release([claim(M1, { namespace: 'ns', uid: 'u-p' }, 'cluster')]);
  t.same(
    i.conflicts('mac', M1, 'ns/zzz', 'Network', stranger).map((h) => h.pod),
    [],
    'released by uid alone',
  );
  i.release([claim(M1, { namespace: 'ns', name: 'p' }, 'network:ns/a', 'infiniband-guid')]);
  t.equal(i.stats().reservations, 4, 'a MAC release does not touch the GUID of the same text, nor the reverse');
  i.release([claim(M1, { namespace: 'ns', name: 'p' })]);
  t.same(pods(i, M1, 'ns/a'), ['ns/q', 'ns/g-*'], 'released by name alone');
  i.release([claim(M1, { namespace: 'ns', generateName: 'g-' })]);
  t.same(
    pods(i, M1, 'ns/a'),
    ['ns/q', 'ns/g-*'],
    'an unnamed pod without uid cannot release an unnamed reservation: it may not be its own',
  );
  i.release([claim(M2, p)]);
  t.equal(i.stats().reservations, 3, 'releasing what was never reserved is nothing');
  i.release([claim(GUID, p, 'network:ns/a', 'infiniband-guid')]);
  t.equal(i.stats().reservations, 2);
  t.same(i.conflicts('infiniband-guid', GUID, 'ns/a', 'Cluster', stranger), []);
});

t.test('reserve: one reservation per pod, address and network; a refresh fills in the name and uid', async (t) => {
  let now = 0;
  const i = new AddressIndex({ now: () => now, reservationTtlMs: 1_000 });
  i.reserve([claim(M1, { namespace: 'ns', generateName: 'g-', uid: 'u-g' })]);
  now = 10;
  i.reserve([claim(M1, { namespace: 'ns', generateName: 'g-', name: 'g-x', uid: 'u-g' })]);
  t.same(
    i.conflicts('mac', M1, 'ns/a', 'Network', stranger).map((h) => [h.pod, h.uid, h.expires]),
    [['ns/g-x', 'u-g', 1_010]],
  );
  // Named now: confirming by name finds it.
  i.setPod({ namespace: 'ns', name: 'g-x' }, []);
  t.equal(i.stats().reservations, 0, 'a reservation named by its refresh is confirmed by that name');

  i.reserve([claim(M1, { namespace: 'ns', name: 'n' })]);
  now = 20;
  i.reserve([claim(M1, { namespace: 'ns', name: 'n', uid: 'u-n' })]);
  t.same(
    i.conflicts('mac', M1, 'ns/a', 'Network', stranger).map((h) => [h.pod, h.uid, h.expires]),
    [['ns/n', 'u-n', 1_020]],
  );
  i.setPod({ namespace: 'ns', name: 'renamed', uid: 'u-n' }, []);
  t.equal(i.stats().reservations, 0, 'a uid filled in by a refresh is confirmed by that uid');

  // A refresh by uid alone keeps the name it had.
  i.reserve([claim(M1, { namespace: 'ns', name: 'k', uid: 'u-k' })]);
  i.reserve([claim(M1, { namespace: 'ns', generateName: 'k-', uid: 'u-k' })]);
  t.same(pods(i, M1, 'ns/a'), ['ns/k']);
  // The same address through a refresh keeps one reservation; another network is another.
  i.reserve([claim(M1, { namespace: 'ns', name: 'k', uid: 'u-k' }, 'network:ns/b')]);
  t.equal(i.stats().reservations, 2);
  // Same name, another uid (a new incarnation) is the same pod by name.
  i.reserve([claim(M1, { namespace: 'ns', name: 'k', uid: 'u-k2' })]);
  t.equal(i.stats().reservations, 2);
});

t.test('reserve: the scope names the network, anything else is every network', async (t) => {
  const i = new AddressIndex();
  i.reserve([claim(M1, { namespace: 'ns', name: 'p' }, 'network:team/net-1')]);
  i.reserve([claim(M2, { namespace: 'ns', name: 'p' }, 'cluster')]);
  t.same(
    i.conflicts('mac', M1, 'team/net-1', 'Network', stranger).map((h) => h.network),
    ['team/net-1'],
  );
  t.same(i.conflicts('mac', M1, 'team/net-2', 'Network', stranger), []);
  t.same(
    i.conflicts('mac', M2, 'team/net-2', 'Network', stranger).map((h) => h.network),
    ['*'],
  );
  t.same(i.conflicts('infiniband-guid', M1, 'team/net-1', 'Cluster', stranger), [], 'a MAC reservation is no GUID reservation');
});

t.test('per pod: the first perPod claims of a call are reserved, in order', async (t) => {
  const i = new AddressIndex({ limits: { perPod: 2 } });
  const p = { namespace: 'ns', name: 'p', uid: 'u-p' };
  i.reserve([claim(M1, p), claim(M2, p), claim('02:00:00:00:00:03', p)]);
  t.same(
    [M1, M2, '02:00:00:00:00:03'].map((v) => pods(i, v, 'ns/a').length),
    [1, 1, 0],
  );
  t.same(i.reservationsCapped(), { pod: 1, address: 0, namespace: 0, total: 0 });
  i.reserve([claim(M1, p)]);
  t.same(i.reservationsCapped(), { pod: 1, address: 0, namespace: 0, total: 0 }, 'within the bound nothing more is counted');
});

t.test('per address: the pod reserved longest ago gives way, counted by pods; at the cap and below nothing goes', async (t) => {
  let now = 0;
  const i = new AddressIndex({ now: () => now, limits: { perAddress: 2 } });
  const a = { namespace: 'ns', name: 'a', uid: 'u-a' };
  const b = { namespace: 'ns', name: 'b', uid: 'u-b' };
  const c = { namespace: 'ns', name: 'c', uid: 'u-c' };
  now = 1;
  i.reserve([claim(M1, b)]);
  now = 2;
  i.reserve([claim(M1, a, 'network:ns/x')]);
  now = 3;
  i.reserve([claim(M1, a, 'network:ns/y')]);
  t.same(pods(i, M1, '*'), ['ns/b', 'ns/a', 'ns/a'], 'two pods (one on two networks): at the cap, all kept');
  t.equal(i.reservationsCapped().address, 0);
  now = 4;
  i.reserve([claim(M1, c)]);
  t.same(pods(i, M1, '*'), ['ns/a', 'ns/a', 'ns/c'], 'b, the oldest, went');
  t.equal(i.reservationsCapped().address, 1);
  // A pod's age is its oldest reservation of the address: a's newer network does not make it young.
  now = 5;
  i.reserve([claim(M1, c, 'network:ns/z')]);
  now = 6;
  i.reserve([claim(M1, b)]);
  t.same(pods(i, M1, '*'), ['ns/c', 'ns/c', 'ns/b'], 'a (oldest at 2) went with both its networks');
  t.equal(i.reservationsCapped().address, 3);
  // The pod giving way is the one whose oldest reservation is oldest, wherever it is in the list.
  now = 7;
  i.reserve([claim(M1, c)]); // c's ns/a reservation refreshed at 7; c still holds ns/z from 5
  now = 8;
  i.reserve([claim(M1, a)]);
  t.same(pods(i, M1, '*'), ['ns/b', 'ns/a'], 'c (oldest at 5, though refreshed at 7) went before b (6), with both its networks');
  t.equal(i.reservationsCapped().address, 5);
});

t.test('per address: a pod known by uid alone is one holder on all its networks', async (t) => {
  let now = 0;
  const i = new AddressIndex({ now: () => now, limits: { perAddress: 2 } });
  now = 1;
  i.reserve([claim(M1, { namespace: 'ns', name: 'named', uid: 'u-n' })]);
  now = 2;
  i.reserve([claim(M1, { namespace: 'ns', generateName: 'g-', uid: 'u-g' })]);
  now = 3;
  i.reserve([claim(M1, { namespace: 'ns', generateName: 'g-', uid: 'u-g' }, 'network:ns/b')]);
  t.equal(i.reservationsCapped().address, 0, 'the same unnamed pod (by uid) on a second network is not a new pod');
  t.same(pods(i, M1, '*'), ['ns/named', 'ns/g-*', 'ns/g-*']);
  now = 4;
  i.reserve([claim(M1, { namespace: 'ns', generateName: 'h-', uid: 'u-h' })]);
  t.equal(i.reservationsCapped().address, 1, 'a new pod: the oldest (named) gave way');
  t.same(pods(i, M1, '*'), ['ns/g-*', 'ns/g-*', 'ns/h-*']);
  now = 5;
  i.reserve([claim(M1, { namespace: 'ns', generateName: 'g-', uid: 'u-h2' })]);
  t.equal(i.reservationsCapped().address, 3, 'another pod of the same generateName (its own uid) is a new pod: g- went on both networks');
  t.same(pods(i, M1, '*'), ['ns/h-*', 'ns/g-*']);
});

t.test('per namespace and in all: the oldest gives way; a refresh makes a reservation young', async (t) => {
  let now = 0;
  const i = new AddressIndex({ now: () => now, limits: { perNamespace: 2, total: 3 } });
  const r = (ns: string, name: string, value: string) => {
    now++;
    i.reserve([claim(value, { namespace: ns, name, uid: `u-${ns}-${name}` })]);
  };
  r('a', 'p1', M1);
  r('a', 'p2', M2);
  t.equal(i.stats().reservations, 2, 'at the namespace cap: both kept');
  r('a', 'p1', M1); // refresh: p1 is now the youngest of a
  r('a', 'p3', '02:00:00:00:00:03');
  t.same(i.reservationsCapped(), { pod: 0, address: 0, namespace: 1, total: 0 });
  t.same(
    [M1, M2, '02:00:00:00:00:03'].map((v) => pods(i, v, 'ns/a')),
    [['a/p1'], [], ['a/p3']],
    "p2, the namespace's oldest, went",
  );
  r('b', 'q1', '02:00:00:00:00:04');
  t.equal(i.stats().reservations, 3, 'at the total: all kept');
  r('c', 'q2', '02:00:00:00:00:05');
  t.same(i.reservationsCapped(), { pod: 0, address: 0, namespace: 1, total: 1 });
  t.same(pods(i, M1, 'ns/a'), [], 'the oldest in all (a/p1) went');
  t.equal(i.stats().reservations, 3);
});

t.test('evictions count only reservations still live; one lapsing this very moment is not counted', async (t) => {
  let now = 0;
  const caps: Array<['address' | 'namespace' | 'total', Partial<typeof RESERVATION_LIMITS>, (n: number) => HeldAddress]> = [
    ['address', { perAddress: 1 }, (n) => claim(M1, { namespace: 'ns', name: `p${n}`, uid: `u${n}` })],
    ['namespace', { perNamespace: 1 }, (n) => claim(`02:00:00:00:01:0${n}`, { namespace: 'ns', name: `p${n}`, uid: `u${n}` })],
    ['total', { total: 1 }, (n) => claim(`02:00:00:00:01:0${n}`, { namespace: `ns${n}`, name: `p${n}`, uid: `u${n}` })],
  ];
  for (const [cap, limits, make] of caps) {
    now = 0;
    const i = new AddressIndex({ now: () => now, reservationTtlMs: 100, limits });
    i.reserve([make(1)]);
    now = 99;
    i.reserve([make(2)]);
    t.equal(i.reservationsCapped()[cap], 1, `${cap}: a live one evicted is counted`);
    now = 199; // the second expires at 199
    i.reserve([make(3)]);
    t.equal(i.reservationsCapped()[cap], 1, `${cap}: one lapsing at this moment goes uncounted`);
    t.equal(i.stats().reservations, 1, `${cap}: room made`);
  }
});

t.test('reservationsCapped and stats are snapshots the caller cannot change', async (t) => {
  const i = new AddressIndex({ limits: { perPod: 1 } });
  i.reserve([claim(M1, { namespace: 'ns', name: 'p' }), claim(M2, { namespace: 'ns', name: 'p' })]);
  const capped = i.reservationsCapped() as Record<string, number>;
  capped.pod = 99;
  t.equal(i.reservationsCapped().pod, 1);
});

t.test('the sweep drops only what has lapsed, in any order', async (t) => {
  let now = 0;
  const i = new AddressIndex({ now: () => now, reservationTtlMs: 100 });
  now = 50;
  i.reserve([claim(M1, { namespace: 'ns', name: 'late' })]); // 150
  now = 0;
  i.reserve([claim(M2, { namespace: 'ns', name: 'early' })]); // 100
  now = 20;
  i.reserve([claim('02:00:00:00:00:03', { namespace: 'ns', name: 'mid' })]); // 120
  now = 120;
  i.sweep();
  t.same(
    [M1, M2, '02:00:00:00:00:03'].map((v) => pods(i, v, 'ns/a').length),
    [1, 0, 0],
  );
  i.sweep();
  t.equal(i.stats().reservations, 1, 'a second sweep at the same moment changes nothing');
});

t.test('self without a name, uid or owner matches nothing: not a pod named "undefined", not every uid-less reservation', async (t) => {
  const i = new AddressIndex();
  i.setPod({ namespace: 'ns', name: 'undefined' }, [mac(M1)]);
  i.setPod({ namespace: 'ns', name: 'plain' }, [mac(M1)]);
  i.reserve([claim(M1, { namespace: 'ns', name: 'undefined' })]);
  i.reserve([claim(M1, { namespace: 'ns', name: 'no-uid' })]);
  const everyone = ['ns/undefined', 'ns/plain', 'ns/undefined', 'ns/no-uid'];
  t.same(pods(i, M1, 'ns/a', { namespace: 'ns', generateName: 'g-' }), everyone, 'an unnamed pod without uid');
  t.same(pods(i, M1, 'ns/a', { namespace: 'ns', generateName: 'g-', uid: 'u-g' }), everyone, 'an unnamed pod with a uid');
  t.same(
    pods(i, M1, 'ns/a', { namespace: 'ns', name: 'q', owner: vmOwner('vm1') }),
    everyone,
    "a VM pod: holders without an owner are not the VM's",
  );
});

t.test('per address: of pods reserved at the same moment, the one reserved first gives way', async (t) => {
  const now = 1_000;
  const i = new AddressIndex({ now: () => now, limits: { perAddress: 2 } });
  for (const name of ['first', 'second', 'third']) i.reserve([claim(M1, { namespace: 'ns', name, uid: `u-${name}` })]);
  t.same(pods(i, M1, 'ns/a'), ['ns/second', 'ns/third']);
  t.equal(i.reservationsCapped().address, 1);
});

t.test('per address: pods are told apart by uid, else by name; unnamed pods without uid are each new', async (t) => {
  let now = 0;
  // Pods of one generateName with their own uids are separate pods.
  const i = new AddressIndex({ now: () => now, limits: { perAddress: 3 } });
  for (const [generateName, uid] of [
    ['g-', 'u1'],
    ['g-', 'u2'],
    ['h-', 'u3'],
    ['k-', 'u4'],
  ] as const) {
    now++;
    i.reserve([claim(M1, { namespace: 'ns', generateName, uid })]);
  }
  t.equal(i.reservationsCapped().address, 1, 'four pods, cap three: one gave way');
  t.same(
    i.conflicts('mac', M1, 'ns/a', 'Network', stranger).map((h) => h.uid),
    ['u2', 'u3', 'u4'],
    'the first g- pod',
  );
  // An unnamed pod without uid may be any pod: it is a new holder.
  const j = new AddressIndex({ now: () => now, limits: { perAddress: 2 } });
  now++;
  j.reserve([claim(M1, { namespace: 'ns', name: 'a', uid: 'u-a' })]);
  now++;
  j.reserve([claim(M1, { namespace: 'ns', generateName: 'g-' })]);
  now++;
  j.reserve([claim(M1, { namespace: 'ns', generateName: 'g-' })]);
  t.equal(j.reservationsCapped().address, 1, 'the second unnamed one is a new pod: the oldest gave way');
  t.same(pods(j, M1, 'ns/a'), ['ns/g-*', 'ns/g-*']);
});

t.test('per address, with a clock stepped back: the pod whose reservation lapses first gives way, wherever it sits', async (t) => {
  let now = 100;
  const i = new AddressIndex({ now: () => now, reservationTtlMs: 1_000, limits: { perAddress: 2 } });
  i.reserve([claim(M1, { namespace: 'ns', name: 'a', uid: 'u-a' }, 'network:ns/one')]); // lapses at 1,100
  now = 75;
  i.reserve([claim(M1, { namespace: 'ns', name: 'b', uid: 'u-b' })]); // 1,075
  now = 50;
  i.reserve([claim(M1, { namespace: 'ns', name: 'a', uid: 'u-a' }, 'network:ns/two')]); // 1,050: a's first to lapse
  now = 60;
  i.reserve([claim(M1, { namespace: 'ns', name: 'c', uid: 'u-c' })]);
  t.same(pods(i, M1, '*'), ['ns/b', 'ns/c'], 'a went: its reservation on ns/two lapses first, though added last');
  const j = new AddressIndex({ now: () => now, reservationTtlMs: 1_000, limits: { perAddress: 2 } });
  now = 100;
  j.reserve([claim(M1, { namespace: 'ns', name: 'a', uid: 'u-a' })]); // 1,100
  now = 50;
  j.reserve([claim(M1, { namespace: 'ns', name: 'b', uid: 'u-b' })]); // 1,050
  now = 60;
  j.reserve([claim(M1, { namespace: 'ns', name: 'c', uid: 'u-c' })]);
  t.same(pods(j, M1, '*'), ['ns/a', 'ns/c'], 'b went, not a, the first reserved');
});

t.test('per address: incarnations of one pod name (their own uids) on their own networks count as pods, and the cap holds', async (t) => {
  // A name reused by pods with new uids, each reserving the address on another network: each is
  // another pod of the address, so past `perAddress` the oldest gives way. (Before, a reservation
  // with the name of one already there skipped the per-address count, and one address could pile
  // up reservations up to the namespace cap, each scanned by every conflicts() of that address.)
  let now = 0;
  const i = new AddressIndex({ now: () => now, limits: { perAddress: 3 } });
  for (let n = 0; n < 20; n++) {
    now++;
    i.reserve([claim(M1, { namespace: 'ns', name: 'p', uid: `u${n}` }, `network:ns/net${n}`)]);
  }
  const holders = i.conflicts('mac', M1, '*', 'Cluster', stranger);
  t.ok(holders.length <= 3, `at most perAddress reservations of the address (got ${holders.length})`);
  t.same(
    holders.map((h) => h.uid),
    ['u17', 'u18', 'u19'],
    'the newest three incarnations',
  );
  t.equal(i.reservationsCapped().address, 17);
  // One pod (one uid) on many networks still counts once.
  const j = new AddressIndex({ now: () => now, limits: { perAddress: 2 } });
  for (let n = 0; n < 5; n++) j.reserve([claim(M1, { namespace: 'ns', name: 'q', uid: 'uq' }, `network:ns/net${n}`)]);
  t.equal(j.conflicts('mac', M1, '*', 'Cluster', stranger).length, 5, 'one pod, five networks: no cap reached');
  t.equal(j.reservationsCapped().address, 0);
});

t.test(
  'per address: one pod name reviewed again and again, each time on new networks, holds the address on at most perPod networks',
  async (t) => {
    // Without a uid, reviews under one pod name are one holder: the per-address count of pods does
    // not grow, so before this bound each review's new network added a reservation of the address,
    // up to the namespace cap (10,000), and every conflicts() of the address walked them all.
    let now = 0;
    const i = new AddressIndex({ now: () => now, limits: { perPod: 4 } });
    for (let n = 0; n < 50; n++) {
      now++;
      i.reserve([claim(M1, { namespace: 'ns', name: 'p' }, `network:ns/net${n}`)]);
    }
    const held = i.conflicts('mac', M1, '*', 'Cluster', stranger);
    t.equal(held.length, 4, 'perPod reservations of the address');
    t.same(held.map((h) => h.network).sort(), ['ns/net46', 'ns/net47', 'ns/net48', 'ns/net49'], 'the newest networks kept');
    t.equal(i.reservationsCapped().address, 46, 'each network given way counted at the address cap');
    // A reservation refreshed (same network again) is not a new one: nothing gives way.
    now++;
    i.reserve([claim(M1, { namespace: 'ns', name: 'p' }, 'network:ns/net46')]);
    t.equal(i.conflicts('mac', M1, '*', 'Cluster', stranger).length, 4);
    t.equal(i.reservationsCapped().address, 46);
    // Another pod of the address is not touched by the first one's bound.
    i.reserve([claim(M1, { namespace: 'ns', name: 'other' }, 'network:ns/net0')]);
    t.same(
      i
        .conflicts('mac', M1, '*', 'Cluster', stranger)
        .map((h) => h.pod)
        .filter((p) => p === 'ns/other'),
      ['ns/other'],
    );
    // At the production bounds an address holds at most perAddress x perPod reservations.
    const j = new AddressIndex({ now: () => now });
    for (let n = 0; n < 200; n++) j.reserve([claim(M1, { namespace: 'ns', name: 'q' }, `network:ns/n${n}`)]);
    t.equal(j.conflicts('mac', M1, '*', 'Cluster', stranger).length, RESERVATION_LIMITS.perPod);
  },
);

t.test('a pod set again unchanged (its MODIFIED events) keeps its place among the holders of each address, of either kind', async (t) => {
  const i = new AddressIndex();
  const p = { namespace: 'ns', name: 'p', uid: 'u-p' };
  // M1 and the GUID are shared with q (several holders); M2 is p's alone (one holder).
  const held = [mac(M1, 'ns/a'), guid(GUID, 'ns/ib'), mac(M2, 'ns/b')];
  i.setPod(p, held);
  i.setPod({ namespace: 'ns', name: 'q', uid: 'u-q' }, [mac(M1, 'ns/a'), guid(GUID, 'ns/ib')]);
  i.setPod(p, held);
  t.same(pods(i, M1, 'ns/a'), ['ns/p', 'ns/q'], 'a MAC: p, the first holder, still first');
  t.same(
    i.conflicts('infiniband-guid', GUID, 'ns/ib', 'Network', stranger).map((h) => h.pod),
    ['ns/p', 'ns/q'],
    'a GUID: the same',
  );
  t.same(pods(i, M2, 'ns/b'), ['ns/p']);
  t.same(i.stats(), { pods: 2, addresses: 3, reservations: 0 });
});

t.test('a pod holding one address on two networks, set again unchanged, keeps its place too', async (t) => {
  const i = new AddressIndex();
  const p = { namespace: 'ns', name: 'p', uid: 'u-p' };
  i.setPod(p, [mac(M1, 'ns/a'), mac(M1, 'ns/b')]);
  i.setPod({ namespace: 'ns', name: 'q', uid: 'u-q' }, [mac(M1, 'ns/a')]);
  i.setPod(p, [mac(M1, 'ns/a'), mac(M1, 'ns/b')]);
  const holders = () => i.conflicts('mac', M1, '*', 'Cluster', stranger).map((h) => `${h.pod} ${h.network}`);
  t.same(holders(), ['ns/p ns/a', 'ns/p ns/b', 'ns/q ns/a'], 'the message names p, which has held it longest');
  // And a change still replaces it.
  i.setPod(p, [mac(M1, 'ns/a'), mac(M1, 'ns/c')]);
  t.same(holders(), ['ns/q ns/a', 'ns/p ns/a', 'ns/p ns/c']);
});

t.test('a pod set again with changed addresses is replaced: values moved between networks, a later value changed', async (t) => {
  const M3 = '02:00:00:00:00:03';
  const i = new AddressIndex();
  const p = { namespace: 'ns', name: 'p', uid: 'u-p' };
  // The first value becomes the second one's: same count, same networks, every new value already p's.
  i.setPod(p, [mac(M1, 'ns/a'), mac(M2, 'ns/b')]);
  i.setPod(p, [mac(M2, 'ns/a'), mac(M2, 'ns/b')]);
  t.same(pods(i, M1, '*', stranger, 'Cluster'), [], 'M1 released');
  t.same(
    i.conflicts('mac', M2, '*', 'Cluster', stranger).map((h) => h.network),
    ['ns/a', 'ns/b'],
  );
  t.same(i.stats(), { pods: 1, addresses: 1, reservations: 0 });
  // Two values swapped between the same networks.
  i.setPod(p, [mac(M1, 'ns/a'), mac(M2, 'ns/b')]);
  i.setPod(p, [mac(M2, 'ns/a'), mac(M1, 'ns/b')]);
  t.same(
    i.conflicts('mac', M1, '*', 'Cluster', stranger).map((h) => h.network),
    ['ns/b'],
    'swapped: M1 on ns/b',
  );
  t.same(
    i.conflicts('mac', M2, '*', 'Cluster', stranger).map((h) => h.network),
    ['ns/a'],
    'swapped: M2 on ns/a',
  );
  // One value on two networks, then a third address changed behind them.
  i.setPod(p, [mac(M1, 'ns/a'), mac(M1, 'ns/b'), mac(M2, 'ns/c')]);
  i.setPod(p, [mac(M1, 'ns/a'), mac(M1, 'ns/b'), mac(M3, 'ns/c')]);
  t.same(pods(i, M2, '*', stranger, 'Cluster'), [], 'M2 released');
  t.same(pods(i, M3, 'ns/c'), ['ns/p'], 'M3 held');
  t.same(i.stats(), { pods: 1, addresses: 2, reservations: 0 });
});

t.test('a pod set again with its owner changed is replaced: owner dropped, or renamed under one key', async (t) => {
  const vm = vmOwner('vm1');
  const i = new AddressIndex();
  const p = { namespace: 'ns', name: 'p', uid: 'u-p' };
  i.setPod({ ...p, owner: vm }, [mac(M1)]);
  i.setPod(p, [mac(M1)]);
  t.notOk(i.ownerHasPods(vm.key), 'the owner dropped: its pod count falls');
  t.same(i.conflicts('mac', M1, 'ns/a', 'Network', stranger), [{ pod: 'ns/p', network: 'ns/a' }], 'reported without an owner');
  t.notOk(i.heldBy('mac', M1, { kind: 'VirtualMachineInstance', namespace: 'ns', name: 'vm1' }));
  // The ownerReference edited (users may): the same uid (the key), another name. The pod's
  // addresses are held for the owner as it reads now.
  i.setPod({ ...p, owner: vm }, [mac(M1)]);
  const renamed = vmOwner('vm1-renamed', vm.key);
  i.setPod({ ...p, owner: renamed }, [mac(M1)]);
  t.same(i.conflicts('mac', M1, 'ns/a', 'Network', stranger), [{ pod: 'ns/p', network: 'ns/a', owner: renamed }]);
  t.ok(i.heldBy('mac', M1, { kind: 'VirtualMachineInstance', namespace: 'ns', name: 'vm1-renamed' }));
  t.notOk(i.heldBy('mac', M1, { kind: 'VirtualMachineInstance', namespace: 'ns', name: 'vm1' }));
  t.ok(i.ownerHasPods(vm.key));
});

t.test('a pod set again unchanged confirms its reservations by name, also those made without a uid', async (t) => {
  const i = new AddressIndex();
  const p = { namespace: 'ns', name: 'p', uid: 'u-p' };
  i.setPod(p, [mac(M1)]);
  i.reserve([claim(M1, { namespace: 'ns', name: 'p' }), claim(M2, { namespace: 'ns', name: 'p' })]);
  i.reserve([claim(M1, { namespace: 'ns', name: 'q' })]);
  t.equal(i.stats().reservations, 3);
  i.setPod(p, [mac(M1)]);
  t.same(
    i.conflicts('mac', M1, 'ns/a', 'Network', stranger).map((h) => h.pod),
    ['ns/p', 'ns/q'],
    "p's reservation of M1 gone, q's kept",
  );
  t.same(pods(i, M2, 'ns/a'), [], 'and of M2');
  t.equal(i.stats().reservations, 1);
});

t.test('resync: any namespace and name, one-letter ones too', async (t) => {
  // Pods S/t and x/y: names the index must not confuse with anything it builds itself.
  const i = new AddressIndex();
  i.setPod({ namespace: 'S', name: 't' }, [mac(M1)]);
  i.setPod({ namespace: 'x', name: 'y' }, [mac(M2)]);
  i.beginResync();
  i.setPod({ namespace: 'S', name: 't' }, [mac(M1)]);
  i.endResync();
  t.ok(i.hasPod('S', 't'), 'listed again: kept');
  t.notOk(i.hasPod('x', 'y'));
  t.same(pods(i, M1, 'ns/a'), ['S/t']);
});

t.test('per address: a pod named in one review, named and with its uid in the next, is one holder', async (t) => {
  // Its mutating call (no uid yet) and its validating call (uid known) on two networks.
  const i = new AddressIndex({ limits: { perAddress: 1 } });
  i.reserve([claim(M1, { namespace: 'ns', name: 'p' }, 'network:ns/a')]);
  i.reserve([claim(M1, { namespace: 'ns', name: 'p', uid: 'u-p' }, 'network:ns/b')]);
  t.equal(i.reservationsCapped().address, 0, 'nothing gave way');
  t.same(
    i.conflicts('mac', M1, '*', 'Cluster', stranger).map((h) => h.network),
    ['ns/a', 'ns/b'],
  );
  // The other way round too.
  const j = new AddressIndex({ limits: { perAddress: 1 } });
  j.reserve([claim(M1, { namespace: 'ns', name: 'p', uid: 'u-p' }, 'network:ns/a')]);
  j.reserve([claim(M1, { namespace: 'ns', name: 'p' }, 'network:ns/b')]);
  t.equal(j.reservationsCapped().address, 0);
  t.equal(j.stats().reservations, 2);
});

t.test('an empty uid is no uid: pods reserving with uid "" are told apart by name', async (t) => {
  let now = 0;
  const i = new AddressIndex({ now: () => now, limits: { perAddress: 2 } });
  for (const name of ['a', 'b', 'c']) {
    now++;
    i.reserve([claim(M1, { namespace: 'ns', name, uid: '' })]);
  }
  t.equal(i.reservationsCapped().address, 1, 'three pods, cap two: the oldest gave way');
  t.same(
    i.conflicts('mac', M1, 'ns/a', 'Network', stranger).map((h) => [h.pod, h.uid]),
    [
      ['ns/b', undefined],
      ['ns/c', undefined],
    ],
  );
});

t.test('a refresh without a uid keeps the uid the reservation has', async (t) => {
  const i = new AddressIndex();
  i.reserve([claim(M1, { namespace: 'ns', name: 'p', uid: 'u-p' })]);
  i.reserve([claim(M1, { namespace: 'ns', name: 'p' })]);
  t.same(
    i.conflicts('mac', M1, 'ns/a', 'Network', stranger).map((h) => [h.pod, h.uid]),
    [['ns/p', 'u-p']],
  );
  i.setPod({ namespace: 'ns', name: 'renamed', uid: 'u-p' }, []);
  t.equal(i.stats().reservations, 0, 'still confirmed by its uid');
});

t.test('a refresh that renames a reservation or replaces its uid: only the new name and uid confirm it', async (t) => {
  // Matched by uid under another name: the reservation takes the new name.
  const i = new AddressIndex();
  i.reserve([claim(M1, { namespace: 'ns', name: 'a', uid: 'u' })]);
  i.reserve([claim(M1, { namespace: 'ns', name: 'b', uid: 'u' })]);
  t.same(pods(i, M1, 'ns/a'), ['ns/b']);
  i.setPod({ namespace: 'ns', name: 'a' }, []);
  t.same(pods(i, M1, 'ns/a'), ['ns/b'], 'the old name no longer confirms it');
  i.setPod({ namespace: 'ns', name: 'b' }, []);
  t.same(pods(i, M1, 'ns/a'), [], 'the new name does');
  // Matched by name with another uid (the name's next incarnation): the reservation takes the new uid.
  const j = new AddressIndex();
  j.reserve([claim(M1, { namespace: 'ns', name: 'p', uid: 'u1' })]);
  j.reserve([claim(M1, { namespace: 'ns', name: 'p', uid: 'u2' })]);
  t.same(
    j.conflicts('mac', M1, 'ns/a', 'Network', stranger).map((h) => h.uid),
    ['u2'],
  );
  j.setPod({ namespace: 'ns', name: 'other', uid: 'u1' }, []);
  t.equal(j.stats().reservations, 1, 'the old uid no longer confirms it');
  j.setPod({ namespace: 'ns', name: 'other2', uid: 'u2' }, []);
  t.equal(j.stats().reservations, 0, 'the new uid does');
});
