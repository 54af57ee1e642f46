// `netattach audit --cluster`: the live pods (metadata only, like serve's watch), the NADs (their
// objects too: they are judged themselves) and namespace labels (as `check --cluster` reads them)
// and the NetworkAttachmentPolicies of the cluster in the current kubeconfig, read once, read-only.
import { loadFromCluster, within, type ClusterSnapshot } from '../check/index.js';
import {
  ListWatch,
  METADATA_ACCEPT,
  METADATA_WATCH_ACCEPT,
  kubeTransport,
  type KubeCredentials,
  type KubeObject,
  type ListWatchHandler,
} from '../kube/index.js';
import { ClusterPolicySource, LIVE_PODS_FIELD_SELECTOR, type PolicySet } from '../policy/index.js';
import { livePodOf } from './live-pod.js';
import type { LivePod } from './types.js';

export interface AuditClusterSnapshot extends ClusterSnapshot {
  pods: LivePod[];
  /** The NAD objects as listed (the NADs are judged themselves; `nads` holds the parsed entries). */
  nadObjects: KubeObject[];
  /** Undefined when the policies were not read (given as files instead). */
  policies?: PolicySet;
  /** Why the policies could not be read (shown as a warning; audited without them). */
  policyProblem?: string;
}

export type AuditClusterLoad = { ok: true; snapshot: AuditClusterSnapshot } | { ok: false; error: string };

async function listPods(kc: KubeCredentials, timeoutMs: number, signal?: AbortSignal): Promise<LivePod[] | string> {
  const pods = new Map<string, LivePod>();
  let failure: string | undefined;
  const lw = new ListWatch({
    transport: kubeTransport(kc),
    path: '/api/v1/pods',
    listAccept: METADATA_ACCEPT,
    watchAccept: METADATA_WATCH_ACCEPT,
    fieldSelector: LIVE_PODS_FIELD_SELECTOR,
    backoffMs: 200,
    onError: (err) => void (failure = err instanceof Error ? err.message : String(err)),
    handler: {
      resync: () => pods.clear(),
      upsert: (o) => {
        const p = livePodOf(o);
        if (p) pods.set(`${p.namespace}/${p.name}`, p);
      },
      remove: (o) => void pods.delete(`${o.metadata?.namespace}/${o.metadata?.name}`),
      resynced: () => {},
    },
  });
  try {
    const synced = await within(lw.start(), timeoutMs, signal);
    if (synced === 'timeout') return `cannot list pods from ${kc.server} within ${timeoutMs / 1000}s: ${failure ?? 'no answer'}`;
    return [...pods.values()];
  } finally {
    await lw.stop();
  }
}

async function readPolicies(
  kc: KubeCredentials,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<{ policies?: PolicySet; problem?: string }> {
  const source = new ClusterPolicySource(kc, { writeStatus: false, backoffMs: 200 });
  // No CRD is an answer too: do not wait out the timeout for it.
  let poll: NodeJS.Timeout | undefined;
  const absent = new Promise<void>((resolve) => {
    poll = setInterval(() => source.lastFailure()?.statusCode === 404 && resolve(), 50);
  });
  try {
    const synced = await within(Promise.race([source.start(), absent]), timeoutMs, signal);
    if (synced !== 'timeout' && source.synced()) return { policies: source.current() };
    const failure = source.lastFailure();
    if (failure?.statusCode === 404) return { problem: 'no NetworkAttachmentPolicy CRD in the cluster: built-in checks only' };
    return { problem: `NetworkAttachmentPolicies not read from ${kc.server} (${failure?.message ?? 'no answer'}): built-in checks only` };
  } finally {
    clearInterval(poll);
    await source.stop();
  }
}

/** The NAD objects of a list (and of the watch events before it stops), by `ns/name`. */
function nadObjectCollector(): { handler: ListWatchHandler; objects: () => KubeObject[] } {
  let objects = new Map<string, KubeObject>();
  let relisted: Map<string, KubeObject> | undefined;
  const key = (o: KubeObject): string => `${o.metadata?.namespace}/${o.metadata?.name}`;
  return {
    handler: {
      resync: () => void (relisted = new Map()),
      upsert: (o) => void (relisted ?? objects).set(key(o), o),
      remove: (o) => void (relisted ?? objects).delete(key(o)),
      resynced: () => {
        if (relisted) objects = relisted;
        relisted = undefined;
      },
    },
    objects: () => [...objects.values()],
  };
}

export async function loadAuditCluster(
  kc: KubeCredentials,
  options: { timeoutMs: number; resourceNameKeys?: readonly string[]; readPolicies: boolean; signal?: AbortSignal },
): Promise<AuditClusterLoad> {
  const nadObjects = nadObjectCollector();
  const [base, pods, policies] = await Promise.all([
    loadFromCluster(kc, {
      timeoutMs: options.timeoutMs,
      nadObserver: nadObjects.handler,
      ...(options.resourceNameKeys ? { resourceNameKeys: options.resourceNameKeys } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    }),
    listPods(kc, options.timeoutMs, options.signal),
    options.readPolicies
      ? readPolicies(kc, options.timeoutMs, options.signal)
      : Promise.resolve<{ policies?: PolicySet; problem?: string }>({}),
  ]);
  if (!base.ok) return base;
  if (typeof pods === 'string') return { ok: false, error: pods };
  const snapshot: AuditClusterSnapshot = { ...base.snapshot, pods, nadObjects: nadObjects.objects() };
  if (policies.policies) snapshot.policies = policies.policies;
  if (policies.problem) snapshot.policyProblem = policies.problem;
  return { ok: true, snapshot };
}
