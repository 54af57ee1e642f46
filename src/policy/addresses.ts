// Hardware-address facts the rules need, computed once per request (not once per policy) from
// the canonical (lower-case colon) values. MAC prefixes compare on whole bytes; GUIDs compare as
// 64-bit numbers.
import { child } from '../field/index.js';
import { argsAddresses, canonicalGuid, canonicalMac, specialMac } from '../annotation/index.js';
import type { ParsedNetwork } from '../annotation/index.js';
import type { AddressKind } from './types.js';

export interface GuidRange {
  from: bigint;
  to: bigint;
  text: string;
}

export const guidNumber = (canonical: string): bigint => BigInt('0x' + canonical.replaceAll(':', ''));

/** One requested address with what the rules ask of it. */
export interface AddressFact {
  kind: AddressKind;
  value: string;
  /** `ns/name` of the network it is requested on. */
  network: string;
  path: string;
  /** A 6-byte Ethernet MAC (checked against prefixes) rather than a GUID or a 20-byte IPoIB address. */
  ethernet: boolean;
  /** The GUID the ranges apply to: the GUID itself, or the port GUID of an IPoIB address. */
  guid?: string;
  guidValue?: bigint;
  /** Why the value is special (multicast, all-zero...), if it is. */
  special?: string;
  /** How messages name it: `MAC 02:...`, `GUID 00:...`, `IPoIB port GUID 00:...`. */
  label: string;
}

const allBytes = (hex: string, byte: string): boolean => {
  for (let i = 0; i < hex.length; i += 3) if (hex[i] !== byte[0] || hex[i + 1] !== byte[1]) return false;
  return true;
};

// The one special-MAC rule (src/annotation/hwaddr.ts), on the canonical colon form.
const macSpecial = (mac: string): string | undefined => specialMac(mac.split(':').map((x) => parseInt(x, 16)));

function guidSpecial(guid: string): string | undefined {
  if (allBytes(guid, '00')) return 'the all-zero GUID';
  if (allBytes(guid, 'ff')) return 'the all-FF GUID (the reset value of ib-sriov-cni)';
  return undefined;
}

function macFact(mac: string, network: string, path: string): AddressFact {
  if (mac.length === 17) return { kind: 'mac', value: mac, network, path, ethernet: true, special: macSpecial(mac), label: `MAC ${mac}` };
  const guid = mac.slice(36); // bytes 12-19 of a 20-byte IPoIB address: the port GUID
  return {
    kind: 'mac',
    value: mac,
    network,
    path,
    ethernet: false,
    guid,
    guidValue: guidNumber(guid),
    special: guidSpecial(guid),
    label: `IPoIB port GUID ${guid}`,
  };
}

const guidFact = (guid: string, network: string, path: string): AddressFact => ({
  kind: 'infiniband-guid',
  value: guid,
  network,
  path,
  ethernet: false,
  guid,
  guidValue: guidNumber(guid),
  special: guidSpecial(guid),
  label: `GUID ${guid}`,
});

/**
 * The hardware addresses a request asks for: top-level `mac` and `infiniband-guid`, and the same
 * through `cni-args` (`mac`, `guid`), which plugins read too. An address given both ways on one
 * network is one address (the top-level path names it). `dropped`: paths of values the NAD's
 * chain replaces by the other door's (the admission's MAC checks tell); without it, both count.
 */
export function addressFacts(networks: readonly ParsedNetwork[], dropped?: ReadonlySet<string>): AddressFact[] {
  const out: AddressFact[] = [];
  for (const n of networks) {
    const network = `${n.selection.namespace}/${n.selection.name}`;
    const first = out.length;
    const macPath = child(n.path, 'mac');
    const mac = typeof n.selection.mac === 'string' && !dropped?.has(macPath) ? canonicalMac(n.selection.mac) : undefined;
    if (mac) out.push(macFact(mac, network, macPath));
    const g = n.selection['infiniband-guid'];
    const guid = typeof g === 'string' ? canonicalGuid(g) : undefined;
    if (guid) out.push(guidFact(guid, network, child(n.path, 'infiniband-guid')));
    for (const a of argsAddresses(n)) {
      if (a.canonical === undefined || dropped?.has(a.path)) continue;
      const kind = a.key === 'mac' ? 'mac' : 'infiniband-guid';
      if (out.some((f, i) => i >= first && f.kind === kind && f.value === a.canonical)) continue;
      out.push(kind === 'mac' ? macFact(a.canonical, network, a.path) : guidFact(a.canonical, network, a.path));
    }
  }
  return out;
}
