// The networks a pod (or pod template) asks for: both annotations, parsed, with their field paths.
import { LRUCache } from 'lru-cache';
import {
  gatewayConflicts,
  parseDefaultNetwork,
  parseNetworks,
  DEFAULT_NETWORK_ANNOTATION,
  NETWORKS_ANNOTATION,
  type ParsedNetwork,
} from '../annotation/index.js';
import { key, type FieldError } from '../field/index.js';
import { readAnnotations, type JsonObject, type PodLocation } from './object.js';
import type { AdmissionConfig } from './types.js';

export const NETWORK_ANNOTATIONS = [NETWORKS_ANNOTATION, DEFAULT_NETWORK_ANNOTATION] as const;

/**
 * The parsed annotations of a pod. Shared between reads and between requests (see the cache
 * below), so read-only; nothing downstream writes into a selection either (only the parser builds
 * them). Not frozen at run time: freezing cost 40 µs per review on the HTTPS path (frozen maps
 * made the readers' property accesses polymorphic).
 */
export interface PodNetworks {
  /** Secondary networks first, then the default network (if the annotation names one). */
  readonly networks: readonly ParsedNetwork[];
  readonly errors: readonly FieldError[];
  readonly warnings: readonly FieldError[];
  /** Field path of the networks annotation. */
  readonly annotationPath: string;
  /** Raw annotation values as sent (absent keys missing). */
  readonly raw: ReadonlyMap<string, string>;
}

/**
 * The networks whose NAD reference is well-formed: looking up a name the parser already rejected
 * would only add a "not found" to the real error.
 */
export function resolvable(nets: PodNetworks): ParsedNetwork[] {
  if (nets.errors.length === 0) return nets.networks.slice(); // the common case, called per stage
  const bad = new Set(nets.errors.map((e) => e.path));
  return nets.networks.filter((n) => !bad.has(n.path) && !bad.has(`${n.path}.name`) && !bad.has(`${n.path}.namespace`));
}

export const annotationPath = (loc: PodLocation, annotation: string): string => key(`${loc.metadataPath}.annotations`, annotation);

// Every pod a controller creates from one template carries the same annotation text, and plan()
// and review() of one request read it twice. So parsed annotations are kept, keyed by everything
// the result depends on (the raw values, the path, the namespaces):
// - the last one read, which serves the second read of a request;
// - texts seen at least twice recently, in a bounded LRU. A text seen once is not kept: traffic of
//   all-distinct annotations (a MAC per pod) would only churn the cache and load the GC; a small
//   table of hashes of recent texts (fixed memory) tells the second sighting.
// Results are shared: read-only.
const MAX_CACHED_TEXT = 4096;
/** The cache's budget: what its entries may hold in all, as estimated by `parsedSize`. */
export const PARSED_CACHE_BYTES = 8 * 1024 * 1024;
/**
 * Estimated heap of a parsed annotation: its text (the key, UTF-16) plus each selection, error and
 * warning (measured ~190 B each). Counting the text alone let `a,a,...` (2 KB of text, 1,000
 * selections, ~190 KB parsed) fill the 8 MB budget with ~180 MB: past the Deployment's heap cap.
 */
export const parsedSize = (value: PodNetworks, cacheKey: string): number =>
  2 * cacheKey.length + 512 + 256 * (value.networks.length + value.errors.length + value.warnings.length);
const parsedCache = new LRUCache<string, PodNetworks>({
  max: 4096,
  maxSize: PARSED_CACHE_BYTES,
  sizeCalculation: parsedSize,
});
const seenOnce = new Int32Array(4096);
let last: { key: string; value: PodNetworks } | undefined;

/** A key that no two different inputs share: every part is length-prefixed. */
const cacheKey = (parts: ReadonlyArray<string | undefined>): string => {
  let out = '';
  for (const p of parts) out += p === undefined ? '-|' : `${p.length}:${p}|`;
  return out;
};

/** FNV-1a over UTF-16 code units; 0 is kept for "empty slot". */
function hashOf(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return h === 0 ? 1 : h;
}

/** True when `key` was offered before (recently, modulo hash collisions, which only cost a cache slot). */
function seenBefore(key: string): boolean {
  const h = hashOf(key);
  const slot = (h >>> 0) % seenOnce.length;
  if (seenOnce[slot] === h) return true;
  seenOnce[slot] = h;
  return false;
}

export function readPodNetworks(pod: JsonObject | undefined, loc: PodLocation, namespace: string, config: AdmissionConfig): PodNetworks {
  const annotations = readAnnotations(pod, loc.metadataPath, NETWORK_ANNOTATIONS);
  // Malformed metadata is rare and its errors point into this object: never kept.
  if (annotations.errors.length > 0) return parsePodNetworks(annotations, loc, namespace, config);
  const networks = annotations.values.get(NETWORKS_ANNOTATION);
  const defaultNetwork = annotations.values.get(DEFAULT_NETWORK_ANNOTATION);
  const k = cacheKey([loc.metadataPath, namespace, config.defaultNetworkNamespace, networks, defaultNetwork]);
  if (last?.key === k) return last.value;
  const cacheable = k.length <= MAX_CACHED_TEXT;
  const hit = cacheable ? parsedCache.get(k) : undefined;
  const value = hit ?? parsePodNetworks(annotations, loc, namespace, config);
  if (!hit && cacheable && seenBefore(k)) parsedCache.set(k, value);
  last = { key: k, value };
  return value;
}

function parsePodNetworks(
  { values, errors }: ReturnType<typeof readAnnotations>,
  loc: PodLocation,
  namespace: string,
  config: AdmissionConfig,
): PodNetworks {
  const networksPath = annotationPath(loc, NETWORKS_ANNOTATION);
  const out = { networks: [] as ParsedNetwork[], errors, warnings: [] as FieldError[], annotationPath: networksPath, raw: values };
  const networks = values.get(NETWORKS_ANNOTATION);
  if (networks !== undefined) {
    const r = parseNetworks(networks, { namespace, path: networksPath });
    out.networks.push(...r.networks);
    out.errors.push(...r.errors);
    out.warnings.push(...r.warnings);
  }
  const defaultNetwork = values.get(DEFAULT_NETWORK_ANNOTATION);
  if (defaultNetwork !== undefined) {
    const r = parseDefaultNetwork(defaultNetwork, {
      defaultNamespace: config.defaultNetworkNamespace,
      path: annotationPath(loc, DEFAULT_NETWORK_ANNOTATION),
    });
    // Multus counts default-route gateways over both annotations.
    out.errors.push(...gatewayConflicts(out.networks, r.networks));
    out.networks.push(...r.networks);
    out.errors.push(...r.errors);
    out.warnings.push(...r.warnings);
  }
  return out;
}
