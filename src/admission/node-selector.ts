// The NADs' nodeSelector annotations merged into the pod's spec.nodeSelector. A key the pod (or
// another NAD) already sets to a different value is a conflict: denied, never overwritten.
import type { ParsedNetwork } from '../annotation/index.js';
import { invalid, key, type FieldError } from '../field/index.js';
import type { Nad } from '../nads/index.js';
import type { PodDraft } from './draft.js';
import { isObject } from './object.js';

export function mergeNodeSelector(
  draft: PodDraft,
  attachments: ReadonlyArray<{ net: ParsedNetwork; nad: Nad }>,
  specPath = 'spec',
): FieldError[] {
  const errors: FieldError[] = [];
  const wanted = new Map<string, { value: string; ref: string }>();
  for (const { net, nad } of attachments) {
    const ref = `${nad.namespace}/${nad.name}`;
    for (const [k, value] of Object.entries(nad.nodeSelector)) {
      const prior = wanted.get(k);
      if (prior === undefined) wanted.set(k, { value, ref });
      else if (prior.value !== value) {
        errors.push(invalid(net.path, ref, `its nodeSelector ${k}=${value} conflicts with ${k}=${prior.value} of ${prior.ref}`));
      }
    }
  }
  if (wanted.size === 0) return errors;
  const spec = draft.pod['spec'];
  if (!isObject(spec)) return errors; // reported by the resource injection
  const selectorPath = `${specPath}.nodeSelector`;
  let selector = spec['nodeSelector'];
  if (selector === undefined || selector === null) selector = {};
  if (!isObject(selector)) {
    errors.push(invalid(selectorPath, selector, 'must be a map of label to value'));
    return errors;
  }
  const additions: Record<string, string> = {};
  for (const [k, { value, ref }] of wanted) {
    const current = Object.hasOwn(selector, k) ? selector[k] : undefined;
    if (current === undefined) additions[k] = value;
    else if (current !== value) {
      errors.push(invalid(key(selectorPath, k), current, `conflicts with ${k}=${value} required by NetworkAttachmentDefinition ${ref}`));
    }
  }
  if (Object.keys(additions).length > 0) draft.spec()!['nodeSelector'] = { ...selector, ...additions };
  return errors;
}
