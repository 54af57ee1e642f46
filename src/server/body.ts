// Request bodies under a budget. The only real client, the kube-apiserver, sends a whole body at
// once; anyone else on the pod network can reach the port too (no client CA by default). So:
// - a JSON body must keep within a nesting depth and a number of objects and arrays, checked by
//   one cheap pass over the text before JSON.parse (V8's parser takes seconds and hundreds of MB
//   on 2,000,000 nested `[`, and a 4 MB body of `[],` makes 1.3 million arrays);
// - the bytes of bodies still arriving are counted across all connections: past the budget the
//   connection with the oldest unfinished body is cut, so clients that send most of a body and
//   then wait cannot pin the memory, while a body that arrives at once always fits.

/** Deeper than any Kubernetes object an admission webhook is sent (a CronJob's pod template with its managedFields is about 25 levels). */
export const MAX_BODY_DEPTH = 128;
/** Objects and arrays in one body: at most one per 8 bytes of the body limit (512 Ki for 4 MiB; a real pod has one per 40 bytes or more). */
export const containersFor = (bodyLimit: number): number => Math.floor(bodyLimit / 8);
/**
 * Bytes of unfinished bodies held at once, over all connections: 8 maximal bodies. The apiserver
 * sends each body at once, so its bodies are unfinished only for the milliseconds they take to
 * arrive; 32 MiB keeps 60 stalled 4 MiB bodies under 250 MB of RSS with the heap cap.
 */
export const DEFAULT_INFLIGHT_BODY_BYTES = 32 * 1024 * 1024;

export { jsonShapeProblem, type ShapeLimits } from '../json/index.js';

/** One body being received; `cut` closes its connection. */
export interface Arrival {
  bytes: number;
  cut: () => void;
}

/**
 * The bytes of bodies still arriving, over all connections. `add` makes room by cutting the
 * oldest unfinished bodies other than the caller's; false if even that cannot make room.
 */
export class InflightBodies {
  private readonly arrivals = new Set<Arrival>();
  private total = 0;
  /** Bodies cut to make room, for the metric. */
  evicted = 0;

  constructor(readonly budget: number) {}

  get bytes(): number {
    return this.total;
  }

  start(cut: () => void): Arrival {
    const a: Arrival = { bytes: 0, cut };
    this.arrivals.add(a);
    return a;
  }

  add(a: Arrival, n: number): boolean {
    a.bytes += n;
    this.total += n;
    // A Set iterates in insertion order: the oldest arrival first.
    for (const other of this.arrivals) {
      if (this.total <= this.budget) break;
      if (other === a) continue;
      this.end(other);
      this.evicted++;
      other.cut();
    }
    return this.total <= this.budget;
  }

  end(a: Arrival): void {
    if (!this.arrivals.delete(a)) return;
    this.total -= a.bytes;
  }
}
