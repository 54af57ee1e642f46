// What `kubectl netattach explain` says about one pod: a versioned document (docs/kubectl-plugin.md)
// that the text renderer and `-o json|yaml` both print. Pure data, built by explain.ts.
import type { AuditFinding } from '../audit/index.js';
import type { ReportedError } from '../check/index.js';

export const EXPLAIN_FORMAT_VERSION = 1;

/** How one requested value reaches the chain: the same answer the capability check gives (src/nads/reach.ts). */
export interface RequestedValue {
  /** The selection key as written: `mac`, `ips`, `infiniband-guid`, `portMappings`, `bandwidth`, or `cni-args.<key>`. */
  field: string;
  path: string;
  /** `read`: plugin `by` reads it; `ignored`: no plugin of the chain does; `unknown`: `types` are not in the table; `unchecked`: no readable config. */
  status: 'read' | 'ignored' | 'unknown' | 'unchecked';
  by?: string;
  types?: string[];
}

export interface ChainPlugin {
  type: string;
  /** Where it sits in the NAD, e.g. `spec.config.plugins[1]`. */
  path: string;
  capabilities: string[];
  ipam?: string;
}

export interface SelectionExplanation {
  /** `namespace/name` (`@interface` when one is requested). */
  selection: string;
  path: string;
  /** Which annotation: `networks` or `default-network`. */
  annotation: 'networks' | 'default-network';
  nad: { status: 'found' | 'not-found'; chain?: ChainPlugin[]; cniVersion?: string; problems?: string[] };
  /** How the NAD's device is served, and what it adds to the pod (resources or a claim). */
  device?: { path: string; summary: string; resourceNames: string[]; claimTemplate?: string; problems: string[] };
  requested: RequestedValue[];
}

export type RuleVerdict = 'pass' | 'deny' | 'warn' | 'audit';

export interface RuleExplanation {
  rule: string;
  /** The action the policy sets for the rule. */
  action: string;
  verdict: RuleVerdict;
  /** The findings of this rule for this pod, rendered as field errors. */
  messages: string[];
}

export interface PolicyExplanation {
  name: string;
  /** `applies`, `not-selected` (namespaceSelector does not match) or `exempt`. */
  status: 'applies' | 'not-selected' | 'exempt';
  rules: RuleExplanation[];
}

/** What a webhook answers to one object: the part a pod's and a VM's admission share. */
export interface Answer {
  /** `allowed`, `denied`, or `skipped` (the webhooks do not see the object's namespace). */
  verdict: 'allowed' | 'denied' | 'skipped';
  skipped?: string;
  errors: ReportedError[];
  warnings: string[];
}

export interface Admission extends Answer {
  audits: ReportedError[];
  /** What the mutating webhook would change now: resources per container, claims, nodeSelector. */
  mutation: {
    resources: Record<string, { requests?: Record<string, string>; limits?: Record<string, string> }>;
    resourceClaims: string[];
    nodeSelector?: Record<string, string>;
    operations: number;
  };
}

export interface AuditExplanation {
  /** `judged`: the audit's findings now; `not-audited`: why not (namespace excluded, no networks); `unavailable`: no live pods read. */
  status: 'judged' | 'not-audited' | 'unavailable';
  reason?: string;
  findings: AuditFinding[];
}

/**
 * For `explain vm|vmi`: what the VM webhook says to the object itself when it is applied, each
 * problem at the VM's own path (the rest of the explanation is its launcher pod's).
 */
export interface VmAdmission extends Answer {
  kind: string;
  name: string;
}

export interface Explanation {
  formatVersion: typeof EXPLAIN_FORMAT_VERSION;
  kind: 'PodExplanation';
  pod: { namespace: string; name: string; source: 'cluster' | 'file' };
  /** Only for a KubeVirt VM, VMI, VMI ReplicaSet or pool explained through its launcher pod. */
  vm?: VmAdmission;
  networks: SelectionExplanation[];
  policies: PolicyExplanation[];
  audit: AuditExplanation;
  admission: Admission;
}
