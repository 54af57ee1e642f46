// Field errors in the shape and wording of k8s.io/apimachinery/pkg/util/validation/field,
// so that kubectl users read netattach's messages the way they read the apiserver's own.
import { cutText } from './text.js';

export type FieldErrorType =
  | 'Required value'
  | 'Invalid value'
  | 'Unsupported value'
  | 'Duplicate value'
  | 'Forbidden'
  | 'Too long'
  | 'Too many'
  | 'Not found'
  | 'Internal error';

export interface FieldError {
  /** Field path, e.g. `metadata.annotations[k8s.v1.cni.cncf.io/networks][1].mac`. */
  path: string;
  type: FieldErrorType;
  /** The offending value as the user sent it; absent when the type takes none (Required, Forbidden). */
  value?: unknown;
  /** Why it is wrong, for a person. */
  reason: string;
}

// Types whose Kubernetes rendering omits the value.
const VALUELESS: ReadonlySet<FieldErrorType> = new Set(['Required value', 'Forbidden', 'Internal error', 'Too many']);

export const required = (path: string, reason = ''): FieldError => ({ path, type: 'Required value', reason });
export const invalid = (path: string, value: unknown, reason: string): FieldError => ({ path, type: 'Invalid value', value, reason });
export const unsupported = (path: string, value: unknown, supported: readonly string[], reason = ''): FieldError => ({
  path,
  type: 'Unsupported value',
  value,
  reason: reason || `supported values: ${supported.map((s) => JSON.stringify(s)).join(', ')}`,
});
export const duplicate = (path: string, value: unknown, reason = ''): FieldError => ({ path, type: 'Duplicate value', value, reason });
export const forbidden = (path: string, reason: string): FieldError => ({ path, type: 'Forbidden', reason });
export const tooLong = (path: string, value: unknown, max: number): FieldError => ({
  path,
  type: 'Too long',
  value,
  reason: `may not be more than ${max} bytes`,
});
export const tooMany = (path: string, actual: number, max: number): FieldError => ({
  path,
  type: 'Too many',
  value: actual,
  reason: `must have at most ${max} items`,
});
export const notFound = (path: string, value: unknown, reason = ''): FieldError => ({ path, type: 'Not found', value, reason });
export const internal = (path: string, reason: string): FieldError => ({ path, type: 'Internal error', reason });

/**
 * Characters of a path kept in a message. Paths are built with each key cut (path.ts), but a deep
 * one (64 levels of long keys) still would not be short; a real one is under 200.
 */
export const MAX_RENDERED_PATH = 512;
/**
 * Characters of a reason kept in a message. Ours are under 400; a reason that quotes the sender
 * (an item of the simple form, say) is cut.
 */
export const MAX_RENDERED_REASON = 1024;

/** Renders a value like apimachinery does: strings quoted, numbers and booleans bare, others as JSON. */
export function renderValue(value: unknown): string {
  let text: string;
  if (typeof value === 'string') text = JSON.stringify(value);
  else if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') text = String(value);
  else if (value === null) text = 'null';
  else if (value === undefined) text = '<nil>';
  else {
    try {
      text = JSON.stringify(value) ?? String(value);
    } catch {
      text = String(value);
    }
  }
  return cutText(text);
}

/** `path: Type: "value": reason`, exactly as `field.Error.Error()` renders. */
export function renderError(e: FieldError): string {
  let out = `${cutText(e.path, MAX_RENDERED_PATH)}: ${e.type}`;
  if (!VALUELESS.has(e.type)) out += `: ${renderValue(e.value)}`;
  if (e.reason) out += `: ${cutText(e.reason, MAX_RENDERED_REASON)}`;
  return out;
}

/** Several errors in one message, the way `ErrorList.ToAggregate()` joins them. */
export function renderErrors(errors: readonly FieldError[]): string {
  if (errors.length === 1) return renderError(errors[0]!);
  return `[${errors.map(renderError).join(', ')}]`;
}
