// Pod mutation: change a copy, then diff it against the original into a JSON Patch
// (fast-json-patch `compare`), so the patch is minimal, escapes keys and always applies.
// The copy is of the fields mutation may touch only (nodeSelector, volumes, each container's
// name, resources and volumeMounts), at their real paths: copying and diffing a 100 KiB pod whole
// (env, probes, ...) cost most of the review, for nothing. The copy is structural, not deep:
// only the objects the mutators write into are new, the rest (metadata, names, mounts) is shared,
// and `compare` skips a shared subtree at once (`obj === mirror`).
import fastJsonPatch from 'fast-json-patch';
import type { ParsedNetwork } from '../annotation/types.js';
import type { FieldError } from '../field/index.js';
import type { Nad, NadLookup } from '../nads/types.js';
import { injectResources } from './inject-resources.js';
import { mergeNodeSelector } from './node-selector.js';
import { isObject, type JsonObject } from './object.js';
import { addPodNetInfo } from './podnetinfo.js';
import type { AdmissionConfig, JsonPatchOperation } from './types.js';
import type { Note } from './warnings.js';

export interface MutationResult {
  patch: JsonPatchOperation[];
  errors: FieldError[];
  warnings: Note[];
}

/** Resource name -> count for the whole pod: one of each of the NAD's resources per selection. */
export function neededResources(attachments: ReadonlyArray<{ nad: Nad }>): Map<string, number> {
  const needed = new Map<string, number>();
  for (const { nad } of attachments) for (const r of nad.resourceNames) needed.set(r, (needed.get(r) ?? 0) + 1);
  return needed;
}

export function mutatePod(
  pod: JsonObject,
  networks: readonly ParsedNetwork[],
  nads: (namespace: string, name: string) => NadLookup,
  config: AdmissionConfig,
): MutationResult {
  const attachments: Array<{ net: ParsedNetwork; nad: Nad }> = [];
  for (const net of networks) {
    const lookup = nads(net.selection.namespace, net.selection.name);
    if (lookup.status === 'found') attachments.push({ net, nad: lookup.nad });
  }
  const original = touchable(pod);
  const copy = writableCopy(original);
  const needed = neededResources(attachments);
  const injected = injectResources(copy, needed);
  const errors = [...injected.errors, ...mergeNodeSelector(copy, attachments)];
  const warnings = [...injected.warnings];
  if (config.podNetInfo.enabled && needed.size > 0) warnings.push(...addPodNetInfo(copy, config.podNetInfo));
  const patch = errors.length > 0 ? [] : (fastJsonPatch.compare(original, copy) as JsonPatchOperation[]);
  return { patch, errors, warnings };
}

const CONTAINER_KEYS = ['name', 'resources', 'volumeMounts'];
const SPEC_KEYS = ['nodeSelector', 'volumes'];

const pick = (o: JsonObject, keys: readonly string[]): JsonObject => {
  const out: JsonObject = {};
  for (const k of keys) if (Object.hasOwn(o, k)) out[k] = o[k];
  return out;
};

const shallow = (v: unknown): unknown => (isObject(v) ? { ...v } : v);

/**
 * A copy of `touchable`'s view that the mutators may write: they assign `spec.nodeSelector`,
 * `spec.volumes`, a container's `resources` and `volumeMounts`, and keys inside `resources`,
 * `resources.requests` and `resources.limits`. Exactly those holders are copied; every other
 * value is shared with the original and must be (and is) only read.
 */
function writableCopy(view: JsonObject): JsonObject {
  const copy: JsonObject = { ...view };
  const spec = view['spec'];
  if (!isObject(spec)) return copy;
  const s: JsonObject = { ...spec };
  const containers = spec['containers'];
  if (Array.isArray(containers)) {
    s['containers'] = containers.map((c) => {
      if (!isObject(c)) return c;
      const out: JsonObject = { ...c };
      const r = c['resources'];
      if (isObject(r)) {
        const rc: JsonObject = { ...r };
        if (Object.hasOwn(r, 'requests')) rc['requests'] = shallow(r['requests']);
        if (Object.hasOwn(r, 'limits')) rc['limits'] = shallow(r['limits']);
        out['resources'] = rc;
      }
      return out;
    });
  }
  copy['spec'] = s;
  return copy;
}

/**
 * The pod reduced to what mutation reads or writes, sharing the original's values. Each kept
 * field sits at its real path and exists exactly when it exists in the pod, so every operation
 * diffed from it applies to the whole pod.
 */
function touchable(pod: JsonObject): JsonObject {
  const view: JsonObject = { metadata: pod['metadata'] };
  const spec = pod['spec'];
  if (!isObject(spec)) {
    if (Object.hasOwn(pod, 'spec')) view['spec'] = spec;
    return view;
  }
  const s = pick(spec, SPEC_KEYS);
  if (Object.hasOwn(spec, 'containers')) {
    const containers = spec['containers'];
    s['containers'] = Array.isArray(containers) ? containers.map((c) => (isObject(c) ? pick(c, CONTAINER_KEYS) : c)) : containers;
  }
  view['spec'] = s;
  return view;
}
