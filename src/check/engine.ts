// The check itself: each object becomes the AdmissionRequest the apiserver would send (CREATE,
// dry run) and goes through the webhook's own core, so verdicts and messages are the webhook's.
// The inputs are judged as if applied together to a cluster that holds the given NADs: NADs and
// Namespaces among them count as present whatever their order, and Pods are admitted in order
// (so two Pods in the inputs claiming one unique MAC conflict, as they would when applied).
import {
  DEFAULT_ADMISSION_CONFIG,
  review,
  warningText,
  type AdmissionConfig,
  type AdmissionRequest,
  type Decision,
  type UserInfo,
} from '../admission/index.js';
import type { FieldError } from '../field/index.js';
import { isNadObject, nadFromObject, nadKey, type Nad, type NadLookup } from '../nads/index.js';
import {
  AddressIndex,
  EMPTY_POLICY_SET,
  NAME_LABEL,
  PolicyEngine,
  podNetworkFacts,
  type Finding,
  type PolicySet,
  type SharingOwner,
} from '../policy/index.js';
import { StaticDraView, deviceClassInfo, type DeviceClassInfo, type DraView, type TemplateLookup } from '../dra/index.js';
import { registryFromManifests, type BindingRegistry } from '../kubevirt/index.js';
import { describeMutation } from './mutation.js';
import { resourceOf } from './resource.js';
import type { ManifestObject, ObjectResult, ReportedError } from './types.js';

/** Namespaces the shipped webhook configurations leave out (their namespaceSelector). */
export const EXCLUDED_NAMESPACES: readonly string[] = ['kube-system', 'netattach-system'];
/** A namespace labelled `netattach.io/admission: disabled` is left out too. */
export const ADMISSION_LABEL = 'netattach.io/admission';

export interface CheckOptions {
  /** Namespace of objects that name none (like `kubectl apply -n`); `default`. */
  defaultNamespace?: string;
  /** The user applying the manifests, as policies see them (requestedFields.allowedSubjects). */
  userInfo?: UserInfo;
  policies?: PolicySet;
  /** NADs known apart from the inputs (`--nads`, `--cluster`); the inputs' own NADs win. */
  nads?: readonly Nad[];
  /** Labels of namespaces known apart from the inputs (`--cluster`); Namespace objects in the inputs win. */
  namespaceLabels?: (namespace: string) => Record<string, string> | undefined;
  config?: AdmissionConfig;
  /** Describe the mutating webhook's patch for each Pod. */
  mutate?: boolean;
  /** DeviceClasses and ResourceClaimTemplates of the cluster (`--cluster`); without them a template not among the inputs is unchecked. */
  dra?: { classes: readonly DeviceClassInfo[]; templates: ReadonlyArray<{ namespace: string; name: string }> };
  /**
   * KubeVirt's binding plugin registry of the cluster (`--cluster`). A KubeVirt object among the
   * inputs wins (it is what will be applied); without either, a VM's binding interfaces are noted.
   */
  kubevirtBindings?: BindingRegistry;
  /** Running pods whose addresses the uniqueness index holds, as serve's pod watch does (`kubectl netattach explain`). */
  livePods?: ReadonlyArray<{
    namespace: string;
    name: string;
    uid?: string;
    owner?: SharingOwner;
    networks?: string;
    defaultNetwork?: string;
  }>;
}

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const metadataOf = (o: Json): Json => (isObject(o['metadata']) ? o['metadata'] : {});

export function checkManifests(objects: readonly ManifestObject[], options: CheckOptions = {}): ObjectResult[] {
  const defaultNamespace = options.defaultNamespace ?? 'default';
  const config = options.config ?? DEFAULT_ADMISSION_CONFIG;
  const nads = nadsOf(objects, options, defaultNamespace, config);
  const inputs = objects.map((m) => m.object);
  const labels = namespaceLabelsOf(inputs, options.namespaceLabels);
  const dra = draViewOf(inputs, options.dra, defaultNamespace);
  const registry = registryFromManifests(inputs, defaultNamespace) ?? options.kubevirtBindings;
  const kubevirtBindings = registry?.known ? registry.plugins : undefined;
  // Reservations never lapse here: the inputs are one apply, not a stream over time. Nor are they
  // evicted at the webhook's namespace and global caps: the files are the admin's, read once, and
  // an evicted reservation would hide a duplicate between two files.
  const unbounded = Number.MAX_SAFE_INTEGER;
  const index = new AddressIndex({ reservationTtlMs: unbounded, now: () => 0, limits: { perNamespace: unbounded, total: unbounded } });
  for (const p of options.livePods ?? []) {
    const ref = { namespace: p.namespace, name: p.name, ...optional('uid', p.uid), ...(p.owner ? { owner: p.owner } : {}) };
    index.setPod(ref, podNetworkFacts(p.namespace, p.networks, p.defaultNetwork, config.defaultNetworkNamespace).addresses);
  }
  const policy = new PolicyEngine({ policies: options.policies ?? EMPTY_POLICY_SET, index });
  const lookup = (namespace: string, name: string): NadLookup => {
    const nad = nads.get(nadKey(namespace, name));
    return nad ? { status: 'found', nad } : { status: 'not-found' };
  };

  return objects.map((m, position): ObjectResult => {
    const base: ObjectResult = {
      file: m.file,
      index: m.index,
      ...optional('item', m.item),
      ...optional('line', m.line),
      allowed: true,
      errors: [],
      warnings: [],
      audits: [],
    };
    const o = m.object;
    if (!isObject(o)) return { ...base, skipped: `not a Kubernetes object (a ${Array.isArray(o) ? 'list' : typeof o}, not a mapping)` };
    const meta = metadataOf(o);
    const apiVersion = str(o['apiVersion']);
    const kind = str(o['kind']);
    const name = str(meta['name']) ?? (str(meta['generateName']) ? `${meta['generateName']}*` : undefined);
    const described = { ...base, ...optional('apiVersion', apiVersion), ...optional('kind', kind), ...optional('name', name) };
    if (!apiVersion || !kind) {
      const missing = [!apiVersion && 'apiVersion', !kind && 'kind'].filter(Boolean).join(' and ');
      return { ...described, ...optional('namespace', str(meta['namespace'])), skipped: `not a Kubernetes object: ${missing} not set` };
    }
    const resource = resourceOf(apiVersion, kind);
    const namespace = resource.namespaced ? (str(meta['namespace']) ?? defaultNamespace) : undefined;
    const result: ObjectResult = { ...described, ...optional('namespace', namespace) };
    if (!resource.watched || namespace === undefined) return result;

    const nsLabels = labels(namespace);
    if (EXCLUDED_NAMESPACES.includes(namespace))
      return { ...result, skipped: `namespace ${namespace} is excluded from the netattach webhooks` };
    if (nsLabels[ADMISSION_LABEL] === 'disabled')
      return { ...result, skipped: `namespace ${namespace} is labelled ${ADMISSION_LABEL}=disabled` };

    const isPod = resource.gvr.group === '' && resource.gvr.resource === 'pods';
    const request: AdmissionRequest = {
      uid: `netattach-check-${position}`,
      kind: resource.gvk,
      resource: resource.gvr,
      requestKind: resource.gvk,
      requestResource: resource.gvr,
      ...optional('name', str(meta['name'])),
      namespace,
      operation: 'CREATE',
      userInfo: options.userInfo ?? {},
      object: o,
      dryRun: true,
    };
    // The mutating endpoint checks everything the validating one does and adds the patch.
    const decision = review(request, {
      endpoint: isPod ? 'mutate' : 'validate',
      nads: lookup,
      namespaceLabels: nsLabels,
      policy,
      config,
      dra,
      ...(kubevirtBindings ? { kubevirtBindings } : {}),
    });
    // What admission would hold after this Pod is created: later Pods in the inputs see it.
    if (isPod && decision.allowed) index.reserve(decision.addresses);
    return {
      ...result,
      ...verdictOf(decision),
      ...(options.mutate && isPod && decision.patch.length > 0 ? { mutation: describeMutation(o, decision.patch) } : {}),
    };
  });
}

function verdictOf(decision: Decision): Pick<ObjectResult, 'allowed' | 'errors' | 'warnings' | 'audits' | 'findings'> {
  // The core denies with the finding's own error object: identity maps it back to its rule.
  const byError = new Map<FieldError, Finding>(decision.findings.map((f) => [f.error, f]));
  const report = (e: FieldError, f = byError.get(e)): ReportedError => (f ? { ...e, rule: f.rule, policy: f.policy } : { ...e });
  return {
    allowed: decision.allowed,
    errors: decision.errors.map((e) => report(e)),
    // Whole: the webhook cuts each to what kubectl shows on a line, offline there is room.
    warnings: decision.warnings.map(warningText),
    audits: decision.audits.map((f) => report(f.error, f)),
    findings: decision.findings,
  };
}

function nadsOf(
  objects: readonly ManifestObject[],
  options: CheckOptions,
  defaultNamespace: string,
  config: AdmissionConfig,
): Map<string, Nad> {
  const out = new Map<string, Nad>();
  for (const nad of options.nads ?? []) out.set(nadKey(nad.namespace, nad.name), nad);
  for (const { object } of objects) {
    if (!isNadObject(object)) continue;
    const nad = nadFromObject(object, { defaultNamespace, resourceNameKeys: config.resourceNameKeys });
    if (nad.name !== '') out.set(nadKey(nad.namespace, nad.name), nad);
  }
  return out;
}

/**
 * DeviceClasses and ResourceClaimTemplates: the cluster's (`--cluster`) and the inputs' own. Offline,
 * a template that is not among the inputs is "unchecked", not missing: the cluster may hold it.
 * `netattach audit` reads its inputs through this too.
 */
export function draViewOf(objects: readonly unknown[], cluster: CheckOptions['dra'], defaultNamespace: string): DraView {
  const view = new StaticDraView(cluster?.classes ?? [], cluster?.templates ?? []);
  for (const object of objects) {
    if (!isObject(object) || object['apiVersion'] !== 'resource.k8s.io/v1') continue;
    const meta = metadataOf(object);
    if (object['kind'] === 'DeviceClass') {
      const info = deviceClassInfo(object);
      if (info) view.addClass(info);
    } else if (object['kind'] === 'ResourceClaimTemplate' && str(meta['name'])) {
      view.addTemplate(str(meta['namespace']) ?? defaultNamespace, str(meta['name'])!);
    }
  }
  if (cluster) return view;
  return {
    classesFor: (resource) => view.classesFor(resource),
    template: (namespace, name): TemplateLookup =>
      view.template(namespace, name).status === 'found'
        ? { status: 'found' }
        : { status: 'unavailable', reason: 'not among the inputs, and the cluster was not read (--cluster)' },
    templateNamespaces: () => undefined,
  };
}

/**
 * Namespace labels as admission sees them: the inputs' Namespace objects (string labels only, as the
 * apiserver stores them), else the cluster's, and always the name label. `netattach audit` too.
 */
export function namespaceLabelsOf(
  objects: readonly unknown[],
  cluster?: (namespace: string) => Record<string, string> | undefined,
): (namespace: string) => Record<string, string> {
  const known = new Map<string, Record<string, string>>();
  for (const object of objects) {
    if (!isObject(object) || object['apiVersion'] !== 'v1' || object['kind'] !== 'Namespace') continue;
    const meta = metadataOf(object);
    const name = str(meta['name']);
    if (!name) continue;
    const labels = isObject(meta['labels'])
      ? Object.entries(meta['labels']).filter((e): e is [string, string] => typeof e[1] === 'string')
      : [];
    known.set(name, Object.fromEntries(labels));
  }
  // The apiserver sets the name label on every namespace, whatever the manifest says.
  return (namespace) => ({ ...(known.get(namespace) ?? cluster?.(namespace)), [NAME_LABEL]: namespace });
}

const optional = <K extends string, V>(k: K, v: V | undefined): Partial<Record<K, V>> =>
  v === undefined ? {} : ({ [k]: v } as Partial<Record<K, V>>);
