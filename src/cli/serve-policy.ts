// The policy side of `netattach serve`: which policy source, namespace labels and pod index the
// server runs with, their readiness checks and lifecycles.
//
// | mode | policies | namespace labels | uniqueness index |
// |---|---|---|---|
// | cluster, no --policy | NetworkAttachmentPolicy watch | namespace watch | pod watch + reservations |
// | cluster, --policy FILE | the file (watched) | namespace watch | pod watch + reservations |
// | offline (NADs from files) | the file, or none | the name label only | reservations only |
import type { Logger } from 'pino';
import { Counter, Gauge, Registry } from 'prom-client';
import {
  AddressIndex,
  apiHolderLookup,
  AddressLeaseStore,
  leaseSweepMs,
  ClusterNamespaceLabels,
  DEFAULT_LEASE_PENDING_MS,
  ClusterPolicySource,
  FilePolicySource,
  NadUsage,
  PodAddressSource,
  PolicyEngine,
  StaticNamespaceLabels,
  registerPolicyMetrics,
  type PolicySource,
} from '../policy/index.js';
import { watchCheck, type BackgroundTask, type ReadinessCheck, type ServerDeps, type WatchHealth } from '../server/index.js';
import { kubeTransport, leaseApi, serviceAccountNamespace, type KubeCredentials } from '../kube/index.js';
import { hostname } from 'node:os';
import type { AdmissionConfig } from '../admission/index.js';
import type { NadSource } from '../nads/index.js';
import type { DraView } from '../dra/index.js';
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
  /** `group/Kind` of owners whose pods share addresses (the admission config's). */
  sharingOwners?: readonly string[];
  logger: Logger;
  /** How often expired reservations are dropped (default 60 s). */
  sweepMs?: number;
  /** How long a reservation holds unconfirmed (default 45 s; tests). */
  reservationTtlMs?: number;
  /** Delay before a failed watch retries (tests); doubles up to 30 s. */
  backoffMs?: number;
  /**
   * netattach's own namespace: address Leases are made there, so uniqueness holds across
   * replicas. Unset: no Leases (each replica judges uniqueness alone). Needs the pod watch.
   */
  leaseNamespace?: string;
  /** How long a Lease whose pod was never seen blocks others before it yields and is swept (default 35 s). */
  leasePendingMs?: number;
  /** Budget of a Lease on the request path (default 1.5 s). */
  leaseTimeoutMs?: number;
  /** How often stale Leases are swept (default: leaseSweepMs of the window, 17.5 s). */
  leaseSweepMs?: number;
  /** The background audit of live pods (cluster mode with the pod watch only). */
  audit?: {
    nadSource: NadSource;
    config: AdmissionConfig;
    /** The webhook's DeviceClasses and ResourceClaimTemplates (cache only): templates judged alike. */
    dra?: DraView;
    podsPerSecond?: number;
    /** Namespace of the Lease (default: the service account's namespace, else netattach-system). */
    leaseNamespace?: string;
    identity?: string;
    /** Report rounds (tests). */
    publishIntervalMs?: number;
    tickMs?: number;
  };
}

export interface PolicyWiring {
  /** What createServer takes. */
  deps: Required<Pick<ServerDeps, 'policy' | 'reservations' | 'namespaceLabels' | 'readiness' | 'background' | 'registry' | 'watches'>> &
    Pick<ServerDeps, 'podsUsingNad' | 'addressLeases'>;
  engine: PolicyEngine;
  index: AddressIndex;
  /** The address Leases, when made (cluster mode, pod watch, a namespace). */
  addressLeases?: AddressLeaseStore;
  /** For the start-up log line (`claims`: the log key kept from before the rename, for log queries). */
  summary: { policies: string; namespaceLabels: string; podIndex: string; claims: string; audit: string };
  audit?: BackgroundAudit;
  publisher?: ReportPublisher;
}

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

export async function wirePolicy(options: PolicyWiringOptions): Promise<PolicyWiring> {
  const { logger, kubeConfig: kc } = options;
  const registry = new Registry();
  const metrics = registerPolicyMetrics(registry);
  const index = new AddressIndex(options.reservationTtlMs !== undefined ? { reservationTtlMs: options.reservationTtlMs } : {});
  metrics.watchIndex(index);
  const engine = new PolicyEngine({ index });
  const readiness: Record<string, ReadinessCheck> = {};
  const background: BackgroundTask[] = [];
  const watches: Record<string, WatchHealth> = {};
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
    const synced = watchCheck('NetworkAttachmentPolicy watch', cluster);
    watches.policies = cluster;
    // No CRD, no policy object can exist: ready with none (the watch keeps trying, so policies
    // apply as soon as the CRD is installed). Any other failure keeps it not ready until the
    // first sync, and only degrades it afterwards.
    readiness.policies = () => (!cluster.synced() && cluster.lastFailure()?.statusCode === 404) || synced();
  }
  if (source) engine.setPolicies(source.current());

  let namespaceLabels: (ns: string) => Record<string, string>;
  if (kc) {
    const labels = new ClusterNamespaceLabels(kc, common);
    namespaceLabels = (ns) => labels.labels(ns);
    background.push({ name: 'namespace watch', start: () => labels.start(), stop: () => labels.stop() });
    readiness.namespaces = watchCheck('namespace watch', labels);
    watches.namespaces = labels;
  } else {
    const labels = new StaticNamespaceLabels();
    namespaceLabels = (ns) => labels.labels(ns);
  }

  let podsUsingNad: ServerDeps['podsUsingNad'];
  let podIndex = 'reservations only (no cluster)';
  let audit: BackgroundAudit | undefined;
  let publisher: ReportPublisher | undefined;
  let auditSummary = kc ? 'off' : 'off (no cluster)';
  let leases: AddressLeaseStore | undefined;
  let leasesSummary = 'off (no cluster)';
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
        ...(a.dra ? { dra: a.dra } : {}),
        podsUsingNad: (ns, name) => usage.podsUsing(ns, name),
        ready,
        ...(a.podsPerSecond !== undefined ? { podsPerSecond: a.podsPerSecond } : {}),
        ...(a.tickMs !== undefined ? { tickMs: a.tickMs } : {}),
        metrics: auditMetrics,
        logger,
      });
      publisher = new ReportPublisher(kubeTransport(kc), audit, {
        leaseNamespace: a.leaseNamespace ?? serviceAccountNamespace() ?? 'netattach-system',
        identity: a.identity ?? `${hostname()}-${process.pid}`,
        ...(a.publishIntervalMs !== undefined ? { intervalMs: a.publishIntervalMs } : {}),
        metrics: auditMetrics,
        logger,
      });
      // The NADs themselves: the objects of the NAD cache's own watch (no second watch). A NAD
      // directory (--nads DIR) is not audited: `netattach check` lints such files.
      a.nadSource.observe?.(audit.nadWatch);
      const [bg, pub] = [audit, publisher];
      background.push({ name: 'background audit', start: () => bg.start(), stop: () => bg.stop() });
      background.push({ name: 'PolicyReport writer', start: () => pub.start(), stop: () => pub.stop() });
      auditSummary = `every live pod${a.nadSource.observe ? ' and NAD' : ''}, ${a.podsPerSecond ?? 1000} objects/s at most; PolicyReports when the CRD exists`;
    }
    const pods: PodAddressSource = new PodAddressSource(kc, index, {
      ...common,
      usage,
      ...(options.defaultNetworkNamespace ? { defaultNetworkNamespace: options.defaultNetworkNamespace } : {}),
      ...(options.sharingOwners ? { sharingOwners: options.sharingOwners } : {}),
      ...(audit ? { observer: audit } : {}),
      onRemove: (pod) => void leases?.releaseHolder({ kind: 'Pod', ...pod }),
      // A Lease is confirmed when its holder is seen using the address: the pod, or its VMI.
      onIndexed: (pod) => {
        if (!leases) return;
        leases.confirm({ kind: 'Pod', namespace: pod.namespace, name: pod.name, ...(pod.uid ? { uid: pod.uid } : {}) });
        if (pod.owner) leases.confirm({ kind: pod.owner.kind, namespace: pod.owner.namespace, name: pod.owner.name, uid: pod.owner.key });
      },
    });
    podsUsingNad = (ns, name) => usage.podsUsing(ns, name);
    background.push({ name: 'pod watch', start: () => pods.start(), stop: () => pods.stop() });
    readiness.pods = watchCheck('pod watch', pods);
    watches.pods = pods;
    podIndex = 'pod watch + reservations';
    if (options.leaseNamespace) {
      leases = wireAddressLeases(kc, options.leaseNamespace, options, index, pods, registry, { background, readiness, watches });
      leasesSummary = `Leases in namespace ${options.leaseNamespace}`;
    } else leasesSummary = 'off (no namespace given)';
  } else if (kc) {
    podIndex = 'reservations only (--no-pod-watch)';
    leasesSummary = 'off (--no-pod-watch)';
  }

  // Reservations the watch never confirms (offline, or a create that failed later) are dropped
  // when looked up; this drops those nobody asks about again, and says when a cap was reached.
  let sweeper: NodeJS.Timeout | undefined;
  let capped = index.reservationsCapped();
  const sweep = (): void => {
    index.sweep();
    const now = index.reservationsCapped();
    const since = Object.fromEntries(
      Object.entries(now)
        .map(([cap, n]) => [cap, n - capped[cap as keyof typeof now]])
        .filter(([, n]) => n !== 0),
    );
    capped = now;
    if (Object.keys(since).length > 0)
      logger.warn(
        { since, limits: index.reservationLimits(), reservations: index.stats().reservations },
        'address reservations reached their bounds (pod: addresses not reserved; address, namespace, total: oldest evicted)',
      );
  };
  background.push({
    name: 'reservation sweeper',
    start: () => void (sweeper = setInterval(sweep, options.sweepMs ?? 60_000).unref()),
    stop: () => clearInterval(sweeper),
  });

  return {
    deps: {
      policy: engine,
      reservations: index,
      namespaceLabels,
      readiness,
      background,
      registry,
      watches,
      ...(podsUsingNad ? { podsUsingNad } : {}),
      ...(leases ? { addressLeases: leases } : {}),
    },
    engine,
    index,
    ...(leases ? { addressLeases: leases } : {}),
    summary: {
      policies,
      namespaceLabels: kc ? 'namespace watch' : 'name label only',
      podIndex,
      claims: leasesSummary,
      audit: auditSummary,
    },
    ...(audit ? { audit } : {}),
    ...(publisher ? { publisher } : {}),
  };
}

/** The address Leases: the store, its watch and sweeper, readiness and metrics. */
function wireAddressLeases(
  kc: KubeCredentials,
  namespace: string,
  options: PolicyWiringOptions,
  index: AddressIndex,
  pods: PodAddressSource,
  registry: Registry,
  into: { background: BackgroundTask[]; readiness: Record<string, ReadinessCheck>; watches: Record<string, WatchHealth> },
): AddressLeaseStore {
  // Metric names keep the word "claims" (from before the rename): dashboards and alerts name them.
  const events = new Counter({
    name: 'netattach_address_claims_total',
    help: 'Address Leases in the API server by outcome (won, lost, unavailable, not-claimed on the request path; taken-over, released, swept, release-failed; kept-running: a Lease that looked stale kept, its pod running unseen by a lagging watch)',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const leases = new AddressLeaseStore({
    api: leaseApi(kubeTransport(kc), namespace),
    kubeConfig: kc,
    // Live: a pod of the holder (that uid of the name; for a VMI, a pod of it) uses the address.
    live: (h, address) => index.heldBy(address.kind, address.value, h),
    livenessCurrent: () => pods.synced() && pods.staleSince() === undefined,
    // Before a Lease never confirmed is taken over or swept: is its pod running after all (a lagging watch)?
    holderRuns: apiHolderLookup(
      kubeTransport(kc),
      options.defaultNetworkNamespace ? { defaultNetworkNamespace: options.defaultNetworkNamespace } : {},
    ),
    ...(options.leasePendingMs !== undefined ? { pendingMs: options.leasePendingMs } : {}),
    ...(options.leaseTimeoutMs !== undefined ? { timeoutMs: options.leaseTimeoutMs } : {}),
    ...(options.backoffMs !== undefined ? { backoffMs: options.backoffMs } : {}),
    logger: options.logger,
    onEvent: (outcome, n = 1) => events.inc({ outcome }, n),
  });
  new Gauge({
    name: 'netattach_address_claims',
    help: 'Address Leases this replica knows from its watch',
    registers: [registry],
    collect() {
      this.set(leases.size());
    },
  });
  new Gauge({
    name: 'netattach_address_claims_unconfirmed',
    help: 'Address Leases whose pod this replica has not seen using the address (being created, or never to be); bounded',
    registers: [registry],
    collect() {
      this.set(leases.stats().unconfirmed);
    },
  });
  into.background.push({ name: 'address claim watch', start: () => leases.start(), stop: () => leases.stop() });
  let sweeper: NodeJS.Timeout | undefined;
  into.background.push({
    name: 'address claim sweeper',
    start: () =>
      void (sweeper = setInterval(
        () => void leases.sweep(),
        options.leaseSweepMs ?? leaseSweepMs(options.leasePendingMs ?? DEFAULT_LEASE_PENDING_MS),
      ).unref()),
    stop: () => clearInterval(sweeper),
  });
  // The readiness check's and the watch's name `claims`, the metric names above and the task names
  // stay as before the rename: dashboards, alerts and /readyz readers name them.
  into.readiness.claims = watchCheck('address claim watch', leases);
  into.watches.claims = leases;
  return leases;
}
