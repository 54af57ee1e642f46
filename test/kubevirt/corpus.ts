// VM shapes from KubeVirt's examples and unit tests, each with the launcher-pod annotations
// KubeVirt produces for it, as KubeVirt's own tests assert them or as its code writes them.
// Shapes are reduced to the fields that decide the annotations (networks and interfaces); each
// entry cites where it comes from (https://github.com/kubevirt/kubevirt at the tag given).
import type { BindingPlugins } from '../../src/kubevirt/bindings.js';

export interface CorpusEntry {
  name: string;
  source: string;
  /** `group/resource` */
  resource: string;
  namespace: string;
  object: Record<string, unknown>;
  bindings?: BindingPlugins;
  /** The launcher pod's annotations KubeVirt writes. */
  expected: Record<string, string>;
}

const NETS = 'k8s.v1.cni.cncf.io/networks';
const DEFAULT = 'v1.multus-cni.io/default-network';

const vmi = (networks: unknown[], interfaces: unknown[]) => ({
  apiVersion: 'kubevirt.io/v1',
  kind: 'VirtualMachineInstance',
  metadata: { name: 'testvmi' },
  spec: { domain: { devices: { interfaces } }, networks },
});
const vm = (networks: unknown[], interfaces: unknown[]) => ({
  apiVersion: 'kubevirt.io/v1',
  kind: 'VirtualMachine',
  metadata: { name: 'vm1' },
  spec: { runStrategy: 'Always', template: { spec: { domain: { devices: { interfaces } }, networks } } },
});

export const CORPUS: CorpusEntry[] = [
  {
    name: 'pod network plus a multus ptp network (bridge binding)',
    source:
      'v1.9.0 examples/vmi-multus-multiple-net.yaml; interface name from pkg/network/namescheme/networknamescheme.go GenerateHashedInterfaceName',
    resource: 'kubevirt.io/virtualmachineinstances',
    namespace: 'default',
    object: vmi(
      [
        { name: 'default', pod: {} },
        { name: 'ptp', multus: { networkName: 'ptp-conf' } },
      ],
      [
        { name: 'default', masquerade: {} },
        { name: 'ptp', bridge: {} },
      ],
    ),
    expected: { [NETS]: '[{"name":"ptp-conf","namespace":"default","interface":"pode31d7ce2712"}]' },
  },
  {
    name: 'only a multus network',
    source: 'v1.9.0 examples/vmi-multus-ptp.yaml',
    resource: 'kubevirt.io/virtualmachineinstances',
    namespace: 'default',
    object: vmi([{ name: 'ptp', multus: { networkName: 'ptp-conf' } }], [{ name: 'ptp', bridge: {} }]),
    expected: { [NETS]: '[{"name":"ptp-conf","namespace":"default","interface":"pode31d7ce2712"}]' },
  },
  {
    name: 'SR-IOV interface on a NAD of another namespace',
    source: 'v1.9.0 examples/vmi-sriov.yaml; pkg/network/multus/nad.go NetAttachDefNamespacedName',
    resource: 'kubevirt.io/virtualmachineinstances',
    namespace: 'default',
    object: vmi(
      [
        { name: 'default', pod: {} },
        { name: 'sriov-net', multus: { networkName: 'sriov/sriov-network' } },
      ],
      [
        { name: 'default', masquerade: {} },
        { name: 'sriov-net', sriov: {} },
      ],
    ),
    expected: { [NETS]: '[{"name":"sriov-network","namespace":"sriov","interface":"pod5862143f341"}]' },
  },
  {
    name: 'binding plugin NAD first, then two multus networks (one namespaced)',
    source: 'v1.9.0 pkg/network/multus/annotation_test.go "should add network binding plugin net-attach-def to multus annotation"',
    resource: 'kubevirt.io/virtualmachineinstances',
    namespace: 'default',
    object: vmi(
      [
        { name: 'default', pod: {} },
        { name: 'blue', multus: { networkName: 'test1' } },
        { name: 'red', multus: { networkName: 'other-namespace/test1' } },
      ],
      [{ name: 'default', binding: { name: 'test-binding' } }, { name: 'blue' }, { name: 'red' }],
    ),
    bindings: { 'test-binding': { networkAttachmentDefinition: 'test-binding-net' } },
    expected: {
      [NETS]:
        '[{"name":"test-binding-net","namespace":"default","cni-args":{"logicNetworkName":"default"}},{"name":"test1","namespace":"default","interface":"pod16477688c0e"},{"name":"test1","namespace":"other-namespace","interface":"podb1f51a511f1"}]',
    },
  },
  {
    name: 'binding plugin registered without a NAD: nothing rendered',
    source: 'v1.9.0 pkg/network/multus/annotation.go newBindingPluginAnnotationData (empty NetworkAttachmentDefinition)',
    resource: 'kubevirt.io/virtualmachineinstances',
    namespace: 'default',
    object: vmi([{ name: 'default', pod: {} }], [{ name: 'default', binding: { name: 'sidecar-only' } }]),
    bindings: { 'sidecar-only': {} },
    expected: {},
  },
  {
    name: 'multus default network and a secondary one with a MAC',
    source:
      'v1.9.0 pkg/network/pod/annotations/generator.go Generate (default-network = networkName as written; mac = interface macAddress)',
    resource: 'kubevirt.io/virtualmachines',
    namespace: 'apps',
    object: vm(
      [
        { name: 'main', multus: { networkName: 'infra/primary', default: true } },
        { name: 'blue', multus: { networkName: 'blue-net' } },
      ],
      [
        { name: 'main', bridge: {} },
        { name: 'blue', bridge: {}, macAddress: '02:00:00:00:00:01' },
      ],
    ),
    expected: {
      [DEFAULT]: 'infra/primary',
      [NETS]: '[{"name":"blue-net","namespace":"apps","mac":"02:00:00:00:00:01","interface":"pod16477688c0e"}]',
    },
  },
  {
    name: 'hot-unplugged interface (state: absent) left out',
    source: 'v1.9.0 pkg/network/pod/annotations/generator.go Generate (nonAbsentIfaces); user guide "Hotplug Network Interfaces"',
    resource: 'kubevirt.io/virtualmachines',
    namespace: 'apps',
    object: vm(
      [
        { name: 'default', pod: {} },
        { name: 'blue', multus: { networkName: 'blue-net' } },
        { name: 'red', multus: { networkName: 'red-net' } },
      ],
      [
        { name: 'default', masquerade: {} },
        { name: 'blue', bridge: {}, state: 'absent' },
        { name: 'red', bridge: {} },
      ],
    ),
    expected: { [NETS]: '[{"name":"red-net","namespace":"apps","interface":"podb1f51a511f1"}]' },
  },
  {
    name: 'VirtualMachinePool template',
    source: 'v1.9.0 examples/vm-pool-cirros.yaml (spec.virtualMachineTemplate) with a multus network added',
    resource: 'pool.kubevirt.io/virtualmachinepools',
    namespace: 'apps',
    object: {
      apiVersion: 'pool.kubevirt.io/v1alpha1',
      kind: 'VirtualMachinePool',
      metadata: { name: 'pool' },
      spec: {
        replicas: 2,
        virtualMachineTemplate: { spec: vm([{ name: 'blue', multus: { networkName: 'blue-net' } }], [{ name: 'blue', bridge: {} }]).spec },
      },
    },
    expected: { [NETS]: '[{"name":"blue-net","namespace":"apps","interface":"pod16477688c0e"}]' },
  },
  {
    name: 'no multus network: no annotation',
    source: 'v1.9.0 examples/vmi-masquerade.yaml',
    resource: 'kubevirt.io/virtualmachineinstances',
    namespace: 'default',
    object: vmi([{ name: 'testmasquerade', pod: {} }], [{ name: 'testmasquerade', masquerade: {} }]),
    expected: {},
  },
];
