// Which live pods use which NAD, from the pod watch (the networks annotation): the warning on a
// NAD DELETE names them. Compact like the address index: no `ns/name` string per pod (a pod is its
// interned namespace and the name string the watch's object already holds), one interned key
// per NAD, no pod objects. At 150,000 pods this is a map entry per pod in each direction.
import { internString } from '../nads/intern.js';

export interface NadUsageStats {
  pods: number;
  nads: number;
}

/** The NAD key(s) (`ns/name`, interned) a pod uses: a string when one, the usual case. */
type Used = string | string[];

interface NadUsers {
  /** The key every pod using the NAD shares (not one concatenated string per pod). */
  key: string;
  pods: Map<string, Set<string>>;
}

/** Does a pod's entry (`byPod`) hold exactly these NAD keys, in this order? */
const sameKeys = (held: string | string[] | undefined, keys: readonly string[]): boolean =>
  held === undefined
    ? false
    : typeof held === 'string'
      ? keys.length === 1 && keys[0] === held
      : held.length === keys.length && held.every((k, i) => k === keys[i]);

export class NadUsage {
  /** Pod namespace -> pod name -> the NAD key(s) it uses. */
  private readonly byPod = new Map<string, Map<string, Used>>();
  /** NAD key -> its one copy of the key, and pod namespace -> names of the pods using it. */
  private readonly byNad = new Map<string, NadUsers>();
  private podCount = 0;
  /** During a relist: the pods set again (namespace -> names). */
  private seen: Map<string, Set<string>> | undefined;

  /** Sets the NADs (`ns/name`, duplicates allowed) a live pod uses, replacing what it used. */
  setPod(namespace: string, name: string, nads: readonly string[]): void {
    const ns = internString(namespace);
    if (this.seen) {
      const names = this.seen.get(ns);
      if (names) names.add(name);
      else this.seen.set(ns, new Set([name]));
    }
    const unique = [...new Set(nads)];
    // A pod's MODIFIED events (status changes) mostly repeat its NADs: nothing to do.
    if (sameKeys(this.byPod.get(ns)?.get(name), unique)) return;
    this.removePod(ns, name);
    if (unique.length === 0) return;
    const keys = unique.map((nad) => {
      let users = this.byNad.get(nad);
      if (!users) this.byNad.set(nad, (users = { key: nad, pods: new Map() }));
      const names = users.pods.get(ns);
      if (names) names.add(name);
      else users.pods.set(ns, new Set([name]));
      return users.key;
    });
    let byName = this.byPod.get(ns);
    if (!byName) this.byPod.set(ns, (byName = new Map()));
    byName.set(name, keys.length === 1 ? keys[0]! : keys);
    this.podCount++;
  }

  removePod(namespace: string, name: string): void {
    const byName = this.byPod.get(namespace);
    const held = byName?.get(name);
    if (held === undefined) return;
    byName!.delete(name);
    if (byName!.size === 0) this.byPod.delete(namespace);
    this.podCount--;
    for (const nad of Array.isArray(held) ? held : [held]) {
      const users = this.byNad.get(nad);
      const names = users?.pods.get(namespace);
      if (!names) continue;
      names.delete(name);
      if (names.size === 0) users!.pods.delete(namespace);
      if (users!.pods.size === 0) this.byNad.delete(nad);
    }
  }

  /** Pods (`ns/name`, sorted) using the NAD. */
  podsUsing(namespace: string, name: string): string[] {
    const users = this.byNad.get(`${namespace}/${name}`);
    if (!users) return [];
    const out: string[] = [];
    for (const [ns, names] of users.pods) for (const pod of names) out.push(`${ns}/${pod}`);
    return out.sort();
  }

  /** A relist starts: pods not set again before `endResync` are removed. */
  beginResync(): void {
    // The first list (nothing held yet) has nothing to drop: no set of every pod for it, the start's peak.
    this.seen = this.podCount > 0 ? new Map() : undefined;
  }

  endResync(): void {
    const seen = this.seen;
    this.seen = undefined;
    if (!seen) return;
    const stale: Array<[string, string]> = [];
    for (const [ns, byName] of this.byPod) for (const name of byName.keys()) if (!seen.get(ns)?.has(name)) stale.push([ns, name]);
    for (const [ns, name] of stale) this.removePod(ns, name);
  }

  stats(): NadUsageStats {
    return { pods: this.podCount, nads: this.byNad.size };
  }
}
