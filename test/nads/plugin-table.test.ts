import t from 'tap';
import { interfaceCreatorOf } from '../../src/nads/index.js';
import type { CniSummary } from '../../src/nads/types.js';

// The chain check and the interface-name check read one list: a creator for one is a creator for the other.
t.test('dummy and bond create the interface for the interface-name check too', async (t) => {
  for (const type of ['dummy', 'bond', 'ipoib', 'accelerated-bridge', 'macvlan', 'macvtap']) {
    const cni = { plugins: [{ type: 'tuning' }, { type }] } as unknown as CniSummary;
    t.equal(interfaceCreatorOf(cni)?.type, type, type);
  }
  t.equal(
    interfaceCreatorOf({ plugins: [{ type: 'tuning' }, { type: 'x-cni' }] } as unknown as CniSummary),
    undefined,
    'unknown: not a creator',
  );
});

// The special-MAC rule lives once; the annotation warning and the address policy both read it.
t.test('one special-MAC rule', async (t) => {
  const { specialMac, specialMacText } = await import('../../src/annotation/index.js');
  t.equal(specialMac([0, 0, 0, 0, 0, 0]), 'the all-zero MAC');
  t.equal(specialMac([0xff, 0xff, 0xff, 0xff, 0xff, 0xff]), 'the broadcast MAC');
  t.equal(specialMac([0x01, 0, 0x5e, 0, 0, 1]), 'a multicast MAC');
  t.equal(specialMacText([0x03, 0, 0, 0, 0, 1]), 'a multicast MAC (lowest bit of the first octet set)');
  t.equal(specialMac([0x02, 0, 0, 0, 0, 1]), undefined, 'locally administered unicast is fine');
});

// The role lists are views of the one table (PluginFacts.iface), not lists of their own.
t.test('the interface roles come from the table', async (t) => {
  const { CREATES_INTERFACE, SINGLE_INSTANCE_PLUGINS, PLUGIN_FACTS } = await import('../../src/nads/index.js');
  for (const type of ['macvtap', 'ovn-k8s-cni-overlay', 'cilium-cni', 'dummy', 'bond', 'sriov'])
    t.ok(CREATES_INTERFACE.has(type), `${type} creates`);
  for (const type of ['coordinator', 'rdma', 'tuning', 'kubevirt-passt-binding'])
    t.notOk(CREATES_INTERFACE.has(type), `${type} does not create`);
  t.ok(SINGLE_INSTANCE_PLUGINS.has('coordinator'), 'a second coordinator acts on the same interface');
  t.notOk(SINGLE_INSTANCE_PLUGINS.has('kubevirt-passt-binding'), 'the passt binding touches no interface');
  for (const [type, f] of PLUGIN_FACTS) t.equal(CREATES_INTERFACE.has(type), f.iface === 'creates', `${type}: one source`);
});

// The views of the table that the MAC rules and the mutation read, stated as read from the plugins'
// sources (each row's `source`): a change of one fact in the table shows here.
t.test('how each plugin puts a MAC on, and which loader lets runtimeConfig beat cni-args', async (t) => {
  const { SETS_MAC_BY, RUNTIME_CONFIG_OVER_ARGS_CNI } = await import('../../src/nads/index.js');
  t.strictSame(
    [...SETS_MAC_BY].sort(([a], [b]) => a.localeCompare(b)),
    [
      ['accelerated-bridge', 'set'],
      ['bridge', 'create'],
      ['macvlan', 'create'],
      ['macvtap', 'set'],
      ['ovn-k8s-cni-overlay', 'create'],
      ['ovs', 'create'],
      ['sriov', 'set'],
      ['tap', 'create'],
      ['tuning', 'set'],
    ],
  );
  t.strictSame([...RUNTIME_CONFIG_OVER_ARGS_CNI], ['bridge']);
});

t.test('runsWithoutDevice: no when a plugin needs a device ID, yes when every plugin is known and none does', async (t) => {
  const { runsWithoutDevice } = await import('../../src/nads/index.js');
  const cases: Array<[string[], 'yes' | 'no' | 'unknown']> = [
    [['macvlan', 'tuning'], 'yes'],
    [['sriov', 'tuning'], 'no'],
    [['tuning', 'ib-sriov'], 'no'],
    [['x-cni', 'macvtap'], 'no'], // certain: whatever x-cni does, macvtap fails without a device
    [['host-device'], 'unknown'], // its config may name the device itself
    [['macvlan', 'host-device'], 'unknown'],
    [['macvlan', 'x-cni'], 'unknown'],
    [[], 'yes'],
  ];
  for (const [types, want] of cases) t.equal(runsWithoutDevice(types), want, types.join(',') || 'no plugin');
});

t.test('OVN-Kubernetes refuses static IPs where it allocates addresses itself', async (t) => {
  const { PLUGIN_FACTS } = await import('../../src/nads/index.js');
  const refuses = PLUGIN_FACTS.get('ovn-k8s-cni-overlay')!.refusesIps!;
  const tail =
    ', whose addresses ovnkube allocates: OVN-Kubernetes v1.0-v1.1 refuse a static IP there ("cannot allocate a static IP request with IPAM"), and the pod waits for its network';
  t.equal(refuses({ topology: 'layer3' }), `a layer3 network${tail}`);
  t.equal(refuses({ topology: 'layer2', subnets: '10.0.0.0/24' }), `a network with subnets${tail}`);
  t.equal(refuses({ topology: 'layer2', subnets: '  ' }), undefined, 'blank subnets: no IPAM');
  t.equal(refuses({ topology: 'layer2', subnets: '' }), undefined);
  t.equal(refuses({ topology: 'layer2', subnets: ['10.0.0.0/24'] }), undefined, 'not a string: not read');
  t.equal(refuses({ topology: 'localnet' }), undefined);
});
