// What the server is built from: the pure admission core and the adapters it calls, all injected
// so that tests (and `check`) can swap any of them.
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type {
  AdmissionApiVersion,
  AdmissionConfig,
  AdmissionContext,
  AdmissionRequest,
  AdmissionReview,
  Decision,
  Endpoint,
  Enforcement,
} from '../admission/index.js';
import type { NadSource } from '../nads/index.js';
import type { AddressReservations, PolicyEvaluator, AddressLeases } from '../policy/index.js';
import type { DraView, TemplateLookup } from '../dra/index.js';
import type { BindingPlugins } from '../kubevirt/index.js';

/** The public face of src/admission, as the pipeline uses it. */
export interface AdmissionCore {
  decodeReview(body: unknown): { ok: true; review: AdmissionReview } | { ok: false; error: string };
  plan(
    request: AdmissionRequest,
    config: AdmissionConfig,
    bindings?: BindingPlugins,
  ): { nadRefs: Array<{ namespace: string; name: string }> };
  review(request: AdmissionRequest, context: AdmissionContext): Decision;
  toResponse(apiVersion: AdmissionApiVersion, uid: string, decision: Decision, endpoint: Endpoint): AdmissionReview;
}

/** What a cache fed by a list/watch tells readiness and the staleness gauge. */
export interface WatchHealth {
  synced(): boolean;
  lastFailure?(): { message: string; statusCode?: number } | undefined;
  staleSince?(): number | undefined;
}

/**
 * A readiness check: true when ready, a short reason why not, or `{ degraded }`: ready (it still
 * answers, from its caches) but something is wrong that an alert, not the endpoint list, should see.
 */
export type ReadinessCheck = () => true | string | { degraded: string };

/**
 * Something that runs beside the server (a watch, a sweeper): started by `listen()` and never
 * awaited there (a watch of an unreachable apiserver retries forever; readiness reports it),
 * stopped by `close()` after the requests have drained.
 */
export interface BackgroundTask {
  /** For the log. */
  name: string;
  start(): Promise<void> | void;
  stop(): Promise<void> | void;
}

export interface TlsFiles {
  certFile: string;
  keyFile: string;
  /** PEM bundle of CAs a client certificate must chain to; unset: no client certificate asked. */
  clientCaFile?: string;
}

export interface ServerOptions {
  /** Address both ports bind to. */
  host: string;
  /** HTTPS port for /mutate and /validate (0: any free port). */
  port: number;
  /** Plain-HTTP port for /healthz, /readyz, /metrics (0: any free port). */
  healthPort: number;
  tls: TlsFiles;
  /** Largest AdmissionReview body accepted, bytes. */
  bodyLimit: number;
  admission: AdmissionConfig;
  /** How long SIGTERM waits for in-flight requests before cutting connections. */
  shutdownGraceMs: number;
  /**
   * On close, how long no request must have come before idle connections are closed and the port
   * stops listening (meanwhile every answer ends its connection); at most half the grace. 0: at once.
   */
  drainQuietMs?: number;
  /** Quiet time after a certificate file event before reloading. */
  tlsReloadDebounceMs?: number;
  /** Re-read the certificate files this often even without events (missed inotify events). */
  tlsReloadPollMs?: number;
  /** Connection limits; the defaults (CONNECTION_LIMITS) are the production ones, tests shorten them. */
  limits?: Partial<ConnectionLimits>;
  /** Policy file given with --policy; loaded by the policy wiring, recorded here. */
  policyFile?: string;
  /** `--enforcement`: observe admits what enforce would deny (with warnings). Default enforce. */
  enforcement?: Enforcement;
}

export interface ServerDeps {
  /** The admission core; defaults to src/admission. */
  core?: AdmissionCore;
  nadSource: NadSource;
  /** Defaults to NO_POLICY (built-in rules enforced). */
  policy?: PolicyEvaluator;
  /** Defaults to an index that keeps nothing (no policy asks for uniqueness). */
  reservations?: AddressReservations;
  /** Address Leases in the API server, when uniqueness must hold across replicas. */
  addressLeases?: AddressLeases;
  /** Labels of a namespace, when a namespace informer is running. */
  namespaceLabels?: (namespace: string) => Record<string, string> | undefined;
  /** Watched caches by name, for the staleness gauge (readiness checks come separately). */
  watches?: Record<string, WatchHealth>;
  /** Extra readiness checks by name, e.g. `policies` once the policy source has loaded. */
  readiness?: Record<string, ReadinessCheck>;
  /** Pods (`namespace/name`) using a NAD, when a pod watch keeps them (NAD DELETE warnings). */
  podsUsingNad?: (namespace: string, name: string) => string[];
  /** DeviceClasses and ResourceClaimTemplates, when watched (cluster mode; docs/dra.md). */
  dra?: DraSource;
  /** KubeVirt's binding plugin registry, when known now (cluster mode; docs/kubevirt.md). */
  kubevirtBindings?: () => BindingPlugins | undefined;
  /** Watches and timers whose lifecycle follows the server's. */
  background?: BackgroundTask[];
  /** The registry for /metrics, when the wiring registered metrics of its own first. */
  registry?: Registry;
  logger: Logger;
}

/**
 * Connection limits, sized for the kube-apiserver as the only real client: it sends a request's
 * headers and body at once, waits at most 30 s for any webhook (timeoutSeconds <= 30), and keeps
 * idle connections up to 90 s.
 */
export interface ConnectionLimits {
  /** Idle time between requests on a connection: above the apiserver's 90 s, so it never reuses a connection just closed. */
  keepAliveTimeoutMs: number;
  /** A connection's first request must start within this after the TLS handshake; the handshake itself gets as long. */
  firstRequestMs: number;
  /** Headers of a request must arrive within this. */
  headersTimeoutMs: number;
  /** A whole request (headers and body) must arrive within this: no apiserver waits longer than 30 s. */
  requestTimeoutMs: number;
  /** How often Node checks the two above (its default, 30 s, would let a request live 60 s). */
  checkIntervalMs: number;
  /** Open connections at once; more are closed on accept (an idle TLS connection costs about 44 KB). */
  maxConnections: number;
  /** Bytes of unfinished request bodies and unread answers held at once over all connections (body.ts). */
  inflightBytes: number;
  /** An answer its client has not taken within this is dropped with the connection (body.ts). */
  answerDrainMs: number;
}

/** DeviceClasses and ResourceClaimTemplates as the server reads them: a view, and a lookup on a cache miss. */
export interface DraSource extends DraView {
  lookup?(namespace: string, name: string, timeoutMs: number): Promise<TemplateLookup>;
}
