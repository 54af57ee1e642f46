// Request bodies under a budget. The only real client, the kube-apiserver, sends a whole body at
// once; anyone else on the pod network can reach the port too (no client CA by default). So:
// - a JSON body must keep within a nesting depth and a number of objects and arrays, checked by
//   one cheap pass over the text before JSON.parse (V8's parser takes seconds and hundreds of MB
//   on 2,000,000 nested `[`, and a 4 MB body of `[],` makes 1.3 million arrays);
// - the bytes of bodies still arriving, and of answers not yet read, are counted across all
//   connections: past the budget the connection holding the oldest is cut, so clients that send
//   most of a body and then wait, or never read what they asked for, cannot pin the memory, while
//   a body that arrives at once (an answer read at once) always fits.

/** Deeper than any Kubernetes object an admission webhook is sent (a CronJob's pod template with its managedFields is about 25 levels). */
export const MAX_BODY_DEPTH = 128;
/** Objects and arrays in one body: at most one per 8 bytes of the body limit (512 Ki for 4 MiB; a real pod has one per 40 bytes or more). */
export const containersFor = (bodyLimit: number): number => Math.floor(bodyLimit / 8);
/**
 * Bytes held for clients at once, over all connections: bodies still arriving and answers the
 * client has not read yet; 8 maximal bodies. The apiserver sends each body at once and reads each
 * answer as it comes, so its bytes are held only for the milliseconds they take to cross; 32 MiB
 * keeps 60 stalled 4 MiB bodies under 250 MB of RSS with the heap cap, and 30 clients that never
 * read their answers used to hold 10.7 MB each until the heap died in `Writev`.
 */
export const DEFAULT_INFLIGHT_BYTES = 32 * 1024 * 1024;
/**
 * An answer the client has not taken within this is dropped with its connection. The apiserver
 * reads an answer (a few KiB at most) as it arrives and gives up on a webhook after 30 s.
 */
export const DEFAULT_ANSWER_DRAIN_MS = 10_000;

export { jsonShapeProblem, type ShapeLimits } from '../json/index.js';

/** Bytes held for one client: a body being received, or an answer not yet taken; `cut` closes its connection. */
export interface Held {
  bytes: number;
  cut: () => void;
}

/**
 * The bytes held for clients, over all connections. `add` makes room by cutting the oldest holders
 * other than the caller (an unfinished body, or an answer waiting longest for its reader); false if
 * even that cannot make room.
 */
export class InflightBytes {
  private readonly held = new Set<Held>();
  private total = 0;
  /** Holders cut to make room, for the metric. */
  evicted = 0;

  constructor(readonly budget: number) {}

  get bytes(): number {
    return this.total;
  }

  start(cut: () => void): Held {
    const h: Held = { bytes: 0, cut };
    this.held.add(h);
    return h;
  }

  /** Counts a holder of the caller's own (its bytes from now on, 0 if new). */
  hold(h: Held): void {
    this.held.add(h);
    this.total += h.bytes;
  }

  add(h: Held, n: number): boolean {
    h.bytes += n;
    this.total += n;
    // A Set iterates in insertion order: the oldest holder first.
    for (const other of this.held) {
      if (this.total <= this.budget) break;
      if (other === h) continue;
      this.end(other);
      this.evicted++;
      other.cut();
    }
    return this.total <= this.budget;
  }

  end(h: Held): void {
    if (!this.held.delete(h)) return;
    this.total -= h.bytes;
  }
}
