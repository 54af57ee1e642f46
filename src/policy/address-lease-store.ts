// The shell of the address Leases: creates them when a pod is admitted, keeps
// what exists from a list/watch of the address Leases, confirms a Lease when the pod watch shows its
// holder using the address, releases the Leases of pods that ended (the pod watch calls
// releaseHolder) and sweeps stale ones. Every write is bounded: per request (the first
// MAX_ARBITRATED_ADDRESSES_PER_POD addresses), in flight (LeaseWriteGate), and in Leases not
// confirmed yet (globally and per namespace); the request path waits at most `timeoutMs`.
import { setMaxListeners } from 'node:events';
import {
  ListWatch,
  describeKubeError,
  transportFor,
  WatchedCache,
  type KubeCredentials,
  type KubeTransport,
  type LeaseApi,
} from '../kube/index.js';
import type { HeldAddress, AddressKind } from './types.js';
import type { PolicyLogger } from './log.js';
import { MAX_ARBITRATED_ADDRESSES_PER_POD } from './limits.js';
import { GateRefused, LeaseWriteGate, type GatePriority } from './lease-write-gate.js';
import type { HolderLookup } from './pod-lookup.js';
import {
  LEASE_LABEL,
  ADDRESS_LEASE_LIMITS,
  leaseIsStale,
  leaseObject,
  holderKey,
  parseLease,
  sameHolder,
  wantedLeases,
  yieldsIn,
  type LeaseHolder,
  type LeaseOutcome,
  type HolderState,
  type StoredLease,
  type WantedLease,
} from './address-leases.js';

/**
 * The confirmation window's default: a real pod is in the pod watch at most this long after its
 * validating call (the apiserver waits for the slowest other validating webhook, 30 s at most,
 * then writes it; 5 s for the write and the watch).
 */
export const DEFAULT_LEASE_PENDING_MS = 35_000;

/**
 * How often each replica sweeps stale Leases: half the window (so a Lease whose pod never came is
 * deleted within 1.5 windows: 53 s by default), never more often than every 500 ms.
 */
export const leaseSweepMs = (pendingMs: number): number => Math.max(500, pendingMs / 2);

/** What the server asks of the Leases: take Leases on these addresses for an admitted pod. */
export interface AddressLeases {
  /** Outcomes for the addresses that need an address Lease (none: nothing to wait for). `dryRun`: read, never write. */
  acquire(addresses: readonly HeldAddress[], options: { dryRun: boolean }): Promise<LeaseOutcome[]> | undefined;
}

export type LeaseEvent =
  | 'won'
  | 'lost'
  | 'unavailable'
  | 'not-claimed'
  | 'taken-over'
  | 'released'
  | 'swept'
  | 'release-failed'
  | 'kept-running';

export interface AddressLeaseLimits {
  /** Addresses given a Lease per request (MAX_ARBITRATED_ADDRESSES_PER_POD). */
  perPod: number;
  inFlight: number;
  background: number;
  waiting: number;
  unconfirmed: number;
  unconfirmedPerNamespace: number;
}

export interface AddressLeaseStoreOptions {
  api: LeaseApi;
  /** Reads for the list/watch (the credentials' transport when omitted). */
  kubeConfig?: KubeCredentials;
  transport?: KubeTransport;
  /** Does a live pod of the holder use this address now (the pod watch's index; by uid when the holder has one)? */
  live: (holder: LeaseHolder, address: { kind: AddressKind; value: string }) => boolean;
  /** Is `live` current: the pod watch has synced and is not failing? Nothing is taken over or swept otherwise. */
  livenessCurrent: () => boolean;
  /**
   * Asks the API server whether a Lease's holder pod runs with the address (pod-lookup.ts), before
   * a Lease the watch never confirmed is taken over or swept: `true` keeps it (the watch lags);
   * `false` or `undefined` (could not tell) leave it to the window, as without this.
   */
  holderRuns?: HolderLookup;
  /**
   * The confirmation window: how long a Lease whose holder was never seen blocks other pods; after
   * it, the Lease yields to the next pod that wants the address, and the sweep deletes it (default 35 s).
   */
  pendingMs?: number;
  /** Budget of one Lease on the request path (default 1.5 s; the validating webhook waits 5 s). */
  timeoutMs?: number;
  /** Budget of one release or sweep delete (default 10 s; up to a tenth more: see backgroundDeadline). */
  writeTimeoutMs?: number;
  /** The bounds (ADDRESS_LEASE_LIMITS and MAX_ARBITRATED_ADDRESSES_PER_POD unless given: tests lower them). */
  limits?: Partial<AddressLeaseLimits>;
  backoffMs?: number;
  logger?: PolicyLogger;
  onEvent?: (event: LeaseEvent, n?: number) => void;
  now?: () => number;
}

export class AddressLeaseStore extends WatchedCache implements AddressLeases {
  protected readonly listWatch: ListWatch;
  private cache = new Map<string, StoredLease>();
  private relisted: Map<string, StoredLease> | undefined;
  private readonly byHolder = new Map<string, Set<string>>();
  /** Leases (object uids) whose holder this replica has seen using the address: confirmed. */
  private seen = new Set<string>();
  /** Leases not confirmed by the holder's namespace, creates in flight included. */
  private readonly unconfirmed = new Map<string, number>();
  private unconfirmedTotal = 0;
  private readonly limits: AddressLeaseLimits;
  private readonly gate: LeaseWriteGate;
  private readonly pendingMs: number;
  private readonly timeoutMs: number;
  private readonly writeTimeoutMs: number;
  private readonly now: () => number;
  private sweeping = false;
  /** The deadline the background writes started lately share (see backgroundDeadline). */
  private background: { signal: AbortSignal; until: number } | undefined;
  /** Deletes of the current sweep that found no slot in time (logged once per sweep). */
  private busy = 0;

  constructor(private readonly o: AddressLeaseStoreOptions) {
    super();
    this.limits = { perPod: MAX_ARBITRATED_ADDRESSES_PER_POD, ...ADDRESS_LEASE_LIMITS, ...o.limits };
    this.gate = new LeaseWriteGate(this.limits);
    this.pendingMs = o.pendingMs ?? DEFAULT_LEASE_PENDING_MS;
    this.timeoutMs = o.timeoutMs ?? 1_500;
    this.writeTimeoutMs = o.writeTimeoutMs ?? 10_000;
    this.now = o.now ?? Date.now;
    this.listWatch = new ListWatch({
      transport: transportFor('AddressLeaseStore', o.kubeConfig, o.transport),
      path: o.api.path,
      listAccept: 'application/json',
      watchAccept: 'application/json',
      labelSelector: `${LEASE_LABEL}=true`,
      backoffMs: o.backoffMs,
      onError: (err) => o.logger?.warn({ err: describeKubeError(err) }, 'address claim watch failed; retrying'),
      handler: {
        resync: () => void (this.relisted = new Map()),
        upsert: (obj) => {
          const c = parseLease(obj);
          if (!c) return;
          if (this.relisted) this.relisted.set(c.name, c);
          else this.remember(c);
        },
        remove: (obj) => {
          const name = obj.metadata?.name;
          const cur = name ? this.cache.get(name) : undefined;
          if (cur && cur.uid === obj.metadata?.uid) this.forget(cur);
        },
        resynced: () => {
          const next = this.relisted ?? new Map<string, StoredLease>();
          const seen = new Set(this.seen);
          this.relisted = undefined;
          // Rebuilt from the list; creates in flight stay counted.
          for (const c of [...this.cache.values()]) this.forget(c);
          this.seen = new Set();
          for (const c of next.values()) {
            if (seen.has(c.uid)) this.seen.add(c.uid);
            this.remember(c);
          }
        },
      },
    });
  }

  /** Leases known from the watch (and this replica's own creates). */
  leases(): StoredLease[] {
    return [...this.cache.values()];
  }

  size(): number {
    return this.cache.size;
  }

  /** What the bounds see: Leases known, those not confirmed, calls in flight and waiting, the most in flight so far. */
  stats(): { leases: number; unconfirmed: number; inFlight: number; waiting: number; peakInFlight: number } {
    const g = this.gate.stats();
    return { leases: this.cache.size, unconfirmed: this.unconfirmedTotal, inFlight: g.inFlight, waiting: g.waiting, peakInFlight: g.peak };
  }

  acquire(addresses: readonly HeldAddress[], options: { dryRun: boolean }): Promise<LeaseOutcome[]> | undefined {
    const all = wantedLeases(addresses);
    if (all.length === 0) return undefined;
    // One request writes for its first addresses only: the rest were judged against live pods (no
    // Lease, no state), with one warning saying how many.
    const wanted = all.length > this.limits.perPod ? all.slice(0, this.limits.perPod) : all;
    const beyond = all.length - wanted.length;
    const deadline = AbortSignal.timeout(this.timeoutMs);
    // Up to 64 attempts share the deadline, each listening while it waits for a slot and while its
    // call runs: many listeners by design, not a leak (no MaxListenersExceededWarning).
    setMaxListeners(4 * wanted.length + 10, deadline);
    return Promise.all(
      wanted.map((w) =>
        this.attempt(w, deadline, options.dryRun).catch(
          (err: unknown): LeaseOutcome => ({
            wanted: w,
            result: 'unavailable',
            reason:
              err instanceof GateRefused
                ? err.message
                : deadline.aborted
                  ? `the API server did not answer within ${this.timeoutMs} ms`
                  : describeKubeError(err),
          }),
        ),
      ),
    ).then((outcomes) => {
      if (beyond > 0) outcomes.push({ wanted: all[wanted.length]!, result: 'not-claimed', count: beyond, limit: this.limits.perPod });
      for (const out of outcomes) this.o.onEvent?.(out.result);
      return outcomes;
    });
  }

  /**
   * The pod watch saw a pod of `holder` (created or changed): the holder's Leases for addresses it
   * uses are confirmed. One map lookup when the holder has no Lease: called for every pod event.
   */
  confirm(holder: LeaseHolder): void {
    const names = this.byHolder.get(holderKey(holder));
    if (!names) return;
    for (const name of names) {
      const c = this.cache.get(name);
      if (c && !this.seen.has(c.uid) && this.isLive(c)) this.markSeen(c);
    }
  }

  /** Deletes the Leases `holder` holds (its pod ended). Idempotent: any replica may do it, a second finds nothing. */
  async releaseHolder(holder: LeaseHolder): Promise<number> {
    const mine: StoredLease[] = [];
    for (const name of this.byHolder.get(holderKey(holder)) ?? []) {
      const c = this.cache.get(name);
      // A Lease of another incarnation (same name, other uid) is not this pod's: the sweep judges it.
      if (c && sameHolder(c.holder, holder) && !(c.holder.uid && holder.uid && c.holder.uid !== holder.uid)) mine.push(c);
    }
    const done = await Promise.all(mine.map((c) => this.remove(c, 'released')));
    return done.filter(Boolean).length;
  }

  /**
   * Deletes the Leases whose holder is gone (seen using the address, then not), and those whose
   * holder was never seen and that are older than the confirmation window: pods admitted but never
   * created, forged reviews, Leases made under a running pod's name for another uid or address,
   * pods whose end every replica missed. Does nothing while the pod watch is not current (a stale
   * index cannot tell a live pod from a gone one). Deletes run in parallel, as background calls.
   */
  async sweep(): Promise<number> {
    if (this.sweeping || !this.o.livenessCurrent() || !this.synced()) return 0;
    this.sweeping = true;
    try {
      // Confirmations no pod event brought (a Lease learnt after its pod): caught up here.
      for (const c of this.cache.values()) if (!this.seen.has(c.uid) && this.isLive(c)) this.markSeen(c);
      const now = this.now();
      const stale = [...this.cache.values()].filter((c) => leaseIsStale(c, this.holderState(c), now, this.pendingMs));
      this.busy = 0;
      const done = await Promise.all(stale.map(async (c) => !(await this.runsUnseen(c, 'background')) && this.remove(c, 'swept')));
      // The log field `claims` and the message keep the words from before the rename (log queries).
      if (this.busy > 0)
        this.o.logger?.warn({ claims: this.busy }, 'address claim deletes found no free call slot in time; the next sweep retries');
      return done.filter(Boolean).length;
    } finally {
      this.sweeping = false;
    }
  }

  private async attempt(w: WantedLease, signal: AbortSignal, dryRun: boolean): Promise<LeaseOutcome> {
    const cached = this.cache.get(w.name);
    if (cached) {
      // The watch already shows the Lease: ours, or another holder's (no write needed to lose).
      const verdict = this.judge(cached, w);
      if (verdict === 'won') return { wanted: w, result: 'won' };
      if (verdict === 'lost') return this.lost(w, cached);
      if (dryRun) return { wanted: w, result: 'won' };
      return this.createOrTakeOver(w, signal);
    }
    if (dryRun) return { wanted: w, result: 'won' };
    // A new Lease (not a take-over): within the bounds on Leases not confirmed yet, counted from
    // now so that a burst of creates in flight cannot overshoot them.
    const full = this.full(w.holder.namespace);
    if (full) return { wanted: w, result: 'unavailable', reason: full };
    this.count(w.holder.namespace, 1);
    try {
      return await this.createOrTakeOver(w, signal);
    } finally {
      this.count(w.holder.namespace, -1);
    }
  }

  /**
   * Create; on a conflict read the holder; take over a stale Lease. Three rounds at most: each
   * round that does not decide means another replica changed the Lease meanwhile.
   */
  private async createOrTakeOver(w: WantedLease, signal: AbortSignal): Promise<LeaseOutcome> {
    const api = this.o.api;
    for (let round = 0; round < 3; round++) {
      const lease = leaseObject(w, api.namespace, Math.ceil(this.pendingMs / 1000), new Date(this.now()));
      const created = await this.call('request', signal, () => api.create(lease, signal));
      if (created.status === 'created') {
        const c = parseLease(created.object);
        if (c) this.remember(c);
        return { wanted: w, result: 'won' };
      }
      if (created.status === 'failed') return { wanted: w, result: 'unavailable', reason: created.reason };
      const got = await this.call('request', signal, () => api.get(w.name, signal));
      if (got.status === 'absent') continue; // deleted meanwhile: create again
      if (got.status === 'failed') return { wanted: w, result: 'unavailable', reason: got.reason };
      const existing = parseLease(got.object);
      if (!existing) return { wanted: w, result: 'unavailable', reason: `claim ${w.name} is not a well-formed claim` };
      const verdict = this.judge(existing, w);
      if (verdict === 'won') return { wanted: w, result: 'won' };
      if (verdict === 'lost') return this.lost(w, existing);
      // Another pod's Lease that looks stale: unless the API server shows its pod running with the address.
      if (!sameHolder(existing.holder, w.holder) && (await this.runsUnseen(existing, 'request', signal))) {
        return { wanted: w, result: 'lost', holder: existing.holder, live: true };
      }
      const deleted = await this.call('request', signal, () =>
        api.delete(existing.name, { uid: existing.uid, resourceVersion: existing.resourceVersion }, signal),
      );
      if (deleted.status === 'failed') return { wanted: w, result: 'unavailable', reason: deleted.reason };
      if (deleted.status === 'deleted') {
        this.forget(existing);
        this.o.onEvent?.('taken-over');
        this.o.logger?.info(
          { claim: existing.name, from: holderKey(existing.holder), to: holderKey(w.holder) },
          'took over a stale address claim',
        );
      }
    }
    return { wanted: w, result: 'unavailable', reason: `claim ${w.name} kept changing` };
  }

  /**
   * `won`: the Lease is this holder's (the same pod: its name, and its uid when both are known;
   * or the same name while that pod runs with the address, whose create will fail as
   * AlreadyExists: nothing is written); `take-over`: stale (its holder gone, or never seen and
   * older than the confirmation window), or an earlier incarnation of the name that does not run
   * (a create refused after netattach's call, by another webhook or quota, then retried: the name
   * is unique among live objects, so the old uid cannot be created beside the new one); else `lost`.
   */
  private judge(c: StoredLease, w: WantedLease): 'won' | 'lost' | 'take-over' {
    const state = this.holderState(c);
    if (sameHolder(c.holder, w.holder)) {
      if (!c.holder.uid || !w.holder.uid || c.holder.uid === w.holder.uid) return 'won';
      return state === 'live' ? 'won' : 'take-over';
    }
    return this.o.livenessCurrent() && leaseIsStale(c, state, this.now(), this.pendingMs) ? 'take-over' : 'lost';
  }

  /**
   * A Lease the pod watch never confirmed, whose holder pod the API server shows running with the
   * address: the watch lags more than the window. Asked only of such Leases (one GET each, through
   * the gate); an error or a refused slot answers false, and the window decides as before. Without
   * `signal` (the sweep), the budget of a background write, its timer made only when asked.
   */
  private async runsUnseen(c: StoredLease, priority: GatePriority, given?: AbortSignal): Promise<boolean> {
    const lookup = this.o.holderRuns;
    if (!lookup || c.holder.kind !== 'Pod' || this.holderState(c) !== 'unconfirmed') return false;
    const signal = given ?? AbortSignal.timeout(this.writeTimeoutMs);
    const runs = await this.call(priority, signal, () => lookup(c.holder, { kind: c.kind, value: c.address }, signal)).catch(
      () => undefined,
    );
    if (runs !== true) return false;
    this.o.onEvent?.('kept-running');
    this.o.logger?.warn(
      { claim: c.name, holder: holderKey(c.holder), address: c.address, scope: c.scope },
      'an address claim looked stale, but the API server shows its pod running with the address: kept (the pod watch lags)',
    );
    return true;
  }

  private lost(w: WantedLease, c: StoredLease): LeaseOutcome {
    const state = this.holderState(c);
    if (state === 'live') return { wanted: w, result: 'lost', holder: c.holder, live: true };
    return {
      wanted: w,
      result: 'lost',
      holder: c.holder,
      live: false,
      yieldsInMs: state === 'gone' ? 0 : yieldsIn(c, this.now(), this.pendingMs),
    };
  }

  private isLive(c: StoredLease): boolean {
    return this.o.live(c.holder, { kind: c.kind, value: c.address });
  }

  private holderState(c: StoredLease): HolderState {
    if (this.isLive(c)) return 'live';
    return this.seen.has(c.uid) ? 'gone' : 'unconfirmed';
  }

  /** A call to the API server through the gate. */
  private call<T>(priority: GatePriority, signal: AbortSignal, fn: () => Promise<T>): Promise<T> {
    return this.gate.run(priority, signal, fn);
  }

  /** Why a new Lease for a holder in `namespace` cannot be made now (the bounds on unconfirmed Leases), or undefined. */
  private full(namespace: string): string | undefined {
    if (this.unconfirmedTotal >= this.limits.unconfirmed) {
      return `${this.unconfirmedTotal} address claims are waiting for their pods to appear (at most ${this.limits.unconfirmed})`;
    }
    const inNamespace = this.unconfirmed.get(namespace) ?? 0;
    if (inNamespace >= this.limits.unconfirmedPerNamespace) {
      return `${inNamespace} address claims in namespace ${namespace} are waiting for their pods to appear (at most ${this.limits.unconfirmedPerNamespace})`;
    }
    return undefined;
  }

  private count(namespace: string, by: number): void {
    const n = (this.unconfirmed.get(namespace) ?? 0) + by;
    if (n > 0) this.unconfirmed.set(namespace, n);
    else this.unconfirmed.delete(namespace);
    this.unconfirmedTotal += by;
  }

  private markSeen(c: StoredLease): void {
    this.seen.add(c.uid);
    this.count(c.holder.namespace, -1);
  }

  private async remove(c: StoredLease, event: 'released' | 'swept'): Promise<boolean> {
    try {
      const signal = this.backgroundDeadline();
      const r = await this.call('background', signal, () =>
        this.o.api.delete(c.name, { uid: c.uid, resourceVersion: c.resourceVersion }, signal),
      );
      if (r.status === 'failed') throw new Error(r.reason);
      if (r.status !== 'changed') this.forget(c);
      if (r.status === 'deleted') {
        this.o.onEvent?.(event);
        // A release is routine (every ending pod with an address; counted by onEvent): debug. A sweep is not: info.
        if (event === 'released')
          this.o.logger?.debug?.(
            { claim: c.name, holder: holderKey(c.holder), address: c.address, scope: c.scope },
            'released an address claim',
          );
        else
          this.o.logger?.info(
            { claim: c.name, holder: holderKey(c.holder), address: c.address, scope: c.scope },
            'swept a stale address claim',
          );
        return true;
      }
    } catch (err) {
      this.o.onEvent?.('release-failed');
      if (err instanceof GateRefused) this.busy++;
      else this.o.logger?.warn({ claim: c.name, err: describeKubeError(err) }, 'could not delete an address claim; the sweep retries');
    }
    return false;
  }

  /**
   * One deadline for the background writes (releases, sweeps) started within a tenth of their
   * budget: each gets writeTimeoutMs to 1.1 x writeTimeoutMs. A timer per release (every ending
   * pod with an address) was most of the cost of the deadline (issue 28). Its listeners are those
   * writes' own, removed as they finish; the signal lasts one budget.
   */
  private backgroundDeadline(): AbortSignal {
    const now = performance.now();
    const b = this.background;
    if (b && now < b.until) return b.signal;
    const share = this.writeTimeoutMs / 10;
    const signal = AbortSignal.timeout(this.writeTimeoutMs + share);
    // The writes of a tenth of the budget listen at once: many listeners by design, not a leak.
    setMaxListeners(0, signal);
    this.background = { signal, until: now + share };
    return signal;
  }

  private remember(c: StoredLease): void {
    const old = this.cache.get(c.name);
    // The same object again (a MODIFIED event) of the same holder keeps its confirmation, even if its
    // pod has gone meanwhile: then it is swept at once, not after the window, and does not count as
    // unconfirmed. netattach only creates and deletes Leases; a holder changed by hand starts afresh.
    // (`seen` holds object uids: a confirmed uid is this very object, so no uid comparison is needed.)
    const confirmed = old !== undefined && sameHolder(old.holder, c.holder) && this.seen.has(c.uid);
    if (old) this.forget(old);
    if (confirmed) this.seen.add(c.uid);
    this.cache.set(c.name, c);
    const k = holderKey(c.holder);
    let names = this.byHolder.get(k);
    if (!names) this.byHolder.set(k, (names = new Set()));
    names.add(c.name);
    if (this.seen.has(c.uid)) return;
    if (this.isLive(c)) this.seen.add(c.uid);
    else this.count(c.holder.namespace, 1);
  }

  private forget(c: StoredLease): void {
    if (this.cache.get(c.name)?.uid !== c.uid) return; // already replaced by a newer object of that name
    this.cache.delete(c.name);
    const k = holderKey(c.holder);
    const names = this.byHolder.get(k);
    names?.delete(c.name);
    if (names?.size === 0) this.byHolder.delete(k);
    if (!this.seen.delete(c.uid)) this.count(c.holder.namespace, -1);
  }
}
