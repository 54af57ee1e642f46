// Turns a schema-valid PolicyDocument into a CompiledPolicy: selectors, wildcard patterns,
// prefixes and ranges prepared once at load, so that evaluation does no parsing. Checks what
// the schema cannot (selector operators, range order) and returns field errors for those.
import type { FieldError } from '../field/index.js';
import { child, index, invalid } from '../field/index.js';
import type { Action } from './types.js';
import type { PolicyDocument, RequestableField, UniquenessScope } from './document.js';
import { compileGlob, compileNetworkPattern, type Glob, type NetworkPattern } from './glob.js';
import { compileSelector, selectorErrors, type LabelPredicate } from './selector.js';
import { guidNumber, type GuidRange } from './addresses.js';

export interface CompiledRules {
  allowedNetworks?: {
    action: Action;
    ownNamespace: boolean;
    globalNamespaces: ReadonlySet<string>;
    networks: NetworkPattern[];
    summary: string;
  };
  maxAttachments?: { action: Action; max: number };
  requestedFields?: {
    action: Action;
    forbidden: readonly RequestableField[];
    users: ReadonlySet<string>;
    groups: ReadonlySet<string>;
    serviceAccounts: NetworkPattern[];
  };
  hardwareAddresses?: { action: Action; macPrefixes: string[]; guidRanges: GuidRange[]; forbidSpecialValues: boolean };
  uniqueAddresses?: { action: Action; mac?: UniquenessScope; 'infiniband-guid'?: UniquenessScope };
  networkExists?: { action: Action };
  capabilities?: { action: Action };
  immutableNetworks?: { action: Action };
  interfaceNames?: { action: Action; allowed: Glob[] };
}

export interface CompiledPolicy {
  readonly name: string;
  readonly document: PolicyDocument;
  selects: LabelPredicate;
  exempts(namespace: string): boolean;
  readonly rules: CompiledRules;
}

const describeNetworks = (own: boolean, global: readonly string[], patterns: readonly string[]): string => {
  const parts: string[] = [];
  if (own) parts.push('own namespace');
  if (global.length) parts.push(`namespaces ${global.map((g) => JSON.stringify(g)).join(', ')}`);
  if (patterns.length) parts.push(`networks ${patterns.map((g) => JSON.stringify(g)).join(', ')}`);
  return parts.length ? parts.join('; ') : 'none';
};

export function compilePolicy(doc: PolicyDocument): { policy?: CompiledPolicy; errors: FieldError[] } {
  const spec = doc.spec;
  const r = spec.rules ?? {};
  const base: Action = spec.action ?? 'Enforce';
  const errors: FieldError[] = selectorErrors(spec.namespaceSelector, 'spec.namespaceSelector');
  const rules: CompiledRules = {};

  if (r.allowedNetworks) {
    const a = r.allowedNetworks;
    rules.allowedNetworks = {
      action: a.action ?? base,
      ownNamespace: a.ownNamespace ?? false,
      globalNamespaces: new Set(a.globalNamespaces ?? []),
      networks: (a.networks ?? []).map(compileNetworkPattern),
      summary: describeNetworks(a.ownNamespace ?? false, a.globalNamespaces ?? [], a.networks ?? []),
    };
  }
  if (r.maxAttachments) rules.maxAttachments = { action: r.maxAttachments.action ?? base, max: r.maxAttachments.max };
  if (r.requestedFields) {
    const f = r.requestedFields;
    rules.requestedFields = {
      action: f.action ?? base,
      forbidden: f.forbidden,
      users: new Set(f.allowedSubjects?.users ?? []),
      groups: new Set(f.allowedSubjects?.groups ?? []),
      serviceAccounts: (f.allowedSubjects?.serviceAccounts ?? []).map(compileNetworkPattern),
    };
  }
  if (r.hardwareAddresses) {
    const h = r.hardwareAddresses;
    const path = 'spec.rules.hardwareAddresses.guidRanges';
    const guidRanges: GuidRange[] = [];
    (h.guidRanges ?? []).forEach((g, i) => {
      const from = guidNumber(g.from);
      const to = guidNumber(g.to);
      if (from > to) errors.push(invalid(child(index(path, i), 'to'), g.to, `must not be below from (${g.from})`));
      guidRanges.push({ from, to, text: `${g.from.toLowerCase()}-${g.to.toLowerCase()}` });
    });
    rules.hardwareAddresses = {
      action: h.action ?? base,
      macPrefixes: (h.macPrefixes ?? []).map((p) => p.toLowerCase()),
      guidRanges,
      forbidSpecialValues: h.forbidSpecialValues ?? true,
    };
  }
  if (r.uniqueAddresses) {
    const u = r.uniqueAddresses;
    rules.uniqueAddresses = { action: u.action ?? base, mac: u.mac, 'infiniband-guid': u['infiniband-guid'] };
  }
  if (r.networkExists) rules.networkExists = { action: r.networkExists.action };
  if (r.capabilities) rules.capabilities = { action: r.capabilities.action };
  if (r.immutableNetworks) rules.immutableNetworks = { action: r.immutableNetworks.action };
  if (r.interfaceNames)
    rules.interfaceNames = { action: r.interfaceNames.action ?? base, allowed: r.interfaceNames.allowed.map(compileGlob) };

  if (errors.length) return { errors };
  const exempt = (spec.exemptNamespaces ?? []).map(compileGlob);
  return {
    errors,
    policy: {
      name: doc.metadata.name,
      document: doc,
      selects: compileSelector(spec.namespaceSelector),
      exempts: (ns) => exempt.some((g) => g.matches(ns)),
      rules,
    },
  };
}
