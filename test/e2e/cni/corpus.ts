/**
 * The oracle's table: one pod per case (its selections, on the NADs of chains.ts), each aimed at a
 * chain-reading rule of src/admission/builtin.ts, src/annotation/cni-args.ts or
 * src/nads/plugins.ts (`rule` names it). The verdict is not written here: netattach gives one,
 * the plugins give the other, and model.ts compares them.
 */
import type { Selection } from './model.js';

export interface OracleCase {
  id: string;
  /** The rule or fact the case exercises. */
  rule: string;
  selections: Selection[];
  /** The annotation as the pod writes it, when not the selections as JSON (the simple form). */
  annotation?: string;
}

const c = (id: string, rule: string, ...selections: Selection[]): OracleCase => ({ id, rule, selections });
/** A case written in the simple form, `[namespace/]name[@interface]`, which Multus reads as `selections`. */
const simple = (id: string, rule: string, annotation: string, ...selections: Selection[]): OracleCase => ({
  id,
  rule,
  selections,
  annotation,
});

const IPOIB = '00:00:00:48:fe:80:00:00:00:00:00:00:02:c9:03:00:00:0f:00:01';
const M = '02:00:00:00:00:01';
const M2 = '02:00:00:00:00:02';

export const CORPUS: readonly OracleCase[] = [
  // MAC shapes where a plugin sets the MAC (bridge, macvlan: MAC=; tuning: MAC=, args.cni.mac).
  c('mac-br-unicast', 'plugins: bridge reads MAC=', { name: 'br-hl', mac: M }),
  c('mac-br-dashes', 'hwaddr: Go ParseMAC forms', { name: 'br-hl', mac: '02-00-00-00-00-03' }),
  c('mac-br-dots', 'hwaddr: Go ParseMAC forms', { name: 'br-hl', mac: '0200.0000.0004' }),
  c('mac-br-upper', 'hwaddr: Go ParseMAC forms', { name: 'br-hl', mac: '02:AB:CD:EF:00:05' }),
  c('mac-br-oui', 'hwaddr: a universally administered unicast MAC', { name: 'br-hl', mac: '00:11:22:33:44:55' }),
  c('mac-br-multicast', 'builtin: a MAC the kernel refuses', { name: 'br-hl', mac: '01:00:5e:00:00:01' }),
  c('mac-br-zero', 'builtin: a MAC the kernel refuses', { name: 'br-hl', mac: '00:00:00:00:00:00' }),
  c('mac-br-broadcast', 'builtin: a MAC the kernel refuses', { name: 'br-hl', mac: 'ff:ff:ff:ff:ff:ff' }),
  c('mac-br-8byte', 'builtin: an 8-byte mac on an Ethernet plugin', { name: 'br-hl', mac: '02:00:00:00:00:00:00:01' }),
  c('mac-br-20byte', 'builtin: a 20-byte mac on an Ethernet plugin', { name: 'br-hl', mac: IPOIB }),
  c('mac-br-caps', 'plugins: bridge runtimeConfig mac', { name: 'br-hl-caps', mac: M }),
  c('mac-br-caps-multicast', 'builtin: a MAC the kernel refuses', { name: 'br-hl-caps', mac: '03:00:00:00:00:01' }),
  c('mac-brconf-unicast', 'plugins: a single-plugin config', { name: 'br-hl-conf', mac: M }),
  c('mac-mv-unicast', 'plugins: macvlan reads MAC=', { name: 'mv-hl', mac: M }),
  c('mac-mv-multicast', 'builtin: a MAC the kernel refuses', { name: 'mv-hl', mac: '03:00:00:00:00:01' }),
  c('mac-mv-zero', 'builtin: a MAC the kernel refuses', { name: 'mv-hl', mac: '00:00:00:00:00:00' }),
  c('mac-mv-broadcast', 'builtin: a MAC the kernel refuses', { name: 'mv-hl', mac: 'ff:ff:ff:ff:ff:ff' }),
  c('mac-mv-8byte', 'builtin: an 8-byte mac on an Ethernet plugin', { name: 'mv-hl', mac: '02:00:00:00:00:00:00:01' }),
  c('mac-mv-20byte', 'builtin: a 20-byte mac on an Ethernet plugin', { name: 'mv-hl', mac: IPOIB }),
  c('mac-mv-caps', 'plugins: macvlan runtimeConfig mac', { name: 'mv-caps', mac: M, ips: ['10.24.0.7/24'] }),
  c('mac-tuning-unicast', 'plugins: tuning reads MAC=', { name: 'ptp-tuning', mac: M }),
  c('mac-tuning-multicast', 'builtin: a MAC the kernel refuses', { name: 'ptp-tuning', mac: '01:00:00:00:00:01' }),
  c('mac-tuning-zero', 'builtin: a MAC the kernel refuses', { name: 'ptp-tuning', mac: '00:00:00:00:00:00' }),
  c('mac-tuning-20byte', 'builtin: a 20-byte mac on an Ethernet plugin', { name: 'ptp-tuning', mac: IPOIB }),
  c('mac-tuning-8byte', 'builtin: an 8-byte mac on an Ethernet plugin', { name: 'ptp-tuning', mac: '02:00:00:00:00:00:00:01' }),
  c('mac-mvtuning-unicast', 'plugins: macvlan then tuning', { name: 'mv-tuning', mac: M }),
  c('mac-ptp-ignored', 'builtin capabilities: no plugin of the chain reads a MAC', { name: 'ptp-hl', mac: M }),
  c('mac-hd-ignored', 'builtin capabilities: no plugin of the chain reads a MAC', { name: 'hd-none', mac: M }),
  c('mac-twice-in-pod', 'uniqueness: one MAC on two interfaces of one pod', { name: 'br-hl', mac: M }, { name: 'mv-hl', mac: M }),

  // cni-args mac: bridge and tuning read args.cni.mac; macvlan does not.
  c('argsmac-br', 'cni-args: bridge reads args.cni.mac', { name: 'br-hl', 'cni-args': { mac: M } }),
  c('argsmac-br-upper-key', 'cni-args: keys match case-insensitively', { name: 'br-hl', 'cni-args': { MAC: M } }),
  c('argsmac-br-malformed', 'cni-args: a malformed mac where a plugin reads it', { name: 'br-hl', 'cni-args': { mac: 'zz' } }),
  c('argsmac-br-multicast', 'builtin: a MAC the kernel refuses', { name: 'br-hl', 'cni-args': { mac: '01:00:5e:00:00:01' } }),
  c('argsmac-tuning', 'cni-args: tuning reads args.cni.mac', { name: 'ptp-tuning', 'cni-args': { mac: M } }),
  c('argsmac-mvtuning', 'cni-args: tuning after macvlan', { name: 'mv-tuning', 'cni-args': { mac: M } }),
  c('argsmac-mv-ignored', 'cni-args: no plugin of the chain reads args.cni.mac', { name: 'mv-hl', 'cni-args': { mac: M } }),
  c('argsmac-ptp-ignored', 'cni-args: no plugin of the chain reads args.cni.mac', { name: 'ptp-hl', 'cni-args': { mac: M } }),
  c('argsmac-other-key', 'cni-args: keys that are not addresses pass', { name: 'br-hl', 'cni-args': { foo: 'bar', mac: M } }),
  c('mac-agree-br', 'cni-args: top-level and cni-args agree', { name: 'br-hl', mac: M, 'cni-args': { mac: M } }),
  c('mac-agree-forms-br', 'cni-args: one address in two forms', { name: 'br-hl', mac: M, 'cni-args': { mac: '02-00-00-00-00-01' } }),
  c('mac-disagree-br', 'cni-args vs top-level: bridge takes args.cni over MAC=', { name: 'br-hl', mac: M, 'cni-args': { mac: M2 } }),
  c('mac-disagree-br-caps', 'cni-args vs top-level: bridge takes runtimeConfig over args.cni', {
    name: 'br-hl-caps',
    mac: M,
    'cni-args': { mac: M2 },
  }),
  c('mac-disagree-tuning', 'cni-args vs top-level: tuning takes args.cni over both', {
    name: 'ptp-tuning',
    mac: M,
    'cni-args': { mac: M2 },
  }),
  c('mac-disagree-br-tuning', 'cni-args vs top-level: bridge then tuning', { name: 'br-tuning', mac: M, 'cni-args': { mac: M2 } }),
  c('mac-disagree-mv', 'cni-args vs top-level: macvlan reads no args.cni', { name: 'mv-hl', mac: M, 'cni-args': { mac: M2 } }),

  // host-local: one address per range set, within rangeStart..rangeEnd, not reserved.
  c('hl-in-range', 'builtin: host-local range', { name: 'br-hl', ips: ['10.10.0.50'] }),
  c('hl-in-range-prefix', 'builtin: host-local ignores the prefix', { name: 'br-hl', ips: ['10.10.0.51/24'] }),
  c('hl-other-prefix', 'builtin: host-local ignores the prefix', { name: 'br-hl', ips: ['10.10.0.52/16'] }),
  c('hl-range-start', 'builtin: host-local rangeStart edge', { name: 'br-hl', ips: ['10.10.0.10'] }),
  c('hl-range-end', 'builtin: host-local rangeEnd edge', { name: 'br-hl', ips: ['10.10.0.200'] }),
  c('hl-below-start', 'builtin: host-local rangeStart edge', { name: 'br-hl', ips: ['10.10.0.9'] }),
  c('hl-above-end', 'builtin: host-local rangeEnd edge', { name: 'br-hl', ips: ['10.10.0.201'] }),
  c('hl-gateway-outside', 'builtin: host-local gateway', { name: 'br-hl', ips: ['10.10.0.1'] }),
  c('hl-other-subnet', 'builtin: host-local range', { name: 'br-hl', ips: ['10.99.0.5'] }),
  c('hl-v6-in-v4', 'builtin: host-local range', { name: 'br-hl', ips: ['fd00:11::20'] }),
  c('hl-two', 'builtin: host-local one IP per range set', { name: 'br-hl', ips: ['10.10.0.50', '10.10.0.51'] }),
  c('hl-small-first', 'builtin: host-local default range', { name: 'br-hl-small', ips: ['10.12.0.2'] }),
  c('hl-small-last', 'builtin: host-local default range', { name: 'br-hl-small', ips: ['10.12.0.6'] }),
  c('hl-small-gateway', 'builtin: host-local reserved gateway', { name: 'br-hl-small', ips: ['10.12.0.1'] }),
  c('hl-small-network', 'builtin: host-local reserved network address', { name: 'br-hl-small', ips: ['10.12.0.0'] }),
  c('hl-small-broadcast', 'builtin: host-local reserved broadcast address', { name: 'br-hl-small', ips: ['10.12.0.7'] }),
  c('hl-dual-v4', 'builtin: host-local range sets', { name: 'br-hl-dual', ips: ['10.10.0.60'] }),
  c('hl-dual-v6', 'builtin: host-local range sets', { name: 'br-hl-dual', ips: ['fd00:11::20'] }),
  c('hl-dual-v6-out', 'builtin: host-local rangeEnd edge (IPv6)', { name: 'br-hl-dual', ips: ['fd00:11::100'] }),
  c('hl-dual-both', 'builtin: host-local one IP per range set', { name: 'br-hl-dual', ips: ['10.10.0.60', 'fd00:11::20'] }),
  c('hl-set-second', 'builtin: host-local second range of a set', { name: 'br-hl-set', ips: ['10.13.0.5'] }),
  c('hl-set-both', 'builtin: host-local one IP per range set', { name: 'br-hl-set', ips: ['10.10.0.50', '10.13.0.5'] }),
  c('hl-caps-one', 'builtin: host-local runtimeConfig ips', { name: 'br-hl-caps', ips: ['10.10.0.70'] }),
  c('hl-caps-two', 'builtin: host-local one IP per range set (IP= first)', { name: 'br-hl-caps', ips: ['10.10.0.70', '10.10.0.71'] }),
  c('hl-caps-out', 'builtin: host-local range with the ips capability', { name: 'br-hl-caps', ips: ['10.10.0.250'] }),
  c('hl-conf-one', 'builtin: host-local in a single-plugin config', { name: 'br-hl-conf', ips: ['10.10.0.80'] }),
  c('hl-args-one', 'cni-args: host-local reads args.cni.ips', { name: 'br-hl', 'cni-args': { ips: ['10.10.0.90'] } }),
  c('hl-args-two', 'cni-args: host-local one IP per range set', { name: 'br-hl', 'cni-args': { ips: ['10.10.0.90', '10.10.0.91'] } }),
  c('hl-args-out', 'cni-args: host-local range', { name: 'br-hl', 'cni-args': { ips: ['10.10.0.5'] } }),
  c('hl-args-gateway', 'cni-args: host-local reserved gateway', { name: 'br-hl-small', 'cni-args': { ips: ['10.12.0.1'] } }),
  c('hl-args-malformed', 'cni-args: a malformed ips entry', { name: 'br-hl', 'cni-args': { ips: ['10.10.0.300'] } }),
  c('hl-args-top-same', 'cni-args vs top-level: one address twice', {
    name: 'br-hl',
    ips: ['10.10.0.92'],
    'cni-args': { ips: ['10.10.0.92'] },
  }),
  c('hl-args-top-differ', 'cni-args vs top-level: host-local takes the union', {
    name: 'br-hl',
    ips: ['10.10.0.92'],
    'cni-args': { ips: ['10.10.0.93'] },
  }),
  c('hl-ptp-in', 'builtin: host-local range (ptp)', { name: 'ptp-hl', ips: ['10.40.0.105'] }),
  c('hl-ptp-out', 'builtin: host-local rangeEnd edge (ptp)', { name: 'ptp-hl', ips: ['10.40.0.111'] }),
  c('hl-mv-in', 'builtin: host-local range (macvlan)', { name: 'mv-hl', ips: ['10.30.0.5'] }),
  c('hl-mv-network', 'builtin: host-local reserved network address', { name: 'mv-hl', ips: ['10.30.0.0'] }),
  c('hl-mv-gateway', 'builtin: host-local reserved gateway', { name: 'mv-hl', ips: ['10.30.0.1'] }),
  c('hl-mv-broadcast', 'builtin: host-local reserved broadcast address', { name: 'mv-hl', ips: ['10.30.0.255'] }),
  // One pod, one NAD, one address twice: host-local reserves it for the first interface.
  c(
    'hl-twice-in-pod',
    'builtin: one host-local address on two selections of one NAD',
    { name: 'br-hl', ips: ['10.10.0.50'] },
    { name: 'br-hl', ips: ['10.10.0.50/24'] },
  ),
  c(
    'hl-twice-in-pod-args',
    'builtin: one host-local address on two selections of one NAD (args.cni)',
    { name: 'br-hl', ips: ['10.10.0.50'] },
    { name: 'br-hl', 'cni-args': { ips: ['10.10.0.50'] } },
  ),
  c(
    'hl-two-in-pod',
    'builtin: two host-local addresses on two selections of one NAD',
    { name: 'br-hl', ips: ['10.10.0.50'] },
    { name: 'br-hl', ips: ['10.10.0.51'] },
  ),

  // static: IP= appended to the configured addresses, args.cni.ips and runtimeConfig ips replace them.
  c('st-br-append', 'builtin: static appends IP=', { name: 'br-static', ips: ['10.20.0.6/24'] }),
  c('st-br-configured', 'builtin: static asked for an address it configures', { name: 'br-static', ips: ['10.20.0.5/24'] }),
  c('st-br-bare', 'builtin: static needs a prefix', { name: 'br-static', ips: ['10.20.0.6'] }),
  c('st-br-none', 'builtin: static with its configured address', { name: 'br-static' }),
  c('st-empty-none', 'builtin: static with nothing to assign', { name: 'br-static-empty' }),
  c('st-ptp-none', 'builtin: static with nothing to assign (ptp)', { name: 'ptp-static-empty' }),
  c('st-ptp-one', 'builtin: static from IP= alone (ptp, no gateway to route by)', { name: 'ptp-static-empty', ips: ['10.29.0.5/24'] }),
  c('st-empty-one', 'builtin: static from IP= alone', { name: 'br-static-empty', ips: ['10.22.0.5/24'] }),
  c('st-empty-two', 'builtin: static several per family (1.0.0)', { name: 'br-static-empty', ips: ['10.22.0.5/24', '10.22.0.6/24'] }),
  c('st-empty-dual', 'builtin: static one per family', { name: 'br-static-empty', ips: ['10.22.0.5/24', 'fd00:22::5/64'] }),
  c('st-empty-bare-v6', 'builtin: static needs a prefix', { name: 'br-static-empty', ips: ['fd00:22::5'] }),
  c('st-old-one', 'builtin: static on cniVersion 0.2.0', { name: 'br-static-old', ips: ['10.27.0.5/24'] }),
  c('st-old-two', 'builtin: static more than one per family on an old cniVersion', {
    name: 'br-static-old',
    ips: ['10.27.0.5/24', '10.27.0.6/24'],
  }),
  c('st-old-dual', 'builtin: static one per family on an old cniVersion', {
    name: 'br-static-old',
    ips: ['10.27.0.5/24', 'fd00:27::5/64'],
  }),
  c('st-caps-same-subnet', 'builtin: static runtimeConfig ips replace, route still reachable', {
    name: 'br-static-caps',
    ips: ['10.21.0.9/24'],
  }),
  c('st-caps-other-subnet', 'builtin: static route gateway unreachable after runtimeConfig ips', {
    name: 'br-static-caps',
    ips: ['10.23.0.9/24'],
  }),
  c('st-args-one', 'cni-args: static reads args.cni.ips', { name: 'mv-static', 'cni-args': { ips: ['10.24.0.5/24'] } }),
  c('st-args-bare', 'cni-args: static needs a prefix', { name: 'mv-static', 'cni-args': { ips: ['10.24.0.5'] } }),
  c('st-args-top-differ', 'cni-args vs top-level: static args.cni.ips replace IP=', {
    name: 'mv-static',
    ips: ['10.24.0.5/24'],
    'cni-args': { ips: ['10.24.0.6/24'] },
  }),
  c('st-args-top-same', 'cni-args vs top-level: one address twice', {
    name: 'mv-static',
    ips: ['10.24.0.5/24'],
    'cni-args': { ips: ['10.24.0.5/24'] },
  }),
  c('st-mv-one', 'builtin: static (macvlan)', { name: 'mv-static', ips: ['10.25.0.5/24'] }),
  c('st-mv-network', 'builtin: static takes any address', { name: 'mv-static', ips: ['10.25.0.0/24'] }),
  c('st-mv-host32', 'builtin: static /32', { name: 'mv-static', ips: ['10.25.0.5/32'] }),
  c('st-hd-one', 'builtin: static (host-device)', { name: 'hd-static', ips: ['10.26.0.5/24'] }),
  c('st-hd-v6', 'builtin: static IPv6 (host-device)', { name: 'hd-static', ips: ['fd00:26::5/64'] }),
  c('hl-mvtuning-both', 'plugins: macvlan, host-local and tuning', { name: 'mv-tuning', mac: M, ips: ['10.28.0.5'] }),

  // Chains that read no IP.
  c('ips-noipam-br', 'builtin capabilities: no IPAM reads ips', { name: 'br-noipam', ips: ['10.10.0.50/24'] }),
  c('ips-noipam-mv', 'builtin capabilities: no IPAM reads ips', { name: 'mv-none', ips: ['10.10.0.50/24'] }),
  c('ips-noipam-hd', 'builtin capabilities: no IPAM reads ips', { name: 'hd-none', ips: ['10.10.0.50/24'] }),
  c('args-ips-noipam', 'cni-args: no plugin reads args.cni.ips', { name: 'br-noipam', 'cni-args': { ips: ['10.10.0.50/24'] } }),

  // Interface names: "interface", else net<N> (Multus's getIfname); eth0 is the cluster network's.
  c('if-custom', 'annotation: interface', { name: 'br-hl', interface: 'eth9' }),
  c('if-15-chars', 'annotation: interface length', { name: 'br-hl', interface: 'abcdefghijklmno' }),
  c('if-16-chars', 'annotation: interface length', { name: 'br-hl', interface: 'abcdefghijklmnop' }),
  c('if-eth0', 'annotation: the cluster network interface', { name: 'br-hl', interface: 'eth0' }),
  c('if-lo', 'annotation: the loopback interface', { name: 'br-hl', interface: 'lo' }),
  c('if-two-default', 'annotation: net1, net2', { name: 'mv-none' }, { name: 'br-noipam' }),
  c('if-net1-first', "annotation: a selection's own netN", { name: 'mv-none', interface: 'net1' }, { name: 'br-noipam' }),
  c(
    'if-netN-taken',
    'builtin: interface equal to the netN of a later selection',
    { name: 'mv-none', interface: 'net2' },
    { name: 'br-noipam' },
  ),
  c(
    'if-netN-earlier',
    'builtin: interface equal to the netN of an earlier selection',
    { name: 'mv-none' },
    { name: 'br-noipam', interface: 'net1' },
  ),
  c(
    'if-same-twice',
    'annotation: one interface name twice',
    { name: 'mv-none', interface: 'eth5' },
    { name: 'br-noipam', interface: 'eth5' },
  ),
  c('if-net-far', 'annotation: net<N> no selection takes', { name: 'mv-none', interface: 'net7' }, { name: 'br-noipam' }),
  simple(
    'if-netN-taken-simple',
    'builtin: name@netN equal to the netN of a later selection (simple form)',
    'mv-none@net2, br-noipam',
    { name: 'mv-none', interface: 'net2' },
    { name: 'br-noipam' },
  ),
  simple(
    'if-netN-earlier-simple',
    'builtin: name@netN equal to the netN of an earlier selection (simple form)',
    'mv-none,default/br-noipam@net1',
    { name: 'mv-none' },
    { name: 'br-noipam', interface: 'net1' },
  ),
  simple(
    'if-simple-custom',
    'annotation: the simple form with interfaces',
    'mv-none@eth7,br-noipam',
    { name: 'mv-none', interface: 'eth7' },
    { name: 'br-noipam' },
  ),

  // default-route: Multus adds a route via each gateway on the interface after the ADD (SetDefaultGW).
  c('dr-in-subnet', 'builtin gateway: a gateway in the subnet host-local assigns', { name: 'br-hl', 'default-route': ['10.10.0.1'] }),
  c('dr-outside', 'builtin gateway: a gateway in no subnet of the interface', { name: 'br-hl', 'default-route': ['10.99.0.1'] }),
  c('dr-static-in', 'builtin gateway: static addresses count', {
    name: 'br-static',
    ips: ['10.20.0.5/24'],
    'default-route': ['10.20.0.1'],
  }),
  c('dr-v4-unreachable-then-v6', 'builtin gateway: only the last gateway error counts (SetDefaultGW)', {
    name: 'br-hl-dual',
    'default-route': ['10.99.0.1', 'fd00:11::1'],
  }),
  c('dr-noipam', 'builtin gateway: no address at all', { name: 'br-noipam', 'default-route': ['10.10.0.1'] }),

  // A config with both type and plugins runs its top-level plugin alone.
  c('typed-list-plain', 'nads: type and plugins, the top-level plugin runs', { name: 'typed-list' }),
  c('typed-list-mac', 'nads: type and plugins, MAC judged against the top-level plugin', { name: 'typed-list', mac: M }),
  c('typed-list-ip', 'nads: type and plugins, IP judged against the top-level IPAM', { name: 'typed-list', ips: ['10.44.0.9'] }),
  c('typed-list-ip-listed', "nads: type and plugins, the listed plugin's range is not used", { name: 'typed-list', ips: ['10.45.0.9'] }),

  // NADs Multus cannot load: every ADD on them fails.
  c('nad-not-json', 'builtin: a spec.config that is not JSON', { name: 'broken-json' }),
  c('nad-json-list', 'builtin: a spec.config that is JSON but no object', { name: 'json-list' }),
  c('none-br', 'nothing requested', { name: 'br-hl' }),
];
