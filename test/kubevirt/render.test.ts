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
