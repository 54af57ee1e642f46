import t from 'tap';
import { hashedInterfaceName, renderLauncher, vmPath, VM_RESOURCES } from '../../src/kubevirt/render.js';
import { CORPUS } from './corpus.js';

t.test('hashed pod interface names match the ones KubeVirt asserts', async (t) => {
  // v1.9.0 pkg/network/multus/annotation_test.go: networks "blue" and "red".
  t.equal(hashedInterfaceName('blue'), 'pod16477688c0e');
  t.equal(hashedInterfaceName('red'), 'podb1f51a511f1');
  t.equal(hashedInterfaceName('x').length, 14, '"pod" + 11 hex digits: fits 15 with "-nic"');
});

for (const c of CORPUS) {
  t.test(`corpus: ${c.name}`, async (t) => {
    const where = VM_RESOURCES.get(c.resource);
    t.ok(where, c.resource);
    const r = renderLauncher(c.object, where!.keys, c.namespace, c.bindings);
    t.same(r.annotations, c.expected, c.source);
    if (c.expected['k8s.v1.cni.cncf.io/networks']) {
      t.equal(r.selections.length, (JSON.parse(c.expected['k8s.v1.cni.cncf.io/networks']) as unknown[]).length, 'one source per selection');
    }
  });
}

t.test('paths of the launcher pod map back to the VM', async (t) => {
  const ann = 'metadata.annotations[k8s.v1.cni.cncf.io/networks]';
  const object = CORPUS.find((c) => c.name.startsWith('multus default network'))!.object;
  const r = renderLauncher(object, VM_RESOURCES.get('kubevirt.io/virtualmachines')!.keys, 'apps');
  const s = 'spec.template.spec';
  const cases: Array<[string, string]> = [
    [`${ann}[0]`, `${s}.networks[1].multus.networkName`],
    [`${ann}[0].name`, `${s}.networks[1].multus.networkName`],
    [`${ann}[0].namespace`, `${s}.networks[1].multus.networkName`],
    [`${ann}[0].mac`, `${s}.domain.devices.interfaces[1].macAddress`],
    [`${ann}[0].interface`, `${s}.networks[1].name`],
    ['metadata.annotations[v1.multus-cni.io/default-network]', `${s}.networks[0].multus.networkName`],
    [`${ann}[7]`, `${s}.networks`],
    ['spec.containers[0].resources', 'spec.containers[0].resources'],
  ];
  for (const [pod, vm] of cases) t.equal(vmPath(pod, r), vm, pod);
});

t.test('binding plugins: unknown registry noted, unregistered plugin noted, cni-args path to the binding', async (t) => {
  const object = CORPUS.find((c) => c.name.startsWith('binding plugin NAD first'))!.object;
  const keys = ['spec'];
  const unknown = renderLauncher(object, keys, 'default');
  t.equal(unknown.notes.length, 1);
  t.equal(unknown.notes[0]!.path, 'spec.domain.devices.interfaces[0].binding.name');
  t.equal(unknown.selections.length, 2, 'the multus networks still render');
  const unregistered = renderLauncher(object, keys, 'default', {});
  t.match(unregistered.notes[0]!.text, /not registered/);
  const known = renderLauncher(object, keys, 'default', { 'test-binding': { networkAttachmentDefinition: 'ns2/b' } });
  t.equal(
    vmPath('metadata.annotations[k8s.v1.cni.cncf.io/networks][0].cni-args.logicNetworkName', known),
    'spec.domain.devices.interfaces[0].binding.name',
  );
  t.equal(vmPath('metadata.annotations[k8s.v1.cni.cncf.io/networks][0]', known), 'spec.domain.devices.interfaces[0].binding.name');
});

t.test('hostile shapes render nothing and never throw', async (t) => {
  for (const o of [
    null,
    1,
    'x',
    [],
    { spec: null },
    { spec: { networks: 'x' } },
    { spec: { networks: [null, 1, { multus: 'x' }, { name: 1, multus: { networkName: 2 } }], domain: { devices: { interfaces: 'x' } } } },
  ]) {
    const r = renderLauncher(o, ['spec'], 'ns');
    t.ok(r.selections.length <= 1, JSON.stringify(o));
  }
});

// KubeVirt v1.5.0-v1.9.0 pkg/network/pod/annotations/generator.go Generate renders the networks
// of vmispec.FilterNetworksByInterfaces(networks, nonAbsentIfaces): in interface order, the last
// network of a name, none without an interface; the default network from every network.
t.test('networks render in the order of the interfaces, as FilterNetworksByInterfaces gives them', async (t) => {
  const spec = (networks: unknown[], interfaces: unknown[]) => ({ spec: { networks, domain: { devices: { interfaces } } } });
  const names = (r: ReturnType<typeof renderLauncher>): string[] =>
    (JSON.parse(r.annotations['k8s.v1.cni.cncf.io/networks'] ?? '[]') as Array<{ name: string }>).map((e) => e.name);
  const cases: Array<{ name: string; object: unknown; want: string[]; paths?: string[]; dflt?: string }> = [
    {
      name: 'interfaces listed in another order than networks',
      object: spec(
        [
          { name: 'a', multus: { networkName: 'net-a' } },
          { name: 'b', multus: { networkName: 'net-b' } },
        ],
        [{ name: 'b' }, { name: 'a' }],
      ),
      want: ['net-b', 'net-a'],
      paths: ['spec.networks[1].multus.networkName', 'spec.networks[0].multus.networkName'],
    },
    {
      name: 'a network without an interface is not rendered',
      object: spec(
        [
          { name: 'a', multus: { networkName: 'net-a' } },
          { name: 'orphan', multus: { networkName: 'net-orphan' } },
        ],
        [{ name: 'a' }],
      ),
      want: ['net-a'],
    },
    {
      name: 'two networks of one name: the last one',
      object: spec(
        [
          { name: 'a', multus: { networkName: 'first' } },
          { name: 'a', multus: { networkName: 'last' } },
        ],
        [{ name: 'a' }],
      ),
      want: ['last'],
      paths: ['spec.networks[1].multus.networkName'],
    },
    {
      name: 'the default network is read from every network, its interface absent or not',
      object: spec([{ name: 'main', multus: { networkName: 'infra/primary', default: true } }], [{ name: 'main', state: 'absent' }]),
      want: [],
      dflt: 'infra/primary',
    },
  ];
  for (const c of cases) {
    const r = renderLauncher(c.object, ['spec'], 'ns');
    t.same(names(r), c.want, c.name);
    if (c.paths)
      t.same(
        r.selections.map((s) => s.namePath),
        c.paths,
        `${c.name}: paths`,
      );
    t.equal(r.annotations['v1.multus-cni.io/default-network'], c.dflt, `${c.name}: default network`);
  }
});

t.test('binding plugins against a known registry, table-driven', async (t) => {
  const object = (binding: string, network: unknown = { name: 'net', pod: {} }) => ({
    spec: { networks: [network], domain: { devices: { interfaces: [{ name: 'net', binding: { name: binding } }] } } },
  });
  // Built as bindings.ts builds it (an object literal would make __proto__ the prototype).
  const plugins = Object.fromEntries([
    ['passt', { networkAttachmentDefinition: 'netbindingpasst' }],
    ['tap', { networkAttachmentDefinition: 'kube-system/tap-net' }],
    ['sidecar', {}],
    ['__proto__', { networkAttachmentDefinition: 'proto-net' }],
  ]);
  const cases: Array<{ name: string; binding: string; network?: unknown; want?: string; note?: RegExp }> = [
    {
      name: 'bare NAD name: the VMI namespace',
      binding: 'passt',
      want: '[{"name":"netbindingpasst","namespace":"vms","cni-args":{"logicNetworkName":"net"}}]',
    },
    {
      name: 'ns/name: that namespace',
      binding: 'tap',
      want: '[{"name":"tap-net","namespace":"kube-system","cni-args":{"logicNetworkName":"net"}}]',
    },
    { name: 'registered without a NAD: nothing', binding: 'sidecar' },
    { name: 'not registered: a note, nothing rendered', binding: 'missing', note: /"missing" is not registered/ },
    { name: 'an inherited name is not a registration', binding: 'constructor', note: /"constructor" is not registered/ },
    {
      name: 'a plugin called __proto__ is a plugin',
      binding: '__proto__',
      want: '[{"name":"proto-net","namespace":"vms","cni-args":{"logicNetworkName":"net"}}]',
    },
    {
      name: 'on a multus network: its selection, then the plugin',
      binding: 'passt',
      network: { name: 'net', multus: { networkName: 'blue' } },
      want: '[{"name":"blue","namespace":"vms","interface":"poda08a0fcbdea"},{"name":"netbindingpasst","namespace":"vms","cni-args":{"logicNetworkName":"net"}}]',
    },
  ];
  for (const c of cases) {
    const r = renderLauncher(object(c.binding, c.network), ['spec'], 'vms', plugins);
    t.equal(r.annotations['k8s.v1.cni.cncf.io/networks'], c.want, c.name);
    if (c.note) t.match(r.notes.map((n) => n.text).join('\n'), c.note, `${c.name}: note`);
    else t.same(r.notes, [], `${c.name}: no note`);
  }
});
