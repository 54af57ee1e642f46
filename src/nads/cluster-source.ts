// NADs from the cluster: an informer (list + watch of every namespace) keeps the cache, and a
// cache miss on the request path does one GET bounded by a deadline, so a NAD created a
// moment ago is found while an unreachable API server yields `unavailable`, never a hang.
//
// client-node 1.3's informer re-watches by itself when a watch ends cleanly, but after an error
// (list failure, refused connection, dropped stream) it emits 'error' and stops: this source
// restarts it with capped exponential backoff, logging each failure.
import { ApiException, CustomObjectsApi, ServerConfiguration, createConfiguration, makeInformer, type Informer, type KubeConfig, type KubernetesListObject, type KubernetesObject } from '@kubernetes/client-node';
import { abortableHttpLibrary } from './abortable-http.js';
import { silentLogger, type NadLogger, type NadSourceEventHandler } from './logger.js';
import { nadFromObject } from './model.js';
import { NAD_GROUP, NAD_PLURAL, NAD_VERSION, isObject } from './object.js';
import { nadKey, type Nad, type NadLookup, type NadSource } from './types.js';

export interface ClusterNadSourceOptions {
  logger?: NadLogger;
  /** Deadline of the GET done on a cache miss (default and maximum 1000 ms). */
  lookupTimeoutMs?: number;
  /** Deadline of each page of the informer's list (default 60 s). */
  listTimeoutMs?: number;
  /** Objects per list page (default 500, as client-go's reflector). */
  listPageSize?: number;
  /** Backoff between informer restarts: starts at `initialMs`, doubles, capped at `maxMs`. */
  backoff?: { initialMs?: number; maxMs?: number };
  /** A watch that ends sooner than this after starting counts as a failure (no hot reconnect loop). */
  minWatchMs?: number;
  resourceNameKeys?: readonly string[];
  onEvent?: NadSourceEventHandler;
}

const WATCH_PATH = `/apis/${NAD_GROUP}/${NAD_VERSION}/${NAD_PLURAL}`;
const MAX_LOOKUP_TIMEOUT_MS = 1000;

interface NadList {
  items?: unknown[];
  metadata?: { resourceVersion?: string; continue?: string };
}

export class ClusterNadSource implements NadSource {
  readonly kind = 'cluster' as const;
  readonly #kubeConfig: KubeConfig;
  readonly #log: NadLogger;
  readonly #onEvent: NadSourceEventHandler;
  readonly #lookupTimeoutMs: number;
  readonly #listTimeoutMs: number;
  readonly #listPageSize: number;
  readonly #backoffInitialMs: number;
  readonly #backoffMaxMs: number;
  readonly #minWatchMs: number;
  readonly #resourceNameKeys: readonly string[] | undefined;
  readonly #informer: Informer<KubernetesObject>;
  #nads = new Map<string, Nad>();
  readonly #inflight = new Map<string, Promise<NadLookup>>();
  readonly #skeletons = new WeakSet<object>();
  #synced = false;
  #stopped = true;
  #failures = 0;
  #lastConnectAt = 0;
  #restartTimer: NodeJS.Timeout | undefined;
  #syncWaiters: Array<() => void> = [];

  constructor(kubeConfig: KubeConfig, options: ClusterNadSourceOptions = {}) {
    this.#kubeConfig = kubeConfig;
    this.#log = options.logger ?? silentLogger;
    this.#onEvent = options.onEvent ?? (() => {});
    this.#lookupTimeoutMs = Math.min(options.lookupTimeoutMs ?? MAX_LOOKUP_TIMEOUT_MS, MAX_LOOKUP_TIMEOUT_MS);
    this.#listTimeoutMs = options.listTimeoutMs ?? 60_000;
    this.#listPageSize = options.listPageSize ?? 500;
    this.#backoffInitialMs = options.backoff?.initialMs ?? 500;
    this.#backoffMaxMs = options.backoff?.maxMs ?? 30_000;
    this.#minWatchMs = options.minWatchMs ?? 1_000;
    this.#resourceNameKeys = options.resourceNameKeys;

    this.#informer = makeInformer(kubeConfig, WATCH_PATH, () => this.#list());
    this.#informer.on('add', (obj) => this.#put(obj));
    this.#informer.on('update', (obj) => this.#put(obj));
    this.#informer.on('delete', (obj) => this.#remove(obj));
    this.#informer.on('error', (err) => this.#failed(err));
    this.#informer.on('connect', () => this.#connecting());
  }

  /** Resolves after the first successful list; keeps retrying (with backoff) until then. */
  start(): Promise<void> {
    if (!this.#stopped) return this.#whenSynced();
    this.#stopped = false;
    void this.#run();
    return this.#whenSynced();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#restartTimer) clearTimeout(this.#restartTimer);
    this.#restartTimer = undefined;
    await this.#informer.stop();
  }

  synced(): boolean {
    return this.#synced;
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
    // Concurrent requests naming the same missing NAD share one GET.
    let pending = this.#inflight.get(k);
    if (!pending) {
      pending = this.#fetch(namespace, name).finally(() => this.#inflight.delete(k));
      this.#inflight.set(k, pending);
    }
    return pending;
  }

  #whenSynced(): Promise<void> {
    if (this.#synced) return Promise.resolve();
    return new Promise((resolve) => this.#syncWaiters.push(resolve));
  }

  async #run(): Promise<void> {
    if (this.#stopped) return;
    this.#lastConnectAt = 0; // this connect follows a deliberate restart, not a watch that just ended
    try {
      await this.#informer.start();
    } catch (err) {
      this.#failed(err);
    }
  }

  /** The API bound to one deadline: client-node's default HTTP library cannot be cancelled. */
  #api(signal: AbortSignal): CustomObjectsApi {
    const cluster = this.#kubeConfig.getCurrentCluster();
    if (!cluster) throw new Error('the kubeconfig has no current cluster');
    return new CustomObjectsApi(
      createConfiguration({
        baseServer: new ServerConfiguration(cluster.server, {}),
        authMethods: { default: this.#kubeConfig },
        httpApi: abortableHttpLibrary(signal),
      }),
    );
  }

  /**
   * The informer's list, in pages so that the peak memory of a large cluster is one page, not
   * every full object at once. The informer keeps what this returns: skeletons, not objects.
   */
  async #list(): Promise<KubernetesListObject<KubernetesObject>> {
    const entries: Nad[] = [];
    const skeletons: KubernetesObject[] = [];
    let resourceVersion: string | undefined;
    let next: string | undefined;
    do {
      const signal = AbortSignal.timeout(this.#listTimeoutMs);
      const page = (await this.#api(signal).listClusterCustomObject({
        group: NAD_GROUP,
        version: NAD_VERSION,
        plural: NAD_PLURAL,
        limit: this.#listPageSize,
        ...(next ? { _continue: next } : {}),
      })) as NadList;
      for (const item of Array.isArray(page.items) ? page.items : []) {
        const nad = this.#toNad(item);
        if (nad) entries.push(nad);
        skeletons.push(this.#skeleton(item));
      }
      resourceVersion = page.metadata?.resourceVersion;
      next = page.metadata?.continue || undefined;
    } while (next);
    this.#replaceAll(entries);
    return { metadata: resourceVersion ? { resourceVersion } : {}, items: skeletons } as KubernetesListObject<KubernetesObject>;
  }

  /** A full list replaces the cache at once; the informer's own add/update callbacks that follow are no-ops. */
  #replaceAll(entries: Nad[]): void {
    const next = new Map<string, Nad>();
    for (const nad of entries) next.set(nadKey(nad.namespace, nad.name), nad);
    if (this.#synced) {
      for (const [k, nad] of next) {
        const old = this.#nads.get(k);
        if (!old) this.#onEvent({ type: 'add' });
        else if (old.resourceVersion !== nad.resourceVersion) this.#onEvent({ type: 'update' });
      }
      for (const k of this.#nads.keys()) if (!next.has(k)) this.#onEvent({ type: 'delete' });
    }
    this.#nads = next;
    this.#failures = 0;
    this.#log.info({ nads: next.size }, 'NADs listed from the cluster');
    this.#onEvent({ type: 'sync' });
    if (!this.#synced) {
      this.#synced = true;
      for (const resolve of this.#syncWaiters.splice(0)) resolve();
    }
  }

  #toNad(obj: unknown): Nad | undefined {
    const meta = isObject(obj) && isObject(obj.metadata) ? obj.metadata : undefined;
    if (!meta || typeof meta.name !== 'string' || typeof meta.namespace !== 'string') return undefined;
    const existing = this.#nads.get(nadKey(meta.namespace, meta.name));
    // Same object version as cached: keep the parsed entry (relists and replays are free).
    if (existing && existing.resourceVersion !== undefined && existing.resourceVersion === meta.resourceVersion && existing.uid === meta.uid) return existing;
    const nad = nadFromObject(obj, { resourceNameKeys: this.#resourceNameKeys });
    if (nad.problems.length > 0) this.#log.debug({ nad: nadKey(nad.namespace, nad.name), problems: nad.problems }, 'NAD has problems');
    return nad;
  }

  /** What client-node's ListWatch uses of a cached object: its name, namespace and version. */
  #skeleton(obj: unknown): KubernetesObject {
    const meta = isObject(obj) && isObject(obj.metadata) ? obj.metadata : {};
    const skeleton: KubernetesObject = { metadata: {} };
    for (const k of ['name', 'namespace', 'resourceVersion', 'uid'] as const) if (typeof meta[k] === 'string') skeleton.metadata![k] = meta[k];
    this.#skeletons.add(skeleton);
    return skeleton;
  }

  #put(obj: KubernetesObject): void {
    if (this.#skeletons.has(obj)) return; // from a list: its entry is already cached
    const nad = this.#toNad(obj);
    this.#slim(obj);
    if (!nad) return;
    const k = nadKey(nad.namespace, nad.name);
    const old = this.#nads.get(k);
    this.#failures = 0; // the watch delivers: healthy again
    if (old === nad) return;
    this.#nads.set(k, nad);
    this.#onEvent({ type: old ? 'update' : 'add' });
  }

  /** Empties a watched object in place once its entry is built: the informer keeps it forever. */
  #slim(obj: KubernetesObject): void {
    const o = obj as unknown as Record<string, unknown>;
    for (const k of Object.keys(o)) if (k !== 'metadata') delete o[k];
    const meta = obj.metadata as Record<string, unknown> | undefined;
    if (meta) for (const k of Object.keys(meta)) if (k !== 'name' && k !== 'namespace' && k !== 'resourceVersion' && k !== 'uid') delete meta[k];
  }

  #remove(obj: KubernetesObject): void {
    const ns = obj.metadata?.namespace;
    const name = obj.metadata?.name;
    if (ns === undefined || name === undefined) return;
    this.#failures = 0;
    if (this.#nads.delete(nadKey(ns, name))) this.#onEvent({ type: 'delete' });
  }

  #connecting(): void {
    const now = Date.now();
    const tooSoon = this.#lastConnectAt !== 0 && now - this.#lastConnectAt < this.#minWatchMs;
    if (this.#lastConnectAt !== 0 && !tooSoon) this.#failures = 0; // the last watch lived long enough
    this.#lastConnectAt = now;
    if (!tooSoon || this.#restartTimer) return;
    // The informer re-watches at once when a watch ends cleanly; a server that keeps ending
    // watches immediately would make that a busy loop, so slow it down like a failure.
    void this.#informer.stop();
    this.#failed(new Error('the watch ended right after it started'));
  }

  #failed(err: unknown): void {
    // Our own stop() aborts the watch request, which the informer reports as an error.
    if (this.#stopped || isAbort(err)) return;
    this.#onEvent({ type: 'error', outcome: this.#synced ? 'watch' : 'list' });
    if (this.#restartTimer) return;
    this.#failures++;
    const delay = Math.min(this.#backoffInitialMs * 2 ** (this.#failures - 1), this.#backoffMaxMs);
    this.#log.warn({ err: describeError(err), attempt: this.#failures, retryInMs: delay }, this.#synced ? 'NAD watch failed; reconnecting' : 'cannot list NADs; retrying');
    this.#restartTimer = setTimeout(() => {
      this.#restartTimer = undefined;
      void this.#run();
    }, delay);
    this.#restartTimer.unref();
  }

  async #fetch(namespace: string, name: string): Promise<NadLookup> {
    const signal = AbortSignal.timeout(this.#lookupTimeoutMs);
    let result: NadLookup;
    try {
      const obj: unknown = await this.#api(signal).getNamespacedCustomObject({ group: NAD_GROUP, version: NAD_VERSION, namespace, plural: NAD_PLURAL, name });
      const nad = nadFromObject(obj, { resourceNameKeys: this.#resourceNameKeys });
      result = { status: 'found', nad };
    } catch (err) {
      if (err instanceof ApiException && err.code === 404) result = { status: 'not-found' };
      else {
        const reason = signal.aborted
          ? `the API server did not answer within ${this.#lookupTimeoutMs} ms`
          : `cannot read NAD ${namespace}/${name} from the API server: ${describeError(err)}`;
        this.#log.warn({ nad: nadKey(namespace, name), err: describeError(err) }, 'NAD lookup failed');
        result = { status: 'unavailable', reason };
      }
    }
    this.#onEvent({ type: 'lookup', outcome: result.status });
    return result;
  }
}

const isAbort = (err: unknown): boolean =>
  err instanceof Error && (err.name === 'AbortError' || (err as { type?: string }).type === 'aborted');

/** A short, secret-free description: status code and Status reason, or the error code. */
export function describeError(err: unknown): string {
  if (err instanceof ApiException) {
    const body: unknown = typeof err.body === 'string' ? safeJson(err.body) : err.body;
    const status = isObject(body) ? [body.reason, body.message].filter((v) => typeof v === 'string').join(': ') : '';
    return `HTTP ${err.code}${status ? ` (${status})` : ''}`;
  }
  if (isObject(err)) {
    if (typeof err.statusCode === 'number') return `HTTP ${err.statusCode}`;
    if (typeof err.code === 'string') return err.code;
  }
  if (err instanceof Error) return err.name === 'Error' ? err.message.split('\n')[0]! : `${err.name}: ${err.message.split('\n')[0]}`;
  return String(err);
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
