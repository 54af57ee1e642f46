/**
 * The oracle's core, pure: what a selection asks for, what the plugins did with it, and whether
 * netattach's verdict agrees. Agreement (docs/cni-runtime.md, "Executed facts"):
 * - a denial is right when the ADD fails or does not apply what was asked; denying a pod whose
 *   ADD succeeds and applies everything is a **false denial**;
 * - an admission is right when the ADD succeeds and applies everything, or applies less and a
 *   warning on that selection says so; an admitted pod whose ADD fails is a **missed failure**,
 *   one whose ADD drops a value without a warning a **silent drop**.
 */
import net from 'node:net';

/** One element of the networks annotation, as the corpus writes it (namespace "default"). */
export interface Selection {
  name: string;
  interface?: string;
  mac?: string;
  ips?: string[];
  'default-route'?: string[];
  'cni-args'?: Record<string, unknown>;
}

/** One interface as `ip -j` shows it in the container netns after the ADD. */
export interface ReadBack {
  ifName: string;
  mac: string;
  /** Global-scope addresses, `ip/prefix`. */
  addresses: string[];
  /** `dst` or `dst via gateway`. */
  routes: string[];
}

export interface Execution {
  /** Every selection's ADD succeeded. */
  added: boolean;
  /** The selection whose ADD failed, and why. */
  failedAt?: number;
  error?: string;
  /** One per successful ADD, in order. */
  interfaces: ReadBack[];
  delErrors: string[];
}

export interface Verdict {
  allowed: boolean;
  /** Rendered field errors of a denial. */
  errors: string[];
  /** Whole warning texts (`path: text`). */
  warnings: string[];
}

export type Mismatch = 'false-denial' | 'missed-failure' | 'silent-drop';

/** A requested value and where it was written. */
export interface Requested {
  selection: number;
  key: 'mac' | 'ips' | 'cni-args.mac' | 'cni-args.ips';
  value: string;
}

export interface Comparison {
  mismatch?: Mismatch;
  /** Requested values the ADD did not apply (empty when it failed). */
  dropped: Requested[];
  /** One line for a report. */
  summary: string;
}

export const NETWORKS_PATH = 'metadata.annotations[k8s.v1.cni.cncf.io/networks]';

/** Case-insensitive, as Go's encoding/json matches args.cni keys. */
const argsValue = (args: Record<string, unknown> | undefined, key: string): unknown =>
  args ? Object.entries(args).find(([k]) => k.toLowerCase() === key)?.[1] : undefined;

export function requestedOf(selections: readonly Selection[]): Requested[] {
  const out: Requested[] = [];
  selections.forEach((s, i) => {
    if (typeof s.mac === 'string') out.push({ selection: i, key: 'mac', value: s.mac });
    for (const ip of s.ips ?? []) out.push({ selection: i, key: 'ips', value: ip });
    const mac = argsValue(s['cni-args'], 'mac');
    if (typeof mac === 'string') out.push({ selection: i, key: 'cni-args.mac', value: mac });
    const ips = argsValue(s['cni-args'], 'ips');
    if (Array.isArray(ips)) for (const ip of ips) if (typeof ip === 'string') out.push({ selection: i, key: 'cni-args.ips', value: ip });
  });
  return out;
}

/** Hex digits of a hardware address in any of Go's ParseMAC forms, lower case. */
export const macDigits = (mac: string): string => mac.replace(/[:.-]/g, '').toLowerCase();

/** An address without its prefix, in one canonical text (IPv6 compressed), or undefined when it is none. */
export function canonicalIp(text: string): string | undefined {
  const bare = text.split('/')[0]!;
  const family = net.isIP(bare);
  if (family === 4) return bare;
  if (family === 6) return new URL(`http://[${bare}]`).hostname.slice(1, -1);
  return undefined;
}

/** Whether the interface shows the requested value (a MAC as its address, an IP among its addresses). */
export function applied(r: Requested, iface: ReadBack | undefined): boolean {
  if (!iface) return false;
  if (r.key === 'mac' || r.key === 'cni-args.mac') return macDigits(r.value) === macDigits(iface.mac);
  const want = canonicalIp(r.value);
  return want !== undefined && iface.addresses.some((a) => canonicalIp(a) === want);
}

/** Whether a warning is about selection `i` (its path starts with the selection's). */
export function warnsAbout(warnings: readonly string[], i: number): boolean {
  const prefix = `${NETWORKS_PATH}[${i}]`;
  return warnings.some((w) => w.startsWith(prefix) && /^[.:[]/.test(w.slice(prefix.length)));
}

export function compare(selections: readonly Selection[], verdict: Verdict, run: Execution): Comparison {
  const dropped = run.added ? requestedOf(selections).filter((r) => !applied(r, run.interfaces[r.selection])) : [];
  const did = run.added
    ? dropped.length
      ? `ADD ok, dropped ${dropped.map((d) => `[${d.selection}].${d.key}=${d.value}`).join(', ')}`
      : 'ADD ok, applied'
    : `ADD of [${run.failedAt}] failed: ${run.error}`;
  const said = verdict.allowed
    ? verdict.warnings.length
      ? `admitted with warnings: ${verdict.warnings.join(' | ')}`
      : 'admitted'
    : `denied: ${verdict.errors.join(' | ')}`;
  const summary = `${said}; ${did}`;
  if (!verdict.allowed) return run.added && dropped.length === 0 ? { mismatch: 'false-denial', dropped, summary } : { dropped, summary };
  if (!run.added) return { mismatch: 'missed-failure', dropped, summary };
  const silent = dropped.filter((d) => !warnsAbout(verdict.warnings, d.selection));
  return silent.length ? { mismatch: 'silent-drop', dropped, summary } : { dropped, summary };
}
