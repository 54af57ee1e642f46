/**
 * Expected mismatches, in ONE place: cases where netattach on main admits a pod whose ADD fails or
 * silently drops a value, in the classes of issue #25 that other branches close (`macs`: MAC
 * shapes, interface names, cni-args against top-level; `ipam`: host-local and static). The oracle
 * asserts that each listed case STILL mismatches: once a fix merges, its entries fail and are
 * deleted here. Generated pods fall into a class by its predicate; delete a class with its cases.
 * Anything else the oracle finds is a finding, not an entry.
 */
import type { Comparison, Execution, Selection } from './model.js';
import { macDigits, requestedOf } from './model.js';

export type PendingClass =
  | 'mac-kernel-refuses'
  | 'mac-20-byte'
  | 'interface-netN'
  | 'cni-args-disagreement'
  | 'host-local-reserved'
  | 'host-local-one-per-range'
  | 'static-nothing-to-assign'
  | 'static-address-configured'
  | 'static-old-cni-version'
  | 'static-route-unreachable';

export interface PendingCase {
  id: string;
  class: PendingClass;
  branch: 'macs' | 'ipam';
  line: string;
}

const macs = (id: string, cls: PendingClass, line: string): PendingCase => ({ id, class: cls, branch: 'macs', line });
const ipam = (id: string, cls: PendingClass, line: string): PendingCase => ({ id, class: cls, branch: 'ipam', line });

export const PENDING: readonly PendingCase[] = [
  macs('mac-br-multicast', 'mac-kernel-refuses', 'bridge: veth with a multicast MAC, EADDRNOTAVAIL; netattach only warns'),
  macs('mac-br-zero', 'mac-kernel-refuses', 'bridge: all-zero MAC refused by the kernel; netattach only warns'),
  macs('mac-br-broadcast', 'mac-kernel-refuses', 'bridge: broadcast MAC refused by the kernel; netattach only warns'),
  macs('mac-br-caps-multicast', 'mac-kernel-refuses', 'bridge (runtimeConfig mac): multicast MAC refused; netattach only warns'),
  macs('mac-mv-multicast', 'mac-kernel-refuses', 'macvlan: multicast MAC refused; netattach only warns'),
  macs('mac-mv-zero', 'mac-kernel-refuses', 'macvlan: all-zero MAC refused; netattach only warns'),
  macs('mac-mv-broadcast', 'mac-kernel-refuses', 'macvlan: broadcast MAC refused; netattach only warns'),
  macs('mac-tuning-multicast', 'mac-kernel-refuses', 'tuning: multicast MAC refused; netattach only warns'),
  macs('mac-tuning-zero', 'mac-kernel-refuses', 'tuning: all-zero MAC refused; netattach only warns'),
  macs('argsmac-br-multicast', 'mac-kernel-refuses', 'bridge reads cni-args mac: multicast refused; netattach says nothing'),
  macs('mac-br-20byte', 'mac-20-byte', 'bridge: a 20-byte MAC fails the veth (EINVAL); admitted silently'),
  macs('mac-mv-20byte', 'mac-20-byte', 'macvlan: a 20-byte MAC fails the link (EINVAL); admitted silently'),
  macs('mac-tuning-20byte', 'mac-20-byte', 'tuning: the kernel keeps the first 6 bytes of a 20-byte MAC; ADD ok with another MAC, no warning'),
  macs('if-netN-taken', 'interface-netN', 'interface net2 on [0]: Multus names [1] net2 too and its ADD fails (validateIfName)'),
  macs('if-netN-earlier', 'interface-netN', 'interface net1 on [1]: [0] already got net1, the ADD of [1] fails'),
  macs('mac-disagree-br', 'cni-args-disagreement', 'bridge takes cni-args mac over MAC=: the top-level mac is dropped silently'),
  macs('mac-disagree-br-caps', 'cni-args-disagreement', 'bridge takes runtimeConfig mac over cni-args: the cni-args mac is dropped silently'),
  macs('mac-disagree-tuning', 'cni-args-disagreement', 'tuning takes cni-args mac over MAC=: the top-level mac is dropped silently'),
  macs('mac-disagree-br-tuning', 'cni-args-disagreement', 'bridge then tuning, both prefer cni-args mac: the top-level mac is dropped silently'),
  macs('st-args-top-differ', 'cni-args-disagreement', 'static: cni-args ips replace the IP= addresses, the top-level ips are dropped silently'),
  ipam('hl-small-gateway', 'host-local-reserved', "host-local: the subnet's default gateway (.1) cannot be requested"),
  ipam('hl-small-network', 'host-local-reserved', 'host-local: the network address is outside the usable range'),
  ipam('hl-small-broadcast', 'host-local-reserved', 'host-local: the broadcast address is outside the usable range'),
  ipam('hl-args-gateway', 'host-local-reserved', "host-local via cni-args ips: the subnet's gateway"),
  ipam('hl-mv-network', 'host-local-reserved', 'host-local (macvlan): the network address'),
  ipam('hl-mv-gateway', 'host-local-reserved', "host-local (macvlan): the subnet's gateway"),
  ipam('hl-mv-broadcast', 'host-local-reserved', 'host-local (macvlan): the broadcast address'),
  ipam('hl-args-two', 'host-local-one-per-range', 'host-local: two cni-args ips in one range set, at most one per range'),
  ipam('hl-args-top-differ', 'host-local-one-per-range', 'host-local: ips and cni-args ips add up to two in one range set'),
  ipam('st-br-configured', 'static-address-configured', 'static: IP= appends an address it already configures, "file exists"'),
  ipam('st-empty-none', 'static-nothing-to-assign', 'static without addresses and nothing requested: "missing IP config"'),
  ipam('st-old-two', 'static-old-cni-version', 'static on cniVersion 0.2.0: more than one address per family'),
  ipam('st-caps-other-subnet', 'static-route-unreachable', "static: runtimeConfig ips replace the addresses, the route's gateway becomes unreachable"),
];

const macBytes = (mac: string): number => macDigits(mac).length / 2;
const refusedByKernel = (mac: string): boolean => {
  const d = macDigits(mac);
  return d.length === 12 && (/^0+$/.test(d) || (parseInt(d.slice(0, 2), 16) & 1) === 1);
};

/** The class a generated pod's mismatch falls in, if any (one selection per generated pod). */
export function pendingClassOf(sel: Selection, run: Execution, cmp: Comparison): PendingClass | undefined {
  const req = requestedOf([sel]);
  const macs = req.filter((r) => r.key === 'mac' || r.key === 'cni-args.mac').map((r) => r.value);
  const ips = req.filter((r) => r.key === 'ips' || r.key === 'cni-args.ips').map((r) => r.value.split('/')[0]!);
  const err = run.error ?? '';
  const topIps = new Set(req.filter((r) => r.key === 'ips').map((r) => r.value.split('/')[0]));
  const argsIps = req.filter((r) => r.key === 'cni-args.ips').map((r) => r.value.split('/')[0]);
  // What the plugin said first: a failed ADD belongs to the class of its error.
  if (macs.some(refusedByKernel) && err.includes('cannot assign requested address')) return 'mac-kernel-refuses';
  if (/is subnet's gateway|failed to allocate all requested IPs/.test(err) && ips.length) {
    if (new Set(ips).size > 1) return topIps.size && argsIps.length ? 'cni-args-disagreement' : 'host-local-one-per-range';
    return 'host-local-reserved';
  }
  if (err.includes('missing IP config')) return 'static-nothing-to-assign';
  if (err.includes('file exists') && err.includes('failed to add IP addr')) return 'static-address-configured';
  if (err.includes('does not support more than 1 address per family')) return 'static-old-cni-version';
  if (err.includes('network is unreachable')) return 'static-route-unreachable';
  if (run.added || err.includes('invalid argument')) {
    if (macs.some((m) => macBytes(m) === 20)) return 'mac-20-byte';
  }
  // An ADD that succeeded but dropped one of two values given both ways.
  if (cmp.mismatch === 'silent-drop') {
    if (macs.length === 2 && macDigits(macs[0]!) !== macDigits(macs[1]!)) return 'cni-args-disagreement';
    const ipsDisagree = topIps.size > 0 && argsIps.length > 0 && (argsIps.length !== topIps.size || argsIps.some((ip) => !topIps.has(ip)));
    if (ipsDisagree) return 'cni-args-disagreement';
  }
  return undefined;
}
