// The string formats of the annotation, each as a function returning why a text is not of the
// format (undefined when it is). The same functions serve ajv (as custom formats, see schema.ts)
// and the simple-form parser, so the two forms cannot drift apart. Linear scans, no regex
// backtracking.
import ipaddr from 'ipaddr.js';
import { guidFormatProblem, macFormatProblem } from './hwaddr.js';
// From process.getBuiltinModule: an ES import of node:net would read its lazy exports (src/kube/transport.ts).
const { isIPv4, isIPv6 } = process.getBuiltinModule('node:net');

const isLowerAlnum = (c: number): boolean => (c >= 97 && c <= 122) || (c >= 48 && c <= 57);

function labelShapeOk(text: string): boolean {
  const n = text.length;
  if (n === 0 || !isLowerAlnum(text.charCodeAt(0)) || !isLowerAlnum(text.charCodeAt(n - 1))) return false;
  for (let i = 1; i < n - 1; i++) {
    const c = text.charCodeAt(i);
    if (!isLowerAlnum(c) && c !== 45) return false;
  }
  return true;
}

const LABEL_RULE =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";

/** DNS-1123 label, as Kubernetes requires for namespaces (at most 63 characters). */
export function dns1123LabelProblem(text: string): string | undefined {
  if (text.length > 63) return 'must be no more than 63 characters';
  return labelShapeOk(text) ? undefined : LABEL_RULE;
}

/**
 * A simple-form name as Multus checks it: a label's shape with no length limit (its regex has
 * none), bounded at 253 characters as every object name is. A 64-253 character dot-less name is a
 * valid NAD name that Multus finds.
 */
export function simpleNameProblem(text: string): string | undefined {
  if (text.length > 253) return 'must be no more than 253 characters';
  return labelShapeOk(text) ? undefined : LABEL_RULE;
}

/** DNS-1123 subdomain, as Kubernetes requires for object names such as a NAD's (at most 253 characters). */
export function dns1123SubdomainProblem(text: string): string | undefined {
  if (text.length > 253) return 'must be no more than 253 characters';
  let ok = text.length > 0;
  for (let from = 0; ok && from <= text.length; ) {
    const dot = text.indexOf('.', from);
    const end = dot < 0 ? text.length : dot;
    ok = labelShapeOk(text.slice(from, end));
    from = end + 1;
  }
  return ok
    ? undefined
    : "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";
}

/** Go's unicode.IsSpace (what strings.TrimSpace strips): unlike JS's trim(), U+0085 is space and U+FEFF is not. */
export function isGoSpace(c: number): boolean {
  if (c <= 0xff) return c === 32 || (c >= 9 && c <= 13) || c === 0x85 || c === 0xa0;
  return c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 || c === 0x202f || c === 0x205f || c === 0x3000;
}

/** Go's strings.TrimSpace, which Multus applies to simple-form items and their parts. */
export function goTrimSpace(text: string): string {
  let start = 0;
  let end = text.length;
  while (start < end && isGoSpace(text.charCodeAt(start))) start++;
  while (end > start && isGoSpace(text.charCodeAt(end - 1))) end--;
  return start === 0 && end === text.length ? text : text.slice(start, end);
}

/** A Linux interface name as the kernel's dev_valid_name accepts it: 1-15 bytes, not `.`/`..`, no `/`, `:` or whitespace. */
export function interfaceNameProblem(text: string): string | undefined {
  if (text.length === 0) return 'must not be empty';
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > 15) return `must be at most 15 bytes (Linux IFNAMSIZ), got ${bytes}`;
  if (text === '.' || text === '..') return 'must not be "." or ".."';
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 47 || c === 58) return "must not contain '/' or ':'";
    if (c < 32 || c === 127 || isGoSpace(c)) return 'must not contain whitespace or control characters';
  }
  return undefined;
}

/** An IPv4 or IPv6 address as Go's net.ParseIP reads it: no zone (`%eth0`), no IPv4 leading zeros. */
export function ipProblem(text: string): string | undefined {
  if (text.includes('%')) return 'must be an IP address without a zone (such as %eth0)';
  if (isIPv4(text) || isIPv6(text)) return undefined;
  return 'must be a valid IPv4 or IPv6 address (IPv4 octets without leading zeros)';
}

export const ipFamily = (text: string): 4 | 6 | undefined => (isIPv4(text) ? 4 : isIPv6(text) && !text.includes('%') ? 6 : undefined);

/**
 * The family a default-route gateway counts in, as Multus counts (`To4() != nil` is IPv4): an
 * IPv4-mapped IPv6 address (`::ffff:10.0.0.1`) is IPv4.
 */
export function gatewayFamily(text: string): 4 | 6 | undefined {
  const family = ipFamily(text);
  return family === 6 && isIPv4Mapped(text) ? 4 : family;
}

/** Whether a valid IPv6 text is ::ffff:a.b.c.d in any spelling. */
function isIPv4Mapped(text: string): boolean {
  try {
    // ipaddr.js reads any embedded dotted quad as mapped (`::1.2.3.4` too, which Go's To4 counts
    // as IPv6): spell the quad as two hex groups first, so only the bytes decide.
    const dot = text.indexOf('.');
    const colon = text.lastIndexOf(':');
    let hex = text;
    if (dot > colon && colon >= 0) {
      const q = text
        .slice(colon + 1)
        .split('.')
        .map(Number);
      hex = `${text.slice(0, colon + 1)}${((q[0]! << 8) | q[1]!).toString(16)}:${((q[2]! << 8) | q[3]!).toString(16)}`;
    }
    const address = ipaddr.parse(hex);
    return address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress();
  } catch {
    return false;
  }
}

/**
 * An IP address, optionally with a `/prefix` within the family's range. The prefix is decimal and,
 * as Go's net.ParseCIDR reads it, may have leading zeros (`/024`); so do the IPAM plugins.
 */
export function ipOrCidrProblem(text: string): string | undefined {
  const slash = text.indexOf('/');
  if (slash < 0) return ipProblem(text);
  const address = text.slice(0, slash);
  const addressProblem = ipProblem(address);
  if (addressProblem) return `${addressProblem}, optionally followed by /prefix`;
  const max = isIPv4(address) ? 32 : 128;
  let value = slash + 1 < text.length ? 0 : -1;
  for (let i = slash + 1; i < text.length && value >= 0 && value <= max; i++) {
    const c = text.charCodeAt(i);
    value = c >= 48 && c <= 57 ? value * 10 + c - 48 : -1;
  }
  if (value < 0 || value > max) return `the prefix length after '/' must be a decimal number from 0 to ${max}`;
  return undefined;
}

export const PORT_PROTOCOLS = ['TCP', 'UDP', 'SCTP'] as const;

/** A port-mapping protocol: TCP, UDP or SCTP in any case (the portmap plugin folds case). */
export function portProtocolProblem(text: string): string | undefined {
  const upper = text.toUpperCase();
  return PORT_PROTOCOLS.some((p) => p === upper) ? undefined : 'supported values: "TCP", "UDP", "SCTP" (any case)';
}

/** Every custom format: name (as used in the JSON Schema) -> checker. */
export const FORMATS: Readonly<Record<string, (text: string) => string | undefined>> = {
  'mac-address': macFormatProblem,
  'infiniband-guid': guidFormatProblem,
  'ip-address': ipProblem,
  'ip-or-cidr': ipOrCidrProblem,
  'interface-name': interfaceNameProblem,
  'dns1123-label': dns1123LabelProblem,
  'dns1123-subdomain': dns1123SubdomainProblem,
  'port-protocol': portProtocolProblem,
};
