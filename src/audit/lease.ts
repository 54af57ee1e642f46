// One writer at a time: a coordination.k8s.io/v1 Lease, taken and renewed with server-side apply
// carrying the resourceVersion read just before (so two replicas racing for it cannot both win:
// the second apply fails with 409 Conflict). The holder renews every interval; another replica
// takes over once `renewTime + leaseDurationSeconds` has passed.
import { KubeRequestError, type KubeTransport } from '../kube/index.js';

export interface LeaseOptions {
  namespace: string;
  name: string;
  identity: string;
  durationSeconds: number;
  now?: () => number;
}

interface LeaseObject {
  metadata?: { resourceVersion?: string };
  spec?: { holderIdentity?: string; leaseDurationSeconds?: number; renewTime?: string; acquireTime?: string; leaseTransitions?: number };
}

/** MicroTime: RFC 3339 with exactly six fractional digits (what the apiserver parses). */
export const microTime = (ms: number): string => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

export const APPLY_PATCH = 'application/apply-patch+yaml';
export const FIELD_MANAGER = 'netattach';

export class Lease {
  private readonly path: string;
  private readonly now: () => number;

  constructor(
    private readonly transport: KubeTransport,
    private readonly o: LeaseOptions,
  ) {
    this.path = `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(o.namespace)}/leases/${encodeURIComponent(o.name)}`;
    this.now = o.now ?? Date.now;
  }

  /**
   * Gives the lease up (on shutdown), so that another replica takes over at its next round
   * instead of after the lease duration. Best effort: a holder that vanishes without it is
   * replaced once the lease expires.
   */
  async release(): Promise<void> {
    const current = (await this.transport.getJson(this.path, {})) as LeaseObject;
    if (current.spec?.holderIdentity !== this.o.identity) return;
    const body = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        name: this.o.name,
        namespace: this.o.namespace,
        ...(current.metadata?.resourceVersion ? { resourceVersion: current.metadata.resourceVersion } : {}),
      },
      spec: { holderIdentity: '', leaseDurationSeconds: this.o.durationSeconds, renewTime: microTime(this.now()) },
    };
    await this.transport.patchJson(`${this.path}?fieldManager=${FIELD_MANAGER}&force=true`, body, APPLY_PATCH);
  }

  /** Takes or renews the lease; true when this replica holds it now. Throws on API errors other than a lost race. */
  async acquire(): Promise<boolean> {
    let current: LeaseObject | undefined;
    try {
      current = (await this.transport.getJson(this.path, {})) as LeaseObject;
    } catch (err) {
      if (!(err instanceof KubeRequestError && err.statusCode === 404)) throw err;
    }
    const now = this.now();
    const spec = current?.spec ?? {};
    const mine = spec.holderIdentity === this.o.identity;
    if (current && !mine && spec.holderIdentity) {
      const renewed = spec.renewTime ? Date.parse(spec.renewTime) : NaN;
      const duration = (spec.leaseDurationSeconds ?? this.o.durationSeconds) * 1000;
      if (Number.isFinite(renewed) && renewed + duration > now) return false;
    }
    const body = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: {
        name: this.o.name,
        namespace: this.o.namespace,
        ...(current?.metadata?.resourceVersion ? { resourceVersion: current.metadata.resourceVersion } : {}),
      },
      spec: {
        holderIdentity: this.o.identity,
        leaseDurationSeconds: this.o.durationSeconds,
        acquireTime: mine && spec.acquireTime ? spec.acquireTime : microTime(now),
        renewTime: microTime(now),
        leaseTransitions: (spec.leaseTransitions ?? 0) + (current && !mine ? 1 : 0),
      },
    };
    try {
      await this.transport.patchJson(`${this.path}?fieldManager=${FIELD_MANAGER}&force=true`, body, APPLY_PATCH);
      return true;
    } catch (err) {
      if (err instanceof KubeRequestError && err.statusCode === 409) return false;
      throw err;
    }
  }
}
