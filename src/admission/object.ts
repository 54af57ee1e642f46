// Safe reading of untrusted JSON: the object in a review is whatever the client sent, so every
// access checks the shape instead of trusting a type.
import { invalid, key, type FieldError } from '../field/index.js';

export type JsonObject = Record<string, unknown>;

export const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The member `name` when it is an object, else undefined. */
export const objectAt = (v: unknown, name: string): JsonObject | undefined => {
  if (!isObject(v)) return undefined;
  const m = v[name];
  return isObject(m) ? m : undefined;
};

export const stringAt = (v: unknown, name: string): string | undefined => {
  if (!isObject(v)) return undefined;
  const m = v[name];
  return typeof m === 'string' ? m : undefined;
};

/** Where a pod's metadata and spec live inside the reviewed object. */
export interface PodLocation {
  /** Field path of the pod metadata: `metadata`, `spec.template.metadata`, ... */
  metadataPath: string;
  /** Field path of the pod spec. */
  specPath: string;
  /** JSON keys leading from the object to the pod (template) object; empty for a Pod. */
  keys: readonly string[];
}

export const POD_LOCATION: PodLocation = { metadataPath: 'metadata', specPath: 'spec', keys: [] };

/** The pod (or template) object at `loc`, when every step is an object. */
export function podAt(object: unknown, loc: PodLocation): JsonObject | undefined {
  let cur: unknown = object;
  for (const k of loc.keys) cur = objectAt(cur, k);
  return isObject(cur) ? cur : undefined;
}

/**
 * The values of the given annotation keys. A value that is present but not a string is an error
 * (the apiserver would reject it too, but we must not crash or guess before it does).
 */
export function readAnnotations(
  pod: JsonObject | undefined,
  metadataPath: string,
  keys: readonly string[],
): { values: Map<string, string>; errors: FieldError[] } {
  const values = new Map<string, string>();
  const errors: FieldError[] = [];
  const meta = pod?.['metadata'];
  if (meta === undefined || meta === null) return { values, errors };
  if (!isObject(meta)) {
    errors.push(invalid(metadataPath, meta, 'must be an object'));
    return { values, errors };
  }
  const annotations = meta['annotations'];
  if (annotations === undefined || annotations === null) return { values, errors };
  const annotationsPath = `${metadataPath}.annotations`;
  if (!isObject(annotations)) {
    errors.push(invalid(annotationsPath, annotations, 'must be a map of strings'));
    return { values, errors };
  }
  for (const k of keys) {
    const v = annotations[k];
    if (v === undefined) continue;
    if (typeof v !== 'string') errors.push(invalid(key(annotationsPath, k), v, 'must be a string'));
    else values.set(k, v);
  }
  return { values, errors };
}
