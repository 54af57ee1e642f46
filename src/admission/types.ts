// The admission.k8s.io AdmissionReview wire types and the pure core's decision type.
// The core (src/admission) maps (request, context) -> Decision and knows nothing of HTTP;
// src/server turns a Decision into the AdmissionReview response.
import type { FieldError } from '../field/index.js';
import type { Warning } from './warnings.js';
import type { NadLookup } from '../nads/types.js';
import { NO_EXTRA_READERS, type ExtraReaders } from '../nads/plugins.js';
import { DEFAULT_SHARING_OWNERS } from '../policy/owner.js';
import type { DraView } from '../dra/types.js';
import type { Finding, PolicyEvaluator, HeldAddress } from '../policy/types.js';

export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

export interface GroupVersionResource {
  group: string;
  version: string;
  resource: string;
}

export interface UserInfo {
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

export interface AdmissionRequest {
  uid: string;
  kind: GroupVersionKind;
  resource: GroupVersionResource;
  subResource?: string;
  requestKind?: GroupVersionKind;
  requestResource?: GroupVersionResource;
  name?: string;
  namespace?: string;
  operation: Operation;
  userInfo: UserInfo;
  object?: unknown;
  oldObject?: unknown;
  dryRun?: boolean;
  options?: unknown;
}

export const ADMISSION_V1 = 'admission.k8s.io/v1';
export const ADMISSION_V1BETA1 = 'admission.k8s.io/v1beta1';
export type AdmissionApiVersion = typeof ADMISSION_V1 | typeof ADMISSION_V1BETA1;

export interface AdmissionStatus {
  code?: number;
  reason?: string;
  message?: string;
}

export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  status?: AdmissionStatus;
  patch?: string;
  patchType?: 'JSONPatch';
  warnings?: string[];
  auditAnnotations?: Record<string, string>;
}

export interface AdmissionReview {
  apiVersion: AdmissionApiVersion;
  kind: 'AdmissionReview';
  request?: AdmissionRequest;
  response?: AdmissionResponse;
}

/** RFC 6902 operation, as produced by fast-json-patch's compare(). */
export interface JsonPatchOperation {
  op: 'add' | 'remove' | 'replace' | 'move' | 'copy' | 'test';
  path: string;
  value?: unknown;
  from?: string;
}

export type Endpoint = 'mutate' | 'validate';

/** What the core decided about one request. */
export interface Decision {
  allowed: boolean;
  /** Why it is denied (empty when allowed), rendered as Kubernetes field errors in status.message. */
  errors: FieldError[];
  /** HTTP 403 Forbidden for policy denials, 422 Invalid for malformed requests. */
  code?: 403 | 422 | 500 | 503;
  /** Shown by kubectl as `Warning: ...`; cut to a line each and to the apiserver's budget in the response. */
  warnings: Warning[];
  /** Findings logged and counted only (policy action Audit). */
  audits: Finding[];
  /** Every finding with its policy, rule and action, for metrics and logs. */
  findings: Finding[];
  /** JSON Patch (only ever non-empty from the mutate endpoint). */
  patch: JsonPatchOperation[];
  /** Hardware addresses to reserve in the uniqueness index when the object is admitted. */
  addresses: HeldAddress[];
}

/** Resolved inputs the shell gathers before calling the core (the core never does I/O). */
export interface AdmissionContext {
  endpoint: Endpoint;
  /** NADs resolved beforehand for this request: lookups are synchronous here. */
  nads: (namespace: string, name: string) => NadLookup;
  /** Labels of the request's namespace when known (namespace informer), for policy selection. */
  namespaceLabels?: Record<string, string>;
  policy: PolicyEvaluator;
  config: AdmissionConfig;
  /**
   * Pods (`namespace/name`) that use a NAD, when the shell knows them (pod informer): a DELETE of
   * a NAD in use is allowed with a warning naming some of them.
   */
  podsUsingNad?: (namespace: string, name: string) => string[];
  /**
   * DeviceClasses and ResourceClaimTemplates, when the shell reads them (cluster mode): the
   * explicit-claim path checks its templates, NAD reviews warn about ambiguous DeviceClasses.
   */
  dra?: DraView;
}

export interface AdmissionConfig {
  /** Namespace for an unqualified default-network name (Multus's own namespace). */
  defaultNetworkNamespace: string;
  /** NAD annotation keys read for resource names; the first is the standard one. */
  resourceNameKeys: string[];
  /**
   * The Downward API volume of network-resources-injector, off unless enabled; `hugepages` adds
   * NRI's hugepages files and CONTAINER_NAME (and implies the volume).
   */
  podNetInfo: { enabled: boolean; volumeName: string; mountPath: string; hugepages?: boolean };
  /** Plugin types the admin declares as readers of a MAC or IPs (`--plugin-reads`), beyond the built-in table. */
  pluginReads: ExtraReaders;
  /** `group/Kind` of controller owners whose pods share hardware addresses (a KubeVirt VMI's migration pods). */
  addressSharingOwners: readonly string[];
  /** Refuse any change of a running pod's network annotations (default: validate it, as for hotplug). */
  immutableNetworks: boolean;
  /**
   * How many `defaultNetworks` Multus's config adds before the annotation's elements: they shift
   * the `net<N>` names Multus gives elements without `interface`. Absent: not stated, read as
   * Multus's default (none), and a collision it finds is a warning, not a denial.
   */
  multusDefaultNetworks?: number;
}

export const DEFAULT_ADMISSION_CONFIG: AdmissionConfig = {
  defaultNetworkNamespace: 'kube-system',
  resourceNameKeys: ['k8s.v1.cni.cncf.io/resourceName'],
  podNetInfo: { enabled: false, volumeName: 'podnetinfo', mountPath: '/etc/podnetinfo' },
  pluginReads: NO_EXTRA_READERS,
  addressSharingOwners: DEFAULT_SHARING_OWNERS,
  immutableNetworks: false,
};
