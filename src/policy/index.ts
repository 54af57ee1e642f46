// NetworkAttachmentPolicy: documents, the engine, the uniqueness index and their sources.
export type * from './types.js';
export { NO_POLICY } from './types.js';
export * from './document.js';
export { validatePolicyDocument, POLICY_SCHEMA_FILE } from './schema.js';
export { compilePolicy, type CompiledPolicy } from './compile.js';
export { loadPolicyDocuments, loadPolicyObject, type LoadedPolicies, type PolicyLoadError } from './load.js';
export {
  PolicyEngine,
  policySet,
  evaluatePolicies,
  strictest,
  EMPTY_POLICY_SET,
  type PolicySet,
  type PolicyEngineOptions,
} from './engine.js';
export { AddressIndex, podKey, type Holder, type PodAddress, type PodRef, type AddressIndexOptions } from './address-index.js';
export { registerPolicyMetrics, type PolicyMetrics } from './metrics.js';
export { FilePolicySource, type FilePolicySourceOptions } from './file-source.js';
export { ClusterPolicySource, POLICIES_PATH, type ClusterPolicySourceOptions } from './cluster-source.js';
export type { PolicySource, SourceOptions } from './source.js';
export { StaticNamespaceLabels, ClusterNamespaceLabels, NAME_LABEL, type NamespaceLabelSource } from './namespace-labels.js';
export { PodAddressSource, podNetworkFacts, LIVE_PODS_FIELD_SELECTOR, type PodNetworkFacts } from './pod-source.js';
export { NadUsage, type NadUsageStats } from './nad-usage.js';
export { policyCrd, renderPolicyCrd } from './crd.js';
export type { PolicyLogger } from './log.js';
export { DEFAULT_SHARING_OWNERS, parseSharingOwners, sharingOwnerOf, type SharingOwner } from './owner.js';
export { apiHolderLookup, podRunsWith, type HolderLookup } from './pod-lookup.js';
export {
  AddressLeaseStore,
  leaseSweepMs,
  DEFAULT_LEASE_PENDING_MS,
  type AddressLeases,
  type AddressLeaseStoreOptions,
  type LeaseEvent,
} from './address-lease-store.js';
export {
  LEASE_LABEL,
  leaseName,
  holderOf,
  parseLease,
  wantedLeases,
  outcomeFinding,
  type LeaseHolder,
  type LeaseOutcome,
  type StoredLease,
  type WantedLease,
} from './address-leases.js';
export { addressFacts, type AddressFact } from './addresses.js';
export { addressKey } from './rules.js';
