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
//   in decide() replace `deps.reservations.reserve(decision.claims);` with
//   `setImmediate(() => deps.reservations.reserve(decision.claims));`, or with
//   `void Promise.resolve().then(() => deps.reservations.reserve(decision.claims));`.
import t from 'tap';
import * as admission from '../../src/admission/index.js';
import { DEFAULT_ADMISSION_CONFIG, type AdmissionReview } from '../../src/admission/types.js';
import { StaticNadSource, type NadLookup } from '../../src/nads/index.js';
import { AddressIndex, PolicyEngine, loadPolicyDocuments, policySet } from '../../src/policy/index.js';
import { createMetrics } from '../../src/server/metrics.js';
import { handleReview, type PipelineDeps, type PipelineResult } from '../../src/server/pipeline.js';
import type { AdmissionCore } from '../../src/server/types.js';
import { captureLogger } from './fixtures.js';
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
    const first = response(await handleReview(podCreate({ name: 'first', uid: 'u-first', networks: ib(firstNetwork) }), 'validate', 1000, deps));
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
  const send = async (review: AdmissionReview, endpoint: 'mutate' | 'validate' = 'validate') => response(await handleReview(review, endpoint, 1000, deps));
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
