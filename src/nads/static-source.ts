// An in-memory NAD source: tests, and `netattach check` on files without a cluster.
import { nadFromObject, type NadFromObjectOptions } from './model.js';
import { nadKey, type Nad, type NadLookup, type NadSource } from './types.js';

const isNad = (v: unknown): v is Nad =>
  typeof v === 'object' && v !== null && Array.isArray((v as Nad).problems) && Array.isArray((v as Nad).resourceNames);

export class StaticNadSource implements NadSource {
  readonly kind = 'static' as const;
  readonly #nads = new Map<string, Nad>();

  /** Takes cache entries, or NAD objects (turned into entries with nadFromObject). */
  constructor(nads: ReadonlyArray<Nad | unknown> = [], options: NadFromObjectOptions = {}) {
    for (const n of nads) this.put(isNad(n) ? n : nadFromObject(n, options));
  }

  put(nad: Nad): void {
    this.#nads.set(nadKey(nad.namespace, nad.name), nad);
  }

  remove(namespace: string, name: string): boolean {
    return this.#nads.delete(nadKey(namespace, name));
  }

  async start(): Promise<void> {}
  async stop(): Promise<void> {}
  synced(): boolean {
    return true;
  }
  size(): number {
    return this.#nads.size;
  }
  get(namespace: string, name: string): Nad | undefined {
    return this.#nads.get(nadKey(namespace, name));
  }
  async lookup(namespace: string, name: string): Promise<NadLookup> {
    const nad = this.get(namespace, name);
    return nad ? { status: 'found', nad } : { status: 'not-found' };
  }
  list(): Nad[] {
    return [...this.#nads.values()];
  }
}
