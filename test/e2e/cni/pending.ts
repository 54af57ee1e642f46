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

const _macs = (id: string, cls: PendingClass, line: string): PendingCase => ({ id, class: cls, branch: 'macs', line });
const _ipam = (id: string, cls: PendingClass, line: string): PendingCase => ({ id, class: cls, branch: 'ipam', line });

// Both branches have merged: every case of their classes now agrees with execution.
export const PENDING: readonly PendingCase[] = [];

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
