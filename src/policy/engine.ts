// The policy engine: an immutable PolicySet snapshot (swapped whole on reload, so a request
// always sees one consistent set) and evaluate(), pure except for reading the address index.
//
// Combination: every policy whose namespaceSelector matches applies, independently; each finding
// keeps its own action and the request takes the strictest (any Enforce denies; any Warn warns).
// A built-in finding is re-graded by the strictest action among the applying policies that set
// that rule; with none, it stays Enforce.
import type { Action, EvaluateOptions, Finding, PolicyEvaluator, PolicyInput, PolicyResult, HeldAddress, UniqueRule } from './types.js';
import type { CompiledPolicy } from './compile.js';
import { EXEMPT_LABEL, type UniquenessScope } from './document.js';
import type { AddressIndex, Holder } from './address-index.js';
import * as rules from './rules.js';
import { addressFacts, type AddressFact } from './addresses.js';
import { MAX_ARBITRATED_ADDRESSES_PER_POD } from './limits.js';

export interface PolicySet {
  /** Sorted by name: evaluation and findings are in a stable order. */
  readonly policies: readonly CompiledPolicy[];
}

export const EMPTY_POLICY_SET: PolicySet = Object.freeze({ policies: Object.freeze([]) });

export function policySet(policies: Iterable<CompiledPolicy>): PolicySet {
  const sorted = [...policies].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return Object.freeze({ policies: Object.freeze(sorted) });
}

const STRENGTH: Record<Action, number> = { Audit: 0, Warn: 1, Enforce: 2 };
export const strictest = (a: Action, b: Action): Action => (STRENGTH[a] >= STRENGTH[b] ? a : b);

export interface PolicyEngineOptions {
  index?: AddressIndex;
  policies?: PolicySet;
}

export class PolicyEngine implements PolicyEvaluator {
  private snapshot: PolicySet;
  private readonly index: AddressIndex | undefined;

  constructor(options: PolicyEngineOptions = {}) {
    this.snapshot = options.policies ?? EMPTY_POLICY_SET;
    this.index = options.index;
  }

  /** Atomically replaces the policies in force. */
  setPolicies(set: PolicySet): void {
    this.snapshot = set;
  }

  policies(): PolicySet {
    return this.snapshot;
  }

  /** Counts nothing: the engine runs on both endpoints, so the server counts the final findings once. */
  evaluate(input: PolicyInput, options?: EvaluateOptions): PolicyResult {
    return evaluatePolicies(this.snapshot, input, this.index, options);
  }
}

function exemption(policy: string, input: PolicyInput, why: string): Finding {
  return {
    policy,
    rule: 'exemption',
    action: 'Audit',
    error: {
      path: 'metadata.namespace',
      type: 'Forbidden',
      reason: `policy "${policy}" not applied: namespace "${input.namespace}" is exempt (${why})`,
    },
  };
}

export function evaluatePolicies(set: PolicySet, input: PolicyInput, index?: AddressIndex, options: EvaluateOptions = {}): PolicyResult {
  const exemptByLabel = input.namespaceLabels[EXEMPT_LABEL] === 'true';
  const findings: Finding[] = [];
  const applying: CompiledPolicy[] = [];
  for (const p of set.policies) {
    if (!p.selects(input.namespaceLabels)) continue;
    if (exemptByLabel) findings.push(exemption(p.name, input, `label ${EXEMPT_LABEL}=true`));
    else if (p.exempts(input.namespace)) findings.push(exemption(p.name, input, 'spec.exemptNamespaces'));
    else applying.push(p);
  }

  const builtin = input.builtin.map((f) => regrade(f, applying));
  let facts: AddressFact[] | undefined;
  const addresses = (): AddressFact[] => (facts ??= addressFacts(input.networks, input.droppedAddresses));
  const lookups = new Map<string, readonly Holder[]>();
  const self = { namespace: input.namespace, ...input.pod };
  // Addresses past the per-pod bound are not reserved or claimed, so they are not judged against
  // pods being admitted either: running pods only.
  let unarbitrated: ReadonlySet<AddressFact> | undefined;
  const arbitrated = (a: AddressFact): boolean => !(unarbitrated ??= new Set(addresses().slice(MAX_ARBITRATED_ADDRESSES_PER_POD))).has(a);
  const holders = (a: AddressFact, scope: UniquenessScope): readonly Holder[] => {
    const key = `${scope}${a.path}`;
    let found = lookups.get(key);
    if (!found)
      lookups.set(
        key,
        (found = index?.conflicts(a.kind, a.value, a.network, scope, self, (options.pendingHolders ?? true) && arbitrated(a)) ?? []),
      );
    return found;
  };
  for (const p of applying) {
    const r = p.rules;
    const ctx: rules.RuleContext = { policy: p.name, input, addresses, holders };
    if (r.allowedNetworks) findings.push(...rules.allowedNetworks(r.allowedNetworks, ctx));
    if (r.maxAttachments) findings.push(...rules.maxAttachments(r.maxAttachments, ctx));
    if (r.requestedFields) findings.push(...rules.requestedFields(r.requestedFields, ctx));
    if (r.hardwareAddresses) findings.push(...rules.hardwareAddresses(r.hardwareAddresses, ctx));
    if (r.uniqueAddresses) findings.push(...rules.uniqueAddresses(r.uniqueAddresses, ctx));
    if (r.interfaceNames) findings.push(...rules.interfaceNames(r.interfaceNames, ctx));
    if (r.immutableNetworks) findings.push(...rules.immutableNetworks(r.immutableNetworks, ctx));
  }
  const held = heldAddressesOf(input, addresses, applying, findings);
  const limit = unarbitratedFinding(input, addresses, applying);
  if (limit) findings.push(limit);
  return { findings: [...builtin, ...findings], addresses: held };
}

function regrade(f: Finding, applying: readonly CompiledPolicy[]): Finding {
  if (f.rule !== 'networkExists' && f.rule !== 'capabilities') return f;
  let chosen: { policy: string; action: Action } | undefined;
  for (const p of applying) {
    const setting = p.rules[f.rule];
    if (setting && (!chosen || STRENGTH[setting.action] > STRENGTH[chosen.action])) chosen = { policy: p.name, action: setting.action };
  }
  if (!chosen) return f;
  return {
    policy: chosen.policy,
    rule: f.rule,
    action: chosen.action,
    error: { ...f.error, reason: `${f.error.reason} (${chosen.action} by policy "${chosen.policy}" (${f.rule}))` },
  };
}

/** What a pod will hold once admitted: every requested address, on the network it uses it on (none before it has an identity). */
function heldAddressesOf(
  input: PolicyInput,
  addresses: () => AddressFact[],
  applying: readonly CompiledPolicy[],
  findings: readonly Finding[],
): HeldAddress[] {
  if (!rules.judgesUniqueness(input)) return [];
  const pod: HeldAddress['pod'] = { namespace: input.namespace };
  if (input.pod.name) pod.name = input.pod.name;
  if (input.pod.generateName) pod.generateName = input.pod.generateName;
  if (input.pod.uid) pod.uid = input.pod.uid;
  if (input.pod.owner) pod.owner = input.pod.owner;
  return addresses()
    .slice(0, MAX_ARBITRATED_ADDRESSES_PER_POD)
    .map((a) => {
      const held: HeldAddress = { kind: a.kind, value: a.value, scope: `network:${a.network}`, pod };
      const unique = uniqueRuleOf(a, applying, findings);
      if (unique) held.unique = unique;
      return held;
    });
}

/**
 * A pod with more addresses than are arbitrated (reserved here, claimed across replicas): a
 * warning, never a denial, from the first policy whose uniqueAddresses rule judges one of the
 * rest. Real pods have a handful; past the bound a review must not add state.
 */
function unarbitratedFinding(input: PolicyInput, addresses: () => AddressFact[], applying: readonly CompiledPolicy[]): Finding | undefined {
  if (!rules.judgesUniqueness(input) || addresses().length <= MAX_ARBITRATED_ADDRESSES_PER_POD) return undefined;
  const rest = addresses().slice(MAX_ARBITRATED_ADDRESSES_PER_POD);
  const policy = applying.find((p) => rest.some((a) => p.rules.uniqueAddresses?.[a.kind] !== undefined));
  if (!policy) return undefined;
  const rule = 'uniqueAddresses.limit';
  const reason = `policy "${policy.name}" (${rule}): ${addresses().length} addresses, only the first ${MAX_ARBITRATED_ADDRESSES_PER_POD} reserved against pods being created; the rest checked against running pods only`;
  return { policy: policy.name, rule, action: 'Warn', error: { path: input.annotationPath, type: 'Too many', reason } };
}

/**
 * The strictest uniqueAddresses rule that judged `a` without finding a holder (an address a rule
 * already reported needs no address Lease: its conflict is known); on a tie, scope Cluster.
 */
function uniqueRuleOf(a: AddressFact, applying: readonly CompiledPolicy[], findings: readonly Finding[]): UniqueRule | undefined {
  if (findings.some((f) => f.rule === 'uniqueAddresses' && f.error.path === a.path)) return undefined;
  let chosen: UniqueRule | undefined;
  for (const p of applying) {
    const r = p.rules.uniqueAddresses;
    const scope = r?.[a.kind];
    if (!r || !scope) continue;
    const stronger =
      !chosen ||
      STRENGTH[r.action] > STRENGTH[chosen.action] ||
      (STRENGTH[r.action] === STRENGTH[chosen.action] && scope === 'Cluster' && chosen.scope !== 'Cluster');
    if (stronger) chosen = { policy: p.name, action: r.action, scope, path: a.path, label: a.label };
  }
  return chosen;
}
