// `netattach check` on KubeVirt files: VMs, VMIs and pools judged as their launcher pod, at the VM's paths.
import t from 'tap';
import { checkManifests } from '../../src/check/index.js';
import { inputs, nad } from './helpers.js';
import { CORPUS } from '../kubevirt/corpus.js';

const spec = {
  domain: {
    devices: {
      interfaces: [
        { name: 'default', masquerade: {} },
        { name: 'blue', bridge: {}, macAddress: 'zz:00:00:00:00:01' },
      ],
    },
  },
  networks: [
    { name: 'default', pod: {} },
    { name: 'blue', multus: { networkName: 'missing' } },
  ],
};
const meta = { name: 'v', namespace: 'default' };
const KINDS = [
  {
    object: { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachine', metadata: meta, spec: { runStrategy: 'Always', template: { spec } } },
    at: 'spec.template.spec',
  },
  { object: { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', metadata: meta, spec }, at: 'spec' },
  {
    object: { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstanceReplicaSet', metadata: meta, spec: { template: { spec } } },
    at: 'spec.template.spec',
  },
  {
    object: {
      apiVersion: 'pool.kubevirt.io/v1alpha1',
      kind: 'VirtualMachinePool',
      metadata: meta,
      spec: { virtualMachineTemplate: { spec: { template: { spec } } } },
    },
    at: 'spec.virtualMachineTemplate.spec.template.spec',
  },
];

t.test('every KubeVirt kind: errors at the VM fields', async (t) => {
  for (const k of KINDS) {
    const [r] = checkManifests(inputs(k.object));
    t.equal(r!.allowed, false, k.object.kind);
    t.same(
      r!.errors.map((e) => e.path).sort(),
      [`${k.at}.domain.devices.interfaces[1].macAddress`, `${k.at}.networks[1].multus.networkName`].sort(),
      k.object.kind,
    );
  }
});

t.test('the corpus VMs pass when their NADs exist', async (t) => {
  for (const c of CORPUS) {
    if (c.bindings) continue; // binding plugins' NADs come from KubeVirt's configuration, not the file
    const refs: unknown[] = [];
    const nets = c.expected['k8s.v1.cni.cncf.io/networks'];
    for (const el of nets ? (JSON.parse(nets) as Array<{ name: string; namespace: string }>) : [])
      refs.push(nad(el.name, { namespace: el.namespace }));
    const dflt = c.expected['v1.multus-cni.io/default-network'];
    if (dflt) refs.push(nad(dflt.split('/')[1]!, { namespace: dflt.split('/')[0]! }));
    const object = { ...c.object, metadata: { ...(c.object.metadata as object), namespace: c.namespace } };
    const results = checkManifests(inputs(...refs, object));
    const r = results[results.length - 1]!;
    t.ok(r.allowed, `${c.name}: ${JSON.stringify(r.errors)}`);
  }
});
