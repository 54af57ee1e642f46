// A selection's `default-route` against what its chain puts on the interface. After the
// delegate's ADD, Multus v4.3.0 (pkg/multus/multus.go CmdAdd -> netutils.SetDefaultGW) adds
// `default via <gw> dev <interface>` for each gateway in turn, ignores "file exists", and keeps
// only the last gateway's error: "error setting default gateway: network is unreachable" fails the
// pod. The kernel takes an IPv4 gateway only through a link route of that interface: the subnet
// of an address on it, or a route without a gateway (executed: docs/cni-runtime.md, "Executed:
// default-route"). So an IPv4 gateway outside every such subnet fails for certain when netattach
// knows them all: every plugin of the chain is one whose routes are known, and every IPAM is
// static or host-local. IPv6 gateways are not judged (router advertisements may add prefixes).
import { argsAddresses, DEFAULT_NETWORK_ANNOTATION, type ParsedNetwork } from '../annotation/index.js';
import { child, invalid, type FieldError } from '../field/index.js';
import { ipamsOf, type CniSummary, inSubnetOf, parseCidr, type Cidr } from '../nads/index.js';
import type { Note } from './warnings.js';

/**
 * Plugins whose effect on the pod interface's link routes is known: the interface plugins put the
 * IPAM's addresses on it (ptp adds a link route to the IPAM's gateway instead of the subnet's),
 * and the meta plugins add no link route. Any other type (host-device, sriov, a vendor's) leaves
 * the subnets unknown.
 */
const ROUTES_KNOWN: ReadonlySet<string> = new Set([
  'bridge',
  'macvlan',
  'ipvlan',
  'vlan',
  'tap',
  'ptp',
  'tuning',
  'portmap',
  'bandwidth',
  'firewall',
  'sbr',
]);

export interface GatewayOut {
  errors: FieldError[];
  warnings: Note[];
}

/**
 * Every IPv4 prefix that may become a link route of the interface: a superset (each road's
 * addresses, whichever takes effect; every range; the configured gateways; every gateway-less
 * route), so that a gateway outside all of them is unreachable for certain. Undefined when that
 * cannot be told.
 */
export function reachableIpv4(net: ParsedNetwork, cni: CniSummary): Cidr[] | undefined {
  if (cni.plugins.length === 0 || cni.plugins.some((p) => !ROUTES_KNOWN.has(p.type))) return undefined;
  const uses = ipamsOf(cni);
  // No IPAM: these plugins put no address on the interface, and Multus still adds the route
  // after an ADD whose result lists the interface (executed: "network is unreachable").
  if (uses.length === 0) return cni.plugins.some((p) => p.ipam) ? undefined : [];
  const texts: string[] = [];
  for (const { plugin, type } of uses) {
    const ipam = plugin.ipam!;
    if (type === 'host-local') {
      if (!ipam.ranges?.length) return undefined;
      for (const r of ipam.ranges) texts.push(r.subnet, ...(r.gateway ? [r.gateway] : []));
    } else if (type === 'static') {
      texts.push(...(ipam.addresses ?? []), ...(ipam.gateways ?? []), ...(ipam.ownArgsIps ?? []));
    } else return undefined;
    texts.push(...(ipam.gatewaylessRoutes ?? []));
  }
  const top = net.selection.ips;
  if (Array.isArray(top)) texts.push(...top);
  for (const a of argsAddresses(net)) if (a.key === 'ips' && typeof a.value === 'string') texts.push(a.value);
  const cidrs: Cidr[] = [];
  for (const t of texts) {
    const c = parseCidr(t);
    // Unreadable: the plugin fails on it anyway, but its reach is not known.
    if (!c) return undefined;
    if (c.kind === 'ipv4') cidrs.push(c);
  }
  return cidrs;
}

/**
 * Multus v4.3.0 means to delete the cluster network's default route (CheckGatewayConfig marks its
 * delegate) but looks for routes without a destination, which netlink v1.3.1, its pin, lists as
 * 0.0.0.0/0: nothing is deleted, and adding the requested route then fails with "file exists",
 * which SetDefaultGW ignores (executed; upstream multus-cni PR #1552).
 */
export const DEFAULT_ROUTE_KEPT =
  'Multus v4.3 leaves the cluster network\'s default route in place (an upstream bug: it does not find that route to delete it, and ignores the "file exists" of adding this one): where the cluster network installs a default route, as nearly every one does, that route stays and this gateway may not become the default';

const isUnspecified4 = (c: Cidr): boolean => c.kind === 'ipv4' && c.value === 0n;

/**
 * The warning every default-route gets on Multus v4.3; an error for a last IPv4 gateway the
 * interface cannot reach, a warning for an earlier one.
 */
export function defaultRouteChecks(net: ParsedNetwork, ref: string, cni: CniSummary | undefined, out: GatewayOut): void {
  const gateways = net.selection['default-route'];
  if (!Array.isArray(gateways) || gateways.length === 0) return;
  // The default network's element replaces the cluster network: there is no other default route.
  if (!net.path.includes(DEFAULT_NETWORK_ANNOTATION))
    out.warnings.push({ path: child(net.path, 'default-route'), text: DEFAULT_ROUTE_KEPT });
  let reach: Cidr[] | undefined | null = null;
  gateways.forEach((gw, j) => {
    const c = typeof gw === 'string' && !gw.includes('/') ? parseCidr(gw) : undefined;
    if (c?.kind !== 'ipv4' || isUnspecified4(c)) return;
    if (reach === null) reach = cni && reachableIpv4(net, cni);
    if (reach === undefined || reach.some((r) => inSubnetOf(r, c))) return;
    const path = `${child(net.path, 'default-route')}[${j}]`;
    const what = reach.length ? `at most ${[...new Set(reach.map(show))].join(', ')}` : 'no IPv4 address';
    const why = `in no subnet of the interface: ${ref} gives it ${what}, so the kernel refuses "default via ${gw}" ("network is unreachable")`;
    if (j === gateways.length - 1) {
      out.errors.push(invalid(path, gw, `${why}, and Multus fails the ADD ("error setting default gateway: network is unreachable")`));
    } else {
      out.warnings.push({
        path,
        text: `${why}: not installed; Multus keeps only the last gateway's error, so the pod starts without this default route`,
      });
    }
  });
}

function show(c: Cidr): string {
  const v = c.value;
  const ip = [24n, 16n, 8n, 0n].map((s) => String((v >> s) & 255n)).join('.');
  return `${ip}/${c.prefix}`;
}
