// Copy-on-write access to a pod for the mutators (see mutate.ts).
import { isObject, type JsonObject } from './object.js';

const shallow = (v: unknown): unknown => (isObject(v) ? { ...v } : v);

/**
 * Copy-on-write access to a pod for the mutators. `pod` reads like the pod with the writes made
 * so far; a mutator writes only into what `spec()` and `container(i)` return, which are copies
 * made on first use. The original is never modified.
 */
export class PodDraft {
  /** The pod as mutated so far: a shallow copy of the original's top level. */
  readonly pod: JsonObject;
  private specCopy: JsonObject | undefined;
  private readonly owned = new Set<number>();

  constructor(readonly original: JsonObject) {
    this.pod = { ...original };
  }

  /** True once a mutator asked for something writable. */
  get changed(): boolean {
    return this.specCopy !== undefined;
  }

  /** The spec, writable; undefined when the pod has no spec object. */
  spec(): JsonObject | undefined {
    if (this.specCopy) return this.specCopy;
    const spec = this.pod['spec'];
    if (!isObject(spec)) return undefined;
    const copy: JsonObject = { ...spec };
    if (Array.isArray(spec['containers'])) copy['containers'] = [...spec['containers']];
    this.pod['spec'] = this.specCopy = copy;
    return copy;
  }

  /**
   * Container `i` (which must be an object in `spec.containers`), writable: its own keys, and the
   * keys of its `resources`, `resources.requests` and `resources.limits`.
   */
  container(i: number): JsonObject {
    const containers = this.spec()?.['containers'];
    if (!Array.isArray(containers) || !isObject(containers[i])) throw new Error(`no container ${i} to write`);
    if (!this.owned.has(i)) {
      const c: JsonObject = { ...containers[i] };
      const r = c['resources'];
      if (isObject(r)) {
        const rc: JsonObject = { ...r };
        if (Object.hasOwn(r, 'requests')) rc['requests'] = shallow(r['requests']);
        if (Object.hasOwn(r, 'limits')) rc['limits'] = shallow(r['limits']);
        c['resources'] = rc;
      }
      containers[i] = c;
      this.owned.add(i);
    }
    return containers[i] as JsonObject;
  }
}
