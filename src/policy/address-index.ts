// The uniqueness index: which live pods (from the pod watch) and which pods being admitted
// (reservations) hold each hardware address. One map per kind, keyed by the canonical value;
// each holder records the network it uses the address on, so one index answers both scopes
// (Network, Cluster). Compact on purpose (100,000 pods must stay well under 100 MB): no pod
// objects, no concatenated keys; namespaces and networks are interned.
//
// Reservations are state any review can add to (a forged one included), so each has a bound and
// an owner: at most RESERVATION_LIMITS per pod, per address, per namespace and in all, the oldest
// evicted at a cap; they are indexed by address, by pod name and uid, and by age, so reserving,
// judging, confirming and releasing cost O(addresses of the request), and the periodic sweep (the
// owner, src/cli/serve-policy.ts) drops the expired ones.
import type { HeldAddress, AddressKind, AddressReservations } from './types.js';
import { sameOwner, type SharingOwner } from './owner.js';
import { MAX_ARBITRATED_ADDRESSES_PER_POD } from './limits.js';
import { Interner } from '../nads/index.js';

/** Namespaces and networks interned: a cluster's (2,000 and 10,000 at the size) with room. */
const INTERNED_MAX = 50_000;

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
  /** `ns/name` of the network, or `*` when unknown (an address with scope `cluster`). */
  network: string;
  /** Reservations only: when it lapses unless the watch sees the pod first (ms since epoch). */
  expires?: number;
  /** The owner the address is held for, when the pod has one that moves pods (`VM ns/name`). */
  owner?: SharingOwner;
}

/** Bounds on the reservations (docs/security.md, "Reservations"). */
export interface ReservationLimits {
  /** Addresses one `reserve` call (one pod's review) may reserve; the rest are not reserved. */
  perPod: number;
  /** Pending pods reserving one address (on any networks); the one reserved longest ago gives way. */
  perAddress: number;
  /** Reservations of one namespace; the namespace's oldest gives way. */
  perNamespace: number;
  /** Reservations in all; the oldest gives way. */
  total: number;
}

/**
 * Real pods reserve a handful of addresses each, confirmed by the pod watch within about a second:
 * - perPod: a KubeVirt VM or DPDK pod has a few NICs (limits.ts).
 * - perAddress: one pending holder is enough to judge a conflict; more pile up only where the
 *   conflict is admitted anyway (a Warn or Audit rule, e.g. a Deployment scaled up with a fixed
 *   MAC). The newest 16 outlive the older ones, so the conflict keeps being seen. Each of them
 *   holds the address on at most `perPod` networks (more than one review reserves), so one
 *   address is at most 16 x 64 reservations, the most a `conflicts()` call scans.
 * - perNamespace: a burst of 2,000 pods with 4 addresses each, all unconfirmed (offline, or the
 *   watch lagging), is 8,000; a namespace flooding through the apiserver evicts only its own.
 * - total: 50,000 reservations (~430 B each, ~22 MB of the 192 MB heap) is 1,100 per second held
 *   for the whole 45 s, above what an apiserver creates.
 */
export const RESERVATION_LIMITS: Readonly<ReservationLimits> = Object.freeze({
  perPod: MAX_ARBITRATED_ADDRESSES_PER_POD,
  perAddress: 16,
  perNamespace: 10_000,
  total: 50_000,
});

/** Why reservations were dropped or not made: `pod` counts addresses not reserved, the rest evictions. */
export type ReservationCap = 'pod' | 'address' | 'namespace' | 'total';

export interface AddressIndexOptions {
  /** How long a reservation holds without the watch confirming the pod (default 45 s). */
  reservationTtlMs?: number;
  now?: () => number;
  /** Overrides of RESERVATION_LIMITS (tests). */
  limits?: Partial<ReservationLimits>;
}

interface PodRecord {
  ns: string;
  name: string;
  /** Values held; the kind follows from the length (a GUID is 23 characters, a MAC 17 or 59). */
  held: string | string[];
  /** The network (interned `ns/name`) each value of `held` is held on, in the same order. */
  nets: string | string[];
  /** Resync generation that last saw the pod. */
  gen: number;
  owner: SharingOwner | undefined;
  /** Its uid, for address Leases held by one incarnation of a name (`heldBy`). */
  uid: string | undefined;
}

interface Reservation {
  /** The address (`reservationKey`). */
  readonly address: string;
  /** The interned namespace. */
  readonly ns: string;
  /** `ns/name`, or `ns/<generateName>*` until the name is known. */
  pod: string;
  uid?: string;
  readonly network: string;
  expires: number;
  owner?: SharingOwner;
}

/** Reservations of one key (a pod, a namespace) in a set, created and dropped with the key. */
function addTo<K>(map: Map<K, Set<Reservation>>, key: K, r: Reservation): void {
  const set = map.get(key);
  if (set) set.add(r);
  else map.set(key, new Set([r]));
}

function deleteFrom<K>(map: Map<K, Set<Reservation>>, key: K, r: Reservation): void {
  const set = map.get(key);
  if (!set?.delete(r)) return;
  if (set.size === 0) map.delete(key);
}

const GUID_LENGTH = 23;
/** Is `rec` among the holders of `value` in `map`? */
const holds = (map: Map<string, PodRecord | PodRecord[]>, value: string, rec: PodRecord): boolean => {
  const cur = map.get(value);
  return cur === rec || (Array.isArray(cur) && cur.includes(rec));
};
/** The networks a pod holds `value` on, in the order it lists them. */
function networksOf(rec: PodRecord, value: string): string[] {
  if (!Array.isArray(rec.held)) return [rec.nets as string];
  const out: string[] = [];
  for (let i = 0; i < rec.held.length; i++) if (rec.held[i] === value) out.push((rec.nets as string[])[i]!);
  return out;
}
export const podKey = (ref: PodRef): string => (ref.name ? `${ref.namespace}/${ref.name}` : `${ref.namespace}/${ref.generateName ?? ''}*`);
/** A reservation of the pod `key` (named: `ns/name`) or of the pod with `uid`. */
const samePod = (r: Reservation, key: string, named: boolean, uid: string | undefined): boolean =>
  (named && r.pod === key) || (!!uid && r.uid === uid);
/** Reservations of one pod (by uid, else by name) share this. */
const holderId = (r: Reservation): string => r.uid ?? r.pod;
// Two uids are two pods, whatever their names (a name is reused by the pod's next incarnation);
// without a uid on both sides, the name tells (a pod's mutating call comes before its uid).
const sameHolder = (a: Reservation, b: Reservation): boolean =>
  a.uid && b.uid ? a.uid === b.uid : !a.pod.endsWith('*') && a.pod === b.pod;
const reservationKey = (kind: AddressKind, value: string): string => `${kind === 'mac' ? 'm' : 'g'}${value}`;

export class AddressIndex implements AddressReservations {
  /** Live pods holding each value (a pod once, however many networks it holds the value on: `nets`). */
  private readonly mac = new Map<string, PodRecord | PodRecord[]>();
  private readonly guid = new Map<string, PodRecord | PodRecord[]>();
  private readonly pods = new Map<string, Map<string, PodRecord>>();
  /** One copy of each namespace and network name; bounded, since reviews (forged ones too) bring them. */
  private readonly interned = new Interner<string>(INTERNED_MAX, 'recent');
  /** Reservations by address (of at most `perAddress` pods each, on up to `perPod` networks per pod). */
  private readonly reservations = new Map<string, Reservation[]>();
  /** The same by pod (named ones by `ns/name`, and by uid), for confirm. */
  private readonly reservedByName = new Map<string, Set<Reservation>>();
  private readonly reservedByUid = new Map<string, Set<Reservation>>();
  /** The same by namespace and in all, oldest first (a refreshed reservation moves to the end). */
  private readonly reservedByNamespace = new Map<string, Set<Reservation>>();
  private readonly reservedByAge = new Set<Reservation>();
  private readonly limits: ReservationLimits;
  private readonly capped: Record<ReservationCap, number> = { pod: 0, address: 0, namespace: 0, total: 0 };
  /** Live pods per sharing owner (key), for Leases held by an owner. */
  private readonly ownerPods = new Map<string, number>();
  private readonly ttl: number;
  private readonly now: () => number;
  private gen = 0;
  private podCount = 0;

  constructor(options: AddressIndexOptions = {}) {
    this.ttl = options.reservationTtlMs ?? 45_000;
    this.now = options.now ?? Date.now;
    this.limits = { ...RESERVATION_LIMITS, ...options.limits };
    for (const [name, value] of Object.entries(this.limits)) {
      if (!Number.isInteger(value) || value < 1) throw new RangeError(`reservation limit ${name}: ${value} is not a positive integer`);
    }
  }

  /** Sets what a live pod holds (replacing what it held) and confirms its reservations. */
  setPod(ref: { namespace: string; name: string; uid?: string; owner?: SharingOwner }, addresses: readonly PodAddress[]): void {
    const kept = this.pods.get(ref.namespace)?.get(ref.name);
    if (kept && this.holdsExactly(kept, ref, addresses)) {
      // The same pod with the same addresses (its MODIFIED events): it keeps its place among the
      // holders of each address, as it has held them since it was first set.
      kept.gen = this.gen;
      if (ref.owner) kept.owner = ref.owner;
      this.confirm(`${ref.namespace}/${ref.name}`, ref.uid);
      return;
    }
    this.removePod(ref.namespace, ref.name);
    this.confirm(`${ref.namespace}/${ref.name}`, ref.uid);
    if (addresses.length === 0) return;
    const ns = this.intern(ref.namespace);
    // Every field in the literal, even when undefined: V8 keeps them in the object (fields added
    // later go to a separate property array, 40 B more per pod).
    // The networks in the record, not one holder object per address (40 B each).
    const one = addresses.length === 1;
    const held = one ? addresses[0]!.value : addresses.map((a) => a.value);
    const nets = one ? this.intern(addresses[0]!.network) : addresses.map((a) => this.intern(a.network));
    const rec: PodRecord = { ns, name: ref.name, held, nets, gen: this.gen, owner: ref.owner, uid: ref.uid || undefined };
    if (ref.owner) this.ownerPods.set(ref.owner.key, (this.ownerPods.get(ref.owner.key) ?? 0) + 1);
    for (let i = 0; i < addresses.length; i++) {
      const a = addresses[i]!;
      if (!one && (held as string[]).indexOf(a.value) < i) continue; // held on an earlier network too: listed once
      const map = a.kind === 'mac' ? this.mac : this.guid;
      const cur = map.get(a.value);
      if (cur === undefined) map.set(a.value, rec);
      else if (Array.isArray(cur)) cur.push(rec);
      else map.set(a.value, [cur, rec]);
    }
    let byName = this.pods.get(ns);
    if (!byName) this.pods.set(ns, (byName = new Map()));
    byName.set(ref.name, rec);
    this.podCount++;
  }

  /**
   * Whether `rec` is `ref` (same uid and owner) holding exactly `addresses`, in order. A value listed
   * twice (one address on two networks) compares like any other: `nets` holds its network at each index.
   */
  private holdsExactly(rec: PodRecord, ref: { uid?: string; owner?: SharingOwner }, addresses: readonly PodAddress[]): boolean {
    if (rec.uid !== ref.uid || rec.owner?.key !== ref.owner?.key) return false;
    const held = Array.isArray(rec.held) ? rec.held : [rec.held];
    const nets = Array.isArray(rec.nets) ? rec.nets : [rec.nets];
    if (held.length !== addresses.length) return false;
    for (let i = 0; i < addresses.length; i++) {
      const a = addresses[i]!;
      if (held[i] !== a.value || nets[i] !== a.network) return false;
      // The kind too (the map the value is in): a value's length tells it, but the caller's kind decides.
      if (!holds(a.kind === 'mac' ? this.mac : this.guid, a.value, rec)) return false;
    }
    return true;
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
        if (cur === rec) map.delete(value);
        continue;
      }
      const rest = cur.filter((h) => h !== rec);
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
   * Bounded (RESERVATION_LIMITS): addresses past `perPod` are not reserved; at the other caps the
   * oldest reservation (of the address, the namespace, or in all) gives way to the new one, so a
   * flood shortens how long reservations last but never refuses a pod.
   */
  reserve(addresses: readonly HeldAddress[]): void {
    const expires = this.now() + this.ttl;
    const n = Math.min(addresses.length, this.limits.perPod);
    this.capped.pod += addresses.length - n;
    for (let i = 0; i < n; i++) {
      const c = addresses[i]!;
      const pod = podKey(c.pod);
      const network = c.scope.startsWith('network:') ? c.scope.slice(8) : '*';
      const address = reservationKey(c.kind, c.value);
      const own = this.reservations
        .get(address)
        ?.find((r) => r.network === network && samePod(r, pod, c.pod.name !== undefined, c.pod.uid));
      if (own) {
        this.refresh(own, expires, c.pod.name ? pod : undefined, c.pod.uid);
        continue;
      }
      const r: Reservation = { address, ns: this.intern(c.pod.namespace), pod, network: this.intern(network), expires };
      if (c.pod.uid) r.uid = c.pod.uid;
      if (c.pod.owner) r.owner = c.pod.owner;
      this.makeRoom(r);
      this.add(r);
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
    const inScope = (n: string): boolean => scope === 'Cluster' || n === network || n === '*' || network === '*';
    const cur = (kind === 'mac' ? this.mac : this.guid).get(value);
    for (const p of cur === undefined ? [] : Array.isArray(cur) ? cur : [cur]) {
      const pod = `${p.ns}/${p.name}`;
      if (pod === selfKey || sameOwner(self.owner, p.owner)) continue;
      for (const net of networksOf(p, value)) {
        if (!inScope(net)) continue;
        out.push(p.owner ? { pod, network: net, owner: p.owner } : { pod, network: net });
      }
    }
    const reserved = pending ? this.reservations.get(reservationKey(kind, value)) : undefined;
    if (reserved) {
      const now = this.now();
      for (const r of [...reserved]) {
        if (r.expires <= now) {
          this.remove(r);
          continue;
        }
        const same = (!!self.uid && r.uid === self.uid) || (selfKey !== undefined && r.pod === selfKey) || sameOwner(self.owner, r.owner);
        if (same || !inScope(r.network)) continue;
        const h: Holder = { pod: r.pod, network: r.network, expires: r.expires };
        if (r.uid) h.uid = r.uid;
        if (r.owner) h.owner = r.owner;
        out.push(h);
      }
    }
    return out;
  }

  /**
   * Drops the reservations these addresses made (same pod, same address and network): a create that
   * then lost its Lease in the API server, or could not make it, holds nothing.
   */
  release(addresses: readonly HeldAddress[]): void {
    for (const c of addresses) {
      const list = this.reservations.get(reservationKey(c.kind, c.value));
      if (!list) continue;
      const network = c.scope.startsWith('network:') ? c.scope.slice(8) : '*';
      const pod = podKey(c.pod);
      for (const r of list.filter((r) => r.network === network && samePod(r, pod, c.pod.name !== undefined, c.pod.uid))) this.remove(r);
    }
  }

  /** Is this pod live (seen by the pod watch, holding addresses)? */
  hasPod(namespace: string, name: string): boolean {
    return this.pods.get(namespace)?.has(name) ?? false;
  }

  /**
   * Does a live pod hold `value` for `holder`: the pod `namespace/name` (kind `Pod`; with a `uid`,
   * that incarnation of the name only), or a pod of the sharing owner of that kind and name (with
   * a `uid`, the owner's key)? What confirms an address Lease: its holder exists *and* uses the
   * address, so a Lease made under a running pod's name, for another address or another uid, is
   * not kept alive by that pod.
   */
  heldBy(kind: AddressKind, value: string, holder: { kind: string; namespace: string; name: string; uid?: string }): boolean {
    const cur = (kind === 'mac' ? this.mac : this.guid).get(value);
    for (const p of cur === undefined ? [] : Array.isArray(cur) ? cur : [cur]) {
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

  /** Drops expired reservations (the server calls this periodically; lookups also do). */
  sweep(): void {
    const now = this.now();
    // Not stopping at the first live one: a clock stepped back may have put a later expiry first.
    for (const r of this.reservedByAge) if (r.expires <= now) this.remove(r);
  }

  stats(): { pods: number; addresses: number; reservations: number } {
    return { pods: this.podCount, addresses: this.mac.size + this.guid.size, reservations: this.reservedByAge.size };
  }

  /** Since start: addresses not reserved (`pod`) and live reservations evicted at each cap. */
  reservationsCapped(): Readonly<Record<ReservationCap, number>> {
    return { ...this.capped };
  }

  /** The bounds in force. */
  reservationLimits(): Readonly<ReservationLimits> {
    return this.limits;
  }

  private intern(s: string): string {
    return this.interned.get(s, () => s);
  }

  /** The pod `key` (or `uid`) is live: the watch holds its addresses now, its reservations go. */
  private confirm(key: string, uid: string | undefined): void {
    if (this.reservedByAge.size === 0) return;
    for (const r of [...(this.reservedByName.get(key) ?? []), ...(uid ? (this.reservedByUid.get(uid) ?? []) : [])]) this.remove(r);
  }

  private add(r: Reservation): void {
    const list = this.reservations.get(r.address);
    if (list) list.push(r);
    else this.reservations.set(r.address, [r]);
    if (!r.pod.endsWith('*')) addTo(this.reservedByName, r.pod, r);
    if (r.uid) addTo(this.reservedByUid, r.uid, r);
    addTo(this.reservedByNamespace, r.ns, r);
    this.reservedByAge.add(r);
  }

  private remove(r: Reservation): void {
    if (!this.reservedByAge.delete(r)) return;
    const list = this.reservations.get(r.address);
    const at = list ? list.indexOf(r) : -1;
    if (at >= 0) {
      list!.splice(at, 1);
      if (list!.length === 0) this.reservations.delete(r.address);
    }
    if (!r.pod.endsWith('*')) deleteFrom(this.reservedByName, r.pod, r);
    if (r.uid) deleteFrom(this.reservedByUid, r.uid, r);
    deleteFrom(this.reservedByNamespace, r.ns, r);
  }

  /** A pod reserving again: a later expiry (so it moves to the end of the age order), and the name and uid it lacked. */
  private refresh(r: Reservation, expires: number, pod: string | undefined, uid: string | undefined): void {
    this.remove(r);
    r.expires = expires;
    if (pod) r.pod = pod;
    if (uid) r.uid = uid;
    this.add(r);
  }

  /**
   * Makes room for `r` at each cap, the oldest first: expired reservations go without counting;
   * a live one evicted is counted under its cap. Each step is O(1) but for the expired dropped.
   */
  private makeRoom(r: Reservation): void {
    const now = this.now();
    const list = this.reservations.get(r.address);
    if (list) {
      const own = list.filter((x) => sameHolder(x, r));
      if (own.length >= this.limits.perPod) {
        // The same pod on yet another network: one review holds an address on at most `perPod`
        // networks, so more can only come from repeated reviews of one name (each on new networks);
        // its oldest network gives way, and one address holds at most perAddress x perPod.
        this.evict(earliest(own)!, now, 'address');
      } else if (own.length === 0) {
        // A new pod for this address: past `perAddress` pods, the one reserved longest ago gives way
        // (all its networks). One pod may hold the address on many networks: it counts once.
        const oldestOf = new Map<string, Reservation>();
        for (const x of list) {
          const o = oldestOf.get(holderId(x));
          if (!o || x.expires < o.expires) oldestOf.set(holderId(x), x);
        }
        if (oldestOf.size >= this.limits.perAddress) {
          const id = holderId(earliest(oldestOf.values())!);
          for (const x of list.filter((x) => holderId(x) === id)) this.evict(x, now, 'address');
        }
      }
    }
    const inNamespace = this.reservedByNamespace.get(r.ns);
    while (inNamespace && inNamespace.size >= this.limits.perNamespace) this.evict(first(inNamespace), now, 'namespace');
    while (this.reservedByAge.size >= this.limits.total) this.evict(first(this.reservedByAge), now, 'total');
  }

  private evict(r: Reservation, now: number, cap: ReservationCap): void {
    if (r.expires > now) this.capped[cap]++;
    this.remove(r);
  }
}

const first = (set: Set<Reservation>): Reservation => set.values().next().value as Reservation;
/** The reservation that lapses first (the first of those lapsing together). */
function earliest(rs: Iterable<Reservation>): Reservation | undefined {
  let out: Reservation | undefined;
  for (const r of rs) if (!out || r.expires < out.expires) out = r;
  return out;
}
