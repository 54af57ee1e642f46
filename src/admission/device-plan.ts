// The device plan of a pod: which selections get their device from a ResourceClaim instead of an
// extended resource, and the claims netattach adds for them. What a claim can serve (read from the
// DRA objects alone) is src/dra/claim-serving.ts; this file stays in src/admission because it reads
// and writes the pod (PodDraft, the default container, Notes and Findings), and src/dra must not
// import src/admission (which imports src/dra).
//
// - A NAD annotated `netattach.io/resourceClaimTemplate: T` is served by explicit claims: each
//   selection of it needs one `spec.resourceClaims` entry from template T (looked up in the pod's
//   namespace) and a `resources.claims` reference on the default container. Entries from T that
//   the pod already has (written by the user, or by an earlier pass) count towards the need.
// - A pod that brings its own claim for a network says so in `netattach.io/networkClaims`:
//   `NETWORK=CLAIM` pairs, each covering one selection of NETWORK with the device of pod claim
//   CLAIM (one of `spec.resourceClaims`). Covered selections get nothing from netattach, so the
//   claim must hold a device with the network's resourceName (what Multus looks for):
//   checkNetworkClaims tells the pod when it certainly does not (denied) or may not (warned).
// - A pod that declares its own `spec.resourceClaims` without the annotation (Multus's DRA how-to)
//   may get a network's device from them: ownClaimsServing reads them with the same judgement
//   (claimServes) and says which extended resources netattach must not inject.
import type { ParsedNetwork } from '../annotation/index.js';
import { child, index, invalid, key, notFound, type FieldError } from '../field/index.js';
import { claimServes, deviceNamesOf, type DraView } from '../dra/index.js';
import type { Nad } from '../nads/index.js';
import type { Finding } from '../policy/index.js';
import type { PodDraft } from './draft.js';
import { targetContainer } from './inject-resources.js';
import { isObject, type JsonObject, type PodLocation } from './object.js';
import type { Note } from './warnings.js';

export const NETWORK_CLAIMS_ANNOTATION = 'netattach.io/networkClaims';

export interface Attachment {
  net: ParsedNetwork;
  nad: Nad;
}

export interface DevicePlan {
  /** Selections whose devices are extended resources (device plugin or a DeviceClass): injected as before. */
  extended: Attachment[];
  /** Template -> how many claims from it the pod needs, and the selections needing them (for messages). */
  templates: Map<string, { count: number; paths: string[] }>;
  errors: FieldError[];
  warnings: Note[];
  /** The selections covered by the pod's own claims: checkNetworkClaims judges whether each claim can serve its network. */
  claimed: ClaimedSelection[];
  /** The pod's spec.resourceClaims entries, and the resources its containers request (another way Multus may find a device). */
  podClaims: JsonObject[];
  requested: ReadonlySet<string>;
  /** Names of the pod claims netattach.io/networkClaims assigns to a network: not read again for the others. */
  declared: ReadonlySet<string>;
}

export interface ClaimedSelection {
  /** `namespace/network` and the pod claim, as written in the annotation. */
  ref: string;
  claim: string;
  nad: Nad;
  /** The annotation's field path. */
  path: string;
  /** The claim's entry in spec.resourceClaims. */
  entry: JsonObject;
}

/** True when the pod needs the DRA planning at all: the fast path of every other pod skips it. */
export function needsDevicePlan(pod: JsonObject | undefined, attachments: readonly Attachment[]): boolean {
  for (const a of attachments) if (a.nad.claimTemplate !== undefined) return true;
  if (annotationsOf(pod)?.[NETWORK_CLAIMS_ANNOTATION] !== undefined) return true;
  // Its own claims may serve a network with a device (Multus's DRA how-to): see ownClaimsServing.
  return claimEntries(pod).length > 0 && attachments.some((a) => a.nad.resourceNames.length > 0);
}

/** The annotations of `pod`, the pod (or template) object itself. */
function annotationsOf(pod: JsonObject | undefined): JsonObject | undefined {
  const meta = pod?.['metadata'];
  const annotations = isObject(meta) ? meta['annotations'] : undefined;
  return isObject(annotations) ? annotations : undefined;
}

const claimEntries = (pod: JsonObject | undefined): unknown[] => {
  const spec = pod?.['spec'];
  const claims = isObject(spec) ? spec['resourceClaims'] : undefined;
  return Array.isArray(claims) ? claims : [];
};

interface ClaimPair {
  namespace: string;
  name: string;
  claim: string;
}

/** `net=claim, ns/net=claim`: the pairs, and an error per malformed item. */
export function parseNetworkClaims(text: string, namespace: string, path: string): { pairs: ClaimPair[]; errors: FieldError[] } {
  const pairs: ClaimPair[] = [];
  const errors: FieldError[] = [];
  if (text.trim() === '') return { pairs, errors: [invalid(path, text, "must hold 'network=claim' pairs, comma-separated")] };
  for (const raw of text.split(',')) {
    const item = raw.trim();
    const m = /^(?:([a-z0-9]([-a-z0-9]*[a-z0-9])?)\/)?([a-z0-9]([-a-z0-9.]*[a-z0-9])?)\s*=\s*([a-z0-9]([-a-z0-9]*[a-z0-9])?)$/.exec(item);
    if (!m || m[5]!.length > 63) {
      errors.push(
        invalid(
          path,
          item,
          "each item must be 'network=claim' or 'namespace/network=claim', claim being the name of one of spec.resourceClaims",
        ),
      );
      continue;
    }
    pairs.push({ namespace: m[1] ?? namespace, name: m[3]!, claim: m[5]! });
  }
  return { pairs, errors };
}

/**
 * Splits the pod's attachments into those served by extended resources and those needing claims
 * from a template, after removing the ones the pod covers with its own claims.
 */
export function planDevices(
  pod: JsonObject | undefined,
  loc: PodLocation,
  attachments: readonly Attachment[],
  namespace: string,
): DevicePlan {
  const declared = new Set<string>();
  const plan: DevicePlan = {
    extended: [],
    templates: new Map(),
    errors: [],
    warnings: [],
    claimed: [],
    podClaims: [],
    requested: new Set(),
    declared,
  };
  const covered = new Set<number>();
  const annotationPath = key(`${loc.metadataPath}.annotations`, NETWORK_CLAIMS_ANNOTATION);
  const podClaims = new Map<string, JsonObject>();
  for (const c of claimEntries(pod))
    if (isObject(c) && typeof c['name'] === 'string' && !podClaims.has(c['name'])) podClaims.set(c['name'], c);
  plan.podClaims = [...podClaims.values()];
  plan.requested = requestedResources(pod);
  const text = annotationsOf(pod)?.[NETWORK_CLAIMS_ANNOTATION];
  if (text !== undefined) {
    if (typeof text !== 'string') plan.errors.push(invalid(annotationPath, text, 'must be a string'));
    else {
      const { pairs, errors } = parseNetworkClaims(text, namespace, annotationPath);
      plan.errors.push(...errors);
      for (const p of pairs) {
        const ref = `${p.namespace}/${p.name}`;
        const entry = podClaims.get(p.claim);
        if (!entry) {
          plan.errors.push(
            notFound(
              annotationPath,
              p.claim,
              `${ref} is said to use pod claim "${p.claim}", but spec.resourceClaims has no entry of that name: the network would get no device`,
            ),
          );
          continue;
        }
        declared.add(p.claim);
        const i = attachments.findIndex(
          (a, j) => !covered.has(j) && a.net.selection.namespace === p.namespace && a.net.selection.name === p.name,
        );
        if (i < 0) {
          const selected = attachments.some((a) => a.net.selection.namespace === p.namespace && a.net.selection.name === p.name);
          plan.warnings.push({
            path: '',
            text: `${NETWORK_CLAIMS_ANNOTATION}: ${ref}=${p.claim} unused: ${selected ? `more pairs than selections of ${ref}` : `${ref} is not among the pod's networks`}`,
          });
          continue;
        }
        covered.add(i);
        if (deviceNamesOf(attachments[i]!.nad).length === 0) {
          plan.warnings.push({ path: '', text: `${ref} has no resourceName: Multus cannot tell which device of claim ${p.claim} is its` });
        } else plan.claimed.push({ ref, claim: p.claim, nad: attachments[i]!.nad, path: annotationPath, entry });
      }
    }
  }
  attachments.forEach((a, i) => {
    if (covered.has(i)) return;
    const t = a.nad.claimTemplate;
    if (t === undefined) {
      plan.extended.push(a);
      return;
    }
    const need = plan.templates.get(t) ?? { count: 0, paths: [] };
    need.count++;
    need.paths.push(a.net.path);
    plan.templates.set(t, need);
  });
  return plan;
}

export interface TemplateCheck {
  /** Enforce findings (a Pod: the template must exist), or nothing for a template of a workload. */
  findings: Finding[];
  warnings: Note[];
}

/** Every template the plan draws claims from must exist in the pod's namespace. */
export function checkTemplates(plan: DevicePlan, namespace: string, dra: DraView | undefined, workload: boolean): TemplateCheck {
  const out: TemplateCheck = { findings: [], warnings: [] };
  for (const [template, { paths }] of plan.templates) {
    const path = paths[0]!;
    // Warnings without a path: kubectl shows one line of 120 characters, the message is what counts.
    if (!dra) {
      out.warnings.push({
        path: '',
        text: `ResourceClaimTemplate ${namespace}/${template} unchecked: netattach does not read templates here`,
      });
      continue;
    }
    const found = dra.template(namespace, template);
    if (found.status === 'found') continue;
    if (found.status === 'unavailable') {
      out.warnings.push({ path: '', text: `ResourceClaimTemplate ${namespace}/${template} unchecked: ${found.reason}` });
      continue;
    }
    const how = `create it in namespace ${namespace} (kubectl -n ${namespace} apply -f a ResourceClaimTemplate named ${template}; see docs/dra.md)`;
    if (workload) {
      out.warnings.push({
        path: '',
        text: `no ResourceClaimTemplate ${template} in namespace ${namespace}: its pods will be denied until it exists`,
      });
    } else {
      out.findings.push({
        policy: 'builtin',
        rule: 'claimTemplateExists',
        action: 'Enforce',
        error: notFound(
          path,
          `${namespace}/${template}`,
          `the network's device is claimed from ResourceClaimTemplate ${template}, which namespace ${namespace} lacks: ${how}`,
        ),
      });
    }
  }
  return out;
}

/** Resource names the pod's containers request or limit (by hand: a device plugin's device Multus may find). */
function requestedResources(pod: JsonObject | undefined): Set<string> {
  const out = new Set<string>();
  const spec = pod?.['spec'];
  for (const list of ['containers', 'initContainers']) {
    const containers = isObject(spec) ? spec[list] : undefined;
    if (!Array.isArray(containers)) continue;
    for (const c of containers) {
      const resources = isObject(c) ? c['resources'] : undefined;
      for (const kind of ['requests', 'limits']) {
        const amounts = isObject(resources) ? resources[kind] : undefined;
        if (isObject(amounts)) for (const k of Object.keys(amounts)) out.add(k);
      }
    }
  }
  return out;
}

export interface NetworkClaimsCheck {
  /** A Pod whose claim certainly holds no device for the network: it would fail at CNI ADD. */
  errors: FieldError[];
  warnings: Note[];
}

/**
 * Each pod claim said to serve a network (netattach.io/networkClaims) must be able to hold a device
 * with the network's resourceName: a request of its ResourceClaimTemplate served by a DeviceClass
 * whose extendedResourceName is it, or whose selectors (or the request's) require it. Denied (a
 * Pod; a workload is warned) only when certain: every request's every alternative is ruled out by
 * a class netattach holds. What netattach cannot see (a ResourceClaim by name, a template it has
 * not read, selectors it cannot read) is a warning: never a false denial.
 */
export function checkNetworkClaims(plan: DevicePlan, namespace: string, dra: DraView | undefined, workload: boolean): NetworkClaimsCheck {
  const out: NetworkClaimsCheck = { errors: [], warnings: [] };
  for (const c of plan.claimed) {
    const wants = deviceNamesOf(c.nad);
    const what = `pod claim ${c.claim} for ${c.ref} (${wants.join(', ')})`;
    const judged = claimServes(c.entry, wants, namespace, dra);
    if (judged.serves === 'yes') continue;
    if (judged.serves === 'unknown') {
      out.warnings.push({ path: '', text: `${what} unchecked: ${judged.why}` });
      continue;
    }
    const reason = `pod claim "${c.claim}" (ResourceClaimTemplate ${judged.template}) cannot hold a device with resourceName ${wants.join(' or ')}: its requests' DeviceClasses (${judged.classes!.join(', ')}) select other devices, so Multus would find no device for ${c.ref}`;
    // Certain only if no other claim or requested resource of the pod could give Multus the device.
    const elsewhere =
      wants.some((r) => plan.requested.has(r)) ||
      plan.podClaims.some((e) => e !== c.entry && claimServes(e, wants, namespace, dra).serves !== 'no');
    if (workload || elsewhere)
      out.warnings.push({ path: '', text: elsewhere ? `${reason} (unless another claim of the pod serves it)` : reason });
    else out.errors.push(invalid(c.path, `${c.ref}=${c.claim}`, `${reason}, and the pod would fail at CNI ADD`));
  }
  return out;
}

/**
 * Distinct sources (templates, ResourceClaims) of a pod's own claims that are read: real pods have
 * a few. Mutating webhooks see a pod before Kubernetes validates it, so a forged pod may list
 * thousands; past the bound the rest count as unread: the resource is injected as before, and the
 * warning says how many claims were not read. Never a denial.
 */
export const MAX_OWN_CLAIM_SOURCES = 32;
/**
 * Distinct resources of a pod's selections judged against its own claims (sources x resources x
 * a template's 256 alternatives stays near 260,000 steps). Past it, the rest are injected as
 * before, with one warning: no real pod needs 32 kinds of device.
 */
export const MAX_OWN_CLAIM_RESOURCES = 32;

export interface OwnClaimsCheck {
  /** Extended resources netattach does not inject: one of the pod's own claims certainly serves them. */
  served: Set<string>;
  warnings: Note[];
}

/**
 * The pod's own `spec.resourceClaims` as Multus's DRA how-to writes them: no annotation, a claim
 * from a template whose DeviceClass selects the network's devices. Multus gives a selection the
 * allocated device whose `k8s.cni.cncf.io/resourceName` attribute equals the NAD's resourceName,
 * so such a claim serves the selection; injecting the resource too would keep the pod Pending on
 * a node where only the DRA driver offers the device (no device plugin advertises it).
 *
 * Read per resource of the selections left for extended resources (`plan.extended`), with the
 * judgement of netattach.io/networkClaims (claimServes), over the pod's claims except those that
 * annotation assigns and those from a template netattach draws claims from itself:
 * - a claim that certainly can hold such a device (its DeviceClass has that extendedResourceName,
 *   or its class's or request's CEL selectors require the attribute): not injected, nothing said;
 * - none certainly, but one netattach cannot judge (a `resourceClaimName`, a template or class it
 *   does not hold, a class selecting by driver alone as the how-to's): **injected as before**,
 *   with a warning naming the resource, the claim and the opt-out (`netattach.io/networkClaims`).
 *   Why: not injecting would break working pods whose claim is unrelated to the network (a GPU
 *   claim next to an SR-IOV NAD served by a device plugin: the pod would start without its VF),
 *   and whether a node advertises the resource is not known here (docs/dra.md says why netattach
 *   does not watch Nodes). Injecting keeps every pod that works today working, and the warning
 *   tells the author of a DRA-only pod the one line that makes it schedulable;
 * - every claim certainly holds other devices: injected as before, nothing said.
 * A claim holding the device serves every selection of that resource: how many devices it holds
 * (a request's count) is not read, so a pod selecting a network twice brings enough itself.
 */
export function ownClaimsServing(plan: DevicePlan, namespace: string, dra: DraView | undefined): OwnClaimsCheck {
  const out: OwnClaimsCheck = { served: new Set(), warnings: [] };
  if (plan.extended.length === 0) return out;
  // One claim per source: claims from one template (or naming one ResourceClaim) are judged alike.
  const sources = new Map<string, JsonObject>();
  for (const e of plan.podClaims) {
    if (plan.declared.has(e['name'] as string)) continue;
    const template = e['resourceClaimTemplateName'];
    const claim = e['resourceClaimName'];
    const source =
      typeof template === 'string'
        ? plan.templates.has(template)
          ? undefined
          : `t/${template}`
        : typeof claim === 'string'
          ? `c/${claim}`
          : undefined;
    if (source !== undefined && !sources.has(source)) sources.set(source, e);
  }
  if (sources.size === 0) return out;
  const candidates = [...sources.values()].slice(0, MAX_OWN_CLAIM_SOURCES);
  const unread = sources.size - candidates.length;
  // Resource -> the selections needing it (namespace/name, and as the networks annotation writes it).
  const users = new Map<string, Array<{ ref: string; short: string }>>();
  for (const a of plan.extended) {
    const { namespace: ns, name } = a.net.selection;
    const ref = `${ns}/${name}`;
    for (const r of a.nad.resourceNames) {
      const refs = users.get(r) ?? [];
      if (!refs.some((u) => u.ref === ref)) refs.push({ ref, short: ns === namespace ? name : ref });
      users.set(r, refs);
    }
  }
  const past = [...users.keys()].slice(MAX_OWN_CLAIM_RESOURCES);
  if (past.length > 0) {
    out.warnings.push({
      path: '',
      text: `${past.length} resources (${past[0]}, ...) added without reading the pod's own claims: netattach reads them for ${MAX_OWN_CLAIM_RESOURCES}`,
    });
  }
  for (const [resource, refs] of [...users].slice(0, MAX_OWN_CLAIM_RESOURCES)) {
    const judged = candidates.map((e) => ({ name: e['name'] as string, ...claimServes(e, [resource], namespace, dra) }));
    if (judged.some((j) => j.serves === 'yes')) {
      out.served.add(resource);
      continue;
    }
    const unknown = judged.filter((j) => j.serves === 'unknown');
    if (unknown.length === 0 && unread === 0) continue;
    const names = unknown.map((j) => j.name);
    if (unread > 0) names.push(`${unread} more`);
    const first = unknown[0]?.name ?? ([...sources.values()][MAX_OWN_CLAIM_SOURCES]!['name'] as string);
    const why = unknown[0]?.why ?? `netattach reads ${MAX_OWN_CLAIM_SOURCES} claim sources`;
    const scheduler = dra?.classesFor(resource)[0];
    out.warnings.push({
      path: '',
      text:
        `${refs.map((u) => u.ref).join(', ')}: ${resource} added${scheduler ? ` (DeviceClass ${scheduler.name})` : ''}; ` +
        `pod claim${names.length > 1 ? 's' : ''} ${names.join(', ')} may hold its device instead (${why}): ` +
        `if so, annotate netattach.io/networkClaims: ${refs[0]!.short}=${first} (docs/dra.md)`,
    });
  }
  return out;
}

/** A DNS label from a template name, leaving room for `-N`. */
function claimBase(template: string): string {
  return template.replace(/\./g, '-').slice(0, 58).replace(/-+$/, '');
}

/**
 * Adds the claims the plan needs from templates: one `spec.resourceClaims` entry per missing claim
 * and a `resources.claims` reference on the default container. Entries from the same template
 * already in the pod count; nothing the user wrote is changed.
 */
export function addTemplateClaims(draft: PodDraft, plan: DevicePlan, specPath = 'spec'): { errors: FieldError[]; warnings: Note[] } {
  const out = { errors: [] as FieldError[], warnings: [] as Note[] };
  if (plan.templates.size === 0) return out;
  const spec = draft.pod['spec'];
  const current = isObject(spec) ? spec['resourceClaims'] : undefined;
  if (current !== undefined && current !== null && !Array.isArray(current)) {
    out.errors.push(invalid(child(specPath, 'resourceClaims'), current, 'must be a list'));
    return out;
  }
  const existing = (current ?? []) as unknown[];
  const names = new Set<string>();
  const have = new Map<string, number>();
  for (const c of existing) {
    if (!isObject(c)) continue;
    if (typeof c['name'] === 'string') names.add(c['name']);
    const t = c['resourceClaimTemplateName'];
    if (typeof t === 'string') have.set(t, (have.get(t) ?? 0) + 1);
  }
  const added: JsonObject[] = [];
  for (const [template, { count }] of plan.templates) {
    const base = claimBase(template);
    let k = 1;
    for (let missing = count - (have.get(template) ?? 0); missing > 0; missing--) {
      while (names.has(`${base}-${k}`)) k++;
      const name = `${base}-${k}`;
      names.add(name);
      added.push({ name, resourceClaimTemplateName: template });
    }
  }
  if (added.length === 0) return out;
  const containers = isObject(spec) ? spec['containers'] : undefined;
  const containersPath = child(specPath, 'containers');
  if (!Array.isArray(containers) || containers.length === 0 || !containers.every(isObject)) {
    out.errors.push(invalid(containersPath, '<list>', "the claims for the pod's networks need a container"));
    return out;
  }
  const target = targetContainer(draft.pod, containers as JsonObject[], out.warnings);
  const resources = (containers[target] as JsonObject)['resources'];
  if (resources !== undefined && resources !== null && !isObject(resources)) {
    out.errors.push(invalid(`${index(containersPath, target)}.resources`, resources, 'must be an object'));
    return out;
  }
  const refs = isObject(resources) ? resources['claims'] : undefined;
  if (refs !== undefined && refs !== null && !Array.isArray(refs)) {
    out.errors.push(invalid(`${index(containersPath, target)}.resources.claims`, refs, 'must be a list'));
    return out;
  }
  draft.spec()!['resourceClaims'] = [...existing, ...added];
  const container = draft.container(target);
  const r = (container['resources'] ??= {}) as JsonObject;
  r['claims'] = [...((refs as unknown[] | null | undefined) ?? []), ...added.map((c) => ({ name: c['name'] }))];
  return out;
}
