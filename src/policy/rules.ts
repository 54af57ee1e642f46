// One function per rule: (rule settings, input) -> findings. Pure, except that uniqueness reads
// the address index. Every message names the policy and the rule.
import type { FieldError } from '../field/index.js';
import { child } from '../field/index.js';
import { ARGS_KEY_FIELD, argsAddresses } from '../annotation/index.js';
import type { Action, Finding, PolicyInput } from './types.js';
import type { CompiledRules } from './compile.js';
import type { RuleName, UniquenessScope } from './document.js';
import type { Holder } from './address-index.js';
import type { AddressFact } from './addresses.js';

export interface RuleContext {
  policy: string;
  input: PolicyInput;
  /** The request's addresses, analysed once for all policies. */
  addresses: () => readonly AddressFact[];
  /** Index lookups, memoized per request (many policies ask the same question). */
  holders: (a: AddressFact, scope: UniquenessScope) => readonly Holder[];
}

const SERVICE_ACCOUNT_PREFIX = 'system:serviceaccount:';

function finding(ctx: RuleContext, rule: RuleName, action: Action, path: string, text: string): Finding {
  const error: FieldError = { path, type: 'Forbidden', reason: `policy "${ctx.policy}" (${rule}): ${text}` };
  return { policy: ctx.policy, rule, action, error };
}

export function allowedNetworks(r: NonNullable<CompiledRules['allowedNetworks']>, ctx: RuleContext): Finding[] {
  const ns = ctx.input.namespace;
  const out: Finding[] = [];
  for (const n of ctx.input.networks) {
    const { namespace, name } = n.selection;
    if (r.ownNamespace && namespace === ns) continue;
    if (r.globalNamespaces.has(namespace)) continue;
    if (r.networks.some((p) => p.matches(namespace, name))) continue;
    out.push(
      finding(
        ctx,
        'allowedNetworks',
        r.action,
        n.path,
        `network "${namespace}/${name}" is not allowed for pods in namespace "${ns}" (allowed: ${r.summary})`,
      ),
    );
  }
  return out;
}

export function maxAttachments(r: NonNullable<CompiledRules['maxAttachments']>, ctx: RuleContext): Finding[] {
  const n = ctx.input.networks.length;
  if (n <= r.max) return [];
  return [finding(ctx, 'maxAttachments', r.action, ctx.input.annotationPath, `${n} attachments requested, at most ${r.max} allowed`)];
}

function subjectAllowed(r: NonNullable<CompiledRules['requestedFields']>, input: PolicyInput): boolean {
  const user = input.userInfo.username ?? '';
  if (r.users.has(user)) return true;
  if ((input.userInfo.groups ?? []).some((g) => r.groups.has(g))) return true;
  if (r.serviceAccounts.length && user.startsWith(SERVICE_ACCOUNT_PREFIX)) {
    const [ns, sa] = user.slice(SERVICE_ACCOUNT_PREFIX.length).split(':');
    if (ns && sa && r.serviceAccounts.some((p) => p.matches(ns, sa))) return true;
  }
  return false;
}

export function requestedFields(r: NonNullable<CompiledRules['requestedFields']>, ctx: RuleContext): Finding[] {
  if (subjectAllowed(r, ctx.input)) return [];
  const who = ctx.input.userInfo.username ? `user "${ctx.input.userInfo.username}"` : 'this user';
  const out: Finding[] = [];
  for (const n of ctx.input.networks) {
    for (const field of r.forbidden) {
      if (n.selection[field] === undefined) continue;
      out.push(finding(ctx, 'requestedFields', r.action, child(n.path, field), `${who} may not set ${field}`));
    }
    // cni-args is a second door to the same plugins: the rule covers it too, valid value or not.
    const doors = new Set<string>();
    for (const a of argsAddresses(n)) {
      const field = ARGS_KEY_FIELD[a.key];
      const at = a.key === 'ips' ? child(child(n.path, 'cni-args'), a.written) : a.path;
      if (!r.forbidden.includes(field) || doors.has(at)) continue;
      doors.add(at);
      out.push(finding(ctx, 'requestedFields', r.action, at, `${who} may not set ${field} (here through cni-args "${a.written}")`));
    }
  }
  return out;
}

export function hardwareAddresses(r: NonNullable<CompiledRules['hardwareAddresses']>, ctx: RuleContext): Finding[] {
  const out: Finding[] = [];
  for (const a of ctx.addresses()) {
    let text: string | undefined;
    if (r.forbidSpecialValues && a.special) text = `${a.label} is ${a.special}`;
    else if (a.ethernet && r.macPrefixes.length && !r.macPrefixes.some((p) => a.value.startsWith(p))) {
      text = `${a.label} does not start with an allowed prefix (${r.macPrefixes.join(', ')})`;
    } else if (
      a.guidValue !== undefined &&
      r.guidRanges.length &&
      !r.guidRanges.some((g) => a.guidValue! >= g.from && a.guidValue! <= g.to)
    ) {
      text = `${a.label} is outside the allowed ranges ${r.guidRanges.map((g) => g.text).join(', ')}`;
    }
    if (text) out.push(finding(ctx, 'hardwareAddresses', r.action, a.path, text));
  }
  return out;
}

/**
 * Uniqueness is judged on Pod CREATE once the pod has an identity: a pod created with
 * generateName has no name (nor uid) when the mutating webhook sees it, and could not be told
 * apart from its own reservation on a reinvocation or at the validating webhook, which sees the
 * name and judges it.
 */
export const judgesUniqueness = (input: PolicyInput): boolean =>
  !input.template && (input.operation === 'CREATE' || input.change !== undefined) && !!(input.pod.name || input.pod.uid);

/** How an address is named in `PolicyInput.change.heldBefore`. */
export const addressKey = (a: { kind: string; value: string; network: string }): string => `${a.kind} ${a.value} ${a.network}`;

export function describeHolder(h: Holder, namespace: string): string {
  const pending = h.expires !== undefined ? 'being created' : 'running';
  const ns = h.pod.slice(0, h.pod.indexOf('/'));
  if (h.owner) {
    const who = h.owner.namespace === namespace ? h.owner.label : 'a pod in another namespace';
    return `${who} (a pod ${pending})${h.network !== '*' ? ` on network ${h.network}` : ''}`;
  }
  // Pods of other namespaces are not named: their names are not the requester's business.
  const who = ns === namespace ? `pod ${h.pod.endsWith('*') ? `${h.pod.slice(0, -1)}<generated>` : h.pod}` : 'a pod in another namespace';
  return `${who} (${pending})${h.network !== '*' ? ` on network ${h.network}` : ''}`;
}

export function uniqueAddresses(r: NonNullable<CompiledRules['uniqueAddresses']>, ctx: RuleContext): Finding[] {
  const { input } = ctx;
  if (!judgesUniqueness(input)) return [];
  const out: Finding[] = [];
  // The first address of each value, and of each value on each network: a twin is found in O(1),
  // so a review costs what its addresses cost (1,000 of them compared pairwise took ~8 ms).
  const firstOfValue = new Map<string, AddressFact>();
  const firstOnNetwork = new Map<string, AddressFact>();
  for (const a of ctx.addresses()) {
    const scope = r[a.kind];
    if (!scope) continue;
    const value = `${a.kind} ${a.value}`;
    const onNetwork = `${value} ${a.network}`;
    const twin = scope === 'Cluster' ? firstOfValue.get(value) : firstOnNetwork.get(onNetwork);
    if (!firstOfValue.has(value)) firstOfValue.set(value, a);
    if (!firstOnNetwork.has(onNetwork)) firstOnNetwork.set(onNetwork, a);
    // A running pod's change is judged for what it adds: what it held is its own already.
    if (input.change?.heldBefore.has(addressKey(a))) continue;
    if (twin) {
      out.push(finding(ctx, 'uniqueAddresses', r.action, a.path, `${a.label} is also requested at ${twin.path} (scope ${scope})`));
      continue;
    }
    const holders = ctx.holders(a, scope);
    if (holders.length) {
      out.push(
        finding(
          ctx,
          'uniqueAddresses',
          r.action,
          a.path,
          `${a.label} is already used by ${describeHolder(holders[0]!, input.namespace)} (scope ${scope})`,
        ),
      );
    }
  }
  return out;
}

export function interfaceNames(r: NonNullable<CompiledRules['interfaceNames']>, ctx: RuleContext): Finding[] {
  const out: Finding[] = [];
  for (const n of ctx.input.networks) {
    const name = n.selection.interface;
    if (typeof name !== 'string' || r.allowed.some((g) => g.matches(name))) continue;
    out.push(
      finding(
        ctx,
        'interfaceNames',
        r.action,
        child(n.path, 'interface'),
        `interface name "${name}" does not match ${r.allowed.map((g) => JSON.stringify(g.source)).join(', ')}`,
      ),
    );
  }
  return out;
}

export function immutableNetworks(r: NonNullable<CompiledRules['immutableNetworks']>, ctx: RuleContext): Finding[] {
  if (!ctx.input.change) return [];
  return [
    finding(
      ctx,
      'immutableNetworks',
      r.action,
      ctx.input.annotationPath,
      'the networks of a running pod may not be changed (no NIC hotplug)',
    ),
  ];
}
