// `--cluster`: the NADs (and namespace labels) of the cluster in the current kubeconfig, read
// once, read-only (list; the sources' watches are stopped right after the first sync). NADs are
// required: unreachable within the timeout is an error. Namespace labels are best effort
// (listing namespaces may be forbidden to the user): without them, policies see names only.
import { ClusterNadSource, type Nad, type NadLogger } from '../nads/index.js';
import { ClusterNamespaceLabels, type PolicyLogger } from '../policy/index.js';
import type { KubeCredentials, ListWatchHandler } from '../kube/index.js';
import { ClusterDra, type DeviceClassInfo } from '../dra/index.js';
import { ClusterBindingRegistry, type BindingRegistry } from '../kubevirt/index.js';

export interface ClusterSnapshot {
  nads: Nad[];
  namespaceLabels?: (namespace: string) => Record<string, string>;
  /** Why the namespace labels are missing, to show as a warning. */
  namespaceProblem?: string;
  /** DeviceClasses and ResourceClaimTemplates (best effort, like namespace labels). */
  dra?: { classes: DeviceClassInfo[]; templates: Array<{ namespace: string; name: string }> };
  /** Why they are missing, to show as a warning. */
  draProblem?: string;
  /** KubeVirt's binding plugin registry, or why it is not known (best effort; no KubeVirt is an answer). */
  kubevirtBindings?: BindingRegistry;
}

export type ClusterLoad = { ok: true; snapshot: ClusterSnapshot } | { ok: false; error: string };

/** Remembers the last error a source logged, to say why it did not sync. */
function errorRecorder(): { logger: NadLogger & PolicyLogger; last: () => string | undefined } {
  let last: string | undefined;
  const record = (fields: object): void => {
    const err = (fields as { err?: unknown }).err;
    if (err !== undefined) last = String(err instanceof Error ? err.message : err);
  };
  const noop = (): void => {};
  return { logger: { debug: noop, info: noop, warn: record, error: record }, last: () => last };
}

/** `p`, or 'timeout' after `ms` (or as soon as `signal` aborts: the caller has its answer already). */
export const within = <T>(p: Promise<T>, ms: number, signal?: AbortSignal): Promise<T | 'timeout'> => {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), ms);
    if (signal?.aborted) resolve('timeout');
    onAbort = () => resolve('timeout');
    signal?.addEventListener('abort', onAbort, { once: true });
  });
  return Promise.race([p, timeout]).finally(() => {
    clearTimeout(timer);
    if (onAbort) signal?.removeEventListener('abort', onAbort);
  });
};

/** Resolves once both DRA lists answered 404: the cluster does not serve resource.k8s.io/v1. */
async function noDraApi(dra: ClusterDra, done: () => boolean): Promise<'absent' | 'stopped'> {
  const gone = (): boolean => dra.classes.lastFailure()?.statusCode === 404 && dra.templates.lastFailure()?.statusCode === 404;
  while (!gone()) {
    if (done()) return 'stopped';
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return 'absent';
}

/** Resolves once the KubeVirt list answered 404 or 403: the registry stays unknown, and that is the answer. */
async function answered(kubevirt: ClusterBindingRegistry, done: () => boolean): Promise<void> {
  const final = (): boolean => [403, 404].includes(kubevirt.lastFailure()?.statusCode ?? 0);
  while (!final() && !done()) await new Promise((resolve) => setTimeout(resolve, 50));
}

export async function loadFromCluster(
  kc: KubeCredentials,
  options: {
    timeoutMs: number;
    resourceNameKeys?: readonly string[] /** Sees the NAD objects as listed (`netattach audit` judges them). */;
    nadObserver?: ListWatchHandler /** Gives up at once (the caller knows the cluster cannot be read). */;
    signal?: AbortSignal;
  },
): Promise<ClusterLoad> {
  const server = kc.server;
  const nadErrors = errorRecorder();
  const nsErrors = errorRecorder();
  const nadSource = new ClusterNadSource(kc, {
    logger: nadErrors.logger,
    listTimeoutMs: options.timeoutMs,
    backoff: { initialMs: 200, maxMs: 2_000 },
    ...(options.resourceNameKeys ? { resourceNameKeys: options.resourceNameKeys } : {}),
    ...(options.nadObserver ? { observer: options.nadObserver } : {}),
  });
  let namespaces: ClusterNamespaceLabels | undefined;
  try {
    namespaces = new ClusterNamespaceLabels(kc, { logger: nsErrors.logger, backoffMs: 200 });
  } catch (e) {
    nsErrors.logger.warn({ err: e }, 'namespace labels unavailable');
  }
  const draErrors = errorRecorder();
  const dra = new ClusterDra(kc, { logger: draErrors.logger, backoffMs: 200 });
  const kubevirt = new ClusterBindingRegistry(kc, { backoffMs: 200 });
  let loaded = false;
  try {
    const [nadsSynced, nsSynced, draSynced] = await Promise.all([
      within(nadSource.start(), options.timeoutMs, options.signal),
      namespaces ? within(namespaces.start(), options.timeoutMs, options.signal) : Promise.resolve('timeout' as const),
      within(Promise.race([dra.start(), noDraApi(dra, () => loaded)]), options.timeoutMs, options.signal),
      // No KubeVirt (404) or no permission (403) is an answer: not waited out.
      within(Promise.race([kubevirt.start(), answered(kubevirt, () => loaded)]), options.timeoutMs, options.signal),
    ]);
    if (nadsSynced === 'timeout') {
      const why = nadErrors.last() ?? 'no answer';
      return { ok: false, error: `cannot list NetworkAttachmentDefinitions from ${server} within ${options.timeoutMs / 1000}s: ${why}` };
    }
    const snapshot: ClusterSnapshot = { nads: nadSource.list() };
    if (namespaces && nsSynced !== 'timeout') {
      const source = namespaces;
      snapshot.namespaceLabels = (ns) => source.labels(ns);
    } else {
      snapshot.namespaceProblem = `namespace labels not read from ${server} (${nsErrors.last() ?? 'no answer'}); policies see namespace names only`;
    }
    if (draSynced === 'absent') {
      snapshot.dra = { classes: [], templates: [] }; // a cluster without resource.k8s.io/v1: no DRA paths
    } else if (draSynced !== 'timeout') {
      snapshot.dra = { classes: dra.classes.list(), templates: dra.templates.list() };
    } else {
      snapshot.draProblem = `DeviceClasses and ResourceClaimTemplates not read from ${server} (${draErrors.last() ?? 'no answer'}); DRA templates unchecked`;
    }
    snapshot.kubevirtBindings = kubevirt.registry();
    return { ok: true, snapshot };
  } finally {
    loaded = true;
    await Promise.all([nadSource.stop(), namespaces?.stop(), dra.stop(), kubevirt.stop()]);
  }
}
