// Device-plugin resources for the pod's networks, added to one container.
import { index, invalid, key, required, type FieldError } from '../field/index.js';
import { isObject, stringAt, type JsonObject } from './object.js';
import { extendedCount } from './quantity.js';
import type { Note } from './warnings.js';

export const DEFAULT_CONTAINER_ANNOTATION = 'kubectl.kubernetes.io/default-container';

export interface InjectResult {
  errors: FieldError[];
  warnings: Note[];
}

/**
 * Makes `needed` (resource -> count for the whole pod) hold in `pod` (mutated in place).
 *
 * - Target: the container named by `kubectl.kubernetes.io/default-container`, else the first.
 * - Amounts the user already gave any container count towards the need, and no value is ever
 *   lowered: the target container is raised to `need - (other containers' amounts)` at least.
 * - Extended resources need requests == limits: when they differ, or only requests is set,
 *   both become the larger value. Limits alone are left alone (the apiserver copies them to requests).
 */
export function injectResources(pod: JsonObject, needed: ReadonlyMap<string, number>, specPath = 'spec'): InjectResult {
  const out: InjectResult = { errors: [], warnings: [] };
  if (needed.size === 0) return out;
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
  const target = targetContainer(pod, containers as JsonObject[], out);
  const container = containers[target] as JsonObject;
  const cPath = index(containersPath, target);

  let resources = container['resources'];
  if (resources === undefined || resources === null) resources = container['resources'] = {};
  if (!isObject(resources)) {
    out.errors.push(invalid(`${cPath}.resources`, resources, 'must be an object'));
    return out;
  }
  const maps: Record<'requests' | 'limits', JsonObject> = { requests: {}, limits: {} };
  for (const which of ['requests', 'limits'] as const) {
    const m = resources[which];
    if (m === undefined || m === null) continue;
    if (!isObject(m)) {
      out.errors.push(invalid(`${cPath}.resources.${which}`, m, 'must be a map of resource name to quantity'));
      return out;
    }
    maps[which] = m;
  }

  for (const [name, need] of needed) {
    const elsewhere = containers.reduce<number>((sum, c, i) => (i === target ? sum : sum + amountIn(c as JsonObject, name)), 0);
    const want = need - elsewhere;
    const current: Partial<Record<'requests' | 'limits', number>> = {};
    let bad = false;
    for (const which of ['requests', 'limits'] as const) {
      const raw = maps[which][name];
      if (raw === undefined) continue;
      const parsed = extendedCount(raw);
      if (!parsed.ok) {
        out.errors.push(invalid(key(`${cPath}.resources.${which}`, name), raw, parsed.reason));
        bad = true;
      } else current[which] = parsed.count;
    }
    if (bad || want <= 0) {
      // Enough already: but a lone `requests` is still invalid for an extended resource; leave that
      // to the apiserver's own validation rather than rewrite what the user wrote.
      continue;
    }
    const value = Math.max(current.requests ?? 0, current.limits ?? 0, want);
    if (current.limits === value && (current.requests === undefined || current.requests === value)) continue;
    for (const which of ['requests', 'limits'] as const) {
      if (current[which] === value) continue;
      if (resources[which] === undefined || resources[which] === null) resources[which] = maps[which];
      maps[which][name] = String(value);
    }
  }
  return out;
}

/** How many of `name` a container already asks for (the larger of requests and limits). */
function amountIn(c: JsonObject, name: string): number {
  const r = c['resources'];
  let most = 0;
  for (const which of ['requests', 'limits']) {
    const m = isObject(r) ? r[which] : undefined;
    const parsed = isObject(m) && m[name] !== undefined ? extendedCount(m[name]) : undefined;
    if (parsed?.ok) most = Math.max(most, parsed.count);
  }
  return most;
}

function targetContainer(pod: JsonObject, containers: JsonObject[], out: InjectResult): number {
  const meta = pod['metadata'];
  const wanted = stringAt(isObject(meta) ? meta['annotations'] : undefined, DEFAULT_CONTAINER_ANNOTATION);
  if (wanted === undefined) return 0;
  const i = containers.findIndex((c) => c['name'] === wanted);
  if (i >= 0) return i;
  out.warnings.push({
    path: key('metadata.annotations', DEFAULT_CONTAINER_ANNOTATION),
    text: `no container "${wanted}"; resources go to the first one`,
  });
  return 0;
}
