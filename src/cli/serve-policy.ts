// The policy side of `netattach serve`: which policy source, namespace labels and pod index the
// server runs with, their readiness checks and lifecycles.
//
// | mode | policies | namespace labels | uniqueness index |
// |---|---|---|---|
// | cluster, no --policy | NetworkAttachmentPolicy watch | namespace watch | pod watch + reservations |
// | cluster, --policy FILE | the file (watched) | namespace watch | pod watch + reservations |
// | offline (NADs from files) | the file, or none | the name label only | reservations only |
import type { Logger } from 'pino';
import { Registry } from 'prom-client';
import {
  AddressIndex,
  ClusterNamespaceLabels,
  ClusterPolicySource,
  FilePolicySource,
  NadUsage,
  PodAddressSource,
  PolicyEngine,
  StaticNamespaceLabels,
  registerPolicyMetrics,
  type PolicySource,
} from '../policy/index.js';
import type { BackgroundTask, ReadinessCheck, ServerDeps } from '../server/index.js';
import { kubeTransport, SERVICE_ACCOUNT_DIR, type KubeCredentials } from '../kube/index.js';
import { join } from 'node:path';
import { hostname } from 'node:os';
import { readFileSync } from 'node:fs';
import type { AdmissionConfig } from '../admission/types.js';
import type { NadSource } from '../nads/index.js';
import { BackgroundAudit, registerAuditMetrics, ReportPublisher } from '../audit/index.js';

export interface PolicyWiringOptions {
  /** `--policy FILE` (absolute). */
  policyFile?: string;
  /** Set when serve reads the cluster (NADs from the cluster): cluster mode. */
  kubeConfig?: KubeCredentials;
  /** Watch pods for the uniqueness index and NAD usage (cluster mode only). */
  podWatch: boolean;
  /** Where an unqualified default-network name resolves (the admission config's). */
  defaultNetworkNamespace?: string;
  logger: Logger;
  /** How often expired reservations are dropped (default 60 s). */
  sweepMs?: number;
  /** Delay before a failed watch retries (tests); doubles up to 30 s. */
  backoffMs?: number;
  /** The background audit of live pods (cluster mode with the pod watch only). */
  audit?: {
    nadSource: NadSource;
    config: AdmissionConfig;
    podsPerSecond?: number;
    /** Namespace of the Lease (default: the service account's namespace, else netattach-system). */
    leaseNamespace?: string;
    identity?: string;
    /** Report rounds (tests). */
    publishIntervalMs?: number;
    tickMs?: number;
  };
}

/** The namespace netattach runs in (the Lease lives there): its service account's, else netattach-system. */
function ownNamespace(): string {
  const dir = process.env['NETATTACH_SERVICEACCOUNT_DIR'] || SERVICE_ACCOUNT_DIR;
  try {
    return readFileSync(join(dir, 'namespace'), 'utf8').trim() || 'netattach-system';
  } catch {
    return 'netattach-system';
  }
}

export interface PolicyWiring {
  /** What createServer takes. */
  deps: Required<Pick<ServerDeps, 'policy' | 'reservations' | 'namespaceLabels' | 'readiness' | 'background' | 'registry'>> &
    Pick<ServerDeps, 'podsUsingNad'>;
  engine: PolicyEngine;
  index: AddressIndex;
  /** For the start-up log line. */
  summary: { policies: string; namespaceLabels: string; podIndex: string; audit: string };
  audit?: BackgroundAudit;
  publisher?: ReportPublisher;
}

interface Watched {
  synced(): boolean;
  lastFailure(): { message: string; statusCode?: number } | undefined;
}

/** Ready once the watch has listed everything once; until then the reason names the last failure. */
function syncedCheck(what: string, source: Watched): ReadinessCheck {
  return () => {
    if (source.synced()) return true;
    const failure = source.lastFailure();
    return failure ? `${what} has not synced: ${failure.message} (retrying)` : `${what} has not synced yet`;
  };
}

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

export async function wirePolicy(options: PolicyWiringOptions): Promise<PolicyWiring> {
  const { logger, kubeConfig: kc } = options;
  const registry = new Registry();
  const metrics = registerPolicyMetrics(registry);
  const index = new AddressIndex();
  metrics.watchIndex(index);
  const engine = new PolicyEngine({ index });
  const readiness: Record<string, ReadinessCheck> = {};
  const background: BackgroundTask[] = [];
  const common = { logger, metrics, ...(options.backoffMs !== undefined ? { backoffMs: options.backoffMs } : {}) };

  let source: PolicySource | undefined;
  let policies = 'none';
  if (options.policyFile) {
    const file = new FilePolicySource(options.policyFile, { logger, metrics });
    file.onChange((set) => engine.setPolicies(set));
    // Loaded before the server listens: a pod is never judged without the policies given.
    await file.start().catch((err: unknown) => {
      throw new RangeError(`--policy ${options.policyFile}: cannot read the file: ${message(err)}`);
    });
    source = file;
    policies = `file ${options.policyFile}`;
    background.push({ name: 'policy file watch', start: () => {}, stop: () => file.stop() });
    readiness.policies = () => true; // loaded before listening; a broken reload keeps the last valid set
  } else if (kc) {
    const cluster = new ClusterPolicySource(kc, common);
    cluster.onChange((set) => engine.setPolicies(set));
    source = cluster;
    policies = 'cluster (NetworkAttachmentPolicy)';
    background.push({ name: 'NetworkAttachmentPolicy watch', start: () => cluster.start(), stop: () => cluster.stop() });
    readiness.policies = () => {
      if (cluster.synced()) return true;
      const failure = cluster.lastFailure();
      // No CRD, no policy object can exist: ready with none (the watch keeps trying, so
      // policies apply as soon as the CRD is installed). Any other failure keeps it not ready.
      if (failure?.statusCode === 404) return true;
      return failure ? `NetworkAttachmentPolicy watch has not synced: ${failure.message} (retrying)` : 'NetworkAttachmentPolicy watch has not synced yet';
    };
  }
  if (source) engine.setPolicies(source.current());

  let namespaceLabels: (ns: string) => Record<string, string>;
  if (kc) {
    const labels = new ClusterNamespaceLabels(kc, common);
    namespaceLabels = (ns) => labels.labels(ns);
    background.push({ name: 'namespace watch', start: () => labels.start(), stop: () => labels.stop() });
    readiness.namespaces = syncedCheck('namespace watch', labels);
  } else {
    const labels = new StaticNamespaceLabels();
    namespaceLabels = (ns) => labels.labels(ns);
  }

  let podsUsingNad: ServerDeps['podsUsingNad'];
  let podIndex = 'reservations only (no cluster)';
  let audit: BackgroundAudit | undefined;
  let publisher: ReportPublisher | undefined;
  let auditSummary = kc ? 'off' : 'off (no cluster)';
  if (kc && options.podWatch) {
    const usage = new NadUsage();
    const checks = readiness;
    // Judged only once everything admission reads has synced (else a pod would be judged against a partial view).
    const ready = (): boolean => Object.values(checks).every((check) => check() === true);
    if (options.audit) {
      const a = options.audit;
      const auditMetrics = registerAuditMetrics(registry);
      audit = new BackgroundAudit({
        nads: a.nadSource,
        namespaceLabels,
        engine,
        index,
        config: a.config,
        podsUsingNad: (ns, name) => usage.podsUsing(ns, name),
        ready,
        ...(a.podsPerSecond !== undefined ? { podsPerSecond: a.podsPerSecond } : {}),
        ...(a.tickMs !== undefined ? { tickMs: a.tickMs } : {}),
        metrics: auditMetrics,
        logger,
      });
      publisher = new ReportPublisher(kubeTransport(kc), audit, {
        leaseNamespace: a.leaseNamespace ?? ownNamespace(),
        identity: a.identity ?? `${hostname()}-${process.pid}`,
        ...(a.publishIntervalMs !== undefined ? { intervalMs: a.publishIntervalMs } : {}),
        metrics: auditMetrics,
        logger,
      });
      const [bg, pub] = [audit, publisher];
      background.push({ name: 'background audit', start: () => bg.start(), stop: () => bg.stop() });
      background.push({ name: 'PolicyReport writer', start: () => pub.start(), stop: () => pub.stop() });
      auditSummary = `every live pod, ${a.podsPerSecond ?? 1000} pods/s at most; PolicyReports when the CRD exists`;
    }
    const pods = new PodAddressSource(kc, index, {
      ...common,
      usage,
      ...(options.defaultNetworkNamespace ? { defaultNetworkNamespace: options.defaultNetworkNamespace } : {}),
      ...(audit ? { observer: audit } : {}),
    });
    podsUsingNad = (ns, name) => usage.podsUsing(ns, name);
    background.push({ name: 'pod watch', start: () => pods.start(), stop: () => pods.stop() });
    readiness.pods = syncedCheck('pod watch', pods);
    podIndex = 'pod watch + reservations';
  } else if (kc) {
    podIndex = 'reservations only (--no-pod-watch)';
  }

  // Reservations the watch never confirms (offline, or a create that failed later) are dropped
  // when looked up; this drops those nobody asks about again.
  let sweeper: NodeJS.Timeout | undefined;
  background.push({
    name: 'reservation sweeper',
    start: () => void (sweeper = setInterval(() => index.sweep(), options.sweepMs ?? 60_000).unref()),
    stop: () => clearInterval(sweeper),
  });

  return {
    deps: { policy: engine, reservations: index, namespaceLabels, readiness, background, registry, ...(podsUsingNad ? { podsUsingNad } : {}) },
    engine,
    index,
    summary: { policies, namespaceLabels: kc ? 'namespace watch' : 'name label only', podIndex, audit: auditSummary },
    ...(audit ? { audit } : {}),
    ...(publisher ? { publisher } : {}),
  };
}
