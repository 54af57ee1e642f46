// A compatibility corpus: objects shaped like those the real clients create (KubeVirt
// virt-launcher pods, their migration targets and NIC hotplug patches; sriov-network-operator
// NADs; the Multus, whereabouts, ib-sriov and ovs examples), each with the verdict a real cluster
// gives it and why. Built from the documented shapes (../shared/reference/real-clients.md and
// cni-runtime.md, read from KubeVirt v1.9.0, Multus v4.3.0, the plugins' releases), not copied.

export const NS = 'vms';
const NETWORKS = 'k8s.v1.cni.cncf.io/networks';

const nad = (name: string, config: object, annotations: Record<string, string> = {}) => ({
  apiVersion: 'k8s.cni.cncf.io/v1',
  kind: 'NetworkAttachmentDefinition',
  metadata: { name, namespace: NS, annotations },
  spec: { config: JSON.stringify(config) },
});

/** NADs as their makers write them. */
export const NADS = [
  // sriov-network-operator (bindata/manifests/cni-config/sriov): no capabilities unless
  // SriovNetwork.spec.capabilities is set, `ipam: {}` when none is given.
  nad(
    'sriov-net',
    {
      cniVersion: '1.0.0',
      name: 'sriov-net',
      type: 'sriov',
      vlan: 100,
      vlanQoS: 0,
      spoofchk: 'on',
      trust: 'off',
      logLevel: 'info',
      ipam: {},
    },
    { 'k8s.v1.cni.cncf.io/resourceName': 'openshift.io/intelnics' },
  ),
  nad(
    'sriov-caps',
    { cniVersion: '1.0.0', name: 'sriov-caps', type: 'sriov', vlan: 0, capabilities: { mac: true, ips: true }, ipam: { type: 'static' } },
    { 'k8s.v1.cni.cncf.io/resourceName': 'openshift.io/intelnics' },
  ),
  // KubeVirt's bridge binding over a Linux bridge, and its passt network binding plugin.
  nad('br1', { cniVersion: '0.3.1', name: 'br1', plugins: [{ type: 'bridge', bridge: 'br1', ipam: {} }, { type: 'tuning' }] }),
  nad('netbindingpasst', { cniVersion: '1.0.0', name: 'netbindingpasst', plugins: [{ type: 'kubevirt-passt-binding' }] }),
  // Multus quickstart: macvlan with host-local.
  nad('macvlan-conf', {
    cniVersion: '0.3.0',
    type: 'macvlan',
    master: 'eth0',
    mode: 'bridge',
    ipam: { type: 'host-local', subnet: '192.168.1.0/24', rangeStart: '192.168.1.200', rangeEnd: '192.168.1.216', gateway: '192.168.1.1' },
  }),
  // Multus how-to: IPs requested through runtimeConfig with static.
  nad('macvlan-static', {
    cniVersion: '0.3.1',
    plugins: [
      { type: 'macvlan', capabilities: { ips: true }, master: 'eth0', mode: 'bridge', ipam: { type: 'static' } },
      { type: 'tuning' },
    ],
  }),
  nad('whereabouts-conf', {
    cniVersion: '0.3.0',
    name: 'whereaboutsexample',
    type: 'macvlan',
    master: 'eth0',
    mode: 'bridge',
    ipam: { type: 'whereabouts', range: '192.168.2.225/28' },
  }),
  nad(
    'ib-sriov',
    {
      cniVersion: '0.3.1',
      name: 'ib-sriov-network',
      type: 'ib-sriov',
      pkey: '0x6611',
      link_state: 'enable',
      rdmaIsolation: true,
      capabilities: { infinibandGUID: true },
      ipam: { type: 'whereabouts', range: '192.168.5.0/24' },
    },
    { 'k8s.v1.cni.cncf.io/resourceName': 'mellanox.com/mlnx_ib' },
  ),
  nad('ovs-net', { cniVersion: '0.4.0', type: 'ovs', bridge: 'br1', vlan: 100 }),
  nad('ipvlan-net', { cniVersion: '0.3.1', type: 'ipvlan', master: 'eth0', ipam: { type: 'host-local', subnet: '10.9.0.0/24' } }),
  nad('vendor-net', { cniVersion: '1.0.0', name: 'vendor-net', type: 'acme-cni' }),
];

const VMI_UID = '7c4f1c52-0000-4000-8000-00000000a001';

/** A virt-launcher pod as virt-controller renders it (pkg/virt-controller/services/template.go). */
export function launcher(
  vm: string,
  suffix: string,
  networks: string,
  extra: { migrationJob?: string; vmiUid?: string; resources?: Record<string, string> } = {},
) {
  const labels: Record<string, string> = {
    'kubevirt.io': 'virt-launcher',
    'kubevirt.io/created-by': extra.vmiUid ?? VMI_UID,
    'vm.kubevirt.io/name': vm,
  };
  if (extra.migrationJob) labels['kubevirt.io/migrationJobUID'] = extra.migrationJob;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `virt-launcher-${vm}-${suffix}`,
      namespace: NS,
      labels,
      annotations: { [NETWORKS]: networks, 'kubevirt.io/domain': vm, 'kubectl.kubernetes.io/default-container': 'compute' },
      ownerReferences: [
        {
          apiVersion: 'kubevirt.io/v1',
          kind: 'VirtualMachineInstance',
          name: vm,
          uid: extra.vmiUid ?? VMI_UID,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      containers: [
        {
          name: 'compute',
          image: 'quay.io/kubevirt/virt-launcher:v1.9.0',
          ...(extra.resources ? { resources: { requests: extra.resources, limits: extra.resources } } : {}),
        },
        { name: 'guest-console-log', image: 'quay.io/kubevirt/virt-launcher:v1.9.0' },
      ],
    },
  };
}

export function plainPod(name: string, networks: string, owner?: { kind: string; apiVersion: string; name: string; uid: string }) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: NS,
      annotations: { [NETWORKS]: networks },
      ...(owner ? { ownerReferences: [{ ...owner, controller: true }] } : {}),
    },
    spec: { containers: [{ name: 'app', image: 'registry.example/app:1' }] },
  };
}

export const KUBEVIRT_CONTROLLER = {
  username: 'system:serviceaccount:kubevirt:kubevirt-controller',
  groups: ['system:serviceaccounts', 'system:serviceaccounts:kubevirt', 'system:authenticated'],
};

export interface CorpusStep {
  /** The pod sent (CREATE), or the pod after the change (UPDATE of `before`). */
  pod: Record<string, unknown>;
  before?: Record<string, unknown>;
  allowed: boolean;
  /** Patterns each error must match, in order (only when denied). */
  errors?: RegExp[];
  /** Patterns of warnings that must be among the response's. */
  warnings?: RegExp[];
  /** Resources the mutating webhook adds to this container (CREATE only). */
  injects?: { container: string; resources: Record<string, string> };
}

export interface CorpusCase {
  name: string;
  /** What happens in a real cluster, and why netattach answers so. */
  why: string;
  /** Policies in force (YAML), if any. */
  policy?: string;
  /** Pods sent in order: later ones see the earlier ones as admitted (a migration). */
  steps: CorpusStep[];
}

const BRIDGE = `[{"name":"br1","namespace":"${NS}","interface":"podb1f51a511f1"}]`;
const SRIOV_MAC = `[{"name":"sriov-net","namespace":"${NS}","mac":"de:ad:00:00:be:af","interface":"pod16477688c0e"}]`;
const UNIQUE_MAC =
  'apiVersion: netattach.io/v1alpha1\nkind: NetworkAttachmentPolicy\nmetadata:\n  name: unique-mac\nspec:\n  rules:\n    uniqueAddresses:\n      mac: Network\n      infiniband-guid: Cluster\n';
const NO_GUID =
  'apiVersion: netattach.io/v1alpha1\nkind: NetworkAttachmentPolicy\nmetadata:\n  name: no-guid\nspec:\n  rules:\n    requestedFields:\n      forbidden: [infiniband-guid, mac]\n';

export const CORPUS: CorpusCase[] = [
  {
    name: 'KubeVirt bridge binding',
    why: 'the JSON form KubeVirt writes (namespace filled, hashed interface name); bridge needs no device',
    steps: [{ pod: launcher('vm-bridge', 'a1b2c', BRIDGE), allowed: true }],
  },
  {
    name: 'KubeVirt SR-IOV VM with a MAC on an operator NAD without capabilities',
    why: 'sriov-cni reads MAC= from CNI_ARGS, which Multus sends to every delegate: the VM gets its MAC. Denied before as "no capability"',
    steps: [
      {
        pod: launcher('vm-sriov', 'd3e4f', SRIOV_MAC),
        allowed: true,
        injects: { container: 'compute', resources: { 'openshift.io/intelnics': '1' } },
      },
    ],
  },
  {
    name: 'KubeVirt passt binding plugin element',
    why: 'a binding element has no interface and carries cni-args {logicNetworkName}; its plugin is third-party and gets no address',
    steps: [
      {
        pod: launcher('vm-passt', 'g5h6i', `[{"name":"netbindingpasst","namespace":"${NS}","cni-args":{"logicNetworkName":"default"}}]`),
        allowed: true,
      },
    ],
  },
  {
    name: 'KubeVirt live migration under a uniqueness policy',
    why: "the target pod carries the source pod's MAC while both run; both belong to one VMI, which holds the MAC",
    policy: UNIQUE_MAC,
    steps: [
      { pod: launcher('vm-mig', 'src01', SRIOV_MAC), allowed: true },
      { pod: launcher('vm-mig', 'dst01', SRIOV_MAC, { migrationJob: 'mig-uid-1' }), allowed: true },
    ],
  },
  {
    name: 'another VM with the same MAC',
    why: 'two VMs on one L2 segment with one MAC is the duplicate the policy exists to prevent',
    policy: UNIQUE_MAC,
    steps: [
      { pod: launcher('vm-one', 'aaaaa', SRIOV_MAC), allowed: true },
      {
        pod: launcher('vm-two', 'bbbbb', SRIOV_MAC, { vmiUid: '7c4f1c52-0000-4000-8000-00000000b002' }),
        allowed: false,
        errors: [/\[0\]\.mac: Forbidden: policy "unique-mac" \(uniqueAddresses\): MAC de:ad:00:00:be:af is already used by VM vms\/vm-one/],
      },
    ],
  },
  {
    name: 'two replicas of a ReplicaSet with one MAC',
    why: 'replicas run side by side for good: they conflict (only owners that move pods share addresses)',
    policy: UNIQUE_MAC,
    steps: [
      {
        pod: plainPod('web-1', `[{"name":"br1","mac":"02:00:00:00:10:01"}]`, {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          name: 'web',
          uid: 'rs-uid',
        }),
        allowed: true,
      },
      {
        pod: plainPod('web-2', `[{"name":"br1","mac":"02:00:00:00:10:01"}]`, {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          name: 'web',
          uid: 'rs-uid',
        }),
        allowed: false,
        errors: [/already used by pod vms\/web-1/],
      },
    ],
  },
  {
    name: 'KubeVirt NIC hotplug of a bridge network',
    why: "virt-controller patches the running pod's annotation; multus-dynamic-networks-controller plugs it in place",
    steps: [
      {
        before: launcher('vm-hot', 'hhhhh', BRIDGE),
        pod: launcher(
          'vm-hot',
          'hhhhh',
          `[{"name":"br1","namespace":"${NS}","interface":"podb1f51a511f1"},{"name":"ovs-net","namespace":"${NS}","interface":"pod1b4f0e98519"}]`,
        ),
        allowed: true,
      },
    ],
  },
  {
    name: 'hotplug of an SR-IOV network',
    why: 'a running pod cannot get a new device: KubeVirt itself migrates for SR-IOV; the controller would fail to plug it',
    steps: [
      {
        before: launcher('vm-hot2', 'iiiii', BRIDGE),
        pod: launcher(
          'vm-hot2',
          'iiiii',
          `[{"name":"br1","namespace":"${NS}","interface":"podb1f51a511f1"},{"name":"sriov-net","namespace":"${NS}","interface":"pod16477688c0e"}]`,
        ),
        allowed: false,
        errors: [
          /\[1\]: Forbidden: vms\/sriov-net needs device resource "openshift\.io\/intelnics" \(1 for the pod's networks; its containers request 0\)/,
        ],
      },
    ],
  },
  {
    name: 'NIC hotunplug',
    why: 'removing an interface is what the dynamic-networks controller does on an absent interface',
    steps: [
      {
        before: launcher(
          'vm-hot3',
          'jjjjj',
          `[{"name":"br1","namespace":"${NS}","interface":"podb1f51a511f1"},{"name":"ovs-net","namespace":"${NS}","interface":"pod1b4f0e98519"}]`,
        ),
        pod: launcher('vm-hot3', 'jjjjj', BRIDGE),
        allowed: true,
      },
    ],
  },
  {
    name: 'Multus quickstart macvlan with host-local, an IP in range',
    why: 'host-local reads one IP= and hands it out when it lies in rangeStart..rangeEnd',
    steps: [{ pod: plainPod('quick', '[{"name":"macvlan-conf","ips":["192.168.1.205/24"]}]'), allowed: true }],
  },
  {
    name: 'host-local with an IP outside its range',
    why: 'host-local fails the ADD: "failed to allocate all requested IPs" (executed, plugins v1.10.0); the pod would hang in ContainerCreating',
    steps: [
      {
        pod: plainPod('quick2', '[{"name":"macvlan-conf","ips":["192.168.1.50"]}]'),
        allowed: false,
        errors: [
          /\[0\]\.ips\[0\]: Invalid value: "192\.168\.1\.50": outside rangeStart\.\.rangeEnd of 192\.168\.1\.0\/24: vms\/macvlan-conf's IPAM "host-local" .* hands out 192\.168\.1\.200-192\.168\.1\.216 there/,
        ],
      },
    ],
  },
  {
    name: 'static IPAM with a bare IP',
    why: 'static reads IP= as CIDRs and fails the ADD on an address without a prefix',
    steps: [
      {
        pod: plainPod('static-bare', '[{"name":"macvlan-static","ips":["10.10.0.5"]}]'),
        allowed: false,
        errors: [/ips\[0\]: Invalid value: "10\.10\.0\.5": vms\/macvlan-static's IPAM "static" .* needs an address with a \/prefix/],
      },
    ],
  },
  {
    name: 'Multus how-to: static IPs and a MAC through macvlan + tuning',
    why: 'static reads the IPs (runtimeConfig and IP=), macvlan and tuning read the MAC',
    steps: [{ pod: plainPod('howto', '[{"name":"macvlan-static","ips":["10.1.1.101/24"],"mac":"c2:b0:57:49:47:f1"}]'), allowed: true }],
  },
  {
    name: 'whereabouts with a requested IP',
    why: 'whereabouts adds it without reserving it in its pool: the pod starts, a duplicate is possible',
    steps: [
      {
        pod: plainPod('wb', '[{"name":"whereabouts-conf","ips":["192.168.2.230/28"]}]'),
        allowed: true,
        warnings: [/without reserving it in its pool/],
      },
    ],
  },
  {
    name: 'ib-sriov with a GUID',
    why: "ib-sriov declares infinibandGUID, so Multus's runtimeConfig reaches it; the device resource is injected",
    steps: [
      {
        pod: plainPod('rdma', '[{"name":"ib-sriov","infiniband-guid":"c2:11:22:33:44:55:66:77"}]'),
        allowed: true,
        injects: { container: 'app', resources: { 'mellanox.com/mlnx_ib': '1' } },
      },
    ],
  },
  {
    name: 'a GUID through cni-args where policy forbids choosing one',
    why: 'ib-sriov reads args.cni.guid whatever the capabilities: the second door is guarded like the first',
    policy: NO_GUID,
    steps: [
      {
        pod: plainPod('rdma2', '[{"name":"ib-sriov","cni-args":{"guid":"c2:11:22:33:44:55:66:78"}}]'),
        allowed: false,
        errors: [
          /cni-args\.guid: Forbidden: policy "no-guid" \(requestedFields\): user ".*" may not set infiniband-guid \(here through cni-args "guid"\)/,
        ],
      },
    ],
  },
  {
    name: 'ib-sriov with a non-string cni-args value',
    why: 'ib-sriov decodes args.cni as map[string]string: its ADD fails on any other value',
    steps: [
      {
        pod: plainPod('rdma3', '[{"name":"ib-sriov","cni-args":{"guid":"c2:11:22:33:44:55:66:79","rdma":true}}]'),
        allowed: false,
        errors: [/cni-args\.rdma: Invalid value: true: must be a string: ib-sriov/],
      },
    ],
  },
  {
    name: 'ovs with a MAC',
    why: 'ovs-cni reads MAC= from CNI_ARGS (it has no runtimeConfig mac)',
    steps: [{ pod: plainPod('ovs', '[{"name":"ovs-net","mac":"02:00:00:00:20:01"}]'), allowed: true }],
  },
  {
    name: 'ipvlan with a MAC',
    why: "ipvlan slaves share the master's MAC: no plugin of the chain reads one, so the request would silently do nothing",
    steps: [
      {
        pod: plainPod('ipvlan', '[{"name":"ipvlan-net","mac":"02:00:00:00:30:01"}]'),
        allowed: false,
        errors: [/\[0\]\.mac: Forbidden: vms\/ipvlan-net would ignore it: no plugin of its chain \(ipvlan\) reads a MAC/],
      },
    ],
  },
  {
    name: 'an 8-byte MAC on macvlan',
    why: 'Multus reads it (ParseMAC takes 8 bytes) but macvlan cannot set it on an Ethernet interface: the ADD fails',
    steps: [
      {
        pod: plainPod('mac8', '[{"name":"macvlan-conf","mac":"02:00:00:00:00:00:00:01"}]'),
        allowed: false,
        errors: [/\[0\]\.mac: Invalid value: "02:00:00:00:00:00:00:01": an 8-byte address: macvlan sets the MAC/],
      },
    ],
  },
  {
    name: 'an explicit all-FF GUID on ib-sriov',
    why: 'ib-sriov accepts an explicit all-FF GUID (only its no-GUID path rejects an all-FF VF GUID): a warning, not a denial',
    steps: [
      {
        pod: plainPod('ff', '[{"name":"ib-sriov","infiniband-guid":"ff:ff:ff:ff:ff:ff:ff:ff"}]'),
        allowed: true,
        injects: { container: 'app', resources: { 'mellanox.com/mlnx_ib': '1' } },
      },
    ],
  },
  {
    name: 'a third-party plugin with a MAC',
    why: 'nobody here knows what acme-cni reads of CNI_ARGS: admitted with a warning naming it',
    steps: [
      {
        pod: plainPod('vendor', '[{"name":"vendor-net","mac":"02:00:00:00:40:01"}]'),
        allowed: true,
        warnings: [/may be ignored: netattach does not know plugin "acme-cni"/],
      },
    ],
  },
  {
    name: 'SR-IOV operator NAD with capabilities and static IPAM',
    why: 'the MAC and IPs reach sriov and static through runtimeConfig and CNI_ARGS',
    steps: [
      {
        pod: plainPod('sriov-caps', '[{"name":"sriov-caps","mac":"02:00:00:00:50:01","ips":["10.20.0.5/24"]}]'),
        allowed: true,
        injects: { container: 'app', resources: { 'openshift.io/intelnics': '1' } },
      },
    ],
  },
];
