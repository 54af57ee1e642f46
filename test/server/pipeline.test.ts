// src/server/pipeline.ts itself, with the real admission core, policy engine and address index.
//
// The race the design forbids (docs/design.md, request pipeline steps 4-5): the review reads the
// address index and the reservation writes it, with no yield between them, so two requests in one
// replica can never both win a unique address. The test is deterministic: the core's review is
// wrapped so that, the moment the first review returns, it queues a rival request for the same
// GUID as a microtask. A microtask queued during the review runs before any continuation the
// pipeline could queue after it (an `await`, `.then`, `queueMicrotask`, `setImmediate`, timer),
// so the rival is reviewed before a deferred reservation would land, and it is admitted.
//
// Broken-build recipe (each makes both race subtests fail with "the rival is denied"):
//   in decide() replace `deps.reservations.reserve(decision.addresses);` with
//   `setImmediate(() => deps.reservations.reserve(decision.addresses));`, or with
//   `void Promise.resolve().then(() => deps.reservations.reserve(decision.addresses));`.
import t from 'tap';
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';
import * as admission from '../../src/admission/index.js';
import {
  DEFAULT_ADMISSION_CONFIG,
  type AdmissionApiVersion,
  type AdmissionContext,
  type AdmissionRequest,
  type AdmissionReview,
  type Decision,
  type Endpoint,
} from '../../src/admission/types.js';
import { observed } from '../../src/admission/observe.js';
import { warningText } from '../../src/admission/warnings.js';
import { createLogger } from '../../src/server/logger.js';
import { renderError, type FieldError } from '../../src/field/index.js';
import type { Nad, NadSource } from '../../src/nads/types.js';
import type { AddressLeases, HeldAddress, LeaseOutcome, Finding, PolicyEvaluator, WantedLease } from '../../src/policy/index.js';
import type { TemplateLookup } from '../../src/dra/types.js';
import { settleAddressLeases } from '../../src/server/address-leases.js';
import type { ServerMetrics } from '../../src/server/metrics.js';
import { StaticNadSource, type NadLookup } from '../../src/nads/index.js';
import { AddressIndex, PolicyEngine, loadPolicyDocuments, policySet } from '../../src/policy/index.js';
import { createMetrics } from '../../src/server/metrics.js';
import { handleReview, internalErrorReview, type PipelineDeps, type PipelineResult } from '../../src/server/pipeline.js';
import type { DraSource } from '../../src/server/types.js';
import type { AdmissionCore } from '../../src/server/types.js';
import { captureLogger, fakeCore } from './fixtures.js';
import { nadObject, podCreate, policyDoc } from '../cli/policy-helpers.js';

const GUID = '00:11:22:33:44:55:66:77';
const ib = (network: string) => JSON.stringify([{ name: network, 'infiniband-guid': GUID }]);

/** A NAD source whose `late` NADs are not in the cache: found only by an (asynchronous) lookup. */
class LateSource extends StaticNadSource {
  readonly late = new StaticNadSource([nadObject('default', 'ib-late', ['infinibandGUID'])]);
  override async lookup(namespace: string, name: string): Promise<NadLookup> {
    const hit = this.get(namespace, name) ?? this.late.get(namespace, name);
    return hit ? { status: 'found', nad: hit } : { status: 'not-found' };
  }
}

function pipeline(opts: { onReviewed?: () => void } = {}): { deps: PipelineDeps; index: AddressIndex; reserved: string[] } {
  const { policies, errors } = loadPolicyDocuments(policyDoc('unique', 'rules:\n  uniqueAddresses: {infiniband-guid: Cluster}'), 'test');
  if (errors.length > 0) throw new Error(errors.map((e) => e.message).join('\n'));
  const index = new AddressIndex();
  const reserved: string[] = [];
  const nadSource = new LateSource([nadObject('default', 'ib', ['infinibandGUID'])]);
  const core: AdmissionCore = {
    ...admission,
    review(request, context) {
      const decision = admission.review(request, context);
      opts.onReviewed?.();
      return decision;
    },
  };
  const deps: PipelineDeps = {
    core,
    nadSource,
    policy: new PolicyEngine({ policies: policySet(policies), index }),
    reservations: {
      reserve(claims) {
        reserved.push(...claims.map((c) => `${c.pod.name}:${c.value}`));
        index.reserve(claims);
      },
    },
    config: DEFAULT_ADMISSION_CONFIG,
    logger: captureLogger().logger,
    metrics: createMetrics(() => nadSource),
  };
  return { deps, index, reserved };
}

const response = (r: PipelineResult): NonNullable<AdmissionReview['response']> => {
  if (r.status !== 200) throw new Error(`status ${r.status}: ${r.error}`);
  return r.review.response!;
};

for (const firstNetwork of ['ib', 'ib-late']) {
  const path = firstNetwork === 'ib' ? 'NAD cached (synchronous path)' : 'NAD looked up (asynchronous path)';
  t.test(`race, ${path}: a rival reviewed right after the first review is denied`, async (t) => {
    let rival: Promise<PipelineResult> | undefined;
    let armed = true;
    const { deps, reserved } = pipeline({
      onReviewed: () => {
        if (!armed) return;
        armed = false;
        // The rival uses the cached NAD, so its review runs within this microtask.
        queueMicrotask(() => {
          rival = Promise.resolve(handleReview(podCreate({ name: 'rival', uid: 'u-rival', networks: ib('ib') }), 'validate', 1000, deps));
        });
      },
    });
    const first = response(
      await handleReview(podCreate({ name: 'first', uid: 'u-first', networks: ib(firstNetwork) }), 'validate', 1000, deps),
    );
    t.equal(first.allowed, true, first.status?.message ?? 'the first pod is admitted');
    t.ok(rival, 'the rival was sent between the first review and anything the pipeline did after it');
    const second = response(await rival!);
    t.equal(second.allowed, false, 'the rival is denied');
    t.match(second.status?.message, `GUID ${GUID} is already used by pod default/first (being created)`);
    t.same(reserved, [`first:${GUID}`], 'only the winner reserved');
  });
}

t.test('no reservation on a denial, a dry run, the mutate call of an unnamed pod, or a non-CREATE', async (t) => {
  const { deps, index } = pipeline();
  const send = async (review: AdmissionReview, endpoint: 'mutate' | 'validate' = 'validate') =>
    response(await handleReview(review, endpoint, 1000, deps));
  t.equal((await send(podCreate({ name: 'dry', uid: 'u-dry', networks: ib('ib'), dryRun: true }))).allowed, true);
  t.equal(index.stats().reservations, 0, 'dry run reserves nothing');
  t.equal((await send(podCreate({ generateName: 'web-', networks: ib('ib') }), 'mutate')).allowed, true);
  t.equal(index.stats().reservations, 0, 'a pod with no identity yet claims nothing');
  const update = podCreate({ name: 'u', uid: 'u-u', networks: ib('ib') });
  update.request!.operation = 'UPDATE';
  update.request!.oldObject = update.request!.object;
  await send(update);
  t.equal(index.stats().reservations, 0, 'an UPDATE reserves nothing');
  t.equal((await send(podCreate({ name: 'a', uid: 'u-a', networks: ib('ib') }))).allowed, true);
  t.equal(index.stats().reservations, 1, 'an admitted CREATE reserves');
  const denied = await send(podCreate({ name: 'b', uid: 'u-b', networks: ib('ib-late') }));
  t.equal(denied.allowed, false);
  t.equal(index.stats().reservations, 1, 'a denied CREATE reserves nothing');
});

// Issue 24, finding 1: forged reviews with many addresses cannot grow the reservations without
// bound, and a flood in one namespace leaves other tenants' reservations and answers alone.
t.test('reservations bounded: 64 per pod with a warning, a flooding namespace capped, other tenants unharmed', async (t) => {
  const { deps, index, reserved } = pipeline();
  const guidOf = (n: number) =>
    `00:11:22:33:${((n >> 16) & 0xff).toString(16).padStart(2, '0')}:${((n >> 8) & 0xff).toString(16).padStart(2, '0')}:${(n & 0xff).toString(16).padStart(2, '0')}:01`;
  const many = (first: number, count: number) =>
    JSON.stringify(Array.from({ length: count }, (_, k) => ({ name: 'ib', namespace: 'default', 'infiniband-guid': guidOf(first + k) })));
  const send = async (review: AdmissionReview) => response(await handleReview(review, 'validate', 1000, deps));

  const big = await send(podCreate({ namespace: 'flood', name: 'big', uid: 'u-big', networks: many(0, 200) }));
  t.equal(big.allowed, true, 'never denied for having many addresses');
  t.match(big.warnings, [/uniqueAddresses\.limit/], 'warned that the rest were not reserved');
  t.equal(reserved.length, 64, 'the first 64 reserved');
  t.equal(index.stats().reservations, 64);

  const victim = await send(podCreate({ namespace: 'victim', name: 'v', uid: 'u-v', networks: many(900_000, 2) }));
  t.equal(victim.allowed, true);
  const { perNamespace } = index.reservationLimits();
  const reviews = Math.ceil(perNamespace / 64) + 20;
  for (let n = 1; n <= reviews; n++) {
    const a = await send(podCreate({ namespace: 'flood', name: `forged-${n}`, uid: `u-forged-${n}`, networks: many(n * 1_000, 200) }));
    if (!a.allowed) t.fail(`forged review ${n} denied: ${a.status?.message?.slice(0, 200)}`);
  }
  t.equal(index.stats().reservations, perNamespace + 2, `the flooding namespace holds its cap (${perNamespace}); the victim its 2`);
  t.ok(index.reservationsCapped().namespace > 0, `${index.reservationsCapped().namespace} evicted in the flooding namespace`);
  const rival = await send(podCreate({ namespace: 'victim', name: 'rival', uid: 'u-rival', networks: many(900_000, 1) }));
  t.equal(rival.allowed, false, "the victim's reservation still guards its address");
  t.match(rival.status?.message, 'already used by pod victim/v (being created)');
});

// ---------------------------------------------------------------------------------------------
// handleReview with scripted deps: a core whose review and response are given per test, a NAD
// source whose cache and origin are separate maps, metrics that record every call, and a pino
// logger writing into a Writable. Each test asserts whole values: the answer, the metric calls
// (name, labels, amount, in order) and the log lines (level, msg and every field).
// ---------------------------------------------------------------------------------------------

type Labels = Record<string, string> | undefined;
type MetricCall = [metric: string, labels: Labels, value: number];

function recordingMetrics(): { metrics: ServerMetrics; calls: MetricCall[]; durations: Array<[Labels, number]> } {
  const calls: MetricCall[] = [];
  const durations: Array<[Labels, number]> = [];
  const counter = (metric: string) => ({
    inc: (labels?: Labels, value?: number) => {
      calls.push([metric, labels, value ?? 1]);
    },
  });
  const metrics = {
    reviews: counter('reviews'),
    denials: counter('denials'),
    wouldDeny: counter('wouldDeny'),
    nadLookups: counter('nadLookups'),
    findings: counter('findings'),
    badRequests: counter('badRequests'),
    reviewDuration: { observe: (labels: Labels, seconds: number) => durations.push([labels, seconds]) },
  } as unknown as ServerMetrics;
  return { metrics, calls, durations };
}

function linesLogger(level: 'debug' | 'info' = 'info'): { logger: Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      for (const line of String(chunk).split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      cb();
    },
  });
  return { logger: pino({ level, base: undefined, timestamp: false }, stream), lines };
}

const key = (namespace: string, name: string) => `${namespace}/${name}`;
const nadOf = (namespace: string, name: string, claimTemplate?: string): Nad => ({
  namespace,
  name,
  resourceNames: [],
  nodeSelector: {},
  problems: [],
  ...(claimTemplate ? { claimTemplate } : {}),
});

/** The cache (`get`) and the origin (`lookup`) apart: `origin` answers lookups, else the cache does. */
class ScriptedNads implements NadSource {
  readonly kind = 'static' as const;
  readonly cache = new Map<string, Nad>();
  readonly origin = new Map<string, () => Promise<NadLookup>>();
  readonly gets: string[] = [];
  readonly lookups: string[] = [];
  constructor(cached: Nad[] = []) {
    for (const n of cached) this.cache.set(key(n.namespace, n.name), n);
  }
  async start(): Promise<void> {}
  async stop(): Promise<void> {}
  synced(): boolean {
    return true;
  }
  size(): number {
    return this.cache.size;
  }
  list(): Nad[] {
    return [...this.cache.values()];
  }
  get(namespace: string, name: string): Nad | undefined {
    this.gets.push(key(namespace, name));
    return this.cache.get(key(namespace, name));
  }
  lookup(namespace: string, name: string): Promise<NadLookup> {
    this.lookups.push(key(namespace, name));
    const scripted = this.origin.get(key(namespace, name));
    if (scripted) return scripted();
    const nad = this.cache.get(key(namespace, name));
    return Promise.resolve(nad ? { status: 'found', nad } : { status: 'not-found' });
  }
}

const decisionOf = (over: Partial<Decision> = {}): Decision => ({
  allowed: true,
  errors: [],
  warnings: [],
  audits: [],
  findings: [],
  patch: [],
  addresses: [],
  ...over,
});

interface Script {
  refs?: Array<{ namespace: string; name: string }>;
  /** The decision of core.review; by default allowed, nothing else. */
  decide?: (request: AdmissionRequest, context: AdmissionContext) => Decision;
  toResponse?: AdmissionCore['toResponse'];
  plan?: AdmissionCore['plan'];
  nads?: ScriptedNads;
  addressLeases?: AddressLeases;
  dra?: DraSource;
  enforcement?: 'enforce' | 'observe';
  logLevel?: 'debug' | 'info';
  namespaceLabels?: PipelineDeps['namespaceLabels'];
  podsUsingNad?: PipelineDeps['podsUsingNad'];
}

function rig(script: Script = {}) {
  const contexts: AdmissionContext[] = [];
  const responded: Decision[] = [];
  const reserved: HeldAddress[][] = [];
  const released: HeldAddress[][] = [];
  const evaluated: Array<[unknown, unknown]> = [];
  const planned: AdmissionRequest[] = [];
  const { metrics, calls, durations } = recordingMetrics();
  const { logger, lines } = linesLogger(script.logLevel);
  const nads = script.nads ?? new ScriptedNads();
  const core: AdmissionCore = {
    decodeReview: fakeCore.decodeReview,
    plan:
      script.plan ??
      ((request) => {
        planned.push(request);
        return { nadRefs: script.refs ?? [] };
      }),
    review(request, context) {
      contexts.push(context);
      return script.decide ? script.decide(request, context) : decisionOf();
    },
    toResponse(apiVersion, uid, decision, endpoint) {
      responded.push(decision);
      return (script.toResponse ?? fakeCore.toResponse)(apiVersion, uid, decision, endpoint);
    },
  };
  const policy: PolicyEvaluator = {
    evaluate(input, options) {
      evaluated.push([input, options]);
      return { findings: [], addresses: [] } as unknown as ReturnType<PolicyEvaluator['evaluate']>;
    },
  };
  const deps: PipelineDeps = {
    core,
    nadSource: nads,
    policy,
    reservations: {
      reserve: (claims) => void reserved.push([...claims]),
      release: (claims) => void released.push([...claims]),
    },
    config: DEFAULT_ADMISSION_CONFIG,
    logger,
    metrics,
    ...(script.addressLeases ? { addressLeases: script.addressLeases } : {}),
    ...(script.dra ? { dra: script.dra } : {}),
    ...(script.enforcement ? { enforcement: script.enforcement } : {}),
    ...(script.namespaceLabels ? { namespaceLabels: script.namespaceLabels } : {}),
    ...(script.podsUsingNad ? { podsUsingNad: script.podsUsingNad } : {}),
  };
  return { deps, nads, contexts, responded, reserved, released, evaluated, planned, calls, durations, lines, policy };
}

let uidSeq = 0;
function reviewOf(over: Partial<AdmissionRequest> = {}, apiVersion: AdmissionApiVersion = 'admission.k8s.io/v1'): AdmissionReview {
  return {
    apiVersion,
    kind: 'AdmissionReview',
    request: {
      uid: `uid-${++uidSeq}`,
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      name: 'p',
      namespace: 'ns',
      operation: 'CREATE',
      userInfo: { username: 'alice' },
      object: { metadata: { name: 'p' } },
      ...over,
    },
  };
}

const whoOf = (r: AdmissionReview, endpoint: Endpoint, name: string | undefined = r.request!.name) => {
  const q = r.request!;
  const out: Record<string, unknown> = {
    uid: q.uid,
    endpoint,
    kind: q.kind?.kind,
    namespace: q.namespace,
    objectName: name,
    operation: q.operation,
  };
  for (const k of Object.keys(out)) if (out[k] === undefined) delete out[k];
  return out;
};
const reviewsCall = (endpoint: Endpoint, result: string, operation = 'CREATE', kind = 'Pod'): MetricCall => [
  'reviews',
  { endpoint, operation, kind, result },
  1,
];
const isPromise = (v: unknown): boolean => v instanceof Promise;

async function answer(r: PipelineResult | Promise<PipelineResult>): Promise<AdmissionReview> {
  const done = await r;
  if (done.status !== 200) throw new Error(`status ${done.status}: ${done.error}`);
  return done.review;
}

const fieldError = (path: string, reason: string): FieldError => ({ path, type: 'Invalid value', value: 'v', reason });
const finding = (policy: string, rule: string, action: 'Enforce' | 'Warn' | 'Audit', path = `spec.${rule}`): Finding => ({
  policy,
  rule,
  action,
  error: fieldError(path, `${rule} says no`),
});

t.test('internalErrorReview: a 500 denial naming the uid', async (t) => {
  t.strictSame(internalErrorReview('admission.k8s.io/v1beta1', 'u-9'), {
    apiVersion: 'admission.k8s.io/v1beta1',
    kind: 'AdmissionReview',
    response: {
      uid: 'u-9',
      allowed: false,
      status: {
        code: 500,
        reason: 'InternalError',
        message: 'netattach could not review this request (internal error, uid u-9); see the webhook log',
      },
    },
  });
});

t.test('an undecodable body: 400, synchronously, nothing planned, counted or logged', async (t) => {
  const r = rig();
  const out = handleReview({ apiVersion: 'nope' }, 'mutate', 1000, r.deps);
  t.strictSame(out, { status: 400, error: 'apiVersion: Unsupported value' });
  t.strictSame(r.planned, []);
  t.strictSame(r.calls, []);
  t.strictSame(r.durations, []);
  t.strictSame(r.lines, []);
});

t.test('the hot path: every NAD cached, no templates: answered synchronously, counted as hits', async (t) => {
  const nads = new ScriptedNads([nadOf('ns', 'a'), nadOf('ns', 'b')]);
  let budgetCalls = 0;
  const r = rig({
    nads,
    refs: [
      { namespace: 'ns', name: 'a' },
      { namespace: 'ns', name: 'b' },
      { namespace: 'ns', name: 'a' },
    ],
  });
  const body = reviewOf();
  const out = handleReview(body, 'validate', () => ++budgetCalls, r.deps);
  t.equal(isPromise(out), false, 'no promise');
  t.strictSame(out, {
    status: 200,
    review: { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', response: { uid: body.request!.uid, allowed: true } },
  });
  t.equal(budgetCalls, 0, 'the budget function is only called on a cache miss');
  t.strictSame(nads.lookups, [], 'no lookup');
  t.strictSame(r.calls, [['nadLookups', { outcome: 'hit' }, 2], reviewsCall('validate', 'allowed')]);
  t.equal(r.durations.length, 1);
  t.strictSame(r.durations[0]![0], { endpoint: 'validate' });
  t.ok(r.durations[0]![1] >= 0 && r.durations[0]![1] < 1, `seconds: ${r.durations[0]![1]}`);
  t.strictSame(r.lines, [], 'nothing logged at info for a plain admission');
  t.strictSame(r.contexts[0]!.nads('ns', 'a'), { status: 'found', nad: nadOf('ns', 'a') });
  t.equal(r.contexts[0]!.endpoint, 'validate');
  t.equal(r.contexts[0]!.config, DEFAULT_ADMISSION_CONFIG);
  t.equal(r.contexts[0]!.policy, r.policy, 'no address leases: the policy as is');
  t.notOk('dra' in r.contexts[0]!);
  t.notOk('podsUsingNad' in r.contexts[0]!);
});

t.test('no NAD references: synchronous, no lookup counted', async (t) => {
  const r = rig();
  const body = reviewOf();
  const out = handleReview(body, 'mutate', 1000, r.deps);
  t.equal(isPromise(out), false);
  t.strictSame(r.calls, [reviewsCall('mutate', 'allowed')]);
});

/** Busy for `ms` milliseconds: a review that takes time, without a timer (the review is synchronous). */
function spin(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

t.test('debug: one "reviewed" line per review, only when debug is enabled', async (t) => {
  for (const level of ['debug', 'info'] as const) {
    // A review of about 2 ms: a duration of a few microseconds rounds to 0 ms however it is scaled.
    const r = rig({ logLevel: level, decide: () => (spin(2), decisionOf()) });
    const body = reviewOf({ name: undefined, object: { metadata: { generateName: 'web-' } } });
    await answer(handleReview(body, 'mutate', 1000, r.deps));
    if (level === 'info') {
      t.strictSame(r.lines, [], 'info: no line');
      continue;
    }
    t.equal(r.lines.length, 1);
    const { ms, ...rest } = r.lines[0]!;
    t.strictSame(rest, { level: 20, ...whoOf(body, 'mutate', 'web-*'), result: 'allowed', msg: 'reviewed' });
    t.ok(typeof ms === 'number' && ms >= 1.5 && ms < 1000, `ms: ${String(ms)}`);
    t.equal(ms, Math.round((ms as number) * 10) / 10, 'ms to a tenth');
    t.ok(
      Math.abs((ms as number) - r.durations[0]![1] * 1000) <= 0.05 + 1e-9,
      `ms is the observed duration (${String(ms)} ms, ${r.durations[0]![1]} s)`,
    );
  }
});

t.test('who: the object name, else generateName*, else none; kind and namespace when present', async (t) => {
  const deny = () => decisionOf({ allowed: false, code: 403, errors: [fieldError('x', 'no')] });
  const cases: Array<{ what: string; over: Partial<AdmissionRequest>; name?: string }> = [
    { what: 'name', over: { name: 'n1', object: { metadata: { generateName: 'g-' } } }, name: 'n1' },
    { what: 'generateName', over: { name: undefined, object: { metadata: { generateName: 'g-' } } }, name: 'g-*' },
    { what: 'generateName not a string', over: { name: undefined, object: { metadata: { generateName: 7 } } } },
    { what: 'no metadata', over: { name: undefined, object: {} } },
    { what: 'null object', over: { name: undefined, object: null } },
    { what: 'no object', over: { name: undefined, object: undefined } },
    {
      what: 'empty name, no namespace',
      over: { name: '', namespace: undefined, object: { metadata: { generateName: 'e-' } } },
      name: 'e-*',
    },
  ];
  for (const c of cases) {
    const r = rig({ decide: deny });
    const body = reviewOf(c.over);
    await answer(handleReview(body, 'validate', 1000, r.deps));
    t.strictSame(
      r.lines,
      [{ level: 30, ...whoOf(body, 'validate', c.name), rules: [], reasons: ['x: Invalid value: "v": no'], msg: 'denied' }],
      c.what,
    );
  }
});

// Broken build: await a cached NAD's lookup outside the Promise.race (as lookupWithin once did):
// the hanging one holds the answer past the deadline (tap's timeout), the rejecting one is a 500.
t.test('lookups: a cached NAD whose lookup hangs or rejects is unavailable within the deadline', async (t) => {
  const nads = new ScriptedNads([nadOf('ns', 'hangs'), nadOf('ns', 'rejects')]);
  nads.origin.set('ns/hangs', () => new Promise<NadLookup>(() => {}));
  nads.origin.set('ns/rejects', () => Promise.reject(new Error('cache gone')));
  nads.origin.set('ns/remote', async () => ({ status: 'found', nad: nadOf('ns', 'remote') }));
  const r = rig({ nads, refs: ['hangs', 'rejects', 'remote'].map((name) => ({ namespace: 'ns', name })) });
  const review = await answer(handleReview(reviewOf(), 'validate', 50, r.deps));
  t.equal(review.response!.allowed, true, 'reviewed: the fake review allows');
  const nadsOf = r.contexts[0]!.nads;
  t.strictSame(nadsOf('ns', 'hangs'), { status: 'unavailable', reason: 'NAD lookup did not finish within 50 ms' });
  t.strictSame(nadsOf('ns', 'rejects'), { status: 'unavailable', reason: 'lookup failed: cache gone' });
  t.strictSame(r.calls.slice(0, 3), [
    ['nadLookups', { outcome: 'unavailable' }, 1],
    ['nadLookups', { outcome: 'unavailable' }, 1],
    ['nadLookups', { outcome: 'fetched' }, 1],
  ]);
});

t.test('the metrics labels: bounded kind and operation', async (t) => {
  const r = rig();
  await answer(
    handleReview(
      reviewOf({ kind: { group: 'x.io', version: 'v1', kind: 'Widget' }, operation: 'BOGUS' as 'CREATE' }),
      'validate',
      1000,
      r.deps,
    ),
  );
  await answer(
    handleReview(reviewOf({ kind: { group: 'apps', version: 'v1', kind: 'Deployment' }, operation: 'DELETE' }), 'mutate', 1000, r.deps),
  );
  t.strictSame(r.calls, [reviewsCall('validate', 'allowed', 'other', 'other'), reviewsCall('mutate', 'allowed', 'DELETE', 'Deployment')]);
});

t.test('lookups: cached NADs are still looked up once one is missing; outcomes hit/fetched/not-found/unavailable', async (t) => {
  const nads = new ScriptedNads([nadOf('ns', 'cached'), nadOf('ns', 'stale')]);
  nads.origin.set('ns/stale', async () => ({ status: 'not-found' }));
  nads.origin.set('ns/remote', async () => ({ status: 'found', nad: nadOf('ns', 'remote') }));
  nads.origin.set('ns/down', async () => ({ status: 'unavailable', reason: 'apiserver down' }));
  nads.origin.set('ns/throws', () => Promise.reject(new Error('boom')));
  nads.origin.set('ns/throws-string', () => Promise.reject('plain')); // eslint-disable-line prefer-promise-reject-errors
  const names = ['cached', 'stale', 'remote', 'absent', 'down', 'throws', 'throws-string'];
  let budgetCalls = 0;
  const r = rig({ nads, refs: names.map((name) => ({ namespace: 'ns', name })) });
  const body = reviewOf();
  const out = handleReview(body, 'validate', () => (++budgetCalls, 1000), r.deps);
  t.equal(isPromise(out), true, 'a cache miss: asynchronous');
  await answer(out);
  t.equal(budgetCalls, 1);
  t.strictSame(
    nads.lookups,
    names.map((n) => `ns/${n}`),
    'every NAD looked up, the cached ones included',
  );
  t.strictSame(r.calls, [
    ['nadLookups', { outcome: 'hit' }, 1],
    ['nadLookups', { outcome: 'not-found' }, 1],
    ['nadLookups', { outcome: 'fetched' }, 1],
    ['nadLookups', { outcome: 'not-found' }, 1],
    ['nadLookups', { outcome: 'unavailable' }, 1],
    ['nadLookups', { outcome: 'unavailable' }, 1],
    ['nadLookups', { outcome: 'unavailable' }, 1],
    reviewsCall('validate', 'allowed'),
  ]);
  const ctx = r.contexts[0]!;
  t.strictSame(
    names.map((n) => ctx.nads('ns', n)),
    [
      { status: 'found', nad: nadOf('ns', 'cached') },
      { status: 'not-found' },
      { status: 'found', nad: nadOf('ns', 'remote') },
      { status: 'not-found' },
      { status: 'unavailable', reason: 'apiserver down' },
      { status: 'unavailable', reason: 'lookup failed: boom' },
      { status: 'unavailable', reason: 'lookup failed: plain' },
    ],
    'the review sees what was resolved, before the cache (stale: not-found although cached)',
  );
});

t.test('the nads callback: resolved, else the cache, else unavailable', async (t) => {
  const nads = new ScriptedNads([nadOf('ns', 'a'), nadOf('other', 'late')]);
  const r = rig({ nads, refs: [{ namespace: 'ns', name: 'a' }] });
  await answer(handleReview(reviewOf(), 'mutate', 1000, r.deps));
  const ctx = r.contexts[0]!;
  t.strictSame(ctx.nads('other', 'late'), { status: 'found', nad: nadOf('other', 'late') });
  t.strictSame(ctx.nads('ns', 'zzz'), { status: 'unavailable', reason: 'not resolved before the review' });
});

t.test('the lookup deadline: Math.round of the budget (a number or a function) in the reason', async (t) => {
  for (const [budget, shown] of [
    [5.4, '5'],
    [5.6, '6'],
    [() => 5.4, '5'],
  ] as const) {
    const nads = new ScriptedNads();
    nads.origin.set('ns/slow', () => new Promise<NadLookup>(() => {}));
    const r = rig({ nads, refs: [{ namespace: 'ns', name: 'slow' }] });
    await answer(handleReview(reviewOf(), 'validate', budget, r.deps));
    t.strictSame(
      r.contexts[0]!.nads('ns', 'slow'),
      { status: 'unavailable', reason: `NAD lookup did not finish within ${shown} ms` },
      String(budget),
    );
    t.strictSame(r.calls, [['nadLookups', { outcome: 'unavailable' }, 1], reviewsCall('validate', 'allowed')]);
  }
});

t.test('the lookup deadline is the budget: a lookup slower than it is unavailable, a faster one counts', async (t) => {
  const nads = new ScriptedNads();
  nads.origin.set('ns/fast', () => new Promise((resolve) => setTimeout(() => resolve({ status: 'found', nad: nadOf('ns', 'fast') }), 5)));
  let slowTimer: NodeJS.Timeout | undefined;
  t.teardown(() => clearTimeout(slowTimer));
  nads.origin.set(
    'ns/slow',
    () => new Promise((resolve) => (slowTimer = setTimeout(() => resolve({ status: 'found', nad: nadOf('ns', 'slow') }), 2000))),
  );
  const r = rig({
    nads,
    refs: [
      { namespace: 'ns', name: 'fast' },
      { namespace: 'ns', name: 'slow' },
    ],
  });
  const started = Date.now();
  await answer(handleReview(reviewOf(), 'validate', 100, r.deps));
  const took = Date.now() - started;
  t.ok(took >= 90 && took < 1500, `answered at the deadline, not when the slow lookup ends (${took} ms)`);
  t.strictSame(r.contexts[0]!.nads('ns', 'fast'), { status: 'found', nad: nadOf('ns', 'fast') });
  t.strictSame(r.contexts[0]!.nads('ns', 'slow'), { status: 'unavailable', reason: 'NAD lookup did not finish within 100 ms' });
});

t.test('namespaceLabels only with a namespace; podsUsingNad passed when given', async (t) => {
  const asked: string[] = [];
  const podsUsingNad = () => ['ns/x'];
  const r = rig({ namespaceLabels: (ns) => (asked.push(ns), { team: ns }), podsUsingNad });
  await answer(handleReview(reviewOf({ namespace: 'ns' }), 'validate', 1000, r.deps));
  await answer(handleReview(reviewOf({ namespace: undefined }), 'validate', 1000, r.deps));
  await answer(handleReview(reviewOf({ namespace: '' }), 'validate', 1000, r.deps));
  t.strictSame(asked, ['ns']);
  t.strictSame(
    r.contexts.map((c) => c.namespaceLabels),
    [{ team: 'ns' }, undefined, undefined],
  );
  t.equal(r.contexts[0]!.podsUsingNad, podsUsingNad);
});

const MAC = '02:00:00:00:00:01';
const heldOf = (over: Partial<HeldAddress> = {}): HeldAddress => ({
  kind: 'mac',
  value: MAC,
  scope: 'network:ns/net',
  pod: { namespace: 'ns', name: 'p', uid: 'pod-uid' },
  unique: { policy: 'u', action: 'Enforce', scope: 'Network', path: 'metadata.annotations[net][0].mac', label: `MAC ${MAC}` },
  ...over,
});

// isPodCreate / isPodWrite, through the reservation (isPodWrite) and the policy given to the
// review with address leases (isPodCreate).
const SHAPES: Array<{ what: string; over: Partial<AdmissionRequest>; create: boolean; write: boolean }> = [
  { what: 'Pod CREATE', over: {}, create: true, write: true },
  { what: 'Pod CREATE, no group', over: { kind: { version: 'v1', kind: 'Pod' } as AdmissionRequest['kind'] }, create: true, write: true },
  { what: 'Pod UPDATE', over: { operation: 'UPDATE' }, create: false, write: true },
  { what: 'Pod DELETE', over: { operation: 'DELETE' }, create: false, write: false },
  { what: 'Pod CONNECT', over: { operation: 'CONNECT' }, create: false, write: false },
  { what: 'Pod of another group', over: { kind: { group: 'x.io', version: 'v1', kind: 'Pod' } }, create: false, write: false },
  {
    what: 'Pod UPDATE of another group',
    over: { operation: 'UPDATE', kind: { group: 'x.io', version: 'v1', kind: 'Pod' } },
    create: false,
    write: false,
  },
  { what: 'a subresource', over: { subResource: 'status' }, create: false, write: false },
  { what: 'an UPDATE of a subresource', over: { operation: 'UPDATE', subResource: 'ephemeralcontainers' }, create: false, write: false },
  { what: 'a Deployment', over: { kind: { group: '', version: 'v1', kind: 'Deployment' } }, create: false, write: false },
  {
    what: 'a Deployment UPDATE',
    over: { operation: 'UPDATE', kind: { group: '', version: 'v1', kind: 'Deployment' } },
    create: false,
    write: false,
  },
];

t.test('reservations: admitted, not a dry run, a Pod CREATE or UPDATE, with claims', async (t) => {
  const claims = [heldOf()];
  for (const s of SHAPES) {
    const r = rig({ decide: () => decisionOf({ addresses: claims }) });
    await answer(handleReview(reviewOf(s.over), 'validate', 1000, r.deps));
    t.strictSame(r.reserved, s.write ? [claims] : [], s.what);
  }
  const cases: Array<{ what: string; decision: Decision; dryRun?: boolean; enforcement?: 'observe' }> = [
    { what: 'dry run', decision: decisionOf({ addresses: claims }), dryRun: true },
    { what: 'denied', decision: decisionOf({ allowed: false, code: 403, addresses: claims }) },
    { what: 'observe mode, would deny', decision: decisionOf({ allowed: false, code: 403, addresses: claims }), enforcement: 'observe' },
    { what: 'no claims', decision: decisionOf() },
  ];
  for (const c of cases) {
    const r = rig({ decide: () => c.decision, ...(c.enforcement ? { enforcement: c.enforcement } : {}) });
    await answer(handleReview(reviewOf({ dryRun: c.dryRun }), 'validate', 1000, r.deps));
    t.strictSame(r.reserved, [], c.what);
  }
  const r = rig({ decide: () => decisionOf({ addresses: claims }) });
  await answer(handleReview(reviewOf({ dryRun: false }), 'mutate', 1000, r.deps));
  t.strictSame(r.reserved, [claims], 'dryRun false: reserved, on either endpoint');
});

function fakeAddressLeases(answerWith: (claims: readonly HeldAddress[]) => Promise<LeaseOutcome[]> | undefined) {
  const asked: Array<[HeldAddress[], { dryRun: boolean }]> = [];
  const addressLeases: AddressLeases = {
    acquire(claims, options) {
      asked.push([[...claims], options]);
      return answerWith(claims);
    },
  };
  return { addressLeases, asked };
}

const wantedOf = (c: HeldAddress, action: 'Enforce' | 'Warn' | 'Audit' = 'Enforce'): WantedLease => ({
  name: `claim-${c.value}`,
  address: { ...c, unique: { ...c.unique!, action } },
  holder: { kind: 'Pod', namespace: 'ns', name: 'p', uid: 'pod-uid' },
  scope: c.scope,
});

t.test('byLease: the policy without pending holders only for the validating call of a Pod CREATE with address leases', async (t) => {
  const { addressLeases } = fakeAddressLeases(() => undefined);
  for (const s of SHAPES) {
    for (const endpoint of ['mutate', 'validate'] as const) {
      for (const withLeases of [true, false]) {
        const r = rig(withLeases ? { addressLeases } : {});
        await answer(handleReview(reviewOf(s.over), endpoint, 1000, r.deps));
        const ctx = r.contexts[0]!;
        const byLease = withLeases && endpoint === 'validate' && s.create;
        const what = `${s.what} ${endpoint}${withLeases ? ' address leases' : ''}`;
        if (!byLease) {
          t.equal(ctx.policy, r.policy, `${what}: the policy as is`);
          continue;
        }
        t.not(ctx.policy, r.policy, what);
        const input = { operation: 'CREATE' } as unknown as Parameters<PolicyEvaluator['evaluate']>[0];
        t.strictSame(ctx.policy.evaluate(input, { pendingHolders: true }), { findings: [], addresses: [] });
        t.equal(r.evaluated[0]![0], input);
        t.strictSame(r.evaluated, [[input, { pendingHolders: false }]], `${what}: pendingHolders false`);
      }
    }
  }
});

t.test('arbitrate: claimed only on the validating call of an admitted Pod CREATE with claims', async (t) => {
  const claims = [heldOf()];
  const cases: Array<{ what: string; endpoint: Endpoint; over?: Partial<AdmissionRequest>; decision: Decision; claimed: boolean }> = [
    { what: 'validate Pod CREATE', endpoint: 'validate', decision: decisionOf({ addresses: claims }), claimed: true },
    { what: 'mutate', endpoint: 'mutate', decision: decisionOf({ addresses: claims }), claimed: false },
    { what: 'denied', endpoint: 'validate', decision: decisionOf({ allowed: false, code: 403, addresses: claims }), claimed: false },
    { what: 'no claims', endpoint: 'validate', decision: decisionOf(), claimed: false },
    { what: 'UPDATE', endpoint: 'validate', over: { operation: 'UPDATE' }, decision: decisionOf({ addresses: claims }), claimed: false },
    {
      what: 'subresource',
      endpoint: 'validate',
      over: { subResource: 'status' },
      decision: decisionOf({ addresses: claims }),
      claimed: false,
    },
    {
      what: 'other group',
      endpoint: 'validate',
      over: { kind: { group: 'x.io', version: 'v1', kind: 'Pod' } },
      decision: decisionOf({ addresses: claims }),
      claimed: false,
    },
  ];
  for (const c of cases) {
    const { addressLeases, asked } = fakeAddressLeases(() => undefined);
    const r = rig({ addressLeases, decide: () => c.decision });
    const out = handleReview(reviewOf(c.over), c.endpoint, 1000, r.deps);
    t.equal(isPromise(out), false, `${c.what}: claim answered undefined or not asked: synchronous`);
    t.strictSame(
      (out as PipelineResult & { status: 200 }).review.response!.allowed,
      c.decision.allowed,
      `${c.what}: the review's own answer`,
    );
    t.strictSame(asked, c.claimed ? [[claims, { dryRun: false }]] : [], c.what);
  }
  for (const dryRun of [true, false, undefined]) {
    const { addressLeases, asked } = fakeAddressLeases(() => undefined);
    const r = rig({ addressLeases, decide: () => decisionOf({ addresses: claims }) });
    await answer(handleReview(reviewOf(dryRun === undefined ? {} : { dryRun }), 'validate', 1000, r.deps));
    t.strictSame(asked, [[claims, { dryRun: dryRun === true }]], `dryRun ${String(dryRun)}`);
  }
});

t.test('arbitrate: all claims won: the same answer, asynchronously, nothing released', async (t) => {
  const claims = [heldOf(), heldOf({ value: '02:00:00:00:00:02' })];
  const { addressLeases } = fakeAddressLeases(async (cs) => cs.map((c) => ({ wanted: wantedOf(c), result: 'won' as const })));
  const r = rig({ addressLeases, decide: () => decisionOf({ addresses: claims }) });
  const body = reviewOf();
  const out = handleReview(body, 'validate', 1000, r.deps);
  t.equal(isPromise(out), true);
  t.strictSame(await answer(out), {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    response: { uid: body.request!.uid, allowed: true },
  });
  t.strictSame(r.released, []);
  t.strictSame(r.reserved, [claims]);
  t.equal(r.responded.length, 1, 'no second response');
  t.strictSame(r.lines, []);
  t.strictSame(r.calls, [reviewsCall('validate', 'allowed')]);
});

t.test('arbitrate: a lost claim denies with the settled decision and releases the reservation (not on a dry run)', async (t) => {
  for (const dryRun of [false, true]) {
    for (const namespace of ['ns', undefined]) {
      const claims = [heldOf()];
      const decision = decisionOf({ addresses: claims, findings: [finding('p', 'allowedNetworks', 'Warn')] });
      let outcomes: LeaseOutcome[] = [];
      // The holder in the request's namespace (none: ''), so that the message names it.
      const { addressLeases } = fakeAddressLeases(
        async (cs) =>
          (outcomes = cs.map((c) => ({
            wanted: wantedOf(c),
            result: 'lost' as const,
            holder: { kind: 'Pod', namespace: namespace ?? '', name: 'other' },
            live: true,
          }))),
      );
      const r = rig({ addressLeases, decide: () => decision });
      const body = reviewOf({ dryRun, namespace });
      const review = await answer(handleReview(body, 'validate', 1000, r.deps));
      const settled = settleAddressLeases(decision, outcomes, namespace ?? '');
      t.equal(settled.allowed, false);
      t.equal(
        settled.errors[0]!.reason,
        `policy "u" (uniqueAddresses): MAC ${MAC} is already used by pod ${namespace ?? ''}/other (running) on network ns/net (scope Network)`,
      );
      t.strictSame(r.responded, [decision, settled], `dryRun ${dryRun} ns ${namespace}: answered with the settled decision`);
      t.strictSame(review.response, {
        uid: body.request!.uid,
        allowed: false,
        status: { code: 403, reason: 'Forbidden', message: 'metadata.annotations[net][0].mac' },
      });
      t.strictSame(r.released, dryRun ? [] : [claims]);
      t.strictSame(r.calls, [
        reviewsCall('validate', 'denied'),
        ['findings', { endpoint: 'validate', policy: 'p', rule: 'allowedNetworks', action: 'Warn' }, 1],
        ['findings', { endpoint: 'validate', policy: 'u', rule: 'uniqueAddresses', action: 'Enforce' }, 1],
        ['denials', { reason: 'uniqueAddresses' }, 1],
      ]);
      t.strictSame(r.lines, [
        { level: 30, ...whoOf(body, 'validate'), rules: ['uniqueAddresses'], reasons: settled.errors.map(renderError), msg: 'denied' },
      ]);
    }
  }
});

t.test('arbitrate, observe mode: a lost claim is admitted with a warning, counted as would deny, nothing released', async (t) => {
  const claims = [heldOf()];
  const decision = decisionOf({ addresses: claims });
  let outcomes: LeaseOutcome[] = [];
  const { addressLeases } = fakeAddressLeases(
    async (cs) =>
      (outcomes = cs.map((c) => ({
        wanted: wantedOf(c),
        result: 'lost' as const,
        holder: { kind: 'Pod', namespace: 'ns', name: 'other' },
        live: false,
      }))),
  );
  const r = rig({ addressLeases, decide: () => decision, enforcement: 'observe' });
  const body = reviewOf();
  const review = await answer(handleReview(body, 'validate', 1000, r.deps));
  const settled = settleAddressLeases(decision, outcomes, 'ns');
  const admitted = observed(settled);
  t.strictSame(r.responded, [decision, admitted]);
  t.strictSame(review.response, { uid: body.request!.uid, allowed: true, warnings: admitted.warnings.map(warningText) });
  t.strictSame(r.released, []);
  t.strictSame(r.calls, [
    reviewsCall('validate', 'allowed'),
    ['findings', { endpoint: 'validate', policy: 'u', rule: 'uniqueAddresses', action: 'Enforce' }, 1],
    ['wouldDeny', { reason: 'uniqueAddresses' }, 1],
  ]);
  t.strictSame(r.lines, [
    { level: 30, ...whoOf(body, 'validate'), warnings: admitted.warnings.map(warningText), msg: 'admitted with warnings' },
    {
      level: 30,
      ...whoOf(body, 'validate'),
      rules: ['uniqueAddresses'],
      reasons: settled.errors.map(renderError),
      msg: 'would deny (observe mode); admitted',
    },
  ]);
});

t.test('arbitrate: a claim that could not be made is logged by action; Enforce denies with 503, Warn admits', async (t) => {
  for (const action of ['Enforce', 'Warn'] as const) {
    const claims = [heldOf({ unique: { ...heldOf().unique!, action } })];
    const decision = decisionOf({ addresses: claims });
    let outcomes: LeaseOutcome[] = [];
    const { addressLeases } = fakeAddressLeases(
      async (cs) => (outcomes = cs.map((c) => ({ wanted: wantedOf(c, action), result: 'unavailable' as const, reason: 'ECONNREFUSED' }))),
    );
    const r = rig({ addressLeases, decide: () => decision });
    const body = reviewOf();
    const review = await answer(handleReview(body, 'validate', 1000, r.deps));
    const settled = settleAddressLeases(decision, outcomes, 'ns');
    const claimLine = {
      level: 40,
      ...whoOf(body, 'validate'),
      claim: `claim-${MAC}`,
      policy: 'u',
      action,
      reason: 'ECONNREFUSED',
      msg:
        action === 'Enforce' ? 'address claim could not be made; denied with 503 (retryable)' : 'address claim could not be made; admitted',
    };
    if (action === 'Enforce') {
      t.strictSame(review.response, {
        uid: body.request!.uid,
        allowed: false,
        status: { code: 503, reason: 'Forbidden', message: 'metadata.annotations[net][0].mac' },
      });
      t.strictSame(r.released, [claims]);
      t.strictSame(r.calls, [
        reviewsCall('validate', 'denied'),
        ['findings', { endpoint: 'validate', policy: 'u', rule: 'uniqueAddresses', action: 'Enforce' }, 1],
        ['denials', { reason: 'uniqueAddresses' }, 1],
      ]);
      t.strictSame(r.lines, [
        claimLine,
        { level: 30, ...whoOf(body, 'validate'), rules: ['uniqueAddresses'], reasons: settled.errors.map(renderError), msg: 'denied' },
      ]);
    } else {
      t.strictSame(review.response, { uid: body.request!.uid, allowed: true, warnings: settled.warnings.map(warningText) });
      t.strictSame(r.released, []);
      t.strictSame(r.calls, [
        reviewsCall('validate', 'allowed'),
        ['findings', { endpoint: 'validate', policy: 'u', rule: 'uniqueAddresses', action: 'Warn' }, 1],
      ]);
      t.strictSame(r.lines, [
        claimLine,
        { level: 30, ...whoOf(body, 'validate'), warnings: settled.warnings.map(warningText), msg: 'admitted with warnings' },
      ]);
    }
  }
});

t.test('arbitrate: a claim that rejects is an internal error (500; observe: admitted)', async (t) => {
  for (const enforcement of ['enforce', 'observe'] as const) {
    const { addressLeases } = fakeAddressLeases(() => Promise.reject(new Error('lease api exploded')));
    const r = rig({ addressLeases, decide: () => decisionOf({ addresses: [heldOf()] }), enforcement });
    const body = reviewOf();
    const review = await answer(handleReview(body, 'validate', 1000, r.deps));
    const uid = body.request!.uid;
    if (enforcement === 'enforce') {
      t.strictSame(review, internalErrorReview('admission.k8s.io/v1', uid));
      t.strictSame(r.calls, [['denials', { reason: 'internal' }, 1], reviewsCall('validate', 'error')]);
    } else {
      t.strictSame(review, {
        apiVersion: 'admission.k8s.io/v1',
        kind: 'AdmissionReview',
        response: {
          uid,
          allowed: true,
          warnings: [`netattach observe mode: could not review this request (internal error, uid ${uid}); admitted unchanged`],
        },
      });
      t.strictSame(r.calls, [['wouldDeny', { reason: 'internal' }, 1], reviewsCall('validate', 'allowed')]);
    }
    t.strictSame(r.lines, [
      { level: 50, ...whoOf(body, 'validate'), err: 'lease api exploded', msg: 'review failed; denied with code 500' },
    ]);
    t.strictSame(r.released, [], 'a failed claim releases nothing here');
  }
});

t.test('failures: plan or review throws; enforce answers 500, observe admits unchanged; counted and logged', async (t) => {
  const cases: Array<{ what: string; script: Script; sync: boolean; err: string }> = [
    {
      what: 'plan throws',
      script: {
        plan: () => {
          throw new Error('plan broke');
        },
      },
      sync: true,
      err: 'plan broke',
    },
    {
      what: 'plan throws a string',
      script: {
        plan: () => {
          throw 'bare';
        },
      },
      sync: true,
      err: 'bare',
    }, // eslint-disable-line no-throw-literal
    {
      what: 'review throws (cached)',
      script: {
        decide: () => {
          throw new Error('review broke');
        },
      },
      sync: true,
      err: 'review broke',
    },
    {
      what: 'review throws (looked up)',
      script: {
        refs: [{ namespace: 'ns', name: 'remote' }],
        decide: () => {
          throw new Error('review broke');
        },
      },
      sync: false,
      err: 'review broke',
    },
  ];
  for (const c of cases) {
    for (const enforcement of ['enforce', 'observe'] as const) {
      const r = rig({ ...c.script, enforcement });
      const body = reviewOf({ namespace: 'ns' });
      const out = handleReview(body, 'mutate', 1000, r.deps);
      t.equal(isPromise(out), !c.sync, `${c.what}: ${c.sync ? 'synchronous' : 'asynchronous'}`);
      const review = await answer(out);
      const uid = body.request!.uid;
      const lookups: MetricCall[] = c.sync ? [] : [['nadLookups', { outcome: 'not-found' }, 1]];
      if (enforcement === 'enforce') {
        t.strictSame(review, internalErrorReview('admission.k8s.io/v1', uid), `${c.what} enforce`);
        t.strictSame(
          r.calls,
          [...lookups, ['denials', { reason: 'internal' }, 1], reviewsCall('mutate', 'error')],
          `${c.what} enforce metrics`,
        );
      } else {
        t.strictSame(
          review.response,
          {
            uid,
            allowed: true,
            warnings: [`netattach observe mode: could not review this request (internal error, uid ${uid}); admitted unchanged`],
          },
          `${c.what} observe`,
        );
        t.strictSame(
          r.calls,
          [...lookups, ['wouldDeny', { reason: 'internal' }, 1], reviewsCall('mutate', 'allowed')],
          `${c.what} observe metrics`,
        );
      }
      t.strictSame(
        r.lines,
        [{ level: 50, ...whoOf(body, 'mutate'), err: c.err, msg: 'review failed; denied with code 500' }],
        `${c.what} log`,
      );
    }
  }
});

t.test("contract problems of the core's response: answered with a 500 naming the problem in the log", async (t) => {
  type Resp = NonNullable<AdmissionReview['response']>;
  const ok = (uid: string, over: Partial<Resp> = {}): Resp => ({ uid, allowed: true, ...over });
  const P = 'W3sib3AiOiJhZGQifV0=';
  const cases: Array<{
    what: string;
    endpoint: Endpoint;
    respond: (apiVersion: AdmissionApiVersion, uid: string) => unknown;
    problem: string;
  }> = [
    {
      what: 'apiVersion',
      endpoint: 'validate',
      respond: (_v, uid) => ({ apiVersion: 'admission.k8s.io/v1beta1', kind: 'AdmissionReview', response: ok(uid) }),
      problem: 'response apiVersion/kind differ from the request',
    },
    {
      what: 'kind',
      endpoint: 'validate',
      respond: (v, uid) => ({ apiVersion: v, kind: 'AdmissionResponse', response: ok(uid) }),
      problem: 'response apiVersion/kind differ from the request',
    },
    {
      what: 'no response',
      endpoint: 'validate',
      respond: (v) => ({ apiVersion: v, kind: 'AdmissionReview' }),
      problem: 'response missing',
    },
    {
      what: 'uid',
      endpoint: 'validate',
      respond: (v, uid) => ({ apiVersion: v, kind: 'AdmissionReview', response: ok(`${uid}x`) }),
      problem: 'response uid differs from the request',
    },
    {
      what: 'allowed not boolean',
      endpoint: 'validate',
      respond: (v, uid) => ({ apiVersion: v, kind: 'AdmissionReview', response: { uid, allowed: 'true' } }),
      problem: 'response.allowed missing',
    },
    {
      what: 'allowed missing',
      endpoint: 'validate',
      respond: (v, uid) => ({ apiVersion: v, kind: 'AdmissionReview', response: { uid } }),
      problem: 'response.allowed missing',
    },
    {
      what: 'patch without patchType',
      endpoint: 'mutate',
      respond: (v, uid) => ({ apiVersion: v, kind: 'AdmissionReview', response: ok(uid, { patch: P }) }),
      problem: 'patch and patchType must come together',
    },
    {
      what: 'patchType without patch',
      endpoint: 'mutate',
      respond: (v, uid) => ({ apiVersion: v, kind: 'AdmissionReview', response: ok(uid, { patchType: 'JSONPatch' }) }),
      problem: 'patch and patchType must come together',
    },
    {
      what: 'patch from validate',
      endpoint: 'validate',
      respond: (v, uid) => ({ apiVersion: v, kind: 'AdmissionReview', response: ok(uid, { patch: P, patchType: 'JSONPatch' }) }),
      problem: 'a patch from the validate endpoint',
    },
    {
      what: 'patch on a denial',
      endpoint: 'mutate',
      respond: (v, uid) => ({
        apiVersion: v,
        kind: 'AdmissionReview',
        response: ok(uid, { allowed: false, patch: P, patchType: 'JSONPatch' }),
      }),
      problem: 'a patch on a denial',
    },
  ];
  for (const c of cases) {
    const r = rig({ toResponse: (v, uid) => c.respond(v, uid) as AdmissionReview });
    const body = reviewOf();
    const review = await answer(handleReview(body, c.endpoint, 1000, r.deps));
    t.strictSame(review, internalErrorReview('admission.k8s.io/v1', body.request!.uid), c.what);
    t.strictSame(r.calls, [['denials', { reason: 'internal' }, 1], reviewsCall(c.endpoint, 'error')], `${c.what}: metrics`);
    t.strictSame(
      r.lines,
      [
        {
          level: 50,
          ...whoOf(body, c.endpoint),
          err: `invalid response from the admission core: ${c.problem}`,
          msg: 'review failed; denied with code 500',
        },
      ],
      `${c.what}: log`,
    );
  }
  // And what passes: a v1beta1 review answered in kind; a patch with its type from mutate; a denial without a patch.
  const fine: Array<{ what: string; endpoint: Endpoint; resp: (uid: string) => Resp; result: string }> = [
    { what: 'patched', endpoint: 'mutate', resp: (uid) => ok(uid, { patch: P, patchType: 'JSONPatch' }), result: 'patched' },
    {
      what: 'allowed false, no patch',
      endpoint: 'mutate',
      resp: (uid) => ({ uid, allowed: false, status: { code: 403 } }),
      result: 'denied',
    },
    { what: 'allowed false from validate', endpoint: 'validate', resp: (uid) => ({ uid, allowed: false }), result: 'denied' },
    {
      what: 'allowed false, code 500',
      endpoint: 'validate',
      resp: (uid) => ({ uid, allowed: false, status: { code: 500 } }),
      result: 'error',
    },
  ];
  for (const f of fine) {
    const r = rig({ toResponse: (v, uid) => ({ apiVersion: v, kind: 'AdmissionReview', response: f.resp(uid) }) });
    const body = reviewOf({}, 'admission.k8s.io/v1beta1');
    const review = await answer(handleReview(body, f.endpoint, 1000, r.deps));
    t.strictSame(review, { apiVersion: 'admission.k8s.io/v1beta1', kind: 'AdmissionReview', response: f.resp(body.request!.uid) }, f.what);
    t.strictSame(r.calls[0], reviewsCall(f.endpoint, f.result), `${f.what}: result ${f.result}`);
  }
});

t.test('observe mode, contract problem: admitted unchanged, counted as would deny (internal)', async (t) => {
  const r = rig({
    enforcement: 'observe',
    toResponse: (v, uid) => ({ apiVersion: v, kind: 'AdmissionReview', response: { uid: `${uid}-other`, allowed: true } }),
  });
  const body = reviewOf();
  const review = await answer(handleReview(body, 'validate', 1000, r.deps));
  const uid = body.request!.uid;
  t.strictSame(review.response, {
    uid,
    allowed: true,
    warnings: [`netattach observe mode: could not review this request (internal error, uid ${uid}); admitted unchanged`],
  });
  t.strictSame(r.calls, [['wouldDeny', { reason: 'internal' }, 1], reviewsCall('validate', 'allowed')]);
});

t.test('decisions: metrics and log lines of denials, errors, warnings and audits', async (t) => {
  const e1 = fieldError('spec.a', 'first');
  const e2 = fieldError('spec.b', 'second');
  const audit = finding('pa', 'auditRule', 'Audit');
  const cases: Array<{
    what: string;
    endpoint: Endpoint;
    decision: Decision;
    result: string;
    metrics: MetricCall[];
    lines: (who: Record<string, unknown>) => Array<Record<string, unknown>>;
  }> = [
    {
      what: 'denied by rules (deduplicated; Warn and Audit findings are no reason)',
      endpoint: 'validate',
      decision: decisionOf({
        allowed: false,
        code: 403,
        errors: [e1, e2],
        findings: [
          finding('p1', 'a', 'Enforce'),
          finding('p2', 'a', 'Enforce'),
          finding('p1', 'b', 'Enforce'),
          finding('p1', 'c', 'Warn'),
          audit,
        ],
        audits: [audit],
      }),
      result: 'denied',
      metrics: [
        ['findings', { endpoint: 'validate', policy: 'p1', rule: 'a', action: 'Enforce' }, 1],
        ['findings', { endpoint: 'validate', policy: 'p2', rule: 'a', action: 'Enforce' }, 1],
        ['findings', { endpoint: 'validate', policy: 'p1', rule: 'b', action: 'Enforce' }, 1],
        ['findings', { endpoint: 'validate', policy: 'p1', rule: 'c', action: 'Warn' }, 1],
        ['findings', { endpoint: 'validate', policy: 'pa', rule: 'auditRule', action: 'Audit' }, 1],
        ['denials', { reason: 'a' }, 1],
        ['denials', { reason: 'b' }, 1],
      ],
      lines: (who) => [
        {
          level: 30,
          ...who,
          rules: ['a', 'b'],
          reasons: ['spec.a: Invalid value: "v": first', 'spec.b: Invalid value: "v": second'],
          audits: ['pa/auditRule: spec.auditRule: Invalid value: "v": auditRule says no'],
          msg: 'denied',
        },
      ],
    },
    {
      what: 'denied without an Enforce finding: validation',
      endpoint: 'mutate',
      decision: decisionOf({ allowed: false, code: 422, errors: [e1], findings: [finding('p1', 'c', 'Warn')], warnings: [{ field: e2 }] }),
      result: 'denied',
      metrics: [
        ['findings', { endpoint: 'mutate', policy: 'p1', rule: 'c', action: 'Warn' }, 1],
        ['denials', { reason: 'validation' }, 1],
      ],
      lines: (who) => [{ level: 30, ...who, rules: [], reasons: ['spec.a: Invalid value: "v": first'], msg: 'denied' }],
    },
    {
      what: "the core's own internal error (code 500): logged and counted as internal, no audit line",
      endpoint: 'validate',
      decision: decisionOf({ allowed: false, code: 500, errors: [e1, e2], findings: [finding('p1', 'a', 'Enforce')], audits: [audit] }),
      result: 'error',
      metrics: [
        ['findings', { endpoint: 'validate', policy: 'p1', rule: 'a', action: 'Enforce' }, 1],
        ['denials', { reason: 'internal' }, 1],
      ],
      lines: (who) => [
        {
          level: 50,
          ...who,
          err: 'spec.a: Invalid value: "v": first; spec.b: Invalid value: "v": second',
          msg: 'review failed; denied with code 500',
        },
      ],
    },
    {
      what: 'admitted with warnings and audits: one line',
      endpoint: 'validate',
      decision: decisionOf({ warnings: [{ field: e1 }, { note: { path: 'spec', text: 'a note' } }], audits: [audit], findings: [audit] }),
      result: 'allowed',
      metrics: [['findings', { endpoint: 'validate', policy: 'pa', rule: 'auditRule', action: 'Audit' }, 1]],
      lines: (who) => [
        {
          level: 30,
          ...who,
          warnings: ['spec.a: Invalid value: "v": first', 'spec: a note'],
          audits: ['pa/auditRule: spec.auditRule: Invalid value: "v": auditRule says no'],
          msg: 'admitted with warnings',
        },
      ],
    },
    {
      what: 'patched with audits: counted by endpoint, logged by the validating call only',
      endpoint: 'mutate',
      decision: decisionOf({ audits: [audit], findings: [audit], patch: [{ op: 'add', path: '/x', value: 1 }] }),
      result: 'patched',
      metrics: [['findings', { endpoint: 'mutate', policy: 'pa', rule: 'auditRule', action: 'Audit' }, 1]],
      lines: () => [],
    },
    {
      what: "denied by the mutating call, with audits: its last call, so it logs them, on the denial's line",
      endpoint: 'mutate',
      decision: decisionOf({ allowed: false, code: 403, errors: [e1], findings: [finding('p1', 'a', 'Enforce'), audit], audits: [audit] }),
      result: 'denied',
      metrics: [
        ['findings', { endpoint: 'mutate', policy: 'p1', rule: 'a', action: 'Enforce' }, 1],
        ['findings', { endpoint: 'mutate', policy: 'pa', rule: 'auditRule', action: 'Audit' }, 1],
        ['denials', { reason: 'a' }, 1],
      ],
      lines: (who) => [
        {
          level: 30,
          ...who,
          rules: ['a'],
          reasons: ['spec.a: Invalid value: "v": first'],
          audits: ['pa/auditRule: spec.auditRule: Invalid value: "v": auditRule says no'],
          msg: 'denied',
        },
      ],
    },
    {
      what: 'admitted with audits only: their own line',
      endpoint: 'validate',
      decision: decisionOf({ audits: [audit], findings: [audit] }),
      result: 'allowed',
      metrics: [['findings', { endpoint: 'validate', policy: 'pa', rule: 'auditRule', action: 'Audit' }, 1]],
      lines: (who) => [
        { level: 30, ...who, audits: ['pa/auditRule: spec.auditRule: Invalid value: "v": auditRule says no'], msg: 'audit findings' },
      ],
    },
    {
      what: 'patched with a warning and audits: the warning logged, the audits left to the validating call',
      endpoint: 'mutate',
      decision: decisionOf({
        warnings: [{ note: { path: '', text: 'heads up' } }],
        audits: [audit],
        findings: [audit],
        patch: [{ op: 'add', path: '/x', value: 1 }],
      }),
      result: 'patched',
      metrics: [['findings', { endpoint: 'mutate', policy: 'pa', rule: 'auditRule', action: 'Audit' }, 1]],
      lines: (who) => [{ level: 30, ...who, warnings: ['heads up'], msg: 'admitted with warnings' }],
    },
    {
      what: 'patched with a warning',
      endpoint: 'mutate',
      decision: decisionOf({ warnings: [{ note: { path: '', text: 'heads up' } }], patch: [{ op: 'add', path: '/x', value: 1 }] }),
      result: 'patched',
      metrics: [],
      lines: (who) => [{ level: 30, ...who, warnings: ['heads up'], msg: 'admitted with warnings' }],
    },
    {
      what: 'patched, nothing to say',
      endpoint: 'mutate',
      decision: decisionOf({ patch: [{ op: 'add', path: '/x', value: 1 }] }),
      result: 'patched',
      metrics: [],
      lines: () => [],
    },
  ];
  for (const c of cases) {
    const r = rig({ decide: () => c.decision });
    const body = reviewOf();
    await answer(handleReview(body, c.endpoint, 1000, r.deps));
    t.strictSame(r.calls, [reviewsCall(c.endpoint, c.result), ...c.metrics], `${c.what}: metrics`);
    t.strictSame(r.lines, c.lines(whoOf(body, c.endpoint)), `${c.what}: log`);
  }
});

t.test(
  'observe mode: a would-be denial is admitted unchanged, counted by rule (or unavailable/internal/validation) and logged',
  async (t) => {
    const e1 = fieldError('spec.a', 'first');
    const cases: Array<{ what: string; decision: Decision; reasons: string[]; rules: string[] }> = [
      {
        what: 'rules',
        decision: decisionOf({
          allowed: false,
          code: 403,
          errors: [e1],
          findings: [
            finding('p1', 'a', 'Enforce'),
            finding('p2', 'a', 'Enforce'),
            finding('p1', 'b', 'Enforce'),
            finding('p1', 'w', 'Warn'),
          ],
        }),
        reasons: ['a', 'b'],
        rules: ['a', 'b'],
      },
      {
        what: '503',
        decision: decisionOf({ allowed: false, code: 503, errors: [e1], findings: [finding('p1', 'w', 'Warn')] }),
        reasons: ['unavailable'],
        rules: [],
      },
      { what: '500', decision: decisionOf({ allowed: false, code: 500, errors: [e1] }), reasons: ['internal'], rules: [] },
      { what: '422', decision: decisionOf({ allowed: false, code: 422, errors: [e1] }), reasons: ['validation'], rules: [] },
      { what: 'no code', decision: decisionOf({ allowed: false, errors: [e1] }), reasons: ['validation'], rules: [] },
    ];
    for (const c of cases) {
      const { addressLeases, asked } = fakeAddressLeases(async () => []);
      const judged = { ...c.decision, addresses: [heldOf()], patch: [{ op: 'add' as const, path: '/x', value: 1 }] };
      const r = rig({ decide: () => judged, enforcement: 'observe', addressLeases });
      const body = reviewOf();
      const out = handleReview(body, 'validate', 1000, r.deps);
      t.equal(isPromise(out), false, `${c.what}: no claim for an observed denial`);
      const review = await answer(out);
      const admitted = observed(judged);
      t.strictSame(r.responded, [admitted], c.what);
      t.strictSame(
        review.response,
        { uid: body.request!.uid, allowed: true, warnings: admitted.warnings.map(warningText) },
        `${c.what}: response`,
      );
      t.strictSame(asked, []);
      t.strictSame(r.reserved, []);
      t.strictSame(
        r.calls,
        [
          reviewsCall('validate', 'allowed'),
          ...judged.findings.map(
            (f): MetricCall => ['findings', { endpoint: 'validate', policy: f.policy, rule: f.rule, action: f.action }, 1],
          ),
          ...c.reasons.map((reason): MetricCall => ['wouldDeny', { reason }, 1]),
        ],
        `${c.what}: metrics`,
      );
      const who = whoOf(body, 'validate');
      t.strictSame(
        r.lines,
        [
          { level: 30, ...who, warnings: admitted.warnings.map(warningText), msg: 'admitted with warnings' },
          { level: 30, ...who, rules: c.rules, reasons: ['spec.a: Invalid value: "v": first'], msg: 'would deny (observe mode); admitted' },
        ],
        `${c.what}: log`,
      );
    }
    // An admission in observe mode is no would-deny.
    const r = rig({ enforcement: 'observe' });
    await answer(handleReview(reviewOf(), 'validate', 1000, r.deps));
    t.strictSame(r.calls, [reviewsCall('validate', 'allowed')]);
    t.strictSame(r.lines, []);
  },
);

// DRA: ResourceClaimTemplates read before the review.
function scriptedDra(
  opts: {
    cached?: string[];
    lookup?: (ns: string, name: string) => Promise<TemplateLookup>;
    withLookup?: boolean;
    namespaces?: boolean;
  } = {},
) {
  const asked: Array<[string, string, number]> = [];
  const templateCalls: string[] = [];
  const classCalls: string[] = [];
  const dra: DraSource = {
    classesFor: (resource) => (
      classCalls.push(resource), [{ name: `class-of-${resource}` }] as unknown as ReturnType<DraSource['classesFor']>
    ),
    template: (ns, name) => (
      templateCalls.push(`${ns}/${name}`), (opts.cached ?? []).includes(`${ns}/${name}`) ? { status: 'found' } : { status: 'not-found' }
    ),
    ...(opts.namespaces === false
      ? {}
      : {
          templateNamespaces: (name: string) => [`ns-of-${name}`],
          deviceClass: (name: string) => ({ name: `class-${name}` }) as unknown as ReturnType<NonNullable<DraSource['deviceClass']>>,
          templateDevices: (ns: string, name: string) =>
            ({ requests: [`${ns}/${name}`] }) as unknown as ReturnType<NonNullable<DraSource['templateDevices']>>,
        }),
    ...(opts.withLookup === false
      ? {}
      : {
          lookup: (ns: string, name: string, ms: number) => {
            asked.push([ns, name, ms]);
            return opts.lookup ? opts.lookup(ns, name) : Promise.resolve({ status: 'found' });
          },
        }),
  };
  return { dra, asked, templateCalls, classCalls };
}

t.test('templates: read for a Pod CREATE with a namespace whose NAD names a template the cache lacks', async (t) => {
  const nads = new ScriptedNads([nadOf('ns', 'claimed', 'nic'), nadOf('ns', 'cached-tpl', 'have'), nadOf('ns', 'plain')]);
  const cases: Array<{ what: string; refs: string[]; over?: Partial<AdmissionRequest>; withLookup?: boolean; asked: string[] }> = [
    { what: 'a template the cache lacks', refs: ['claimed', 'plain'], asked: ['nic'] },
    { what: 'a template the cache holds', refs: ['cached-tpl'], asked: [] },
    { what: 'no claim template', refs: ['plain'], asked: [] },
    { what: 'no lookup', refs: ['claimed'], withLookup: false, asked: [] },
    { what: 'no namespace', refs: ['claimed'], over: { namespace: undefined }, asked: [] },
    { what: 'an UPDATE', refs: ['claimed'], over: { operation: 'UPDATE' }, asked: [] },
    { what: 'another group', refs: ['claimed'], over: { kind: { group: 'x.io', version: 'v1', kind: 'Pod' } }, asked: [] },
    { what: 'a subresource', refs: ['claimed'], over: { subResource: 'status' }, asked: [] },
  ];
  for (const c of cases) {
    const { dra, asked } = scriptedDra({ cached: ['ns/have'], ...(c.withLookup === false ? { withLookup: false } : {}) });
    const r = rig({ nads, dra, refs: c.refs.map((name) => ({ namespace: 'ns', name })) });
    const out = handleReview(reviewOf(c.over), 'mutate', 250, r.deps);
    t.equal(isPromise(out), c.asked.length > 0, `${c.what}: ${c.asked.length > 0 ? 'asynchronous' : 'synchronous'}`);
    await answer(out);
    t.strictSame(
      asked,
      c.asked.map((name) => ['ns', name, 250]),
      c.what,
    );
    if (c.asked.length === 0) t.equal(r.contexts[0]!.dra, dra, `${c.what}: the DRA view as is`);
  }
});

t.test('templates: the budget (Math.max 1), read templates in front of the cache, a rejected read is unavailable', async (t) => {
  const nads = new ScriptedNads([nadOf('ns', 'claimed', 'nic'), nadOf('ns', 'broken', 'bad')]);
  for (const [budget, ms] of [
    [0, 1],
    [0.5, 1],
    [-5, 1],
    [250, 250],
    [() => 40, 40],
  ] as const) {
    const { dra, asked } = scriptedDra();
    const r = rig({ nads, dra, refs: [{ namespace: 'ns', name: 'claimed' }] });
    await answer(handleReview(reviewOf(), 'mutate', budget, r.deps));
    t.strictSame(asked, [['ns', 'nic', ms]], `budget ${String(budget)}`);
  }
  const { dra, asked, templateCalls, classCalls } = scriptedDra({
    cached: ['ns/cached'],
    lookup: async (_ns, name) => {
      if (name === 'bad') throw new Error('read failed');
      return { status: 'unavailable', reason: 'slow' };
    },
  });
  const r = rig({
    nads,
    dra,
    refs: [
      { namespace: 'ns', name: 'claimed' },
      { namespace: 'ns', name: 'broken' },
    ],
  });
  await answer(handleReview(reviewOf(), 'mutate', 1000, r.deps));
  t.strictSame(asked, [
    ['ns', 'nic', 1000],
    ['ns', 'bad', 1000],
  ]);
  const view = r.contexts[0]!.dra!;
  t.not(view, dra, 'a view with the read templates in front');
  templateCalls.length = 0;
  t.strictSame(view.template('ns', 'nic'), { status: 'unavailable', reason: 'slow' });
  t.strictSame(view.template('ns', 'bad'), { status: 'unavailable', reason: 'read failed' });
  t.strictSame(templateCalls, [], 'the read ones do not ask the cache');
  t.strictSame(view.template('ns', 'cached'), { status: 'found' });
  t.strictSame(view.template('other', 'nic'), { status: 'not-found' }, 'by namespace and name');
  t.strictSame(templateCalls, ['ns/cached', 'other/nic']);
  t.strictSame(view.classesFor('example.com/nic'), [{ name: 'class-of-example.com/nic' }]);
  t.strictSame(classCalls, ['example.com/nic']);
  t.strictSame(view.templateNamespaces!('nic'), ['ns-of-nic']);
  t.strictSame(view.deviceClass!('vf'), { name: 'class-vf' }, 'DeviceClasses from the view underneath');
  t.strictSame(view.templateDevices!('ns', 'nic'), { requests: ['ns/nic'] }, "a template's devices from the view underneath");

  const bare = scriptedDra({ namespaces: false });
  const r2 = rig({ nads, dra: bare.dra, refs: [{ namespace: 'ns', name: 'claimed' }] });
  await answer(handleReview(reviewOf(), 'mutate', 1000, r2.deps));
  const view2 = r2.contexts[0]!.dra!;
  t.equal(view2.templateNamespaces!('nic'), undefined, 'no templateNamespaces underneath: undefined');
  t.equal(view2.deviceClass!('vf'), undefined, 'no deviceClass underneath: undefined');
  t.equal(view2.templateDevices!('ns', 'nic'), undefined, 'no templateDevices underneath: undefined');
});

t.test('templates after a NAD lookup: the budget function is asked again for the template read', async (t) => {
  const nads = new ScriptedNads();
  nads.origin.set('ns/claimed', async () => ({ status: 'found', nad: nadOf('ns', 'claimed', 'nic') }));
  nads.origin.set('ns/gone', async () => ({ status: 'not-found' }));
  const budgets = [300, 120];
  const { dra, asked } = scriptedDra();
  const r = rig({
    nads,
    dra,
    refs: [
      { namespace: 'ns', name: 'claimed' },
      { namespace: 'ns', name: 'gone' },
    ],
  });
  await answer(handleReview(reviewOf(), 'mutate', () => budgets.shift()!, r.deps));
  t.strictSame(asked, [['ns', 'nic', 120]]);
  t.strictSame(budgets, []);
  t.strictSame(r.contexts[0]!.dra!.template('ns', 'nic'), { status: 'found' });
  t.strictSame(r.calls, [
    ['nadLookups', { outcome: 'fetched' }, 1],
    ['nadLookups', { outcome: 'not-found' }, 1],
    reviewsCall('mutate', 'allowed'),
  ]);

  // A looked-up NAD without a template reads nothing and keeps the DRA view as is.
  const plain = new ScriptedNads();
  plain.origin.set('ns/plain', async () => ({ status: 'found', nad: nadOf('ns', 'plain') }));
  const d2 = scriptedDra();
  const r2 = rig({ nads: plain, dra: d2.dra, refs: [{ namespace: 'ns', name: 'plain' }] });
  let calls = 0;
  await answer(handleReview(reviewOf(), 'mutate', () => (++calls, 100), r2.deps));
  t.equal(calls, 1);
  t.strictSame(d2.asked, []);
  t.equal(r2.contexts[0]!.dra, d2.dra);
});

t.test('the lookup timer is cleared once the lookups are done', async (t) => {
  const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
  const nads = new ScriptedNads();
  nads.origin.set('ns/remote', async () => ({ status: 'found', nad: nadOf('ns', 'remote') }));
  const r = rig({ nads, refs: [{ namespace: 'ns', name: 'remote' }] });
  const before = timers();
  await answer(handleReview(reviewOf(), 'validate', 60_000, r.deps));
  t.equal(timers(), before, 'no timer left behind');
});

// Was a 500 (the throw escaped the .catch of a rejected read); broken build: call lookup directly
// instead of through the Promise constructor in readTemplates.
t.test('a template lookup that throws synchronously: a failed read (unavailable), the review goes on', async (t) => {
  const nads = new ScriptedNads([nadOf('ns', 'claimed', 'nic')]);
  nads.origin.set('ns/remote', async () => ({ status: 'found', nad: nadOf('ns', 'remote', 'nic') }));
  for (const name of ['claimed', 'remote']) {
    const dra: DraSource = {
      classesFor: () => [],
      template: () => ({ status: 'not-found' }),
      lookup: () => {
        throw new Error('no client');
      },
    };
    const r = rig({ nads, dra, refs: [{ namespace: 'ns', name }] });
    const body = reviewOf();
    const review = await answer(handleReview(body, 'mutate', 1000, r.deps));
    t.equal(review.response!.allowed, true, `${name}: the fake review allows`);
    t.equal(r.contexts.length, 1, `${name}: reviewed`);
    t.strictSame(r.contexts[0]!.dra!.template('ns', 'nic'), { status: 'unavailable', reason: 'no client' }, name);
    t.strictSame(r.lines, [], `${name}: no error logged`);
  }
});

// Broken build: name the who() field `name` again; pino's base `name: netattach` is then repeated.
t.test('a log line of the real logger carries one name (netattach) and the object name apart', async (t) => {
  const chunks: string[] = [];
  const r = rig({ decide: () => decisionOf({ allowed: false, code: 403, errors: [fieldError('x', 'no')] }) });
  r.deps.logger = createLogger('info', { write: (line: string) => void chunks.push(line) });
  await answer(handleReview(reviewOf({ name: 'pod-a' }), 'validate', 1000, r.deps));
  t.equal(chunks.length, 1);
  t.equal(chunks[0]!.match(/"name":/g)?.length, 1, 'one name key');
  const line = JSON.parse(chunks[0]!) as Record<string, unknown>;
  t.equal(line['name'], 'netattach');
  t.equal(line['objectName'], 'pod-a');
});

// The DRA cache failing while the templates to read are listed: the 500 of a failed review, on
// both paths. Broken builds: `fail` returning undefined (the async path then answers nothing), or
// templatesToRead outside the try of the cached path (handleReview throws).
t.test('a DRA cache that throws while listing templates to read: a 500 on both paths', async (t) => {
  const nads = new ScriptedNads([nadOf('ns', 'claimed', 'nic')]);
  nads.origin.set('ns/remote', async () => ({ status: 'found', nad: nadOf('ns', 'remote', 'nic') }));
  for (const name of ['claimed', 'remote']) {
    const dra: DraSource = {
      classesFor: () => [],
      template: () => {
        throw new Error('cache broken');
      },
      lookup: async () => ({ status: 'found' }),
    };
    const r = rig({ nads, dra, refs: [{ namespace: 'ns', name }] });
    const body = reviewOf();
    const review = await answer(handleReview(body, 'mutate', 1000, r.deps));
    t.strictSame(review, internalErrorReview('admission.k8s.io/v1', body.request!.uid), name);
    t.strictSame(
      r.lines,
      [{ level: 50, ...whoOf(body, 'mutate'), err: 'cache broken', msg: 'review failed; denied with code 500' }],
      `${name}: logged`,
    );
  }
});

t.test('arbitrate: one claim won and one lost is a denial, every claim released', async (t) => {
  const claims = [heldOf(), heldOf({ value: '02:00:00:00:00:02' })];
  const decision = decisionOf({ addresses: claims });
  let outcomes: LeaseOutcome[] = [];
  const { addressLeases } = fakeAddressLeases(
    async (cs) =>
      (outcomes = [
        { wanted: wantedOf(cs[0]!), result: 'won' },
        { wanted: wantedOf(cs[1]!), result: 'lost', holder: { kind: 'Pod', namespace: 'ns', name: 'other' }, live: true },
      ]),
  );
  const r = rig({ addressLeases, decide: () => decision });
  const body = reviewOf();
  const review = await answer(handleReview(body, 'validate', 1000, r.deps));
  t.equal(review.response!.allowed, false);
  t.strictSame(r.responded, [decision, settleAddressLeases(decision, outcomes, 'ns')]);
  t.strictSame(r.released, [claims]);
  t.strictSame(r.calls[0], reviewsCall('validate', 'denied'));
});

t.test('arbitrate, observe mode: a claim that settles allowed (Warn, unavailable) is no would-deny', async (t) => {
  const claims = [heldOf({ unique: { ...heldOf().unique!, action: 'Warn' } })];
  const decision = decisionOf({ addresses: claims });
  let outcomes: LeaseOutcome[] = [];
  const { addressLeases } = fakeAddressLeases(
    async (cs) => (outcomes = cs.map((c) => ({ wanted: wantedOf(c, 'Warn'), result: 'unavailable' as const, reason: 'down' }))),
  );
  const r = rig({ addressLeases, decide: () => decision, enforcement: 'observe' });
  const body = reviewOf();
  const review = await answer(handleReview(body, 'validate', 1000, r.deps));
  const settled = settleAddressLeases(decision, outcomes, 'ns');
  t.strictSame(r.responded, [decision, settled]);
  t.strictSame(review.response, { uid: body.request!.uid, allowed: true, warnings: settled.warnings.map(warningText) });
  t.strictSame(r.calls, [
    reviewsCall('validate', 'allowed'),
    ['findings', { endpoint: 'validate', policy: 'u', rule: 'uniqueAddresses', action: 'Warn' }, 1],
  ]);
  t.strictSame(
    r.lines.map((l) => l.msg),
    ['address claim could not be made; admitted', 'admitted with warnings'],
  );
});

t.test('a request without a kind: no Pod write, counted as kind other, logged without a kind', async (t) => {
  const nads = new ScriptedNads([nadOf('ns', 'claimed', 'nic')]);
  const { dra, asked } = scriptedDra();
  const { addressLeases, asked: claimed } = fakeAddressLeases(() => undefined);
  const r = rig({
    nads,
    dra,
    addressLeases,
    refs: [{ namespace: 'ns', name: 'claimed' }],
    decide: () => decisionOf({ allowed: false, code: 403, errors: [fieldError('x', 'no')], addresses: [heldOf()] }),
  });
  const denied = reviewOf({ kind: undefined as unknown as AdmissionRequest['kind'] });
  const out = handleReview(denied, 'validate', 1000, r.deps);
  t.equal(isPromise(out), false, 'no template read');
  await answer(out);
  t.strictSame(r.calls, [
    ['nadLookups', { outcome: 'hit' }, 1],
    reviewsCall('validate', 'denied', 'CREATE', 'other'),
    ['denials', { reason: 'validation' }, 1],
  ]);
  t.strictSame(r.lines, [
    {
      level: 30,
      uid: denied.request!.uid,
      endpoint: 'validate',
      namespace: 'ns',
      objectName: 'p',
      operation: 'CREATE',
      rules: [],
      reasons: ['x: Invalid value: "v": no'],
      msg: 'denied',
    },
  ]);
  t.equal(r.contexts[0]!.policy, r.policy, 'not by claim');

  const r2 = rig({ addressLeases, decide: () => decisionOf({ addresses: [heldOf()] }) });
  const kindless = reviewOf({ kind: undefined as unknown as AdmissionRequest['kind'] });
  t.strictSame((await answer(handleReview(kindless, 'validate', 1000, r2.deps))).response, { uid: kindless.request!.uid, allowed: true });
  t.strictSame(r2.reserved, [], 'not reserved');
  t.strictSame(claimed, [], 'not claimed');
  t.strictSame(asked, []);
});

t.test('arbitrate: a lost claim with reservations that cannot release', async (t) => {
  const claims = [heldOf()];
  const { addressLeases } = fakeAddressLeases(async (cs) =>
    cs.map((c) => ({ wanted: wantedOf(c), result: 'lost' as const, holder: { kind: 'Pod', namespace: 'ns', name: 'other' }, live: true })),
  );
  const r = rig({ addressLeases, decide: () => decisionOf({ addresses: claims }) });
  r.deps.reservations = { reserve: () => {} };
  const review = await answer(handleReview(reviewOf(), 'validate', 1000, r.deps));
  t.equal(review.response!.allowed, false);
  t.equal(review.response!.status!.code, 403, 'denied by the claim, not an internal error');
});

// Issue 24, finding 6: one review naming 1,000 missing NADs started 1,000 parallel lookups (GETs)
// and logged a line per failed one.
t.test('lookups: at most 32 missing NADs looked up per review, 4 at a time; the rest unavailable, one log line', async (t) => {
  class CountingNads extends ScriptedNads {
    running = 0;
    maxRunning = 0;
    override lookup(namespace: string, name: string): Promise<NadLookup> {
      this.lookups.push(key(namespace, name));
      this.maxRunning = Math.max(this.maxRunning, ++this.running);
      const cached = this.cache.get(key(namespace, name));
      return new Promise((resolve) =>
        setTimeout(() => {
          this.running--;
          resolve(
            cached
              ? { status: 'found', nad: cached }
              : key(namespace, name) === 'ns/m-5'
                ? { status: 'unavailable', reason: 'apiserver down' }
                : { status: 'not-found' },
          );
        }, 2),
      );
    }
  }
  const nads = new CountingNads([nadOf('ns', 'real')]);
  const refs = [{ namespace: 'ns', name: 'real' }, ...Array.from({ length: 1000 }, (_, i) => ({ namespace: 'ns', name: `m-${i}` }))];
  const r = rig({ nads, refs });
  const body = reviewOf();
  await answer(handleReview(body, 'validate', 10_000, r.deps));

  t.equal(nads.lookups.length, 1 + 32, 'the cached NAD and 32 missing ones looked up, not 1,000');
  t.ok(nads.maxRunning <= 1 + 4, `missing ones 4 at a time (at most ${nads.maxRunning} lookups at once)`);
  const ctx = r.contexts[0]!;
  t.strictSame(ctx.nads('ns', 'real'), { status: 'found', nad: nadOf('ns', 'real') });
  t.strictSame(ctx.nads('ns', 'm-0'), { status: 'not-found' });
  t.strictSame(ctx.nads('ns', 'm-31'), { status: 'not-found' });
  const capped = {
    status: 'unavailable',
    reason: 'not looked up: the review names 1000 NADs missing from the cache, and netattach looks up at most 32 per review',
  };
  t.strictSame(ctx.nads('ns', 'm-32'), capped, 'past the cap: unavailable, naming the cap');
  t.strictSame(ctx.nads('ns', 'm-999'), capped);
  t.strictSame(
    r.calls.filter(([m]) => m === 'nadLookups'),
    [
      ['nadLookups', { outcome: 'hit' }, 1],
      ...Array.from({ length: 32 }, (_, i): MetricCall => ['nadLookups', { outcome: i === 5 ? 'unavailable' : 'not-found' }, 1]),
      ['nadLookups', { outcome: 'capped' }, 968],
    ],
    'counted: one call per lookup made, one for the capped ones',
  );
  t.strictSame(
    r.lines,
    [
      {
        level: 40,
        ...whoOf(body, 'validate'),
        unavailable: ['ns/m-5: apiserver down'],
        unavailableCount: 1,
        notFound: Array.from({ length: 21 }, (_, i) => `ns/m-${i}`).filter((n) => n !== 'ns/m-5'),
        notFoundCount: 31,
        notLookedUp: 968,
        msg: 'NAD lookups capped at 32 per review; the rest answered unavailable',
      },
    ],
    'one log line for the review, naming 20 of each kind',
  );
});

t.test('lookups: a real pod with a few missing NADs: each looked up, none capped, no lookup log line', async (t) => {
  const nads = new ScriptedNads([nadOf('ns', 'a')]);
  const refs = ['a', 'b', 'c', 'd', 'e', 'f'].map((name) => ({ namespace: 'ns', name }));
  nads.origin.set('ns/b', async () => ({ status: 'found', nad: nadOf('ns', 'b') }));
  const r = rig({ nads, refs });
  await answer(handleReview(reviewOf(), 'validate', 1000, r.deps));
  t.strictSame(
    nads.lookups,
    refs.map((x) => `ns/${x.name}`),
    'each looked up',
  );
  t.strictSame(r.contexts[0]!.nads('ns', 'b'), { status: 'found', nad: nadOf('ns', 'b') });
  t.strictSame(r.contexts[0]!.nads('ns', 'f'), { status: 'not-found' });
  t.notOk(r.calls.some(([m, l]) => m === 'nadLookups' && l?.['outcome'] === 'capped'));
  t.strictSame(r.lines, [], 'the denial line (from the decision) names them; no lookup line');
});

t.test('lookups: failed lookups, none capped: one line naming 20 of each kind', async (t) => {
  const nads = new ScriptedNads();
  const down = Array.from({ length: 25 }, (_, i) => `down-${i}`);
  const gone = ['gone-0', 'gone-1', 'gone-2'];
  for (const name of down) nads.origin.set(`ns/${name}`, async () => ({ status: 'unavailable', reason: 'apiserver down' }));
  const r = rig({ nads, refs: [...gone, ...down].map((name) => ({ namespace: 'ns', name })) });
  const body = reviewOf();
  await answer(handleReview(body, 'validate', 1000, r.deps));
  t.strictSame(r.lines, [
    {
      level: 40,
      ...whoOf(body, 'validate'),
      unavailable: down.slice(0, 20).map((name) => `ns/${name}: apiserver down`),
      unavailableCount: 25,
      notFound: gone.map((name) => `ns/${name}`),
      notFoundCount: 3,
      notLookedUp: 0,
      msg: 'NAD lookups failed',
    },
  ]);
});

t.test('lookups: capped with none unavailable: still one line', async (t) => {
  const r = rig({ refs: Array.from({ length: 40 }, (_, i) => ({ namespace: 'ns', name: `m-${i}` })) });
  const body = reviewOf();
  await answer(handleReview(body, 'validate', 1000, r.deps));
  t.strictSame(r.lines, [
    {
      level: 40,
      ...whoOf(body, 'validate'),
      unavailable: [],
      unavailableCount: 0,
      notFound: Array.from({ length: 20 }, (_, i) => `ns/m-${i}`),
      notFoundCount: 32,
      notLookedUp: 8,
      msg: 'NAD lookups capped at 32 per review; the rest answered unavailable',
    },
  ]);
});

t.test('lookups: a NAD remembered absent is counted as such', async (t) => {
  const nads = new ScriptedNads();
  nads.origin.set('ns/gone', async () => ({ status: 'not-found', remembered: true }));
  const r = rig({ nads, refs: [{ namespace: 'ns', name: 'gone' }] });
  await answer(handleReview(reviewOf(), 'validate', 1000, r.deps));
  t.strictSame(r.calls[0], ['nadLookups', { outcome: 'not-found-remembered' }, 1]);
});

t.test('lookups: missing NADs not started before the deadline are not started at all', async (t) => {
  const nads = new ScriptedNads();
  for (let i = 0; i < 12; i++)
    nads.origin.set(`ns/slow-${i}`, () => new Promise<NadLookup>((resolve) => setTimeout(() => resolve({ status: 'not-found' }), 60)));
  const r = rig({ nads, refs: Array.from({ length: 12 }, (_, i) => ({ namespace: 'ns', name: `slow-${i}` })) });
  await answer(handleReview(reviewOf(), 'validate', 20, r.deps));
  t.equal(nads.lookups.length, 4, 'the first round only: the budget was spent before the next');
  t.strictSame(r.contexts[0]!.nads('ns', 'slow-11'), { status: 'unavailable', reason: 'NAD lookup did not finish within 20 ms' });
  t.strictSame(
    r.calls.filter(([m]) => m === 'nadLookups'),
    Array.from({ length: 12 }, (): MetricCall => ['nadLookups', { outcome: 'unavailable' }, 1]),
    'the ones not started counted unavailable like the ones cut off',
  );
});

t.test("KubeVirt binding plugins: the registry read once, its NAD looked up and judged at the VM's path", async (t) => {
  const vmReview = (uid: string): AdmissionReview => ({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid,
      kind: { group: 'kubevirt.io', version: 'v1', kind: 'VirtualMachine' },
      resource: { group: 'kubevirt.io', version: 'v1', resource: 'virtualmachines' },
      name: 'vm1',
      namespace: 'default',
      operation: 'CREATE',
      userInfo: { username: 'alice' },
      object: {
        apiVersion: 'kubevirt.io/v1',
        kind: 'VirtualMachine',
        metadata: { name: 'vm1', namespace: 'default' },
        spec: {
          template: {
            spec: {
              domain: { devices: { interfaces: [{ name: 'default', binding: { name: 'b' } }] } },
              networks: [{ name: 'default', pod: {} }],
            },
          },
        },
      },
    },
  });
  const cases: Array<{
    name: string;
    registry?: Record<string, { networkAttachmentDefinition?: string }>;
    allowed: boolean;
    text: RegExp;
  }> = [
    { name: 'unknown registry: a note', allowed: true, text: /not known here/ },
    // ib-late is only found by a lookup: the plan asked for it (the asynchronous path).
    { name: 'registered, NAD found by a lookup', registry: { b: { networkAttachmentDefinition: 'ib-late' } }, allowed: true, text: /^$/ },
    {
      name: 'registered, NAD missing',
      registry: { b: { networkAttachmentDefinition: 'gone' } },
      allowed: false,
      text: /spec\.template\.spec\.domain\.devices\.interfaces\[0\]\.binding\.name: Not found: "default\/gone"/,
    },
  ];
  for (const c of cases) {
    const { deps } = pipeline();
    let reads = 0;
    const r = response(
      await handleReview(vmReview(`vm-${c.name}`), 'validate', 1000, {
        ...deps,
        kubevirtBindings: () => (reads++, c.registry),
      }),
    );
    t.equal(r.allowed, c.allowed, c.name);
    t.match([r.status?.message ?? '', ...(r.warnings ?? [])].join('\n').trim(), c.text, `${c.name}: ${JSON.stringify(r)}`);
    t.equal(reads, 1, `${c.name}: read once for plan and review`);
  }
});
