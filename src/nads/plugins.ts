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
  /**
   * What it does with the pod's interface named CNI_IFNAME:
   * - `creates`: makes it (a link of its own, or a host device, VF or macvtap moved in and renamed): a
   *   chain has one;
   * - `acts-on`: works on the one an earlier plugin made: two of a type in one chain get the same
   *   runtimeConfig and undo or repeat each other;
   * - `none`: touches no interface (a KubeVirt binding plugin sets sysctls only).
   */
  iface: 'creates' | 'acts-on' | 'none';
  /**
   * How it puts a MAC it reads on the interface: `create`, in the request that creates the link
   * (the kernel refuses an address that is not 6 bytes); `set`, on an existing link (the kernel
   * takes the first 6 bytes of a longer one). Either way the kernel refuses a multicast, broadcast
   * or all-zero address. Unset: `create`.
   */
  setsMacBy?: 'create' | 'set';
  /** Its loader reads runtimeConfig `mac` after args.cni.mac, so the capability beats cni-args (bridge). */
  runtimeConfigMacWins?: boolean;
  /** Where its ADD fails when its IPAM returns no address ("IPAM plugin returned missing IP config"). */
  failsWithoutAddress?: string;
  /**
   * Selection keys its controller reads from the networks annotation itself, not from the CNI call
   * (OVN-Kubernetes writes them into its own pod annotation, which its CNI then applies).
   */
  fromAnnotation?: readonly Requested[];
  /**
   * Loads CNI_ARGS with a typed `IP` (Go net.IP): an `IP=` that is not one address without
   * /prefix fails its ADD (and DEL); the one it loads is not used.
   */
  ipArgBare?: boolean;
  /** args.cni keys it decodes into a fixed JSON type: another type fails its ADD. */
  argsCniTypes?: Readonly<Record<string, ArgType>>;
  /**
   * Takes its device from the `deviceID` Multus finds in the pod's device-plugin or DRA
   * allocations, and fails its ADD without one. Unset: it runs without a device (ovs on a named
   * bridge), or the config may name one itself (host-device's `device`).
   */
  needsDevice?: boolean;
  /**
   * Why the network may refuse requested `ips` given its own config (undefined: it takes them), as
   * a warning: OVN-Kubernetes refuses static IPs where it allocates addresses itself.
   */
  refusesIps?: (config: Readonly<Record<string, unknown>>) => string | undefined;
}

/** JSON types that typed args.cni decoders (Go's encoding/json) accept; null passes each. */
export type ArgType = 'string' | 'string[]' | 'boolean' | 'uint';

export interface IpamFacts {
  source: string;
  /**
   * How it reads `IP=` from CNI_ARGS: several comma-separated addresses; exactly one (more fail
   * the ADD); `first`: the text up to the first `/` as one address (the rest dropped, and a list
   * whose first entry has no /prefix fails); `bare-unused`: loaded as one address without prefix
   * (anything else fails the ADD) and never used; or not at all.
   */
  ipFromCniArgs: 'several' | 'one' | 'first' | 'bare-unused' | 'no';
  /** Reads runtimeConfig `ips` when the calling plugin declares the `ips` capability. */
  ipsFromRuntimeConfig: boolean;
  /** Reads `args.cni.ips`. */
  ipsFromArgsCni: boolean;
  /** Fails the ADD on an address without a /prefix. */
  needsPrefix: boolean;
  /** Fails the ADD on an address outside its configured ranges. */
  needsInRange: boolean;
  /**
   * Hands a requested address out without reserving it in its pool (`true`), or reserves it on the
   * node only (`node`): either way another pod may get the same address.
   */
  unreserved: boolean | 'node';
  /** args.cni keys it decodes into a fixed JSON type: another type fails the ADD. */
  argsCniTypes?: Readonly<Record<string, ArgType>>;
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

const SPIDERPOOL = 'spidernet-io/spiderpool v1.2.2';

/**
 * Plugin type -> facts. The interface role (`iface`) of the creators:
 * - dummy: plugins/main/dummy/dummy.go createDummy (a dummy link named CNI_IFNAME; IPAM required);
 * - bond: k8snetworkplumbingwg/bond-cni bond/bond.go createBond (a bond named CNI_IFNAME since 2022);
 * - ipoib, accelerated-bridge, sriov, ib-sriov, host-device, macvtap: a device moved in, renamed CNI_IFNAME.
 */
export const PLUGIN_FACTS: ReadonlyMap<string, PluginFacts> = new Map<string, PluginFacts>([
  [
    'bridge',
    {
      source: `${EXECUTED_REPO} plugins/main/bridge/bridge.go${EXECUTED}`,
      macFromCniArgs: true,
      runtimeConfig: ['mac'],
      argsCni: ['mac'],
      delegatesIpam: true,
      iface: 'creates',
      setsMacBy: 'create',
      runtimeConfigMacWins: true,
      failsWithoutAddress: `${EXECUTED_REPO} plugins/main/bridge/bridge.go cmdAdd (executed)`,
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
      iface: 'creates',
      setsMacBy: 'create',
      failsWithoutAddress: `${EXECUTED_REPO} plugins/main/macvlan/macvlan.go cmdAdd`,
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
      iface: 'acts-on',
      setsMacBy: 'set',
    },
  ],
  [
    'tap',
    {
      source: `${PLUGINS_REPO} plugins/main/tap/tap.go`,
      macFromCniArgs: true,
      runtimeConfig: ['mac'],
      argsCni: [],
      delegatesIpam: true,
      iface: 'creates',
      setsMacBy: 'create',
      failsWithoutAddress: `${EXECUTED_REPO} plugins/main/tap/tap.go cmdAdd`,
    },
  ],
  ...(['ipvlan', 'vlan'] as const).map((t): [string, PluginFacts] => [
    t,
    {
      source: `${PLUGINS_REPO} plugins/main/${t}/${t}.go`,
      ...none,
      delegatesIpam: true,
      iface: 'creates',
      failsWithoutAddress: `${EXECUTED_REPO} plugins/main/${t}/${t}.go cmdAdd`,
    },
  ]),
  ...(['ptp', 'host-device'] as const).map((t): [string, PluginFacts] => [
    t,
    {
      source: `${EXECUTED_REPO} plugins/main/${t}/${t}.go${EXECUTED}`,
      ...none,
      delegatesIpam: true,
      iface: 'creates',
      failsWithoutAddress: `${EXECUTED_REPO} plugins/main/${t}/${t}.go cmdAdd`,
    },
  ]),
  [
    'dummy',
    {
      source: `${PLUGINS_REPO} plugins/main/dummy/dummy.go`,
      ...none,
      delegatesIpam: true,
      iface: 'creates',
      failsWithoutAddress: `${PLUGINS_REPO} plugins/main/dummy/dummy.go cmdAdd`,
    },
  ],
  [
    'bond',
    {
      source: 'k8snetworkplumbingwg/bond-cni 258926ad bond/bond.go (2026-01; its only tag, v1.0, predates naming the bond CNI_IFNAME)',
      ...none,
      delegatesIpam: true,
      iface: 'creates',
      failsWithoutAddress: 'k8snetworkplumbingwg/bond-cni 258926ad bond/bond.go cmdAdd',
    },
  ],
  [
    'portmap',
    {
      source: `${PLUGINS_REPO} plugins/meta/portmap/main.go`,
      macFromCniArgs: false,
      runtimeConfig: ['portMappings'],
      argsCni: [],
      delegatesIpam: false,
      iface: 'acts-on',
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
      iface: 'acts-on',
    },
  ],
  ['firewall', { source: `${PLUGINS_REPO} plugins/meta/firewall/firewall.go`, ...none, delegatesIpam: false, iface: 'acts-on' }],
  ['sbr', { source: `${PLUGINS_REPO} plugins/meta/sbr/main.go`, ...none, delegatesIpam: false, iface: 'acts-on' }],
  ['vrf', { source: `${PLUGINS_REPO} plugins/meta/vrf/main.go`, ...none, delegatesIpam: false, iface: 'acts-on' }],
  [
    // Moves the RDMA device of the interface an earlier plugin made; CNI_ARGS and args.cni carry
    // only its typed `debug`.
    'rdma',
    {
      source: 'k8snetworkplumbingwg/rdma-cni v1.6.0 pkg/types/types.go, cmd/rdma/main.go parseConf',
      ...none,
      delegatesIpam: false,
      iface: 'acts-on',
      argsCniTypes: { debug: 'boolean' },
    },
  ],
  [
    'sriov',
    {
      source: 'k8snetworkplumbingwg/sriov-cni v2.10.0 pkg/types/types.go',
      macFromCniArgs: true,
      runtimeConfig: ['mac'],
      argsCni: [],
      delegatesIpam: true,
      iface: 'creates',
      needsDevice: true,
      setsMacBy: 'set',
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
      iface: 'creates',
      needsDevice: true,
    },
  ],
  ['ipoib', { source: 'Mellanox/ipoib-cni v1.2.2 cmd/ipoib/ipoib.go', ...none, delegatesIpam: true, iface: 'creates' }],
  [
    'ovs',
    {
      source: 'k8snetworkplumbingwg/ovs-cni v0.39.0 pkg/plugin/plugin.go',
      macFromCniArgs: true,
      runtimeConfig: [],
      argsCni: [],
      delegatesIpam: true,
      iface: 'creates',
      setsMacBy: 'create',
    },
  ],
  ...(['producer', 'consumer'] as const).map((role): [string, PluginFacts] => [
    // Chained after ovs: mirrors the port of the previous result; no args, no device.
    `ovs-mirror-${role}`,
    {
      source: `k8snetworkplumbingwg/ovs-cni v0.39.0 pkg/types/types.go MirrorNetConf, pkg/mirror-${role}/${role}.go CmdAdd`,
      ...none,
      delegatesIpam: false,
      iface: 'acts-on',
    },
  ]),
  [
    'accelerated-bridge',
    {
      source: 'k8snetworkplumbingwg/accelerated-bridge-cni v0.6.0 pkg/config/config.go',
      macFromCniArgs: true,
      runtimeConfig: ['mac'],
      argsCni: [],
      delegatesIpam: true,
      iface: 'creates',
      needsDevice: true,
      setsMacBy: 'set',
    },
  ],
  [
    // The device plugin makes the macvtap link at Allocate; the CNI moves it in by deviceID,
    // renames it CNI_IFNAME and sets MAC= on it (no capability needed). No IPAM, no args.
    'macvtap',
    {
      source: 'kubevirt/macvtap-cni v0.13.1 pkg/cni/plugin.go CmdAdd, pkg/util/netlink.go ConfigureInterface',
      macFromCniArgs: true,
      runtimeConfig: [],
      argsCni: [],
      delegatesIpam: false,
      iface: 'creates',
      needsDevice: true,
      setsMacBy: 'set',
    },
  ],
  [
    // ovnkube's controller reads `mac` (every topology) and `ips` (layer2 and localnet without
    // subnets, each with a /prefix) from the networks annotation; its CNI reads neither CNI_ARGS
    // nor runtimeConfig nor args.cni, refuses an `ipam` section and chains (one plugin only).
    'ovn-k8s-cni-overlay',
    {
      source:
        'ovn-org/ovn-kubernetes v1.1.0-alpha go-controller/pkg/cni/cniserver.go, pkg/allocator/pod/pod_annotation.go allocatePodAnnotationWithRollback, pkg/cni/helper_linux.go setupInterface',
      ...none,
      delegatesIpam: false,
      iface: 'creates',
      setsMacBy: 'create',
      fromAnnotation: ['mac', 'ips'],
      // pod_annotation.go: a static IP where DoesNetworkRequireIPAM (layer3, or subnets) is an
      // error; the pod then waits for its OVN annotation. A warning: read from v1.0-v1.1 only.
      refusesIps: (config) => {
        const subnets = config['subnets'];
        const network =
          config['topology'] === 'layer3'
            ? 'a layer3 network'
            : typeof subnets === 'string' && subnets.trim() !== ''
              ? 'a network with subnets'
              : undefined;
        return network
          ? `${network}, whose addresses ovnkube allocates: OVN-Kubernetes v1.0-v1.1 refuse a static IP there ("cannot allocate a static IP request with IPAM"), and the pod waits for its network`
          : undefined;
      },
    },
  ],
  [
    // KubeVirt's only binding CNI: sets two sysctls in the pod, makes no interface, returns an
    // empty result. KubeVirt sends it cni-args {logicNetworkName}.
    'kubevirt-passt-binding',
    {
      source: 'kubevirt/kubevirt v1.9.0 cmd/cniplugins/passt-binding/pkg/plugin/plugin.go CmdAddResult, config.go',
      ...none,
      delegatesIpam: false,
      iface: 'none',
      argsCniTypes: { logicNetworkName: 'string' },
    },
  ],
  [
    // Standalone: a veth (or netkit) pair whose pod end is renamed CNI_IFNAME; addresses from the
    // cilium agent (the NAD's ipam runs only in the agent's delegated-plugin mode). Multus
    // secondary use is not supported upstream (cilium/cilium#23483).
    'cilium-cni',
    {
      source: 'cilium/cilium d3ba9eac (v1.17 or later) plugins/cilium-cni/cmd/cmd.go Add, pkg/types/types.go',
      ...none,
      delegatesIpam: false,
      iface: 'creates',
      failsWithoutAddress: 'cilium/cilium plugins/cilium-cni/cmd/cmd.go Add ("IPAM did provide neither IPv4 nor IPv6 address")',
    },
  ],
  [
    // spiderpool's chained plugin: routes and checks on the interface an earlier plugin made; may
    // rewrite its MAC when podMACPrefix is configured (off by default).
    'coordinator',
    {
      source: `${SPIDERPOOL} cmd/coordinator/cmd/command_add.go CmdAdd, cni_types.go`,
      ...none,
      delegatesIpam: false,
      iface: 'acts-on',
      ipArgBare: true,
    },
  ],
]);

/**
 * Whether a chain can run without a device ID from Multus: `no` when a plugin needs one, `yes`
 * when every plugin is known and none does, `unknown` otherwise (a plugin the table does not
 * know, or host-device, whose config may name its device).
 */
export function runsWithoutDevice(types: readonly string[]): 'yes' | 'no' | 'unknown' {
  if (types.some((t) => PLUGIN_FACTS.get(t)?.needsDevice)) return 'no';
  return types.every((t) => PLUGIN_FACTS.has(t) && t !== 'host-device') ? 'yes' : 'unknown';
}

/** Plugins that create the attachment's interface named CNI_IFNAME in the pod: a chain has one. */
export const CREATES_INTERFACE: ReadonlySet<string> = new Set([...PLUGIN_FACTS].filter(([, f]) => f.iface === 'creates').map(([t]) => t));

/**
 * Plugins that act on "the" interface: two of a type in a chain receive the same runtimeConfig and
 * undo or repeat each other's work. CNI does not forbid repeats, so this is only a warning.
 */
export const SINGLE_INSTANCE_PLUGINS: ReadonlySet<string> = new Set(
  [...PLUGIN_FACTS].filter(([, f]) => f.iface !== 'none').map(([t]) => t),
);

/** How each MAC-setting plugin puts the MAC on the interface (see PluginFacts.setsMacBy). */
export const SETS_MAC_BY: ReadonlyMap<string, 'create' | 'set'> = new Map(
  [...PLUGIN_FACTS].flatMap(([t, f]): [string, 'create' | 'set'][] => (f.setsMacBy ? [[t, f.setsMacBy]] : [])),
);

/**
 * Plugins whose loader reads runtimeConfig `mac` after `args.cni.mac` (bridge.go loadNetConf: MAC=,
 * then args.cni, then runtimeConfig). Every other plugin reading both lets cni-args win.
 */
export const RUNTIME_CONFIG_OVER_ARGS_CNI: ReadonlySet<string> = new Set(
  [...PLUGIN_FACTS].filter(([, f]) => f.runtimeConfigMacWins).map(([t]) => t),
);

/**
 * Plugins whose ADD fails when their IPAM returns no address, with where that was found: static
 * IPAM with nothing configured nor requested.
 */
export const EMPTY_IPAM_RESULT_FAILS: ReadonlyMap<string, string> = new Map(
  [...PLUGIN_FACTS].flatMap(([t, f]): [string, string][] => (f.failsWithoutAddress && f.delegatesIpam ? [[t, f.failsWithoutAddress]] : [])),
);

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
    // Addresses come from spiderpool's agent and the pod's ipam.spidernet.io annotations, never
    // from the call; its typed CNI_ARGS loader still parses IP= (and fails on a prefix or a list).
    'spiderpool',
    {
      source: `${SPIDERPOOL} cmd/spiderpool/cmd/cni_types.go K8sArgs, command_add.go CmdAdd`,
      ipFromCniArgs: 'bare-unused',
      ipsFromRuntimeConfig: false,
      ipsFromArgsCni: false,
      needsPrefix: false,
      needsInRange: false,
      unreserved: false,
    },
  ],
  [
    // runtimeConfig ips (the main plugin declaring the capability), else args.cni.ips, else IP=;
    // a prefix is dropped (the pool gives the mask); pools are custom resources, not in the NAD.
    'nv-ipam',
    {
      source: 'Mellanox/nvidia-k8s-ipam v0.4.0 pkg/cni/types/types.go LoadConf, loadEnvCNIArgs; pkg/ipam-node/allocator/allocator.go',
      ipFromCniArgs: 'first',
      ipsFromRuntimeConfig: true,
      ipsFromArgsCni: true,
      needsPrefix: false,
      needsInRange: false,
      unreserved: 'node',
      argsCniTypes: {
        ips: 'string[]',
        poolNames: 'string[]',
        poolType: 'string',
        allocateDefaultGateway: 'boolean',
        allocateIPWithIndex: 'uint',
      },
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
 * What an admin adds to the table (`--plugin-reads TYPE=mac,ips,guid`): plugin types that read a
 * MAC or IPs (from CNI_ARGS or args.cni) or a GUID (from args.cni), for in-house plugins; an
 * IPAM type with `ips` reads them under a known plugin that delegates to it. An entry adds to
 * what the table says of a type it knows.
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
