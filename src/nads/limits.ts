// Bounds on the NAD lookups a review can cause (the GETs on a cache miss, and what is remembered
// of them). One place, so the pipeline, the cluster source and docs/security.md name the same
// numbers.

/**
 * Distinct NADs missing from the cache that one review looks up. A pod names a handful of
 * networks (a KubeVirt VM one per interface, a DPDK pod a few VFs), and its NADs exist before it,
 * so they are in the cache: a miss is a NAD created within the watch's latency of the pod. 32 is
 * far above that and bounds a forged review naming 1,000 absent NADs to 32 GETs. The NADs past it
 * are not looked up: answered as unavailable (a Pod CREATE is denied with 503, retryable).
 */
export const MAX_NAD_FETCHES_PER_REVIEW = 32;

/** GETs one review has in flight at once: a real pod's few misses still go in one round trip or two. */
export const NAD_FETCHES_IN_PARALLEL_PER_REVIEW = 4;

/**
 * GETs of NADs the cluster source has in flight at once, all reviews together: the API server
 * is shared, and a burst of misses should queue here rather than there.
 */
export const MAX_NAD_GETS_IN_FLIGHT = 16;

/**
 * Lookups waiting for one of those slots. Each waits at most the lookup deadline (1 s); past this
 * many waiting, a lookup is answered unavailable at once (no GET, no queue growth).
 */
export const MAX_NAD_GETS_WAITING = 256;

/**
 * How long a NAD the API server said is absent is answered `not-found` without a new GET, and how
 * many such names are remembered (least recently used dropped first). Short: a NAD created after
 * the GET is normally put in the cache by the watch within milliseconds, which forgets the name at
 * once; only a watch delayed by more than this could hide it, and then for at most this long. Not
 * used while the watch is failing.
 */
export const MISSING_NAD_MEMORY_MS = 3_000;
export const MAX_MISSING_NADS_REMEMBERED = 1_024;

/**
 * Characters of one cached NAD entry (its names, resource names, node selector, problems and the
 * summary of its CNI chain, as JSON). A real entry is a few hundred; the apiserver allows a NAD of
 * 1.5 MiB, whose config can be a chain of 20,000 plugins (~4 MB summarized), and a tenant can make
 * many. An entry past this is not cached: each review that names the NAD reads it with a GET
 * (bounded as every lookup above) and judges it in full, then drops it. Judged on demand, never
 * left unjudged.
 */
export const MAX_CACHED_NAD_CHARS = 64 * 1024;

/** The size of a NAD entry as `MAX_CACHED_NAD_CHARS` counts it. */
export function cachedNadChars(nad: object): number {
  return JSON.stringify(nad, (_k, v: unknown) => (v instanceof Set ? [...(v as Set<unknown>)] : v)).length;
}
