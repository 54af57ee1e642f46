// What the NAD's IPAMs make of a selection's addresses, as executed against the reference plugins
// (containernetworking/plugins v1.10.0, called the way Multus v4.3.0 calls a delegate; facts in
// docs/cni-runtime.md). Two passes:
// - per road (`ipamRoadChecks`): the addresses of one road (top-level `ips` as IP= in CNI_ARGS,
//   or `cni-args.ips` as args.cni) each on their own: a bare address, several in IP=, an address
//   host-local does not hand out (outside its ranges or bounds, or the gateway);
// - per selection (`ipamSelectionChecks`): what the IPAM assigns once every road is read.
//   host-local appends IP=, args.cni.ips and runtimeConfig ips into one request list and takes
//   one address per range set; static starts from its configured addresses plus IP=, which
//   args.cni.ips replace, which runtimeConfig ips replace in turn.
// On the hot path for every selection of a NAD with an IPAM: messages are built only for a problem.
import { DEFAULT_NETWORK_ANNOTATION } from '../annotation/index.js';
import { child, index, invalid, required, type FieldError } from '../field/index.js';
import {
  EMPTY_IPAM_RESULT_FAILS,
  PLUGIN_FACTS,
  ipamsOf,
  type CniSummary,
  type IpamUse,
  inSubnetOf,
  isLinkLocal6,
  parseCidr,
  placeInRanges,
  type Cidr,
} from '../nads/index.js';
import type { Note } from './warnings.js';

export interface IpamOut {
  errors: FieldError[];
  warnings: Note[];
}

/** A selection's `cni-args.ips` that are strings, with their paths. */
export interface ArgsIps {
  values: string[];
  paths: string[];
  listPath: string;
}

const where = (ref: string, use: IpamUse): string => `${ref}'s IPAM "${use.type}" (${use.plugin.path}.ipam)`;
const json = (v: unknown): string => JSON.stringify(v);

/** Why host-local refuses `ip`, or undefined when it takes it (or that cannot be told). */
function hostLocalRefusal(ip: string, use: IpamUse, ref: string): string | undefined {
  const ranges = use.plugin.ipam?.ranges;
  if (!ranges?.length) return undefined;
  const p = placeInRanges(ip, ranges);
  switch (p.status) {
    case 'no-subnet':
      return `not in any range of ${where(ref, use)}: ${ranges.map((r) => r.subnet).join(', ')}; the ADD would fail`;
    case 'outside-bounds': {
      const what = p.special ? `the ${p.special} of ${p.range.subnet}` : `outside rangeStart..rangeEnd of ${p.range.subnet}`;
      return `${what}: ${where(ref, use)} hands out ${p.first}-${p.last} there, and the ADD would fail`;
    }
    case 'in':
      if (!p.gateway) return undefined;
      return `the gateway of ${p.range.subnet}${p.range.gateway ? '' : " (host-local's default: the subnet's first address)"}, which ${where(ref, use)} never hands out: the ADD would fail`;
    default:
      return undefined;
  }
}

/**
 * One road's addresses: `cniArgs` for the top-level `ips` (IP= in CNI_ARGS, and runtimeConfig
 * where declared), `argsCni` for `cni-args.ips`.
 */
export function ipamRoadChecks(
  ref: string,
  cni: CniSummary,
  ips: readonly string[],
  pathOf: (j: number) => string,
  listPath: string,
  road: 'cniArgs' | 'argsCni',
  out: IpamOut,
  /** The selection also gives `cni-args.ips` (which an IPAM reading both may prefer to IP=). */
  argsIpsToo = false,
): void {
  for (const use of ipamsOf(cni)) {
    const f = use.facts;
    if (!f) continue;
    if (road === 'cniArgs' ? f.ipFromCniArgs === 'no' || f.ipFromCniArgs === 'bare-unused' : !f.ipsFromArgsCni) continue;
    if (f.needsPrefix) {
      ips.forEach((ip, j) => {
        if (!ip.includes('/'))
          out.errors.push(invalid(pathOf(j), ip, `${where(ref, use)} needs an address with a /prefix: the ADD would fail`));
      });
    }
    if (road === 'cniArgs' && f.ipFromCniArgs === 'one' && ips.length > 1) {
      out.errors.push(
        invalid(
          listPath,
          ips,
          `${where(ref, use)} reads one address from IP= in CNI_ARGS, where Multus passes all ${ips.length}: the ADD would fail`,
        ),
      );
    }
    if (
      road === 'cniArgs' &&
      f.ipFromCniArgs === 'first' &&
      ips.length > 1 &&
      // runtimeConfig ips, else args.cni.ips, come first: then IP= is not even parsed.
      !(f.ipsFromRuntimeConfig && use.plugin.capabilities.includes('ips')) &&
      !(f.ipsFromArgsCni && argsIpsToo)
    ) {
      const first = ips[0]!;
      if (first.includes('/'))
        out.warnings.push({
          path: listPath,
          text: `${where(ref, use)} takes one address from IP= in CNI_ARGS, the first (${first}); Multus passes all ${ips.length}, and the others are dropped`,
        });
      else
        out.errors.push(
          invalid(
            listPath,
            ips,
            `${where(ref, use)} reads IP= in CNI_ARGS up to its first '/' as one address, and Multus passes "${ips.join(',')}": the ADD would fail`,
          ),
        );
    }
    if (f.needsInRange) {
      ips.forEach((ip, j) => {
        const why = hostLocalRefusal(ip, use, ref);
        if (why) out.errors.push(invalid(pathOf(j), ip, why));
      });
    }
    if (f.unreserved) {
      out.warnings.push({
        path: listPath,
        text:
          f.unreserved === 'node'
            ? `${where(ref, use)} reserves a requested address on its node only: a pod on another node may be given the same address`
            : `${where(ref, use)} hands out a requested address without reserving it in its pool: another pod may be given the same address`,
      });
    }
  }
}

/**
 * Plugins and IPAMs of the chain whose typed CNI_ARGS loader parses `IP=` as one address without
 * /prefix (spiderpool, its coordinator): Multus passes every requested address in one `IP=`, so a
 * prefix or a second address fails the ADD before the plugin runs. Returns whether it found one.
 */
export function bareIpArgChecks(
  ref: string,
  cni: CniSummary,
  ips: readonly string[],
  pathOf: (j: number) => string,
  listPath: string,
  out: IpamOut,
): boolean {
  const loaders = [
    ...cni.plugins.filter((p) => PLUGIN_FACTS.get(p.type)?.ipArgBare).map((p) => p.type),
    ...ipamsOf(cni)
      .filter((u) => u.facts?.ipFromCniArgs === 'bare-unused')
      .map((u) => `IPAM ${u.type}`),
  ];
  if (loaders.length === 0) return false;
  const who = `${loaders.join(' and ')} in ${ref}`;
  const before = out.errors.length;
  if (ips.length > 1)
    out.errors.push(
      invalid(listPath, ips, `${who} loads IP= in CNI_ARGS as one address, and Multus passes "${ips.join(',')}": the ADD would fail`),
    );
  else
    ips.forEach((ip, j) => {
      if (ip.includes('/'))
        out.errors.push(invalid(pathOf(j), ip, `${who} loads IP= in CNI_ARGS as one address without /prefix: the ADD would fail`));
    });
  return out.errors.length > before;
}

/** An address with where it came from, for messages. */
interface Sourced {
  text: string;
  /** Field path in the annotation; undefined for what the NAD itself configures. */
  path: string | undefined;
  label: string;
}

const fromList = (values: readonly string[], pathOf: (j: number) => string | undefined, label: (j: number) => string): Sourced[] =>
  values.map((text, j) => ({ text, path: pathOf(j), label: label(j) }));

interface Roads {
  top: readonly string[] | undefined;
  topPath: string;
  args: ArgsIps | undefined;
}

/** host-local: one requested address per range set, over IP=, args.cni.ips and runtimeConfig ips together. */
function hostLocalUnion(ref: string, use: IpamUse, roads: Roads, out: IpamOut): void {
  const ranges = use.plugin.ipam?.ranges;
  if (!ranges?.length) return;
  const { top, topPath, args } = roads;
  // Several addresses in IP= fail already (the road check says so): nothing more to predict.
  if (top && top.length > 1) return;
  const requested: Sourced[] = [];
  if (top)
    requested.push(
      ...fromList(
        top,
        (j) => index(topPath, j),
        (j) => `ips[${j}]`,
      ),
    );
  if (args)
    requested.push(
      ...fromList(
        args.values,
        (j) => args.paths[j],
        (j) => `cni-args.ips[${j}]`,
      ),
    );
  else if (use.plugin.ipam?.ownArgsIps)
    requested.push(
      ...fromList(
        use.plugin.ipam.ownArgsIps,
        () => undefined,
        () => `its own args.cni.ips`,
      ),
    );
  if (requested.length < 2) return;
  const bySet = new Map<number, { key: string; first: Sourced }>();
  const said = new Set<string>();
  for (const r of requested) {
    const p = placeInRanges(r.text, ranges);
    if (p.status !== 'in') continue;
    const set = p.range.set ?? -1;
    const held = bySet.get(set);
    if (!held) bySet.set(set, { key: p.key, first: r });
    else if (held.key !== p.key) {
      // Said on the pod's own request: the later one, or the earlier when the later is the NAD's own args.cni.ips.
      const [at, other] = r.path !== undefined ? [r, held.first] : [held.first, r];
      if (at.path === undefined || said.has(at.path)) continue;
      said.add(at.path);
      const subnets = ranges
        .filter((x) => (x.set ?? -1) === set)
        .map((x) => x.subnet)
        .join(', ');
      out.errors.push(
        invalid(
          at.path,
          at.text,
          `${where(ref, use)} takes one requested address per range set, and range set ${set} (${subnets}) also gets ${other.text} (${other.label}): the ADD would fail`,
        ),
      );
    }
  }
}

/** The version libcni hands the plugins; static refuses two addresses of a family below 0.3.0 (an explicit old version only). */
const OLD_CNI_VERSIONS: ReadonlySet<string> = new Set(['0.1.0', '0.2.0']);

/** static: what it assigns (configured + IP=, replaced by args.cni.ips, replaced by runtimeConfig ips), then what the ADD does with it. */
function staticAssigns(ref: string, cni: CniSummary, use: IpamUse, roads: Roads, out: IpamOut): void {
  const ipam = use.plugin.ipam!;
  const { top, topPath, args } = roads;
  const runtime = top && use.plugin.capabilities.includes('ips') ? top : undefined;
  const argsIps = args?.values ?? ipam.ownArgsIps;
  let assigned: Sourced[];
  let replacedBy: { label: string; path: string; values: readonly string[] } | undefined;
  if (runtime) {
    assigned = fromList(
      runtime,
      (j) => index(topPath, j),
      (j) => `ips[${j}] (runtimeConfig)`,
    );
    replacedBy = { label: 'runtimeConfig "ips" (the top-level ips)', path: topPath, values: runtime };
  } else if (argsIps?.length) {
    assigned = args
      ? fromList(
          args.values,
          (j) => args.paths[j],
          (j) => `cni-args.ips[${j}]`,
        )
      : fromList(
          argsIps,
          () => undefined,
          () => 'its own args.cni.ips',
        );
    if (args) replacedBy = { label: 'cni-args.ips (args.cni)', path: args.listPath, values: args.values };
  } else {
    assigned = [
      ...fromList(
        ipam.addresses ?? [],
        () => undefined,
        (j) => `addresses[${j}]`,
      ),
      ...(top
        ? fromList(
            top,
            (j) => index(topPath, j),
            (j) => `ips[${j}]`,
          )
        : []),
    ];
  }
  disagreement(ref, use, roads, runtime !== undefined, out);

  if (assigned.length === 0) {
    const failing = EMPTY_IPAM_RESULT_FAILS.get(use.plugin.type);
    if (failing) {
      out.errors.push(
        required(
          topPath,
          `${where(ref, use)} has no address to assign: none configured and none requested (ips or cni-args.ips); ${use.plugin.type} fails the ADD when its IPAM returns none ("IPAM plugin returned missing IP config")`,
        ),
      );
    }
    return;
  }
  const cidrs: Array<Cidr & { from: Sourced }> = [];
  for (const a of assigned) {
    const c = parseCidr(a.text);
    // Not a CIDR: static refuses it, and the road check has said so (or the NAD's own is broken).
    if (!c) return;
    cidrs.push({ ...c, from: a });
  }
  duplicates(ref, use, cidrs, out);
  oneAddressPerFamily(ref, cni, use, cidrs, out);
  if (use.plugin.type === 'ptp') ptpGateways(ref, use, assigned, topPath, out);
  if (replacedBy) unreachableGateways(ref, use, cidrs, replacedBy, out);
}

/**
 * ptp routes the interface through the gateway its IPAM gives each address (a link route to it in
 * the pod, the gateway's address on the host's veth); static gives one only for a configured
 * address written with `gateway` (IP=, args.cni.ips and runtimeConfig ips carry none). Executed:
 * without one the ADD fails ("failed to add route ... file exists" beside the cluster network's
 * default route, "failed to add IP addr ... to veth" without it; IPv6: "invalid argument").
 */
function ptpGateways(ref: string, use: IpamUse, assigned: readonly Sourced[], topPath: string, out: IpamOut): void {
  const bare = new Set(use.plugin.ipam?.gatewaylessAddresses ?? []);
  const hasGateway = (a: Sourced): boolean => a.path === undefined && a.label.startsWith('addresses[') && !bare.has(a.text);
  const why = `ptp routes the interface through its IPAM's gateway, and ${where(ref, use)} gives none for it (only a configured address written with "gateway" has one): the ADD would fail`;
  const fromNad = assigned.find((a) => a.path === undefined && !hasGateway(a));
  // The NAD's own address: every pod on it fails; said once, on the element.
  if (fromNad) out.errors.push(invalid(topPath.slice(0, -'.ips'.length), ref, `${fromNad.label} ${fromNad.text}: ${why}`));
  for (const a of assigned) if (a.path !== undefined) out.errors.push(invalid(a.path, a.text, why));
}

/** The kernel refuses an address the interface has: an IPv4 one with the same prefix, an IPv6 one with any. */
function duplicates(ref: string, use: IpamUse, cidrs: ReadonlyArray<Cidr & { from: Sourced }>, out: IpamOut): void {
  for (let i = 1; i < cidrs.length; i++) {
    const c = cidrs[i]!;
    if (c.from.path === undefined) continue;
    const first = cidrs.slice(0, i).find((d) => d.kind === c.kind && d.value === c.value && (c.kind === 'ipv6' || d.prefix === c.prefix));
    if (!first) continue;
    out.errors.push(
      invalid(
        c.from.path,
        c.from.text,
        `${where(ref, use)} would assign this address twice (also ${first.from.label}: ${first.from.text}); adding it again fails with "file exists", and the ADD would fail`,
      ),
    );
  }
}

function oneAddressPerFamily(
  ref: string,
  cni: CniSummary,
  use: IpamUse,
  cidrs: ReadonlyArray<Cidr & { from: Sourced }>,
  out: IpamOut,
): void {
  const version = cni.cniVersion;
  if (version === undefined || !OLD_CNI_VERSIONS.has(version)) return;
  for (const kind of ['ipv4', 'ipv6'] as const) {
    const family = cidrs.filter((c) => c.kind === kind);
    const second = family.slice(1).find((c) => c.from.path !== undefined);
    if (!second) continue;
    out.errors.push(
      invalid(
        second.from.path!,
        second.from.text,
        `${where(ref, use)} would assign ${family.length} ${kind === 'ipv4' ? 'IPv4' : 'IPv6'} addresses (${family.map((c) => c.from.text).join(', ')}), and cniVersion ${version} allows one per family: the ADD would fail`,
      ),
    );
  }
}

/** A route's gateway must lie in the subnet of an assigned address (or be IPv6 link-local) for the kernel to add it. */
function unreachableGateways(
  ref: string,
  use: IpamUse,
  cidrs: ReadonlyArray<Cidr & { from: Sourced }>,
  replacedBy: { label: string; path: string; values: readonly string[] },
  out: IpamOut,
): void {
  for (const route of use.plugin.ipam?.routes ?? []) {
    if (route.gw === undefined) continue;
    const gw = parseCidr(route.gw);
    if (!gw || isLinkLocal6(gw)) continue;
    if (cidrs.some((c) => inSubnetOf(c, gw))) continue;
    out.errors.push(
      invalid(
        replacedBy.path,
        replacedBy.values,
        `${replacedBy.label} replace the configured addresses of ${where(ref, use)}, and none of them is in the subnet of its route ${route.dst} via ${route.gw}: adding the route fails ("${gw.kind === 'ipv4' ? 'network is unreachable' : 'no route to host'}"), and the ADD would fail`,
      ),
    );
  }
}

const sameAddresses = (a: readonly string[], b: readonly string[]): boolean => {
  const key = (s: string): string => {
    const c = parseCidr(s);
    return c ? `${c.kind}/${c.value}/${c.prefix}` : s;
  };
  const x = new Set(a.map(key));
  const y = new Set(b.map(key));
  return x.size === y.size && [...x].every((k) => y.has(k));
};

/** Top-level ips and cni-args.ips that differ: static keeps one of them, silently. */
function disagreement(ref: string, use: IpamUse, roads: Roads, runtime: boolean, out: IpamOut): void {
  const { top, topPath, args } = roads;
  if (!top || !args || sameAddresses(top, args.values)) return;
  if (runtime) {
    out.warnings.push({
      path: args.listPath,
      text: `dropped by ${where(ref, use)}: ${use.plugin.type} declares the ips capability, so runtimeConfig "ips" replaces args.cni.ips and ${json(top)} (the top-level ips) take effect`,
    });
  } else {
    out.warnings.push({
      path: topPath,
      text: `dropped by ${where(ref, use)}: it reads args.cni.ips after IP= and they replace IP= and its configured addresses, so ${json(args.values)} (cni-args.ips) take effect`,
    });
  }
}

/**
 * What each IPAM assigns once every road is read. `top` is the selection's `ips` at `topPath`,
 * `args` its string `cni-args.ips`.
 */
export function ipamSelectionChecks(
  ref: string,
  cni: CniSummary,
  netPath: string,
  top: readonly string[] | undefined,
  args: ArgsIps | undefined,
  out: IpamOut,
): void {
  const roads: Roads = { top, topPath: child(netPath, 'ips'), args };
  for (const use of ipamsOf(cni)) {
    const combines = use.facts?.combines;
    if (combines === 'union') hostLocalUnion(ref, use, roads, out);
    else if (combines === 'replace') staticAssigns(ref, cni, use, roads, out);
  }
}

/** A selection whose NAD's chain is known, with its string `cni-args.ips` that an IPAM reads. */
export interface SelectionIps {
  index: number;
  netPath: string;
  ref: string;
  cni: CniSummary;
  top: readonly string[] | undefined;
  args: ArgsIps | undefined;
}

/**
 * host-local reserves a requested address in its store (one per network, in the node's dataDir)
 * for the container and interface that got it, so the same address requested on two selections of
 * one NAD fails the later ADD: "requested IP address ... is not available in range set ..."
 * (executed). Selections of two NADs are not compared: their stores may differ.
 */
export function sharedHostLocalAddresses(selections: readonly SelectionIps[], out: IpamOut): void {
  const first = new Map<string, { who: SelectionIps; text: string }>();
  // In ADD order: the default network's element is Multus's delegate 0, then the annotation's.
  const ordered = [
    ...selections.filter((s) => s.netPath.includes(DEFAULT_NETWORK_ANNOTATION)),
    ...selections.filter((s) => !s.netPath.includes(DEFAULT_NETWORK_ANNOTATION)),
  ];
  for (const s of ordered) {
    for (const use of ipamsOf(s.cni)) {
      const ranges = use.plugin.ipam?.ranges;
      if (use.facts?.combines !== 'union' || !ranges?.length) continue;
      const topPath = child(s.netPath, 'ips');
      const requested = [
        ...(use.facts.ipFromCniArgs === 'no'
          ? []
          : fromList(
              s.top ?? [],
              (j) => index(topPath, j),
              (j) => `ips[${j}]`,
            )),
        ...(s.args && use.facts.ipsFromArgsCni
          ? fromList(
              s.args.values,
              (j) => s.args!.paths[j],
              (j) => `cni-args.ips[${j}]`,
            )
          : []),
      ];
      for (const r of requested) {
        const p = placeInRanges(r.text, ranges);
        // Only an address host-local hands out: anything else fails the ADD already, and says so.
        if (p.status !== 'in' || p.gateway) continue;
        const key = `${s.ref}\u0000${use.plugin.path}\u0000${p.key}`;
        const held = first.get(key);
        if (!held) first.set(key, { who: s, text: r.text });
        else if (held.who !== s && r.path !== undefined) {
          // The default network's element (delegate 0) runs first; elements of one annotation in order.
          const other = sameAnnotation(held.who.netPath, s.netPath) ? `element [${held.who.index}]` : held.who.netPath;
          out.errors.push(
            invalid(
              r.path,
              r.text,
              `${other} requests ${held.text} of ${where(s.ref, use)} too, and host-local reserves it for that interface first: the ADD would fail ("requested IP address ${r.text.split('/')[0]} is not available in range set ...")`,
            ),
          );
        }
      }
    }
  }
}

const annotationOf = (path: string): string => path.slice(0, path.lastIndexOf('['));
const sameAnnotation = (a: string, b: string): boolean => annotationOf(a) === annotationOf(b);
