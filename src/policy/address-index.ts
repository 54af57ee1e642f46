// The uniqueness index: which live pods (from the pod watch) and which pods being admitted
// (reservations) hold each hardware address. One map per kind, keyed by the canonical value;
// each holder records the network it uses the address on, so one index answers both scopes
// (Network, Cluster). Compact on purpose (100,000 pods must stay well under 100 MB): no pod
// objects, no concatenated keys; namespaces and networks are interned.
import type { AddressClaim, AddressKind, AddressReservations } from './types.js';
import type { SharingOwner } from './owner.js';

export interface PodRef {
  namespace: string;
  name?: string;
  generateName?: string;
  uid?: string;
  /** An owner that moves its pods (a KubeVirt VMI): its pods hold their addresses as one. */
  owner?: SharingOwner;
}

/** One address a live pod holds on one network (`ns/name`). */
export interface PodAddress {
  kind: AddressKind;
  value: string;
  network: string;
}

/** A holder as reported to callers (built on demand, only for conflicts). */
export interface Holder {
  /** `ns/name`, or `ns/<generateName>*` for a reservation made before the name was known. */
  pod: string;
  uid?: string;
  /** `ns/name` of the network, or `*` when unknown (a claim with scope `cluster`). */
  network: string;
  /** Reservations only: when it lapses unless the watch sees the pod first (ms since epoch). */
  expires?: number;
  /** The owner the address is held for, when the pod has one that moves pods (`VM ns/name`). */
  owner?: SharingOwner;
}

export interface AddressIndexOptions {
  /** How long a reservation holds without the watch confirming the pod (default 45 s). */
  reservationTtlMs?: number;
  now?: () => number;
}

interface PodRecord {
  ns: string;
  name: string;
  /** Values held; the kind follows from the length (a GUID is 23 characters, a MAC 17 or 59). */
  held: string | string[];
  /** Resync generation that last saw the pod. */
  gen: number;
  owner?: SharingOwner;
  /** Its uid, for address claims held by one incarnation of a name (`heldBy`). */
  uid?: string;
}

interface LiveHolder {
  pod: PodRecord;
  network: string;
}

interface Reservation {
  pod: string;
  uid?: string;
  network: string;
  expires: number;
  owner?: SharingOwner;
}

const GUID_LENGTH = 23;
export const podKey = (ref: PodRef): string => (ref.name ? `${ref.namespace}/${ref.name}` : `${ref.namespace}/${ref.generateName ?? ''}*`);
/** A reservation of the pod `key` (named: `ns/name`) or of the pod with `uid`. */
const samePod = (r: Reservation, key: string, named: boolean, uid: string | undefined): boolean =>
  (named && r.pod === key) || (!!uid && r.uid === uid);
const reservationKey = (kind: AddressKind, value: string): string => `${kind === 'mac' ? 'm' : 'g'}${value}`;

export class AddressIndex implements AddressReservations {
  private readonly mac = new Map<string, LiveHolder | LiveHolder[]>();
  private readonly guid = new Map<string, LiveHolder | LiveHolder[]>();
  private readonly pods = new Map<string, Map<string, PodRecord>>();
  private readonly interned = new Map<string, string>();
  private readonly reservations = new Map<string, Reservation[]>();
  /** Live pods per sharing owner (key), for claims held by an owner. */
  private readonly ownerPods = new Map<string, number>();
  private readonly ttl: number;
  private readonly now: () => number;
  private gen = 0;
  private podCount = 0;

  constructor(options: AddressIndexOptions = {}) {
    this.ttl = options.reservationTtlMs ?? 45_000;
    this.now = options.now ?? Date.now;
  }

  /** Sets what a live pod holds (replacing what it held) and confirms its reservations. */
  setPod(ref: { namespace: string; name: string; uid?: string; owner?: SharingOwner }, addresses: readonly PodAddress[]): void {
    this.removePod(ref.namespace, ref.name);
    this.confirm(`${ref.namespace}/${ref.name}`, ref.uid);
    if (addresses.length === 0) return;
    const ns = this.intern(ref.namespace);
    const rec: PodRecord = { ns, name: ref.name, held: addresses.length === 1 ? addresses[0]!.value : addresses.map((a) => a.value), gen: this.gen };
    if (ref.uid) rec.uid = ref.uid;
    if (ref.owner) {
      rec.owner = ref.owner;
      this.ownerPods.set(ref.owner.key, (this.ownerPods.get(ref.owner.key) ?? 0) + 1);
    }
    for (const a of addresses) {
      const map = a.kind === 'mac' ? this.mac : this.guid;
      const holder: LiveHolder = { pod: rec, network: this.intern(a.network) };
      const cur = map.get(a.value);
      if (cur === undefined) map.set(a.value, holder);
      else if (Array.isArray(cur)) cur.push(holder);
      else map.set(a.value, [cur, holder]);
    }
    let byName = this.pods.get(ns);
    if (!byName) this.pods.set(ns, (byName = new Map()));
    byName.set(ref.name, rec);
    this.podCount++;
  }

  removePod(namespace: string, name: string): void {
    const byName = this.pods.get(namespace);
    const rec = byName?.get(name);
    if (!rec) return;
    byName!.delete(name);
    if (byName!.size === 0) this.pods.delete(namespace);
    this.podCount--;
    if (rec.owner) {
      const left = (this.ownerPods.get(rec.owner.key) ?? 1) - 1;
      if (left > 0) this.ownerPods.set(rec.owner.key, left);
      else this.ownerPods.delete(rec.owner.key);
    }
    for (const value of Array.isArray(rec.held) ? rec.held : [rec.held]) {
      const map = value.length === GUID_LENGTH ? this.guid : this.mac;
      const cur = map.get(value);
      if (cur === undefined) continue;
      if (!Array.isArray(cur)) {
        if (cur.pod === rec) map.delete(value);
        continue;
      }
      const rest = cur.filter((h) => h.pod !== rec);
      if (rest.length === 0) map.delete(value);
      else map.set(value, rest.length === 1 ? rest[0]! : rest);
    }
  }

  /** Starts a full resync (relist): pods not set again before `endResync` are removed. */
  beginResync(): void {
    this.gen++;
  }

  endResync(): void {
    const stale: Array<[string, string]> = [];
    for (const [ns, byName] of this.pods) for (const [name, rec] of byName) if (rec.gen !== this.gen) stale.push([ns, name]);
    for (const [ns, name] of stale) this.removePod(ns, name);
  }

  /**
   * Idempotent per pod: the same pod (same namespace/name, or same uid) reserving the same
   * address again (its validating call after its mutating one, a reinvocation, a retry) refreshes
   * its reservation and fills in what it lacked (the uid, the name), never adds a second one.
   */
  reserve(claims: readonly AddressClaim[]): void {
    const expires = this.now() + this.ttl;
    for (const c of claims) {
      const pod = podKey(c.pod);
      const network = c.scope.startsWith('network:') ? c.scope.slice(8) : '*';
      const k = reservationKey(c.kind, c.value);
      const list = this.reservations.get(k);
      const own = list?.find((r) => r.network === network && samePod(r, pod, c.pod.name !== undefined, c.pod.uid));
      if (own) {
        own.expires = expires;
        if (c.pod.uid) own.uid = c.pod.uid;
        if (c.pod.name) own.pod = pod;
        continue;
      }
      const r: Reservation = { pod, network, expires };
      if (c.pod.uid) r.uid = c.pod.uid;
      if (c.pod.owner) r.owner = c.pod.owner;
      if (list) list.push(r);
      else this.reservations.set(k, [r]);
    }
  }

  /**
   * Holders of `value` other than `self` (and other than pods of `self`'s sharing owner): on the
   * same network (scope Network) or anywhere (Cluster). Live holders first, then unexpired
   * reservations (unless `pending` is false).
   */
  conflicts(kind: AddressKind, value: string, network: string, scope: 'Network' | 'Cluster', self: PodRef, pending = true): Holder[] {
    const out: Holder[] = [];
    const selfKey = self.name ? `${self.namespace}/${self.name}` : undefined;
    const ownerKey = self.owner?.key;
    const inScope = (n: string): boolean => scope === 'Cluster' || n === network || n === '*' || network === '*';
    const cur = (kind === 'mac' ? this.mac : this.guid).get(value);
    for (const h of cur === undefined ? [] : Array.isArray(cur) ? cur : [cur]) {
      const pod = `${h.pod.ns}/${h.pod.name}`;
      if (pod === selfKey || !inScope(h.network) || (ownerKey !== undefined && h.pod.owner?.key === ownerKey)) continue;
      out.push(h.pod.owner ? { pod, network: h.network, owner: h.pod.owner } : { pod, network: h.network });
    }
    const k = reservationKey(kind, value);
    const reserved = pending ? this.reservations.get(k) : undefined;
    if (reserved) {
      const now = this.now();
      const alive = reserved.filter((r) => r.expires > now);
      if (alive.length === 0) this.reservations.delete(k);
      else if (alive.length !== reserved.length) this.reservations.set(k, alive);
      for (const r of alive) {
        const same = (!!self.uid && r.uid === self.uid) || (selfKey !== undefined && r.pod === selfKey) || (ownerKey !== undefined && r.owner?.key === ownerKey);
        if (!same && inScope(r.network)) out.push({ ...r });
      }
    }
    return out;
  }

  /**
   * Drops the reservations these claims made (same pod, same address and network): a create that
   * then lost its claim in the API server, or could not make it, holds nothing.
   */
  release(claims: readonly AddressClaim[]): void {
    for (const c of claims) {
      const k = reservationKey(c.kind, c.value);
      const list = this.reservations.get(k);
      if (!list) continue;
      const network = c.scope.startsWith('network:') ? c.scope.slice(8) : '*';
      const rest = list.filter((r) => !(r.network === network && samePod(r, podKey(c.pod), c.pod.name !== undefined, c.pod.uid)));
      if (rest.length === 0) this.reservations.delete(k);
      else if (rest.length !== list.length) this.reservations.set(k, rest);
    }
  }

  /** Is this pod live (seen by the pod watch, holding addresses)? */
  hasPod(namespace: string, name: string): boolean {
    return this.pods.get(namespace)?.has(name) ?? false;
  }

  /**
   * Does a live pod hold `value` for `holder`: the pod `namespace/name` (kind `Pod`; with a `uid`,
   * that incarnation of the name only), or a pod of the sharing owner of that kind and name (with
   * a `uid`, the owner's key)? What confirms an address claim: its holder exists *and* uses the
   * address, so a claim made under a running pod's name, for another address or another uid, is
   * not kept alive by that pod.
   */
  heldBy(kind: AddressKind, value: string, holder: { kind: string; namespace: string; name: string; uid?: string }): boolean {
    const cur = (kind === 'mac' ? this.mac : this.guid).get(value);
    for (const { pod: p } of cur === undefined ? [] : Array.isArray(cur) ? cur : [cur]) {
      if (p.ns !== holder.namespace) continue;
      const match =
        holder.kind === 'Pod'
          ? p.name === holder.name && (holder.uid === undefined || p.uid === holder.uid)
          : p.owner?.kind === holder.kind && p.owner.name === holder.name && (holder.uid === undefined || p.owner.key === holder.uid);
      if (match) return true;
    }
    return false;
  }

  /** Whether a live pod of the sharing owner `key` holds addresses. */
  ownerHasPods(key: string): boolean {
    return this.ownerPods.has(key);
  }

  /** Drops expired reservations (the server may call this periodically; lookups also do). */
  sweep(): void {
    const now = this.now();
    for (const [k, list] of this.reservations) {
      const alive = list.filter((r) => r.expires > now);
      if (alive.length === 0) this.reservations.delete(k);
      else if (alive.length !== list.length) this.reservations.set(k, alive);
    }
  }

  stats(): { pods: number; addresses: number; reservations: number } {
    let reservations = 0;
    for (const list of this.reservations.values()) reservations += list.length;
    return { pods: this.podCount, addresses: this.mac.size + this.guid.size, reservations };
  }

  private intern(s: string): string {
    const found = this.interned.get(s);
    if (found !== undefined) return found;
    this.interned.set(s, s);
    return s;
  }

  private confirm(key: string, uid: string | undefined): void {
    if (this.reservations.size === 0) return;
    for (const [k, list] of this.reservations) {
      const rest = list.filter((r) => !(r.pod === key || (uid && r.uid === uid)));
      if (rest.length === 0) this.reservations.delete(k);
      else if (rest.length !== list.length) this.reservations.set(k, rest);
    }
  }
}
