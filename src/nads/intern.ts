// Sharing identical parts of cache entries: clusters hold thousands of NADs built from a
// handful of shapes (same plugins, same capabilities, same namespaces), and one shared frozen
// instance per shape keeps 10,000 NADs in a few MB. Bounded, so odd inputs cannot grow it forever.
import type { CniSummary } from './types.js';

const MAX_ENTRIES = 10_000;

class Interner<T> {
  readonly #values = new Map<string, T>();
  get(key: string, make: () => T): T {
    const hit = this.#values.get(key);
    if (hit !== undefined) return hit;
    const value = make();
    if (this.#values.size < MAX_ENTRIES) this.#values.set(key, value);
    return value;
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
