// Namespace labels for policy selection. The apiserver labels every namespace with
// kubernetes.io/metadata.name; offline and file modes know only that (plus a static map).
import type { PolicyLogger } from './log.js';
import {
  ListWatch,
  METADATA_ACCEPT,
  METADATA_WATCH_ACCEPT,
  transportFor,
  WatchedCache,
  type KubeTransport,
  type KubeCredentials,
} from '../kube/index.js';

export const NAME_LABEL = 'kubernetes.io/metadata.name';

export interface NamespaceLabelSource {
  labels(namespace: string): Record<string, string>;
}

export class StaticNamespaceLabels implements NamespaceLabelSource {
  constructor(private readonly extra: Readonly<Record<string, Record<string, string>>> = {}) {}

  labels(namespace: string): Record<string, string> {
    return { ...(Object.hasOwn(this.extra, namespace) ? this.extra[namespace] : {}), [NAME_LABEL]: namespace };
  }
}

/** Namespace labels from a metadata-only list/watch of namespaces. */
export class ClusterNamespaceLabels extends WatchedCache implements NamespaceLabelSource {
  private byName = new Map<string, Record<string, string>>();
  private next: Map<string, Record<string, string>> | undefined;
  protected readonly listWatch: ListWatch;

  constructor(kc: KubeCredentials | undefined, options: { transport?: KubeTransport; logger?: PolicyLogger; backoffMs?: number } = {}) {
    super();
    this.listWatch = new ListWatch({
      transport: transportFor('ClusterNamespaceLabels', kc, options.transport),
      path: '/api/v1/namespaces',
      listAccept: METADATA_ACCEPT,
      watchAccept: METADATA_WATCH_ACCEPT,
      backoffMs: options.backoffMs,
      onError: (err) => options.logger?.warn({ err: String(err) }, 'namespace watch failed; retrying'),
      handler: {
        resync: () => void (this.next = new Map()),
        upsert: (o) => {
          const name = o.metadata?.name;
          if (!name) return;
          (this.next ?? this.byName).set(name, { ...o.metadata?.labels });
        },
        remove: (o) => void (o.metadata?.name && this.byName.delete(o.metadata.name)),
        resynced: () => {
          if (this.next) this.byName = this.next;
          this.next = undefined;
        },
      },
    });
  }

  /** Labels of a namespace; one not seen yet carries at least the name label. */
  labels(namespace: string): Record<string, string> {
    return { ...this.byName.get(namespace), [NAME_LABEL]: namespace };
  }
}
