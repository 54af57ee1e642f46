// Which live pods use which NAD, from the pod watch (the networks annotation): the warning on a
// NAD DELETE names them. Compact like the address index: one interned key per NAD, one
// `ns/name` string per pod shared by both directions, no pod objects.
export interface NadUsageStats {
  pods: number;
  nads: number;
}

interface NadEntry {
  /** The interned `ns/name` of the NAD. */
  key: string;
  pods: Set<string>;
}

/** Does a pod's entry (`byPod`) hold exactly these NAD keys, in this order? */
const sameKeys = (held: string | string[] | undefined, keys: readonly string[]): boolean =>
  held === undefined
    ? false
    : typeof held === 'string'
      ? keys.length === 1 && keys[0] === held
      : held.length === keys.length && held.every((k, i) => k === keys[i]);

export class NadUsage {
  /** Pod `ns/name` -> the NAD key(s) it uses (a string when one, the usual case). */
  private readonly byPod = new Map<string, string | string[]>();
  private readonly byNad = new Map<string, NadEntry>();
  private seen: Set<string> | undefined;

  /** Sets the NADs (`ns/name`, duplicates allowed) a live pod uses, replacing what it used. */
  setPod(namespace: string, name: string, nads: readonly string[]): void {
    const pod = `${namespace}/${name}`;
    this.seen?.add(pod);
    const unique = [...new Set(nads)];
    // A pod's MODIFIED events (status changes) mostly repeat its NADs: nothing to do.
    if (sameKeys(this.byPod.get(pod), unique)) return;
    this.removeKey(pod);
    if (unique.length === 0) return;
    const keys = unique.map((nad) => {
      let entry = this.byNad.get(nad);
      if (!entry) this.byNad.set(nad, (entry = { key: nad, pods: new Set() }));
      entry.pods.add(pod);
      return entry.key;
    });
    this.byPod.set(pod, keys.length === 1 ? keys[0]! : keys);
  }

  removePod(namespace: string, name: string): void {
    this.removeKey(`${namespace}/${name}`);
  }

  /** Pods (`ns/name`, sorted) using the NAD. */
  podsUsing(namespace: string, name: string): string[] {
    const entry = this.byNad.get(`${namespace}/${name}`);
    return entry ? [...entry.pods].sort() : [];
  }

  /** A relist starts: pods not set again before `endResync` are removed. */
  beginResync(): void {
    this.seen = new Set();
  }

  endResync(): void {
    const seen = this.seen;
    this.seen = undefined;
    if (!seen) return;
    const stale = [...this.byPod.keys()].filter((pod) => !seen.has(pod));
    for (const pod of stale) this.removeKey(pod);
  }

  stats(): NadUsageStats {
    return { pods: this.byPod.size, nads: this.byNad.size };
  }

  private removeKey(pod: string): void {
    const held = this.byPod.get(pod);
    if (held === undefined) return;
    this.byPod.delete(pod);
    for (const nad of Array.isArray(held) ? held : [held]) {
      const entry = this.byNad.get(nad);
      if (!entry) continue;
      entry.pods.delete(pod);
      if (entry.pods.size === 0) this.byNad.delete(nad);
    }
  }
}
