// The NetworkAttachmentPolicy document as written by an admin (file or CRD object), after
// schema validation. Field names follow schemas/network-attachment-policy.schema.json.
import type { Action } from './types.js';

export const POLICY_GROUP = 'netattach.io';
export const POLICY_VERSION = 'v1alpha1';
export const POLICY_API_VERSION = `${POLICY_GROUP}/${POLICY_VERSION}`;
export const POLICY_KIND = 'NetworkAttachmentPolicy';
export const POLICY_PLURAL = 'networkattachmentpolicies';
/** Namespace label that exempts a namespace from every policy (break-glass). */
export const EXEMPT_LABEL = 'netattach.io/exempt';

export type LabelSelectorOperator = 'In' | 'NotIn' | 'Exists' | 'DoesNotExist';

export interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: Array<{ key: string; operator: LabelSelectorOperator; values?: string[] }>;
}

export type RequestableField = 'mac' | 'infiniband-guid' | 'ips' | 'deviceID';
export type UniquenessScope = 'Network' | 'Cluster';

export interface PolicyRules {
  allowedNetworks?: { action?: Action; ownNamespace?: boolean; globalNamespaces?: string[]; networks?: string[] };
  maxAttachments?: { action?: Action; max: number };
  requestedFields?: {
    action?: Action;
    forbidden: RequestableField[];
    allowedSubjects?: { users?: string[]; groups?: string[]; serviceAccounts?: string[] };
  };
  hardwareAddresses?: {
    action?: Action;
    macPrefixes?: string[];
    guidRanges?: Array<{ from: string; to: string }>;
    forbidSpecialValues?: boolean;
  };
  uniqueAddresses?: { action?: Action; mac?: UniquenessScope; 'infiniband-guid'?: UniquenessScope };
  networkExists?: { action: Action };
  capabilities?: { action: Action };
  immutableNetworks?: { action: Action };
  interfaceNames?: { action?: Action; allowed: string[] };
}

export type RuleName = keyof PolicyRules;

/** Order in which rules are evaluated and their findings listed. */
export const RULE_ORDER: readonly RuleName[] = [
  'allowedNetworks',
  'maxAttachments',
  'requestedFields',
  'hardwareAddresses',
  'uniqueAddresses',
  'interfaceNames',
  'immutableNetworks',
  'networkExists',
  'capabilities',
];

export interface PolicySpec {
  namespaceSelector?: LabelSelector;
  exemptNamespaces?: string[];
  action?: Action;
  rules?: PolicyRules;
}

export interface PolicyCondition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  reason?: string;
  message?: string;
  observedGeneration?: number;
  lastTransitionTime?: string;
}

export interface PolicyDocument {
  apiVersion: typeof POLICY_API_VERSION;
  kind: typeof POLICY_KIND;
  metadata: { name: string; uid?: string; generation?: number; resourceVersion?: string; [k: string]: unknown };
  spec: PolicySpec;
  status?: { observedGeneration?: number; conditions?: PolicyCondition[] };
}
