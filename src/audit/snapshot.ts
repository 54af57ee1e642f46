// The audit of a fixed set of pods (`netattach audit`, tests): the uniqueness index is built from
// the pods themselves, then each pod is judged like the background audit judges a live pod.
import type { AdmissionConfig } from '../admission/index.js';
import { ADMISSION_LABEL, EXCLUDED_NAMESPACES } from '../check/index.js';
import { nadKey, type Nad, type NadLookup } from '../nads/index.js';
import type { DraView } from '../dra/index.js';
import { AddressIndex, NAME_LABEL, PolicyEngine, podNetworkFacts, sharingOwnerOf, type PolicySet } from '../policy/index.js';
import { auditPod, hasNetworks, type AuditContext } from './judge.js';
import { auditNad, auditedNadOf } from './judge-nad.js';
import { ownerReferencesOf } from './live-pod.js';
import type { LivePod, NadAudit, PodAudit } from './types.js';

export interface AuditSnapshot {
  pods: readonly LivePod[];
  nads: readonly Nad[];
  /** Labels of a namespace when known; the name label is always added. */
  namespaceLabels?: (namespace: string) => Record<string, string> | undefined;
  policies: PolicySet;
  config: AdmissionConfig;
  /** DeviceClasses and ResourceClaimTemplates known (a cluster's, the inputs'); without them templates are unchecked. */
  dra?: DraView;
}

export interface NadObjectsSnapshot {
  /** NAD objects as stored (files, a list), each judged as the NAD webhook judges a CREATE. */
  objects: readonly unknown[];
  namespaceLabels?: (namespace: string) => Record<string, string> | undefined;
  config: AdmissionConfig;
  /** Namespace of an object without one (files): `default`, like kubectl. */
  defaultNamespace?: string;
}

/** Would the shipped webhook configurations send this namespace's pods to netattach at all? */
export function audited(namespace: string, labels: Record<string, string>): boolean {
  return !EXCLUDED_NAMESPACES.includes(namespace) && labels[ADMISSION_LABEL] !== 'disabled';
}

/** Every pod with networks, in input order, each with its findings (none when clean). */
export function auditSnapshot(s: AuditSnapshot): PodAudit[] {
  const index = new AddressIndex();
  for (const p of s.pods) {
    const facts = podNetworkFacts(p.namespace, p.networks, p.defaultNetwork, s.config.defaultNetworkNamespace);
    // Held as serve's pod watch holds it (indexPod): by the pod, or with the owner it shares them with.
    const owner = facts.addresses.length
      ? sharingOwnerOf({ ownerReferences: ownerReferencesOf(p) }, s.config.addressSharingOwners, p.namespace)
      : undefined;
    index.setPod({ namespace: p.namespace, name: p.name, ...(p.uid ? { uid: p.uid } : {}), ...(owner ? { owner } : {}) }, facts.addresses);
  }
  const byKey = new Map(s.nads.map((n) => [nadKey(n.namespace, n.name), n]));
  const labels = (ns: string): Record<string, string> => ({ ...s.namespaceLabels?.(ns), [NAME_LABEL]: ns });
  const ctx: AuditContext = {
    nads: (ns, name): NadLookup => {
      const nad = byKey.get(nadKey(ns, name));
      return nad ? { status: 'found', nad } : { status: 'not-found' };
    },
    namespaceLabels: labels,
    policy: new PolicyEngine({ index, policies: s.policies }),
    policies: s.policies,
    config: s.config,
    ...(s.dra ? { dra: s.dra } : {}),
  };
  return s.pods
    .filter((p) => hasNetworks(p) && audited(p.namespace, labels(p.namespace)))
    .map((pod) => ({ pod, findings: auditPod(pod, ctx) }));
}

/** Every NAD in a namespace the NAD webhook sees, in input order, each with its findings (none when clean). */
export function auditNadObjects(s: NadObjectsSnapshot): NadAudit[] {
  const out: NadAudit[] = [];
  for (const obj of s.objects) {
    const nad = auditedNadOf(obj, s.defaultNamespace);
    if (!nad || !audited(nad.namespace, { ...s.namespaceLabels?.(nad.namespace), [NAME_LABEL]: nad.namespace })) continue;
    out.push({ nad, findings: auditNad(obj, nad, s.config) });
  }
  return out;
}
