// Operators and SDNs that make NADs for their users: sriov-network-operator v1.6.0, the NVIDIA
// network-operator v26.4.1 (its CRs rendered by its manifests/state-*-network templates),
// nvidia-k8s-ipam network-operator-v26.4.1, spiderpool v1.0.6, OVN-Kubernetes v1.0.0.
import { nad, pod, workload, type RealWorldCase } from './types.js';

const SRIOV_OP = 'k8snetworkplumbingwg/sriov-network-operator@v1.6.0';
const NV_OP = 'Mellanox/network-operator@v26.4.1';
const NV_IPAM = 'Mellanox/nvidia-k8s-ipam@network-operator-v26.4.1';
const SPIDER = 'spidernet-io/spiderpool@v1.0.6';
const OVNK = 'ovn-org/ovn-kubernetes@v1.0.0';

/**
 * A SriovNetwork as sriov-network-operator renders it (bindata/manifests/cni-config/sriov,
 * api/v1/helper.go RenderNetAttDef): resource prefix from RESOURCE_PREFIX, vlanQoS 0 and
 * logLevel "info" by the CRD's defaults, the IPAM text with its whitespace removed, verbatim.
 */
function sriovNetwork(
  name: string,
  namespace: string,
  prefix: string,
  resource: string,
  ipam: string,
  extra = '',
): Record<string, unknown> {
  const packed = ipam.split(/\s+/).join('');
  const config = `{"cniVersion":"1.0.0","name":"${name}","type":"sriov","vlan":0,"vlanQoS":0,${extra}"logLevel":"info","ipam":${packed}}`;
  return nad(name, config, { namespace, resourceName: `${prefix}/${resource}` });
}

/** An SriovIBNetwork: type ib-sriov, link_state from linkState, no log keys (the same template). */
function sriovIbNetwork(name: string, namespace: string, prefix: string, resource: string, ipam: string): Record<string, unknown> {
  const packed = ipam.split(/\s+/).join('');
  const config = `{"cniVersion":"1.0.0","name":"${name}","type":"ib-sriov","link_state":"enable","ipam":${packed}}`;
  return nad(name, config, { namespace, resourceName: `${prefix}/${resource}` });
}

/** nv-ipam keeps a static address per node (docs/static-ip.md, Implementation details): a real risk of duplicates. */
const NODE_ONLY = /reserves a requested address on its node only/;
const NV_POOL = '{ "type": "nv-ipam", "poolName": "my-pool" }';
const RDMA_A = 'rdma/rdma_shared_device_a';

const mynet = nad('mynet', {
  cniVersion: '0.3.1',
  plugins: [{ type: 'macvlan', master: 'eth0', mode: 'bridge', capabilities: { ips: true }, ipam: { type: 'nv-ipam', poolName: 'pool1' } }],
});

const spiderMacvlan = (name: string, master: string, second: object = { type: 'coordinator' }) =>
  nad(
    name,
    { cniVersion: '0.3.1', name, plugins: [{ type: 'macvlan', master, mode: 'bridge', ipam: { type: 'spiderpool' } }, second] },
    { namespace: 'kube-system' },
  );
const spiderVeth = { type: 'veth', service_cidr: ['10.96.0.0/12'] };

const l2Network = nad(
  'l2-network',
  {
    cniVersion: '1.0.0',
    name: 'l2-network',
    type: 'ovn-k8s-cni-overlay',
    topology: 'layer2',
    subnets: '10.100.200.0/24',
    mtu: 1300,
    netAttachDefName: 'ns1/l2-network',
    excludeSubnets: '10.100.200.0/29',
  },
  { namespace: 'ns1' },
);

export const VENDORS: RealWorldCase[] = [
  {
    name: 'sriov-network-operator OVS hardware offload: OVSNetwork pod with its VF',
    source: `${SRIOV_OP} doc/ovs-hw-offload.md, bindata/manifests/cni-config/ovs/ovs-cni-config.yaml`,
    objects: [
      nad(
        'ovs',
        '{"cniVersion":"1.0.0","name":"ovs","type":"ovs","vlan":200,"ipam":{"type":"host-local","subnet":"10.56.217.0/24","rangeStart":"10.56.217.171","rangeEnd":"10.56.217.181","routes":[{"dst":"0.0.0.0/0"}],"gateway":"10.56.217.1"}}',
        { resourceName: 'openshift.io/switchdev' },
      ),
      pod('ovs-offload-pod1', { networks: 'ovs', containers: [{ name: 'ovs-offload', resources: { 'openshift.io/switchdev': '1' } }] }),
    ],
    advertised: ['openshift.io/switchdev'],
    verdict: { allowed: true },
    reason:
      "the pod asks for the switchdev VF the operator's policy advertises; ovs-cni picks the bridge from the VF (deviceID) and host-local allocates",
  },
  {
    name: 'sriov-network-operator: SriovNetwork with metaPlugins tuning and vrf',
    source: `${SRIOV_OP} README.md (SriovNetwork example-network, metaPlugins), bindata/manifests/cni-config/sriov/sriov-cni-config.yaml`,
    objects: [
      nad(
        'example-network',
        '{"cniVersion":"1.0.0","name":"example-network","plugins":[{"type":"sriov","vlan":0,"vlanQoS":0,"logLevel":"info","ipam":{"type":"host-local","subnet":"10.56.217.0/24","rangeStart":"10.56.217.171","rangeEnd":"10.56.217.181","routes":[{"dst":"0.0.0.0/0"}],"gateway":"10.56.217.1"}},{"type":"tuning","sysctl":{"net.core.somaxconn":"500"}},{"type":"vrf","vrfname":"red"}]}',
        { namespace: 'example-namespace', resourceName: 'openshift.io/intelnics' },
      ),
      pod('app', { namespace: 'example-namespace', networks: 'example-network' }),
    ],
    advertised: ['openshift.io/intelnics'],
    verdict: { allowed: true, injects: { app: { 'openshift.io/intelnics': '1' } } },
    reason:
      "the operator deploys network-resources-injector, which adds the VF its policy advertises (intelnics); sriov, tuning and vrf then run in turn. The pod is the README's usage of the network, reconstructed",
  },
  {
    name: 'network-operator: host-device network with nv-ipam, VF requested',
    source: `${NV_OP} example/hostdevice-network-pod1.yml, example/crs/mellanox.com_v1alpha1_hostdevicenetwork_cr.yaml, manifests/state-hostdevice-network`,
    objects: [
      nad(
        'example-hostdevice-network',
        `{"cniVersion":"0.3.1","name":"example-hostdevice-network","type":"host-device","ipam":${NV_POOL}}`,
        {
          resourceName: 'nvidia.com/hostdev',
        },
      ),
      pod('test-hostdev-pod-1', {
        networks: 'example-hostdevice-network',
        nodeSelector: { 'kubernetes.io/hostname': 'worker01' },
        containers: [{ name: 'test-hostdev-pod', resources: { 'nvidia.com/hostdev': '1' } }],
      }),
    ],
    advertised: ['nvidia.com/hostdev'],
    verdict: { allowed: true },
    reason:
      "the pod requests the device the operator's SR-IOV device plugin advertises; host-device moves the device in (deviceID) and nv-ipam allocates from my-pool",
  },
  {
    name: 'network-operator: RDMA shared device over a macvlan network',
    source: `${NV_OP} example/rdma-test-pod1.yml, example/crs/mellanox.com_v1alpha1_macvlannetwork_cr.yaml, manifests/state-macvlan-network`,
    objects: [
      nad(
        'rdma-net-ipam',
        `{"cniVersion":"0.3.1","name":"rdma-net-ipam","type":"macvlan","master":"ens2f0","mode":"bridge","mtu":1500,"ipam":${NV_POOL}}`,
      ),
      pod('rdma-test-pod-1', {
        networks: 'rdma-net-ipam',
        nodeSelector: { 'kubernetes.io/hostname': 'worker01' },
        containers: [{ name: 'rdma-test-ctr', resources: { [RDMA_A]: '1' } }],
      }),
    ],
    advertised: [RDMA_A],
    verdict: { allowed: true },
    reason:
      "the pods name rdma-net-ipam, the MacvlanNetwork of the operator's docs (the example CR, renamed): macvlan over ens2f0 with nv-ipam; the RDMA device comes from the shared device plugin, asked by the pod",
  },
  {
    name: 'network-operator: GPU and RDMA over the macvlan network',
    source: `${NV_OP} example/rdma-gpu-test-pod1.yml`,
    objects: [
      nad(
        'rdma-net-ipam',
        `{"cniVersion":"0.3.1","name":"rdma-net-ipam","type":"macvlan","master":"ens2f0","mode":"bridge","mtu":1500,"ipam":${NV_POOL}}`,
      ),
      pod('rdma-gpu-test-pod-1', {
        networks: 'rdma-net-ipam',
        nodeSelector: { 'kubernetes.io/hostname': 'worker01' },
        containers: [{ name: 'rdma-gpu-test-ctr', resources: { 'nvidia.com/gpu': '1', [RDMA_A]: '1' } }],
      }),
    ],
    advertised: [RDMA_A, 'nvidia.com/gpu'],
    verdict: { allowed: true },
    reason: 'as the RDMA pod, with a GPU: nothing about the network needs a device',
  },
  {
    name: 'network-operator: IPoIB network',
    source: `${NV_OP} example/ipoib/rdma-test-pod1.yml, example/crs/mellanox.com_v1alpha1_ipoibnetwork_cr.yaml, manifests/state-ipoib-network`,
    objects: [
      nad(
        'example-ipoibnetwork',
        `{"cniVersion":"0.3.1","name":"example-ipoibnetwork","type":"ipoib","master":"ibs3f1","ipam":${NV_POOL}}`,
      ),
      pod('ib-rdma-test-pod-1', {
        networks: 'example-ipoibnetwork',
        nodeSelector: { 'kubernetes.io/hostname': 'worker01' },
        containers: [{ name: 'rdma-test-ctr', resources: { [RDMA_A]: '1' } }],
      }),
    ],
    advertised: [RDMA_A],
    verdict: { allowed: true },
    reason: 'ipoib adds a child of ibs3f1 in the pod; nv-ipam allocates',
  },
  {
    name: 'network-operator: SriovNetwork with nv-ipam',
    source: `${NV_OP} example/sriov-network/sriov-network-pod1.yaml, example/sriov-network/sriov-network.yaml`,
    objects: [
      sriovNetwork('example-sriov-network', 'default', 'nvidia.com', 'sriovlegacy', NV_POOL),
      pod('test-sriov-pod-1', {
        networks: 'example-sriov-network',
        nodeSelector: { 'kubernetes.io/hostname': 'worker01' },
        containers: [{ name: 'test-sriov-pod', resources: { 'nvidia.com/sriovlegacy': '1' } }],
      }),
    ],
    advertised: ['nvidia.com/sriovlegacy'],
    verdict: { allowed: true },
    reason: 'the pod asks for the VF pool its node policy creates (RESOURCE_PREFIX nvidia.com); sriov with nv-ipam',
  },
  {
    name: 'network-operator: SriovIBNetwork whose IPAM text has a trailing comma',
    source: `${NV_OP} example/sriov-network/infiniband/sriov-network-pod1.yaml, example/sriov-network/infiniband/sriov-ib-network.yaml`,
    objects: [
      sriovIbNetwork('example-sriov-ib-network', 'default', 'nvidia.com', 'mlnxnics', '{ "type": "nv-ipam", "poolName": "my-pool", }'),
      pod('test-sriov-ib-pod-1', {
        networks: 'example-sriov-ib-network',
        nodeSelector: { 'kubernetes.io/hostname': 'worker01' },
        containers: [{ name: 'test-sriov-ib-pod', resources: { 'nvidia.com/mlnxnics': '1' } }],
      }),
    ],
    advertised: ['nvidia.com/mlnxnics'],
    deniedNads: ['example-sriov-ib-network'],
    verdict: { allowed: false, errors: [/spec\.config Multus cannot load .*failed to unmarshal Spec\.Config/] },
    reason:
      'the operator pastes spec.ipam into the config verbatim (RenderNetAttDef checks no JSON): "poolName":"my-pool",} makes spec.config invalid JSON, and Multus fails "failed to unmarshal Spec.Config" on every pod',
  },
  {
    name: 'nvidia-k8s-ipam: static IP without a prefix through ips',
    source: `${NV_IPAM} docs/static-ip.md`,
    objects: [mynet, pod('static-ip-pod', { networks: '[{"name": "mynet", "ips": ["192.168.0.200"]}]' })],
    verdict: { allowed: true, warnings: [NODE_ONLY] },
    reason:
      "macvlan declares ips, so nv-ipam gets runtimeConfig ips and IP=; it takes a bare address as a static request in pool1's subnet (docs/static-ip.md): the ADD succeeds. nv-ipam stores its allocations per node, so the same address may be handed out on another node, as its docs say: warned",
  },
  {
    name: 'nvidia-k8s-ipam: static IP through cni-args ips',
    source: `${NV_IPAM} docs/static-ip.md`,
    objects: [mynet, pod('static-ip-pod', { networks: '[{"name": "mynet", "cni-args": {"ips": ["192.168.0.200"]}}]' })],
    verdict: { allowed: true, warnings: [NODE_ONLY] },
    reason:
      'nv-ipam reads args.cni.ips (docs/extra-cni-args.md): the same address by the second door, with the same per-node reservation: warned',
  },
  {
    name: 'nvidia-k8s-ipam: pool selection and gateway through cni-args',
    source: `${NV_IPAM} docs/extra-cni-args.md`,
    objects: [
      mynet,
      pod('static-ip-pod', {
        networks: '[{"name": "mynet", "cni-args": {"poolNames": ["pool1"], "poolType": "cidrpool", "allocateDefaultGateway": true}}]',
      }),
    ],
    verdict: { allowed: true },
    reason: 'nv-ipam reads poolNames, poolType and allocateDefaultGateway from args.cni; nothing here is an address for another plugin',
  },
  {
    name: 'spiderpool kind quick start: macvlan-vlan0 with coordinator',
    source: `${SPIDER} docs/usage/install/get-started-kind.md, docs/usage/spider-multus-config.md`,
    objects: [
      spiderMacvlan('macvlan-vlan0', 'eth0'),
      workload('Deployment', 'test-app', {
        networks: 'kube-system/macvlan-vlan0',
        annotations: {
          'ipam.spidernet.io/ippools': '[{"interface": "net1", "ipv4": ["default-v4-ippool"], "ipv6": ["default-v6-ippool"]}]',
        },
      }),
    ],
    verdict: { allowed: true },
    reason:
      'the NAD SpiderMultusConfig renders (macvlan, spiderpool IPAM, coordinator); spiderpool reads its own pod annotation for the pools',
  },
  {
    name: 'spiderpool kind quick start: macvlan as the default network',
    source: `${SPIDER} docs/usage/install/get-started-kind.md`,
    objects: [
      spiderMacvlan('macvlan-vlan0', 'eth0'),
      workload('Deployment', 'test-app', {
        defaultNetwork: 'kube-system/macvlan-vlan0',
        annotations: { 'ipam.spidernet.io/ippool': '{"ipv4": ["default-v4-ippool"], "ipv6": ["default-v6-ippool"]}' },
      }),
    ],
    verdict: { allowed: true },
    reason: 'Multus runs the NAD as eth0 (the NAD is in kube-system, where the default network must be)',
  },
  {
    name: 'spiderpool two interfaces by IPPool annotation',
    source: `${SPIDER} docs/example/multi-interfaces-annotation/ippool-test-deploy.yaml, multus-conf.yaml`,
    objects: [
      spiderMacvlan('macvlan-conf-ens192', 'ens192', spiderVeth),
      spiderMacvlan('macvlan-conf-ens224', 'ens224', spiderVeth),
      workload('Deployment', 'ippool-test-app', {
        defaultNetwork: 'kube-system/macvlan-conf-ens192',
        networks: 'kube-system/macvlan-conf-ens224',
        annotations: {
          'ipam.spidernet.io/ippools':
            '[{"interface": "eth0", "ipv4": ["ippool-test-ens192"]},{"interface": "net1", "ipv4": ["ippool-test-ens224"]}]',
        },
      }),
    ],
    verdict: { allowed: true },
    reason: 'macvlan with spiderpool and its veth plugin, as eth0 and net1',
  },
  {
    name: 'spiderpool two interfaces by subnet annotation',
    source: `${SPIDER} docs/example/multi-interfaces-annotation/subnet-test-deploy.yaml, multus-conf.yaml`,
    objects: [
      spiderMacvlan('macvlan-conf-ens192', 'ens192', spiderVeth),
      spiderMacvlan('macvlan-conf-ens224', 'ens224', spiderVeth),
      workload('Deployment', 'test-app', {
        defaultNetwork: 'kube-system/macvlan-conf-ens192',
        networks: 'kube-system/macvlan-conf-ens224',
        annotations: {
          'ipam.spidernet.io/subnets':
            '[{"interface": "eth0", "ipv4": ["subnet-test-ens192"]},{"interface": "net1", "ipv4": ["subnet-test-ens224"]}]',
          'ipam.spidernet.io/ippool-ip-number': '+1',
        },
      }),
    ],
    verdict: { allowed: true },
    reason: 'as the IPPool variant, the pools made from subnets',
  },
  {
    name: 'spiderpool SR-IOV with RDMA and coordinator',
    source: `${SPIDER} docs/usage/spider-multus-config.md (sriov-rdma)`,
    objects: [
      nad(
        'sriov-rdma',
        '{"cniVersion":"0.3.1","name":"sriov-rdma","plugins":[{"vlan":100,"type":"sriov","ipam":{"type":"spiderpool"}},{"type":"rdma"},{"type":"coordinator"}]}',
        { namespace: 'kube-system', resourceName: 'spidernet.io/sriov_netdeivce' },
      ),
      workload('Deployment', 'sriov-app', { networks: 'kube-system/sriov-rdma' }),
    ],
    advertised: ['spidernet.io/sriov_netdeivce'],
    verdict: { allowed: true, injects: { app: { 'spidernet.io/sriov_netdeivce': '1' } } },
    reason:
      "the doc's NAD as rendered (its resourceName spelling kept: the device plugin's config uses the same string); the VF is added by an injector, as spiderpool's own webhook does",
  },
  {
    name: 'OVN-Kubernetes multi-homing: layer3 and layer2 attachments',
    source: `${OVNK} docs/features/multiple-networks/multi-homing.md`,
    objects: [
      nad(
        'l3-network',
        {
          cniVersion: '1.0.0',
          name: 'l3-network',
          type: 'ovn-k8s-cni-overlay',
          topology: 'layer3',
          subnets: '10.128.0.0/16/24',
          mtu: 1300,
          netAttachDefName: 'ns1/l3-network',
        },
        { namespace: 'ns1' },
      ),
      l2Network,
      pod('tinypod', { namespace: 'ns1', networks: 'l3-network,l2-network', containers: [{ name: 'agnhost-container' }] }),
    ],
    verdict: { allowed: true },
    reason: 'ovnkube allocates an address on each network and the CNI wires both',
  },
  {
    name: 'OVN-Kubernetes multi-homing: static IP on a network with subnets',
    source: `${OVNK} docs/features/multiple-networks/multi-homing.md, go-controller/pkg/allocator/pod/pod_annotation.go`,
    objects: [
      l2Network,
      pod('tinypod', {
        namespace: 'ns1',
        networks: '[{ "name": "l2-network", "mac": "02:03:04:05:06:07", "interface": "myiface1", "ips": [ "192.0.2.20/24" ] }]',
        containers: [{ name: 'agnhost-container' }],
      }),
    ],
    verdict: { allowed: false, errors: [/networks\]\[0\]\.ips: /] },
    knownDisagreement:
      'netattach admits it with a warning, not a denial: the refusal is read from OVN-Kubernetes v1.0-v1.1 only (ovnkube, not the CNI call, decides it), and a later release taking static IPs there would make a denial an outage',
    reason:
      'the doc\'s only layer2 network has subnets (IPAM), and ovnkube refuses a static IP there: "cannot allocate a static IP request with IPAM" (allocatePodAnnotation); the pod never gets its OVN annotation and the CNI ADD times out. The doc itself notes static IPs only work without subnets',
  },
];
