// One AdmissionReview through the core: decode -> plan -> resolve NADs (parallel, bounded) ->
// review (synchronous) -> reserve addresses -> response -> (validating call of a Pod CREATE with
// addresses judged unique) take Leases on them in the API server, which may change the answer. Every
// well-formed review gets an answer; only malformed HTTP input is refused (400).
import type { Logger } from 'pino';
import type { AdmissionApiVersion, AdmissionConfig, AdmissionRequest, AdmissionReview, Decision, Endpoint } from '../admission/index.js';
import { nadKey, type NadLookup, type NadSource, MAX_NAD_FETCHES_PER_REVIEW, NAD_FETCHES_IN_PARALLEL_PER_REVIEW } from '../nads/index.js';
import type { AddressReservations, PolicyEvaluator, AddressLeases, LeaseOutcome } from '../policy/index.js';
import { settleAddressLeases } from './address-leases.js';
import type { DraView, TemplateLookup } from '../dra/index.js';
import { TEMPLATE_LIMITS } from '../dra/index.js';
import { cutText, renderError } from '../field/index.js';
import { warningText, observed, type Enforcement } from '../admission/index.js';
import type { AdmissionCore, DraSource } from './types.js';
import type { BindingPlugins } from '../kubevirt/index.js';
import { boundedKind, boundedOperation, type LookupOutcome, type ReviewResult, type ServerMetrics } from './metrics.js';

export interface PipelineDeps {
  core: AdmissionCore;
  nadSource: NadSource;
  policy: PolicyEvaluator;
  reservations: AddressReservations;
  /** Address Leases in the API server (cluster mode with the pod watch): what decides between replicas. */
  addressLeases?: AddressLeases;
  config: AdmissionConfig;
  namespaceLabels?: (namespace: string) => Record<string, string> | undefined;
  podsUsingNad?: (namespace: string, name: string) => string[];
  /** DeviceClasses and ResourceClaimTemplates (cluster mode); `lookup` reads a template the cache lacks. */
  dra?: DraSource;
  /** KubeVirt's binding plugin registry, when known now (cluster mode): read once per review. */
  kubevirtBindings?: () => BindingPlugins | undefined;
  logger: Logger;
  metrics: ServerMetrics;
  /** observe: nothing is denied; would-be denials are admitted with warnings, logged and counted. */
  enforcement?: Enforcement;
}

type Templates = ReadonlyMap<string, TemplateLookup>;
const NO_TEMPLATES: Templates = new Map();

/**
 * ResourceClaimTemplates a Pod CREATE draws claims from that the cache does not hold (created a
 * moment ago?): read before the review. Empty for every pod without explicit-claim networks.
 */
function templatesToRead(
  request: AdmissionRequest,
  resolved: ReadonlyMap<string, NadLookup>,
  deps: PipelineDeps,
): Array<{ namespace: string; name: string }> {
  const dra = deps.dra;
  if (!dra?.lookup || !request.namespace || !isPodCreate(request)) return [];
  let names: Set<string> | undefined;
  for (const lookup of resolved.values()) {
    const name = lookup.status === 'found' ? lookup.nad.claimTemplate : undefined;
    if (name === undefined || dra.template(request.namespace, name).status === 'found') continue;
    (names ??= new Set()).add(name);
  }
  const namespace = request.namespace;
  return names ? [...names].map((name) => ({ namespace, name })) : [];
}

async function readTemplates(
  refs: ReadonlyArray<{ namespace: string; name: string }>,
  budgetMs: number | (() => number),
  deps: PipelineDeps,
): Promise<Templates> {
  const ms = Math.max(1, typeof budgetMs === 'function' ? budgetMs() : budgetMs);
  const out = new Map<string, TemplateLookup>();
  // Past the per-review bound, no GET: unavailable (503, retryable), never read as absent.
  for (const r of refs.slice(TEMPLATE_LIMITS.perReview)) {
    out.set(nadKey(r.namespace, r.name), {
      status: 'unavailable',
      reason: `more than ${TEMPLATE_LIMITS.perReview} ResourceClaimTemplates to look up in one review`,
    });
  }
  await Promise.all(
    refs.slice(0, TEMPLATE_LIMITS.perReview).map(async (r) => {
      // A lookup that throws is a failed read like one that rejects: unavailable (503), not a 500.
      const found = await new Promise<TemplateLookup>((resolve) => resolve(deps.dra!.lookup!(r.namespace, r.name, ms))).catch(
        (err: unknown): TemplateLookup => ({ status: 'unavailable', reason: message(err) }),
      );
      out.set(nadKey(r.namespace, r.name), found);
    }),
  );
  return out;
}

export type PipelineResult = { status: 200; review: AdmissionReview } | { status: 400; error: string };

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/**
 * Looks a NAD missing from the cache up (a GET, or the source's memory of absent NADs), giving up
 * (as `unavailable`) when the budget runs out.
 */
async function lookupWithin(
  source: NadSource,
  namespace: string,
  name: string,
  signal: Promise<NadLookup>,
): Promise<[NadLookup, LookupOutcome]> {
  let result: NadLookup;
  try {
    result = await Promise.race([source.lookup(namespace, name), signal]);
  } catch (err) {
    result = { status: 'unavailable', reason: `lookup failed: ${message(err)}` };
  }
  const outcome: LookupOutcome =
    result.status === 'found' ? 'fetched' : result.status === 'not-found' && result.remembered ? 'not-found-remembered' : result.status;
  return [result, outcome];
}

/**
 * The common case: every NAD is in the cache. Answered without a timer or a promise; undefined
 * when one is missing.
 */
function resolveFromCache(
  unique: ReadonlyMap<string, { namespace: string; name: string }>,
  deps: PipelineDeps,
): Map<string, NadLookup> | undefined {
  const resolved = new Map<string, NadLookup>();
  for (const [key, ref] of unique) {
    const nad = deps.nadSource.get(ref.namespace, ref.name);
    if (!nad) return undefined;
    resolved.set(key, { status: 'found', nad });
  }
  if (resolved.size > 0) deps.metrics.nadLookups.inc({ outcome: 'hit' }, resolved.size);
  return resolved;
}

type NadRef = { namespace: string; name: string };

/** NADs named in the one log line a review's failed lookups get. */
const LOGGED_NADS = 20;

/**
 * Looks the NADs up within the budget. Cached ones are looked up too (one may go between the two
 * calls; the source answers them from its cache, no GET). Of the missing ones, the first
 * MAX_NAD_FETCHES_PER_REVIEW are looked up, NAD_FETCHES_IN_PARALLEL_PER_REVIEW at a time (the
 * source bounds its GETs across reviews too); the rest are not: unavailable, naming the cap. A real
 * pod's NADs are in the cache; a forged review naming 1,000 absent ones costs 32 lookups, not
 * 1,000 parallel GETs.
 */
async function resolveNads(
  unique: ReadonlyMap<string, NadRef>,
  budgetMs: number,
  deps: PipelineDeps,
  request: AdmissionRequest,
  endpoint: Endpoint,
): Promise<Map<string, NadLookup>> {
  const refs = [...unique];
  const results: Array<[NadLookup, LookupOutcome] | undefined> = new Array(refs.length);
  const cachedAt: number[] = [];
  const missingAt: number[] = [];
  refs.forEach(([, ref], i) => {
    (deps.nadSource.get(ref.namespace, ref.name) !== undefined ? cachedAt : missingAt).push(i);
  });
  const fetchedAt = missingAt.slice(0, MAX_NAD_FETCHES_PER_REVIEW);
  let expired = false;
  let timer: NodeJS.Timeout | undefined;
  const budgetSpent: NadLookup = { status: 'unavailable', reason: `NAD lookup did not finish within ${Math.round(budgetMs)} ms` };
  const deadline = new Promise<NadLookup>((resolve) => {
    timer = setTimeout(() => ((expired = true), resolve(budgetSpent)), budgetMs);
  });
  const lookUp = async (i: number, cached: boolean): Promise<void> => {
    const [, ref] = refs[i]!;
    const [lookup, outcome] = await lookupWithin(deps.nadSource, ref.namespace, ref.name, deadline);
    results[i] = [lookup, outcome === 'fetched' && cached ? 'hit' : outcome];
  };
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < fetchedAt.length) {
      const i = fetchedAt[next++]!;
      // Past the deadline the rest are not started: nobody would wait for their answers.
      if (expired) results[i] = [budgetSpent, 'unavailable'];
      else await lookUp(i, false);
    }
  };
  try {
    await Promise.all([
      ...cachedAt.map((i) => lookUp(i, true)),
      ...Array.from({ length: Math.min(NAD_FETCHES_IN_PARALLEL_PER_REVIEW, fetchedAt.length) }, worker),
    ]);
  } finally {
    clearTimeout(timer);
  }
  const notLookedUp = missingAt.length - fetchedAt.length;
  const capped: NadLookup = {
    status: 'unavailable',
    reason: `not looked up: the review names ${missingAt.length} NADs missing from the cache, and netattach looks up at most ${MAX_NAD_FETCHES_PER_REVIEW} per review`,
  };
  const resolved = new Map<string, NadLookup>();
  refs.forEach(([key], i) => {
    const result = results[i];
    resolved.set(key, result ? result[0] : capped);
    if (result) deps.metrics.nadLookups.inc({ outcome: result[1] });
  });
  if (notLookedUp > 0) deps.metrics.nadLookups.inc({ outcome: 'capped' }, notLookedUp);
  logFailedLookups(deps, request, endpoint, refs, results, notLookedUp);
  return resolved;
}

/**
 * One line per review whose lookups could not all be answered (unavailable or past the cap), not
 * one per NAD: naming the first LOGGED_NADS of each kind and counting the rest.
 */
function logFailedLookups(
  deps: PipelineDeps,
  request: AdmissionRequest,
  endpoint: Endpoint,
  refs: ReadonlyArray<[string, NadRef]>,
  results: ReadonlyArray<readonly [NadLookup, LookupOutcome] | undefined>,
  notLookedUp: number,
): void {
  const notFound: string[] = [];
  const unavailable: string[] = [];
  // The NADs past the cap (no result) are counted, not listed.
  refs.forEach(([key], i) => {
    const lookup = results[i]?.[0];
    if (lookup?.status === 'not-found') notFound.push(key);
    else if (lookup?.status === 'unavailable') unavailable.push(`${key}: ${lookup.reason}`);
  });
  if (unavailable.length === 0 && notLookedUp === 0) return;
  deps.logger.warn(
    {
      ...who(request, endpoint),
      unavailable: unavailable.slice(0, LOGGED_NADS),
      unavailableCount: unavailable.length,
      notFound: notFound.slice(0, LOGGED_NADS),
      notFoundCount: notFound.length,
      notLookedUp,
    },
    notLookedUp > 0
      ? `NAD lookups capped at ${MAX_NAD_FETCHES_PER_REVIEW} per review; the rest answered unavailable`
      : 'NAD lookups failed',
  );
}

const isPodCreate = (r: AdmissionRequest): boolean =>
  r.operation === 'CREATE' && r.kind?.kind === 'Pod' && (r.kind.group ?? '') === '' && !r.subResource;

/** A Pod CREATE, or an UPDATE that may add networks (hotplug): the requests whose addresses are reserved. */
const isPodWrite = (r: AdmissionRequest): boolean =>
  (r.operation === 'CREATE' || r.operation === 'UPDATE') && r.kind?.kind === 'Pod' && (r.kind.group ?? '') === '' && !r.subResource;

/** What the apiserver checks of a response; a violation is a netattach bug, answered as an error. */
function contractProblem(review: AdmissionReview, apiVersion: AdmissionApiVersion, uid: string, endpoint: Endpoint): string | undefined {
  const r = review.response;
  if (review.apiVersion !== apiVersion || review.kind !== 'AdmissionReview') return 'response apiVersion/kind differ from the request';
  if (!r) return 'response missing';
  if (r.uid !== uid) return 'response uid differs from the request';
  if (typeof r.allowed !== 'boolean') return 'response.allowed missing';
  if ((r.patch === undefined) !== (r.patchType === undefined)) return 'patch and patchType must come together';
  if (endpoint === 'validate' && r.patch !== undefined) return 'a patch from the validate endpoint';
  if (!r.allowed && r.patch !== undefined) return 'a patch on a denial';
  return undefined;
}

/** The answer when netattach itself failed: a denial (fail closed), code 500, pointing at the log. */
export function internalErrorReview(apiVersion: AdmissionApiVersion, uid: string): AdmissionReview {
  return {
    apiVersion,
    kind: 'AdmissionReview',
    response: {
      uid,
      allowed: false,
      status: {
        code: 500,
        reason: 'InternalError',
        message: `netattach could not review this request (internal error, uid ${uid}); see the webhook log`,
      },
    },
  };
}

/** Observe mode's answer when netattach failed: admitted unchanged, with a warning. */
function observedErrorReview(apiVersion: AdmissionApiVersion, uid: string): AdmissionReview {
  return {
    apiVersion,
    kind: 'AdmissionReview',
    response: {
      uid,
      allowed: true,
      warnings: [`netattach observe mode: could not review this request (internal error, uid ${uid}); admitted unchanged`],
    },
  };
}

function resultOf(review: AdmissionReview): ReviewResult {
  const r = review.response!;
  if (!r.allowed) return r.status?.code === 500 ? 'error' : 'denied';
  return r.patch !== undefined ? 'patched' : 'allowed';
}

function objectName(request: AdmissionRequest): string | undefined {
  if (request.name) return request.name;
  const meta = (request.object as { metadata?: { generateName?: unknown } } | null | undefined)?.metadata;
  return typeof meta?.generateName === 'string' ? `${meta.generateName}*` : undefined;
}

/**
 * One review. `budgetMs`: how long NAD lookups may take, or a function computing it (only called
 * when a NAD is not in the cache). Synchronous when every NAD is cached (the hot path of every pod
 * create): no promise, no timer.
 */
export function handleReview(
  body: unknown,
  endpoint: Endpoint,
  budgetMs: number | (() => number),
  deps: PipelineDeps,
): PipelineResult | Promise<PipelineResult> {
  const started = performance.now();
  const decoded = deps.core.decodeReview(body);
  if (!decoded.ok) return { status: 400, error: decoded.error };
  const { apiVersion } = decoded.review;
  const request = decoded.review.request!;
  let unique: Map<string, { namespace: string; name: string }>;
  let cached: Map<string, NadLookup> | undefined;
  let toRead: Array<{ namespace: string; name: string }> = [];
  // One registry for the plan and the review: the NADs read are the ones the review judges.
  const bindings = deps.kubevirtBindings?.();
  try {
    const { nadRefs } = deps.core.plan(request, deps.config, bindings);
    unique = new Map(nadRefs.map((r) => [nadKey(r.namespace, r.name), r]));
    cached = resolveFromCache(unique, deps);
    // In the try: the DRA cache it asks may throw like the rest.
    if (cached) toRead = templatesToRead(request, cached, deps);
  } catch (err) {
    return finish(deps, request, apiVersion, endpoint, started, failed(deps, request, apiVersion, endpoint, err));
  }
  const done = (answer: Answer): PipelineResult => finish(deps, request, apiVersion, endpoint, started, answer);
  const fail = (err: unknown): PipelineResult => done(failed(deps, request, apiVersion, endpoint, err));
  if (cached) {
    if (toRead.length === 0) {
      const answer = decide(deps, request, apiVersion, endpoint, cached, NO_TEMPLATES, bindings);
      return answer instanceof Promise ? answer.then(done, fail) : done(answer);
    }
    return readTemplates(toRead, budgetMs, deps)
      .then((templates) => decide(deps, request, apiVersion, endpoint, cached, templates, bindings))
      .then(done, fail);
  }
  return resolveNads(unique, typeof budgetMs === 'function' ? budgetMs() : budgetMs, deps, request, endpoint)
    .then(async (resolved) => {
      const refs = templatesToRead(request, resolved, deps);
      const templates = refs.length === 0 ? NO_TEMPLATES : await readTemplates(refs, budgetMs, deps);
      return decide(deps, request, apiVersion, endpoint, resolved, templates, bindings);
    })
    .then(done, fail);
}

/** `wouldDeny`: in observe mode, the denial that was turned into an admission. */
type Answer = { review: AdmissionReview; decision: Decision | undefined; wouldDeny?: Decision };

/**
 * The Lease in the API server, after the local reservation: the reservation keeps two requests
 * through this replica from both winning (no await between judging and reserving); the Lease is
 * what decides between replicas. Made once per create, by the validating call, which always has
 * the pod's name and uid (the mutating call judged the index only). A lost or failed Lease
 * releases the reservation and re-answers with the Lease's findings.
 */
function arbitrate(
  deps: PipelineDeps,
  request: AdmissionRequest,
  apiVersion: AdmissionApiVersion,
  endpoint: Endpoint,
  answer: Answer,
): Answer | Promise<Answer> {
  const { decision } = answer;
  if (!deps.addressLeases || endpoint !== 'validate' || !decision?.allowed || !isPodCreate(request) || decision.addresses.length === 0)
    return answer;
  const pending = deps.addressLeases.acquire(decision.addresses, { dryRun: request.dryRun === true });
  if (!pending) return answer;
  return pending.then((outcomes) => {
    logUnavailable(deps, request, endpoint, outcomes);
    if (outcomes.every((o) => o.result === 'won')) return answer;
    const settled = settleAddressLeases(decision, outcomes, request.namespace ?? '');
    if (!settled.allowed && deps.enforcement === 'observe') {
      // Observe mode denies nothing, a lost Lease included: admitted with the reason as a warning.
      const admitted = observed(settled);
      return { review: deps.core.toResponse(apiVersion, request.uid, admitted, endpoint), decision: admitted, wouldDeny: settled };
    }
    if (!settled.allowed && !request.dryRun) deps.reservations.release?.(decision.addresses);
    return { review: deps.core.toResponse(apiVersion, request.uid, settled, endpoint), decision: settled };
  });
}

function logUnavailable(deps: PipelineDeps, request: AdmissionRequest, endpoint: Endpoint, outcomes: readonly LeaseOutcome[]): void {
  for (const o of outcomes) {
    if (o.result !== 'unavailable') continue;
    const u = o.wanted.address.unique;
    deps.logger.warn(
      { ...who(request, endpoint), claim: o.wanted.name, policy: u.policy, action: u.action, reason: o.reason },
      u.action === 'Enforce' ? 'address claim could not be made; denied with 503 (retryable)' : 'address claim could not be made; admitted',
    );
  }
}

/** Review, reservation and response: no await from here to the reservation, so two racing requests cannot both win an address. */
function decide(
  deps: PipelineDeps,
  request: AdmissionRequest,
  apiVersion: AdmissionApiVersion,
  endpoint: Endpoint,
  resolved: ReadonlyMap<string, NadLookup>,
  templates: Templates,
  bindings: BindingPlugins | undefined,
): Answer | Promise<Answer> {
  try {
    const dra = deps.dra;
    // Where the Lease arbitrates (the validating call of a Pod CREATE), pods being admitted do not
    // decide: only live pods (certain conflicts) and the Lease do. Two replicas' reservations
    // could otherwise deny both racers, and none would be created.
    const byLease = deps.addressLeases !== undefined && endpoint === 'validate' && isPodCreate(request);
    const judged = deps.core.review(request, {
      endpoint,
      nads: (namespace, name) => {
        const known = resolved.get(nadKey(namespace, name));
        if (known) return known;
        const cached = deps.nadSource.get(namespace, name);
        return cached ? { status: 'found', nad: cached } : { status: 'unavailable', reason: 'not resolved before the review' };
      },
      namespaceLabels: request.namespace ? deps.namespaceLabels?.(request.namespace) : undefined,
      policy: byLease ? { evaluate: (input) => deps.policy.evaluate(input, { pendingHolders: false }) } : deps.policy,
      config: deps.config,
      ...(deps.podsUsingNad ? { podsUsingNad: deps.podsUsingNad } : {}),
      ...(dra ? { dra: templates.size === 0 ? dra : withTemplates(dra, templates) } : {}),
      ...(bindings ? { kubevirtBindings: bindings } : {}),
    });
    const observing = deps.enforcement === 'observe' && !judged.allowed;
    const decision = observing ? observed(judged) : judged;
    if (decision.allowed && !request.dryRun && isPodWrite(request) && decision.addresses.length > 0) {
      deps.reservations.reserve(decision.addresses);
    }
    const review = deps.core.toResponse(apiVersion, request.uid, decision, endpoint);
    const problem = contractProblem(review, apiVersion, request.uid, endpoint);
    if (problem) throw new Error(`invalid response from the admission core: ${problem}`);
    if (observing) return { review, decision, wouldDeny: judged };
    const arbitrated = arbitrate(deps, request, apiVersion, endpoint, { review, decision });
    return arbitrated instanceof Promise
      ? arbitrated.catch((err: unknown) => failed(deps, request, apiVersion, endpoint, err))
      : arbitrated;
  } catch (err) {
    return failed(deps, request, apiVersion, endpoint, err);
  }
}

/** The DRA view with the templates read for this request in front of the cache. */
const withTemplates = (dra: DraView, templates: Templates): DraView => ({
  classesFor: (resource) => dra.classesFor(resource),
  template: (namespace, name) => templates.get(nadKey(namespace, name)) ?? dra.template(namespace, name),
  templateNamespaces: (name) => dra.templateNamespaces?.(name),
  deviceClass: (name) => dra.deviceClass?.(name),
  templateDevices: (namespace, name) => dra.templateDevices?.(namespace, name),
});

/** netattach itself failed: logged, counted, and answered with a 500 denial. */
function failed(deps: PipelineDeps, request: AdmissionRequest, apiVersion: AdmissionApiVersion, endpoint: Endpoint, err: unknown): Answer {
  deps.logger.error({ ...who(request, endpoint), err: message(err) }, 'review failed; denied with code 500');
  if (deps.enforcement === 'observe') {
    deps.metrics.wouldDeny.inc({ reason: 'internal' });
    return { review: observedErrorReview(apiVersion, request.uid), decision: undefined };
  }
  deps.metrics.denials.inc({ reason: 'internal' });
  return { review: internalErrorReview(apiVersion, request.uid), decision: undefined };
}

function finish(
  deps: PipelineDeps,
  request: AdmissionRequest,
  _apiVersion: AdmissionApiVersion,
  endpoint: Endpoint,
  started: number,
  { review, decision, wouldDeny }: Answer,
): PipelineResult {
  const result = resultOf(review);
  const seconds = (performance.now() - started) / 1000;
  deps.metrics.reviews.inc({ endpoint, operation: boundedOperation(request.operation), kind: boundedKind(request.kind?.kind), result });
  deps.metrics.reviewDuration.observe({ endpoint }, seconds);
  if (decision) {
    for (const f of decision.findings) deps.metrics.findings.inc({ endpoint, policy: f.policy, rule: f.rule, action: f.action });
    logDecision(deps, request, endpoint, decision, result);
  }
  if (wouldDeny) logWouldDeny(deps, request, endpoint, wouldDeny);
  if (deps.logger.isLevelEnabled('debug'))
    deps.logger.debug({ ...who(request, endpoint), result, ms: Math.round(seconds * 1e4) / 10 }, 'reviewed');
  return { status: 200, review };
}

/** The fields every log line about a review carries (never the object itself). */
const cutOrNot = (text: string | undefined): string | undefined => (text === undefined ? undefined : cutText(text));

function who(request: AdmissionRequest, endpoint: Endpoint): Record<string, unknown> {
  return {
    uid: request.uid,
    endpoint,
    kind: request.kind?.kind,
    // Cut: a review denied for a 1.8 MB name must not log it whole.
    namespace: cutOrNot(request.namespace),
    // Not `name`: the logger's base field `name` (netattach) would be repeated in the line.
    objectName: cutOrNot(objectName(request)),
    operation: request.operation,
  };
}

function logWouldDeny(deps: PipelineDeps, request: AdmissionRequest, endpoint: Endpoint, decision: Decision): void {
  const rules = [...new Set(decision.findings.filter((f) => f.action === 'Enforce').map((f) => f.rule))];
  for (const reason of rules.length > 0
    ? rules
    : [decision.code === 503 ? 'unavailable' : decision.code === 500 ? 'internal' : 'validation'])
    deps.metrics.wouldDeny.inc({ reason });
  deps.logger.info({ ...who(request, endpoint), rules, reasons: decision.errors.map(renderError) }, 'would deny (observe mode); admitted');
}

function logDecision(deps: PipelineDeps, request: AdmissionRequest, endpoint: Endpoint, decision: Decision, result: ReviewResult): void {
  if (result === 'error') {
    // The core caught an exception itself (its internalError decision): logged and counted like one thrown here.
    deps.logger.error(
      { ...who(request, endpoint), err: decision.errors.map(renderError).join('; ') },
      'review failed; denied with code 500',
    );
    deps.metrics.denials.inc({ reason: 'internal' });
    return;
  }
  // Once per pod: by its last call. That is the validating one, which sees the pod as created
  // (after every mutating webhook) and adds the address Leases' Audit findings, unless the mutating call
  // denied it; an admitting mutating call's audits are counted (findings), not logged. On the
  // decision's own line when it has one (a line per pod less for every denial: issue 28).
  const audits =
    (endpoint === 'validate' || result === 'denied') && decision.audits.length > 0
      ? decision.audits.map((f) => `${f.policy}/${f.rule}: ${renderError(f.error)}`)
      : undefined;
  if (result === 'denied') {
    const rules = [...new Set(decision.findings.filter((f) => f.action === 'Enforce').map((f) => f.rule))];
    for (const reason of rules.length > 0 ? rules : ['validation']) deps.metrics.denials.inc({ reason });
    deps.logger.info(
      { ...who(request, endpoint), rules, reasons: decision.errors.map(renderError), ...(audits ? { audits } : {}) },
      'denied',
    );
  } else if (decision.warnings.length > 0) {
    deps.logger.info(
      { ...who(request, endpoint), warnings: decision.warnings.map(warningText), ...(audits ? { audits } : {}) },
      'admitted with warnings',
    );
  } else if (audits) {
    deps.logger.info({ ...who(request, endpoint), audits }, 'audit findings');
  }
}
