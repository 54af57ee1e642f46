// k8snetworkplumbingwg/multus-cni v4.3.0: docs/quickstart.md, docs/how-to-use.md, examples/, e2e/.
import { nad, nadOnNode, pod, type RealWorldCase } from './types.js';

const AT = 'k8snetworkplumbingwg/multus-cni@v4.3.0';
const CNI_VERSION = '0.4.0'; // e2e/templates: {{ CNI_VERSION }}, rendered by e2e/generate_yamls.sh

const quickstartMacvlan = nad('macvlan-conf', {
  cniVersion: '0.3.0',
  type: 'macvlan',
  master: 'eth0',
  mode: 'bridge',
  ipam: {
    type: 'host-local',
    subnet: '192.168.1.0/24',
    rangeStart: '192.168.1.200',
    rangeEnd: '192.168.1.216',
    routes: [{ dst: '0.0.0.0/0' }],
    gateway: '192.168.1.1',
  },
});

const macvlanConf1 = nad('macvlan-conf-1', {
  cniVersion: '0.3.0',
  type: 'macvlan',
  master: 'eth1',
  mode: 'bridge',
  ipam: {
    type: 'host-local',
    ranges: [[{ subnet: '10.10.0.0/16', rangeStart: '10.10.1.20', rangeEnd: '10.10.3.50', gateway: '10.10.0.254' }]],
  },
});
const macvlanConf2 = nadOnNode('macvlan-conf-2');
const macvlanConf3 = nad(
  'macvlan-conf-3',
  {
    cniVersion: '0.3.0',
    type: 'macvlan',
    master: 'eth1',
    mode: 'bridge',
    ipam: { type: 'host-local', ranges: [[{ subnet: '12.10.0.0/16', rangeStart: '12.10.1.20', rangeEnd: '12.10.3.50' }]] },
  },
  { namespace: 'testns1' },
);

const defaultRouteConfig = nad('default-route-config', {
  cniVersion: CNI_VERSION,
  plugins: [{ type: 'macvlan', master: 'eth1', mode: 'bridge', ipam: { type: 'static' } }],
});
const macvlan1Config = nad('macvlan1-config', {
  cniVersion: CNI_VERSION,
  plugins: [{ type: 'macvlan', capabilities: { ips: true }, master: 'eth1', mode: 'bridge', ipam: { type: 'static' } }, { type: 'tuning' }],
});

const DEFAULT_ROUTE_KEPT = /default-route.*(cluster network|default route)/i;

export const MULTUS: RealWorldCase[] = [
  {
    name: 'multus quickstart: macvlan-conf',
    source: `${AT} docs/quickstart.md`,
    objects: [quickstartMacvlan, pod('samplepod', { networks: 'macvlan-conf' })],
    verdict: { allowed: true },
    reason:
      "macvlan on the node's eth0 with host-local handing out 192.168.1.200-216: the ADD succeeds (net1 gets 192.168.1.205 in the doc)",
  },
  {
    name: 'multus quickstart: two interfaces on one NAD',
    source: `${AT} docs/quickstart.md`,
    objects: [quickstartMacvlan, pod('samplepod', { networks: 'macvlan-conf,macvlan-conf' })],
    verdict: { allowed: true },
    reason: 'net1 and net2, each with its own host-local address: nothing is requested, so nothing collides',
  },
  {
    name: 'multus how-to: pod-case-01, a NAD with config and one read on the node',
    source: `${AT} docs/how-to-use.md`,
    objects: [macvlanConf1, macvlanConf2, pod('pod-case-01', { networks: 'macvlan-conf-1, macvlan-conf-2' })],
    verdict: { allowed: true },
    reason:
      'the second NAD has no spec: Multus reads /etc/cni/multus/net.d/macvlan2.conf on the node (the doc writes it on every node); nothing is requested of either',
  },
  {
    name: 'multus how-to: pod-case-02, a NAD in another namespace (simple form)',
    source: `${AT} docs/how-to-use.md`,
    objects: [macvlanConf3, pod('pod-case-02', { networks: 'testns1/macvlan-conf-3' })],
    verdict: { allowed: true },
    reason: 'namespace isolation is off by default: Multus reads testns1/macvlan-conf-3 for a pod in default',
  },
  {
    name: 'multus how-to: pod-case-03, @interface in the simple form',
    source: `${AT} docs/how-to-use.md`,
    objects: [macvlanConf1, pod('pod-case-03', { networks: 'macvlan-conf-1@macvlan1' })],
    verdict: { allowed: true },
    reason: 'the interface is named macvlan1 (15 bytes at most, not eth0/net<N>): the ADD succeeds',
  },
  {
    name: 'multus how-to: pod-case-04, the JSON form',
    source: `${AT} docs/how-to-use.md`,
    objects: [
      macvlanConf1,
      macvlanConf2,
      pod('pod-case-04', { networks: '[{ "name" : "macvlan-conf-1" }, { "name" : "macvlan-conf-2" }]' }),
    ],
    verdict: { allowed: true },
    reason: 'the same two networks as pod-case-01 in the JSON form',
  },
  {
    name: 'multus how-to: pod-case-05, JSON namespace naming a NAD that is not there',
    source: `${AT} docs/how-to-use.md`,
    objects: [macvlanConf1, macvlanConf3, pod('pod-case-05', { networks: '[{ "name" : "macvlan-conf-1", "namespace": "testns1" }]' })],
    verdict: { allowed: false, errors: [/networks\]\[0\]: no such NetworkAttachmentDefinition/] },
    reason:
      'the doc creates macvlan-conf-1 in default and only macvlan-conf-3 in testns1: Multus fails "cannot find a network-attachment-definition (macvlan-conf-1) in namespace (testns1)" and the pod hangs in ContainerCreating',
  },
  {
    name: 'multus how-to: pod-case-06, JSON interface and a second network',
    source: `${AT} docs/how-to-use.md`,
    objects: [
      macvlanConf1,
      macvlanConf2,
      pod('pod-case-06', { networks: '[{ "name" : "macvlan-conf-1", "interface": "macvlan1" }, { "name" : "macvlan-conf-2" }]' }),
    ],
    verdict: { allowed: true },
    reason: 'macvlan1 and net2 (the doc shows both with addresses)',
  },
  {
    name: 'multus how-to: default-route through the macvlan gateway',
    source: `${AT} docs/how-to-use.md`,
    objects: [
      nad('macvlan-conf', {
        cniVersion: '0.3.0',
        type: 'macvlan',
        master: 'eth0',
        mode: 'bridge',
        ipam: {
          type: 'host-local',
          subnet: '192.168.2.0/24',
          rangeStart: '192.168.2.200',
          rangeEnd: '192.168.2.216',
          routes: [{ dst: '0.0.0.0/0' }],
          gateway: '192.168.2.1',
        },
      }),
      pod('samplepod', { networks: '[{ "name": "macvlan-conf", "default-route": ["192.168.2.1"] }]' }),
    ],
    verdict: { allowed: true, warnings: [DEFAULT_ROUTE_KEPT] },
    reason:
      "192.168.2.1 is in net1's subnet, so the ADD succeeds; but Multus v4.3.0 leaves the cluster network's default route in place (DeleteDefaultGW finds no route without a destination; executed, docs/cni-runtime.md): the pod does not get the route the doc shows, a real risk worth the warning",
  },
  {
    name: 'multus configuration: namespace isolation, the positive example',
    source: `${AT} docs/configuration.md`,
    objects: [
      nad(
        'macvlan-conf',
        {
          cniVersion: '0.3.0',
          type: 'macvlan',
          master: 'eth0',
          mode: 'bridge',
          ipam: {
            type: 'host-local',
            subnet: '192.168.1.0/24',
            rangeStart: '192.168.1.200',
            rangeEnd: '192.168.1.216',
            routes: [{ dst: '0.0.0.0/0' }],
            gateway: '192.168.1.1',
          },
        },
        { namespace: 'development' },
      ),
      pod('samplepod', { namespace: 'development', networks: 'macvlan-conf' }),
    ],
    verdict: { allowed: true },
    reason: "the NAD in the pod's own namespace, which namespace isolation allows: the quickstart's macvlan",
  },
  {
    name: 'multus DRA how-to: default network with its own ResourceClaim',
    source: `${AT} docs/how-to-use.md`,
    objects: [
      nad(
        'default',
        {
          cniVersion: '0.4.0',
          dns: {},
          ipam: {},
          logFile: '/var/log/ovn-kubernetes/ovn-k8s-cni-overlay.log',
          logLevel: '4',
          'logfile-maxage': 5,
          'logfile-maxbackups': 5,
          'logfile-maxsize': 100,
          name: 'ovn-kubernetes',
          type: 'ovn-k8s-cni-overlay',
        },
        { resourceName: 'sf-pool-1' },
      ),
      pod('test-sf-claim', {
        defaultNetwork: 'default',
        containers: [{ name: 'with-resource', claims: ['resource'] }],
        resourceClaims: [{ name: 'resource', resourceClaimName: 'sf' }],
      }),
    ],
    verdict: { allowed: false, errors: [/default-network\]\[0\]: no such NetworkAttachmentDefinition/] },
    reason:
      'Multus looks the default network up in its own namespace, kube-system (tryLoadK8sPodDefaultNetwork: parsePodNetworkAnnotation with conf.MultusNamespace), and the doc creates the NAD "default" in default: "cannot find a network-attachment-definition (default) in namespace (kube-system)" on every pod. (Its resourceName "sf-pool-1" is no extended resource: nothing may be added for it either)',
  },
  {
    name: 'multus e2e: static pod on a bridge NAD',
    source: `${AT} e2e/simple-static-pod.yml, e2e/static-pod-nad.yml`,
    objects: [
      nad('bridge-nad', {
        cniVersion: '0.3.1',
        name: 'testnet',
        type: 'bridge',
        bridge: 'testnet0',
        ipam: { type: 'host-local', subnet: '10.10.0.0/16' },
      }),
      pod('static-web', { networks: 'bridge-nad' }),
    ],
    verdict: { allowed: true },
    reason: 'bridge creates testnet0 on the node and a veth; host-local hands out an address of 10.10.0.0/16',
  },
  {
    name: 'multus e2e: default-route1 worker1, static IP and its own gateway',
    source: `${AT} e2e/templates/default-route1.yml.j2`,
    objects: [
      defaultRouteConfig,
      pod('default-route-worker1', {
        networks: '[{ "name": "default-route-config", "ips": [ "10.1.1.21/24" ], "default-route": [ "10.1.1.254" ] }]',
      }),
    ],
    verdict: { allowed: true, warnings: [DEFAULT_ROUTE_KEPT] },
    reason:
      'macvlan does not declare ips, so the address travels as IP=10.1.1.21/24 in CNI_ARGS, which static reads; 10.1.1.254 is in 10.1.1.0/24. The cluster default route stays (Multus v4.3.0): warned',
  },
  {
    name: 'multus e2e: default-route1 worker2, static IP only',
    source: `${AT} e2e/templates/default-route1.yml.j2`,
    objects: [
      defaultRouteConfig,
      pod('default-route-worker2', { networks: '[{ "name": "default-route-config", "ips": [ "10.1.1.22/24" ] }]' }),
    ],
    verdict: { allowed: true },
    reason: 'static reads IP= from CNI_ARGS: net1 gets 10.1.1.22/24',
  },
  {
    name: 'multus e2e: simple-macvlan1 worker1, ips capability',
    source: `${AT} e2e/templates/simple-macvlan1.yml.j2`,
    objects: [
      macvlan1Config,
      pod('macvlan1-worker1', {
        networks: '[{ "name": "macvlan1-config", "ips": [ "10.1.1.11/24" ] }]',
        nodeSelector: { 'kubernetes.io/hostname': 'kind-worker' },
      }),
    ],
    verdict: { allowed: true },
    reason: 'macvlan declares ips: runtimeConfig and IP= carry the same address to static',
  },
  {
    name: 'multus e2e: simple-macvlan1 worker2',
    source: `${AT} e2e/templates/simple-macvlan1.yml.j2`,
    objects: [
      macvlan1Config,
      pod('macvlan1-worker2', {
        networks: '[{ "name": "macvlan1-config", "ips": [ "10.1.1.12/24" ] }]',
        nodeSelector: { 'kubernetes.io/hostname': 'kind-worker2' },
      }),
    ],
    verdict: { allowed: true },
    reason: 'as worker1, another address on another node',
  },
  {
    name: 'multus e2e: DRA integration, resourceName that is no extended resource',
    source: `${AT} e2e/templates/dra-integration.yml.j2`,
    objects: [
      {
        apiVersion: 'resource.k8s.io/v1beta1',
        kind: 'ResourceClaimTemplate',
        metadata: { name: 'single-gpu' },
        spec: { spec: { devices: { requests: [{ name: 'gpu', deviceClassName: 'gpu.example.com' }] } } },
      },
      nad(
        'dra-net',
        { cniVersion: CNI_VERSION, plugins: [{ name: 'mynet', type: 'dummy', ipam: { type: 'host-local', subnet: '10.1.2.0/24' } }] },
        { resourceName: 'single-gpu' },
      ),
      pod('dra-integration', {
        networks: 'default/dra-net',
        containers: [{ name: 'ctr0', claims: ['gpu'] }],
        resourceClaims: [{ name: 'gpu', resourceClaimTemplateName: 'single-gpu' }],
      }),
    ],
    verdict: { allowed: true },
    reason:
      'dummy with host-local succeeds; with DRA Multus compares "single-gpu" with the allocated device\'s attribute. The pod brings its own claim: an extended resource "single-gpu" is a name the apiserver refuses',
  },
  {
    name: 'multus example: macvlan + tuning with ips, mac and a "gateway" key',
    source: `${AT} examples/macvlan-pod.yml`,
    objects: [
      nad('macvlan-conf', {
        cniVersion: '0.3.1',
        plugins: [
          {
            type: 'macvlan',
            capabilities: { ips: true },
            master: 'eth0',
            mode: 'bridge',
            ipam: { type: 'static', routes: [{ dst: '0.0.0.0/0', gw: '10.1.1.1' }] },
          },
          { capabilities: { mac: true }, type: 'tuning' },
        ],
      }),
      pod('samplepod', {
        networks: '[{ "name": "macvlan-conf", "ips": [ "10.1.1.101/24" ], "mac": "c2:b0:57:49:47:f1", "gateway": [ "10.1.1.1" ] }]',
      }),
    ],
    verdict: { allowed: true, warnings: [/gateway/] },
    reason:
      'static takes 10.1.1.101/24 and the route via 10.1.1.1 (in its subnet); macvlan and tuning set the MAC. "gateway" is no key of the network selection element (Multus reads "default-route"): it is dropped silently, so the default route the comment promises is not set. A warning names it',
  },
  {
    name: 'multus example: SR-IOV pod requesting its VF',
    source: `${AT} examples/sriov-pod.yml`,
    objects: [
      nad(
        'sriov-net-a',
        {
          type: 'sriov',
          vlan: 1000,
          ipam: {
            type: 'host-local',
            subnet: '10.56.217.0/24',
            rangeStart: '10.56.217.171',
            rangeEnd: '10.56.217.181',
            routes: [{ dst: '0.0.0.0/0' }],
            gateway: '10.56.217.1',
          },
        },
        { resourceName: 'intel.com/sriov' },
      ),
      pod('testpod1', { networks: 'sriov-net-a', containers: [{ name: 'appcntr1', resources: { 'intel.com/sriov': '1' } }] }),
    ],
    advertised: ['intel.com/sriov'],
    verdict: { allowed: true },
    reason: 'the pod already requests its VF (as the device plugin advertises it): nothing to add; sriov with host-local succeeds',
  },
];
