// One function per rule: (rule settings, input) -> findings. Pure, except that uniqueness reads
// the address index. Every message names the policy and the rule.
import type { FieldError } from '../field/index.js';
import { child } from '../field/index.js';
import { canonicalGuid, canonicalMac } from '../annotation/index.js';
import type { Action, AddressKind, Finding, PolicyInput } from './types.js';
import type { CompiledRules } from './compile.js';
import type { RuleName } from './document.js';
import type { AddressIndex, Holder } from './address-index.js';
import { bytesOf, guidNumber, ipoibPortGuid, specialGuid, specialMac } from './addresses.js';

export interface RuleContext {
  policy: string;
  input: PolicyInput;
  index?: AddressIndex;
}

const SERVICE_ACCOUNT_PREFIX = 'system:serviceaccount:';

function finding(ctx: RuleContext, rule: RuleName, action: Action, path: string, text: string, value?: unknown): Finding {
  const error: FieldError = { path, type: 'Forbidden', reason: `policy "${ctx.policy}" (${rule}): ${text}` };
  if (value !== undefined) error.value = value;
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
    out.push(finding(ctx, 'allowedNetworks', r.action, n.path, `network "${namespace}/${name}" is not allowed for pods in namespace "${ns}" (allowed: ${r.summary})`));
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
  }
  return out;
}

export function hardwareAddresses(r: NonNullable<CompiledRules['hardwareAddresses']>, ctx: RuleContext): Finding[] {
  const out: Finding[] = [];
  const inRanges = (guid: string): boolean => {
    const v = guidNumber(guid);
    return r.guidRanges.some((g) => v >= g.from && v <= g.to);
  };
  const ranges = (): string => r.guidRanges.map((g) => g.text).join(', ');
  const push = (path: string, text: string): void => void out.push(finding(ctx, 'hardwareAddresses', r.action, path, text));
  for (const n of ctx.input.networks) {
    const sel = n.selection;
    const mac = typeof sel.mac === 'string' ? canonicalMac(sel.mac) : undefined;
    if (mac !== undefined) {
      const path = child(n.path, 'mac');
      if (bytesOf(mac).length === 6) {
        const special = r.forbidSpecialValues ? specialMac(mac) : undefined;
        if (special) push(path, `MAC ${mac} is ${special}`);
        else if (r.macPrefixes.length && !r.macPrefixes.some((p) => mac.startsWith(p))) {
          push(path, `MAC ${mac} does not start with an allowed prefix (${r.macPrefixes.join(', ')})`);
        }
      } else {
        const guid = ipoibPortGuid(mac);
        const special = r.forbidSpecialValues ? specialGuid(guid) : undefined;
        if (special) push(path, `IPoIB port GUID ${guid} is ${special}`);
        else if (r.guidRanges.length && !inRanges(guid)) push(path, `IPoIB port GUID ${guid} is outside the allowed ranges ${ranges()}`);
      }
    }
    const guidText = sel['infiniband-guid'];
    const guid = typeof guidText === 'string' ? canonicalGuid(guidText) : undefined;
    if (guid !== undefined) {
      const path = child(n.path, 'infiniband-guid');
      const special = r.forbidSpecialValues ? specialGuid(guid) : undefined;
      if (special) push(path, `GUID ${guid} is ${special}`);
      else if (r.guidRanges.length && !inRanges(guid)) push(path, `GUID ${guid} is outside the allowed ranges ${ranges()}`);
    }
  }
  return out;
}

/** The addresses of a pod's selections in canonical form, with the network each is used on. */
export function requestedAddresses(input: PolicyInput): Array<{ kind: AddressKind; value: string; network: string; path: string }> {
  const out: Array<{ kind: AddressKind; value: string; network: string; path: string }> = [];
  for (const n of input.networks) {
    const network = `${n.selection.namespace}/${n.selection.name}`;
    const mac = typeof n.selection.mac === 'string' ? canonicalMac(n.selection.mac) : undefined;
    if (mac) out.push({ kind: 'mac', value: mac, network, path: child(n.path, 'mac') });
    const g = n.selection['infiniband-guid'];
    const guid = typeof g === 'string' ? canonicalGuid(g) : undefined;
    if (guid) out.push({ kind: 'infiniband-guid', value: guid, network, path: child(n.path, 'infiniband-guid') });
  }
  return out;
}

function describeHolder(h: Holder, namespace: string): string {
  const pending = h.expires !== undefined ? 'being created' : 'running';
  const ns = h.pod.slice(0, h.pod.indexOf('/'));
  // Pods of other namespaces are not named: their names are not the requester's business.
  const who = ns === namespace ? `pod ${h.pod.endsWith('*') ? `${h.pod.slice(0, -1)}<generated>` : h.pod}` : 'a pod in another namespace';
  return `${who} (${pending})${h.network !== '*' ? ` on network ${h.network}` : ''}`;
}

export function uniqueAddresses(r: NonNullable<CompiledRules['uniqueAddresses']>, ctx: RuleContext): Finding[] {
  const { input } = ctx;
  if (input.template || input.operation !== 'CREATE') return [];
  const out: Finding[] = [];
  const self = { namespace: input.namespace, ...input.pod };
  const seen: Array<{ kind: AddressKind; value: string; network: string; path: string }> = [];
  for (const a of requestedAddresses(input)) {
    const scope = r[a.kind];
    if (!scope) continue;
    const label = a.kind === 'mac' ? 'MAC' : 'GUID';
    const twin = seen.find((s) => s.kind === a.kind && s.value === a.value && (scope === 'Cluster' || s.network === a.network));
    seen.push(a);
    if (twin) {
      out.push(finding(ctx, 'uniqueAddresses', r.action, a.path, `${label} ${a.value} is also requested at ${twin.path} (scope ${scope})`));
      continue;
    }
    const holders = ctx.index?.conflicts(a.kind, a.value, a.network, scope, self) ?? [];
    if (holders.length) {
      out.push(finding(ctx, 'uniqueAddresses', r.action, a.path, `${label} ${a.value} is already used by ${describeHolder(holders[0]!, input.namespace)} (scope ${scope})`));
    }
  }
  return out;
}

export function interfaceNames(r: NonNullable<CompiledRules['interfaceNames']>, ctx: RuleContext): Finding[] {
  const out: Finding[] = [];
  for (const n of ctx.input.networks) {
    const name = n.selection.interface;
    if (typeof name !== 'string' || r.allowed.some((g) => g.matches(name))) continue;
    out.push(finding(ctx, 'interfaceNames', r.action, child(n.path, 'interface'), `interface name "${name}" does not match ${r.allowed.map((g) => JSON.stringify(g.source)).join(', ')}`));
  }
  return out;
}
