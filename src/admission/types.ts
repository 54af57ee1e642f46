// The pure core's decision type and its inputs; the AdmissionReview wire types (src/contracts).
// The core (src/admission) maps (request, context) -> Decision and knows nothing of HTTP;
// src/server turns a Decision into the AdmissionReview response.
import type { FieldError } from '../field/index.js';
import type { Warning } from './warnings.js';
import type { NadLookup } from '../nads/index.js';
import { NO_EXTRA_READERS, type ExtraReaders } from '../nads/index.js';
import { DEFAULT_SHARING_OWNERS } from '../policy/index.js';
import type { DraView } from '../dra/index.js';
import type { BindingPlugins } from '../kubevirt/index.js';
import type { Finding, PolicyEvaluator, HeldAddress } from '../policy/index.js';
// The wire types live in src/contracts (a leaf shared by every layer); the core's face keeps them.
export * from '../contracts/index.js';
import type { Endpoint, JsonPatchOperation } from '../contracts/index.js';

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
  /**
   * KubeVirt's binding plugin registry (the KubeVirt CR's `spec.configuration.network.binding`),
   * when known: a VM's binding interfaces render their plugin's NAD. Undefined: unknown, and a
   * binding interface is only noted (docs/kubevirt.md).
   */
  kubevirtBindings?: BindingPlugins;
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
