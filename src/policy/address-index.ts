// The uniqueness index: which live pods (from the pod watch) and which pods being admitted
// (reservations) hold each hardware address. Keyed by kind and canonical value; each holder
// records the network it uses the address on, so one index answers both scopes (Network,
// Cluster). Compact on purpose: one small holder object per address a pod holds, no pod objects.
import type { AddressClaim, AddressKind, AddressReservations } from './types.js';

export interface PodRef {
  namespace: string;
  name?: string;
  generateName?: string;
  uid?: string;
}

/** One address a live pod holds on one network (`ns/name`). */
export interface PodAddress {
  kind: AddressKind;
  value: string;
  network: string;
}

export interface Holder {
  /** `ns/name`, or `ns/<generateName>*` for a reservation made before the name was known. */
  pod: string;
  uid?: string;
  /** `ns/name` of the network, or `*` when unknown (a claim with scope `cluster`). */
  network: string;
  /** Reservations only: when it lapses unless the watch sees the pod first (ms since epoch). */
  expires?: number;
}

export interface AddressIndexOptions {
  /** How long a reservation holds without the watch confirming the pod (default 45 s). */
  reservationTtlMs?: number;
  now?: () => number;
}

const kindCode = (k: AddressKind): string => (k === 'mac' ? 'm' : 'g');
const entryKey = (kind: AddressKind, value: string): string => kindCode(kind) + value;
export const podKey = (ref: PodRef): string => (ref.name ? `${ref.namespace}/${ref.name}` : `${ref.namespace}/${ref.generateName ?? ''}*`);

const isSelf = (h: Holder, self: PodRef): boolean => (!!self.uid && h.uid === self.uid) || (!!self.name && h.pod === `${self.namespace}/${self.name}`);

export class AddressIndex implements AddressReservations {
  private readonly live = new Map<string, Holder | Holder[]>();
  /** pod key -> entry keys it holds, for release. */
  private readonly pods = new Map<string, string | string[]>();
  private readonly reservations = new Map<string, Holder[]>();
  private readonly ttl: number;
  private readonly now: () => number;
  private marked: Set<string> | undefined;

  constructor(options: AddressIndexOptions = {}) {
    this.ttl = options.reservationTtlMs ?? 45_000;
    this.now = options.now ?? Date.now;
  }

  /** Sets what a live pod holds (replacing what it held) and confirms its reservations. */
  setPod(ref: { namespace: string; name: string; uid?: string }, addresses: readonly PodAddress[]): void {
    const key = podKey(ref);
    this.marked?.add(key);
    this.removePodKey(key);
    this.confirm(key, ref.uid);
    if (addresses.length === 0) return;
    const keys: string[] = [];
    for (const a of addresses) {
      const k = entryKey(a.kind, a.value);
      const holder: Holder = ref.uid ? { pod: key, uid: ref.uid, network: a.network } : { pod: key, network: a.network };
      const cur = this.live.get(k);
      if (cur === undefined) this.live.set(k, holder);
      else if (Array.isArray(cur)) cur.push(holder);
      else this.live.set(k, [cur, holder]);
      keys.push(k);
    }
    this.pods.set(key, keys.length === 1 ? keys[0]! : keys);
  }

  removePod(namespace: string, name: string): void {
    this.removePodKey(`${namespace}/${name}`);
  }

  /** Starts a full resync (relist): pods not set again before `endResync` are removed. */
  beginResync(): void {
    this.marked = new Set();
  }

  endResync(): void {
    const seen = this.marked;
    this.marked = undefined;
    if (!seen) return;
    for (const key of [...this.pods.keys()]) if (!seen.has(key)) this.removePodKey(key);
  }

  reserve(claims: readonly AddressClaim[]): void {
    const expires = this.now() + this.ttl;
    for (const c of claims) {
      const k = entryKey(c.kind, c.value);
      const holder: Holder = { pod: podKey(c.pod), network: c.scope.startsWith('network:') ? c.scope.slice(8) : '*', expires };
      if (c.pod.uid) holder.uid = c.pod.uid;
      const list = this.reservations.get(k);
      if (list) list.push(holder);
      else this.reservations.set(k, [holder]);
    }
  }

  /**
   * Holders of `value` other than `self`: on the same network (scope Network) or anywhere
   * (Cluster). Live holders first, then unexpired reservations.
   */
  conflicts(kind: AddressKind, value: string, network: string, scope: 'Network' | 'Cluster', self: PodRef): Holder[] {
    const k = entryKey(kind, value);
    const out: Holder[] = [];
    const consider = (h: Holder): void => {
      if (isSelf(h, self)) return;
      if (scope === 'Cluster' || h.network === network || h.network === '*' || network === '*') out.push(h);
    };
    const cur = this.live.get(k);
    if (Array.isArray(cur)) cur.forEach(consider);
    else if (cur) consider(cur);
    const pending = this.reservations.get(k);
    if (pending) {
      const now = this.now();
      const alive = pending.filter((h) => h.expires! > now);
      if (alive.length === 0) this.reservations.delete(k);
      else if (alive.length !== pending.length) this.reservations.set(k, alive);
      alive.forEach(consider);
    }
    return out;
  }

  /** Drops expired reservations (the server may call this periodically; lookups also do). */
  sweep(): void {
    const now = this.now();
    for (const [k, list] of this.reservations) {
      const alive = list.filter((h) => h.expires! > now);
      if (alive.length === 0) this.reservations.delete(k);
      else if (alive.length !== list.length) this.reservations.set(k, alive);
    }
  }

  stats(): { pods: number; addresses: number; reservations: number } {
    let reservations = 0;
    for (const list of this.reservations.values()) reservations += list.length;
    return { pods: this.pods.size, addresses: this.live.size, reservations };
  }

  private confirm(key: string, uid: string | undefined): void {
    if (this.reservations.size === 0) return;
    for (const [k, list] of this.reservations) {
      const rest = list.filter((h) => !(h.pod === key || (uid && h.uid === uid)));
      if (rest.length === 0) this.reservations.delete(k);
      else if (rest.length !== list.length) this.reservations.set(k, rest);
    }
  }

  private removePodKey(key: string): void {
    const held = this.pods.get(key);
    if (held === undefined) return;
    this.pods.delete(key);
    for (const k of Array.isArray(held) ? held : [held]) {
      const cur = this.live.get(k);
      if (cur === undefined) continue;
      if (!Array.isArray(cur)) {
        if (cur.pod === key) this.live.delete(k);
        continue;
      }
      const rest = cur.filter((h) => h.pod !== key);
      if (rest.length === 0) this.live.delete(k);
      else this.live.set(k, rest.length === 1 ? rest[0]! : rest);
    }
  }
}
