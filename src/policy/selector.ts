// Kubernetes label selector semantics (metav1.LabelSelector): every matchLabels pair and every
// expression must hold; an empty selector selects everything; NotIn and DoesNotExist hold when
// the key is absent.
import type { FieldError } from '../field/index.js';
import { forbidden, index, required, child } from '../field/index.js';
import type { LabelSelector } from './document.js';

export type LabelPredicate = (labels: Readonly<Record<string, string>>) => boolean;

/** Checks what the schema cannot express: values present for In/NotIn, absent for the others. */
export function selectorErrors(selector: LabelSelector | undefined, path: string): FieldError[] {
  const errors: FieldError[] = [];
  (selector?.matchExpressions ?? []).forEach((e, i) => {
    const p = child(index(child(path, 'matchExpressions'), i), 'values');
    const n = e.values?.length ?? 0;
    if ((e.operator === 'In' || e.operator === 'NotIn') && n === 0)
      errors.push(required(p, `must be specified when operator is ${e.operator}`));
    if ((e.operator === 'Exists' || e.operator === 'DoesNotExist') && n > 0)
      errors.push(forbidden(p, `may not be specified when operator is ${e.operator}`));
  });
  return errors;
}

export function compileSelector(selector: LabelSelector | undefined): LabelPredicate {
  const pairs = Object.entries(selector?.matchLabels ?? {});
  const exprs = (selector?.matchExpressions ?? []).map((e) => ({ key: e.key, op: e.operator, values: new Set(e.values ?? []) }));
  if (pairs.length === 0 && exprs.length === 0) return () => true;
  return (labels) => {
    for (const [k, v] of pairs) if (labels[k] !== v) return false;
    for (const e of exprs) {
      const has = Object.hasOwn(labels, e.key);
      switch (e.op) {
        case 'In':
          if (!has || !e.values.has(labels[e.key]!)) return false;
          break;
        case 'NotIn':
          if (has && e.values.has(labels[e.key]!)) return false;
          break;
        case 'Exists':
          if (!has) return false;
          break;
        case 'DoesNotExist':
          if (has) return false;
          break;
      }
    }
    return true;
  };
}
