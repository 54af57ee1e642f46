// What the mutating webhook's patch does to a Pod, in terms a reader checks: the resources of
// each container it touches and the resulting nodeSelector.
import fastJsonPatch from 'fast-json-patch';
import type { JsonPatchOperation } from '../admission/index.js';
import type { Mutation } from './types.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const stringMap = (v: unknown): Record<string, string> | undefined =>
  isObject(v) ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, typeof x === 'string' ? x : JSON.stringify(x)])) : undefined;

export function describeMutation(pod: Json, patch: JsonPatchOperation[]): Mutation {
  const after = fastJsonPatch.applyPatch(structuredClone(pod), structuredClone(patch) as fastJsonPatch.Operation[], false, false)
    .newDocument as Json;
  const before = containersOf(pod);
  const resources: Mutation['resources'] = {};
  for (const [name, c] of containersOf(after)) {
    const was = before.get(name);
    if (JSON.stringify(was?.['resources']) === JSON.stringify(c['resources'])) continue;
    const r = isObject(c['resources']) ? c['resources'] : {};
    const requests = stringMap(r['requests']);
    const limits = stringMap(r['limits']);
    resources[name] = { ...(requests ? { requests } : {}), ...(limits ? { limits } : {}) };
  }
  const selectorBefore = isObject(pod['spec']) ? pod['spec']['nodeSelector'] : undefined;
  const selectorAfter = isObject(after['spec']) ? after['spec']['nodeSelector'] : undefined;
  const nodeSelector = JSON.stringify(selectorBefore) === JSON.stringify(selectorAfter) ? undefined : stringMap(selectorAfter);
  return { patch, resources, ...(nodeSelector ? { nodeSelector } : {}) };
}

/** Containers and init containers by name (names are unique across both in a valid pod). */
function containersOf(pod: Json): Map<string, Json> {
  const spec = isObject(pod['spec']) ? pod['spec'] : {};
  const out = new Map<string, Json>();
  for (const list of [spec['initContainers'], spec['containers']]) {
    if (!Array.isArray(list)) continue;
    list.forEach((c: unknown, i) => {
      if (isObject(c)) out.set(typeof c['name'] === 'string' ? c['name'] : `#${i}`, c);
    });
  }
  return out;
}
