// What netattach knows of a NetworkAttachmentDefinition: only what admission needs,
// derived once when the NAD enters the cache, never on the request path.

export const RESOURCE_NAME_ANNOTATION = 'k8s.v1.cni.cncf.io/resourceName';
export const NODE_SELECTOR_ANNOTATION = 'k8s.v1.cni.cncf.io/nodeSelector';
/**
 * netattach's own NAD annotation: the ResourceClaimTemplate (looked up in the pod's namespace)
 * that serves this network's device through an explicit DRA claim instead of extended resources.
 */
export const CLAIM_TEMPLATE_ANNOTATION = 'netattach.io/resourceClaimTemplate';

/** Runtime-config keys a selection can request, and the CNI capability each needs. */
export type Capability = 'ips' | 'mac' | 'infinibandGUID' | 'portMappings' | 'bandwidth';

export interface CniSummary {
  /** `cniVersion` as written, if any. */
  cniVersion?: string;
  /** Plugin `type`s in chain order (one for a single config). */
  pluginTypes: string[];
  /** Union of capabilities declared `true` by any plugin of the chain. */
  capabilities: ReadonlySet<Capability | string>;
}

export interface Nad {
  namespace: string;
  name: string;
  uid?: string;
  resourceVersion?: string;
  /** Parsed from the resourceName annotation (comma-separated list), in order, trimmed. */
  resourceNames: string[];
  /** Parsed from the nodeSelector annotation (`k=v` or `k`, comma-separated). */
  nodeSelector: Record<string, string>;
  /** The ResourceClaimTemplate of the explicit-claim DRA path (CLAIM_TEMPLATE_ANNOTATION), if any. */
  claimTemplate?: string;
  /**
   * Summary of `spec.config`; `undefined` when the config is empty (read from the node,
   * so its capabilities are unknown and not checked) or unparseable.
   */
  cni?: CniSummary;
  /** Problems found in the NAD itself (bad config, bad annotations), for messages. */
  problems: string[];
}

export type NadLookup =
  | { status: 'found'; nad: Nad }
  | { status: 'not-found' }
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
}
