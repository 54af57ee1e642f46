// The built-in rules: the NAD exists, and its chain uses what the selection asks of it.
// "Uses" follows what really reaches the plugins (src/nads/plugins.ts): Multus passes `mac` and
// `ips` as CNI_ARGS to every plugin, runtimeConfig only to plugins declaring the capability, and
// `cni-args` to every plugin as args.cni. A request is denied only when every plugin is known
// and none reads it (finding `capabilities`, Enforce, re-gradable by policy), or when the NAD's
// IPAM certainly fails the ADD on it (an object error). Unknown plugins give a warning.
import { ARGS_KEY_FIELD, argsAddresses, type ParsedNetwork } from '../annotation/index.js';
import { child, forbidden, index, invalid, notFound, type FieldError } from '../field/index.js';
import {
  argsReachOf,
  ipamsOf,
  PLUGIN_FACTS,
  reachOf,
  type CniSummary,
  type ExtraReaders,
  type NadLookup,
  type Reach,
  type Requested,
  type ArgType,
} from '../nads/index.js';
import {
  bareIpArgChecks,
  ipamRoadChecks,
  ipamSelectionChecks,
  sharedHostLocalAddresses,
  type ArgsIps,
  type SelectionIps,
} from './builtin-ipam.js';
import { defaultRouteChecks } from './builtin-gateway.js';
import type { Finding } from '../policy/index.js';
import type { Note } from './warnings.js';
import { checkMacs } from './builtin-mac.js';
import { interfaceNameCollisions } from './builtin-ifnames.js';

/** Selection keys that reach the plugins as runtimeConfig (and, for mac and ips, CNI_ARGS). */
export const REQUEST_KEYS: ReadonlyArray<readonly ['ips' | 'mac' | 'infiniband-guid' | 'portMappings' | 'bandwidth', Requested]> = [
  ['ips', 'ips'],
  ['mac', 'mac'],
  ['infiniband-guid', 'infinibandGUID'],
  ['portMappings', 'portMappings'],
  ['bandwidth', 'bandwidth'],
];

/** How a value travels to the plugins, for messages. */
const ROADS: Readonly<Record<Requested, string>> = {
  mac: 'a MAC (MAC= in CNI_ARGS, or runtimeConfig "mac" where the capability is declared)',
  ips: 'IPs (an IPAM reading IP= from CNI_ARGS, or runtimeConfig "ips" where the capability is declared)',
  infinibandGUID:
    'runtimeConfig "infinibandGUID" (Multus passes the GUID only there, to a plugin declaring the capability, such as ib-sriov)',
  portMappings: 'runtimeConfig "portMappings" (the portmap plugin with the capability declared)',
  bandwidth: 'runtimeConfig "bandwidth" (the bandwidth plugin with the capability declared)',
};

export interface BuiltinResult {
  /** Action Enforce, for the policy to re-grade. */
  findings: Finding[];
  /** Requests the NAD's config makes certain to fail at CNI ADD: object errors. */
  errors: FieldError[];
  /** Lookups that could not be answered, as Warn findings (the caller may deny instead). */
  unverified: Array<Finding & { ref: string; reason: string }>;
  /** Problems that may or may not bite (an unknown plugin), as field warnings. */
  fieldWarnings: FieldError[];
  /** Checks that were skipped or facts worth knowing, and why. */
  warnings: Note[];
  /** Paths of requested addresses the chain drops for another value (builtin-mac.ts): not judged by policy. */
  dropped: string[];
  /** Paths whose annotation-only warning a warning here says better (the chain is known). */
  supersedes: string[];
}

const enforce = (rule: Finding['rule'], error: FieldError): Finding => ({ policy: 'builtin', rule, action: 'Enforce', error });
const chainOf = (cni: CniSummary): string => cni.pluginTypes.join(', ') || 'no plugin';

function unknownNote(path: string, reach: Extract<Reach, { status: 'unknown' }>, flagKey: string): Note {
  const types = reach.types.map((t) => `"${t}"`).join(', ');
  const hint = flagKey ? `; if it reads it: --plugin-reads ${reach.declare}=${flagKey}` : '';
  return { path, text: `may be ignored: netattach does not know plugin ${types}${hint}` };
}

function checkRequests(net: ParsedNetwork, ref: string, cni: CniSummary, extra: ExtraReaders, out: BuiltinResult): void {
  for (const [selKey, requested] of REQUEST_KEYS) {
    const value = net.selection[selKey];
    if (value === undefined) continue;
    const path = child(net.path, selKey);
    const reach = reachOf(cni, requested, extra);
    if (selKey === 'ips') {
      const refusing = cni.plugins.find((p) => p.refusesIps);
      if (refusing) out.warnings.push({ path, text: `${ref} (${refusing.type}) is ${refusing.refusesIps}` });
      // A typed IP= loader fails the ADD before anything reads the addresses: that is the verdict.
      if (Array.isArray(value) && bareIpArgChecks(ref, cni, value as string[], (j) => index(path, j), path, out)) continue;
    }
    if (reach.status === 'ignored') {
      out.findings.push(
        enforce(
          'capabilities',
          forbidden(path, `${ref} would ignore it: no plugin of its chain (${chainOf(cni)}) reads ${ROADS[requested]}`),
        ),
      );
      continue;
    }
    if (reach.status === 'unknown') out.warnings.push(unknownNote(path, reach, selKey === 'ips' || selKey === 'mac' ? selKey : ''));
    if (selKey === 'ips' && Array.isArray(value) && ipamsOf(cni).length > 0) {
      const argsIps = argsAddresses(net).some((a) => a.key === 'ips');
      ipamRoadChecks(ref, cni, value as string[], (j) => index(path, j), path, 'cniArgs', out, argsIps);
    }
  }
}

const ARG_TYPE_TEXT: Record<ArgType, string> = {
  string: 'a string',
  'string[]': 'a list of strings',
  boolean: 'true or false',
  uint: 'a whole number from 0',
};

// Go's encoding/json leaves a field alone on null: null passes every type.
function hasArgType(v: unknown, type: ArgType): boolean {
  if (v === null) return true;
  switch (type) {
    case 'string':
      return typeof v === 'string';
    case 'string[]':
      return Array.isArray(v) && v.every((x) => typeof x === 'string');
    case 'boolean':
      return typeof v === 'boolean';
    case 'uint':
      return typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 2 ** 31 - 1;
  }
}

/**
 * Plugins that decode args.cni into fixed types fail the ADD on another value: as a map of
 * strings (ib-sriov), or key by key (nv-ipam, KubeVirt's passt binding).
 */
function checkArgsTypes(net: ParsedNetwork, ref: string, cni: CniSummary, out: BuiltinResult): Set<string> {
  const reported = new Set<string>();
  const args = net.selection['cni-args'];
  if (!args) return reported;
  const fail = (k: string, v: unknown, why: string) => {
    if (reported.has(k)) return;
    reported.add(k);
    out.errors.push(invalid(child(child(net.path, 'cni-args'), k), v, `${why}, and the ADD would fail`));
  };
  const strict = cni.plugins.find((p) => PLUGIN_FACTS.get(p.type)?.argsCniStringsOnly);
  if (strict)
    for (const [k, v] of Object.entries(args))
      if (typeof v !== 'string') fail(k, v, `must be a string: ${strict.type} in ${ref} reads args.cni as strings only`);
  const typed: [string, Readonly<Record<string, ArgType>>][] = [
    ...cni.plugins.flatMap((p): [string, Readonly<Record<string, ArgType>>][] => {
      const types = PLUGIN_FACTS.get(p.type)?.argsCniTypes;
      return types ? [[p.type, types]] : [];
    }),
    ...ipamsOf(cni).flatMap((u): [string, Readonly<Record<string, ArgType>>][] =>
      u.facts?.argsCniTypes ? [[`IPAM ${u.type}`, u.facts.argsCniTypes]] : [],
    ),
  ];
  for (const [who, types] of typed)
    for (const [k, type] of Object.entries(types))
      if (Object.hasOwn(args, k) && !hasArgType(args[k], type))
        fail(k, args[k], `must be ${ARG_TYPE_TEXT[type]}: ${who} in ${ref} decodes it so`);
  return reported;
}

/** Checks `cni-args`; returns its string `ips` that some IPAM of the chain reads, for the selection-wide IPAM checks. */
function checkArgs(
  net: ParsedNetwork,
  ref: string,
  cni: CniSummary | undefined,
  extra: ExtraReaders,
  out: BuiltinResult,
): ArgsIps | undefined {
  if (net.selection['cni-args'] === undefined) return undefined;
  const reported = cni ? checkArgsTypes(net, ref, cni, out) : undefined;
  const found = argsAddresses(net);
  if (found.length === 0) return undefined;
  const ips: string[] = [];
  const ipPaths: string[] = [];
  let ipsPath = '';
  for (const a of found) {
    if (reported?.has(a.written)) continue;
    const what = `cni-args "${a.written}"`;
    const reach: Reach = cni ? argsReachOf(cni, a.key, extra) : { status: 'unknown', types: ['a config read from the node'], declare: '' };
    if (a.problem) {
      // Malformed: it fails the ADD where a plugin reads it; elsewhere it may be harmless.
      if (reach.status === 'read')
        out.errors.push(invalid(a.path, a.value, `${a.problem} (${reach.by} reads ${what} and would fail the ADD)`));
      else
        out.fieldWarnings.push(
          invalid(
            a.path,
            a.value,
            `${a.problem} (${reach.status === 'ignored' ? `no plugin of ${ref} reads it` : `${reach.types.join(', ')} may read it`})`,
          ),
        );
      continue;
    }
    if (reach.status === 'ignored') {
      out.warnings.push({
        path: a.path,
        text: `${what} is read by no plugin of ${ref} (${chainOf(cni!)}), so it is ignored; ${ARGS_KEY_FIELD[a.key]} at the top level may be what you meant`,
      });
    } else if (a.key === 'ips' && cni && typeof a.value === 'string') {
      ips.push(a.value);
      ipPaths.push(a.path);
      ipsPath = a.path.slice(0, a.path.lastIndexOf('['));
    }
  }
  if (!ips.length || !cni) return undefined;
  ipamRoadChecks(ref, cni, ips, (j) => ipPaths[j]!, ipsPath, 'argsCni', out);
  return { values: ips, paths: ipPaths, listPath: ipsPath };
}

export function builtinChecks(
  networks: readonly ParsedNetwork[],
  nads: (ns: string, name: string) => NadLookup,
  extra: ExtraReaders,
  multusDefaultNetworks?: number,
): BuiltinResult {
  const out: BuiltinResult = { findings: [], errors: [], unverified: [], fieldWarnings: [], warnings: [], dropped: [], supersedes: [] };
  const withIps: SelectionIps[] = [];
  for (const net of networks) {
    const { namespace, name } = net.selection;
    const ref = `${namespace}/${name}`;
    const lookup = nads(namespace, name);
    if (lookup.status === 'not-found') {
      out.findings.push(enforce('networkExists', notFound(net.path, ref, 'no such NetworkAttachmentDefinition')));
      continue;
    }
    if (lookup.status === 'unavailable') {
      // Not the same as absent, so not a networkExists finding a policy could re-grade; the
      // caller decides: a Pod CREATE is denied (503), a template or an update only warned.
      out.unverified.push({
        policy: 'builtin',
        rule: 'networkExists',
        action: 'Warn',
        error: { path: net.path, type: 'Internal error', reason: `${ref} could not be checked: ${lookup.reason}` },
        ref,
        reason: lookup.reason,
      });
      continue;
    }
    const { cni, configUnloadable } = lookup.nad;
    if (configUnloadable !== undefined) {
      // Stored before netattach checked NADs, or where it does not: Multus cannot load it.
      out.errors.push(
        invalid(
          net.path,
          ref,
          `${ref} has a spec.config Multus cannot load (${configUnloadable}): it fails every pod on this network ("failed to unmarshal Spec.Config"); fix the NetworkAttachmentDefinition`,
        ),
      );
      continue;
    }
    if (cni) checkRequests(net, ref, cni, extra, out);
    else {
      for (const [selKey] of REQUEST_KEYS) {
        if (net.selection[selKey] !== undefined)
          out.warnings.push({ path: child(net.path, selKey), text: `"${selKey}" unchecked: ${ref} has no readable CNI config` });
      }
    }
    const argsIps = checkArgs(net, ref, cni, extra, out);
    if (cni && ipamsOf(cni).length > 0) {
      const ips = net.selection.ips;
      const top = Array.isArray(ips) ? (ips as string[]) : undefined;
      ipamSelectionChecks(ref, cni, net.path, top, argsIps, out);
      if (top || argsIps) withIps.push({ index: net.index, netPath: net.path, ref, cni, top, args: argsIps });
    }
    defaultRouteChecks(net, ref, cni, out);
    if (cni) {
      const macs = checkMacs(net, ref, cni, extra);
      out.errors.push(...macs.errors);
      out.warnings.push(...macs.warnings);
      out.dropped.push(...macs.dropped);
    }
  }
  if (withIps.length > 1) sharedHostLocalAddresses(withIps, out);
  const collisions = interfaceNameCollisions(
    networks,
    (n) => chainFound(nads(n.selection.namespace, n.selection.name)),
    multusDefaultNetworks,
  );
  out.errors.push(...collisions.errors);
  out.warnings.push(...collisions.warnings);
  out.supersedes.push(...collisions.warnings.map((w) => w.path));
  return out;
}

const chainFound = (l: NadLookup): CniSummary | undefined => (l.status === 'found' ? l.nad.cni : undefined);
