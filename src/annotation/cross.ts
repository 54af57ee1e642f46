// Rules across the elements of one annotation: what collides when Multus sets up the pod.
import { child, duplicate, invalid, type FieldError } from '../field/index.js';
import { canonicalMac } from './hwaddr.js';
import type { Collector } from './element.js';
import type { ParsedNetwork } from './types.js';

/** The pod's own interfaces: the cluster network's and the loopback. */
const RESERVED_INTERFACES: Readonly<Record<string, string>> = {
  eth0: 'collides with eth0, the interface of the cluster default network',
  lo: 'collides with lo, the loopback interface',
};

export interface CrossInput {
  /** Number of elements in the annotation, named or not. */
  count: number;
  /** Explicit, valid interface names by element index. */
  interfaces: Map<number, string>;
  networks: ParsedNetwork[];
}

export function checkAcross({ count, interfaces, networks }: CrossInput, out: Collector): void {
  const explicit = new Map<string, number>();
  for (const n of interfaces.size === 0 ? [] : networks) {
    const name = interfaces.get(n.index);
    if (name === undefined) continue;
    const path = child(n.path, 'interface');
    const reserved = Object.hasOwn(RESERVED_INTERFACES, name) ? RESERVED_INTERFACES[name] : undefined;
    if (reserved) out.error(invalid(path, name, reserved));
    // Multus names an attachment without an interface `net<position + 1>`.
    const auto = autoNamedIndex(name, count);
    if (auto !== undefined && !interfaces.has(auto)) {
      out.error(invalid(path, name, `collides with the name Multus gives element [${auto}], which sets no interface`));
    }
    const first = explicit.get(name);
    if (first !== undefined) out.error(duplicate(path, name, `element [${first}] already uses this interface name`));
    else explicit.set(name, n.index);
  }

  if (networks.length < 2) return; // the rules below compare elements
  let routeOwner: number | undefined;
  const ports = new Map<string, string>();
  const macs = new Map<string, number>();
  const guids = new Map<string, number>();
  const ips = new Map<string, number>();
  for (const n of networks) {
    const s = n.selection;
    if (s['default-route'] !== undefined) {
      if (routeOwner !== undefined) {
        out.error(invalid(child(n.path, 'default-route'), s['default-route'], `only one element may set default-route; element [${routeOwner}] already does`));
      } else routeOwner = n.index;
    }
    s.portMappings?.forEach((m, j) => {
      const id = `${m.hostPort}/${(m.protocol ?? 'TCP').toUpperCase()}/${m.hostIP ?? ''}`;
      const path = `${child(n.path, 'portMappings')}[${j}].hostPort`;
      const first = ports.get(id);
      if (first !== undefined) out.error(duplicate(path, m.hostPort, `${first} already maps this host port and protocol`));
      else ports.set(id, path);
    });
    warnRepeat(macs, s.mac === undefined ? undefined : canonicalMac(s.mac), n, 'mac', out);
    warnRepeat(guids, s['infiniband-guid']?.toLowerCase(), n, 'infiniband-guid', out);
    for (const ip of s.ips ?? []) warnRepeat(ips, ip.split('/')[0], n, 'ips', out);
  }
}

/** The element index whose automatic name is `name` (`net3` -> 2), if within the list. */
function autoNamedIndex(name: string, count: number): number | undefined {
  if (!name.startsWith('net') || name.length < 4 || name.length > 10) return undefined;
  const digits = name.slice(3);
  if (digits[0] === '0' || [...digits].some((c) => c < '0' || c > '9')) return undefined;
  const i = Number(digits) - 1;
  return i < count ? i : undefined;
}

function warnRepeat(seen: Map<string, number>, value: string | undefined, n: ParsedNetwork, key: string, out: Collector): void {
  if (value === undefined) return;
  const first = seen.get(value);
  if (first !== undefined && first !== n.index) {
    out.warning(duplicate(child(n.path, key), value, `element [${first}] requests the same address`));
  } else seen.set(value, n.index);
}

export type { FieldError };
