// What the audit judges and what it finds. A live pod is what the metadata-only pod watch
// holds of it: identity, the two network annotations and the controller ownerReference (what
// admission reads of a pod's metadata), nothing of its spec.
import type { Action, PodAddress } from '../policy/index.js';

export interface LivePod {
  namespace: string;
  name: string;
  uid?: string;
  /** `k8s.v1.cni.cncf.io/networks`, as on the pod. */
  networks?: string;
  /** `v1.multus-cni.io/default-network`, as on the pod. */
  defaultNetwork?: string;
  /**
   * The pod's controller ownerReference, as on the pod: admission reads a sharing owner from it
   * (a KubeVirt VMI's migration pods hold their MACs as one), so the audit must see it too.
   */
  controller?: ControllerReference;
  /**
   * Set when the annotations are over a bound of the background audit (kept-text.ts): `networks`
   * and `defaultNetwork` are then absent, and this stands for them.
   */
  unkept?: UnkeptAnnotations;
}

/** What the background audit keeps of a pod's annotations past its bounds. */
export interface UnkeptAnnotations {
  /** Which bound: the pod's own, or the total over all live pods. */
  bound: 'pod' | 'total';
  /** That bound, in characters. */
  limit: number;
  /** Characters of both annotations as they came. */
  chars: number;
  /** Of both texts: a changed annotation is judged again although it is not kept. */
  fingerprint: string;
  /** The pod's hardware addresses (its sharers are judged again when it changes or goes); absent past 64, or without room. */
  addresses?: readonly PodAddress[];
}

/** The fields of an ownerReference admission reads (src/policy/owner.ts). */
export interface ControllerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid?: string;
}

/** PolicyReport result values (wgpolicyk8s.io/v1alpha2). */
export type ReportResult = 'pass' | 'fail' | 'warn' | 'error' | 'skip';
/** PolicyReport severities (wgpolicyk8s.io/v1alpha2). */
export type ReportSeverity = 'critical' | 'high' | 'medium' | 'low' | 'info';

/** One finding about one pod or NAD: a rule it breaks, with the webhook's own message. */
export interface AuditFinding {
  /** The policy name, or `builtin` for the built-in checks and the annotation itself. */
  policy: string;
  /** `networkExists`, `capabilities`, `annotation` (malformed), `nadValid` (a NAD), or a policy rule name. */
  rule: string;
  /** The action admission would take now (Enforce: a new pod like this one would be denied). */
  action: Action;
  result: ReportResult;
  severity: ReportSeverity;
  /** The field error as admission renders it (`path: Type: value: reason`). */
  message: string;
}

export interface PodAudit {
  pod: LivePod;
  findings: AuditFinding[];
}

/** A NetworkAttachmentDefinition as the audit names it in reports and rows. */
export interface AuditedNad {
  namespace: string;
  name: string;
  uid?: string;
}

/** One NAD and what the NAD webhook would deny in it on CREATE now. */
export interface NadAudit {
  nad: AuditedNad;
  findings: AuditFinding[];
}
