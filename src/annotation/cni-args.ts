// `cni-args` is a second door: Multus merges it into every plugin's `args.cni` whatever the
// capabilities, and plugins read hardware addresses and IPs from there (tuning and bridge
// `mac`, ib-sriov `guid`, static and host-local `ips`). So those keys get the same format
// checks and the same policy treatment as the top-level `mac`, `infiniband-guid` and `ips`.
// Plugins decode args.cni with Go's encoding/json, which matches keys case-insensitively.
import { child, index } from '../field/index.js';
import { canonicalGuid, canonicalMac, guidFormatProblem, macProblem } from './hwaddr.js';
import { ipOrCidrProblem } from './formats.js';
import { goFold } from './keys.js';
import type { NetworkSelection, ParsedNetwork } from './types.js';

export type ArgsKey = 'mac' | 'guid' | 'ips';

/** One address-like value under `cni-args`, with what is wrong with it, if anything. */
export interface ArgsAddress {
  key: ArgsKey;
  /** The key as written (`MAC` is read as `mac`). */
  written: string;
  path: string;
  value: unknown;
  /** Why the value is not one a plugin reads, if it is not. */
  problem?: string;
  /** Lower-case colon form of a valid `mac` or `guid`. */
  canonical?: string;
}

/** The top-level selection key that `cni-args` key stands for (for policy and messages). */
export const ARGS_KEY_FIELD: Readonly<Record<ArgsKey, 'mac' | 'infiniband-guid' | 'ips'>> = {
  mac: 'mac',
  guid: 'infiniband-guid',
  ips: 'ips',
};

const FOLDED: ReadonlyMap<string, ArgsKey> = new Map([
  ['MAC', 'mac'],
  ['GUID', 'guid'],
  ['IPS', 'ips'],
]);

const memo = new WeakMap<NetworkSelection, readonly ArgsAddress[]>();
const NONE: readonly ArgsAddress[] = Object.freeze([]);

function readAddresses(args: Record<string, unknown>, path: string): ArgsAddress[] {
  const out: ArgsAddress[] = [];
  for (const written of Object.keys(args)) {
    const key = FOLDED.get(goFold(written));
    if (key === undefined) continue;
    const value = args[written];
    const at = child(path, written);
    if (key === 'ips') {
      if (!Array.isArray(value) || value.length === 0) {
        out.push({ key, written, path: at, value, problem: 'must be a non-empty list of IP addresses, each with an optional /prefix' });
        continue;
      }
      value.forEach((ip: unknown, j) => {
        const problem = typeof ip === 'string' ? ipOrCidrProblem(ip) : 'must be a string: an IP address with an optional /prefix';
        out.push({ key, written, path: index(at, j), value: ip, ...(problem ? { problem } : {}) });
      });
      continue;
    }
    if (typeof value !== 'string') {
      out.push({ key, written, path: at, value, problem: 'must be a string' });
      continue;
    }
    // ib-sriov's IsValidGUID: colon form, 8 bytes, not all-zero; an explicit all-FF GUID is accepted.
    const problem = key === 'mac' ? macProblem(value) : guidFormatProblem(value);
    if (problem) out.push({ key, written, path: at, value, problem });
    else out.push({ key, written, path: at, value, canonical: key === 'mac' ? canonicalMac(value)! : canonicalGuid(value)! });
  }
  return out;
}

/** The address-like values under a selection's `cni-args` (memoized: selections are shared and read-only). */
export function argsAddresses(net: ParsedNetwork): readonly ArgsAddress[] {
  const args = net.selection['cni-args'];
  if (args === undefined || args === null || typeof args !== 'object') return NONE;
  const hit = memo.get(net.selection);
  if (hit) return hit;
  const found = readAddresses(args, child(net.path, 'cni-args'));
  const result = found.length ? found : NONE;
  memo.set(net.selection, result);
  return result;
}
