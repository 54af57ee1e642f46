// DeviceClasses from a list/watch (cluster scoped and few: whole objects, of which only the name,
// creation time and spec.extendedResourceName are kept).
import { ListWatch, transportFor, WatchedCache, type KubeCredentials, type KubeObject, type KubeTransport } from '../kube/index.js';
import { celExpressions, requiredResourceNames } from './selectors.js';
import { byScheduler, RESOURCE_API, type DeviceClassInfo } from './types.js';

export interface DraLogger {
  warn(fields: object, message: string): void;
}

const JSON_ACCEPT = 'application/json';

export function deviceClassInfo(o: KubeObject): DeviceClassInfo | undefined {
  const name = o.metadata?.name;
  if (!name) return undefined;
  const spec = o['spec'];
  const ext = typeof spec === 'object' && spec !== null ? (spec as Record<string, unknown>)['extendedResourceName'] : undefined;
  const created = (o.metadata as { creationTimestamp?: unknown } | undefined)?.creationTimestamp;
  const resourceNames = requiredResourceNames(
    celExpressions(typeof spec === 'object' && spec !== null ? (spec as Record<string, unknown>)['selectors'] : undefined),
  );
  return {
    name,
    ...(typeof ext === 'string' && ext !== '' ? { extendedResourceName: ext } : {}),
    ...(typeof created === 'string' ? { creationTimestamp: created } : {}),
    ...(resourceNames ? { resourceNames } : {}),
  };
}

export class ClusterDeviceClasses extends WatchedCache {
  private byName = new Map<string, DeviceClassInfo>();
  private next: Map<string, DeviceClassInfo> | undefined;
  /** extendedResourceName -> classes, in the scheduler's order; rebuilt on change (classes are few). */
  private byResource = new Map<string, DeviceClassInfo[]>();
  protected readonly listWatch: ListWatch;

  constructor(kc: KubeCredentials | undefined, options: { transport?: KubeTransport; logger?: DraLogger; backoffMs?: number } = {}) {
    super();
    this.listWatch = new ListWatch({
      transport: transportFor('ClusterDeviceClasses', kc, options.transport),
      path: `${RESOURCE_API}/deviceclasses`,
      listAccept: JSON_ACCEPT,
      watchAccept: JSON_ACCEPT,
      backoffMs: options.backoffMs,
      maxBackoffMs: 60_000,
      onError: (err) => options.logger?.warn({ err: String(err) }, 'DeviceClass watch failed; retrying'),
      handler: {
        resync: () => void (this.next = new Map()),
        upsert: (o) => {
          const info = deviceClassInfo(o);
          if (!info) return;
          (this.next ?? this.byName).set(info.name, info);
          if (!this.next) this.reindex();
        },
        remove: (o) => {
          if (o.metadata?.name && this.byName.delete(o.metadata.name)) this.reindex();
        },
        resynced: () => {
          if (this.next) this.byName = this.next;
          this.next = undefined;
          this.reindex();
        },
      },
    });
  }

  private reindex(): void {
    const index = new Map<string, DeviceClassInfo[]>();
    for (const c of this.byName.values()) {
      if (!c.extendedResourceName) continue;
      const list = index.get(c.extendedResourceName) ?? [];
      list.push(c);
      index.set(c.extendedResourceName, list);
    }
    for (const list of index.values()) list.sort(byScheduler);
    this.byResource = index;
  }

  classesFor(resource: string): readonly DeviceClassInfo[] {
    return this.byResource.get(resource) ?? [];
  }

  deviceClass(name: string): DeviceClassInfo | undefined {
    return this.byName.get(name);
  }

  list(): DeviceClassInfo[] {
    return [...this.byName.values()];
  }
}
