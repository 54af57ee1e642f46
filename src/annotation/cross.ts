// Rules across the elements of one annotation: what collides when Multus sets up the pod.
import { child, duplicate, invalid, type FieldError } from '../field/index.js';
import { gatewayFamily } from './formats.js';
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
  /** The default-network annotation: its element replaces the cluster network, so eth0 is its own name. */
  defaultNetwork?: boolean;
}

export function checkAcross({ count, interfaces, networks, defaultNetwork = false }: CrossInput, out: Collector): void {
  const explicit = new Map<string, number>();
  for (const n of interfaces.size === 0 ? [] : networks) {
    const name = interfaces.get(n.index);
    if (name === undefined) continue;
    const path = child(n.path, 'interface');
    const reserved = Object.hasOwn(RESERVED_INTERFACES, name) ? RESERVED_INTERFACES[name] : undefined;
    if (reserved && !(defaultNetwork && name === 'eth0')) out.error(invalid(path, name, reserved));
    // Multus names an attachment without an interface `net<position + 1>` when its config has no
    // `defaultNetworks` (which shift the numbers), and the clash fails only if that attachment's
    // plugin creates an interface (a KubeVirt binding element creates none): a warning.
    const auto = autoNamedIndex(name, count);
    if (auto !== undefined && !interfaces.has(auto)) {
      out.warning(
        invalid(
          path,
          name,
          `may collide with net${auto + 1}, the name Multus gives element [${auto}], which sets no interface: the pod fails if that element's plugin creates an interface (a KubeVirt binding element does not; \`defaultNetworks\` in the Multus config shift the numbers); name every interface, or none`,
        ),
      );
    }
    const first = explicit.get(name);
    if (first !== undefined) out.error(duplicate(path, name, `element [${first}] already uses this interface name`));
    else explicit.set(name, n.index);
  }

  // A host port, protocol and host IP mapped twice, by two elements or by one: each attachment's
  // portmap makes its own chain, and the first DNAT rule wins. The pod runs.
  const ports = new Map<string, string>();
  for (const n of networks) {
    n.selection.portMappings?.forEach((m, j) => {
      const id = `${m.hostPort}/${(m.protocol ?? 'TCP').toUpperCase()}/${m.hostIP ?? ''}`;
      const path = `${child(n.path, 'portMappings')}[${j}].hostPort`;
      const first = ports.get(id);
      if (first !== undefined)
        out.warning(duplicate(path, m.hostPort, `${first} already maps this host port and protocol; the first mapping wins`));
      else ports.set(id, path);
    });
  }

  if (networks.length < 2) return; // the rules below compare elements
  let routeOwner: number | undefined;
  const gateways: GatewayOwners = {};
  const macs = new Map<string, number>();
  const guids = new Map<string, number>();
  const ips = new Map<string, number>();
  for (const n of networks) {
    const s = n.selection;
    if (s['default-route'] !== undefined) {
      const conflicts = claimGateways(n, gateways, true);
      for (const e of conflicts) out.error(e);
      if (conflicts.length === 0 && routeOwner !== undefined) {
        out.warning(
          invalid(
            child(n.path, 'default-route'),
            s['default-route'],
            `element [${routeOwner}] sets default-route too: the spec allows it on one element; Multus accepts at most one IPv4 and one IPv6 gateway in total, as here`,
          ),
        );
      }
      routeOwner ??= n.index;
    }
    warnRepeat(macs, s.mac === undefined ? undefined : canonicalMac(s.mac), n, 'mac', out);
    warnRepeat(guids, s['infiniband-guid']?.toLowerCase(), n, 'infiniband-guid', out);
    for (const ip of s.ips ?? []) warnRepeat(ips, ip.split('/')[0], n, 'ips', out);
  }
}

/** Per family, the path of the first default-route gateway seen. */
type GatewayOwners = Partial<Record<4 | 6, string>>;

/**
 * Multus's CheckGatewayConfig: over every attachment (both annotations), at most one IPv4 and one
 * IPv6 gateway, an IPv4-mapped IPv6 address counting as IPv4. Errors for `n`'s gateways of a family
 * that already has one; `record`: whether `n`'s own gateways become owners.
 */
function claimGateways(n: ParsedNetwork, owners: GatewayOwners, record: boolean): FieldError[] {
  const errors: FieldError[] = [];
  const routes = n.selection['default-route'] ?? [];
  routes.forEach((gw, j) => {
    const family = gatewayFamily(gw);
    if (family === undefined) return;
    const path = `${child(n.path, 'default-route')}[${j}]`;
    const first = owners[family];
    if (first !== undefined && !first.startsWith(`${n.path}.`)) {
      errors.push(
        invalid(
          path,
          gw,
          `Multus allows one IPv${family} default-route gateway in total, over both annotations ("multus does not support ECMP for default-route"): ${first} is one already`,
        ),
      );
    } else if (record && first === undefined) owners[family] = path;
  });
  return errors;
}

/**
 * The default-route rule across the two annotations, which are parsed separately: an error for
 * each gateway in `networks` whose family the default network's element already has a gateway of.
 */
export function gatewayConflicts(networks: readonly ParsedNetwork[], defaultNetworks: readonly ParsedNetwork[]): FieldError[] {
  const owners: GatewayOwners = {};
  for (const d of defaultNetworks) claimGateways(d, owners, true);
  if (owners[4] === undefined && owners[6] === undefined) return [];
  return networks.flatMap((n) => claimGateways(n, owners, false));
}

/** The element index whose automatic name is `name` (`net3` -> 2), if within the list. */
/** N of `net<N>`, the name Multus gives an attachment without `interface` (N positive, no leading zero), else undefined. */
export function multusAutoNumber(name: string): number | undefined {
  if (!name.startsWith('net') || name.length < 4 || name.length > 10) return undefined;
  const digits = name.slice(3);
  if (digits[0] === '0' || [...digits].some((c) => c < '0' || c > '9')) return undefined;
  return Number(digits);
}

function autoNamedIndex(name: string, count: number): number | undefined {
  const n = multusAutoNumber(name);
  return n !== undefined && n - 1 < count ? n - 1 : undefined;
}

function warnRepeat(seen: Map<string, number>, value: string | undefined, n: ParsedNetwork, key: string, out: Collector): void {
  if (value === undefined) return;
  const first = seen.get(value);
  if (first !== undefined && first !== n.index) {
    out.warning(duplicate(child(n.path, key), value, `element [${first}] requests the same address`));
  } else seen.set(value, n.index);
}

export type { FieldError };
