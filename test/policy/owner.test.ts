import t from 'tap';
import { AddressIndex, parseSharingOwners, type SharingOwner, sharingOwnerOf } from '../../src/policy/index.js';
import { sameOwner } from '../../src/policy/owner.js';
import { indexPod } from '../../src/policy/pod-source.js';

const vmiRef = {
  apiVersion: 'kubevirt.io/v1',
  kind: 'VirtualMachineInstance',
  name: 'vm1',
  uid: 'vmi-uid',
  controller: true,
  blockOwnerDeletion: true,
};
const kinds = ['kubevirt.io/VirtualMachineInstance'];

t.test('the controller ownerReference names the sharing owner', async (t) => {
  t.same(sharingOwnerOf({ ownerReferences: [vmiRef] }, kinds, 'ns'), {
    key: 'vmi-uid',
    label: 'VM ns/vm1',
    namespace: 'ns',
    kind: 'VirtualMachineInstance',
    name: 'vm1',
  });
  t.equal(sharingOwnerOf({ ownerReferences: [{ ...vmiRef, controller: false }] }, kinds, 'ns'), undefined, 'not the controller');
  t.equal(
    sharingOwnerOf({ ownerReferences: [{ ...vmiRef, apiVersion: 'apps/v1', kind: 'ReplicaSet' }] }, kinds, 'ns'),
    undefined,
    'replicas do not share',
  );
  t.equal(sharingOwnerOf({ ownerReferences: [vmiRef] }, [], 'ns'), undefined, 'an empty list turns sharing off');
  t.same(
    sharingOwnerOf({ ownerReferences: [{ ...vmiRef, uid: undefined }] }, kinds, 'ns')?.key,
    'kubevirt.io/VirtualMachineInstance/ns/vm1',
  );
  t.same(
    sharingOwnerOf(
      { ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: 's', uid: 'u', controller: true }] },
      ['apps/StatefulSet'],
      'ns',
    )?.label,
    'StatefulSet ns/s',
    'configurable',
  );
  t.equal(sharingOwnerOf({ ownerReferences: 'x' }, kinds, 'ns'), undefined);
  t.same(parseSharingOwners(['kubevirt.io/VirtualMachineInstance', 'kubevirt.io/VirtualMachineInstance']), [
    'kubevirt.io/VirtualMachineInstance',
  ]);
  t.throws(() => parseSharingOwners(['VirtualMachineInstance']), /expected group\/Kind/);
});

t.test('sameOwner: by key, or by kind, namespace and name for an owner named before it has a uid', async (t) => {
  const vmi: SharingOwner = { key: 'u1', label: 'VM ns/vm1', namespace: 'ns', kind: 'VirtualMachineInstance', name: 'vm1' };
  const planned: SharingOwner = { ...vmi, key: 'kubevirt.io/VirtualMachineInstance/ns/vm1', anyUid: true };
  const cases: Array<[string, SharingOwner | undefined, SharingOwner | undefined, boolean]> = [
    ['no self', undefined, vmi, false],
    ['no holder', vmi, undefined, false],
    ['one key', vmi, { ...vmi, label: 'other label' }, true],
    ['another key', vmi, { ...vmi, key: 'u2' }, false],
    ['named before its uid: any uid of that kind, namespace and name', planned, vmi, true],
    ['named before its uid: another kind', planned, { ...vmi, kind: 'Pod' }, false],
    ['named before its uid: another name', planned, { ...vmi, name: 'vm2' }, false],
    ['named before its uid: another namespace', planned, { ...vmi, namespace: 'other' }, false],
    ['the holder named before its uid does not make self any uid', vmi, { ...planned, key: 'k' }, false],
    ['anyUid false', { ...planned, anyUid: false }, vmi, false],
  ];
  for (const [what, self, holder, want] of cases) t.equal(sameOwner(self, holder), want, what);
});

t.test('an ownerReference past the bounds of a name, uid, apiVersion or kind shares nothing; at them, it does', async (t) => {
  const longGroup = `${'g'.repeat(247)}.io`;
  const longKind = `K${'k'.repeat(62)}`;
  const owners = [...kinds, `${longGroup}/VirtualMachineInstance`, `kubevirt.io/${longKind}`, `kubevirt.io/${longKind}k`];
  const of = (ref: object) => sharingOwnerOf({ ownerReferences: [{ ...vmiRef, ...ref }] }, owners, 'ns');
  const cases: Array<[string, object, boolean]> = [
    ['a name of 253', { name: 'n'.repeat(253) }, true],
    ['a name of 254', { name: 'n'.repeat(254) }, false],
    ['a uid of 128', { uid: 'u'.repeat(128) }, true],
    ['a uid of 129', { uid: 'u'.repeat(129) }, false],
    ['no uid: keyed by the reference', { uid: undefined }, true],
    ['an apiVersion of 253', { apiVersion: `${longGroup}/v1` }, true],
    ['an apiVersion of 254', { apiVersion: `${longGroup}/v12` }, false],
    ['a kind of 63', { kind: longKind }, true],
    ['a kind of 64', { kind: `${longKind}k` }, false],
  ];
  t.equal(`${longGroup}/v1`.length, 253);
  for (const [what, ref, shares] of cases) t.equal(of(ref) !== undefined, shares, what);
});

t.test('the pod watch indexes a VMI pod under its VM', async (t) => {
  const index = new AddressIndex();
  const annotations = {
    'k8s.v1.cni.cncf.io/networks': '[{"name":"a","namespace":"ns","mac":"02:00:00:00:00:01","interface":"podb1f51a511f1"}]',
  };
  indexPod(index, {
    metadata: { namespace: 'ns', name: 'virt-launcher-vm1-abcde', uid: 'u1', annotations, ownerReferences: [vmiRef] },
  } as never);
  const holders = index.conflicts('mac', '02:00:00:00:00:01', 'ns/a', 'Network', { namespace: 'ns', name: 'someone-else' });
  t.same(
    holders.map((h) => h.owner?.label),
    ['VM ns/vm1'],
  );
  t.same(
    index.conflicts('mac', '02:00:00:00:00:01', 'ns/a', 'Network', {
      namespace: 'ns',
      name: 'virt-launcher-vm1-fghij',
      owner: { key: 'vmi-uid', label: 'VM ns/vm1', namespace: 'ns', kind: 'VirtualMachineInstance', name: 'vm1' },
    }),
    [],
  );
});

t.test("across replicas, a VMI holds its pods' address claims, live while one of its pods is", async (t) => {
  const { holderOf, sameHolder } = await import('../../src/policy/address-leases.js');
  const vm = { key: 'vmi-uid', label: 'VM ns/vm1', namespace: 'ns', kind: 'VirtualMachineInstance', name: 'vm1' };
  const src = holderOf({ namespace: 'ns', name: 'virt-launcher-vm1-a', uid: 'p1', owner: vm })!;
  const dst = holderOf({ namespace: 'ns', name: 'virt-launcher-vm1-b', uid: 'p2', owner: vm })!;
  t.same(src, { kind: 'VirtualMachineInstance', namespace: 'ns', name: 'vm1', uid: 'vmi-uid' });
  t.ok(sameHolder(src, dst), 'the migration target wins the claim its source holds');
  t.notOk(sameHolder(src, holderOf({ namespace: 'ns', name: 'web-1', uid: 'w1' })!), 'a plain pod is its own holder');
  t.equal(
    holderOf({ namespace: 'ns', name: 'web-1' }),
    undefined,
    "a pod without a uid (not the apiserver's validating call) claims nothing",
  );
  const index = new AddressIndex();
  const mac = [{ kind: 'mac' as const, value: '02:00:00:00:00:01', network: 'ns/a' }];
  index.setPod({ namespace: 'ns', name: 'virt-launcher-vm1-a', owner: vm }, mac);
  index.setPod({ namespace: 'ns', name: 'virt-launcher-vm1-b', owner: vm }, mac);
  t.ok(index.ownerHasPods('vmi-uid'));
  t.ok(index.heldBy('mac', '02:00:00:00:00:01', src), 'the VMI holds the address through its pods');
  t.notOk(
    index.heldBy('mac', '02:00:00:00:00:01', { ...src, name: 'vm2' }),
    "a claim naming the VMI's key under another name is not kept alive by it",
  );
  t.notOk(index.heldBy('mac', '02:00:00:00:00:02', src), 'nor one for an address its pods do not use');
  index.removePod('ns', 'virt-launcher-vm1-a');
  t.ok(index.ownerHasPods('vmi-uid'), 'the target still runs');
  t.ok(index.heldBy('mac', '02:00:00:00:00:01', src));
  index.removePod('ns', 'virt-launcher-vm1-b');
  t.notOk(index.ownerHasPods('vmi-uid'), 'the last pod gone: the claim may be swept');
  t.notOk(index.heldBy('mac', '02:00:00:00:00:01', src));
});
