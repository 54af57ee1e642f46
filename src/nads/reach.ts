// Whether what a selection asks for reaches a plugin that uses it, judged from the NAD's chain
// and the plugin table (plugins.ts). Three answers: some plugin reads it; no plugin can (every
// plugin is known, and none reads it by any road); or it cannot be told (a plugin or IPAM the
// table does not know, which might read CNI_ARGS or args.cni).
import { IPAM_FACTS, PLUGIN_FACTS, type ArgsCniKey, type ExtraReaders, type IpamFacts, type Requested } from './plugins.js';
import type { CniSummary, PluginSummary } from './types.js';

/**
 * `unknown`: `types` names each plugin the table does not know (or a known one whose IPAM it does not
 * know); `declare` the first one's type for `--plugin-reads` (that IPAM's type, not its plugin's).
 */
export type Reach = { status: 'read'; by: string } | { status: 'ignored' } | { status: 'unknown'; types: string[]; declare: string };

type PluginReach = 'read' | 'ignored' | 'unknown';

/** The IPAM a plugin calls, with its facts (undefined facts: a type the table does not know). */
export interface IpamUse {
  plugin: PluginSummary;
  type: string;
  facts: IpamFacts | undefined;
}

// Summaries are interned (one frozen object per distinct chain) and the extra readers are fixed at
// start-up, so each answer is computed once per chain and key, not once per request.
const reachMemo = new WeakMap<ExtraReaders, WeakMap<CniSummary, Map<string, Reach>>>();
const ipamMemo = new WeakMap<CniSummary, readonly IpamUse[]>();

function memoized(cni: CniSummary, extra: ExtraReaders, key: string, compute: () => Reach): Reach {
  let byChain = reachMemo.get(extra);
  if (!byChain) reachMemo.set(extra, (byChain = new WeakMap()));
  let byKey = byChain.get(cni);
  if (!byKey) byChain.set(cni, (byKey = new Map()));
  let r = byKey.get(key);
  if (!r) byKey.set(key, (r = compute()));
  return r;
}

/** IPAMs that the chain's known plugins call (a plugin known to delegate, with an `ipam` section). */
export function ipamsOf(cni: CniSummary): readonly IpamUse[] {
  let found = ipamMemo.get(cni);
  if (!found) ipamMemo.set(cni, (found = computeIpams(cni)));
  return found;
}

function computeIpams(cni: CniSummary): IpamUse[] {
  const out: IpamUse[] = [];
  for (const p of cni.plugins) {
    if (!p.ipam || !PLUGIN_FACTS.get(p.type)?.delegatesIpam) continue;
    out.push({ plugin: p, type: p.ipam.type, facts: IPAM_FACTS.get(p.ipam.type) });
  }
  return out;
}

function ipamReadsIps(p: PluginSummary, viaRuntimeConfig: boolean, extra: ExtraReaders): PluginReach {
  if (!p.ipam) return 'ignored';
  // An admin's entry adds to the table, for an IPAM as for a plugin.
  if (extra.get(p.ipam.type)?.has('ips')) return 'read';
  const ipam = IPAM_FACTS.get(p.ipam.type);
  // An IPAM the table does not know, under a plugin that declares `ips`: the declaration is the
  // config's claim that its IPAM reads them (libcni hands runtimeConfig ips to the plugin, which
  // passes its config on to the IPAM), as for an unknown plugin declaring a capability.
  if (!ipam) return viaRuntimeConfig ? 'read' : 'unknown';
  if (ipam.ipFromCniArgs !== 'no' && ipam.ipFromCniArgs !== 'bare-unused') return 'read';
  return viaRuntimeConfig && ipam.ipsFromRuntimeConfig ? 'read' : 'ignored';
}

/** How one plugin treats a top-level selection key. */
function pluginReach(p: PluginSummary, key: Requested, extra: ExtraReaders): PluginReach {
  if ((key === 'mac' || key === 'ips') && extra.get(p.type)?.has(key)) return 'read';
  const declared = p.capabilities.includes(key);
  const facts = PLUGIN_FACTS.get(p.type);
  if (facts?.fromAnnotation?.includes(key)) return 'read';
  if (!facts) {
    // libcni hands a runtimeConfig key only to plugins declaring its capability; a plugin that
    // declares it says it reads it. MAC= and IP= reach every plugin, known or not.
    if (declared) return 'read';
    return key === 'mac' || key === 'ips' ? 'unknown' : 'ignored';
  }
  if (declared && facts.runtimeConfig.includes(key)) return 'read';
  if (key === 'mac' && facts.macFromCniArgs) return 'read';
  if (key === 'ips' && facts.delegatesIpam) return ipamReadsIps(p, declared, extra);
  return 'ignored';
}

function combine(cni: CniSummary, each: (p: PluginSummary) => PluginReach): Reach {
  const unknown: string[] = [];
  let declare = '';
  for (const p of cni.plugins) {
    const r = each(p);
    if (r === 'read') return { status: 'read', by: p.type };
    if (r !== 'unknown') continue;
    // A known plugin is unknown only through its IPAM: the IPAM is what an admin declares.
    const byIpam = p.ipam !== undefined && PLUGIN_FACTS.has(p.type);
    unknown.push(byIpam ? `${p.type} (IPAM ${p.ipam!.type})` : p.type);
    if (unknown.length === 1) declare = byIpam ? p.ipam!.type : p.type;
  }
  return unknown.length ? { status: 'unknown', types: unknown, declare } : { status: 'ignored' };
}

/** Whether a top-level selection key (`mac`, `ips`, `infiniband-guid` as infinibandGUID, ...) reaches a reader. */
export function reachOf(cni: CniSummary, key: Requested, extra: ExtraReaders): Reach {
  return memoized(cni, extra, key, () => combine(cni, (p) => pluginReach(p, key, extra)));
}

/** Whether a `cni-args` key (merged into every plugin's args.cni) reaches a reader. */
export function argsReachOf(cni: CniSummary, key: ArgsCniKey, extra: ExtraReaders): Reach {
  return memoized(cni, extra, `args.${key}`, () =>
    combine(cni, (p) => {
      if (extra.get(p.type)?.has(key)) return 'read';
      const facts = PLUGIN_FACTS.get(p.type);
      if (!facts) return 'unknown';
      if (facts.argsCni.includes(key)) return 'read';
      if (key === 'ips' && facts.delegatesIpam && p.ipam) {
        if (extra.get(p.ipam.type)?.has('ips')) return 'read';
        const ipam = IPAM_FACTS.get(p.ipam.type);
        if (!ipam) return 'unknown';
        return ipam.ipsFromArgsCni ? 'read' : 'ignored';
      }
      return 'ignored';
    }),
  );
}
