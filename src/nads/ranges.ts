// Address arithmetic for host-local's ranges (ipaddr.js does the parsing).
import ipaddr from 'ipaddr.js';
import type { IpRange } from './types.js';

const compare = (a: number[], b: number[]): number => {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return 0;
};

const parse = (text: string): ipaddr.IPv4 | ipaddr.IPv6 | undefined => {
  try {
    const a = ipaddr.parse(text);
    return a.kind() === 'ipv6' && (a as ipaddr.IPv6).isIPv4MappedAddress() ? (a as ipaddr.IPv6).toIPv4Address() : a;
  } catch {
    return undefined;
  }
};

function inRange(ip: ipaddr.IPv4 | ipaddr.IPv6, r: IpRange): boolean | undefined {
  let subnet: [ipaddr.IPv4 | ipaddr.IPv6, number];
  try {
    subnet = ipaddr.parseCIDR(r.subnet);
  } catch {
    return undefined;
  }
  if (subnet[0].kind() !== ip.kind() || !ip.match(subnet)) return false;
  const bytes = ip.toByteArray();
  const start = r.rangeStart ? parse(r.rangeStart) : undefined;
  const end = r.rangeEnd ? parse(r.rangeEnd) : undefined;
  if (start && start.kind() === ip.kind() && compare(bytes, start.toByteArray()) < 0) return false;
  if (end && end.kind() === ip.kind() && compare(bytes, end.toByteArray()) > 0) return false;
  return true;
}

/**
 * Whether `address` (an IP, optionally with /prefix, which host-local ignores) lies in one of
 * `ranges`; undefined when that cannot be told (no readable range, unreadable address).
 */
export function inRanges(address: string, ranges: readonly IpRange[]): boolean | undefined {
  const slash = address.indexOf('/');
  const ip = parse(slash < 0 ? address : address.slice(0, slash));
  if (!ip) return undefined;
  let readable = false;
  for (const r of ranges) {
    const within = inRange(ip, r);
    if (within === true) return true;
    if (within === false) readable = true;
  }
  return readable ? false : undefined;
}
