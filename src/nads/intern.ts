// Sharing identical parts of cache entries: clusters hold thousands of NADs built from a
// handful of shapes (same plugins, same capabilities, same namespaces), and one shared frozen
// instance per shape keeps 10,000 NADs in a few MB. Bounded, so odd inputs cannot grow it forever.
import type { CniSummary } from './types.js';

const MAX_ENTRIES = 10_000;

/**
 * Which values a full interner keeps: `first`, the first `max` for good (NAD shapes and
 * namespaces: few and stable, and a lookup costs one map probe); `recent`, those used lately (the
 * live pods' controllers and annotations, which churn with rollouts): two generations of at most
 * `max / 2` each, the current one and the one before, and a value found only in the older one
 * moves up. A value unused for a whole generation is dropped, so churn cannot grow it; one map
 * entry per value, half what an LRU list costs.
 */
export type Eviction = 'first' | 'recent';

export class Interner<T> {
  #young = new Map<string, T>();
  #old = new Map<string, T>();
  readonly #max: number;
  readonly #eviction: Eviction;

  constructor(max = MAX_ENTRIES, eviction: Eviction = 'first') {
    if (!Number.isInteger(max) || max < 2) throw new RangeError(`interner size ${max}: an integer of at least 2`);
    this.#max = max;
    this.#eviction = eviction;
  }

  get(key: string, make: () => T): T {
    const hit = this.#young.get(key);
    if (hit !== undefined) return hit;
    if (this.#eviction === 'first') {
      const value = make();
      if (this.#young.size < this.#max) this.#young.set(key, value);
      return value;
    }
    const older = this.#old.get(key);
    const value = older !== undefined ? older : make();
    if (this.#young.size >= this.#max >> 1) {
      this.#old = this.#young;
      this.#young = new Map();
    }
    this.#young.set(key, value);
    return value;
  }

  /** Values held (at most `max`). */
  get size(): number {
    return this.#young.size + this.#old.size;
  }
}

const strings = new Interner<string>();
const summaries = new Interner<CniSummary>();
const lists = new Interner<string[]>();

export const EMPTY_LIST: string[] = Object.freeze([]) as unknown as string[];
export const EMPTY_SELECTOR: Record<string, string> = Object.freeze({}) as Record<string, string>;

/**
 * A copy of `s` that does not keep its source alive: V8 makes substrings (YAML and JSON values)
 * views into the whole parsed text, so a cached uid could otherwise pin a whole manifest file.
 */
export const detach = (s: string): string => (s.length < 13 ? s : (JSON.parse(JSON.stringify(s)) as string));

/** One copy of a frequent string (namespaces); also detaches it from a larger parsed text. */
export const internString = (s: string): string => strings.get(s, () => s);

/** One frozen array per distinct list (resource names). */
export const internList = (items: string[]): string[] =>
  items.length === 0 ? EMPTY_LIST : lists.get(JSON.stringify(items), () => Object.freeze([...items]) as unknown as string[]);

/** One frozen summary per distinct (cniVersion, plugins with their capabilities and IPAM). */
export function internSummary(s: CniSummary): CniSummary {
  const caps = [...s.capabilities].sort();
  const key = JSON.stringify([s.cniVersion ?? null, s.plugins, caps]);
  return summaries.get(key, () => {
    const summary: CniSummary = {
      pluginTypes: Object.freeze([...s.pluginTypes]) as unknown as string[],
      capabilities: new Set(caps),
      plugins: Object.freeze(s.plugins.map((p) => Object.freeze(p))),
    };
    if (s.cniVersion !== undefined) summary.cniVersion = s.cniVersion;
    return Object.freeze(summary);
  });
}
