// The NAD annotations netattach reads: device-plugin resource names and a node selector.
// Parsers return the value they could make out plus field errors, so the cache (which keeps
// what it can) and the NAD validator (which denies) share one reading of the syntax.
import { duplicate, invalid, key, type FieldError } from '../field/index.js';
import { dns1123Subdomain, extendedResourceName, labelValue, qualifiedName } from './names.js';
import { CLAIM_TEMPLATE_ANNOTATION, NODE_SELECTOR_ANNOTATION, RESOURCE_NAME_ANNOTATION } from './types.js';

export interface Parsed<T> {
  value: T;
  errors: FieldError[];
}

const annotationPath = (annotationKey: string): string => key('metadata.annotations', annotationKey);

/** Errors listed per annotation; the rest are summed up in one more entry (a 256 KiB value can hold 100,000 bad items). */
export const MAX_ANNOTATION_ERRORS = 20;

/** Collects at most MAX_ANNOTATION_ERRORS errors, then counts. */
class Errors {
  readonly list: FieldError[] = [];
  private dropped = 0;

  add(e: FieldError): void {
    if (this.list.length < MAX_ANNOTATION_ERRORS) this.list.push(e);
    else this.dropped++;
  }

  done(path: string): FieldError[] {
    if (this.dropped > 0)
      this.list.push({
        path,
        type: 'Too many',
        value: this.dropped,
        reason: `${this.dropped} more errors not listed (only the first ${MAX_ANNOTATION_ERRORS} are)`,
      });
    return this.list;
  }
}

/**
 * Resource names of a NAD: `value` holds the extended resource names (what a device plugin serves
 * and pods may request); `draOnly` the other names, which no device plugin can serve but which
 * Multus still matches against a DRA-allocated device (the claim's name in v4.2, the device
 * attribute k8s.cni.cncf.io/resourceName later), as in Multus's own DRA e2e (`single-gpu`).
 */
export interface ParsedResourceNames extends Parsed<string[]> {
  draOnly: string[];
  /** Names that are not extended resource names: they work with DRA only, so never an error. */
  warnings: FieldError[];
}

/**
 * `intel.com/a, intel.com/b`: a comma-separated list of resource names, trimmed. Empty items and
 * repeats are reported and left out; a name that is not an extended resource name is kept apart
 * (`draOnly`) with a warning.
 */
export function parseResourceNames(text: string, annotationKey = RESOURCE_NAME_ANNOTATION): ParsedResourceNames {
  const path = annotationPath(annotationKey);
  const value: string[] = [];
  const draOnly: string[] = [];
  const seen = new Set<string>();
  const errors = new Errors();
  const warnings = new Errors();
  if (text.trim() === '')
    return {
      value,
      draOnly,
      errors: [invalid(path, text, 'must name at least one extended resource (e.g. intel.com/sriov_netdevice)')],
      warnings: [],
    };
  for (const raw of text.split(',')) {
    const item = raw.trim();
    if (item === '') {
      errors.add(invalid(path, text, 'empty item in the comma-separated list'));
      continue;
    }
    if (seen.has(item)) {
      errors.add(duplicate(path, item, 'listed more than once'));
      continue;
    }
    seen.add(item);
    const reasons = extendedResourceName(item);
    if (reasons.length === 0) value.push(item);
    else {
      draOnly.push(item);
      warnings.add(invalid(path, item, `${NOT_EXTENDED}: ${reasons.join('; ')}`));
    }
  }
  return { value, draOnly, errors: errors.done(path), warnings: warnings.done(path) };
}

/** Why a resource name outside the extended-resource syntax is a warning, and what it means. */
export const NOT_EXTENDED =
  'not an extended resource name: no device plugin can serve it and pods get no resource request for it; only a DRA claim of the pod can (Multus matches it to the claimed device)';

/**
 * Resource names from every configured annotation key, in key order, without repeats
 * (the same resource under two keys is requested once).
 */
export function resourceNamesFromAnnotations(
  annotations: Readonly<Record<string, unknown>> | undefined,
  keys: readonly string[] = [RESOURCE_NAME_ANNOTATION],
): ParsedResourceNames {
  const value: string[] = [];
  const draOnly: string[] = [];
  const seen = new Set<string>();
  const errors: FieldError[] = [];
  const warnings: FieldError[] = [];
  for (const k of keys) {
    const text = annotations?.[k];
    if (text === undefined) continue;
    if (typeof text !== 'string') {
      errors.push(invalid(annotationPath(k), text, 'must be a string'));
      continue;
    }
    const parsed = parseResourceNames(text, k);
    // Not push(...errors): a spread of 100,000 items overflows the stack.
    for (const e of parsed.errors) errors.push(e);
    for (const w of parsed.warnings) warnings.push(w);
    for (const [names, into] of [
      [parsed.value, value],
      [parsed.draOnly, draOnly],
    ] as const) {
      for (const name of names) {
        if (seen.has(name)) continue;
        seen.add(name);
        into.push(name);
      }
    }
  }
  return { value, draOnly, errors, warnings };
}

/**
 * `key=value` or `key` (a label with an empty value, as network-resources-injector reads it),
 * comma-separated, whitespace trimmed. `a=b=c`, empty items, invalid keys or values and a key
 * given twice are reported; the last value of a repeated key wins.
 */
export function parseNodeSelector(text: string, annotationKey = NODE_SELECTOR_ANNOTATION): Parsed<Record<string, string>> {
  const path = annotationPath(annotationKey);
  const value: Record<string, string> = {};
  const errors = new Errors();
  if (text.trim() === '') return { value, errors: [invalid(path, text, "must hold at least one 'key=value' or 'key'")] };
  for (const raw of text.split(',')) {
    const item = raw.trim();
    if (item === '') {
      errors.add(invalid(path, text, 'empty item in the comma-separated list'));
      continue;
    }
    const parts = item.split('=');
    if (parts.length > 2) {
      errors.add(invalid(path, item, "must be 'key=value' or 'key' (more than one '=')"));
      continue;
    }
    const labelKey = parts[0]!.trim();
    const labelVal = (parts[1] ?? '').trim();
    const keyReasons = qualifiedName(labelKey);
    if (keyReasons.length > 0) {
      errors.add(invalid(path, labelKey, `not a valid label key: ${keyReasons.join('; ')}`));
      continue;
    }
    const valueReasons = labelValue(labelVal);
    if (valueReasons.length > 0) {
      errors.add(invalid(path, labelVal, `not a valid value for label ${labelKey}: ${valueReasons.join('; ')}`));
      continue;
    }
    if (Object.hasOwn(value, labelKey) && value[labelKey] !== labelVal) {
      errors.add(
        duplicate(
          path,
          labelKey,
          `label key given twice with different values (${JSON.stringify(value[labelKey])} and ${JSON.stringify(labelVal)})`,
        ),
      );
    }
    value[labelKey] = labelVal;
  }
  return { value, errors: errors.done(path) };
}

/** The ResourceClaimTemplate name of the explicit-claim path: one object name (a DNS subdomain). */
export function parseClaimTemplate(text: unknown): Parsed<string | undefined> {
  const path = annotationPath(CLAIM_TEMPLATE_ANNOTATION);
  if (text === undefined) return { value: undefined, errors: [] };
  if (typeof text !== 'string') return { value: undefined, errors: [invalid(path, text, 'must be a string')] };
  const name = text.trim();
  const reasons = name === '' ? ['must name a ResourceClaimTemplate'] : dns1123Subdomain(name);
  if (reasons.length > 0)
    return { value: undefined, errors: [invalid(path, text, `not a valid ResourceClaimTemplate name: ${reasons.join('; ')}`)] };
  return { value: name, errors: [] };
}
