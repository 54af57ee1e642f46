// What the server is built from: the pure admission core and the adapters it calls, all injected
// so that tests (and `check`) can swap any of them.
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { ConnectionLimits } from './admission-app.js';
import type {
  AdmissionApiVersion,
  AdmissionConfig,
  AdmissionContext,
  AdmissionRequest,
  AdmissionReview,
  Decision,
  Endpoint,
} from '../admission/types.js';
import type { NadSource } from '../nads/types.js';
import type { Enforcement } from '../admission/observe.js';
import type { AddressReservations, PolicyEvaluator } from '../policy/types.js';
import type { AddressLeases } from '../policy/address-lease-store.js';
import type { DraSource } from './pipeline.js';

/** The public face of src/admission, as the pipeline uses it. */
export interface AdmissionCore {
  decodeReview(body: unknown): { ok: true; review: AdmissionReview } | { ok: false; error: string };
  plan(request: AdmissionRequest, config: AdmissionConfig): { nadRefs: Array<{ namespace: string; name: string }> };
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
  /** Watches and timers whose lifecycle follows the server's. */
  background?: BackgroundTask[];
  /** The registry for /metrics, when the wiring registered metrics of its own first. */
  registry?: Registry;
  logger: Logger;
}
