// The near-cap signal: how full V8's heap is against its cap (--max-old-space-size, the
// Deployment's NODE_OPTIONS). Past HEAP_DEGRADED_RATIO the replica says so in its readiness detail
// and in netattach_heap_used_ratio, and the NetattachHeapNearCap alert fires: the sizing (the
// chart's nodeOptions and resources, docs/performance.md "Sizing") is too small for the cluster. Readiness does
// not fail on it: every replica watches the same pods and nears its cap at about the same time, so
// failing readiness would remove all endpoints at once, and behind failurePolicy Fail that is an
// outage of every pod create, before the heap itself fails anything.
import { getHeapStatistics } from 'node:v8';

/** Past this share of the heap cap a replica reports itself degraded. */
export const HEAP_DEGRADED_RATIO = 0.8;

export interface HeapUse {
  /** Bytes of live and not yet collected objects (v8 used_heap_size). */
  used: number;
  /** The cap (v8 heap_size_limit: --max-old-space-size plus the young generation). */
  limit: number;
}

export const heapUse = (): HeapUse => {
  const s = getHeapStatistics();
  return { used: s.used_heap_size, limit: s.heap_size_limit };
};

export const heapRatio = (h: HeapUse): number => (h.limit > 0 ? h.used / h.limit : 0);

const mib = (bytes: number): number => Math.round(bytes / 2 ** 20);

/**
 * The readiness check: true below `threshold`, else degraded with the figures (a replica that
 * keeps answering, but is told apart in `/readyz?verbose` and the JSON detail).
 */
export function heapCheck(use: () => HeapUse = heapUse, threshold = HEAP_DEGRADED_RATIO): () => true | { degraded: string } {
  return () => {
    const h = use();
    const ratio = heapRatio(h);
    if (ratio < threshold) return true;
    return {
      degraded: `heap at ${Math.round(ratio * 100)} % of its cap (${mib(h.used)} of ${mib(h.limit)} MiB; degraded from ${Math.round(threshold * 100)} %): raise the memory sizing (--max-old-space-size with the memory limit, docs/performance.md "Sizing") before the replica runs out`,
    };
  };
}
