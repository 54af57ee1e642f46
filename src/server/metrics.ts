// Prometheus metrics of one server instance (its own registry, so tests can run several).
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { HEAP_DEGRADED_RATIO, heapRatio, heapUse } from './heap.js';
import type { NadSource } from '../nads/index.js';
import type { WatchHealth } from './types.js';

export type ReviewResult = 'allowed' | 'denied' | 'error' | 'patched';
/** `not-found-remembered`: absent, from the source's short memory (no GET); `capped`: past the per-review cap, not looked up. */
export type LookupOutcome = 'hit' | 'fetched' | 'not-found' | 'not-found-remembered' | 'unavailable' | 'capped';

// Label values come from requests: anything outside these sets is counted as `other`, so a
// client cannot grow the number of series without bound.
const KINDS = new Set([
  'Pod',
  'Deployment',
  'ReplicaSet',
  'StatefulSet',
  'DaemonSet',
  'Job',
  'CronJob',
  'ReplicationController',
  'PodTemplate',
  'NetworkAttachmentDefinition',
]);
const OPERATIONS = new Set(['CREATE', 'UPDATE', 'DELETE', 'CONNECT']);
export const boundedKind = (kind: unknown): string => (typeof kind === 'string' && KINDS.has(kind) ? kind : 'other');
export const boundedOperation = (op: unknown): string => (typeof op === 'string' && OPERATIONS.has(op) ? op : 'other');

export interface ServerMetrics {
  registry: Registry;
  reviews: Counter<'endpoint' | 'operation' | 'kind' | 'result'>;
  reviewDuration: Histogram<'endpoint'>;
  denials: Counter<'reason'>;
  wouldDeny: Counter<'reason'>;
  badRequests: Counter<'endpoint' | 'status'>;
  nadLookups: Counter<'outcome'>;
  findings: Counter<'endpoint' | 'policy' | 'rule' | 'action'>;
  tlsReloads: Counter<'result'>;
  tlsHandshakeFailures: Counter;
  tlsExpiry: Gauge;
}

/** `registry`: one the wiring already registered its own metrics in (policy sources, index). */
export function createMetrics(
  nadSource: () => NadSource | undefined,
  registry = new Registry(),
  watches: Record<string, WatchHealth> = {},
): ServerMetrics {
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  new Gauge({
    name: 'netattach_cache_stale_seconds',
    help: 'Seconds since the watch feeding a cache started failing after its first sync (0 while it works): alert on this, not on readiness',
    labelNames: ['cache'],
    registers,
    collect() {
      const now = Date.now();
      for (const [cache, w] of Object.entries(watches)) {
        const since = w.synced() ? w.staleSince?.() : undefined;
        this.set({ cache }, since === undefined ? 0 : Math.max(0, (now - since) / 1000));
      }
    },
  });
  new Gauge({
    name: 'netattach_heap_used_ratio',
    help: `V8 heap in use over its cap (heap_size_limit, from --max-old-space-size); from ${HEAP_DEGRADED_RATIO} readiness says degraded and NetattachHeapNearCap fires`,
    registers,
    collect() {
      this.set(heapRatio(heapUse()));
    },
  });
  new Gauge({
    name: 'netattach_nad_cache_size',
    help: 'NetworkAttachmentDefinitions in the cache',
    registers,
    collect() {
      this.set(nadSource()?.size() ?? 0);
    },
  });
  new Gauge({
    name: 'netattach_nad_source_synced',
    help: '1 once the NAD source has completed its first sync',
    registers,
    collect() {
      this.set(nadSource()?.synced() ? 1 : 0);
    },
  });
  return {
    registry,
    reviews: new Counter({
      name: 'netattach_admission_reviews_total',
      help: 'AdmissionReviews answered, by endpoint, operation, kind and result',
      labelNames: ['endpoint', 'operation', 'kind', 'result'],
      registers,
    }),
    reviewDuration: new Histogram({
      name: 'netattach_admission_review_duration_seconds',
      help: 'Time from a decoded AdmissionReview to its response, NAD lookups included',
      labelNames: ['endpoint'],
      buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
      registers,
    }),
    denials: new Counter({
      name: 'netattach_admission_denials_total',
      help: 'Denials by the rule that caused them (validation: malformed input; internal: netattach error)',
      labelNames: ['reason'],
      registers,
    }),
    wouldDeny: new Counter({
      name: 'netattach_admission_would_deny_total',
      help: 'Observe mode: requests admitted that enforce mode would deny, by the rule that would deny them',
      labelNames: ['reason'],
      registers,
    }),
    badRequests: new Counter({
      name: 'netattach_admission_bad_requests_total',
      help: 'Requests refused before review (not JSON, wrong content type, too large, no request)',
      labelNames: ['endpoint', 'status'],
      registers,
    }),
    nadLookups: new Counter({
      name: 'netattach_nad_lookups_total',
      help: 'NAD lookups on the request path by outcome (capped: past the per-review cap, not looked up)',
      labelNames: ['outcome'],
      registers,
    }),
    // Counted here, once per review from the final decision, not by the policy engine: it runs on
    // both endpoints and its findings may still be re-graded by the core (warn-only updates).
    findings: new Counter({
      name: 'netattach_policy_findings_total',
      help: 'Findings of the final decisions by endpoint, policy (builtin for the built-in rules), rule and action',
      labelNames: ['endpoint', 'policy', 'rule', 'action'],
      registers,
    }),
    tlsReloads: new Counter({
      name: 'netattach_tls_reloads_total',
      help: 'Certificate reloads by result (failure: the previous pair stays in service)',
      labelNames: ['result'],
      registers,
    }),
    tlsHandshakeFailures: new Counter({
      name: 'netattach_tls_handshake_failures_total',
      help: 'TLS handshakes on the admission port that failed (client certificate refused, no shared cipher or version, timeout)',
      registers,
    }),
    tlsExpiry: new Gauge({
      name: 'netattach_tls_certificate_expiry_timestamp_seconds',
      help: 'notAfter of the serving certificate in service, Unix seconds',
      registers,
    }),
  };
}
