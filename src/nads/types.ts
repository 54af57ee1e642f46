// What netattach knows of a NetworkAttachmentDefinition: only what admission needs,
// derived once when the NAD enters the cache, never on the request path.
import type { ListWatchHandler } from '../kube/index.js';

export const RESOURCE_NAME_ANNOTATION = 'k8s.v1.cni.cncf.io/resourceName';
export const NODE_SELECTOR_ANNOTATION = 'k8s.v1.cni.cncf.io/nodeSelector';
/**
 * netattach's own NAD annotation: the ResourceClaimTemplate (looked up in the pod's namespace)
 * that serves this network's device through an explicit DRA claim instead of extended resources.
 */
export const CLAIM_TEMPLATE_ANNOTATION = 'netattach.io/resourceClaimTemplate';

/** Runtime-config keys a selection can request, and the CNI capability each needs. */
export type Capability = 'ips' | 'mac' | 'infinibandGUID' | 'portMappings' | 'bandwidth';

/** A host-local range: `subnet`, optionally narrowed by `rangeStart`/`rangeEnd`. */
export interface IpRange {
  subnet: string;
  rangeStart?: string;
  rangeEnd?: string;
  /** The address host-local keeps for the gateway, as written (default: the subnet's first address). */
  gateway?: string;
  /** Its range set as host-local numbers them (the legacy top-level range first): one requested IP per set. */
  set?: number;
}

/** A route of a static IPAM's config. */
export interface IpamRoute {
  dst: string;
  gw?: string;
}

/** The `ipam` section of a plugin, as far as admission needs it. */
export interface IpamSummary {
  type: string;
  /** host-local's ranges (`ranges` range sets flattened, or the legacy top-level `subnet`). */
  ranges?: readonly IpRange[];
  /** static's configured `addresses[].address`, as written. */
  addresses?: readonly string[];
  /** static's configured `routes`. */
  routes?: readonly IpamRoute[];
  /** The plugin config's own `args.cni.ips`, which a selection's `cni-args.ips` replaces (Multus injectCNIArgs). */
  ownArgsIps?: readonly string[];
  /** static's `addresses[].gateway`, as written: ptp routes the interface to each directly (a link route). */
  gateways?: readonly string[];
  /** static's `addresses[].address` written without a `gateway`: ptp cannot route by them. */
  gatewaylessAddresses?: readonly string[];
  /** The `dst` of every route without `gw` (static's or host-local's, any table or scope): one may be a link route. */
  gatewaylessRoutes?: readonly string[];
}

/** One plugin of the chain. */
export interface PluginSummary {
  type: string;
  /** Capabilities this plugin declares `true`: libcni passes it only those runtimeConfig keys. */
  capabilities: readonly string[];
  ipam?: IpamSummary;
  /** Where the plugin sits in the NAD, e.g. `spec.config.plugins[1]`, for messages. */
  path: string;
  /** What about its config makes the plugin refuse requested `ips` (PluginFacts.refusesIps). */
  refusesIps?: string;
}

export interface CniSummary {
  /** `cniVersion` as written, if any. */
  cniVersion?: string;
  /** Plugin `type`s in chain order (one for a single config). */
  pluginTypes: string[];
  /** Union of capabilities declared `true` by any plugin of the chain. */
  capabilities: ReadonlySet<Capability | string>;
  /** The chain's plugins with a readable `type`, in order. */
  plugins: readonly PluginSummary[];
}

export interface Nad {
  namespace: string;
  name: string;
  uid?: string;
  resourceVersion?: string;
  /** Extended resource names from the resourceName annotation (comma-separated list), in order, trimmed: what pods are given requests for. */
  resourceNames: string[];
  /**
   * The annotation's other names (not extended resource names, e.g. `single-gpu`): no device
   * plugin serves them and nothing is requested for them; Multus matches them to a DRA-claimed device.
   */
  draOnlyResourceNames?: string[];
  /** Parsed from the nodeSelector annotation (`k=v` or `k`, comma-separated). */
  nodeSelector: Record<string, string>;
  /** The ResourceClaimTemplate of the explicit-claim DRA path (CLAIM_TEMPLATE_ANNOTATION), if any. */
  claimTemplate?: string;
  /**
   * Summary of `spec.config`; `undefined` when the config is empty (read from the node,
   * so its capabilities are unknown and not checked) or unparseable.
   */
  cni?: CniSummary;
  /** Why Multus cannot load `spec.config` at all (not JSON, or not a JSON object): every ADD on this NAD fails. */
  configUnloadable?: string;
  /** Problems found in the NAD itself (bad config, bad annotations), for messages. */
  problems: string[];
}

export type NadLookup =
  | { status: 'found'; nad: Nad }
  /** `remembered`: answered from the short memory of NADs found absent (no GET). */
  | { status: 'not-found'; remembered?: true }
  /** The source could not answer (API server unreachable, not synced): not the same as absent. */
  | { status: 'unavailable'; reason: string };

export const nadKey = (namespace: string, name: string): string => `${namespace}/${name}`;

/** A source of NADs: a watched directory, or the cluster through an informer. */
export interface NadSource {
  readonly kind: 'directory' | 'cluster' | 'static';
  /** Starts watching; resolves once the first full sync is done (or rejects on a fatal error). */
  start(): Promise<void>;
  stop(): Promise<void>;
  /** True once the first sync has completed. */
  synced(): boolean;
  /** Since when (ms since epoch) the cache may be stale: its watch is failing after the first sync. */
  staleSince?(): number | undefined;
  /** Why the watch is failing, while it retries. */
  lastFailure?(): { message: string; statusCode?: number } | undefined;
  /** Number of NADs in the cache. */
  size(): number;
  /** Cache-only lookup, synchronous. */
  get(namespace: string, name: string): Nad | undefined;
  /**
   * Lookup for the request path: the cache, and on a miss one bounded (<= 1 s) read from the
   * origin so that a NAD created a moment ago is found.
   */
  lookup(namespace: string, name: string): Promise<NadLookup>;
  /** All cached NADs (for tools, metrics and tests). */
  list(): Nad[];
  /**
   * The cluster source only: hands the raw objects of its list/watch to an observer (the
   * background audit judges them), since the cache keeps parsed entries only. Before start().
   */
  observe?(observer: ListWatchHandler): void;
}
