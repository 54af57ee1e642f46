// Verdicts on the plugins seen in real clusters beyond the reference set (src/nads/plugins.ts rows
// read from their sources: spiderpool and its coordinator, nv-ipam, macvtap, OVN-Kubernetes,
// KubeVirt's passt binding, rdma, bond, dummy). Each row: the selection, and the errors, findings
// and warnings netattach gives, with the reason from the plugin's source in its name.
import t from 'tap';
import { parseNetworks } from '../../src/annotation/index.js';
import { builtinChecks } from '../../src/admission/builtin.js';
import { renderError } from '../../src/field/index.js';
import { NO_EXTRA_READERS } from '../../src/nads/index.js';
import { chain, nadLookup, nadObject } from './fixtures.js';

const nads = nadLookup(
  nadObject('spider', { config: chain({ type: 'macvlan', master: 'eth0', ipam: { type: 'spiderpool' } }) }),
  nadObject('spider-coord', {
    config: chain(
      { type: 'macvlan', master: 'eth0', ipam: { type: 'host-local', ranges: [[{ subnet: '10.1.0.0/24' }]] } },
      { type: 'coordinator' },
    ),
  }),
  nadObject('nv', { config: chain({ type: 'macvlan', master: 'eth0', ipam: { type: 'nv-ipam', poolName: 'pool1' } }) }),
  nadObject('ib-nv', { config: chain({ type: 'ib-sriov', ipam: { type: 'nv-ipam', poolName: 'pool1' } }) }),
  nadObject('vendor-ipam', { config: chain({ type: 'macvlan', master: 'eth0', ipam: { type: 'vendor-ipam' } }) }),
  nadObject('nv-cap', {
    config: chain({ type: 'macvlan', master: 'eth0', capabilities: { ips: true }, ipam: { type: 'nv-ipam', poolName: 'pool1' } }),
  }),
  nadObject('macvtap', {
    config: { cniVersion: '0.3.1', name: 'macvtap', type: 'macvtap', mtu: 1500 },
    resourceName: 'macvtap.network.kubevirt.io/eth0',
  }),
  nadObject('ovn-l2', {
    config: { cniVersion: '0.3.1', name: 'l2', type: 'ovn-k8s-cni-overlay', topology: 'layer2', netAttachDefName: 'default/ovn-l2' },
  }),
  nadObject('ovn-l2-subnets', {
    config: {
      cniVersion: '0.3.1',
      name: 'l2s',
      type: 'ovn-k8s-cni-overlay',
      topology: 'layer2',
      subnets: '10.100.200.0/24',
      netAttachDefName: 'default/ovn-l2-subnets',
    },
  }),
  nadObject('ovn-l3', {
    config: {
      cniVersion: '0.3.1',
      name: 'l3',
      type: 'ovn-k8s-cni-overlay',
      topology: 'layer3',
      subnets: '10.128.0.0/16/24',
      netAttachDefName: 'default/ovn-l3',
    },
  }),
  nadObject('passt', { config: { cniVersion: '0.3.1', name: 'netbindingpasst', type: 'kubevirt-passt-binding' } }),
  nadObject('sriov-rdma', {
    config: chain({ type: 'sriov', ipam: { type: 'host-local', ranges: [[{ subnet: '10.2.0.0/24' }]] } }, { type: 'rdma' }),
    resourceName: 'nvidia.com/rdma_vf',
  }),
  nadObject('bond', {
    config: { cniVersion: '0.3.1', name: 'bond', type: 'bond', mode: 'active-backup', links: [{ name: 'net1' }, { name: 'net2' }] },
  }),
);

interface Case {
  name: string;
  networks: string;
  errors?: string[];
  /** Policy findings' messages (the `capabilities` rule: a request no plugin reads). */
  findings?: string[];
  warnings?: string[];
}

const A = 'metadata.annotations[k8s.v1.cni.cncf.io/networks]';
/** nv-ipam's warning that it reserves a requested address on its node only, at `at` of NAD `nad`. */
const NODE_ONLY = (at: string, nad = 'nv') =>
  `${A}[0].${at}: default/${nad}'s IPAM "nv-ipam" (spec.config.plugins[0].ipam) reserves a requested address on its node only: a pod on another node may be given the same address`;
const READS_IPS = ' reads IPs (an IPAM reading IP= from CNI_ARGS, or runtimeConfig "ips" where the capability is declared)';

const cases: Case[] = [
  // spiderpool: K8sArgs types IP as net.IP; Multus sends every requested address in one IP=.
  {
    name: 'spiderpool IPAM: an address with /prefix fails LoadArgs ("failed to load CNI ENV args")',
    networks: '[{"name":"spider","ips":["10.0.0.5/24"]}]',
    errors: [
      `${A}[0].ips[0]: Invalid value: "10.0.0.5/24": IPAM spiderpool in default/spider loads IP= in CNI_ARGS as one address without /prefix: the ADD would fail`,
    ],
  },
  {
    name: 'spiderpool IPAM: two addresses are one IP= that is no address',
    networks: '[{"name":"spider","ips":["10.0.0.5","10.0.0.6"]}]',
    errors: [
      `${A}[0].ips: Invalid value: ["10.0.0.5","10.0.0.6"]: IPAM spiderpool in default/spider loads IP= in CNI_ARGS as one address, and Multus passes "10.0.0.5,10.0.0.6": the ADD would fail`,
    ],
  },
  {
    name: 'spiderpool IPAM: one bare address loads, and is never used (addresses come from its pools)',
    networks: '[{"name":"spider","ips":["10.0.0.5"]}]',
    findings: [`${A}[0].ips: Forbidden: default/spider would ignore it: no plugin of its chain (macvlan)${READS_IPS}`],
  },
  { name: 'spiderpool IPAM: the documented shape (name and interface only) is clean', networks: '[{"name":"spider","interface":"net1"}]' },
  // coordinator: the same typed loader, as a chained plugin after host-local.
  {
    name: 'coordinator: an address with /prefix fails its LoadArgs although host-local takes it',
    networks: '[{"name":"spider-coord","ips":["10.1.0.5/24"]}]',
    errors: [
      `${A}[0].ips[0]: Invalid value: "10.1.0.5/24": coordinator in default/spider-coord loads IP= in CNI_ARGS as one address without /prefix: the ADD would fail`,
    ],
  },
  { name: 'coordinator: one bare address loads, and host-local assigns it', networks: '[{"name":"spider-coord","ips":["10.1.0.5"]}]' },
  // nv-ipam: runtimeConfig ips, else args.cni.ips, else IP= cut at its first '/'.
  {
    name: 'nv-ipam: IP= "a/24,b/24" is read as a (b dropped); reserved per node',
    networks: '[{"name":"nv","ips":["10.0.0.5/24","10.0.0.6/24"]}]',
    warnings: [
      `${A}[0].ips: default/nv's IPAM "nv-ipam" (spec.config.plugins[0].ipam) takes one address from IP= in CNI_ARGS, the first (10.0.0.5/24); Multus passes all 2, and the others are dropped`,
      NODE_ONLY('ips'),
    ],
  },
  {
    name: 'nv-ipam: IP= "a,b" is no address ("IP argument contains invalid IP address")',
    networks: '[{"name":"nv","ips":["10.0.0.5","10.0.0.6"]}]',
    errors: [
      `${A}[0].ips: Invalid value: ["10.0.0.5","10.0.0.6"]: default/nv's IPAM "nv-ipam" (spec.config.plugins[0].ipam) reads IP= in CNI_ARGS up to its first '/' as one address, and Multus passes "10.0.0.5,10.0.0.6": the ADD would fail`,
    ],
    warnings: [NODE_ONLY('ips')],
  },
  {
    name: 'nv-ipam with cni-args.ips: args.cni carries the addresses, IP= is not parsed (LoadConf)',
    networks: '[{"name":"nv","ips":["10.0.0.5","10.0.0.6"],"cni-args":{"ips":["10.0.0.9"]}}]',
    warnings: [NODE_ONLY('ips'), NODE_ONLY('cni-args.ips')],
  },
  {
    name: 'nv-ipam with the ips capability: runtimeConfig carries both, IP= is not parsed',
    networks: '[{"name":"nv-cap","ips":["10.0.0.5","10.0.0.6"]}]',
    warnings: [NODE_ONLY('ips', 'nv-cap')],
  },
  {
    name: 'nv-ipam: its documented cni-args are clean',
    networks: '[{"name":"nv","cni-args":{"poolNames":["pool1"],"poolType":"ippool","allocateDefaultGateway":true}}]',
  },
  {
    name: 'nv-ipam: typed cni-args; a wrong type fails LoadConf',
    networks: '[{"name":"nv","cni-args":{"poolNames":"pool1","allocateDefaultGateway":"true","allocateIPWithIndex":-1}}]',
    errors: [
      `${A}[0].cni-args.poolNames: Invalid value: "pool1": must be a list of strings: IPAM nv-ipam in default/nv decodes it so, and the ADD would fail`,
      `${A}[0].cni-args.allocateDefaultGateway: Invalid value: "true": must be true or false: IPAM nv-ipam in default/nv decodes it so, and the ADD would fail`,
      `${A}[0].cni-args.allocateIPWithIndex: Invalid value: -1: must be a whole number from 0: IPAM nv-ipam in default/nv decodes it so, and the ADD would fail`,
    ],
  },
  { name: 'nv-ipam: null leaves a typed field alone (Go encoding/json)', networks: '[{"name":"nv","cni-args":{"poolNames":null}}]' },
  // pkg/cni/types/types.go v0.4.0: allocateIPWithIndex is *int32, and LoadConf refuses a negative one.
  {
    name: 'nv-ipam: allocateIPWithIndex from 0 to 2^31-1 decodes',
    networks: '[{"name":"nv","cni-args":{"allocateIPWithIndex":0}},{"name":"nv","cni-args":{"allocateIPWithIndex":2147483647}}]',
  },
  {
    name: 'nv-ipam: past int32, a fraction or a text does not; nor a list holding a number',
    networks:
      '[{"name":"nv","cni-args":{"allocateIPWithIndex":2147483648}},{"name":"nv","cni-args":{"allocateIPWithIndex":1.5}},{"name":"nv","cni-args":{"allocateIPWithIndex":"5","poolNames":["pool1",5]}}]',
    errors: [
      `${A}[0].cni-args.allocateIPWithIndex: Invalid value: 2147483648: must be a whole number from 0: IPAM nv-ipam in default/nv decodes it so, and the ADD would fail`,
      `${A}[1].cni-args.allocateIPWithIndex: Invalid value: 1.5: must be a whole number from 0: IPAM nv-ipam in default/nv decodes it so, and the ADD would fail`,
      `${A}[2].cni-args.poolNames: Invalid value: ["pool1",5]: must be a list of strings: IPAM nv-ipam in default/nv decodes it so, and the ADD would fail`,
      `${A}[2].cni-args.allocateIPWithIndex: Invalid value: "5": must be a whole number from 0: IPAM nv-ipam in default/nv decodes it so, and the ADD would fail`,
    ],
  },
  {
    name: 'ib-sriov reads args.cni as strings only: one error for a key its IPAM types too',
    networks: '[{"name":"ib-nv","cni-args":{"poolType":5}}]',
    errors: [
      `${A}[0].cni-args.poolType: Invalid value: 5: must be a string: ib-sriov in default/ib-nv reads args.cni as strings only, and the ADD would fail`,
    ],
  },
  { name: 'cni-args null on ib-sriov: nothing to decode', networks: '[{"name":"ib-nv","cni-args":null}]' },
  { name: 'a key no plugin types', networks: '[{"name":"spider-coord","cni-args":{"0":"x"}}]' },
  { name: 'an IPAM the table does not know types nothing', networks: '[{"name":"vendor-ipam","cni-args":{"x":1}}]' },
  {
    name: 'nv-ipam: cni-args without ips leave IP= as the road (so "a,b" still fails)',
    networks: '[{"name":"nv","ips":["10.0.0.5","10.0.0.6"],"cni-args":{"mac":"02:00:00:00:00:01"}}]',
    errors: [
      `${A}[0].ips: Invalid value: ["10.0.0.5","10.0.0.6"]: default/nv's IPAM "nv-ipam" (spec.config.plugins[0].ipam) reads IP= in CNI_ARGS up to its first '/' as one address, and Multus passes "10.0.0.5,10.0.0.6": the ADD would fail`,
    ],
    warnings: [
      NODE_ONLY('ips'),
      `${A}[0].cni-args.mac: cni-args "mac" is read by no plugin of default/nv (macvlan), so it is ignored; mac at the top level may be what you meant`,
    ],
  },
  {
    name: 'host-local: cni-args without ips leave the top-level ips judged',
    networks: '[{"name":"spider-coord","ips":["10.2.0.5"],"cni-args":{"mac":"02:00:00:00:00:01"}}]',
    errors: [
      `${A}[0].ips[0]: Invalid value: "10.2.0.5": not in any range of default/spider-coord's IPAM "host-local" (spec.config.plugins[0].ipam): 10.1.0.0/24; the ADD would fail`,
    ],
    warnings: [
      `${A}[0].cni-args.mac: cni-args "mac" is read by no plugin of default/spider-coord (macvlan, coordinator), so it is ignored; mac at the top level may be what you meant`,
    ],
  },
  // macvtap: MAC= set on the moved-in link; no IPAM.
  {
    name: 'macvtap: MAC= is read (KubeVirt sends the VM interface macAddress)',
    networks: '[{"name":"macvtap","mac":"02:23:45:67:89:01"}]',
  },
  {
    name: 'macvtap: a multicast MAC is refused by the kernel (macvlan_set_mac_address)',
    networks: '[{"name":"macvtap","mac":"03:23:45:67:89:01"}]',
    errors: [
      `${A}[0].mac: Invalid value: "03:23:45:67:89:01": a multicast MAC (lowest bit of the first octet set): macvtap sets the MAC on an Ethernet interface (default/macvtap spec.config), and the kernel refuses it ("cannot assign requested address"): the ADD would fail`,
    ],
  },
  {
    name: 'macvtap: ips reach no IPAM (it has none)',
    networks: '[{"name":"macvtap","ips":["10.0.0.5/24"]}]',
    findings: [`${A}[0].ips: Forbidden: default/macvtap would ignore it: no plugin of its chain (macvtap)${READS_IPS}`],
  },
  // OVN-Kubernetes: its controller reads mac and ips from the annotation.
  {
    name: 'OVN-Kubernetes layer2: mac and ips are honoured by ovnkube',
    networks: '[{"name":"ovn-l2","mac":"02:00:00:00:00:05","ips":["192.0.2.20/24"]}]',
  },
  {
    name: 'OVN-Kubernetes layer2 with subnets: ovnkube allocates, and refuses a static IP (warned: read from v1.0-v1.1)',
    networks: '[{"name":"ovn-l2-subnets","ips":["10.100.200.20/24"]}]',
    warnings: [
      `${A}[0].ips: default/ovn-l2-subnets (ovn-k8s-cni-overlay) is a network with subnets, whose addresses ovnkube allocates: OVN-Kubernetes v1.0-v1.1 refuse a static IP there ("cannot allocate a static IP request with IPAM"), and the pod waits for its network`,
    ],
  },
  {
    name: 'OVN-Kubernetes layer3: the same',
    networks: '[{"name":"ovn-l3","ips":["10.128.1.20/24"]}]',
    warnings: [
      `${A}[0].ips: default/ovn-l3 (ovn-k8s-cni-overlay) is a layer3 network, whose addresses ovnkube allocates: OVN-Kubernetes v1.0-v1.1 refuse a static IP there ("cannot allocate a static IP request with IPAM"), and the pod waits for its network`,
    ],
  },
  { name: 'OVN-Kubernetes layer3: a MAC alone is fine', networks: '[{"name":"ovn-l3","mac":"02:00:00:00:00:07"}]' },
  // KubeVirt's passt binding: the element KubeVirt adds, cni-args {logicNetworkName}.
  {
    name: 'passt binding: the element KubeVirt renders is clean',
    networks: '[{"name":"passt","cni-args":{"logicNetworkName":"default"}}]',
  },
  {
    name: 'passt binding: a logicNetworkName that is no string fails its netconf load',
    networks: '[{"name":"passt","cni-args":{"logicNetworkName":5}}]',
    errors: [
      `${A}[0].cni-args.logicNetworkName: Invalid value: 5: must be a string: kubevirt-passt-binding in default/passt decodes it so, and the ADD would fail`,
    ],
  },
  // rdma: args.cni {debug bool}.
  {
    name: 'rdma: debug must be a boolean',
    networks: '[{"name":"sriov-rdma","cni-args":{"debug":"yes"}}]',
    errors: [
      `${A}[0].cni-args.debug: Invalid value: "yes": must be true or false: rdma in default/sriov-rdma decodes it so, and the ADD would fail`,
    ],
  },
  // bond: creates the bond; reads no MAC.
  {
    name: 'bond: reads no MAC by any road',
    networks: '[{"name":"bond","interface":"bond0","mac":"02:00:00:00:00:09"}]',
    findings: [
      `${A}[0].mac: Forbidden: default/bond would ignore it: no plugin of its chain (bond) reads a MAC (MAC= in CNI_ARGS, or runtimeConfig "mac" where the capability is declared)`,
    ],
  },
];

t.test('plugins seen in real clusters, as their sources read a selection', async (t) => {
  for (const c of cases) {
    const parsed = parseNetworks(c.networks, { namespace: 'default' });
    t.same(parsed.errors, [], `${c.name}: the annotation itself is valid`);
    const r = builtinChecks(parsed.networks, nads, NO_EXTRA_READERS);
    t.same(r.errors.map(renderError), c.errors ?? [], `${c.name}: errors`);
    t.same(
      r.findings.map((f) => renderError(f.error)),
      c.findings ?? [],
      `${c.name}: findings`,
    );
    t.same(
      r.warnings.map((n) => `${n.path}: ${n.text}`),
      c.warnings ?? [],
      `${c.name}: warnings`,
    );
    t.same(r.supersedes, [], `${c.name}: no annotation warning superseded`);
  }
});

t.test('a warning never says the ADD will fail; an error always does', async (t) => {
  for (const c of cases) {
    for (const w of c.warnings ?? []) t.notMatch(w, /fail/, `${c.name}: warning`);
    for (const e of c.errors ?? []) t.match(e, /the ADD would fail/, `${c.name}: error`);
  }
});
