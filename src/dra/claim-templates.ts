// ResourceClaimTemplates of every namespace, from a list/watch that keeps only `name -> namespaces`
// and each template's device requests (the DeviceClasses they name, and the resourceName their
// selectors require: for the `netattach.io/networkClaims` check); objects are dropped once read. On
// a miss, one bounded GET (a template created a moment before its pod), metadata only.
import { LRUCache } from 'lru-cache';
import {
  getObject,
  ListWatch,
  RequestSlots,
  METADATA_ACCEPT,
  transportFor,
  WatchedCache,
  type KubeCredentials,
  type KubeObject,
  type KubeTransport,
} from '../kube/index.js';
import type { DraLogger } from './device-classes.js';
import { templateDevices } from './selectors.js';
import { RESOURCE_API, type TemplateDevices, type TemplateLookup } from './types.js';

/**
 * Bounds on the template GETs reviews cause on a cache miss, as for NADs (src/nads/limits.ts):
 * 16 reviews naming 40 explicit-claim NADs each had 640 GETs in flight (issue 37, finding 5).
 */
export const TEMPLATE_LIMITS = {
  /** Distinct templates one review looks up; past it they are unavailable (503, retryable). */
  perReview: 32,
  /** GETs in flight at once, all reviews together. */
  inFlight: 16,
  /** Lookups waiting for a slot, each at most its deadline; past it, unavailable at once. */
  waiting: 256,
  /** A template the API server said is absent is answered not-found without a GET this long... */
  missingMemoryMs: 3_000,
  /** ...and this many such names are remembered (least recently used dropped first). */
  missingRemembered: 1_024,
} as const;

export class ClusterClaimTemplates extends WatchedCache {
  private byName = new Map<string, Set<string>>();
  private next: Map<string, Set<string>> | undefined;
  /** `namespace/name` -> its device requests. */
  private devices = new Map<string, TemplateDevices>();
  private nextDevices: Map<string, TemplateDevices> | undefined;
  private readonly transport: KubeTransport;
  protected readonly listWatch: ListWatch;
  private readonly slots = new RequestSlots(TEMPLATE_LIMITS.inFlight, TEMPLATE_LIMITS.waiting);
  /** Lookups under way, by `namespace/name`: a second review naming one waits for the same GET. */
  private readonly inflight = new Map<string, Promise<TemplateLookup>>();
  /** Templates the API server said are absent; forgotten when the watch brings them. */
  private readonly missing = new LRUCache<string, true>({ max: TEMPLATE_LIMITS.missingRemembered, ttl: TEMPLATE_LIMITS.missingMemoryMs });

  constructor(kc: KubeCredentials | undefined, options: { transport?: KubeTransport; logger?: DraLogger; backoffMs?: number } = {}) {
    super();
    this.transport = transportFor('ClusterClaimTemplates', kc, options.transport);
    const add = (map: Map<string, Set<string>>, devices: Map<string, TemplateDevices>, o: KubeObject): void => {
      const { name, namespace } = o.metadata ?? {};
      if (!name || !namespace) return;
      this.missing.delete(`${namespace}/${name}`);
      let set = map.get(name);
      if (!set) map.set(name, (set = new Set()));
      set.add(namespace);
      devices.set(`${namespace}/${name}`, templateDevices(o));
    };
    this.listWatch = new ListWatch({
      transport: this.transport,
      path: `${RESOURCE_API}/resourceclaimtemplates`,
      // Whole objects: the requests are in the spec (templates are small; only a summary is kept).
      listAccept: 'application/json',
      watchAccept: 'application/json',
      backoffMs: options.backoffMs,
      maxBackoffMs: 60_000,
      onError: (err) => options.logger?.warn({ err: String(err) }, 'ResourceClaimTemplate watch failed; retrying'),
      handler: {
        resync: () => void ((this.next = new Map()), (this.nextDevices = new Map())),
        upsert: (o) => add(this.next ?? this.byName, this.nextDevices ?? this.devices, o),
        remove: (o) => {
          const { name, namespace } = o.metadata ?? {};
          if (name && namespace) this.byName.get(name)?.delete(namespace);
          if (name && namespace) this.devices.delete(`${namespace}/${name}`);
        },
        resynced: () => {
          if (this.next) this.byName = this.next;
          if (this.nextDevices) this.devices = this.nextDevices;
          this.next = undefined;
          this.nextDevices = undefined;
        },
      },
    });
  }

  /** Every template held, for `netattach check --cluster`. */
  list(): Array<{ namespace: string; name: string }> {
    const out: Array<{ namespace: string; name: string }> = [];
    for (const [name, namespaces] of this.byName) for (const namespace of namespaces) out.push({ namespace, name });
    return out;
  }

  /** From the cache only. */
  template(namespace: string, name: string): TemplateLookup {
    if (this.byName.get(name)?.has(namespace)) return { status: 'found' };
    if (!this.synced()) {
      const failure = this.lastFailure();
      return {
        status: 'unavailable',
        reason: failure ? `ResourceClaimTemplates cannot be read: ${failure.message}` : 'ResourceClaimTemplates not read yet',
      };
    }
    return { status: 'not-found' };
  }

  /** The device requests of a template the watch holds. */
  templateDevices(namespace: string, name: string): TemplateDevices | undefined {
    return this.devices.get(`${namespace}/${name}`);
  }

  templateNamespaces(name: string): readonly string[] | undefined {
    if (!this.synced()) return undefined;
    return [...(this.byName.get(name) ?? [])].sort();
  }

  /** The cache, and on a miss one GET within `timeoutMs`. */
  lookup(namespace: string, name: string, timeoutMs: number): Promise<TemplateLookup> {
    const cached = this.template(namespace, name);
    if (cached.status === 'found') return Promise.resolve(cached);
    const key = `${namespace}/${name}`;
    // Not while the watch fails: then only a GET can tell.
    if (this.staleSince() === undefined && this.synced() && this.missing.get(key)) return Promise.resolve({ status: 'not-found' });
    let pending = this.inflight.get(key);
    if (!pending) {
      pending = this.fetch(namespace, name, timeoutMs).finally(() => this.inflight.delete(key));
      this.inflight.set(key, pending);
    }
    return pending;
  }

  private async fetch(namespace: string, name: string, timeoutMs: number): Promise<TemplateLookup> {
    const started = performance.now();
    const slot = await this.slots.acquire(timeoutMs);
    if (slot !== 'ok') {
      const { inFlight, waiting } = TEMPLATE_LIMITS;
      return {
        status: 'unavailable',
        reason:
          slot === 'full'
            ? `too many ResourceClaimTemplate lookups in progress (${inFlight} running, ${waiting} waiting)`
            : `no ResourceClaimTemplate lookup slot free within ${timeoutMs} ms`,
      };
    }
    try {
      const left = Math.max(1, Math.round(timeoutMs - (performance.now() - started)));
      const path = `${RESOURCE_API}/namespaces/${encodeURIComponent(namespace)}/resourceclaimtemplates/${encodeURIComponent(name)}`;
      const got = await getObject(this.transport, path, { timeoutMs: left, accept: METADATA_ACCEPT });
      if (got.status === 'ok') return { status: 'found' };
      if (got.status === 'not-found') {
        // Unless the watch brought it while the GET ran.
        if (!this.byName.get(name)?.has(namespace) && !this.next?.get(name)?.has(namespace)) this.missing.set(`${namespace}/${name}`, true);
        return { status: 'not-found' };
      }
      return { status: 'unavailable', reason: got.reason };
    } finally {
      this.slots.release();
    }
  }
}
