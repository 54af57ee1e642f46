// The explanation of one pod, built from the same parts the webhook decides with: the verdict and
// the mutation from `checkManifests` (a dry-run CREATE through `review()`, as `netattach check`),
// which plugin reads each requested value from the reach table the capability check reads
// (src/nads/reach.ts over plugins.ts, keys from admission/builtin.ts), the device path from
// src/dra, the audit's findings from `auditSnapshot`. Nothing here judges on its own: it only
// arranges what those answered. Pure: the cluster is read by the shell (src/cli/kubectl.ts).
import fastJsonPatch from 'fast-json-patch';
import { DEFAULT_ADMISSION_CONFIG, type AdmissionConfig, type UserInfo, REQUEST_KEYS } from '../admission/index.js';
import {
  argsAddresses,
  DEFAULT_NETWORK_ANNOTATION,
  NETWORKS_ANNOTATION,
  parseDefaultNetwork,
  parseNetworks,
  type ParsedNetwork,
} from '../annotation/index.js';
import { auditSnapshot, finished, hasNetworks, livePodOf, type LivePod, ownerReferencesOf } from '../audit/index.js';
import { checkManifests, type CheckOptions } from '../check/index.js';
import type { ObjectResult } from '../check/index.js';
import { devicePathOf, StaticDraView } from '../dra/index.js';
import { child, renderError } from '../field/index.js';
import { argsReachOf, nadKey, reachOf, type CniSummary, type Nad, type Reach } from '../nads/index.js';
import { EMPTY_POLICY_SET, EXEMPT_LABEL, NAME_LABEL, sharingOwnerOf, type Action, type Finding, type PolicySet } from '../policy/index.js';
import {
  EXPLAIN_FORMAT_VERSION,
  type Admission,
  type Answer,
  type AuditExplanation,
  type Explanation,
  type PolicyExplanation,
  type RequestedValue,
  type RuleExplanation,
  type RuleVerdict,
  type SelectionExplanation,
  type VmAdmission,
} from './types.js';

export interface ExplainInput {
  /** The Pod object: as read from the cluster, or from a file. */
  pod: unknown;
  source: 'cluster' | 'file';
  /** Namespace of a pod that names none (kubectl's `-n` or the context's namespace). */
  defaultNamespace: string;
  nads: readonly Nad[];
  namespaceLabels?: (namespace: string) => Record<string, string> | undefined;
  policies?: PolicySet;
  config?: AdmissionConfig;
  dra?: CheckOptions['dra'];
  /** Who would create the pod, as policies see it (requestedFields.allowedSubjects). */
  userInfo?: UserInfo;
  /** The cluster's running pods (metadata), for the audit and the uniqueness index; undefined when not read. */
  livePods?: readonly LivePod[];
  /** The KubeVirt object whose launcher pod `pod` is (explain vm|vmi): judged too, at its own paths. */
  vm?: unknown;
  /** KubeVirt's binding plugin registry as read from the cluster (the VM's binding interfaces). */
  kubevirtBindings?: CheckOptions['kubevirtBindings'];
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

const VERDICT: Record<Action, RuleVerdict> = { Enforce: 'deny', Warn: 'warn', Audit: 'audit' };
const STRENGTH: Record<RuleVerdict, number> = { pass: 0, audit: 1, warn: 2, deny: 3 };
/** Rules the core checks without any policy (policy `builtin`). */
const BUILTIN_RULES = ['networkExists', 'capabilities'] as const;

/** Running pods as serve's pod watch holds their addresses: with the owner they share them with (a VMI's pods). */
export function heldAsServeHolds(pods: readonly LivePod[], config: AdmissionConfig): NonNullable<CheckOptions['livePods']> {
  return pods.map((p) => {
    const owner = sharingOwnerOf({ ownerReferences: ownerReferencesOf(p) }, config.addressSharingOwners, p.namespace);
    return owner ? { ...p, owner } : p;
  });
}

export function explainPod(input: ExplainInput): Explanation {
  const config = input.config ?? DEFAULT_ADMISSION_CONFIG;
  const policies = input.policies ?? EMPTY_POLICY_SET;
  const meta = isObject(input.pod) && isObject(input.pod['metadata']) ? input.pod['metadata'] : {};
  const namespace = str(meta['namespace']) ?? input.defaultNamespace;
  const name = str(meta['name']) ?? (str(meta['generateName']) ? `${str(meta['generateName'])}*` : '<no name>');
  const labels = (ns: string): Record<string, string> => ({ ...input.namespaceLabels?.(ns), [NAME_LABEL]: ns });

  const options: CheckOptions = {
    defaultNamespace: input.defaultNamespace,
    nads: input.nads,
    ...(input.namespaceLabels ? { namespaceLabels: input.namespaceLabels } : {}),
    policies,
    config,
    mutate: true,
    ...(input.dra ? { dra: input.dra } : {}),
    ...(input.userInfo ? { userInfo: input.userInfo } : {}),
    ...(input.livePods ? { livePods: heldAsServeHolds(input.livePods, config) } : {}),
    ...(input.kubevirtBindings ? { kubevirtBindings: input.kubevirtBindings } : {}),
  };
  const [checked] = checkManifests([{ file: input.source, index: 0, object: input.pod }], options);
  const result = checked!;
  // The VM as `kubectl apply` sends it: the same engine, the VM webhook's paths and softenings.
  const vm = input.vm === undefined ? undefined : checkManifests([{ file: input.source, index: 0, object: input.vm }], options)[0];
  return {
    formatVersion: EXPLAIN_FORMAT_VERSION,
    kind: 'PodExplanation',
    pod: { namespace, name, source: input.source },
    ...(vm && isObject(input.vm) ? { vm: vmAdmissionOf(vm, input.vm) } : {}),
    networks: selectionsOf(meta, namespace, input, config),
    policies: policiesOf(policies, namespace, labels(namespace), result.findings ?? []),
    audit: auditOf(input, namespace, str(meta['name']), policies, config),
    admission: admissionOf(result, input.pod),
  };
}

function selectionsOf(meta: Json, namespace: string, input: ExplainInput, config: AdmissionConfig): SelectionExplanation[] {
  const annotations = isObject(meta['annotations']) ? meta['annotations'] : {};
  const byKey = new Map(input.nads.map((n) => [nadKey(n.namespace, n.name), n]));
  const view = new StaticDraView(input.dra?.classes ?? [], input.dra?.templates ?? []);
  const out: SelectionExplanation[] = [];
  const add = (nets: readonly ParsedNetwork[], annotation: SelectionExplanation['annotation']): void => {
    for (const net of nets)
      out.push(
        selectionOf(net, annotation, byKey.get(nadKey(net.selection.namespace, net.selection.name)), view, input.dra !== undefined, config),
      );
  };
  const networks = annotations[NETWORKS_ANNOTATION];
  if (typeof networks === 'string') add(parseNetworks(networks, { namespace }).networks, 'networks');
  const defaultNetwork = annotations[DEFAULT_NETWORK_ANNOTATION];
  if (typeof defaultNetwork === 'string')
    add(parseDefaultNetwork(defaultNetwork, { defaultNamespace: config.defaultNetworkNamespace }).networks, 'default-network');
  return out;
}

function selectionOf(
  net: ParsedNetwork,
  annotation: SelectionExplanation['annotation'],
  nad: Nad | undefined,
  view: StaticDraView,
  draKnown: boolean,
  config: AdmissionConfig,
): SelectionExplanation {
  const s = net.selection;
  const base = { selection: `${s.namespace}/${s.name}${s.interface ? `@${s.interface}` : ''}`, path: net.path, annotation };
  if (!nad) return { ...base, nad: { status: 'not-found' }, requested: requestedOf(net, undefined, config) };
  const cni = nad.cni;
  const device = devicePathOf(nad, {
    classesFor: (r) => view.classesFor(r),
    templateNamespaces: (t) => (draKnown ? view.templateNamespaces(t) : undefined),
  });
  return {
    ...base,
    nad: {
      status: 'found',
      ...(cni
        ? {
            chain: cni.plugins.map((p) => ({
              type: p.type,
              path: p.path,
              capabilities: [...p.capabilities],
              ...(p.ipam ? { ipam: p.ipam.type } : {}),
            })),
            ...(cni.cniVersion !== undefined ? { cniVersion: cni.cniVersion } : {}),
          }
        : {}),
      ...(nad.problems.length > 0 ? { problems: nad.problems } : {}),
    },
    device: {
      path: device.path,
      summary: device.summary,
      resourceNames: [...nad.resourceNames],
      ...(nad.claimTemplate ? { claimTemplate: nad.claimTemplate } : {}),
      problems: device.problems,
    },
    requested: requestedOf(net, cni, config),
  };
}

const fromReach = (r: Reach): Pick<RequestedValue, 'status' | 'by' | 'types'> =>
  r.status === 'read'
    ? { status: 'read', by: r.by }
    : r.status === 'unknown'
      ? { status: 'unknown', types: r.types }
      : { status: 'ignored' };

/** Each requested value and who reads it: the table and keys the capability check uses. */
function requestedOf(net: ParsedNetwork, cni: CniSummary | undefined, config: AdmissionConfig): RequestedValue[] {
  const out: RequestedValue[] = [];
  const sel = net.selection as unknown as Json;
  for (const [key, requested] of REQUEST_KEYS) {
    if (sel[key] === undefined) continue;
    const path = child(net.path, key);
    out.push({ field: key, path, ...(cni ? fromReach(reachOf(cni, requested, config.pluginReads)) : { status: 'unchecked' }) });
  }
  for (const a of argsAddresses(net)) {
    out.push({
      field: `cni-args.${a.written}`,
      path: a.path,
      ...(cni ? fromReach(argsReachOf(cni, a.key, config.pluginReads)) : { status: 'unchecked' }),
    });
  }
  return out;
}

function policiesOf(
  policies: PolicySet,
  namespace: string,
  labels: Record<string, string>,
  findings: readonly Finding[],
): PolicyExplanation[] {
  const rulesOf = (policy: string, rules: ReadonlyArray<readonly [string, string]>): RuleExplanation[] =>
    rules.map(([rule, action]) => {
      const own = findings.filter((f) => f.policy === policy && (f.rule === rule || f.rule.startsWith(`${rule}.`)));
      const verdict = own.reduce<RuleVerdict>((v, f) => (STRENGTH[VERDICT[f.action]] > STRENGTH[v] ? VERDICT[f.action] : v), 'pass');
      return { rule, action, verdict, messages: own.map((f) => renderError(f.error)) };
    });
  const builtinRules = new Set<string>(BUILTIN_RULES);
  for (const f of findings) if (f.policy === 'builtin' && f.rule !== 'exemption') builtinRules.add(f.rule);
  const out: PolicyExplanation[] = [
    {
      name: 'builtin',
      status: 'applies',
      rules: rulesOf(
        'builtin',
        [...builtinRules].map((r) => [r, findings.find((f) => f.policy === 'builtin' && f.rule === r)?.action ?? 'Enforce'] as const),
      ),
    },
  ];
  for (const p of policies.policies) {
    const status = !p.selects(labels) ? 'not-selected' : labels[EXEMPT_LABEL] === 'true' || p.exempts(namespace) ? 'exempt' : 'applies';
    const rules = Object.entries(p.rules)
      .filter((e): e is [string, { action: Action }] => isObject(e[1]) && typeof e[1]['action'] === 'string')
      .map(([rule, setting]) => [rule, setting.action] as const);
    out.push({
      name: p.name,
      status,
      rules:
        status === 'applies' ? rulesOf(p.name, rules) : rules.map(([rule, action]) => ({ rule, action, verdict: 'pass', messages: [] })),
    });
  }
  return out;
}

function auditOf(
  input: ExplainInput,
  namespace: string,
  name: string | undefined,
  policies: PolicySet,
  config: AdmissionConfig,
): AuditExplanation {
  if (!input.livePods) return { status: 'unavailable', reason: 'the running pods were not read', findings: [] };
  const self = livePodOf(input.pod, input.defaultNamespace);
  if (!self || !name) return { status: 'not-audited', reason: 'the pod has no name yet (the audit judges running pods)', findings: [] };
  if (finished(input.pod)) return { status: 'not-audited', reason: 'the pod has finished and holds no network', findings: [] };
  if (!hasNetworks(self)) return { status: 'not-audited', reason: 'the pod has no network annotation', findings: [] };
  // A pod from a file is judged as if it ran beside the running ones; a running pod as itself.
  const pods = [...input.livePods.filter((p) => p.namespace !== namespace || p.name !== name), self];
  const audits = auditSnapshot({
    pods,
    nads: input.nads,
    ...(input.namespaceLabels ? { namespaceLabels: input.namespaceLabels } : {}),
    policies,
    config,
  });
  const mine = audits.find((a) => a.pod.namespace === namespace && a.pod.name === name);
  if (!mine) return { status: 'not-audited', reason: `namespace ${namespace} is not seen by the netattach webhooks`, findings: [] };
  return { status: 'judged', findings: mine.findings };
}

const answerOf = (r: ObjectResult): Answer => ({
  verdict: r.skipped !== undefined ? 'skipped' : r.allowed ? 'allowed' : 'denied',
  ...(r.skipped !== undefined ? { skipped: r.skipped } : {}),
  errors: r.errors,
  warnings: r.warnings,
});

function vmAdmissionOf(r: ObjectResult, vm: Json): VmAdmission {
  const meta = isObject(vm['metadata']) ? vm['metadata'] : {};
  return { kind: str(vm['kind']) ?? 'VirtualMachine', name: str(meta['name']) ?? '<no name>', ...answerOf(r) };
}

function admissionOf(r: ObjectResult, pod: unknown): Admission {
  const patch = r.mutation?.patch ?? [];
  return {
    ...answerOf(r),
    audits: r.audits,
    mutation: {
      resources: r.mutation?.resources ?? {},
      resourceClaims: patch.length > 0 && isObject(pod) ? addedClaims(pod, patch) : [],
      ...(r.mutation?.nodeSelector ? { nodeSelector: r.mutation.nodeSelector } : {}),
      operations: patch.length,
    },
  };
}

/** Names of the pod-level resourceClaims the patch adds (the explicit-claim DRA path). */
function addedClaims(pod: Json, patch: NonNullable<ObjectResult['mutation']>['patch']): string[] {
  const after = fastJsonPatch.applyPatch(structuredClone(pod), structuredClone(patch) as fastJsonPatch.Operation[], false, false)
    .newDocument as Json;
  const names = (o: Json): string[] => {
    const spec = isObject(o['spec']) ? o['spec'] : {};
    return Array.isArray(spec['resourceClaims'])
      ? spec['resourceClaims'].map((c: unknown) => (isObject(c) ? String(c['name']) : '')).filter(Boolean)
      : [];
  };
  const before = new Set(names(pod));
  return names(after).filter((n) => !before.has(n));
}
