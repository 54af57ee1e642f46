// ResourceClaimTemplates of every namespace, from a list/watch that keeps only `name -> namespaces`
// and each template's device requests (the DeviceClasses they name, and the resourceName their
// selectors require: for the `netattach.io/networkClaims` check); objects are dropped once read. On
// a miss, one bounded GET (a template created a moment before its pod), metadata only.
import {
  getObject,
  ListWatch,
  METADATA_ACCEPT,
  METADATA_WATCH_ACCEPT,
  transportFor,
  WatchedCache,
  type KubeCredentials,
  type KubeObject,
  type KubeTransport,
} from '../kube/index.js';
import type { DraLogger } from './device-classes.js';
import { templateDevices } from './selectors.js';
import { RESOURCE_API, type TemplateDevices, type TemplateLookup } from './types.js';

export class ClusterClaimTemplates extends WatchedCache {
  private byName = new Map<string, Set<string>>();
  private next: Map<string, Set<string>> | undefined;
  /** `namespace/name` -> its device requests. */
  private devices = new Map<string, TemplateDevices>();
  private nextDevices: Map<string, TemplateDevices> | undefined;
  private readonly transport: KubeTransport;
  protected readonly listWatch: ListWatch;

  constructor(kc: KubeCredentials | undefined, options: { transport?: KubeTransport; logger?: DraLogger; backoffMs?: number } = {}) {
    super();
    this.transport = transportFor('ClusterClaimTemplates', kc, options.transport);
    const add = (map: Map<string, Set<string>>, devices: Map<string, TemplateDevices>, o: KubeObject): void => {
      const { name, namespace } = o.metadata ?? {};
      if (!name || !namespace) return;
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
      return { status: 'unavailable', reason: failure ? `ResourceClaimTemplates cannot be read: ${failure.message}` : 'ResourceClaimTemplates not read yet' };
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
  async lookup(namespace: string, name: string, timeoutMs: number): Promise<TemplateLookup> {
    const cached = this.template(namespace, name);
    if (cached.status === 'found') return cached;
    const path = `${RESOURCE_API}/namespaces/${encodeURIComponent(namespace)}/resourceclaimtemplates/${encodeURIComponent(name)}`;
    const got = await getObject(this.transport, path, { timeoutMs, accept: METADATA_ACCEPT });
    if (got.status === 'ok') return { status: 'found' };
    if (got.status === 'not-found') return { status: 'not-found' };
    return { status: 'unavailable', reason: got.reason };
  }
}
