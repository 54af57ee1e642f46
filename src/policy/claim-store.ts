// The shell of the address claims: creates them when a pod is admitted (the arbiter), keeps
// what exists from a list/watch of the claim Leases, releases the claims of pods that ended (the
// pod watch calls releaseHolder) and sweeps stale ones. Every write is bounded; the request path
// waits at most `timeoutMs`.
import { ListWatch, describeKubeError, transportFor, WatchedCache, type KubeCredentials, type KubeTransport, type LeaseApi } from '../kube/index.js';
import type { AddressClaim } from './types.js';
import type { PolicyLogger } from './log.js';
import {
  CLAIM_LABEL,
  claimIsStale,
  claimObject,
  holderKey,
  parseClaim,
  sameHolder,
  wantedClaims,
  type ClaimHolder,
  type ClaimOutcome,
  type StoredClaim,
  type WantedClaim,
} from './claims.js';

/** What the server asks of the claims: claim these addresses for an admitted pod. */
export interface AddressArbiter {
  /** Outcomes for the addresses that need the arbiter (none: nothing to wait for). `dryRun`: read, never write. */
  claim(claims: readonly AddressClaim[], options: { dryRun: boolean }): Promise<ClaimOutcome[]> | undefined;
}

export type ClaimEvent = 'won' | 'lost' | 'unavailable' | 'taken-over' | 'released' | 'swept' | 'release-failed';

export interface ClaimStoreOptions {
  api: LeaseApi;
  /** Reads for the list/watch (the credentials' transport when omitted). */
  kubeConfig?: KubeCredentials;
  transport?: KubeTransport;
  /** Does the holder exist now (the pod watch's index)? */
  live: (holder: ClaimHolder) => boolean;
  /** Is `live` current: the pod watch has synced and is not failing? Nothing is taken over or swept otherwise. */
  livenessCurrent: () => boolean;
  /** How long a claim may wait for its holder to appear before it may be taken over or swept (default 60 s). */
  pendingMs?: number;
  /** Budget of one claim on the request path (default 1.5 s; the validating webhook waits 5 s). */
  timeoutMs?: number;
  /** Budget of one release or sweep delete (default 10 s). */
  writeTimeoutMs?: number;
  backoffMs?: number;
  logger?: PolicyLogger;
  onEvent?: (event: ClaimEvent, n?: number) => void;
  now?: () => number;
}

export class ClaimStore extends WatchedCache implements AddressArbiter {
  protected readonly listWatch: ListWatch;
  private cache = new Map<string, StoredClaim>();
  private relisted: Map<string, StoredClaim> | undefined;
  private readonly byHolder = new Map<string, Set<string>>();
  private readonly pendingMs: number;
  private readonly timeoutMs: number;
  private readonly writeTimeoutMs: number;
  private readonly now: () => number;
  private sweeping = false;

  constructor(private readonly o: ClaimStoreOptions) {
    super();
    this.pendingMs = o.pendingMs ?? 60_000;
    this.timeoutMs = o.timeoutMs ?? 1_500;
    this.writeTimeoutMs = o.writeTimeoutMs ?? 10_000;
    this.now = o.now ?? Date.now;
    this.listWatch = new ListWatch({
      transport: transportFor('ClaimStore', o.kubeConfig, o.transport),
      path: o.api.path,
      listAccept: 'application/json',
      watchAccept: 'application/json',
      labelSelector: `${CLAIM_LABEL}=true`,
      backoffMs: o.backoffMs,
      onError: (err) => o.logger?.warn({ err: describeKubeError(err) }, 'address claim watch failed; retrying'),
      handler: {
        resync: () => void (this.relisted = new Map()),
        upsert: (obj) => {
          const c = parseClaim(obj);
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
          const next = this.relisted ?? new Map<string, StoredClaim>();
          this.relisted = undefined;
          this.cache = new Map();
          this.byHolder.clear();
          for (const c of next.values()) this.remember(c);
        },
      },
    });
  }

  /** Claims known from the watch (and this replica's own creates). */
  claims(): StoredClaim[] {
    return [...this.cache.values()];
  }

  size(): number {
    return this.cache.size;
  }

  claim(claims: readonly AddressClaim[], options: { dryRun: boolean }): Promise<ClaimOutcome[]> | undefined {
    const wanted = wantedClaims(claims);
    if (wanted.length === 0) return undefined;
    const deadline = AbortSignal.timeout(this.timeoutMs);
    return Promise.all(
      wanted.map((w) =>
        this.attempt(w, deadline, options.dryRun).catch((err: unknown): ClaimOutcome => ({
          wanted: w,
          result: 'unavailable',
          reason: deadline.aborted ? `the API server did not answer within ${this.timeoutMs} ms` : describeKubeError(err),
        })),
      ),
    ).then((outcomes) => {
      for (const out of outcomes) this.o.onEvent?.(out.result);
      return outcomes;
    });
  }

  /** Deletes the claims `holder` holds (its pod ended). Idempotent: any replica may do it, a second finds nothing. */
  async releaseHolder(holder: ClaimHolder): Promise<number> {
    const names = [...(this.byHolder.get(holderKey(holder)) ?? [])];
    let released = 0;
    for (const name of names) {
      const c = this.cache.get(name);
      // A claim of another incarnation (same name, other uid) is not this pod's.
      if (!c || !sameHolder(c.holder, holder) || (c.holder.uid && holder.uid && c.holder.uid !== holder.uid)) continue;
      if (await this.remove(c, 'released')) released++;
    }
    return released;
  }

  /**
   * Deletes claims whose holder does not exist and that are older than the pending bound: pods
   * that were admitted but never created, pods whose end every replica missed. Does nothing
   * while the pod watch is not current (a stale index cannot tell a live pod from a gone one).
   */
  async sweep(): Promise<number> {
    if (this.sweeping || !this.o.livenessCurrent() || !this.synced()) return 0;
    this.sweeping = true;
    try {
      const now = this.now();
      let swept = 0;
      for (const c of [...this.cache.values()]) {
        if (!claimIsStale(c, this.o.live(c.holder), now, this.pendingMs)) continue;
        if (await this.remove(c, 'swept')) swept++;
      }
      return swept;
    } finally {
      this.sweeping = false;
    }
  }

  private stale(c: StoredClaim): boolean {
    return this.o.livenessCurrent() && claimIsStale(c, this.o.live(c.holder), this.now(), this.pendingMs);
  }

  private async attempt(w: WantedClaim, signal: AbortSignal, dryRun: boolean): Promise<ClaimOutcome> {
    const cached = this.cache.get(w.name);
    if (cached) {
      // The watch already shows the claim: ours, or another holder's (no write needed to lose).
      const verdict = this.judge(cached, w);
      if (verdict === 'won') return { wanted: w, result: 'won' };
      if (verdict === 'lost') return this.lost(w, cached);
      if (dryRun) return { wanted: w, result: 'won' };
    } else if (dryRun) {
      return { wanted: w, result: 'won' };
    }
    // Create; on a conflict read the holder; take over a stale claim. Three rounds at most: each
    // round that does not decide means another replica changed the claim meanwhile.
    for (let round = 0; round < 3; round++) {
      const created = await this.o.api.create(claimObject(w, this.o.api.namespace, Math.ceil(this.pendingMs / 1000), new Date(this.now())), signal);
      if (created.status === 'created') {
        const c = parseClaim(created.object);
        if (c) this.remember(c);
        return { wanted: w, result: 'won' };
      }
      if (created.status === 'failed') return { wanted: w, result: 'unavailable', reason: created.reason };
      const got = await this.o.api.get(w.name, signal);
      if (got.status === 'absent') continue; // deleted meanwhile: create again
      if (got.status === 'failed') return { wanted: w, result: 'unavailable', reason: got.reason };
      const existing = parseClaim(got.object);
      if (!existing) return { wanted: w, result: 'unavailable', reason: `claim ${w.name} is not a well-formed claim` };
      const verdict = this.judge(existing, w);
      if (verdict === 'won') return { wanted: w, result: 'won' };
      if (verdict === 'lost') return this.lost(w, existing);
      const deleted = await this.o.api.delete(existing.name, { uid: existing.uid, resourceVersion: existing.resourceVersion }, signal);
      if (deleted.status === 'failed') return { wanted: w, result: 'unavailable', reason: deleted.reason };
      if (deleted.status === 'deleted') {
        this.forget(existing);
        this.o.onEvent?.('taken-over');
        this.o.logger?.info({ claim: existing.name, from: holderKey(existing.holder), to: holderKey(w.holder) }, 'took over a stale address claim');
      }
    }
    return { wanted: w, result: 'unavailable', reason: `claim ${w.name} kept changing` };
  }

  /**
   * `won`: the claim is this holder's (the same pod: its name, and its uid when both are known;
   * or the same name while that pod is still live, whose create will fail as AlreadyExists);
   * `take-over`: stale, or an earlier incarnation of the name that is gone; else `lost`.
   */
  private judge(c: StoredClaim, w: WantedClaim): 'won' | 'lost' | 'take-over' {
    if (sameHolder(c.holder, w.holder)) {
      if (!c.holder.uid || !w.holder.uid || c.holder.uid === w.holder.uid) return 'won';
      return this.o.livenessCurrent() && !this.o.live(c.holder) ? 'take-over' : 'won';
    }
    return this.stale(c) ? 'take-over' : 'lost';
  }

  private lost(w: WantedClaim, c: StoredClaim): ClaimOutcome {
    return { wanted: w, result: 'lost', holder: c.holder, live: this.o.live(c.holder) };
  }

  private async remove(c: StoredClaim, event: 'released' | 'swept'): Promise<boolean> {
    try {
      const r = await this.o.api.delete(c.name, { uid: c.uid, resourceVersion: c.resourceVersion }, AbortSignal.timeout(this.writeTimeoutMs));
      if (r.status === 'failed') throw new Error(r.reason);
      if (r.status !== 'changed') this.forget(c);
      if (r.status === 'deleted') {
        this.o.onEvent?.(event);
        this.o.logger?.info({ claim: c.name, holder: holderKey(c.holder), address: c.address, scope: c.scope }, event === 'released' ? 'released an address claim' : 'swept a stale address claim');
        return true;
      }
    } catch (err) {
      this.o.onEvent?.('release-failed');
      this.o.logger?.warn({ claim: c.name, err: describeKubeError(err) }, 'could not delete an address claim; the sweep retries');
    }
    return false;
  }

  private remember(c: StoredClaim): void {
    const old = this.cache.get(c.name);
    if (old) this.forget(old);
    this.cache.set(c.name, c);
    const k = holderKey(c.holder);
    let names = this.byHolder.get(k);
    if (!names) this.byHolder.set(k, (names = new Set()));
    names.add(c.name);
  }

  private forget(c: StoredClaim): void {
    if (this.cache.get(c.name)?.uid !== c.uid) return; // already replaced by a newer object of that name
    this.cache.delete(c.name);
    const k = holderKey(c.holder);
    const names = this.byHolder.get(k);
    names?.delete(c.name);
    if (names?.size === 0) this.byHolder.delete(k);
  }
}
