// Device-plugin resources for the pod's networks, added to one container.
import { index, invalid, key, required, type FieldError } from '../field/index.js';
import type { PodDraft } from './draft.js';
import { isObject, stringAt, type JsonObject } from './object.js';
import { extendedResourceName } from '../nads/index.js';
import { extendedCount } from './quantity.js';
import type { Note } from './warnings.js';

export const DEFAULT_CONTAINER_ANNOTATION = 'kubectl.kubernetes.io/default-container';

export interface InjectResult {
  errors: FieldError[];
  warnings: Note[];
}

/**
 * Makes `needed` (resource -> count for the whole pod) hold in the draft pod.
 *
 * - Target: the container named by `kubectl.kubernetes.io/default-container`, else the first.
 * - Amounts the user already gave any container count towards the need, and no value is ever
 *   lowered: the target container is raised to `need - (other containers' amounts)` at least.
 * - Extended resources need requests == limits: when they differ, or only requests is set,
 *   both become the larger value. Limits alone are left alone (the apiserver copies them to requests).
 */
export function injectResources(draft: PodDraft, needed: ReadonlyMap<string, number>, specPath = 'spec'): InjectResult {
  const out: InjectResult = { errors: [], warnings: [] };
  // Only extended resource names are ever written: the apiserver refuses a pod with any other
  // name in its requests, and a mutation must never make a pod that cannot be created.
  const refused = [...needed.keys()].filter((name) => extendedResourceName(name).length > 0);
  if (refused.length > 0) {
    needed = new Map([...needed].filter(([name]) => !refused.includes(name)));
    out.warnings.push({
      path: '',
      text: `not requested: ${refused.join(', ')} (not an extended resource name; only a DRA claim can serve it)`,
    });
  }
  if (needed.size === 0) return out;
  const pod = draft.pod;
  const spec = pod['spec'];
  const containersPath = `${specPath}.containers`;
  const containers = isObject(spec) ? spec['containers'] : undefined;
  if (!Array.isArray(containers) || containers.length === 0 || !containers.every(isObject)) {
    out.errors.push(
      Array.isArray(containers) && containers.length > 0
        ? invalid(containersPath, '<list>', 'every container must be an object')
        : required(containersPath, `resources for the pod's networks need a container (${[...needed.keys()].join(', ')})`),
    );
    return out;
  }
  const target = targetContainer(pod, containers as JsonObject[], out.warnings);
  const cPath = index(containersPath, target);

  const resources = (containers[target] as JsonObject)['resources'] ?? null;
  if (resources !== null && !isObject(resources)) {
    out.errors.push(invalid(`${cPath}.resources`, resources, 'must be an object'));
    return out;
  }
  const current: Record<'requests' | 'limits', JsonObject> = { requests: {}, limits: {} };
  for (const which of ['requests', 'limits'] as const) {
    const m = resources?.[which];
    if (m === undefined || m === null) continue;
    if (!isObject(m)) {
      out.errors.push(invalid(`${cPath}.resources.${which}`, m, 'must be a map of resource name to quantity'));
      return out;
    }
    current[which] = m;
  }
  // What to write, resource -> value; written into a copy of the container only if not empty.
  const writes = new Map<string, { value: number; requests?: number; limits?: number }>();

  for (const [name, need] of needed) {
    const elsewhere = containers.reduce<number>((sum, c, i) => (i === target ? sum : sum + amountIn(c as JsonObject, name)), 0);
    const want = need - elsewhere;
    const has: Partial<Record<'requests' | 'limits', number>> = {};
    let bad = false;
    for (const which of ['requests', 'limits'] as const) {
      const raw = Object.hasOwn(current[which], name) ? current[which][name] : undefined;
      if (raw === undefined) continue;
      const parsed = extendedCount(raw);
      if (!parsed.ok) {
        out.errors.push(invalid(key(`${cPath}.resources.${which}`, name), raw, parsed.reason));
        bad = true;
      } else has[which] = parsed.count;
    }
    if (bad || want <= 0) {
      // Enough already: but a lone `requests` is still invalid for an extended resource; leave that
      // to the apiserver's own validation rather than rewrite what the user wrote.
      continue;
    }
    const value = Math.max(has.requests ?? 0, has.limits ?? 0, want);
    if (has.limits === value && (has.requests === undefined || has.requests === value)) continue;
    writes.set(name, { value, ...has });
  }
  if (writes.size > 0 && out.errors.length === 0) {
    const container = draft.container(target);
    const r = (container['resources'] ??= {}) as JsonObject;
    for (const [name, { value, ...has }] of writes) {
      for (const which of ['requests', 'limits'] as const) {
        if (has[which] === value) continue;
        // A null map is replaced: it holds nothing.
        if (!isObject(r[which])) r[which] = {};
        (r[which] as JsonObject)[name] = String(value);
      }
    }
  }
  return out;
}

/** How many of `name` a container already asks for (the larger of requests and limits). */
export function amountIn(c: JsonObject, name: string): number {
  const r = c['resources'];
  let most = 0;
  for (const which of ['requests', 'limits']) {
    const m = isObject(r) ? r[which] : undefined;
    const parsed = isObject(m) && m[name] !== undefined ? extendedCount(m[name]) : undefined;
    if (parsed?.ok) most = Math.max(most, parsed.count);
  }
  return most;
}

/** The container that gets the network's resources and claims: the default container, else the first. */
export function targetContainer(pod: JsonObject, containers: JsonObject[], warnings: Note[]): number {
  const meta = pod['metadata'];
  const wanted = stringAt(isObject(meta) ? meta['annotations'] : undefined, DEFAULT_CONTAINER_ANNOTATION);
  if (wanted === undefined) return 0;
  const i = containers.findIndex((c) => c['name'] === wanted);
  if (i >= 0) return i;
  warnings.push({
    path: key('metadata.annotations', DEFAULT_CONTAINER_ANNOTATION),
    text: `no container "${wanted}"; resources go to the first one`,
  });
  return 0;
}
