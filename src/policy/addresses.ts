// Hardware-address facts the rules need, on canonical (lower-case colon) values. MAC prefixes
// compare on whole bytes; GUIDs compare as 64-bit numbers.

export const bytesOf = (canonical: string): number[] => canonical.split(':').map((h) => parseInt(h, 16));
export const guidNumber = (canonical: string): bigint => BigInt('0x' + canonical.replaceAll(':', ''));

/** Why a canonical 6-byte MAC is a special value, or undefined. */
export function specialMac(canonical: string): string | undefined {
  const b = bytesOf(canonical);
  if (b.every((x) => x === 0)) return 'the all-zero MAC';
  if (b.every((x) => x === 0xff)) return 'the broadcast MAC';
  if ((b[0]! & 1) === 1) return 'a multicast MAC';
  return undefined;
}

/** Why a canonical 8-byte GUID is a special value, or undefined. */
export function specialGuid(canonical: string): string | undefined {
  const b = bytesOf(canonical);
  if (b.every((x) => x === 0)) return 'the all-zero GUID';
  if (b.every((x) => x === 0xff)) return 'the all-FF GUID (the reset value of ib-sriov-cni)';
  return undefined;
}

/** The user-chosen port GUID of a canonical 20-byte IPoIB address (its last 8 bytes). */
export const ipoibPortGuid = (canonical: string): string => canonical.split(':').slice(12).join(':');

export interface GuidRange {
  from: bigint;
  to: bigint;
  text: string;
}
