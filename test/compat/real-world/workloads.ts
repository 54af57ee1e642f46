// Workloads that others render: KubeVirt's virt-launcher pods for the user guide's VMs
// (kubevirt/user-guide at a commit: it has no releases; the pod as KubeVirt v1.9.0 renders it) and
// the 5G core of towards5gs-helm (its charts at a commit, rendered with their default values, the
// release named free5gc as its README installs it).
import { createHash } from 'node:crypto';
import { launcher, nad, workload, type RealWorldCase } from './types.js';

const GUIDE = 'kubevirt/user-guide@bf1f3564e2a41eb059df5ab126724bb78cf15200';
const FIVEG = 'Orange-OpenSource/towards5gs-helm@f3cdb1caaa0824adf456dea649e4e49aa98ff99e';

/** KubeVirt's pod interface name for a VM network: "pod" and 11 hex of its name's sha256 (namescheme.GenerateHashedInterfaceName). */
const podIface = (network: string): string => `pod${createHash('sha256').update(network).digest('hex').slice(0, 11)}`;
const element = (nadName: string, network: string, mac?: string): string =>
  JSON.stringify([{ name: nadName, namespace: 'default', ...(mac ? { mac } : {}), interface: podIface(network) }]);

/** The chart's NAD (charts/free5gc/charts/*\/templates/*-nad.yaml): static IPAM with a default route, ips declared. */
function fivegNad(name: string, type: 'ipvlan' | 'macvlan', master: string, gateway: string): Record<string, unknown> {
  return nad(name, {
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
  });
}
const iface = (nadName: string, name: string, ip: string, gateway: string) =>
  `{ "name": "${nadName}", "interface": "${name}", "ips": [ "${ip}" ], "gateway": [ "${gateway}" ] }`;

const GATEWAY_IGNORED = /\.gateway\b.*unknown key, ignored/;

export const WORKLOADS: RealWorldCase[] = [
  {
    name: 'KubeVirt user guide: VM on a Linux bridge (virt-launcher pod)',
    source: `${GUIDE} docs/network/interfaces_and_networks.md (linux-bridge-net-ipam)`,
    objects: [
      nad('linux-bridge-net-ipam', {
        cniVersion: '0.3.1',
        name: 'mynet',
        plugins: [{ type: 'bridge', bridge: 'br10', disableContainerInterface: true, macspoofchk: true }],
      }),
      launcher('vm-bridge', element('linux-bridge-net-ipam', 'bridge-net')),
    ],
    verdict: { allowed: true },
    reason: 'bridge without IPAM attaches the pod to br10; KubeVirt then binds the VM to it',
  },
  {
    name: 'KubeVirt user guide: bridge with macspoofchk',
    source: `${GUIDE} docs/network/interfaces_and_networks.md (br-spoof-check)`,
    objects: [
      nad('br-spoof-check', {
        cniVersion: '0.3.1',
        name: 'br-spoof-check',
        type: 'bridge',
        bridge: 'br10',
        disableContainerInterface: true,
        macspoofchk: true,
      }),
      launcher('vm-spoof', element('br-spoof-check', 'br10')),
    ],
    verdict: { allowed: true },
    reason: 'as above, one plugin config instead of a list',
  },
  {
    name: 'KubeVirt user guide: a MAC on ptp through tuning',
    source: `${GUIDE} docs/network/interfaces_and_networks.md (ptp-mac, macAddress)`,
    objects: [
      nad('ptp-mac', {
        cniVersion: '0.3.1',
        name: 'ptp-mac',
        plugins: [{ type: 'ptp', ipam: { type: 'host-local', subnet: '10.1.1.0/24' } }, { type: 'tuning' }],
      }),
      launcher('vm-ptp', element('ptp-mac', 'ptp', 'de:ad:00:00:be:af')),
    ],
    verdict: { allowed: true },
    reason: "KubeVirt writes the VM interface's macAddress as mac; ptp sets none, tuning sets it from MAC= (the guide's workaround)",
  },
  {
    name: 'KubeVirt user guide: SR-IOV VM with a MAC, the VF injected',
    source: `${GUIDE} docs/network/interfaces_and_networks.md (Start an SR-IOV VM, Network Resource Injection); NAD: k8snetworkplumbingwg/sriov-network-operator@v1.6.0 bindata/manifests/cni-config/sriov`,
    objects: [
      nad('sriov-net', '{"cniVersion":"1.0.0","name":"sriov-net","type":"sriov","vlan":0,"vlanQoS":0,"logLevel":"info","ipam":{}}', {
        resourceName: 'openshift.io/intelnics',
      }),
      launcher('vm-sriov', element('sriov-net', 'sriov-net', 'de:ad:00:00:be:af')),
    ],
    advertised: ['openshift.io/intelnics'],
    verdict: { allowed: true, injects: { compute: { 'openshift.io/intelnics': '1' } } },
    reason:
      'KubeVirt v1.9 leaves the device to an injector (ExternalNetResourceInjection); the VF goes to compute, the first container, and sriov-cni sets the MAC from MAC=',
  },
  {
    name: 'KubeVirt user guide: macvtap binding plugin, the device injected',
    source: `${GUIDE} docs/network/net_binding_plugins/macvtap.md`,
    objects: [
      nad(
        'macvtapnetwork',
        { cniVersion: '0.3.1', name: 'macvtapnetwork', type: 'macvtap', mtu: 1500 },
        { resourceName: 'macvtap.network.kubevirt.io/eth0' },
      ),
      launcher('vm-net-binding-macvtap', element('macvtapnetwork', 'hostnetwork')),
    ],
    advertised: ['macvtap.network.kubevirt.io/eth0'],
    verdict: { allowed: true, injects: { compute: { 'macvtap.network.kubevirt.io/eth0': '1' } } },
    reason:
      'the macvtap binding registers no NAD of its own, so the network is an ordinary element; the macvtap device plugin exposes eth0 (lowerDevice in its ConfigMap) and KubeVirt v1.9 leaves the request to an injector',
  },
  {
    name: 'KubeVirt user guide: passt binding plugin element',
    source: `${GUIDE} docs/network/net_binding_plugins/passt.md`,
    objects: [
      nad('netbindingpasst', { cniVersion: '1.0.0', name: 'netbindingpasst', plugins: [{ type: 'kubevirt-passt-binding' }] }),
      launcher('vm-passt', '[{"name":"netbindingpasst","namespace":"default","cni-args":{"logicNetworkName":"default"}}]'),
    ],
    verdict: { allowed: true },
    reason:
      'the registration names default/netbindingpasst: KubeVirt adds an element without interface whose cni-args tell the binding CNI which VM network it serves (annotation.go newBindingPluginAnnotationData); nothing is requested',
  },
  {
    name: 'towards5gs free5gc: AMF on N2 (ipvlan, static, "gateway")',
    source: `${FIVEG} charts/free5gc/charts/free5gc-amf/templates/amf-deployment.yaml, amf-n2-nad.yaml, charts/free5gc/values.yaml`,
    objects: [
      fivegNad('n2network-free5gc-free5gc-amf', 'ipvlan', 'eth0', '10.100.50.254'),
      workload('Deployment', 'free5gc-free5gc-amf-amf', {
        networks: `[${iface('n2network-free5gc-free5gc-amf', 'n2', '10.100.50.249/29', '10.100.50.254')}]`,
      }),
    ],
    verdict: { allowed: true, warnings: [GATEWAY_IGNORED] },
    reason:
      'ipvlan declares ips: static takes 10.100.50.249/29 from runtimeConfig and adds a default route via .254, in that subnet (a second default route beside the cluster network\'s is added, not refused). "gateway" is no Multus key: ignored, which the chart may not expect',
  },
  {
    name: 'towards5gs free5gc: AMF with n2network.type=macvlan',
    source: `${FIVEG} charts/free5gc/charts/free5gc-amf/templates/amf-n2-nad.yaml (the macvlan branch)`,
    objects: [
      fivegNad('n2network-free5gc-free5gc-amf', 'macvlan', 'eth0', '10.100.50.254'),
      workload('Deployment', 'free5gc-free5gc-amf-amf', {
        networks: `[${iface('n2network-free5gc-free5gc-amf', 'n2', '10.100.50.249/29', '10.100.50.254')}]`,
      }),
    ],
    verdict: { allowed: true, warnings: [GATEWAY_IGNORED] },
    reason: "the template's macvlan branch adds tuning; the same addresses and route",
  },
  {
    name: 'towards5gs free5gc: SMF on N4',
    source: `${FIVEG} charts/free5gc/charts/free5gc-smf/templates/smf-deployment.yaml, smf-n4-nad.yaml`,
    objects: [
      fivegNad('n4network-free5gc-free5gc-smf', 'ipvlan', 'eth0', '10.100.50.246'),
      workload('Deployment', 'free5gc-free5gc-smf-smf', {
        networks: `[${iface('n4network-free5gc-free5gc-smf', 'n4', '10.100.50.244/29', '10.100.50.246')}]`,
      }),
    ],
    verdict: { allowed: true, warnings: [GATEWAY_IGNORED] },
    reason: 'as the AMF, on N4: 10.100.50.244/29 and a default route via .246, in its subnet',
  },
  {
    name: 'towards5gs free5gc: UPF on N3, N6 and N4',
    source: `${FIVEG} charts/free5gc/charts/free5gc-upf/templates/upf/upf-deployment.yaml, upf-n3-nad.yaml, upf-n4-nad.yaml, upf-n6-nad.yaml`,
    objects: [
      fivegNad('n3network-free5gc-free5gc-upf', 'ipvlan', 'eth0', '10.100.50.238'),
      fivegNad('n6network-free5gc-free5gc-upf', 'ipvlan', 'eth1', '10.100.100.1'),
      fivegNad('n4network-free5gc-free5gc-upf', 'ipvlan', 'eth0', '10.100.50.246'),
      workload('Deployment', 'free5gc-free5gc-upf-upf', {
        networks: `[${[
          iface('n3network-free5gc-free5gc-upf', 'n3', '10.100.50.233/29', '10.100.50.238'),
          iface('n6network-free5gc-free5gc-upf', 'n6', '10.100.100.12/24', '10.100.100.1'),
          iface('n4network-free5gc-free5gc-upf', 'n4', '10.100.50.241/29', '10.100.50.246'),
        ].join(', ')}]`,
      }),
    ],
    verdict: { allowed: true, warnings: [GATEWAY_IGNORED] },
    reason:
      'three ipvlan interfaces, each with its address and a default route via a gateway in its subnet; "gateway" on every element is one cause: one warning',
  },
  {
    name: 'towards5gs free5gc: UPF1 of the ULCL architecture on N9, N6 and N4',
    source: `${FIVEG} charts/free5gc/charts/free5gc-upf/templates/upf1/upf1-deployment.yaml, upf-n9-nad.yaml, charts/free5gc-upf/values.yaml (upf1)`,
    objects: [
      fivegNad('n9network-free5gc-free5gc-upf', 'ipvlan', 'eth0', '10.100.50.230'),
      fivegNad('n6network-free5gc-free5gc-upf', 'ipvlan', 'eth1', '10.100.100.1'),
      fivegNad('n4network-free5gc-free5gc-upf', 'ipvlan', 'eth0', '10.100.50.246'),
      workload('Deployment', 'free5gc-free5gc-upf-upf1', {
        networks: `[${[
          iface('n9network-free5gc-free5gc-upf', 'n9', '10.100.50.226/29', '10.100.50.230'),
          iface('n6network-free5gc-free5gc-upf', 'n6', '10.100.100.13/24', '10.100.100.1'),
          iface('n4network-free5gc-free5gc-upf', 'n4', '10.100.50.242/29', '10.100.50.246'),
        ].join(', ')}]`,
      }),
    ],
    verdict: { allowed: true, warnings: [GATEWAY_IGNORED] },
    reason: 'userPlaneArchitecture ulcl: the same shape on N9 instead of N3',
  },
  {
    name: 'towards5gs UERANSIM: gNB on N2 and N3',
    source: `${FIVEG} charts/ueransim/templates/gnb/gnb-deployment.yaml, gnb-n2-nad.yaml, gnb-n3-nad.yaml, charts/ueransim/values.yaml`,
    objects: [
      fivegNad('n2network-ueransim', 'ipvlan', 'eth0', '10.100.50.254'),
      fivegNad('n3network-ueransim', 'ipvlan', 'eth0', '10.100.50.238'),
      workload('Deployment', 'ueransim-gnb', {
        networks: `[${[
          iface('n2network-ueransim', 'n2', '10.100.50.250/29', '10.100.50.254'),
          iface('n3network-ueransim', 'n3', '10.100.50.236/29', '10.100.50.238'),
        ].join(', ')}]`,
      }),
    ],
    verdict: { allowed: true, warnings: [GATEWAY_IGNORED] },
    reason: 'two ipvlan interfaces on eth0 with static addresses and routes',
  },
];
