// Address arithmetic for host-local's ranges (ipaddr.js does the parsing), after host-local's
// allocator (containernetworking/plugins v1.10.0 plugins/ipam/host-local/backend/allocator):
// range.go Canonicalize fills in the bounds (rangeStart: the subnet's second address; rangeEnd:
// the last one, less the broadcast address for IPv4) and the gateway (the second address), and
// refuses a subnet too small to allocate from (/31, /32, /127, /128) or with host bits set;
// Contains is the subnet and the bounds, inclusive; allocator.go Get refuses the gateway.
// Executed: a requested network or broadcast address fails only for lying outside the default
// bounds, and is handed out (the kernel takes it) when rangeStart or rangeEnd includes it.
import ipaddr from 'ipaddr.js';
import type { IpRange } from './types.js';

type Addr = ipaddr.IPv4 | ipaddr.IPv6;

/**
 * The family's own parser, chosen by a colon: ipaddr.js's generic parseCIDR tries IPv6 first and
 * throws (an Error with its stack) for every IPv4 text, a third of a review's IPAM checks' time.
 * Only IPv6 text holds a colon, so the choice changes no result.
 */
const family = (text: string): typeof ipaddr.IPv4 | typeof ipaddr.IPv6 => (text.includes(':') ? ipaddr.IPv6 : ipaddr.IPv4);

/**
 * Go's parser (net/netip, behind ParseIP and ParseCIDR since Go 1.17) reads IPv4 only as four
 * decimal octets without leading zeros, and no zone: ipaddr.js also reads `010.0.0.1` (octal: 8.0.0.1),
 * `0x0a.0.0.1`, `10.1` and `fe80::1%eth0`. Such a text fails in the plugin, so it is not an address here.
 */
const GO_IPV4 = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;
const GO_IPV6_TAIL_V4 = /:((?:\d+\.){3}\d+)$/;
function goReads(address: string): boolean {
  if (!address.includes(':')) return GO_IPV4.test(address);
  if (address.includes('%')) return false;
  const tail = GO_IPV6_TAIL_V4.exec(address);
  return tail === null ? !address.includes('.') : GO_IPV4.test(tail[1]!);
}

/**
 * `address/prefix` as Go's ParseCIDR reads it; a bare address too where `bare` allows it. The prefix
 * is decimal digits, leading zeros allowed (`/0024` is /24: Go's dtoi, run with Go 1.26); one past
 * the address's length is refused by ipaddr.js's parseCIDR, as by Go.
 */
function goReadsCidr(text: string, bare = false): boolean {
  const slash = text.indexOf('/');
  if (slash < 0) return bare && goReads(text);
  return goReads(text.slice(0, slash)) && /^\d+$/.test(text.slice(slash + 1));
}

const parse = (text: string): Addr | undefined => {
  if (!goReads(text)) return undefined;
  try {
    const a = family(text).parse(text);
    return a.kind() === 'ipv6' && (a as ipaddr.IPv6).isIPv4MappedAddress() ? (a as ipaddr.IPv6).toIPv4Address() : a;
  } catch {
    return undefined;
  }
};

const toBig = (a: Addr): bigint => a.toByteArray().reduce((n, b) => (n << 8n) | BigInt(b), 0n);
const bitsOf = (a: Addr): number => (a.kind() === 'ipv4' ? 32 : 128);

/** A range as host-local canonicalizes it, or why it cannot be told. */
interface Canonical {
  kind: string;
  network: bigint;
  last: bigint;
  start: bigint;
  end: bigint;
  gateway: bigint;
}

function fromBig(n: bigint, kind: string): string {
  const bytes: number[] = [];
  for (let i = kind === 'ipv4' ? 4 : 16; i > 0; i--) {
    bytes.unshift(Number(n & 0xffn));
    n >>= 8n;
  }
  return ipaddr.fromByteArray(bytes).toString();
}

const canonicalMemo = new WeakMap<IpRange, Canonical | null>();

/** host-local's Canonicalize; null where host-local would refuse the range or it cannot be read (no verdict then). */
function canonical(r: IpRange): Canonical | null {
  let c = canonicalMemo.get(r);
  if (c === undefined) canonicalMemo.set(r, (c = computeCanonical(r)));
  return c;
}

function computeCanonical(r: IpRange): Canonical | null {
  let subnet: [Addr, number];
  if (!goReadsCidr(r.subnet)) return null;
  try {
    subnet = family(r.subnet).parseCIDR(r.subnet);
  } catch {
    return null;
  }
  const [base, prefix] = subnet;
  const kind = base.kind();
  const bits = bitsOf(base);
  if (prefix > bits - 2) return null;
  const hostMask = (1n << BigInt(bits - prefix)) - 1n;
  const network = toBig(base);
  if ((network & hostMask) !== 0n) return null;
  const last = network | hostMask;
  const inSubnet = (n: bigint): boolean => n >= network && n <= last;
  const bound = (text: string | undefined, fallback: bigint): bigint | null | undefined => {
    if (text === undefined) return fallback;
    const a = parse(text);
    if (!a) return undefined; // unreadable: no bound (as before), never a denial
    if (a.kind() !== kind) return undefined;
    const n = toBig(a);
    return inSubnet(n) ? n : null;
  };
  const start = bound(r.rangeStart, network + 1n);
  const end = bound(r.rangeEnd, kind === 'ipv4' ? last - 1n : last);
  const gateway = bound(r.gateway, network + 1n);
  if (start === null || end === null || gateway === null) return null;
  const c: Canonical = { kind, network, last, start: start ?? network, end: end ?? last, gateway: gateway ?? -1n };
  return c.start > c.end ? null : c;
}

/** Where host-local puts a requested address. */
export type Placement =
  /** In `range`; `gateway` when it is the address host-local keeps for the gateway. `key` identifies the address. */
  | { status: 'in'; range: IpRange; gateway: boolean; key: string }
  /** In the subnet of `range` but outside the addresses host-local hands out there (`first`-`last`). */
  | { status: 'outside-bounds'; range: IpRange; first: string; last: string; special?: 'network address' | 'broadcast address' }
  /** In the subnet of no range. */
  | { status: 'no-subnet' }
  /** Cannot be told: an unreadable address, or no range host-local would accept. */
  | { status: 'unknown' };

/**
 * Where host-local puts `address` (an IP, optionally with /prefix, which host-local ignores):
 * the first range containing it (range_set.go RangeFor), else why none does.
 */
export function placeInRanges(address: string, ranges: readonly IpRange[]): Placement {
  const slash = address.indexOf('/');
  const ip = parse(slash < 0 ? address : address.slice(0, slash));
  if (!ip) return { status: 'unknown' };
  const n = toBig(ip);
  const kind = ip.kind();
  let readable = false;
  let bounds: Placement | undefined;
  for (const r of ranges) {
    const c = canonical(r);
    if (!c) continue;
    readable = true;
    if (c.kind !== kind || n < c.network || n > c.last) continue;
    if (n >= c.start && n <= c.end) return { status: 'in', range: r, gateway: n === c.gateway, key: `${kind}/${n}` };
    if (!bounds) {
      const special = n === c.network ? 'network address' : kind === 'ipv4' && n === c.last ? 'broadcast address' : undefined;
      bounds = {
        status: 'outside-bounds',
        range: r,
        first: fromBig(c.start, kind),
        last: fromBig(c.end, kind),
        ...(special ? { special } : {}),
      };
    }
  }
  return bounds ?? (readable ? { status: 'no-subnet' } : { status: 'unknown' });
}

/**
 * Whether `address` lies in one of `ranges` as host-local reads them; undefined when that cannot
 * be told (no readable range, unreadable address).
 */
export function inRanges(address: string, ranges: readonly IpRange[]): boolean | undefined {
  const p = placeInRanges(address, ranges);
  return p.status === 'unknown' ? undefined : p.status === 'in';
}

/** An address with its prefix (the full length when none is written). */
export interface Cidr {
  kind: 'ipv4' | 'ipv6';
  value: bigint;
  prefix: number;
}

/**
 * parseCidr's answers by text: the same few addresses (a template's IP=, a NAD's gateway) are read
 * on every review, and ipaddr.js's parse was 3-4 % of a saturated server's CPU (docs/performance.md).
 * Bounded: texts longer than any address (64 characters) are not kept, and at CIDR_MEMO_MAX
 * entries the oldest goes. Answers are frozen, so a caller cannot change another's.
 */
const CIDR_MEMO_MAX = 1024;
const CIDR_TEXT_MAX = 64;
const cidrMemo = new Map<string, Cidr | undefined>();

/** Reads `a.b.c.d/n`, `x::y/n` or a bare address as Go's net.ParseCIDR and ParseIP do; undefined for anything else (IPv4-mapped included). */
export function parseCidr(text: string): Cidr | undefined {
  if (text.length > CIDR_TEXT_MAX) return readCidr(text);
  const known = cidrMemo.get(text);
  if (known !== undefined || cidrMemo.has(text)) return known;
  const read = readCidr(text);
  if (cidrMemo.size >= CIDR_MEMO_MAX) cidrMemo.delete(cidrMemo.keys().next().value!);
  cidrMemo.set(text, read);
  return read;
}

function readCidr(text: string): Cidr | undefined {
  const slash = text.indexOf('/');
  if (!goReadsCidr(text, true)) return undefined;
  let a: Addr;
  let prefix: number;
  try {
    if (slash < 0) {
      a = family(text).parse(text);
      prefix = bitsOf(a);
    } else {
      [a, prefix] = family(text).parseCIDR(text);
    }
  } catch {
    return undefined;
  }
  if (a.kind() === 'ipv6' && (a as ipaddr.IPv6).isIPv4MappedAddress()) return undefined;
  return Object.freeze({ kind: a.kind() as Cidr['kind'], value: toBig(a), prefix });
}

/** Whether `address` lies in the subnet of `cidr`. */
export function inSubnetOf(cidr: Cidr, address: Cidr): boolean {
  if (cidr.kind !== address.kind) return false;
  const host = BigInt((cidr.kind === 'ipv4' ? 32 : 128) - cidr.prefix);
  return cidr.value >> host === address.value >> host;
}

/** IPv6 link-local (fe80::/10): reachable on any interface with IPv6 up. */
export const isLinkLocal6 = (c: Cidr): boolean => c.kind === 'ipv6' && c.value >> 118n === 0x3fan;
