// Judging a NetworkAttachmentDefinition with the admission core itself: the object becomes the
// NAD CREATE (dry run) the apiserver would send, and goes through `review()`, so every error and
// message is the NAD webhook's own (changes to src/nads validation flow in here unchanged).
//
// A NAD stored before netattach was installed (or before a stricter rule, or another
// `resourceNameKeys`) can hold what the webhook now denies: the audit reports it as a NAD like
// this one would be denied if created now. An UPDATE would admit it (errors already present
// before an update are warnings), so the CREATE is the question asked.
//
// Only errors are findings. The webhook's warnings (an unknown cniVersion, an ambiguous
// DeviceClass) are not, as for pods: a finding is what a webhook denies, or what a policy grades.
// No NetworkAttachmentPolicy rule applies to NADs (policies judge pods), so the NAD's findings do
// not depend on the policies or on namespace labels beyond the webhook's namespace selector.
import { review, type AdmissionConfig, type AdmissionRequest } from '../admission/index.js';
import { dryRunCreate, messageOf } from './judge.js';
import { identityOf } from './live-pod.js';
import { NAD_GROUP, NAD_KIND, NAD_PLURAL, NAD_VERSION } from '../nads/index.js';
import { NO_POLICY } from '../policy/index.js';
import type { AuditFinding, AuditedNad } from './types.js';

/** The rule of a NAD finding: the NAD is one the webhook would admit (policy `builtin`). */
export const NAD_RULE = 'nadValid';

const NAD_GVK = { group: NAD_GROUP, version: NAD_VERSION, kind: NAD_KIND };
const NAD_GVR = { group: NAD_GROUP, version: NAD_VERSION, resource: NAD_PLURAL };

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Names the NAD (namespace, name, uid); undefined without a name or namespace (nothing to report against). */
export function auditedNadOf(obj: unknown, defaultNamespace?: string): AuditedNad | undefined {
  const id = identityOf(obj, defaultNamespace);
  if (!id) return undefined;
  return id.uid ? { namespace: id.namespace, name: id.name, uid: id.uid } : { namespace: id.namespace, name: id.name };
}

export const requestForNad = (obj: Json, nad: AuditedNad): AdmissionRequest => dryRunCreate(NAD_GVK, NAD_GVR, nad, obj);

/** What the NAD webhook would deny in this object on CREATE now, one finding per error. */
export function auditNad(obj: unknown, nad: AuditedNad, config: AdmissionConfig): AuditFinding[] {
  if (!isObject(obj)) return [];
  const decision = review(requestForNad(obj, nad), {
    endpoint: 'validate',
    nads: () => ({ status: 'not-found' }),
    // The NAD review evaluates no policy (policies judge pods).
    policy: NO_POLICY,
    config,
  });
  if (decision.allowed) return [];
  // The core's net under a bug: the NAD could not be judged, which is not the NAD's fault.
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
  return decision.errors.map((e) => ({
    policy: 'builtin',
    rule: NAD_RULE,
    action: 'Enforce',
    result: 'fail',
    severity: 'high',
    message: messageOf(e),
  }));
}
