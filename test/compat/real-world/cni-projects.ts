// The plugin projects' own examples: whereabouts v0.9.4, ovs-cni v0.39.0, ib-sriov-cni v1.3.0,
// macvtap-cni v0.13.1, bond-cni (its README at a commit: its one tag, v1.0, predates the example).
import { nad, pod, workload, type RealWorldCase } from './types.js';

const WHEREABOUTS = 'k8snetworkplumbingwg/whereabouts@v0.9.4';
const OVS = 'k8snetworkplumbingwg/ovs-cni@v0.39.0';
const IB = 'k8snetworkplumbingwg/ib-sriov-cni@v1.3.0';
const MACVTAP = 'kubevirt/macvtap-cni@v0.13.1';
const BOND = 'k8snetworkplumbingwg/bond-cni@258926ad54a78e3dc070ab416cf79055e79c279a';

const whereaboutsConf = nad('whereabouts-conf', {
  cniVersion: '0.3.0',
  name: 'whereaboutsexample',
  type: 'macvlan',
  master: 'eth0',
  mode: 'bridge',
  ipam: { type: 'whereabouts', range: '192.168.2.225/28' },
});

/** ovs-cni's marker advertises each bridge as a resource (cmd/marker): ovs-cni.network.kubevirt.io/<bridge>. */
const BR1 = 'ovs-cni.network.kubevirt.io/br1';
const ovsIpamNet = nad(
  'ovs-ipam-net',
  { cniVersion: '0.4.0', type: 'ovs', bridge: 'br1', vlan: 100, ipam: { type: 'static' }, mtu: 1450 },
  { resourceName: BR1 },
);
const MACVTAP_DATAPLANE = 'macvtap.network.kubevirt.io/dataplane';
const dataplane = nad(
  'dataplane',
  { cniVersion: '0.3.1', name: 'dataplane', type: 'macvtap', mtu: 1500 },
  { resourceName: MACVTAP_DATAPLANE },
);
const sriovPf = (n: 1 | 2) =>
  nad(`sriov-net${n}`, { type: 'sriov', name: 'sriov-network', spoofchk: 'off' }, { resourceName: `intel.com/intel_sriov_PF_${n}` });

export const CNI_PROJECTS: RealWorldCase[] = [
  {
    name: 'whereabouts README: Deployment on whereabouts-conf',
    source: `${WHEREABOUTS} README.md`,
    objects: [whereaboutsConf, workload('Deployment', 'netshoot-deployment', { networks: 'whereabouts-conf' })],
    verdict: { allowed: true },
    reason: 'macvlan with whereabouts allocating from 192.168.2.224/28 across the cluster: the ADD succeeds',
  },
  {
    name: 'whereabouts scale test: Deployment of 10 replicas',
    source: `${WHEREABOUTS} yamls/scaleTestDeployment.yaml, yamls/whereaboutsScaleNAD.yaml`,
    objects: [
      nad('whereabouts-scale', {
        cniVersion: '0.3.0',
        name: 'whereabouts-scale',
        type: 'macvlan',
        master: 'eth0',
        mode: 'bridge',
        ipam: { type: 'whereabouts', range: '192.168.2.225/24' },
      }),
      workload('Deployment', 'scale-deployment', { networks: 'whereabouts-scale' }),
    ],
    verdict: { allowed: true },
    reason: 'whereabouts reads the range as a CIDR (host bits allowed) and hands out one address per replica',
  },
  {
    name: 'whereabouts developer notes: etcd back end, gateway in the IPAM',
    source: `${WHEREABOUTS} doc/developer_notes.md`,
    objects: [
      nad('macvlan-conf', {
        cniVersion: '0.3.0',
        name: 'whereaboutsexample',
        type: 'macvlan',
        master: 'eth0',
        mode: 'bridge',
        ipam: {
          type: 'whereabouts',
          range: '192.168.2.225/28',
          etcd_host: '10.107.83.18:2379',
          log_file: '/tmp/whereabouts.log',
          log_level: 'debug',
          gateway: '192.168.2.1',
        },
      }),
      pod('samplepod', { networks: 'macvlan-conf' }),
    ],
    verdict: { allowed: true },
    reason: 'nothing requested; whereabouts allocates (the gateway outside the range only becomes a route on the interface)',
  },
  {
    name: 'ovs-cni README: ovs-conf with the marker resource in the pod',
    source: `${OVS} README.md`,
    objects: [
      nad('ovs-conf', { cniVersion: '0.4.0', type: 'ovs', bridge: 'br1', vlan: 100 }, { resourceName: BR1 }),
      pod('samplepod', { networks: 'ovs-conf', containers: [{ name: 'samplepod', limits: { [BR1]: '1' } }] }),
    ],
    advertised: [BR1],
    verdict: { allowed: true },
    reason: 'the pod already asks for the bridge the marker advertises; ovs attaches a veth to br1 with VLAN 100',
  },
  {
    name: 'ovs-cni example: pod on ovs-net-vlan100 (no resource)',
    source: `${OVS} examples/pod.yml, examples/ovs-net-vlan100.yml`,
    objects: [
      nad('ovs-net-vlan100', { cniVersion: '0.4.0', type: 'ovs', bridge: 'br1', vlan: 100 }),
      pod('samplepod-1', { networks: 'ovs-net-vlan100' }),
    ],
    verdict: { allowed: true },
    reason: 'no resourceName on the NAD: nothing to schedule by, ovs attaches to br1',
  },
  {
    name: 'ovs-cni demo: two networks on one bridge',
    source: `${OVS} docs/demo.md`,
    objects: [
      nad('ovs-net-1', { cniVersion: '0.4.0', type: 'ovs', bridge: 'br1' }, { resourceName: BR1 }),
      nad('ovs-net-2-vlan', { cniVersion: '0.4.0', type: 'ovs', bridge: 'br1', vlan: 100 }, { resourceName: BR1 }),
      pod('samplepod-1', { networks: 'ovs-net-1,ovs-net-2-vlan' }),
    ],
    advertised: [BR1],
    verdict: { allowed: true, injects: { app: { [BR1]: '2' } } },
    reason:
      'the marker advertises br1 (1000 per node by default) where the bridge exists: the injector adds 2, one a selection, and the pod lands on a node with br1',
  },
  {
    name: 'ovs-cni demo: static IP through IP= on ovs-ipam-net',
    source: `${OVS} docs/demo.md`,
    objects: [ovsIpamNet, pod('samplepod-2', { networks: '[{ "name": "ovs-ipam-net", "ips": ["10.10.10.1/24"] }]' })],
    advertised: [BR1],
    verdict: { allowed: true, injects: { app: { [BR1]: '1' } } },
    reason: 'ovs declares no ips capability: Multus sends IP=10.10.10.1/24 in CNI_ARGS, which static (called by ovs) reads',
  },
  {
    name: 'ovs-cni mirror producer: marker-string resourceName',
    source: `${OVS} examples/mirror-producer.yaml`,
    objects: [
      nad(
        'nad-al-cni-1',
        {
          cniVersion: '0.4.0',
          plugins: [
            { type: 'ovs', bridge: 'br-emu-cni', vlan: 1 },
            {
              type: 'ovs-mirror-producer',
              bridge: 'br-emu-cni',
              mirrors: [
                { name: 'mirror-1', ingress: true, egress: true },
                { name: 'mirror-2', ingress: true, egress: false },
              ],
            },
          ],
        },
        { namespace: 'emu-cni', resourceName: 'nad-al-cni-1' },
      ),
      workload('Deployment', 'cni-client-1', {
        namespace: 'emu-cni',
        networks: '[{ "name":"nad-al-cni-1", "namespace":"emu-cni", "interface":"emu-prod" }]',
      }),
    ],
    verdict: { allowed: true },
    reason:
      '"nad-al-cni-1" is no extended resource name (no domain): no device plugin serves it and the apiserver refuses it in a pod. Without an injector the pod runs (ovs, then the mirror producer)',
  },
  {
    name: 'ovs-cni mirror consumer',
    source: `${OVS} examples/mirror-consumer.yaml`,
    objects: [
      nad(
        'nad-al-cni-cons-1',
        {
          cniVersion: '0.4.0',
          plugins: [
            { type: 'ovs', bridge: 'br-emu-cni' },
            {
              type: 'ovs-mirror-consumer',
              bridge: 'br-emu-cni',
              mirrors: [{ name: 'mirror-1' }, { name: 'mirror-2' }, { name: 'mirror-3' }],
            },
          ],
        },
        { namespace: 'emu-cni', resourceName: 'nad-al-cni-cons-1' },
      ),
      workload('Deployment', 'cni-cons-1', {
        namespace: 'emu-cni',
        networks: '[{ "name":"nad-al-cni-cons-1", "namespace":"emu-cni", "interface":"emu-cons" }]',
      }),
    ],
    verdict: { allowed: true },
    reason: 'as the producer: a marker string where a resource name would go, the pod runs without it',
  },
  {
    name: 'ovs-cni hardware offload: trunk on a VF pool',
    source: `${OVS} docs/ovs-offload.md`,
    objects: [
      nad(
        'ovs-trunk-net',
        { cniVersion: '0.4.0', type: 'ovs', bridge: 'br-snic0', trunk: [{ minID: 1050, maxID: 1059 }] },
        { resourceName: 'intel.com/mellanox_snic0' },
      ),
      pod('ovs-offload-pod', { networks: 'ovs-trunk-net', containers: [{ name: 'ovs-offload-container' }] }),
    ],
    advertised: ['intel.com/mellanox_snic0'],
    verdict: { allowed: true, injects: { 'ovs-offload-container': { 'intel.com/mellanox_snic0': '1' } } },
    reason:
      'the doc relies on network-resources-injector to add the VF the SR-IOV device plugin advertises (its config in the same doc); Multus passes its PCI address as deviceID',
  },
  {
    name: 'ib-sriov-cni example: test pod with its VF',
    source: `${IB} deployment/examples/test-pod.yaml, deployment/examples/ib-crd.yaml`,
    objects: [
      nad(
        'ib-sriov-network',
        {
          type: 'ib-sriov',
          cniVersion: '0.3.1',
          name: 'sriov-network',
          pkey: '0x5',
          link_state: 'enable',
          ibKubernetesEnabled: false,
          ipam: { type: 'host-local', subnet: '10.56.217.0/24', routes: [{ dst: '0.0.0.0/0' }], gateway: '10.56.217.1' },
        },
        { resourceName: 'mellanox.com/mlnx_sriov_rdma_ib' },
      ),
      {
        ...pod('my-test-pod', {
          networks: '[{"name": "ib-sriov-network"}]',
          containers: [{ name: 'my-test-ctr', resources: { 'mellanox.com/mlnx_sriov_rdma_ib': '1' } }],
        }),
        metadata: { generateName: 'my-test-pod-', annotations: { 'k8s.v1.cni.cncf.io/networks': '[{"name": "ib-sriov-network"}]' } },
      },
    ],
    advertised: ['mellanox.com/mlnx_sriov_rdma_ib'],
    verdict: { allowed: true },
    reason: 'the pod requests the VF the device plugin config (sriov-dp-configmap.yaml) advertises; ib-sriov with host-local succeeds',
  },
  {
    name: 'macvtap-cni README: pod with the macvtap resource',
    source: `${MACVTAP} README.md`,
    objects: [dataplane, pod('pod', { networks: 'dataplane', containers: [{ name: 'busybox', limits: { [MACVTAP_DATAPLANE]: '1' } }] })],
    advertised: [MACVTAP_DATAPLANE],
    verdict: { allowed: true },
    reason: 'the macvtap device plugin advertises dataplane; Multus passes the macvtap device as deviceID',
  },
  {
    name: 'macvtap-cni README: pod with a MAC',
    source: `${MACVTAP} README.md`,
    objects: [
      dataplane,
      pod('pod-with-mac', {
        networks: '[ { "name":"dataplane", "mac": "02:23:45:67:89:01" } ]',
        containers: [{ name: 'busybox', limits: { [MACVTAP_DATAPLANE]: '1' } }],
      }),
    ],
    advertised: [MACVTAP_DATAPLANE],
    verdict: { allowed: true },
    reason:
      'macvtap-cni reads MAC= from CNI_ARGS (pkg/cni/plugin.go EnvArgs, CmdAdd), which Multus sends to every delegate: the interface gets 02:23:45:67:89:01',
  },
  {
    name: 'bond-cni README: the pod names bond-net, the NAD is bond-net1',
    source: `${BOND} README.md`,
    objects: [
      sriovPf(1),
      sriovPf(2),
      nad('bond-net1', {
        type: 'bond',
        cniVersion: '0.3.1',
        name: 'bond-net1',
        mode: 'active-backup',
        failOverMac: 1,
        linksInContainer: true,
        miimon: '100',
        mtu: 1500,
        links: [{ name: 'net1' }, { name: 'net2' }],
        ipam: { type: 'host-local', subnet: '10.56.217.0/24', routes: [{ dst: '0.0.0.0/0' }], gateway: '10.56.217.1' },
      }),
      pod('test-pod', {
        networks:
          '[{"name": "sriov-net1", "interface": "net1" }, {"name": "sriov-net2", "interface": "net2" }, {"name": "bond-net", "interface": "bond0" }]',
        containers: [{ name: 'bond-test', resources: { 'intel.com/intel_sriov_PF_1': '1', 'intel.com/intel_sriov_PF_2': '1' } }],
      }),
    ],
    advertised: ['intel.com/intel_sriov_PF_1', 'intel.com/intel_sriov_PF_2'],
    verdict: { allowed: false, errors: [/networks\]\[2\]: no such NetworkAttachmentDefinition/] },
    reason:
      'the README creates bond-net1 and names bond-net in the pod: Multus fails "cannot find a network-attachment-definition (bond-net)" after the two VFs',
  },
];
