// Judging a live pod with the admission core itself: the pod becomes the Pod CREATE (dry run)
// the apiserver would send, and goes through `review()`, so every built-in check and policy rule,
// and every message, is admission's own (changes to the core flow in here unchanged).
//
// What differs from a real CREATE, and why:
// - The pod has its name and uid: uniqueness is judged against the other live pods, never against
//   itself (the index skips the holder with the same namespace/name).
// - The watch holds metadata only, so the pod gets a placeholder container: the mutation's
//   resource injection then always succeeds, and only rules about the networks are judged. A
//   running pod's spec was fixed when it was admitted; it is not re-judged here.
// - Nobody is requesting it: rules that depend on who asks (requestedFields.allowedSubjects)
//   cannot be judged and are reported as `skip`.
// - Everything else admission reads of a pod is the pod's own: its network annotations and its
//   controller ownerReference (a KubeVirt VMI's pods share their MACs: without it the two pods of
//   a live migration read as two holders of one MAC). The context gives the rest as serve has it:
//   NADs, namespace labels, policies and the uniqueness index, DeviceClasses and templates.
import { review, type AdmissionConfig, type AdmissionRequest, type Decision } from '../admission/index.js';
import { DEFAULT_NETWORK_ANNOTATION, NETWORKS_ANNOTATION } from '../annotation/index.js';
import { renderError, type FieldError } from '../field/index.js';
import type { NadLookup } from '../nads/index.js';
import type { Action, Finding, PolicyEvaluator, PolicySet } from '../policy/index.js';
import { cutMiddleBytes, MAX_MESSAGE_BYTES } from './bounds.js';
import type { DraView } from '../dra/index.js';
import { notJudgedFinding } from './kept-text.js';
import { ownerReferencesOf } from './live-pod.js';
import type { AuditFinding, LivePod, ReportResult, ReportSeverity } from './types.js';

export interface AuditContext {
  /** Cache-only NAD lookups (found / not-found): the audit runs once the NAD source has synced. */
  nads: (namespace: string, name: string) => NadLookup;
  namespaceLabels: (namespace: string) => Record<string, string>;
  policy: PolicyEvaluator;
  /** The policies in force, to tell which requestedFields rules name subjects. */
  policies: PolicySet;
  config: AdmissionConfig;
  /** DeviceClasses and ResourceClaimTemplates, as serve's webhook reads them (cache only); without them, templates are unchecked. */
  dra?: DraView;
}

const POD_GVK = { group: '', version: 'v1', kind: 'Pod' };
const POD_GVR = { group: '', version: 'v1', resource: 'pods' };
/** Name of the placeholder container (see above); never shown. */
const PLACEHOLDER_CONTAINER = 'netattach-audit';

const SEVERITY: Record<Action, ReportSeverity> = { Enforce: 'high', Warn: 'medium', Audit: 'low' };
/** Enforce: a pod like this would be denied now. Warn: admitted with a warning. Audit: a violation only recorded. */
const RESULT: Record<Action, ReportResult> = { Enforce: 'fail', Warn: 'warn', Audit: 'fail' };

/**
 * A field error as a finding's message, within `room` bytes: the pod's own keys reach it through
 * the path (a 200 KB key gave 20 MB of findings per pod), and findings are kept for every live
 * pod, written to reports and printed.
 */
export const messageOf = (e: FieldError, room = MAX_MESSAGE_BYTES): string => cutMiddleBytes(renderError(e), room);

/** Does the pod carry a networks annotation (the webhooks see only such pods)? */
export const hasNetworks = (pod: LivePod): boolean =>
  pod.networks !== undefined || pod.defaultNetwork !== undefined || pod.unkept !== undefined;

type Gvk = AdmissionRequest['kind'];
type Gvr = AdmissionRequest['resource'];

/** The dry-run CREATE of an object the audit judges, from nobody (the audit does not know who created it). */
export function dryRunCreate(
  kind: Gvk,
  resource: Gvr,
  who: { namespace: string; name: string; uid?: string },
  object: unknown,
): AdmissionRequest {
  return {
    uid: `netattach-audit-${who.uid ?? `${who.namespace}/${who.name}`}`,
    kind,
    resource,
    requestKind: kind,
    requestResource: resource,
    name: who.name,
    namespace: who.namespace,
    operation: 'CREATE',
    userInfo: {},
    dryRun: true,
    object,
  };
}

export function requestFor(pod: LivePod): AdmissionRequest {
  const annotations: Record<string, string> = {};
  if (pod.networks !== undefined) annotations[NETWORKS_ANNOTATION] = pod.networks;
  if (pod.defaultNetwork !== undefined) annotations[DEFAULT_NETWORK_ANNOTATION] = pod.defaultNetwork;
  return dryRunCreate(POD_GVK, POD_GVR, pod, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: pod.name, namespace: pod.namespace, ...(pod.uid ? { uid: pod.uid } : {}), annotations, ...optionalOwners(pod) },
    spec: { containers: [{ name: PLACEHOLDER_CONTAINER }] },
  });
}

function optionalOwners(pod: LivePod): { ownerReferences?: Array<Record<string, unknown>> } {
  const refs = ownerReferencesOf(pod);
  return refs ? { ownerReferences: refs } : {};
}

/** The findings of one live pod, in the core's order; none for a pod without networks. */
export function auditPod(pod: LivePod, ctx: AuditContext): AuditFinding[] {
  if (!hasNetworks(pod)) return [];
  if (pod.unkept) return [notJudgedFinding(pod.unkept)];
  const decision = review(requestFor(pod), {
    endpoint: 'validate',
    nads: ctx.nads,
    namespaceLabels: ctx.namespaceLabels(pod.namespace),
    policy: ctx.policy,
    config: ctx.config,
    ...(ctx.dra ? { dra: ctx.dra } : {}),
  });
  return findingsOf(decision, ctx.policies);
}

/** Rules whose verdict depends on the requester, which the audit does not know. */
function subjectDependent(policies: PolicySet): Set<string> {
  const out = new Set<string>();
  for (const p of policies.policies) {
    const r = p.rules.requestedFields;
    if (r && (r.users.size > 0 || r.groups.size > 0 || r.serviceAccounts.length > 0)) out.add(p.name);
  }
  return out;
}

export function findingsOf(decision: Decision, policies: PolicySet): AuditFinding[] {
  // The core's net under a bug: the pod could not be judged, which is not the pod's fault.
  if (decision.code === 500) {
    return decision.errors.map((e) => ({
      policy: 'builtin',
      rule: 'internal',
      action: 'Enforce',
      result: 'error',
      severity: 'info',
      message: messageOf(e),
    }));
  }
  const bySubject = subjectDependent(policies);
  const out: AuditFinding[] = [];
  const fromFindings = new Set<FieldError>();
  for (const f of decision.findings) {
    fromFindings.add(f.error);
    // "Not applied: namespace exempt" is bookkeeping, not a finding about the pod.
    if (f.rule === 'exemption') continue;
    out.push(reported(f, bySubject));
  }
  // Errors no rule produced: the annotation itself is malformed (Multus fails such a pod at start).
  for (const e of decision.errors) {
    if (fromFindings.has(e)) continue;
    out.push({ policy: 'builtin', rule: 'annotation', action: 'Enforce', result: 'fail', severity: 'high', message: messageOf(e) });
  }
  return out;
}

const NOT_JUDGED = ' (not judged: the audit does not know who created the pod, and the rule allows some subjects)';

function reported(f: Finding, bySubject: ReadonlySet<string>): AuditFinding {
  if (f.rule === 'requestedFields' && bySubject.has(f.policy)) {
    return {
      policy: f.policy,
      rule: f.rule,
      action: f.action,
      result: 'skip',
      severity: 'info',
      message: `${messageOf(f.error, MAX_MESSAGE_BYTES - NOT_JUDGED.length)}${NOT_JUDGED}`,
    };
  }
  return {
    policy: f.policy,
    rule: f.rule,
    action: f.action,
    result: RESULT[f.action],
    severity: SEVERITY[f.action],
    message: messageOf(f.error),
  };
}
