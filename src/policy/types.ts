// The contract between the admission core and the policy engine.
// Built-in checks (missing NAD, undeclared capability) are produced by the core as findings
// with action Enforce; policies may re-grade them (e.g. Warn while a GitOps tool catches up)
// and add findings of their own.
import type { FieldError } from '../field/index.js';
import type { ParsedNetwork } from '../annotation/index.js';
import type { NadLookup } from '../nads/index.js';
import type { Operation, UserInfo } from '../contracts/index.js';
import type { SharingOwner } from './owner.js';

export type Action = 'Enforce' | 'Warn' | 'Audit';

/** Rules the core checks without any policy; their default action is Enforce. */
export type BuiltinRule = 'networkExists' | 'capabilities';

export interface Finding {
  /** Name of the policy, or `builtin`. */
  policy: string;
  /** Rule name, e.g. `allowedNetworks`, `hardwareAddresses.unique`, `capabilities`. */
  rule: string;
  action: Action;
  error: FieldError;
}

export type AddressKind = 'mac' | 'infiniband-guid';

/** A hardware address a pod holds (or will hold once admitted) within a uniqueness scope. */
export interface HeldAddress {
  kind: AddressKind;
  /** Canonical form: lower-case, colon-separated. */
  value: string;
  /** `network:<ns>/<name>` or `cluster` (e.g. one InfiniBand fabric). */
  scope: string;
  pod: { namespace: string; name?: string; generateName?: string; uid?: string; owner?: SharingOwner };
  /**
   * Set when a uniqueAddresses rule judged this address (and found no holder): the rule whose
   * action is strictest, its scope, and how messages name the address. Only these addresses are
   * claimed in the API server across replicas (src/policy/address-leases.ts).
   */
  unique?: UniqueRule;
}

/** The uniqueAddresses rule an address was judged by. */
export interface UniqueRule {
  policy: string;
  action: Action;
  scope: 'Network' | 'Cluster';
  /** Field path of the address in the object. */
  path: string;
  /** `MAC 02:...`, `GUID ...`. */
  label: string;
}

/** Everything policy needs to judge one pod (or pod template). */
export interface PolicyInput {
  operation: Operation;
  namespace: string;
  namespaceLabels: Record<string, string>;
  userInfo: UserInfo;
  pod: { name?: string; generateName?: string; uid?: string; owner?: SharingOwner };
  /** True for pod templates of workloads: uniqueness is not checked, nothing is claimed. */
  template: boolean;
  dryRun: boolean;
  /** Field path of the networks annotation in the object. */
  annotationPath: string;
  networks: ParsedNetwork[];
  nads: (namespace: string, name: string) => NadLookup;
  /** Findings of the built-in rules, action Enforce, for the policy to re-grade. */
  builtin: Finding[];
  /**
   * Field paths of requested addresses the NAD's chain drops for another value of the same
   * selection (a top-level `mac` beside a `cni-args.mac` that wins): policy and the uniqueness
   * index judge the value that takes effect. Absent: every requested address is judged.
   */
  droppedAddresses?: ReadonlySet<string>;
  /**
   * UPDATE of a running pod whose network annotations change (hotplug): the addresses
   * (`kind value network`) it held before, which uniqueness does not judge again.
   */
  change?: { heldBefore: ReadonlySet<string> };
}

export interface PolicyResult {
  /** All findings, built-in ones included with their final action. */
  findings: Finding[];
  /** Addresses to reserve if the pod is admitted (empty for templates). */
  addresses: HeldAddress[];
}

export interface PolicyEvaluator {
  evaluate(input: PolicyInput, options?: EvaluateOptions): PolicyResult;
}

export interface EvaluateOptions {
  /**
   * Whether pods being admitted (reservations, not yet seen by the pod watch) count as holders
   * (default true). False where the address Lease decides between them: a reservation made by
   * another pod's mutating call, through this replica, may be of a pod that loses its Lease.
   */
  pendingHolders?: boolean;
}

/** The evaluator in force when no policy is configured: built-in rules enforced, nothing else. */
export const NO_POLICY: PolicyEvaluator = {
  evaluate: (input) => ({ findings: input.builtin, addresses: [] }),
};

/**
 * The uniqueness index as the server sees it: after an allowed, non-dry-run Pod CREATE the
 * server reserves the decision's addresses synchronously, right after the evaluation, so two
 * requests racing through one replica cannot both win the same address.
 */
export interface AddressReservations {
  reserve(addresses: readonly HeldAddress[]): void;
  /** Drops this pod's reservations of these addresses again (a create that lost the Lease in the API server). */
  release?(addresses: readonly HeldAddress[]): void;
}
