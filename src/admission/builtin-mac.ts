// The built-in MAC checks: what the plugins of a NAD's chain do with the MACs a selection asks
// for (src/nads/mac-setters.ts). Each plugin that sets a MAC sets the one it keeps of the two
// doors (top-level `mac`, `cni-args.mac`), so each is judged on that value:
// - the kernel refuses a multicast, broadcast or all-zero address, or one that is not 6 bytes, as
//   the address of an Ethernet interface: a certain ADD failure, an object error;
// - when the two doors disagree, one value is silently dropped: a warning naming the one that
//   takes effect, and the dropped one's path, so that policy and the uniqueness index judge the
//   value the pod really gets (both when the chain does not tell).
import { argsAddresses, type ParsedNetwork, canonicalMac, colonForm, parseHwAddr, specialMacText } from '../annotation/index.js';
import { child, invalid, type FieldError } from '../field/index.js';
import {
  macSettingOf,
  RUNTIME_CONFIG_OVER_ARGS_CNI,
  SETS_MAC_BY,
  type MacDoor,
  type MacSetter,
  argsReachOf,
  reachOf,
  type CniSummary,
  type ExtraReaders,
} from '../nads/index.js';
import type { Note } from './warnings.js';

export interface MacCheck {
  errors: FieldError[];
  warnings: Note[];
  /** Paths of requested MACs that no plugin leaves on the interface (another door's value wins). */
  dropped: string[];
}

/** One requested MAC: where it is written and its bytes (undefined when unreadable: the parser reports it). */
interface Requested {
  door: MacDoor;
  path: string;
  value: string;
  bytes?: readonly number[];
  canonical?: string;
}

const DOOR_NAME: Readonly<Record<MacDoor, string>> = { top: 'the top-level "mac"', args: 'cni-args "mac"' };

const LENGTH_HINT: Readonly<Record<number, string>> = {
  8: ' (use infiniband-guid for an InfiniBand GUID)',
  20: ' (an IPoIB address is for an ipoib or ib-sriov network)',
};

// What the kernel refuses as the 6-byte address of an Ethernet interface: src/annotation/hwaddr.ts.
const specialMac = specialMacText;

/**
 * The MAC the interface gets from a kept value that no setter fails on: a longer one's first 6
 * bytes (a plugin that creates the interface fails on it, and then nothing is said of the other).
 */
const interfaceGets = (m: Requested): string => (m.bytes && m.bytes.length !== 6 ? colonForm(m.bytes.slice(0, 6)) : m.value);

/**
 * What `setter` makes of `bytes` (executed, src/nads/mac-setters.ts SETS_MAC_BY): an error when
 * the kernel refuses it, a warning when it sets only the first 6 bytes of a longer address.
 */
function judgeSet(bytes: readonly number[], setter: MacSetter, ref: string): { error?: string; warning?: string } {
  const { type, path } = setter.plugin;
  const where = `${type} sets the MAC on an Ethernet interface (${ref} ${path})`;
  const by = SETS_MAC_BY.get(type) ?? 'create';
  if (bytes.length !== 6) {
    const what = `an ${bytes.length}-byte address`.replace('an 20', 'a 20');
    if (by === 'create')
      return {
        error: `${what}: ${where}, and the kernel refuses it ("invalid argument"): the ADD would fail${LENGTH_HINT[bytes.length] ?? ''}`,
      };
    const head = bytes.slice(0, 6);
    const special = specialMac(head);
    if (special)
      return {
        error: `${what}: ${where}, which takes its first 6 bytes, ${colonForm(head)}, ${special} the kernel refuses ("cannot assign requested address"): the ADD would fail`,
      };
    return {
      warning: `${what}: ${where} and takes only its first 6 bytes: the interface gets ${colonForm(head)}${LENGTH_HINT[bytes.length] ?? ''}`,
    };
  }
  const special = specialMac(bytes);
  return special
    ? { error: `${special}: ${where}, and the kernel refuses it ("cannot assign requested address"): the ADD would fail` }
    : {};
}

function requestedMacs(net: ParsedNetwork): Requested[] {
  const out: Requested[] = [];
  const top = net.selection.mac;
  if (typeof top === 'string') {
    const addr = parseHwAddr(top);
    out.push({
      door: 'top',
      path: child(net.path, 'mac'),
      value: top,
      ...(addr ? { bytes: addr.bytes, canonical: colonForm(addr.bytes) } : {}),
    });
  }
  for (const a of argsAddresses(net)) {
    if (a.key !== 'mac') continue;
    // A malformed or 8-byte cni-args mac is already reported where it is read (builtin checkArgs).
    const bytes = a.problem === undefined && typeof a.value === 'string' ? parseHwAddr(a.value)?.bytes : undefined;
    out.push({
      door: 'args',
      path: a.path,
      value: String(a.value),
      ...(bytes ? { bytes, canonical: a.canonical ?? canonicalMac(String(a.value)) } : {}),
    });
  }
  return out;
}

/** The MAC checks of one selection on one NAD's chain. */
export function checkMacs(net: ParsedNetwork, ref: string, cni: CniSummary, extra: ExtraReaders): MacCheck {
  const out: MacCheck = { errors: [], warnings: [], dropped: [] };
  const macs = requestedMacs(net);
  if (macs.length === 0) return out;
  const doors = { top: macs.some((m) => m.door === 'top'), args: macs.some((m) => m.door === 'args') };
  const setting = macSettingOf(cni, doors, extra);

  // Each setter is judged on the value it keeps; one message per value, naming the first plugin
  // that fails on it (or, short of a failure, the first that changes it).
  const judged = new Map<string, 'error' | 'warning'>();
  for (const s of setting.setters) {
    for (const m of macs) {
      if (m.door !== s.door || !m.bytes || judged.get(m.path) === 'error') continue;
      const verdict = judgeSet(m.bytes, s, ref);
      if (verdict.error) {
        judged.set(m.path, 'error');
        out.errors.push(invalid(m.path, m.value, verdict.error));
      } else if (verdict.warning && !judged.has(m.path)) {
        judged.set(m.path, 'warning');
        out.warnings.push({ path: m.path, text: verdict.warning });
      }
    }
  }
  // A value a later plugin fails on needs no word on what an earlier one made of it.
  if (out.errors.length) out.warnings = out.warnings.filter((w) => judged.get(w.path) !== 'error');

  const distinct = new Set(macs.map((m) => m.canonical ?? m.value));
  if (!doors.top || !doors.args || distinct.size < 2) return out;
  const last = setting.setters.at(-1);
  if (setting.effective && last) {
    const kept = macs.filter((m) => m.door === setting.effective);
    const lost = macs.filter((m) => m.door !== setting.effective);
    // Two spellings of one key under cni-args (mac, MAC) that disagree: which one Go keeps is not judged here.
    if (new Set(kept.map((m) => m.canonical ?? m.value)).size === 1) {
      // A door no plugin reads at all is reported as unread (capabilities, checkArgs); still dropped.
      const lostIsRead = (lost[0]!.door === 'top' ? reachOf(cni, 'mac', extra) : argsReachOf(cni, 'mac', extra)).status === 'read';
      for (const m of lost) {
        out.dropped.push(m.path);
        // A MAC some plugin fails on fails the ADD: no word on what the interface would get.
        if (lostIsRead && out.errors.length === 0)
          out.warnings.push({
            path: m.path,
            text: `dropped: the interface gets ${interfaceGets(kept[0]!)} (${DOOR_NAME[last.door]}), set last by ${last.plugin.type} in ${ref}: ${precedence(last)}`,
          });
      }
      return out;
    }
  }
  if (setting.setters.length === 0 && setting.unknown.length === 0) return out; // nothing sets either: reported as unread
  const who = setting.unknown.length
    ? `plugin ${setting.unknown.map((u) => `"${u}"`).join(', ')}, which netattach does not know,`
    : 'the chain';
  for (const m of macs) {
    out.warnings.push({
      path: m.path,
      text: `the top-level "mac" and cni-args "mac" ask for different MACs; which one ${who} sets cannot be told, so both are judged`,
    });
  }
  return out;
}

/** Why the setter keeps the door it keeps, as its config loader reads them (src/nads/mac-setters.ts). */
function precedence(s: MacSetter): string {
  const { type } = s.plugin;
  const runtimeConfigWins = RUNTIME_CONFIG_OVER_ARGS_CNI.has(type);
  if (s.door === 'args') {
    return runtimeConfigWins
      ? `it reads args.cni "mac" after MAC= (runtimeConfig "mac" would win, but its config does not declare the capability)`
      : 'it reads args.cni "mac" last, after MAC= and runtimeConfig';
  }
  return runtimeConfigWins ? 'it reads runtimeConfig "mac" (the declared capability) after args.cni' : 'it does not read args.cni "mac"';
}
