// Which live pods use which NAD, from the pod watch (the networks annotation): the warning on a
// NAD DELETE names them, and the background audit judges a NAD's pods again when it changes.
// Compact like the address index: no `ns/name` string per pod (a pod is its interned namespace
// and the name string the watch's object already holds), one interned key per NAD, no pod
// objects, and no map by pod: a pod is its name among the names of each NAD it uses, grouped by
// the pod's namespace, and what it uses is found among its namespace's NADs (a namespace's pods
// use a handful). At 150,000 pods that is one array slot (a set entry past SMALL pods of a
// namespace on one NAD) per pod and NAD, nothing else per pod.
import { internString } from '../nads/index.js';

export interface NadUsageStats {
  pods: number;
  nads: number;
}

/**
 * The names of one namespace's pods using one NAD (and the namespaces using one NAD): one name
 * as the string itself, up to SMALL in an array of exactly their number, more in a set. A set
 * costs ~33 B per name at the sizes a ReplicaSet's replicas have (20 names: a table for 32), an
 * exact array 8 B; an array is searched (a pod event looks its name up in its namespace's few
 * NADs), so only up to SMALL names.
 */
type Names = string | string[] | Set<string>;
const SMALL = 64;

const hasName = (names: Names | undefined, name: string): boolean =>
  names === undefined ? false : typeof names === 'string' ? names === name : Array.isArray(names) ? names.includes(name) : names.has(name);

/** `names` with `name` added (the same container when it is a set). */
function withName(names: Names | undefined, name: string): Names {
  if (names === undefined) return name;
  if (typeof names === 'string') return names === name ? names : [names, name];
  if (!Array.isArray(names)) return names.add(name);
  if (names.includes(name)) return names;
  // A copy of exactly the new length: a push would leave room for 16 more (V8's growth).
  return names.length < SMALL ? [...names, name] : new Set([...names, name]);
}

/** `names` without `name` (undefined when empty), or `names` itself when it does not hold it. */
function withoutName(names: Names, name: string): Names | undefined {
  if (typeof names === 'string') return names === name ? undefined : names;
  if (!Array.isArray(names)) {
    names.delete(name);
    return names.size === 0 ? undefined : names;
  }
  const at = names.indexOf(name);
  if (at < 0) return names;
  if (names.length === 2) return names[1 - at]!;
  const next = names.slice(0, -1);
  if (at < next.length) next[at] = names[names.length - 1]!;
  return next;
}

const listOf = (names: Names | undefined): Iterable<string> => (names === undefined ? [] : typeof names === 'string' ? [names] : names);

interface NadUsers {
  /** The key every namespace using the NAD shares (not one string per namespace). */
  key: string;
  /** Pod namespaces with pods using it (usually one: the NAD's own), held like names. */
  namespaces: Names;
}

export class NadUsage {
  /** Pod namespace -> NAD key -> names of the namespace's pods using it. */
  private readonly byNamespace = new Map<string, Map<string, Names>>();
  /** NAD key -> its one copy of the key, and the pod namespaces using it. */
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
    const unique = nads.length < 2 ? nads : [...new Set(nads)];
    const used = this.byNamespace.get(ns);
    // A pod's MODIFIED events (status changes) mostly repeat its NADs: nothing to do.
    if (used && this.usesExactly(used, name, unique)) return;
    const had = used !== undefined && this.drop(ns, used, name);
    if (unique.length === 0) {
      if (had) this.podCount--;
      return;
    }
    let mine = this.byNamespace.get(ns);
    if (!mine) this.byNamespace.set(ns, (mine = new Map()));
    for (const nad of unique) {
      let users = this.byNad.get(nad);
      if (!users) this.byNad.set(nad, (users = { key: nad, namespaces: ns }));
      else users.namespaces = withName(users.namespaces, ns);
      const names = mine.get(users.key);
      const next = withName(names, name);
      if (next !== names) mine.set(users.key, next);
    }
    if (!had) this.podCount++;
  }

  removePod(namespace: string, name: string): void {
    const used = this.byNamespace.get(namespace);
    if (used && this.drop(namespace, used, name)) this.podCount--;
  }

  /** Does the pod use exactly these (distinct) NADs? */
  private usesExactly(used: Map<string, Names>, name: string, nads: readonly string[]): boolean {
    if (nads.length === 0) return false;
    for (const nad of nads) if (!hasName(used.get(nad), name)) return false;
    if (used.size === nads.length) return true;
    let n = 0;
    for (const names of used.values()) if (hasName(names, name)) n++;
    return n === nads.length;
  }

  /** Takes the pod out of every NAD of its namespace; whether it used any. */
  private drop(namespace: string, used: Map<string, Names>, name: string): boolean {
    let had = false;
    for (const [nad, names] of used) {
      if (!hasName(names, name)) continue;
      had = true;
      const rest = withoutName(names, name);
      if (rest !== undefined) {
        if (rest !== names) used.set(nad, rest);
        continue;
      }
      used.delete(nad);
      const users = this.byNad.get(nad);
      if (!users) continue;
      const others = withoutName(users.namespaces, namespace);
      if (others === undefined) this.byNad.delete(nad);
      else users.namespaces = others;
    }
    if (used.size === 0) this.byNamespace.delete(namespace);
    return had;
  }

  /** Pods (`ns/name`, sorted) using the NAD. */
  podsUsing(namespace: string, name: string): string[] {
    const users = this.byNad.get(`${namespace}/${name}`);
    if (!users) return [];
    const out: string[] = [];
    for (const ns of listOf(users.namespaces)) for (const pod of listOf(this.byNamespace.get(ns)?.get(users.key))) out.push(`${ns}/${pod}`);
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
    for (const [ns, used] of this.byNamespace) {
      const listed = seen.get(ns);
      const gone = new Set<string>();
      for (const names of used.values()) for (const name of listOf(names)) if (!listed?.has(name)) gone.add(name);
      for (const name of gone) stale.push([ns, name]);
    }
    for (const [ns, name] of stale) this.removePod(ns, name);
  }

  stats(): NadUsageStats {
    return { pods: this.podCount, nads: this.byNad.size };
  }
}
