// NADs from the cluster: a list + watch of every namespace (src/kube's ListWatch) keeps the
// cache, and a cache miss on the request path does one GET bounded by a deadline, so a NAD
// created a moment ago is found while an unreachable API server yields `unavailable`, never a hang.
// The GETs are bounded (src/nads/limits.ts): so many in flight, so many waiting for a slot, and a
// NAD found absent is remembered for a few seconds, so repeated reviews naming it cost no GET.
//
// Only the parsed entries are kept: list pages and watched objects are dropped once their entry
// is built, so the memory of a large cluster is its entries plus one page. An observer (the
// background audit, which judges the NAD objects themselves) sees the same objects as they pass.
import { LRUCache } from 'lru-cache';
import {
  ListWatch,
  RequestSlots,
  describeKubeError,
  getObject,
  kubeTransport,
  type KubeObject,
  type KubeTransport,
  type ListWatchHandler,
  type RetryInfo,
  type KubeCredentials,
} from '../kube/index.js';
import { silentLogger, type NadLogger, type NadSourceEventHandler } from './logger.js';
import { nadFromObject } from './model.js';
import {
  cachedNadChars,
  MAX_CACHED_NAD_CHARS,
  MAX_MISSING_NADS_REMEMBERED,
  MAX_NAD_GETS_IN_FLIGHT,
  MAX_NAD_GETS_WAITING,
  MISSING_NAD_MEMORY_MS,
} from './limits.js';
import { NAD_GROUP, NAD_PLURAL, NAD_VERSION } from './object.js';
import { nadKey, type Nad, type NadLookup, type NadSource } from './types.js';

export interface ClusterNadSourceOptions {
  logger?: NadLogger;
  /** Deadline of the GET done on a cache miss (default and maximum 1000 ms). */
  lookupTimeoutMs?: number;
  /** How long a NAD found absent is answered not-found without a GET (default MISSING_NAD_MEMORY_MS). */
  missingNadMemoryMs?: number;
  /** Deadline of each page of the list (default 60 s). */
  listTimeoutMs?: number;
  /** Objects per list page (default 500, as client-go's reflector). */
  listPageSize?: number;
  /** Backoff between reconnects: starts at `initialMs`, doubles, capped at `maxMs`. */
  backoff?: { initialMs?: number; maxMs?: number };
  /** A watch that ends sooner than this after starting counts as a failure (no hot reconnect loop). */
  minWatchMs?: number;
  resourceNameKeys?: readonly string[];
  onEvent?: NadSourceEventHandler;
  /** Sees every listed, watched and deleted NAD object, raw, after the cache took it (see observe()). */
  observer?: ListWatchHandler;
}

const NADS_PATH = `/apis/${NAD_GROUP}/${NAD_VERSION}/${NAD_PLURAL}`;
const MAX_LOOKUP_TIMEOUT_MS = 1000;

export class ClusterNadSource implements NadSource {
  readonly kind = 'cluster' as const;
  readonly #transport: KubeTransport;
  readonly #log: NadLogger;
  readonly #onEvent: NadSourceEventHandler;
  readonly #lookupTimeoutMs: number;
  readonly #listTimeoutMs: number;
  readonly #listPageSize: number;
  readonly #backoffInitialMs: number;
  readonly #backoffMaxMs: number;
  readonly #minWatchMs: number;
  readonly #resourceNameKeys: readonly string[] | undefined;
  #listWatch: ListWatch | undefined;
  #nads = new Map<string, Nad>();
  /** Entries of a list in progress: they replace the cache at once when it completes. */
  #relisted: Map<string, Nad> | undefined;
  readonly #inflight = new Map<string, Promise<NadLookup>>();
  /** NADs the API server said are absent, a few seconds; forgotten when the watch brings them. */
  readonly #missing: LRUCache<string, true>;
  /** GETs running, and lookups waiting for one of their slots. */
  readonly #slots = new RequestSlots(MAX_NAD_GETS_IN_FLIGHT, MAX_NAD_GETS_WAITING);
  #synced = false;
  #observer: ListWatchHandler | undefined;

  constructor(kubeConfig: KubeCredentials, options: ClusterNadSourceOptions = {}) {
    this.#log = options.logger ?? silentLogger;
    this.#onEvent = options.onEvent ?? (() => {});
    this.#lookupTimeoutMs = Math.min(options.lookupTimeoutMs ?? MAX_LOOKUP_TIMEOUT_MS, MAX_LOOKUP_TIMEOUT_MS);
    this.#missing = new LRUCache<string, true>({
      max: MAX_MISSING_NADS_REMEMBERED,
      ttl: options.missingNadMemoryMs ?? MISSING_NAD_MEMORY_MS,
    });
    this.#listTimeoutMs = options.listTimeoutMs ?? 60_000;
    this.#listPageSize = options.listPageSize ?? 500;
    this.#backoffInitialMs = options.backoff?.initialMs ?? 500;
    this.#backoffMaxMs = options.backoff?.maxMs ?? 30_000;
    this.#minWatchMs = options.minWatchMs ?? 1_000;
    this.#resourceNameKeys = options.resourceNameKeys;
    this.#observer = options.observer;
    // A silent socket is dead after the list deadline (lookups have their own, shorter one).
    this.#transport = kubeTransport(kubeConfig, this.#listTimeoutMs);
  }

  /** Resolves after the first successful list; keeps retrying (with backoff) until then. */
  start(): Promise<void> {
    this.#listWatch ??= new ListWatch({
      transport: this.#transport,
      path: NADS_PATH,
      listAccept: 'application/json',
      watchAccept: 'application/json',
      pageSize: this.#listPageSize,
      pageTimeoutMs: this.#listTimeoutMs,
      backoffMs: this.#backoffInitialMs,
      maxBackoffMs: this.#backoffMaxMs,
      minWatchMs: this.#minWatchMs,
      onError: (err, retry) => this.#failed(err, retry),
      handler: {
        resync: () => ((this.#relisted = new Map()), this.#missing.clear(), this.#observer?.resync()),
        upsert: (obj) => (this.#upsert(obj), this.#observer?.upsert(obj)),
        remove: (obj) => (this.#remove(obj), this.#observer?.remove(obj)),
        resynced: () => (this.#resynced(), this.#observer?.resynced()),
      },
    });
    return this.#listWatch.start();
  }

  /** Sets the observer of the raw objects; before start(), so that it sees the first list. */
  observe(observer: ListWatchHandler): void {
    this.#observer = observer;
  }

  async stop(): Promise<void> {
    const listWatch = this.#listWatch;
    this.#listWatch = undefined;
    await listWatch?.stop();
  }

  synced(): boolean {
    return this.#synced;
  }
  staleSince(): number | undefined {
    return this.#synced ? this.#listWatch?.staleSince() : undefined;
  }
  /** Why the list/watch is failing, while it retries (undefined once it works). */
  lastFailure(): { message: string; statusCode?: number } | undefined {
    return this.#listWatch?.lastFailure();
  }
  size(): number {
    return this.#nads.size;
  }
  get(namespace: string, name: string): Nad | undefined {
    return this.#nads.get(nadKey(namespace, name));
  }
  list(): Nad[] {
    return [...this.#nads.values()];
  }

  async lookup(namespace: string, name: string): Promise<NadLookup> {
    const cached = this.get(namespace, name);
    if (cached) {
      this.#onEvent({ type: 'lookup', outcome: 'cache-hit' });
      return { status: 'found', nad: cached };
    }
    const k = nadKey(namespace, name);
    // Only while the watch works: a failing one may not have brought a NAD created since the GET.
    if (this.#missing.get(k) && this.#synced && this.staleSince() === undefined) {
      this.#onEvent({ type: 'lookup', outcome: 'not-found-remembered' });
      return { status: 'not-found', remembered: true };
    }
    // Concurrent requests naming the same missing NAD share one GET.
    let pending = this.#inflight.get(k);
    if (!pending) {
      pending = this.#fetch(namespace, name).finally(() => this.#inflight.delete(k));
      this.#inflight.set(k, pending);
    }
    return pending;
  }

  /** A full list replaces the cache at once; after the first, its differences are reported as events. */
  #resynced(): void {
    const next = this.#relisted ?? new Map<string, Nad>();
    this.#relisted = undefined;
    if (this.#synced) {
      for (const [k, nad] of next) {
        const old = this.#nads.get(k);
        if (!old) this.#onEvent({ type: 'add' });
        else if (old.resourceVersion !== nad.resourceVersion) this.#onEvent({ type: 'update' });
      }
      for (const k of this.#nads.keys()) if (!next.has(k)) this.#onEvent({ type: 'delete' });
    }
    this.#nads = next;
    this.#log.info({ nads: next.size }, 'NADs listed from the cluster');
    this.#onEvent({ type: 'sync' });
    this.#synced = true;
  }

  #toNad(obj: KubeObject): Nad | undefined {
    const meta = obj.metadata;
    if (!meta || typeof meta.name !== 'string' || typeof meta.namespace !== 'string') return undefined;
    const existing = this.#nads.get(nadKey(meta.namespace, meta.name));
    // Same object version as cached: keep the parsed entry (relists and replays are free).
    if (
      existing &&
      existing.resourceVersion !== undefined &&
      existing.resourceVersion === meta.resourceVersion &&
      existing.uid === meta.uid
    )
      return existing;
    const nad = nadFromObject(obj, { resourceNameKeys: this.#resourceNameKeys });
    if (nad.problems.length > 0) this.#log.debug({ nad: nadKey(nad.namespace, nad.name), problems: nad.problems }, 'NAD has problems');
    return nad;
  }

  #upsert(obj: KubeObject): void {
    const nad = this.#toNad(obj);
    if (!nad) return;
    const k = nadKey(nad.namespace, nad.name);
    this.#missing.delete(k);
    if (nad !== this.#nads.get(k) && cachedNadChars(nad) > MAX_CACHED_NAD_CHARS) {
      // Too big to keep: out of the cache (a lookup then GETs it and judges it in full).
      this.#relisted?.delete(k);
      if (this.#nads.delete(k)) this.#onEvent({ type: 'delete' });
      this.#log.warn({ nad: k, bound: MAX_CACHED_NAD_CHARS }, 'NAD too large to cache; read on demand by the reviews that name it');
      return;
    }
    if (this.#relisted) return void this.#relisted.set(k, nad);
    const old = this.#nads.get(k);
    if (old === nad) return;
    this.#nads.set(k, nad);
    this.#onEvent({ type: old ? 'update' : 'add' });
  }

  #remove(obj: KubeObject): void {
    const ns = obj.metadata?.namespace;
    const name = obj.metadata?.name;
    if (ns === undefined || name === undefined) return;
    if (this.#nads.delete(nadKey(ns, name))) this.#onEvent({ type: 'delete' });
  }

  #failed(err: unknown, retry: RetryInfo): void {
    this.#onEvent({ type: 'error', outcome: this.#synced ? 'watch' : 'list' });
    this.#log.warn(
      { err: describeKubeError(err), attempt: retry.attempt, retryInMs: retry.delayMs },
      this.#synced ? 'NAD watch failed; reconnecting' : 'cannot list NADs; retrying',
    );
  }

  async #fetch(namespace: string, name: string): Promise<NadLookup> {
    const started = performance.now();
    const slot = await this.#slots.acquire(this.#lookupTimeoutMs);
    if (slot !== 'ok') {
      this.#onEvent({ type: 'lookup', outcome: 'unavailable' });
      return {
        status: 'unavailable',
        reason:
          slot === 'full'
            ? `too many NAD lookups in progress (${MAX_NAD_GETS_IN_FLIGHT} running, ${MAX_NAD_GETS_WAITING} waiting)`
            : `no NAD lookup slot free within ${this.#lookupTimeoutMs} ms (${MAX_NAD_GETS_IN_FLIGHT} running)`,
      };
    }
    let result: NadLookup;
    try {
      // The wait for a slot counts against the same deadline.
      const timeoutMs = Math.max(1, Math.round(this.#lookupTimeoutMs - (performance.now() - started)));
      const path = `/apis/${NAD_GROUP}/${NAD_VERSION}/namespaces/${encodeURIComponent(namespace)}/${NAD_PLURAL}/${encodeURIComponent(name)}`;
      const got = await getObject(this.#transport, path, { timeoutMs });
      if (got.status === 'ok') result = { status: 'found', nad: nadFromObject(got.object, { resourceNameKeys: this.#resourceNameKeys }) };
      else if (got.status === 'not-found') {
        result = { status: 'not-found' };
        // Unless the watch brought it while the GET ran, into the cache or into a relist under
        // way (a stale read must not hide it).
        const k = nadKey(namespace, name);
        if (!this.#nads.has(k) && !this.#relisted?.has(k)) this.#missing.set(k, true);
      } else {
        // Debug only: the review that asked logs one line naming every NAD it could not read.
        this.#log.debug({ nad: nadKey(namespace, name), err: got.reason }, 'NAD lookup failed');
        // A timeout names the lookup's whole deadline, not what the wait for a slot left of it.
        result = {
          status: 'unavailable',
          reason: got.timedOut
            ? `the API server did not answer within ${this.#lookupTimeoutMs} ms`
            : `cannot read NAD ${namespace}/${name} from the API server: ${got.reason}`,
        };
      }
    } finally {
      this.#slots.release();
    }
    this.#onEvent({ type: 'lookup', outcome: result.status });
    return result;
  }
}
