// host-local and static IPAM, as executed (containernetworking/plugins v1.10.0 under bridge, called
// as Multus v4.3.0 calls a delegate; docs/cni-runtime.md "Executed: the IPAMs"). Each row is one
// executed case: what the ADD did, and the verdict netattach must give.
import t, { type Test } from 'tap';
import { parseNetworks } from '../../src/annotation/index.js';
import { builtinChecks } from '../../src/admission/builtin.js';
import { renderError } from '../../src/field/index.js';
import { NO_EXTRA_READERS } from '../../src/nads/index.js';
import { chain, nadLookup, nadObject } from './fixtures.js';

const hostLocal = (ranges: object[][], caps: object = {}) =>
  chain({ type: 'bridge', bridge: 'br0', capabilities: caps, ipam: { type: 'host-local', ranges } });
const staticIpam = (ipam: object, caps: object = {}, cniVersion = '1.0.0') => ({
  cniVersion,
  name: 'n',
  plugins: [{ type: 'bridge', bridge: 'br0', capabilities: caps, ipam: { type: 'static', ...ipam } }],
});
const ROUTE = { addresses: [{ address: '10.0.0.5/24' }], routes: [{ dst: '0.0.0.0/0', gw: '10.0.0.1' }] };

const nads = nadLookup(
  nadObject('hl', { config: hostLocal([[{ subnet: '10.1.0.0/24' }]]) }),
  nadObject('hl-gw', { config: hostLocal([[{ subnet: '10.1.0.0/24', gateway: '10.1.0.254' }]]) }),
  nadObject('hl-wide', { config: hostLocal([[{ subnet: '10.1.0.0/24', rangeStart: '10.1.0.0', rangeEnd: '10.1.0.255' }]]) }),
  nadObject('hl30', { config: hostLocal([[{ subnet: '10.1.0.0/30' }]]) }),
  nadObject('hl6', { config: hostLocal([[{ subnet: 'fd00::/64' }]]) }),
  nadObject('hl6-wide', { config: hostLocal([[{ subnet: 'fd00::/64', rangeStart: 'fd00::' }]]) }),
  nadObject('hl-dual', { config: hostLocal([[{ subnet: '10.1.0.0/24' }], [{ subnet: 'fd00::/64' }]]) }),
  nadObject('hl-cap', { config: hostLocal([[{ subnet: '10.1.0.0/24' }], [{ subnet: 'fd00::/64' }]], { ips: true }) }),
  nadObject('hl-2in1', { config: hostLocal([[{ subnet: '10.1.0.0/24' }, { subnet: '10.2.0.0/24' }]]) }),
  nadObject('hl-legacy', {
    config: chain({ type: 'bridge', ipam: { type: 'host-local', subnet: '10.1.0.0/24', ranges: [[{ subnet: '10.3.0.0/24' }]] } }),
  }),
  nadObject('hl-own-args', {
    config: {
      cniVersion: '1.0.0',
      name: 'n',
      type: 'bridge',
      ipam: { type: 'host-local', ranges: [[{ subnet: '10.1.0.0/24' }]] },
      args: { cni: { ips: ['10.1.0.9', '10.1.0.10'] } },
    },
  }),
  nadObject('st-empty', { config: staticIpam({}) }),
  nadObject('st-empty-ptp', { config: { cniVersion: '1.0.0', name: 'n', type: 'ptp', ipam: { type: 'static' } } }),
  nadObject('ptp-gw', {
    config: {
      cniVersion: '1.0.0',
      name: 'n',
      type: 'ptp',
      ipam: { type: 'static', addresses: [{ address: '10.50.0.5/24', gateway: '10.50.0.1' }] },
    },
  }),
  nadObject('ptp-nogw', {
    config: { cniVersion: '1.0.0', name: 'n', type: 'ptp', ipam: { type: 'static', addresses: [{ address: '10.50.0.5/24' }] } },
  }),
  nadObject('hl-too', { config: hostLocal([[{ subnet: '10.1.0.0/24' }]]) }),
  nadObject('st-empty-sriov', { config: { cniVersion: '1.0.0', name: 'n', type: 'sriov', ipam: { type: 'static' } } }),
  nadObject('st-own-args', {
    config: { cniVersion: '1.0.0', name: 'n', type: 'bridge', ipam: { type: 'static' }, args: { cni: { ips: ['10.0.0.9/24'] } } },
  }),
  nadObject('st', { config: staticIpam({ addresses: [{ address: '10.0.0.5/24' }] }) }),
  nadObject('st6', { config: staticIpam({ addresses: [{ address: 'fd00::5/64' }] }) }),
  nadObject('st-cap', { config: staticIpam({ addresses: [{ address: '10.0.0.5/24' }] }, { ips: true }) }),
  nadObject('st-020', { config: staticIpam({ addresses: [{ address: '10.0.0.5/24' }] }, {}, '0.2.0') }),
  nadObject('st-030', { config: staticIpam({ addresses: [{ address: '10.0.0.5/24' }] }, {}, '0.3.0') }),
  nadObject('st-010-cap', {
    config: staticIpam({ addresses: [{ address: '10.0.0.5/24' }, { address: '10.0.0.6/24' }] }, { ips: true }, '0.1.0'),
  }),
  nadObject('st-route', { config: staticIpam(ROUTE) }),
  nadObject('st-route-cap', { config: staticIpam(ROUTE, { ips: true }) }),
  nadObject('st-route6', {
    config: staticIpam({ addresses: [{ address: '10.0.0.5/24' }], routes: [{ dst: 'fd01::/64', gw: 'fd00::1' }] }),
  }),
  nadObject('st-route-ll', { config: staticIpam({ addresses: [{ address: 'fd00::5/64' }], routes: [{ dst: '::/0', gw: 'fe80::1' }] }) }),
  nadObject('st-route-nogw', {
    config: staticIpam({ addresses: [{ address: '10.0.0.5/24', gateway: '10.0.0.1' }], routes: [{ dst: '0.0.0.0/0' }] }),
  }),
  nadObject('st-own-twice', { config: staticIpam({ addresses: [{ address: '10.0.0.5/24' }, { address: '10.0.0.5/24' }] }) }),
  nadObject('vendor-ipam', { config: chain({ type: 'macvlan', master: 'eth0', ipam: { type: 'vendor-ipam' } }) }),
  nadObject('ptp-unreadable', {
    config: { cniVersion: '1.0.0', name: 'n', type: 'ptp', ipam: { type: 'static', addresses: [{ address: '10.50.0.300/24' }] } },
  }),
  nadObject('hl3', { config: hostLocal([[{ subnet: '10.1.0.0/24' }], [{ subnet: '10.2.0.0/24' }], [{ subnet: '10.3.0.0/24' }]]) }),
  nadObject('hl-unreadable', { config: hostLocal([[{ subnet: 'not-a-cidr' }]]) }),
  nadObject('st-010', { config: staticIpam({}, {}, '0.1.0') }),
  nadObject('st-020-two', { config: staticIpam({ addresses: [{ address: '10.0.0.5/24' }, { address: '10.0.0.6/24' }] }, {}, '0.2.0') }),
  nadObject('st-route-away', {
    config: staticIpam({ addresses: [{ address: '10.0.0.5/24' }], routes: [{ dst: '0.0.0.0/0', gw: '10.9.9.1' }] }),
  }),
  nadObject('ptp-own-args', {
    config: { cniVersion: '1.0.0', name: 'n', type: 'ptp', ipam: { type: 'static' }, args: { cni: { ips: ['10.50.0.9/24'] } } },
  }),
  nadObject('spider-coord', { config: chain({ type: 'macvlan', master: 'eth0', ipam: { type: 'spiderpool' } }, { type: 'coordinator' }) }),
  nadObject('nv', { config: chain({ type: 'macvlan', master: 'eth0', ipam: { type: 'nv-ipam', poolName: 'pool1' } }) }),
  nadObject('st-route-table', {
    config: staticIpam({ addresses: [{ address: '10.0.0.5/24' }], routes: [{ dst: '0.0.0.0/0', gw: '10.0.0.1', table: 100 }] }),
  }),
);

interface Case {
  name: string;
  networks: string;
  errors?: string[];
  warnings?: string[];
}

const A = 'metadata.annotations[k8s.v1.cni.cncf.io/networks]';
const IPAM = (nad: string, at = 'spec.config.plugins[0]') => `default/${nad}'s IPAM "${'static'}" (${at}.ipam)`;
const HL = (nad: string) => `default/${nad}'s IPAM "host-local" (spec.config.plugins[0].ipam)`;

const hostLocalCases: Case[] = [
  // 1. reserved addresses
  {
    name: 'host-local: the default gateway (the subnet\'s first address) fails: "requested ip 10.1.0.1 is subnet\'s gateway"',
    networks: '[{"name":"hl","ips":["10.1.0.1"]}]',
    errors: [
      `${A}[0].ips[0]: Invalid value: "10.1.0.1": the gateway of 10.1.0.0/24 (host-local's default: the subnet's first address), which ${HL('hl')} never hands out: the ADD would fail`,
    ],
  },
  {
    name: 'host-local: an explicit gateway fails; the first address is then an ordinary one',
    networks: '[{"name":"hl-gw","ips":["10.1.0.254"]},{"name":"hl-gw","interface":"net2","ips":["10.1.0.1"]}]',
    errors: [
      `${A}[0].ips[0]: Invalid value: "10.1.0.254": the gateway of 10.1.0.0/24, which ${HL('hl-gw')} never hands out: the ADD would fail`,
    ],
  },
  {
    name: 'host-local: the network address lies before the default rangeStart: "failed to allocate all requested IPs"',
    networks: '[{"name":"hl","ips":["10.1.0.0"]}]',
    errors: [
      `${A}[0].ips[0]: Invalid value: "10.1.0.0": the network address of 10.1.0.0/24: ${HL('hl')} hands out 10.1.0.1-10.1.0.254 there, and the ADD would fail`,
    ],
  },
  {
    name: 'host-local: the IPv4 broadcast address lies after the default rangeEnd',
    networks: '[{"name":"hl","ips":["10.1.0.255/24"]}]',
    errors: [
      `${A}[0].ips[0]: Invalid value: "10.1.0.255/24": the broadcast address of 10.1.0.0/24: ${HL('hl')} hands out 10.1.0.1-10.1.0.254 there, and the ADD would fail`,
    ],
  },
  {
    name: 'host-local: network and broadcast addresses inside an explicit rangeStart..rangeEnd are handed out (and the kernel takes them)',
    networks: '[{"name":"hl-wide","ips":["10.1.0.0"]},{"name":"hl-wide","interface":"net2","ips":["10.1.0.255"]}]',
  },
  {
    name: 'host-local /30: .2 is handed out, .3 (broadcast) is not',
    networks: '[{"name":"hl30","ips":["10.1.0.2"]},{"name":"hl30","interface":"net2","ips":["10.1.0.3"]}]',
    errors: [
      `${A}[1].ips[0]: Invalid value: "10.1.0.3": the broadcast address of 10.1.0.0/30: ${HL('hl30')} hands out 10.1.0.1-10.1.0.2 there, and the ADD would fail`,
    ],
  },
  {
    name: 'host-local IPv6: the gateway fails, the last address is handed out (no broadcast)',
    networks: '[{"name":"hl6","ips":["fd00::1"]},{"name":"hl6","interface":"net2","ips":["fd00::ffff:ffff:ffff:ffff"]}]',
    errors: [
      `${A}[0].ips[0]: Invalid value: "fd00::1": the gateway of fd00::/64 (host-local's default: the subnet's first address), which ${HL('hl6')} never hands out: the ADD would fail`,
    ],
  },
  {
    name: 'host-local IPv6: the subnet address fails by default, and is handed out from rangeStart fd00::',
    networks: '[{"name":"hl6","ips":["fd00::"]},{"name":"hl6-wide","interface":"net2","ips":["fd00::"]}]',
    errors: [
      `${A}[0].ips[0]: Invalid value: "fd00::": the network address of fd00::/64: ${HL('hl6')} hands out fd00::1-fd00::ffff:ffff:ffff:ffff there, and the ADD would fail`,
    ],
  },
  {
    name: 'host-local: the same reservations through cni-args.ips',
    networks: '[{"name":"hl","cni-args":{"ips":["10.1.0.1"]}}]',
    errors: [
      `${A}[0].cni-args.ips[0]: Invalid value: "10.1.0.1": the gateway of 10.1.0.0/24 (host-local's default: the subnet's first address), which ${HL('hl')} never hands out: the ADD would fail`,
    ],
  },
  // 2. one requested address per range set, over every road
  {
    name: 'host-local: IP= and args.cni.ips in one range set fail ("failed to allocate all requested IPs: 10.1.0.6")',
    networks: '[{"name":"hl","ips":["10.1.0.5"],"cni-args":{"ips":["10.1.0.6"]}}]',
    errors: [
      `${A}[0].cni-args.ips[0]: Invalid value: "10.1.0.6": ${HL('hl')} takes one requested address per range set, and range set 0 (10.1.0.0/24) also gets 10.1.0.5 (ips[0]): the ADD would fail`,
    ],
  },
  {
    // The same union, with the NAD's own args.cni.ips as the args.cni road: said once, on the pod's
    // IP= (the road the pod chose), whatever the number of the NAD's own addresses in the set.
    name: "host-local: IP= beside the NAD's own args.cni.ips in one range set fails the same way",
    networks: '[{"name":"hl-own-args","ips":["10.1.0.5"]}]',
    errors: [
      `${A}[0].ips[0]: Invalid value: "10.1.0.5": ${HL('hl-own-args').replace('plugins[0].ipam', 'ipam')} takes one requested address per range set, and range set 0 (10.1.0.0/24) also gets 10.1.0.9 (its own args.cni.ips): the ADD would fail`,
    ],
  },
  {
    name: "host-local: cni-args.ips replace the NAD's own args.cni.ips (Multus merges cni-args over args.cni)",
    networks: '[{"name":"hl-own-args","cni-args":{"ips":["10.1.0.5"]}}]',
  },
  {
    name: 'host-local: the same address by both roads is one request (its prefix ignored)',
    networks: '[{"name":"hl","ips":["10.1.0.5"],"cni-args":{"ips":["10.1.0.5/24"]}}]',
  },
  {
    name: 'host-local: IP= and args.cni.ips in two range sets are both taken',
    networks: '[{"name":"hl-dual","ips":["10.1.0.5"],"cni-args":{"ips":["fd00::5"]}}]',
  },
  {
    name: 'host-local: one set holding two ranges takes one address for both',
    networks: '[{"name":"hl-2in1","cni-args":{"ips":["10.1.0.5","10.2.0.5"]}}]',
    errors: [
      `${A}[0].cni-args.ips[1]: Invalid value: "10.2.0.5": ${HL('hl-2in1')} takes one requested address per range set, and range set 0 (10.1.0.0/24, 10.2.0.0/24) also gets 10.1.0.5 (cni-args.ips[0]): the ADD would fail`,
    ],
  },
  {
    name: 'host-local: the legacy subnet is range set 0, the ranges follow',
    networks: '[{"name":"hl-legacy","cni-args":{"ips":["10.1.0.5","10.3.0.5"]}}]',
  },
  {
    name: 'host-local with the ips capability: runtimeConfig repeats IP= (one request), cni-args adds to it',
    networks:
      '[{"name":"hl-cap","ips":["10.1.0.5/24"]},{"name":"hl-cap","interface":"net2","ips":["10.1.0.6/24"],"cni-args":{"ips":["10.1.0.7"]}}]',
    errors: [
      `${A}[1].cni-args.ips[0]: Invalid value: "10.1.0.7": ${HL('hl-cap')} takes one requested address per range set, and range set 0 (10.1.0.0/24) also gets 10.1.0.6/24 (ips[0]): the ADD would fail`,
    ],
  },
];

// 5. One pod, one NAD, one address twice: host-local reserves it for the first interface
// (executed: "requested IP address 10.10.0.50 is not available in range set ...", by IP= or args.cni.ips).
const REUSED = (first: number, text: string, ip: string) =>
  `element [${first}] requests ${text} of ${HL('hl')} too, and host-local reserves it for that interface first: the ADD would fail ("requested IP address ${ip} is not available in range set ...")`;
hostLocalCases.push(
  {
    name: 'host-local: one address on two selections of one NAD fails the second ADD',
    networks: '[{"name":"hl","ips":["10.1.0.50"]},{"name":"hl","ips":["10.1.0.50/24"]}]',
    errors: [`${A}[1].ips[0]: Invalid value: "10.1.0.50/24": ${REUSED(0, '10.1.0.50', '10.1.0.50')}`],
  },
  {
    name: 'host-local: the same through cni-args.ips on the second selection',
    networks: '[{"name":"hl","ips":["10.1.0.50"]},{"name":"hl","cni-args":{"ips":["10.1.0.50"]}}]',
    errors: [`${A}[1].cni-args.ips[0]: Invalid value: "10.1.0.50": ${REUSED(0, '10.1.0.50', '10.1.0.50')}`],
  },
  {
    name: 'host-local: every later selection asking for it fails; the first one runs',
    networks: '[{"name":"hl"},{"name":"hl","ips":["10.1.0.50"]},{"name":"hl","ips":["10.1.0.50"]}]',
    errors: [`${A}[2].ips[0]: Invalid value: "10.1.0.50": ${REUSED(1, '10.1.0.50', '10.1.0.50')}`],
  },
  {
    name: 'host-local: two addresses of one NAD on two selections',
    networks: '[{"name":"hl","ips":["10.1.0.50"]},{"name":"hl","ips":["10.1.0.51"]}]',
  },
  {
    name: 'host-local: one address on two NADs, whose stores may differ: not judged',
    networks: '[{"name":"hl","ips":["10.1.0.50"]},{"name":"hl-too","ips":["10.1.0.50"]}]',
  },
  {
    name: 'host-local: one address by two roads of one selection (executed: succeeds)',
    networks: '[{"name":"hl","ips":["10.1.0.50"],"cni-args":{"ips":["10.1.0.50"]}}]',
  },
  {
    name: 'static reserves nothing: one address on two selections is for the kernel to take',
    networks: '[{"name":"st","ips":["10.0.0.9/24"]},{"name":"st","ips":["10.0.0.9/24"]}]',
  },
);

const staticCases: Case[] = [
  // ptp routes by its IPAM's gateway; static gives one only to a configured address written with it (executed).
  { name: 'ptp + static: a configured address with its gateway runs', networks: '[{"name":"ptp-gw"}]' },
  {
    name: 'ptp + static: a configured address without a gateway fails every pod ("failed to add route ... file exists")',
    networks: '[{"name":"ptp-nogw"}]',
    errors: [
      `${A}[0]: Invalid value: "default/ptp-nogw": addresses[0] 10.50.0.5/24: ptp routes the interface through its IPAM's gateway, and ${IPAM('ptp-nogw', 'spec.config')} gives none for it (only a configured address written with "gateway" has one): the ADD would fail`,
    ],
  },
  {
    name: 'ptp + static: an address requested by IP= has no gateway, beside one that has',
    networks: '[{"name":"ptp-gw","ips":["10.51.0.5/24"]}]',
    errors: [
      `${A}[0].ips[0]: Invalid value: "10.51.0.5/24": ptp routes the interface through its IPAM's gateway, and ${IPAM('ptp-gw', 'spec.config')} gives none for it (only a configured address written with "gateway" has one): the ADD would fail`,
    ],
  },
  {
    name: 'ptp + static: cni-args.ips replace the configured address and bring no gateway',
    networks: '[{"name":"ptp-gw","cni-args":{"ips":["10.51.0.5/24"]}}]',
    errors: [
      `${A}[0].cni-args.ips[0]: Invalid value: "10.51.0.5/24": ptp routes the interface through its IPAM's gateway, and ${IPAM('ptp-gw', 'spec.config')} gives none for it (only a configured address written with "gateway" has one): the ADD would fail`,
    ],
  },
  {
    name: 'static with nothing configured nor requested: ptp fails (executed: "IPAM plugin returned missing IP config")',
    networks: '[{"name":"st-empty-ptp"}]',
    errors: [
      `${A}[0].ips: Required value: ${IPAM('st-empty-ptp', 'spec.config')} has no address to assign: none configured and none requested (ips or cni-args.ips); ptp fails the ADD when its IPAM returns none ("IPAM plugin returned missing IP config")`,
    ],
  },
  // 3. static
  {
    name: 'static with nothing configured nor requested: bridge fails ("IPAM plugin returned missing IP config")',
    networks: '[{"name":"st-empty"}]',
    errors: [
      `${A}[0].ips: Required value: ${IPAM('st-empty')} has no address to assign: none configured and none requested (ips or cni-args.ips); bridge fails the ADD when its IPAM returns none ("IPAM plugin returned missing IP config")`,
    ],
  },
  { name: 'static with nothing configured, an address requested', networks: '[{"name":"st-empty","ips":["10.0.0.5/24"]}]' },
  {
    name: 'static with nothing configured, an address through cni-args',
    networks: '[{"name":"st-empty","cni-args":{"ips":["10.0.0.5/24"]}}]',
  },
  { name: "static with nothing configured but the config's own args.cni.ips", networks: '[{"name":"st-own-args"}]' },
  {
    name: 'static with nothing configured under a plugin whose empty result is not known to fail (sriov)',
    networks: '[{"name":"st-empty-sriov"}]',
  },
  {
    name: 'static: a requested address it already configures is added twice: "file exists"',
    networks: '[{"name":"st","ips":["10.0.0.5/24"]}]',
    errors: [
      `${A}[0].ips[0]: Invalid value: "10.0.0.5/24": ${IPAM('st')} would assign this address twice (also addresses[0]: 10.0.0.5/24); adding it again fails with "file exists", and the ADD would fail`,
    ],
  },
  {
    name: 'static: the same IPv4 address with another prefix is a second address (the kernel takes it)',
    networks: '[{"name":"st","ips":["10.0.0.5/16"]}]',
  },
  {
    name: 'static: the same IPv6 address with another prefix is refused',
    networks: '[{"name":"st6","ips":["fd00::5/48"]}]',
    errors: [
      `${A}[0].ips[0]: Invalid value: "fd00::5/48": ${IPAM('st6')} would assign this address twice (also addresses[0]: fd00::5/64); adding it again fails with "file exists", and the ADD would fail`,
    ],
  },
  {
    name: 'static with the ips capability: runtimeConfig replaces the configured address, no duplicate',
    networks: '[{"name":"st-cap","ips":["10.0.0.5/24"]}]',
  },
  {
    name: 'static: args.cni.ips replace the configured address and IP=, no duplicate',
    networks: '[{"name":"st","ips":["10.0.0.5/24"],"cni-args":{"ips":["10.0.0.5/24"]}}]',
  },
  {
    name: 'static: twice within cni-args.ips',
    networks: '[{"name":"st","cni-args":{"ips":["10.0.0.8/24","10.0.0.8/24"]}}]',
    errors: [
      `${A}[0].cni-args.ips[1]: Invalid value: "10.0.0.8/24": ${IPAM('st')} would assign this address twice (also cni-args.ips[0]: 10.0.0.8/24); adding it again fails with "file exists", and the ADD would fail`,
    ],
  },
  {
    name: 'static on cniVersion 0.2.0: a second IPv4 address fails ("does not support more than 1 address per family")',
    networks: '[{"name":"st-020","ips":["10.0.0.6/24"]}]',
    errors: [
      `${A}[0].ips[0]: Invalid value: "10.0.0.6/24": ${IPAM('st-020')} would assign 2 IPv4 addresses (10.0.0.5/24, 10.0.0.6/24), and cniVersion 0.2.0 allows one per family: the ADD would fail`,
    ],
  },
  { name: 'static on cniVersion 0.2.0: one address per family is fine', networks: '[{"name":"st-020","ips":["fd00::6/64"]}]' },
  { name: 'static on cniVersion 0.3.0: two IPv4 addresses are fine', networks: '[{"name":"st-030","ips":["10.0.0.6/24"]}]' },
  {
    name: 'static on cniVersion 0.1.0: runtimeConfig replaces two configured addresses with one',
    networks: '[{"name":"st-010-cap","ips":["10.0.0.7/24"]}]',
  },
  {
    name: "static: cni-args.ips replace the configured address, and the route's gateway is unreachable",
    networks: '[{"name":"st-route","cni-args":{"ips":["192.168.1.5/24"]}}]',
    errors: [
      `${A}[0].cni-args.ips: Invalid value: ["192.168.1.5/24"]: cni-args.ips (args.cni) replace the configured addresses of ${IPAM('st-route')}, and none of them is in the subnet of its route 0.0.0.0/0 via 10.0.0.1: adding the route fails ("network is unreachable"), and the ADD would fail`,
    ],
  },
  {
    name: "static with the ips capability: runtimeConfig ips replace the configured address, and the route's gateway is unreachable",
    networks: '[{"name":"st-route-cap","ips":["192.168.1.5/24"]}]',
    errors: [
      `${A}[0].ips: Invalid value: ["192.168.1.5/24"]: runtimeConfig "ips" (the top-level ips) replace the configured addresses of ${IPAM('st-route-cap')}, and none of them is in the subnet of its route 0.0.0.0/0 via 10.0.0.1: adding the route fails ("network is unreachable"), and the ADD would fail`,
    ],
  },
  {
    name: 'static: an IPv6 route with no IPv6 address left',
    networks: '[{"name":"st-route6","cni-args":{"ips":["192.168.1.5/24"]}}]',
    errors: [
      `${A}[0].cni-args.ips: Invalid value: ["192.168.1.5/24"]: cni-args.ips (args.cni) replace the configured addresses of ${IPAM('st-route6')}, and none of them is in the subnet of its route fd01::/64 via fd00::1: adding the route fails ("no route to host"), and the ADD would fail`,
    ],
  },
  {
    name: 'static: a replacing address in the gateway subnet (a wider prefix) keeps the route',
    networks: '[{"name":"st-route","cni-args":{"ips":["10.0.0.9/16"]}}]',
  },
  {
    name: 'static: IP= adds to the configured address, which still reaches the gateway',
    networks: '[{"name":"st-route","ips":["192.168.1.5/24"]}]',
  },
  {
    name: 'static: a route without gw becomes a device route',
    networks: '[{"name":"st-route-nogw","cni-args":{"ips":["192.168.1.5/24"]}}]',
  },
  { name: 'static: an IPv6 link-local gateway is not judged', networks: '[{"name":"st-route-ll","cni-args":{"ips":["fd01::5/64"]}}]' },
  {
    name: 'static: a route into another table is not judged',
    networks: '[{"name":"st-route-table","cni-args":{"ips":["192.168.1.5/24"]}}]',
  },
  // 4. disagreement: which road takes effect
  {
    name: 'static: top-level ips and cni-args.ips disagree: args.cni.ips replace IP= (executed: 10.0.0.7 only)',
    networks: '[{"name":"st","ips":["10.0.0.6/24"],"cni-args":{"ips":["10.0.0.7/24"]}}]',
    warnings: [
      `${A}[0].ips: dropped by ${IPAM('st')}: it reads args.cni.ips after IP= and they replace IP= and its configured addresses, so ["10.0.0.7/24"] (cni-args.ips) take effect`,
    ],
  },
  {
    name: 'static with the ips capability: runtimeConfig replaces args.cni.ips (executed: the top-level address only)',
    networks: '[{"name":"st-cap","ips":["10.0.0.6/24"],"cni-args":{"ips":["10.0.0.7/24"]}}]',
    warnings: [
      `${A}[0].cni-args.ips: dropped by ${IPAM('st-cap')}: bridge declares the ips capability, so runtimeConfig "ips" replaces args.cni.ips and ["10.0.0.6/24"] (the top-level ips) take effect`,
    ],
  },
  {
    name: 'static: both roads with the same addresses: nothing dropped',
    networks: '[{"name":"st","ips":["10.0.0.6/24"],"cni-args":{"ips":["10.0.0.6/24"]}}]',
  },
];

/** Each case's exact errors and warnings; no finding (every NAD found, every road read), no field warning. */
function judgeCases(t: Test, cases: readonly Case[]): void {
  for (const c of cases) {
    const parsed = parseNetworks(c.networks, { namespace: 'default' });
    t.same(parsed.errors, [], `${c.name}: the annotation itself is valid`);
    const r = builtinChecks(parsed.networks, nads, NO_EXTRA_READERS);
    t.same(r.errors.map(renderError), c.errors ?? [], `${c.name}: errors`);
    t.same(r.findings, [], `${c.name}: findings`);
    t.same(r.fieldWarnings, [], `${c.name}: field warnings`);
    t.same(
      r.warnings.map((n) => `${n.path}: ${n.text}`),
      c.warnings ?? [],
      `${c.name}: warnings`,
    );
  }
}

t.test('host-local and static IPAM, as executed', async (t) => judgeCases(t, [...hostLocalCases, ...staticCases]));

t.test('a warning never says the pod or the ADD will fail; an error always does', async (t) => {
  for (const c of [...hostLocalCases, ...staticCases]) {
    for (const w of c.warnings ?? []) t.notMatch(w, /fail/, `${c.name}: warning`);
    for (const e of c.errors ?? []) t.match(e, /the ADD would fail|fails the ADD/, `${c.name}: error`);
  }
});

// Cases derived from the executed facts above rather than executed one by one: where a road,
// a family, a range set or a selection stops mattering, and the exact labels the messages name.
const derivedCases: Case[] = [
  { name: 'host-local with no readable range: no verdict', networks: '[{"name":"hl-unreadable","ips":["10.1.0.5"]}]' },
  {
    name: 'host-local: a request outside every range is said once; it takes no range set',
    networks: '[{"name":"hl","ips":["10.9.0.5"],"cni-args":{"ips":["10.1.0.6"]}}]',
    errors: [`${A}[0].ips[0]: Invalid value: "10.9.0.5": not in any range of ${HL('hl')}: 10.1.0.0/24; the ADD would fail`],
  },
  {
    name: 'host-local: requests in range sets 1 and 2 are one each',
    networks: '[{"name":"hl3","ips":["10.2.0.5"],"cni-args":{"ips":["10.3.0.5"]}}]',
  },
  {
    name: 'host-local: two requests in range set 1 name that set and its subnet',
    networks: '[{"name":"hl3","ips":["10.2.0.5"],"cni-args":{"ips":["10.2.0.6"]}}]',
    errors: [
      `${A}[0].cni-args.ips[0]: Invalid value: "10.2.0.6": ${HL('hl3')} takes one requested address per range set, and range set 1 (10.2.0.0/24) also gets 10.2.0.5 (ips[0]): the ADD would fail`,
    ],
  },
  {
    name: "static: the NAD's own address twice is not the pod's to answer for",
    networks: '[{"name":"st-own-twice","ips":["10.0.0.9/24"]}]',
  },
  {
    name: 'an IPAM netattach does not know: two selections asking one address get no verdict',
    networks: '[{"name":"vendor-ipam","ips":["10.0.0.5/24"]},{"name":"vendor-ipam","ips":["10.0.0.5/24"]}]',
    warnings: [0, 1].map(
      (i) =>
        `${A}[${i}].ips: may be ignored: netattach does not know plugin "macvlan (IPAM vendor-ipam)"; if it reads it: --plugin-reads vendor-ipam=ips`,
    ),
  },
  {
    name: 'static, cniVersion 0.1.0: two IPv4 addresses',
    networks: '[{"name":"st-010","ips":["10.0.0.5/24","10.0.0.6/24"]}]',
    errors: [
      `${A}[0].ips[1]: Invalid value: "10.0.0.6/24": ${IPAM('st-010')} would assign 2 IPv4 addresses (10.0.0.5/24, 10.0.0.6/24), and cniVersion 0.1.0 allows one per family: the ADD would fail`,
    ],
  },
  {
    name: 'static, cniVersion 0.1.0: two IPv6 addresses',
    networks: '[{"name":"st-010","ips":["fd00::5/64","fd00::6/64"]}]',
    errors: [
      `${A}[0].ips[1]: Invalid value: "fd00::6/64": ${IPAM('st-010')} would assign 2 IPv6 addresses (fd00::5/64, fd00::6/64), and cniVersion 0.1.0 allows one per family: the ADD would fail`,
    ],
  },
  { name: "static, cniVersion 0.2.0: the NAD's own two addresses are not the pod's to answer for", networks: '[{"name":"st-020-two"}]' },
  {
    name: 'static: an IPv6 address of the same number as an IPv4 one is another address',
    networks: '[{"name":"st","ips":["::a00:5/64"]}]',
  },
  {
    name: 'static: runtimeConfig ips named as such in a duplicate',
    networks: '[{"name":"st-cap","ips":["fd00::7/64","fd00::7/96"]}]',
    errors: [
      `${A}[0].ips[1]: Invalid value: "fd00::7/96": ${IPAM('st-cap')} would assign this address twice (also ips[0] (runtimeConfig): fd00::7/64); adding it again fails with "file exists", and the ADD would fail`,
    ],
  },
  {
    name: 'static: IP= named as such in a duplicate',
    networks: '[{"name":"st","ips":["fd00::7/64","fd00::7/96"]}]',
    errors: [
      `${A}[0].ips[1]: Invalid value: "fd00::7/96": ${IPAM('st')} would assign this address twice (also ips[0]: fd00::7/64); adding it again fails with "file exists", and the ADD would fail`,
    ],
  },
  {
    name: "static: one replacing address in the route's subnet is enough",
    networks: '[{"name":"st-route","cni-args":{"ips":["10.7.0.9/24","10.0.0.9/24"]}}]',
  },
  { name: "static: a NAD's own unreachable route is not the pod's to answer for", networks: '[{"name":"st-route-away"}]' },
  {
    name: 'static: cni-args.ips with one more address than the top-level ips still disagree',
    networks: '[{"name":"st","ips":["10.0.0.7/24"],"cni-args":{"ips":["10.0.0.7/24","10.0.0.8/24"]}}]',
    warnings: [
      `${A}[0].ips: dropped by ${IPAM('st')}: it reads args.cni.ips after IP= and they replace IP= and its configured addresses, so ["10.0.0.7/24","10.0.0.8/24"] (cni-args.ips) take effect`,
    ],
  },
  {
    name: 'static: as many addresses, one of them different, disagree',
    networks: '[{"name":"st","ips":["10.0.0.7/24","10.0.0.8/24"],"cni-args":{"ips":["10.0.0.7/24","10.0.0.9/24"]}}]',
    warnings: [
      `${A}[0].ips: dropped by ${IPAM('st')}: it reads args.cni.ips after IP= and they replace IP= and its configured addresses, so ["10.0.0.7/24","10.0.0.9/24"] (cni-args.ips) take effect`,
    ],
  },
  {
    name: "ptp: the NAD's configured address without a gateway fails every pod, said on the element",
    networks: '[{"name":"ptp-nogw"}]',
    errors: [
      `${A}[0]: Invalid value: "default/ptp-nogw": addresses[0] 10.50.0.5/24: ptp routes the interface through its IPAM's gateway, and ${IPAM('ptp-nogw', 'spec.config')} gives none for it (only a configured address written with "gateway" has one): the ADD would fail`,
    ],
  },
  {
    name: "ptp: the NAD's own args.cni.ips carry no gateway either",
    networks: '[{"name":"ptp-own-args"}]',
    errors: [
      `${A}[0]: Invalid value: "default/ptp-own-args": its own args.cni.ips 10.50.0.9/24: ptp routes the interface through its IPAM's gateway, and ${IPAM('ptp-own-args', 'spec.config')} gives none for it (only a configured address written with "gateway" has one): the ADD would fail`,
    ],
  },
  {
    name: 'two loaders of a bare IP= are named together',
    networks: '[{"name":"spider-coord","ips":["10.0.0.5","10.0.0.6"]}]',
    errors: [
      `${A}[0].ips: Invalid value: ["10.0.0.5","10.0.0.6"]: coordinator and IPAM spiderpool in default/spider-coord loads IP= in CNI_ARGS as one address, and Multus passes "10.0.0.5,10.0.0.6": the ADD would fail`,
    ],
  },
  {
    name: 'nv-ipam: one bare address in IP= is its first; cni-args.ips are read whole',
    networks: '[{"name":"nv","ips":["10.0.0.5"]},{"name":"nv","cni-args":{"ips":["10.0.0.6","10.0.0.7"]}}]',
    warnings: [`${A}[0].ips`, `${A}[1].cni-args.ips`].map(
      (at) =>
        `${at}: default/nv's IPAM "nv-ipam" (spec.config.plugins[0].ipam) reserves a requested address on its node only: a pod on another node may be given the same address`,
    ),
  },
  {
    name: 'host-local: the gateway requested twice is refused twice, not shared',
    networks: '[{"name":"hl","ips":["10.1.0.1"]},{"name":"hl","ips":["10.1.0.1"]}]',
    errors: [0, 1].map(
      (i) =>
        `${A}[${i}].ips[0]: Invalid value: "10.1.0.1": the gateway of 10.1.0.0/24 (host-local's default: the subnet's first address), which ${HL('hl')} never hands out: the ADD would fail`,
    ),
  },
  {
    name: 'host-local: one selection asking one address by both roads shares it with nobody',
    networks: '[{"name":"hl","ips":["10.1.0.5"],"cni-args":{"ips":["10.1.0.5"]}},{"name":"hl","ips":["10.1.0.6"]}]',
  },
  {
    name: 'static keeps no store: two selections may ask one address',
    networks: '[{"name":"st","ips":["10.0.0.7/24"]},{"name":"st","ips":["10.0.0.7/24"]}]',
  },
  { name: "host-local: the NAD's own args.cni.ips alone are not the pod's to answer for", networks: '[{"name":"hl-own-args"}]' },
  {
    name: 'host-local: two selections outside every range share nothing: each is refused on its own',
    networks: '[{"name":"hl","ips":["10.9.0.5"]},{"name":"hl","ips":["10.9.0.6"]}]',
    errors: [
      `${A}[0].ips[0]: Invalid value: "10.9.0.5": not in any range of ${HL('hl')}: 10.1.0.0/24; the ADD would fail`,
      `${A}[1].ips[0]: Invalid value: "10.9.0.6": not in any range of ${HL('hl')}: 10.1.0.0/24; the ADD would fail`,
    ],
  },
  {
    name: "static: a configured address it cannot read (an octet past 255) stops the prediction: the NAD's own problem",
    networks: '[{"name":"ptp-unreadable"}]',
  },
];

t.test('host-local and static IPAM: cases derived from the executed facts', async (t) => judgeCases(t, derivedCases));

t.test("host-local: the default network's element runs first and is named by its path", async (t) => {
  const parse = (text: string, key: string) =>
    parseNetworks(text, { namespace: 'default' }).networks.map((n) => ({ ...n, path: n.path.replace('k8s.v1.cni.cncf.io/networks', key) }));
  const networks = parse('[{"name":"hl","ips":["10.1.0.5"]}]', 'k8s.v1.cni.cncf.io/networks');
  const defaultNetwork = parse('[{"name":"hl","ips":["10.1.0.5"]}]', 'v1.multus-cni.io/default-network');
  // Given after the annotation's elements, it is still delegate 0.
  const r = builtinChecks([...networks, ...defaultNetwork], nads, NO_EXTRA_READERS);
  t.same(r.errors.map(renderError), [
    `${A}[0].ips[0]: Invalid value: "10.1.0.5": metadata.annotations[v1.multus-cni.io/default-network][0] requests 10.1.0.5 of ${HL('hl')} too, and host-local reserves it for that interface first: the ADD would fail ("requested IP address 10.1.0.5 is not available in range set ...")`,
  ]);
});
