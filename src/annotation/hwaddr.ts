// Hardware addresses in the textual forms Go's net.ParseMAC reads (which Multus uses for both
// `mac` and `infiniband-guid`): colon `02:23:45:67:89:01`, hyphen `02-23-45-67-89-01` and dot
// `0223.4567.8901`, hex in either case, 6, 8 or 20 bytes. Written as a linear scan, no regex.

export type HwAddrForm = 'colon' | 'hyphen' | 'dot';

export interface HwAddr {
  bytes: number[];
  form: HwAddrForm;
}

const hexValue = (code: number): number => {
  if (code >= 48 && code <= 57) return code - 48; // 0-9
  const lower = code | 0x20;
  if (lower >= 97 && lower <= 102) return lower - 87; // a-f
  return -1;
};

/** Reads a hardware address in any of Go's forms; undefined if it is not one. */
export function parseHwAddr(text: string): HwAddr | undefined {
  const n = text.length;
  if (n < 14) return undefined; // shortest: 0223.4567.8901
  const sep = text.charCodeAt(2) === 58 ? ':' : text.charCodeAt(2) === 45 ? '-' : text.charCodeAt(4) === 46 ? '.' : '';
  if (sep === ':' || sep === '-') {
    if ((n + 1) % 3 !== 0) return undefined;
    const count = (n + 1) / 3;
    if (count !== 6 && count !== 8 && count !== 20) return undefined;
    const bytes: number[] = [];
    for (let i = 0; i < n; i += 3) {
      const hi = hexValue(text.charCodeAt(i));
      const lo = hexValue(text.charCodeAt(i + 1));
      if (hi < 0 || lo < 0) return undefined;
      if (i + 2 < n && text[i + 2] !== sep) return undefined;
      bytes.push(hi * 16 + lo);
    }
    return { bytes, form: sep === ':' ? 'colon' : 'hyphen' };
  }
  if (sep === '.') {
    if ((n + 1) % 5 !== 0) return undefined;
    const groups = (n + 1) / 5;
    if (groups !== 3 && groups !== 4 && groups !== 10) return undefined;
    const bytes: number[] = [];
    for (let i = 0; i < n; i += 5) {
      const d = [0, 1, 2, 3].map((k) => hexValue(text.charCodeAt(i + k)));
      if (d.some((v) => v < 0)) return undefined;
      if (i + 4 < n && text[i + 4] !== '.') return undefined;
      bytes.push(d[0]! * 16 + d[1]!, d[2]! * 16 + d[3]!);
    }
    return { bytes, form: 'dot' };
  }
  return undefined;
}

export const colonForm = (bytes: readonly number[]): string => bytes.map((b) => b.toString(16).padStart(2, '0')).join(':');

const MAC_FORMS =
  '6-byte Ethernet MAC (02:23:45:67:89:01, 02-23-45-67-89-01 or 0223.4567.8901) or a 20-byte IPoIB address in the same forms';
const EIGHT_BYTE_MAC =
  'an 8-byte address is not a valid mac (the spec allows 6-byte Ethernet or 20-byte IPoIB addresses; Multus accepts it): use infiniband-guid for an InfiniBand GUID';

/** Why `text` is not an acceptable `mac` where something sets it on a link (args.cni): 6 or 20 bytes. */
export function macProblem(text: string): string | undefined {
  const addr = parseHwAddr(text);
  if (!addr) return `must be a ${MAC_FORMS}`;
  if (addr.bytes.length === 8) return EIGHT_BYTE_MAC;
  return undefined;
}

/**
 * Why `text` is not a `mac` of the annotation: what Multus's net.ParseMAC rejects (it fails the pod).
 * An 8-byte address passes here and gets a warning (macWarning): Multus runs the pod, and only a
 * plugin that sets the MAC fails, which the NAD chain tells (the admission's builtin checks).
 */
export function macFormatProblem(text: string): string | undefined {
  return parseHwAddr(text) ? undefined : `must be a ${MAC_FORMS}`;
}

const FF_GUID = 'ff:ff:ff:ff:ff:ff:ff:ff';

/** Why `text` is not an `infiniband-guid` of the annotation: 8 bytes, colon form, not all-zero (all-FF is a warning). */
export function guidFormatProblem(text: string): string | undefined {
  const addr = parseHwAddr(text);
  if (addr?.bytes.length !== 8) {
    if (addr) return `must be 8 bytes, not ${addr.bytes.length} (colon form xx:xx:xx:xx:xx:xx:xx:xx)`;
    return 'must be an 8-byte GUID in colon form xx:xx:xx:xx:xx:xx:xx:xx';
  }
  if (addr.form !== 'colon') {
    return 'must be in colon form xx:xx:xx:xx:xx:xx:xx:xx (Multus accepts the hyphen and dot forms, but ib-sriov-cni does not)';
  }
  if (addr.bytes.every((b) => b === 0)) return 'the all-zero GUID is rejected by ib-sriov-cni';
  return undefined;
}

/** Allowed but suspicious `infiniband-guid` values (the caller has already checked the format). */
export function guidWarning(text: string): string | undefined {
  if (text.toLowerCase() !== FF_GUID) return undefined;
  return `${FF_GUID} is the value ib-sriov-cni writes to reset a VF's GUID: as an explicit request ib-sriov-cni accepts it, but every VF given it has the same GUID`;
}

/** The lower-case colon form of an acceptable `mac` (6 or 20 bytes, any accepted form), or undefined. */
export function canonicalMac(text: string): string | undefined {
  if (typeof text !== 'string') return undefined;
  const addr = parseHwAddr(text);
  return addr && addr.bytes.length !== 8 ? colonForm(addr.bytes) : undefined;
}

/**
 * The lower-case colon form of an `infiniband-guid` the annotation accepts (all-FF included: it
 * passes with a warning, so policies must see it), or undefined.
 */
export function canonicalGuid(text: string): string | undefined {
  if (typeof text !== 'string' || guidFormatProblem(text) !== undefined) return undefined;
  return text.toLowerCase();
}

/**
 * The one special-MAC rule: what the kernel refuses as the 6-byte address of an Ethernet interface
 * ("cannot assign requested address"): all-zero, broadcast, or multicast (lowest bit of octet 0).
 */
export function specialMac(b: readonly number[]): 'the all-zero MAC' | 'the broadcast MAC' | 'a multicast MAC' | undefined {
  if (b.every((x) => x === 0)) return 'the all-zero MAC';
  if (b.every((x) => x === 0xff)) return 'the broadcast MAC';
  if ((b[0]! & 1) === 1) return 'a multicast MAC';
  return undefined;
}

/** Multicast named with its rule, as the messages say it. */
export const specialMacText = (b: readonly number[]): string | undefined => {
  const kind = specialMac(b);
  return kind === 'a multicast MAC' ? `${kind} (lowest bit of the first octet set)` : kind;
};

/** Allowed but suspicious `mac` values (the caller has already checked the syntax). */
export function macWarning(text: string): string | undefined {
  const addr = parseHwAddr(text);
  if (!addr) return undefined;
  const b = addr.bytes;
  if (b.length === 8) return EIGHT_BYTE_MAC;
  if (b.length === 6) {
    // Only the NAD's chain tells whether a plugin sets it (the admission's MAC checks deny it there).
    const refused =
      'the kernel refuses it as the address of an Ethernet interface, so only a network whose plugins do not set the MAC can take it';
    const special = specialMacText(b);
    return special === undefined ? undefined : `${special}: ${refused}`;
  }
  // 20-byte IPoIB: bytes 4-11 are the subnet prefix, which the subnet manager sets.
  const prefix = b.slice(4, 12);
  const linkLocal = [0xfe, 0x80, 0, 0, 0, 0, 0, 0];
  if (prefix.some((x, i) => x !== linkLocal[i])) {
    return 'in a 20-byte IPoIB address only the last 8 bytes (the port GUID) can be chosen; bytes 0-11 are set by the HCA and the subnet manager';
  }
  return undefined;
}
