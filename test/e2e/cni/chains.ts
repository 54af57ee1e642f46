/**
 * The NADs the oracle runs: small chains of the reference plugins that run in a network namespace
 * here (bridge, macvlan on a veth, ptp, host-device on a veth, tuning, static, host-local). The
 * host netns of each run holds `eth1` (macvlan's master) and `hd0` (host-device's device);
 * ipvlan, vlan and dummy links do not work on this kernel, so those plugins stay source-read.
 */

const V = '1.0.0';

const hostLocal = (...ranges: object[][]) => ({ type: 'host-local', ranges });
const bridge = (extra: object = {}) => ({ type: 'bridge', bridge: 'orc-br0', ...extra });
const macvlan = (extra: object = {}) => ({ type: 'macvlan', master: 'eth1', mode: 'bridge', ...extra });

/** host-local's ranges of `br-hl`: 10.10.0.0/24, addresses .10 to .200, gateway .1. */
export const HL_RANGE = { subnet: '10.10.0.0/24', rangeStart: '10.10.0.10', rangeEnd: '10.10.0.200', gateway: '10.10.0.1' };
/** A /29 without rangeStart/rangeEnd: host-local hands out .2-.6 (.1 is the default gateway, .7 broadcast). */
export const HL_SMALL = { subnet: '10.12.0.0/29' };
export const HL_V6 = { subnet: 'fd00:11::/64', rangeStart: 'fd00:11::10', rangeEnd: 'fd00:11::ff' };

/** A NAD's spec.config: a CNI config, or the text as stored (a config Multus cannot load). */
export type ChainConfig = object | string;

export const CHAINS: ReadonlyMap<string, ChainConfig> = new Map<string, ChainConfig>([
  // bridge sets MAC= / runtimeConfig mac / args.cni.mac; host-local reads IP=, runtimeConfig ips, args.cni.ips.
  ['br-hl', { cniVersion: V, name: 'br-hl', plugins: [bridge({ ipam: hostLocal([HL_RANGE]) })] }],
  [
    'br-hl-caps',
    { cniVersion: V, name: 'br-hl-caps', plugins: [bridge({ capabilities: { ips: true, mac: true }, ipam: hostLocal([HL_RANGE]) })] },
  ],
  ['br-hl-small', { cniVersion: V, name: 'br-hl-small', plugins: [bridge({ ipam: hostLocal([HL_SMALL]) })] }],
  ['br-hl-dual', { cniVersion: V, name: 'br-hl-dual', plugins: [bridge({ ipam: hostLocal([HL_RANGE], [HL_V6]) })] }],
  // Two ranges of one family in one range set: host-local takes one address per range set.
  ['br-hl-set', { cniVersion: V, name: 'br-hl-set', plugins: [bridge({ ipam: hostLocal([HL_RANGE, { subnet: '10.13.0.0/24' }]) })] }],
  // A single plugin config (no "plugins" list), as many NADs are written.
  ['br-hl-conf', { cniVersion: V, name: 'br-hl-conf', ...bridge({ ipam: hostLocal([HL_RANGE]) }) }],
  [
    'br-static',
    {
      cniVersion: V,
      name: 'br-static',
      plugins: [
        bridge({
          ipam: {
            type: 'static',
            addresses: [{ address: '10.20.0.5/24', gateway: '10.20.0.1' }],
            routes: [{ dst: '192.168.0.0/16', gw: '10.20.0.1' }],
          },
        }),
      ],
    },
  ],
  ['br-static-empty', { cniVersion: V, name: 'br-static-empty', plugins: [bridge({ ipam: { type: 'static' } })] }],
  [
    'br-static-caps',
    {
      cniVersion: V,
      name: 'br-static-caps',
      plugins: [
        bridge({
          capabilities: { ips: true, mac: true },
          ipam: { type: 'static', addresses: [{ address: '10.21.0.5/24' }], routes: [{ dst: '192.168.0.0/16', gw: '10.21.0.1' }] },
        }),
      ],
    },
  ],
  ['br-static-old', { cniVersion: '0.2.0', name: 'br-static-old', type: 'bridge', bridge: 'orc-br0', ipam: { type: 'static' } }],
  ['br-noipam', { cniVersion: V, name: 'br-noipam', plugins: [bridge()] }],
  ['br-tuning', { cniVersion: V, name: 'br-tuning', plugins: [bridge({ ipam: hostLocal([HL_RANGE]) }), { type: 'tuning' }] }],
  ['mv-hl', { cniVersion: V, name: 'mv-hl', plugins: [macvlan({ ipam: hostLocal([{ subnet: '10.30.0.0/24' }]) })] }],
  ['mv-static', { cniVersion: V, name: 'mv-static', plugins: [macvlan({ ipam: { type: 'static' } })] }],
  ['mv-caps', { cniVersion: V, name: 'mv-caps', plugins: [macvlan({ capabilities: { mac: true, ips: true }, ipam: { type: 'static' } })] }],
  [
    'mv-tuning',
    { cniVersion: V, name: 'mv-tuning', plugins: [macvlan({ ipam: hostLocal([{ subnet: '10.28.0.0/24' }]) }), { type: 'tuning' }] },
  ],
  ['mv-none', { cniVersion: V, name: 'mv-none', plugins: [macvlan()] }],
  [
    'ptp-hl',
    {
      cniVersion: V,
      name: 'ptp-hl',
      plugins: [{ type: 'ptp', ipam: hostLocal([{ subnet: '10.40.0.0/24', rangeStart: '10.40.0.100', rangeEnd: '10.40.0.110' }]) }],
    },
  ],
  [
    'ptp-tuning',
    { cniVersion: V, name: 'ptp-tuning', plugins: [{ type: 'ptp', ipam: hostLocal([{ subnet: '10.41.0.0/24' }]) }, { type: 'tuning' }] },
  ],
  ['hd-static', { cniVersion: V, name: 'hd-static', plugins: [{ type: 'host-device', device: 'hd0', ipam: { type: 'static' } }] }],
  ['hd-none', { cniVersion: V, name: 'hd-none', plugins: [{ type: 'host-device', device: 'hd0' }] }],
  ['ptp-static-empty', { cniVersion: V, name: 'ptp-static-empty', plugins: [{ type: 'ptp', ipam: { type: 'static' } }] }],
  // Stored before netattach judged NADs, or in a namespace it skips: not JSON, and JSON but no object.
  // Both a top-level type and plugins: Multus's LoadDelegateNetConf runs the top-level plugin
  // alone (a list only when type is empty). ptp reads no MAC; macvlan, listed, would.
  [
    'typed-list',
    {
      cniVersion: V,
      name: 'typed-list',
      type: 'ptp',
      ipam: hostLocal([{ subnet: '10.44.0.0/24' }]),
      plugins: [macvlan({ ipam: hostLocal([{ subnet: '10.45.0.0/24' }]) })],
    },
  ],
  ['broken-json', `{"cniVersion": "${V}", "name": "broken-json", "type": "bridge",`],
  ['json-list', `[{"cniVersion": "${V}", "type": "bridge", "bridge": "orc-br0"}]`],
]);

/** Chains the generator draws from (each with a MAC reader or an IPAM, or both). */
export const GENERATOR_CHAINS = [
  'br-hl',
  'br-hl-caps',
  'br-hl-small',
  'br-static',
  'br-static-caps',
  'br-tuning',
  'mv-hl',
  'mv-static',
  'mv-caps',
  'mv-tuning',
  'ptp-hl',
  'hd-static',
] as const;
