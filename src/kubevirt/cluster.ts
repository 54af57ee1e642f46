// KubeVirt's binding plugin registry from the cluster: a list/watch of kubevirt.io/v1 KubeVirt
// objects in every namespace (as virt-controller's own informer), of which only a bounded summary
// is kept (bindings.ts); objects are dropped once read. No KubeVirt CRD (404) or no permission
// (403): the registry is unknown, the watch keeps retrying, and nothing else waits for it.
import { ListWatch, transportFor, WatchedCache, type KubeCredentials, type KubeObject, type KubeTransport } from '../kube/index.js';
import { BINDING_LIMITS, chooseRegistry, kubeVirtSummary, type BindingRegistry, type KubeVirtSummary } from './bindings.js';

export const KUBEVIRTS_PATH = '/apis/kubevirt.io/v1/kubevirts';

export interface KubeVirtLogger {
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

export interface ClusterBindingRegistryOptions {
  transport?: KubeTransport;
  logger?: KubeVirtLogger;
  backoffMs?: number;
  /** Bounds (tests); default BINDING_LIMITS. */
  limits?: { objects: number; droppedNames: number };
}

const keyOf = (o: KubeObject | null | undefined): string | undefined =>
  typeof o === 'object' && o !== null && typeof o.metadata?.name === 'string'
    ? `${o.metadata.namespace ?? ''}/${o.metadata.name}`
    : undefined;

export class ClusterBindingRegistry extends WatchedCache {
  private kept = new Map<string, KubeVirtSummary>();
  /** Objects past the total bound, by key; `lost`: even their names were past their bound. */
  private dropped = new Set<string>();
  private lost = false;
  private relisting = false;
  private current: BindingRegistry = { known: false, reason: 'KubeVirt objects not read yet' };
  private readonly limits: { objects: number; droppedNames: number };
  protected readonly listWatch: ListWatch;

  constructor(kc: KubeCredentials | undefined, options: ClusterBindingRegistryOptions = {}) {
    super();
    this.limits = options.limits ?? BINDING_LIMITS;
    let said404 = false;
    this.listWatch = new ListWatch({
      transport: transportFor('ClusterBindingRegistry', kc, options.transport),
      path: KUBEVIRTS_PATH,
      // Whole objects: the registry is in the spec, the phase in the status (a list item is
      // bounded by the list reader, MAX_ITEM_BYTES; only the summary is kept).
      listAccept: 'application/json',
      watchAccept: 'application/json',
      backoffMs: options.backoffMs,
      maxBackoffMs: 60_000,
      onError: (err, retry) => {
        const code = (err as { statusCode?: unknown }).statusCode;
        // Most clusters run no KubeVirt: said once, not every minute.
        if (code === 404) {
          if (!said404) options.logger?.info({}, 'no KubeVirt CRD (kubevirts.kubevirt.io): binding plugins unknown; retrying');
          said404 = true;
        } else options.logger?.warn({ err: String(err), attempt: retry.attempt }, 'KubeVirt watch failed; retrying');
      },
      handler: {
        resync: () => {
          this.relisting = true;
          this.kept = new Map();
          this.dropped = new Set();
          this.lost = false;
        },
        upsert: (o) => this.upsert(o),
        remove: (o) => {
          const key = keyOf(o);
          if (key === undefined) return;
          if (!this.kept.delete(key)) this.dropped.delete(key);
          this.recompute();
        },
        resynced: () => {
          this.relisting = false;
          this.recompute();
        },
      },
    });
  }

  private upsert(o: KubeObject): void {
    const key = keyOf(o);
    const summary = kubeVirtSummary(o);
    if (key === undefined || summary === undefined) return;
    if (this.kept.has(key) || this.kept.size < this.limits.objects) this.kept.set(key, summary);
    else if (this.dropped.size < this.limits.droppedNames) this.dropped.add(key);
    else this.lost = true; // until the next relist: the registry stays unknown
    if (!this.relisting) this.recompute();
  }

  private recompute(): void {
    this.current = chooseRegistry(this.kept.values(), this.dropped.size > 0 || this.lost ? this.limits.objects : undefined);
  }

  /** The registry virt-controller uses, or why it is not known here. */
  registry(): BindingRegistry {
    if (this.synced()) return this.current;
    const failure = this.lastFailure();
    if (failure?.statusCode === 404) return { known: false, reason: 'KubeVirt is not installed (no kubevirts.kubevirt.io)' };
    if (failure?.statusCode === 403) return { known: false, reason: 'netattach may not list kubevirts.kubevirt.io' };
    return { known: false, reason: failure ? `KubeVirt objects cannot be read: ${failure.message}` : 'KubeVirt objects not read yet' };
  }

  /** How many KubeVirt objects are held (tests, metrics). */
  size(): { kept: number; dropped: number } {
    return { kept: this.kept.size, dropped: this.dropped.size };
  }
}
