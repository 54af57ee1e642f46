// More sources: free5gc-helm v4.2.2 (its charts rendered with multus enabled, the release named
// free5gc-helm as its loxilb values expect), multus-dynamic-networks-controller v0.3.7,
// network-resources-injector v1.9.0 (the peer netattach replaces), sriov-cni v2.10.0.
import { nad, pod, workload, type RealWorldCase } from './types.js';

const FREE5GC = 'free5gc/free5gc-helm@v4.2.2';
const DYNAMIC = 'k8snetworkplumbingwg/multus-dynamic-networks-controller@v0.3.7';
const NRI = 'k8snetworkplumbingwg/network-resources-injector@v1.9.0';
const SRIOV_CNI = 'k8snetworkplumbingwg/sriov-cni@v2.10.0';

/** free5gc-helm's NAD templates (the towards5gs shape): static IPAM, a default route, ips declared. */
function chartNad(
  name: string,
  type: 'ipvlan' | 'macvlan',
  master: string,
  gateway: string,
  namespace = 'free5gc',
): Record<string, unknown> {
  return nad(
    name,
    {
      cniVersion: '0.3.1',
      plugins: [
        {
          type,
          capabilities: { ips: true },
          master,
          mode: type === 'ipvlan' ? 'l2' : 'bridge',
          ipam: { type: 'static', routes: [{ dst: '0.0.0.0/0', gw: gateway }] },
        },
        ...(type === 'macvlan' ? [{ capabilities: { mac: true }, type: 'tuning' }] : []),
      ],
    },
    { namespace },
  );
}
const element = (nadName: string, name: string, ip: string, gateway: string) =>
  `{ "name": "${nadName}", "interface": "${name}", "ips": [ "${ip}" ], "gateway": [ "${gateway}" ] }`;
const GATEWAY_IGNORED = /\.gateway\b.*unknown key, ignored/;
const AMF_N2 = 'n2network-free5gc-helm-free5gc-amf';

const macvlan1Config = nad('macvlan1-config', {
  cniVersion: '0.4.0',
  name: 'macvlan1-config',
  plugins: [{ type: 'macvlan', capabilities: { ips: true }, master: 'eth1', mode: 'bridge', ipam: { type: 'static' } }, { type: 'tuning' }],
});

export const MORE: RealWorldCase[] = [
  {
    name: 'free5gc-helm: AMF with amf.multus.enabled',
    source: `${FREE5GC} charts/free5gc/charts/free5gc-amf/templates/amf-deployment.yaml, amf-n2-nad.yaml, charts/free5gc/values.yaml`,
    objects: [
      chartNad(AMF_N2, 'ipvlan', 'eth0', '10.100.50.254'),
      workload('Deployment', 'free5gc-helm-free5gc-amf-amf', {
        namespace: 'free5gc',
        networks: `[${element(AMF_N2, 'n2', '10.100.50.249/29', '10.100.50.254')}]`,
      }),
    ],
    verdict: { allowed: true, warnings: [GATEWAY_IGNORED] },
    reason:
      'the towards5gs shape in the chart free5gc now maintains: ipvlan and static take the address and the route; "gateway" is ignored by Multus',
  },
  {
    name: 'free5gc-helm: PSA-UPF1 of the default ULCL architecture',
    source: `${FREE5GC} charts/free5gc/charts/free5gc-upf/templates/psaupf1/psaupf1-deployment.yaml, upf-n4-nad.yaml, upf-n6-nad.yaml, upf-n9-nad.yaml`,
    objects: [
      chartNad('n9network-free5gc-helm-free5gc-upf', 'ipvlan', 'eth0', '10.100.50.230'),
      chartNad('n6network-free5gc-helm-free5gc-upf', 'ipvlan', 'eth1', '10.100.100.1'),
      chartNad('n4network-free5gc-helm-free5gc-upf', 'ipvlan', 'eth0', '10.100.50.246'),
      workload('Deployment', 'free5gc-helm-free5gc-upf-psaupf1', {
        namespace: 'free5gc',
        networks: `[${[
          element('n9network-free5gc-helm-free5gc-upf', 'n9', '10.100.50.225/29', '10.100.50.230'),
          element('n6network-free5gc-helm-free5gc-upf', 'n6', '10.100.100.12/24', '10.100.100.1'),
          element('n4network-free5gc-helm-free5gc-upf', 'n4', '10.100.50.242/29', '10.100.50.246'),
        ].join(', ')}]`,
      }),
    ],
    verdict: { allowed: true, warnings: [GATEWAY_IGNORED] },
    reason: 'userPlaneArchitecture ulcl is the default here: three ipvlan interfaces, each gateway in its subnet',
  },
  {
    name: "free5gc-helm: loxilb DaemonSet on the AMF's N2 network",
    source: `${FREE5GC} charts/loxilb/templates/daemonset.yaml, charts/loxilb/values.yaml`,
    objects: [
      chartNad(AMF_N2, 'ipvlan', 'eth0', '10.100.50.254'),
      workload('DaemonSet', 'loxilb-lb', {
        namespace: 'free5gc',
        networks: `[ { "name": "${AMF_N2}", "interface": "n2", "ips": ["10.100.50.253/29"], "gateway": ["10.100.50.254"] }]`,
      }),
    ],
    verdict: { allowed: true, warnings: [GATEWAY_IGNORED] },
    reason:
      "each pod's ADD succeeds (static does not mind that every node's pod takes 10.100.50.253: a duplicate on the segment once the DaemonSet runs on two nodes, which no CNI refuses)",
  },
  {
    name: 'free5gc-helm: PacketRusher gNB on macvlan N2 and N3',
    source: `${FREE5GC} charts/packetrusher/templates/packetrusher-deployment.yaml, packetrusher-n2-nad.yaml, packetrusher-n3-nad.yaml, values.yaml`,
    objects: [
      chartNad('n2network', 'macvlan', 'eth0', '10.100.50.254', 'default'),
      chartNad('n3network', 'macvlan', 'eth0', '10.100.50.238', 'default'),
      workload('Deployment', 'packetrusher', {
        networks: `[${[element('n2network', 'n2', '10.100.50.250/29', '10.100.50.254'), element('n3network', 'n3', '10.100.50.236/29', '10.100.50.238')].join(', ')}]`,
      }),
    ],
    verdict: { allowed: true, warnings: [GATEWAY_IGNORED] },
    reason: 'macvlan with ips declared and tuning: both addresses and routes are set',
  },
  {
    name: 'dynamic networks controller: the original pod',
    source: `${DYNAMIC} examples/original-setup.yaml`,
    objects: [macvlan1Config, pod('macvlan1-worker1', { networks: '[{ "name": "macvlan1-config", "ips": [ "10.1.1.11/24" ] }]' })],
    verdict: { allowed: true },
    reason: 'macvlan declaring ips over static: net1 gets 10.1.1.11/24',
  },
  {
    name: 'dynamic networks controller: three interfaces on one NAD, one with a MAC',
    source: `${DYNAMIC} examples/interface-add.yaml`,
    objects: [
      macvlan1Config,
      pod('macvlan1-worker1', {
        networks:
          '[{ "name": "macvlan1-config", "ips": [ "10.1.1.11/24" ] }, { "name": "macvlan1-config", "interface": "ens4", "ips": ["10.1.1.66/24"] }, { "name": "macvlan1-config", "interface": "ens41", "mac": "02:03:04:05:06:07", "ips": ["10.1.1.111/24"] }]',
      }),
    ],
    verdict: { allowed: true },
    reason:
      'the annotation after the hot-plug, judged as a pod created with it: each interface its own static address (no host-local store to collide in), macvlan sets the MAC from MAC= and tuning keeps it',
  },
  {
    name: 'network-resources-injector README: two selections of foo-network',
    source: `${NRI} README.md`,
    objects: [
      nad(
        'foo-network',
        {
          cniVersion: '0.3.0',
          name: 'foo-network',
          type: 'bridge',
          bridge: 'br0',
          isGateway: true,
          ipam: { type: 'host-local', subnet: '172.36.0.0/24', dataDir: '/mnt/cluster-ipam' },
        },
        { namespace: 'default', resourceName: 'example.com/foo' },
      ),
      pod('webhook-demo', { networks: 'foo-network, foo-network', containers: [{ name: 'busybox' }] }),
    ],
    advertised: ['example.com/foo'],
    verdict: { allowed: true, injects: { busybox: { 'example.com/foo': '2' } } },
    reason:
      'the README patches the node to advertise example.com/foo and expects 2 in the first container, one a selection; bridge and host-local give two interfaces',
  },
  {
    name: 'network-resources-injector README: node selector NAD with invalid JSON',
    source: `${NRI} README.md (Node Selector)`,
    objects: [
      {
        ...nad('test-network', '{\n  "cniVersion": "0.3.1",\n  "type": "macvlan",\n  "master": "eno3",\n  "mode": "bridge",\n  }'),
        metadata: { name: 'test-network', annotations: { 'k8s.v1.cni.cncf.io/nodeSelector': 'master=eno3' } },
      },
      pod('testpod', { networks: 'test-network' }),
    ],
    deniedNads: ['test-network'],
    verdict: { allowed: false, errors: [/spec\.config Multus cannot load .*failed to unmarshal Spec\.Config/] },
    reason:
      'the example config ends "mode": "bridge", }: not JSON. NRI still adds the node selector, but Multus fails "failed to unmarshal Spec.Config" on the pod',
  },
  {
    name: 'sriov-cni configuration reference: a MAC on a VF through runtime config',
    source: `${SRIOV_CNI} docs/configuration-reference.md, README.md (its NAD)`,
    objects: [
      nad(
        'sriov-net',
        {
          type: 'sriov',
          cniVersion: '0.3.1',
          name: 'sriov-network',
          ipam: { type: 'host-local', subnet: '10.56.217.0/24', routes: [{ dst: '0.0.0.0/0' }], gateway: '10.56.217.1' },
        },
        { resourceName: 'intel.com/intel_sriov_netdevice' },
      ),
      pod('samplepod', { networks: '[ { "name": "sriov-net", "mac": "CA:FE:C0:FF:EE:00" } ]' }),
    ],
    advertised: ['intel.com/intel_sriov_netdevice'],
    verdict: { allowed: true, injects: { app: { 'intel.com/intel_sriov_netdevice': '1' } } },
    reason:
      "sriov-cni reads MAC= (a unicast MAC: CA is even); the VF comes from the device plugin, added by the injector (the doc's container is named runTimeConfig, a name the apiserver refuses: renamed here)",
  },
];
