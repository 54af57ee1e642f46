// What the corpus tests drive serve through: the server pipeline with the deps serve builds (a
// static NAD source, the case's policies, one address index), and a corpus step as the
// AdmissionReview the apiserver sends. One place for the three faces' tests (corpus, one
// verdict, explain) so that they hold the same webhook.
import pino from 'pino';
import * as core from '../../src/admission/index.js';
import { StaticNadSource } from '../../src/nads/index.js';
import { AddressIndex, loadPolicyDocuments, PolicyEngine, policySet, type PolicySet } from '../../src/policy/index.js';
import { createMetrics, type PipelineDeps } from '../../src/server/index.js';
import { NADS, type CorpusCase, type CorpusStep } from './corpus.js';

/** The user who creates the corpus's pods. */
export const ALICE = { username: 'alice', groups: ['system:authenticated'] };

/** The case's policy documents, loaded as serve loads a policy file (an invalid one throws). */
export function corpusPolicies(c: CorpusCase): PolicySet {
  if (!c.policy) return policySet([]);
  const loaded = loadPolicyDocuments(c.policy, 'corpus');
  if (loaded.errors.length) throw new Error(loaded.errors.map((e) => e.message).join('; '));
  return policySet(loaded.policies);
}

/** The pipeline serve runs, over the corpus's NADs and these policies (its reservations: the address index). */
export function corpusDeps(
  policies: PolicySet,
  extra: Partial<Omit<PipelineDeps, 'reservations'>> = {},
): PipelineDeps & { reservations: AddressIndex } {
  const index = new AddressIndex();
  const nadSource = new StaticNadSource(NADS);
  return {
    core,
    nadSource,
    policy: new PolicyEngine({ policies, index }),
    reservations: index,
    config: core.DEFAULT_ADMISSION_CONFIG,
    logger: pino({ level: 'silent' }),
    metrics: createMetrics(() => nadSource),
    ...extra,
  };
}

/** A corpus step as the apiserver's AdmissionReview: a CREATE, or an UPDATE from `before`. */
export function stepReview(
  step: CorpusStep,
  uid: string,
  userInfo: core.AdmissionRequest['userInfo'],
): { apiVersion: string; kind: string; request: core.AdmissionRequest } {
  const pod = step.pod as { metadata: { name: string; namespace: string } };
  const request: core.AdmissionRequest = {
    uid,
    kind: { group: '', version: 'v1', kind: 'Pod' },
    resource: { group: '', version: 'v1', resource: 'pods' },
    name: pod.metadata.name,
    namespace: pod.metadata.namespace,
    operation: step.before ? 'UPDATE' : 'CREATE',
    userInfo,
    object: step.pod,
    ...(step.before ? { oldObject: step.before } : {}),
  };
  return { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request };
}
