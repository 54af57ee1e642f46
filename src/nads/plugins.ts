// What each well-known CNI plugin really reads of what a network selection asks for, by road:
// - CNI_ARGS: Multus sends `MAC=` (for `mac`) and `IP=` (for `ips`) to every delegate, whatever
//   its capabilities; the IPAM plugin inherits CNI_ARGS from the plugin that calls it.
// - runtimeConfig: libcni passes a key only to the plugins whose config declares its capability.
// - args.cni: a selection's `cni-args` is merged into every plugin's `args.cni`, whatever the
//   capabilities.
// This one table serves the admission checks, the docs (docs/cni-runtime.md is rendered from it
// and a test keeps the two equal) and the tests. Each row names the release and file it was read
// from. A plugin not in the table is unknown: nothing is denied on its account.

/** A hardware-address or IP request, by the runtimeConfig key it travels as. */
export type Requested = 'mac' | 'ips' | 'infinibandGUID' | 'portMappings' | 'bandwidth';

/** `args.cni` keys that plugins read as addresses: the second door. */
export type ArgsCniKey = 'mac' | 'guid' | 'ips';

export interface PluginFacts {
  /** Repository, release and file the facts were read from. */
  source: string;
  /** Reads `MAC=` from CNI_ARGS. */
  macFromCniArgs: boolean;
  /** runtimeConfig keys it reads when its config declares the capability. */
  runtimeConfig: readonly Requested[];
  /** `args.cni` keys it reads. */
  argsCni: readonly ArgsCniKey[];
  /** Calls the IPAM plugin named in its `ipam` section (so `IP=` reaches that IPAM). */
  delegatesIpam: boolean;
  /** Decodes args.cni as a map of strings: any non-string `cni-args` value fails its ADD. */
  argsCniStringsOnly?: boolean;
}

export interface IpamFacts {
  source: string;
  /** How it reads `IP=` from CNI_ARGS: several comma-separated addresses, exactly one, or not at all. */
  ipFromCniArgs: 'several' | 'one' | 'no';
  /** Reads runtimeConfig `ips` when the calling plugin declares the `ips` capability. */
  ipsFromRuntimeConfig: boolean;
  /** Reads `args.cni.ips`. */
  ipsFromArgsCni: boolean;
  /** Fails the ADD on an address without a /prefix. */
  needsPrefix: boolean;
  /** Fails the ADD on an address outside its configured ranges. */
  needsInRange: boolean;
  /** Hands a requested address out without reserving it in its pool (duplicate risk). */
  unreserved: boolean;
  /**
   * How it combines the roads (executed): `union` appends IP=, args.cni.ips and runtimeConfig
   * ips and takes one address per range set (host-local); `replace` starts from its configured
   * addresses plus IP=, which args.cni.ips replace, which runtimeConfig ips replace (static).
   */
  combines?: 'union' | 'replace';
}

const PLUGINS_REPO = 'containernetworking/plugins v1.9.1';
/** Rows whose facts the runtime oracle executes (test/e2e/cni-oracle.e2e.ts, docs/cni-runtime.md "Executed facts"). */
const EXECUTED_REPO = 'containernetworking/plugins v1.10.0';
const EXECUTED = '; executed (test/e2e/cni-oracle.e2e.ts)';
const none = { macFromCniArgs: false, runtimeConfig: [], argsCni: [] } as const;

/**
 * Plugins that create the attachment's interface named CNI_IFNAME in the pod (a link of their own,
 * or a host device or VF moved in and renamed); a chain needs exactly one. The one list that both
 * the chain check (cni.ts) and the interface-name check (mac-setters.ts) read; they used to keep
 * two lists that disagreed on dummy, bond, ipoib and accelerated-bridge. All four create it:
 * - dummy: containernetworking/plugins plugins/main/dummy/dummy.go (LinkAdd of a Dummy named ifName in the netns);
 * - bond: k8snetworkplumbingwg/bond-cni bond/bond.go (creates the bond named ifName in the pod netns);
 * - ipoib: Mellanox/ipoib-cni (adds an IPoIB child link and moves it in as ifName);
 * - accelerated-bridge: k8snetworkplumbingwg/accelerated-bridge-cni (moves the VF in, renamed ifName);
 * - macvtap: kubevirt/macvtap-cni v0.13.1 pkg/util/netlink.go ConfigureInterface (moves the macvtap device in, renamed ifName).
 */
export const CREATES_INTERFACE: ReadonlySet<string> = new Set([
  'bridge',
  'macvlan',
  'ipvlan',
  'vlan',
  'ptp',
  'host-device',
  'tap',
  'dummy',
  'bond',
  'sriov',
  'ib-sriov',
  'ipoib',
  'ovs',
  'accelerated-bridge',
  'macvtap',
]);

/** Plugin type -> facts. */
export const PLUGIN_FACTS: ReadonlyMap<string, PluginFacts> = new Map<string, PluginFacts>([
  [
    'bridge',
    {
      source: `${EXECUTED_REPO} plugins/main/bridge/bridge.go${EXECUTED}`,
      macFromCniArgs: true,
      runtimeConfig: ['mac'],
      argsCni: ['mac'],
      delegatesIpam: true,
    },
  ],
  [
    'macvlan',
    {
      source: `${EXECUTED_REPO} plugins/main/macvlan/macvlan.go${EXECUTED}`,
      macFromCniArgs: true,
      runtimeConfig: ['mac'],
      argsCni: [],
      delegatesIpam: true,
    },
  ],
  [
    'tuning',
    {
      source: `${EXECUTED_REPO} plugins/meta/tuning/tuning.go${EXECUTED}`,
      macFromCniArgs: true,
      runtimeConfig: ['mac'],
      argsCni: ['mac'],
      delegatesIpam: false,
    },
  ],
  [
    'tap',
    { source: `${PLUGINS_REPO} plugins/main/tap/tap.go`, macFromCniArgs: true, runtimeConfig: ['mac'], argsCni: [], delegatesIpam: true },
  ],
  ['ipvlan', { source: `${PLUGINS_REPO} plugins/main/ipvlan/ipvlan.go`, ...none, delegatesIpam: true }],
  ['vlan', { source: `${PLUGINS_REPO} plugins/main/vlan/vlan.go`, ...none, delegatesIpam: true }],
  ['ptp', { source: `${EXECUTED_REPO} plugins/main/ptp/ptp.go${EXECUTED}`, ...none, delegatesIpam: true }],
  ['host-device', { source: `${EXECUTED_REPO} plugins/main/host-device/host-device.go${EXECUTED}`, ...none, delegatesIpam: true }],
  [
    'portmap',
    {
      source: `${PLUGINS_REPO} plugins/meta/portmap/main.go`,
      macFromCniArgs: false,
      runtimeConfig: ['portMappings'],
      argsCni: [],
      delegatesIpam: false,
    },
  ],
  [
    'bandwidth',
    {
      source: `${PLUGINS_REPO} plugins/meta/bandwidth/main.go`,
      macFromCniArgs: false,
      runtimeConfig: ['bandwidth'],
      argsCni: [],
      delegatesIpam: false,
    },
  ],
  ['firewall', { source: `${PLUGINS_REPO} plugins/meta/firewall/firewall.go`, ...none, delegatesIpam: false }],
  ['sbr', { source: `${PLUGINS_REPO} plugins/meta/sbr/main.go`, ...none, delegatesIpam: false }],
  ['vrf', { source: `${PLUGINS_REPO} plugins/meta/vrf/main.go`, ...none, delegatesIpam: false }],
  [
    'sriov',
    {
      source: 'k8snetworkplumbingwg/sriov-cni v2.10.0 pkg/types/types.go',
      macFromCniArgs: true,
      runtimeConfig: ['mac'],
      argsCni: [],
      delegatesIpam: true,
    },
  ],
  [
    'ib-sriov',
    {
      source: 'k8snetworkplumbingwg/ib-sriov-cni v1.3.0 pkg/types/types.go, cmd/ib-sriov-cni/main.go',
      macFromCniArgs: false,
      runtimeConfig: ['infinibandGUID'],
      argsCni: ['guid'],
      delegatesIpam: true,
      argsCniStringsOnly: true,
    },
  ],
  ['ipoib', { source: 'Mellanox/ipoib-cni v1.2.2 cmd/ipoib/ipoib.go', ...none, delegatesIpam: true }],
  [
    'ovs',
    {
      source: 'k8snetworkplumbingwg/ovs-cni v0.39.0 pkg/plugin/plugin.go',
      macFromCniArgs: true,
      runtimeConfig: [],
      argsCni: [],
      delegatesIpam: true,
    },
  ],
  [
    'accelerated-bridge',
    {
      source: 'k8snetworkplumbingwg/accelerated-bridge-cni v0.6.0 pkg/config/config.go',
      macFromCniArgs: true,
      runtimeConfig: ['mac'],
      argsCni: [],
      delegatesIpam: true,
    },
  ],
  [
    'macvtap',
    {
      // EnvArgs decodes MAC= from CNI_ARGS; no runtimeConfig, no args.cni, no IPAM call (CmdAdd).
      source: 'kubevirt/macvtap-cni v0.13.1 pkg/cni/plugin.go',
      macFromCniArgs: true,
      runtimeConfig: [],
      argsCni: [],
      delegatesIpam: false,
    },
  ],
]);

/** IPAM type -> facts. */
export const IPAM_FACTS: ReadonlyMap<string, IpamFacts> = new Map<string, IpamFacts>([
  [
    'static',
    {
      source: `${EXECUTED_REPO} plugins/ipam/static/main.go${EXECUTED}`,
      ipFromCniArgs: 'several',
      ipsFromRuntimeConfig: true,
      ipsFromArgsCni: true,
      needsPrefix: true,
      needsInRange: false,
      unreserved: false,
      combines: 'replace',
    },
  ],
  [
    'host-local',
    {
      source: `${EXECUTED_REPO} plugins/ipam/host-local/backend/allocator/config.go, range.go, allocator.go${EXECUTED}`,
      ipFromCniArgs: 'one',
      ipsFromRuntimeConfig: true,
      ipsFromArgsCni: true,
      needsPrefix: false,
      needsInRange: true,
      unreserved: false,
      combines: 'union',
    },
  ],
  [
    'whereabouts',
    {
      source: 'k8snetworkplumbingwg/whereabouts v0.9.4 pkg/config/config.go',
      ipFromCniArgs: 'several',
      ipsFromRuntimeConfig: false,
      ipsFromArgsCni: false,
      needsPrefix: true,
      needsInRange: false,
      unreserved: true,
    },
  ],
  [
    'dhcp',
    {
      source: `${PLUGINS_REPO} plugins/ipam/dhcp/main.go`,
      ipFromCniArgs: 'no',
      ipsFromRuntimeConfig: false,
      ipsFromArgsCni: false,
      needsPrefix: false,
      needsInRange: false,
      unreserved: false,
    },
  ],
]);

/**
 * Plugins whose ADD fails when their IPAM returns no address ("IPAM plugin returned missing IP
 * config"), with where that was found: static IPAM with nothing configured nor requested.
 */
export const EMPTY_IPAM_RESULT_FAILS: ReadonlyMap<string, string> = new Map([
  ['bridge', `${EXECUTED_REPO} plugins/main/bridge/bridge.go cmdAdd (executed)`],
  ...['macvlan', 'ipvlan', 'ptp', 'host-device', 'vlan', 'tap'].map((t): [string, string] => [
    t,
    `${EXECUTED_REPO} plugins/main/${t}/${t}.go cmdAdd`,
  ]),
]);

/**
 * What an admin adds to the table (`--plugin-reads TYPE=mac,ips,guid`): plugin types that read a
 * MAC or IPs (from CNI_ARGS or args.cni) or a GUID (from args.cni), for in-house plugins.
 * Runtime-config keys need no entry: a plugin declaring the capability already counts.
 */
export type ExtraReaders = ReadonlyMap<string, ReadonlySet<ArgsCniKey>>;
export const NO_EXTRA_READERS: ExtraReaders = new Map();

const EXTRA_KEYS: readonly ArgsCniKey[] = ['mac', 'ips', 'guid'];

/** Parses `TYPE=KEY[,KEY...]` entries; throws a RangeError naming the bad one. */
export function parsePluginReads(entries: readonly string[]): ExtraReaders {
  const out = new Map<string, Set<ArgsCniKey>>();
  for (const entry of entries) {
    const eq = entry.indexOf('=');
    const type = entry.slice(0, eq).trim();
    const keys = entry
      .slice(eq + 1)
      .split(',')
      .map((k) => k.trim())
      .filter(Boolean);
    if (eq <= 0 || keys.length === 0 || type.includes('/')) {
      throw new RangeError(`--plugin-reads: invalid value ${JSON.stringify(entry)}: expected TYPE=KEY[,KEY...], e.g. my-cni=mac,ips`);
    }
    const bad = keys.find((k) => !(EXTRA_KEYS as readonly string[]).includes(k));
    if (bad !== undefined)
      throw new RangeError(
        `--plugin-reads: unsupported key ${JSON.stringify(bad)} in ${JSON.stringify(entry)}: one of ${EXTRA_KEYS.join(', ')}`,
      );
    const set = out.get(type) ?? new Set<ArgsCniKey>();
    for (const k of keys) set.add(k as ArgsCniKey);
    out.set(type, set);
  }
  return out;
}
