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
const kubevirt = (binding: unknown) => ({
  apiVersion: 'kubevirt.io/v1',
  kind: 'KubeVirt',
  metadata: { name: 'kubevirt', namespace: 'kubevirt' },
  spec: { configuration: { network: { binding } } },
});
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
    // Binding plugins' NADs come from KubeVirt's configuration: a KubeVirt object in the inputs.
    const refs: unknown[] = c.bindings ? [kubevirt(c.bindings)] : [];
    const nets = c.expected['k8s.v1.cni.cncf.io/networks'];
    for (const el of nets ? (JSON.parse(nets) as Array<{ name: string; namespace: string }>) : [])
      refs.push(nad(el.name, { namespace: el.namespace }));
    const dflt = c.expected['v1.multus-cni.io/default-network'];
    if (dflt) refs.push(nad(dflt.split('/')[1]!, { namespace: dflt.split('/')[0]! }));
    const object = { ...c.object, metadata: { ...(c.object.metadata as object), namespace: c.namespace } };
    const results = checkManifests(inputs(...refs, object), { defaultNamespace: c.namespace });
    const r = results[results.length - 1]!;
    t.ok(r.allowed, `${c.name}: ${JSON.stringify(r.errors)}`);
  }
});

t.test("binding plugins: the KubeVirt object among the inputs, else the cluster's registry", async (t) => {
  const vm = {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachine',
    metadata: meta,
    spec: {
      runStrategy: 'Always',
      template: {
        spec: {
          domain: { devices: { interfaces: [{ name: 'default', binding: { name: 'passt' } }] } },
          networks: [{ name: 'default', pod: {} }],
        },
      },
    },
  };
  const path = 'spec.template.spec.domain.devices.interfaces[0].binding.name';
  const passt = { passt: { networkAttachmentDefinition: 'netbindingpasst' } };
  const cluster = { known: true as const, plugins: passt, from: 'kubevirt/kubevirt' };
  const cases: Array<{
    name: string;
    objects: unknown[];
    registry?: typeof cluster | { known: false; reason: string };
    allowed: boolean;
    errors: string[];
    warning?: RegExp;
  }> = [
    { name: 'no registry: noted', objects: [vm], allowed: true, errors: [], warning: /not known here/ },
    { name: 'in the files, NAD missing: denied at the binding', objects: [kubevirt(passt), vm], allowed: false, errors: [path] },
    { name: 'in the files, NAD among them: allowed', objects: [kubevirt(passt), nad('netbindingpasst'), vm], allowed: true, errors: [] },
    { name: "the cluster's, NAD missing: denied", objects: [vm], registry: cluster, allowed: false, errors: [path] },
    {
      name: 'the files win over the cluster: not registered there, a warning',
      objects: [kubevirt({}), vm],
      registry: cluster,
      allowed: true,
      errors: [],
      warning: /"passt" is not registered/,
    },
    {
      name: "the cluster's registry unknown: noted",
      objects: [vm],
      registry: { known: false, reason: 'KubeVirt is not installed' },
      allowed: true,
      errors: [],
      warning: /not known here/,
    },
  ];
  for (const c of cases) {
    const results = checkManifests(inputs(...c.objects), c.registry ? { kubevirtBindings: c.registry } : {});
    const r = results[results.length - 1]!;
    t.equal(r.allowed, c.allowed, c.name);
    t.same(
      r.errors.map((e) => e.path),
      c.errors,
      `${c.name}: errors`,
    );
    if (c.warning) t.match(r.warnings.join('\n'), c.warning, `${c.name}: warning`);
  }
});
