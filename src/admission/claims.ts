// DRA for networks: which selections get their device from a ResourceClaim instead of an extended
// resource, and the claims netattach adds for them.
//
// - A NAD annotated `netattach.io/resourceClaimTemplate: T` is served by explicit claims: each
//   selection of it needs one `spec.resourceClaims` entry from template T (looked up in the pod's
//   namespace) and a `resources.claims` reference on the default container. Entries from T that
//   the pod already has (written by the user, or by an earlier pass) count towards the need.
// - A pod that brings its own claim for a network says so in `netattach.io/networkClaims`:
//   `NETWORK=CLAIM` pairs, each covering one selection of NETWORK with the device of pod claim
//   CLAIM (one of `spec.resourceClaims`). Covered selections get nothing from netattach.
import type { ParsedNetwork } from '../annotation/types.js';
import { child, index, invalid, key, notFound, type FieldError } from '../field/index.js';
import type { DraView } from '../dra/types.js';
import type { Nad } from '../nads/types.js';
import type { Finding } from '../policy/types.js';
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
}

/** True when the pod needs the DRA planning at all: the fast path of every other pod skips it. */
export function needsDevicePlan(pod: JsonObject | undefined, attachments: readonly Attachment[]): boolean {
  for (const a of attachments) if (a.nad.claimTemplate !== undefined) return true;
  return annotationsOf(pod)?.[NETWORK_CLAIMS_ANNOTATION] !== undefined;
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
      errors.push(invalid(path, item, "each item must be 'network=claim' or 'namespace/network=claim', claim being the name of one of spec.resourceClaims"));
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
export function planDevices(pod: JsonObject | undefined, loc: PodLocation, attachments: readonly Attachment[], namespace: string): DevicePlan {
  const plan: DevicePlan = { extended: [], templates: new Map(), errors: [], warnings: [] };
  const covered = new Set<number>();
  const annotationPath = key(`${loc.metadataPath}.annotations`, NETWORK_CLAIMS_ANNOTATION);
  const text = annotationsOf(pod)?.[NETWORK_CLAIMS_ANNOTATION];
  if (text !== undefined) {
    if (typeof text !== 'string') plan.errors.push(invalid(annotationPath, text, 'must be a string'));
    else {
      const { pairs, errors } = parseNetworkClaims(text, namespace, annotationPath);
      plan.errors.push(...errors);
      const podClaims = new Set(claimEntries(pod).map((c) => (isObject(c) && typeof c['name'] === 'string' ? c['name'] : undefined)));
      for (const p of pairs) {
        const ref = `${p.namespace}/${p.name}`;
        if (!podClaims.has(p.claim)) {
          plan.errors.push(
            notFound(annotationPath, p.claim, `${ref} is said to use pod claim "${p.claim}", but spec.resourceClaims has no entry of that name: the network would get no device`),
          );
          continue;
        }
        const i = attachments.findIndex((a, j) => !covered.has(j) && a.net.selection.namespace === p.namespace && a.net.selection.name === p.name);
        if (i < 0) {
          const selected = attachments.some((a) => a.net.selection.namespace === p.namespace && a.net.selection.name === p.name);
          plan.warnings.push({
            path: '',
            text: `${NETWORK_CLAIMS_ANNOTATION}: ${ref}=${p.claim} unused: ${selected ? `more pairs than selections of ${ref}` : `${ref} is not among the pod's networks`}`,
          });
          continue;
        }
        covered.add(i);
        if (attachments[i]!.nad.resourceNames.length === 0) {
          plan.warnings.push({ path: '', text: `${ref} has no resourceName: Multus cannot tell which device of claim ${p.claim} is its` });
        }
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
      out.warnings.push({ path: '', text: `ResourceClaimTemplate ${namespace}/${template} unchecked: netattach does not read templates here` });
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
      out.warnings.push({ path: '', text: `no ResourceClaimTemplate ${template} in namespace ${namespace}: its pods will be denied until it exists` });
    } else {
      out.findings.push({
        policy: 'builtin',
        rule: 'claimTemplateExists',
        action: 'Enforce',
        error: notFound(path, `${namespace}/${template}`, `the network's device is claimed from ResourceClaimTemplate ${template}, which namespace ${namespace} lacks: ${how}`),
      });
    }
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
    out.errors.push(invalid(containersPath, '<list>', 'the claims for the pod\'s networks need a container'));
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
