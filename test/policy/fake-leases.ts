// An in-memory Lease collection with the API server's semantics that the Leases rely on: an
// atomic create (409 when the name exists), uid/resourceVersion preconditions on delete, and a
// list/watch feed. Each call yields first (setImmediate), so concurrent callers interleave as
// they would over the network; `down` makes every call fail as an unreachable server does.
import type { KubeTransport, LeaseApi } from '../../src/kube/index.js';
import type { HeldAddress } from '../../src/policy/types.js';

type Obj = { metadata: Record<string, unknown> & { name: string; uid: string; resourceVersion: string } } & Record<string, unknown>;

export class FakeLeases {
  readonly objects = new Map<string, Obj>();
  readonly calls = { create: 0, get: 0, delete: 0 };
  /** Calls reject like a connection refused. */
  down = false;
  /** Calls never answer (until their signal aborts). */
  frozen = false;
  /** Each call takes this long (ms) before it is served: concurrent callers overlap. */
  delayMs = 0;
  /** Calls being served now, and the most at once. */
  inFlight = 0;
  peakInFlight = 0;
  private rv = 1;
  private uids = 0;
  private readonly watchers = new Set<(e: unknown) => void>();

  constructor(readonly namespace = 'netattach-system') {}

  private async gate(signal: AbortSignal): Promise<void> {
    this.inFlight++;
    this.peakInFlight = Math.max(this.peakInFlight, this.inFlight);
    try {
      await this.serve(signal);
    } finally {
      this.inFlight--;
    }
  }

  private async serve(signal: AbortSignal): Promise<void> {
    await new Promise((r) => setImmediate(r));
    if (this.delayMs > 0) await new Promise((r) => setTimeout(r, this.delayMs));
    if (this.down) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6443'), { code: 'ECONNREFUSED' });
    if (this.frozen) {
      await new Promise<void>((_, reject) => {
        if (signal.aborted) return reject(signal.reason);
        signal.addEventListener('abort', () => reject(signal.reason), { once: true });
      });
    }
    signal.throwIfAborted();
  }

  /** Puts an object in as if made `ageMs` ago (another replica, an earlier run). */
  put(lease: Record<string, unknown>, ageMs = 0): Obj {
    const md = { ...(lease.metadata as Record<string, unknown>) };
    const obj = {
      ...lease,
      metadata: {
        ...md,
        uid: `uid-${++this.uids}`,
        resourceVersion: String(++this.rv),
        creationTimestamp: new Date(Date.now() - ageMs).toISOString(),
      },
    } as unknown as Obj;
    this.objects.set(obj.metadata.name, obj);
    this.emit({ type: 'ADDED', object: obj });
    return obj;
  }

  /** Sends a watch event to every watcher, as the API server would (also events of objects it does not hold: malformed, replaced). */
  emit(e: unknown): void {
    for (const w of this.watchers) w(e);
  }

  api(): LeaseApi {
    const path = `/apis/coordination.k8s.io/v1/namespaces/${this.namespace}/leases`;
    return {
      namespace: this.namespace,
      path,
      create: async (lease, signal) => {
        await this.gate(signal);
        this.calls.create++;
        const name = (lease as Obj).metadata.name;
        if (this.objects.has(name)) return { status: 'exists' };
        return { status: 'created', object: this.put(lease as Record<string, unknown>) };
      },
      get: async (name, signal) => {
        await this.gate(signal);
        this.calls.get++;
        const o = this.objects.get(name);
        return o ? { status: 'found', object: o } : { status: 'absent' };
      },
      delete: async (name, pre, signal) => {
        await this.gate(signal);
        this.calls.delete++;
        const o = this.objects.get(name);
        if (!o) return { status: 'absent' };
        if (o.metadata.uid !== pre.uid || (pre.resourceVersion && o.metadata.resourceVersion !== pre.resourceVersion))
          return { status: 'changed' };
        this.objects.delete(name);
        this.emit({ type: 'DELETED', object: o });
        return { status: 'deleted' };
      },
    };
  }

  /** The read side for the Lease watch: a list, then a watch fed by every change. */
  transport(): KubeTransport {
    return {
      getJson: async () => {
        if (this.down) throw new Error('connect ECONNREFUSED');
        return { metadata: { resourceVersion: String(this.rv) }, items: [...this.objects.values()] };
      },
      watch: (_path, _query, _accept, onEvent, signal, onOpen) =>
        new Promise<void>((resolve, reject) => {
          if (this.down) return reject(new Error('connect ECONNREFUSED'));
          onOpen?.();
          this.watchers.add(onEvent);
          signal.addEventListener('abort', () => (this.watchers.delete(onEvent), resolve()), { once: true });
        }),
      patchJson: () => Promise.reject(new Error('not used')),
    };
  }
}

/** The i-th of a run of distinct locally administered MACs (02:00:00:xx:xx:xx). */
export const nthMac = (i: number): string =>
  `02:00:00:${((i >> 16) & 0xff).toString(16).padStart(2, '0')}:${((i >> 8) & 0xff).toString(16).padStart(2, '0')}:${(i & 0xff).toString(16).padStart(2, '0')}`;

/**
 * One pod's Leases of `n` MACs from the `from`-th, scope network team/a, a uid `uid-<pod>` unless
 * given (`null`: none), as the pipeline builds them for a uniqueAddresses policy (a forged review
 * names as many as it likes).
 */
export function heldMacs(pod: string, n: number, opts: { namespace?: string; uid?: string | null; from?: number } = {}): HeldAddress[] {
  const p = { namespace: opts.namespace ?? 'team', name: pod, ...(opts.uid === null ? {} : { uid: opts.uid ?? `uid-${pod}` }) };
  return Array.from({ length: n }, (_, i) => ({
    kind: 'mac' as const,
    value: nthMac((opts.from ?? 0) + i),
    scope: 'network:team/a',
    pod: p,
    unique: {
      policy: 'u',
      action: 'Enforce' as const,
      scope: 'Network' as const,
      path: `metadata.annotations[k8s.v1.cni.cncf.io/networks][${i}].mac`,
      label: `MAC ${nthMac((opts.from ?? 0) + i)}`,
    },
  }));
}
