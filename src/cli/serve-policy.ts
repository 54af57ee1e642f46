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
  ClaimStore,
  claimSweepMs,
  ClusterNamespaceLabels,
  DEFAULT_CLAIM_PENDING_MS,
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
import type { AdmissionConfig } from '../admission/types.js';
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
   * netattach's own namespace: address claims (Leases) are made there, so uniqueness holds across
   * replicas. Unset: no claims (each replica judges uniqueness alone). Needs the pod watch.
   */
  claimsNamespace?: string;
  /** How long a claim whose pod was never seen blocks others before it yields and is swept (default 35 s). */
  claimPendingMs?: number;
  /** Budget of a claim on the request path (default 1.5 s). */
  claimTimeoutMs?: number;
  /** How often stale claims are swept (default: claimSweepMs of the window, 17.5 s). */
  claimSweepMs?: number;
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
    Pick<ServerDeps, 'podsUsingNad' | 'arbiter'>;
  engine: PolicyEngine;
  index: AddressIndex;
  /** The address claims, when made (cluster mode, pod watch, a namespace). */
  claims?: ClaimStore;
  /** For the start-up log line. */
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
  let claims: ClaimStore | undefined;
  let claimsSummary = 'off (no cluster)';
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
      onRemove: (pod) => void claims?.releaseHolder({ kind: 'Pod', ...pod }),
      // A claim is confirmed when its holder is seen using the address: the pod, or its VMI.
      onIndexed: (pod) => {
        if (!claims) return;
        claims.confirm({ kind: 'Pod', namespace: pod.namespace, name: pod.name, ...(pod.uid ? { uid: pod.uid } : {}) });
        if (pod.owner) claims.confirm({ kind: pod.owner.kind, namespace: pod.owner.namespace, name: pod.owner.name, uid: pod.owner.key });
      },
    });
    podsUsingNad = (ns, name) => usage.podsUsing(ns, name);
    background.push({ name: 'pod watch', start: () => pods.start(), stop: () => pods.stop() });
    readiness.pods = watchCheck('pod watch', pods);
    watches.pods = pods;
    podIndex = 'pod watch + reservations';
    if (options.claimsNamespace) {
      claims = wireClaims(kc, options.claimsNamespace, options, index, pods, registry, { background, readiness, watches });
      claimsSummary = `Leases in namespace ${options.claimsNamespace}`;
    } else claimsSummary = 'off (no namespace given)';
  } else if (kc) {
    podIndex = 'reservations only (--no-pod-watch)';
    claimsSummary = 'off (--no-pod-watch)';
  }

  // Reservations the watch never confirms (offline, or a create that failed later) are dropped
  // when looked up; this drops those nobody asks about again, and says when a cap was reached.
  let sweeper: NodeJS.Timeout | undefined;
  let capped = index.reservationsCapped();
  const sweep = (): void => {
    index.sweep();
    const now = index.reservationsCapped();
    const since = Object.fromEntries(Object.entries(now).map(([cap, n]) => [cap, n - capped[cap as keyof typeof now]]).filter(([, n]) => n !== 0));
    capped = now;
    if (Object.keys(since).length > 0) logger.warn({ since, limits: index.reservationLimits(), reservations: index.stats().reservations }, 'address reservations reached their bounds (pod: addresses not reserved; address, namespace, total: oldest evicted)');
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
      ...(claims ? { arbiter: claims } : {}),
    },
    engine,
    index,
    ...(claims ? { claims } : {}),
    summary: { policies, namespaceLabels: kc ? 'namespace watch' : 'name label only', podIndex, claims: claimsSummary, audit: auditSummary },
    ...(audit ? { audit } : {}),
    ...(publisher ? { publisher } : {}),
  };
}

/** The address claims: the store, its watch and sweeper, readiness and metrics. */
function wireClaims(
  kc: KubeCredentials,
  namespace: string,
  options: PolicyWiringOptions,
  index: AddressIndex,
  pods: PodAddressSource,
  registry: Registry,
  into: { background: BackgroundTask[]; readiness: Record<string, ReadinessCheck>; watches: Record<string, WatchHealth> },
): ClaimStore {
  const events = new Counter({
    name: 'netattach_address_claims_total',
    help: 'Address claims in the API server by outcome (won, lost, unavailable, not-claimed on the request path; taken-over, released, swept, release-failed; kept-running: a claim that looked stale kept, its pod running unseen by a lagging watch)',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const claims = new ClaimStore({
    api: leaseApi(kubeTransport(kc), namespace),
    kubeConfig: kc,
    // Live: a pod of the holder (that uid of the name; for a VMI, a pod of it) uses the address.
    live: (h, address) => index.heldBy(address.kind, address.value, h),
    livenessCurrent: () => pods.synced() && pods.staleSince() === undefined,
    // Before a claim never confirmed is taken over or swept: is its pod running after all (a lagging watch)?
    holderRuns: apiHolderLookup(kubeTransport(kc), options.defaultNetworkNamespace ? { defaultNetworkNamespace: options.defaultNetworkNamespace } : {}),
    ...(options.claimPendingMs !== undefined ? { pendingMs: options.claimPendingMs } : {}),
    ...(options.claimTimeoutMs !== undefined ? { timeoutMs: options.claimTimeoutMs } : {}),
    ...(options.backoffMs !== undefined ? { backoffMs: options.backoffMs } : {}),
    logger: options.logger,
    onEvent: (outcome, n = 1) => events.inc({ outcome }, n),
  });
  new Gauge({
    name: 'netattach_address_claims',
    help: 'Address claims (Leases) this replica knows from its watch',
    registers: [registry],
    collect() {
      this.set(claims.size());
    },
  });
  new Gauge({
    name: 'netattach_address_claims_unconfirmed',
    help: 'Address claims whose pod this replica has not seen using the address (being created, or never to be); bounded',
    registers: [registry],
    collect() {
      this.set(claims.stats().unconfirmed);
    },
  });
  into.background.push({ name: 'address claim watch', start: () => claims.start(), stop: () => claims.stop() });
  let sweeper: NodeJS.Timeout | undefined;
  into.background.push({
    name: 'address claim sweeper',
    start: () => void (sweeper = setInterval(() => void claims.sweep(), options.claimSweepMs ?? claimSweepMs(options.claimPendingMs ?? DEFAULT_CLAIM_PENDING_MS)).unref()),
    stop: () => clearInterval(sweeper),
  });
  into.readiness.claims = watchCheck('address claim watch', claims);
  into.watches.claims = claims;
  return claims;
}
