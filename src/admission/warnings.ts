// Warnings within the apiserver's limits: each becomes a `Warning: 299` header that kubectl
// prints on one line; the apiserver keeps 4096 characters of them per request.
import { headOf, renderError, renderValue, type FieldError } from '../field/index.js';

export const MAX_WARNING_LENGTH = 120;
export const MAX_WARNINGS_TOTAL = 4096;
/**
 * Warnings in one response, the summary line included. The character budget above already keeps
 * the bytes small; this keeps a flood of tiny ones (one per MAC of a 1,000-address pod) to a list
 * kubectl can print. Real responses carry a handful.
 */
export const MAX_WARNINGS = 64;

const ELLIPSIS = '...';
const VALUELESS = new Set(['Required value', 'Forbidden', 'Internal error', 'Too many']);

// headOf: a cut never leaves half a surrogate pair (an emoji in a value), which JSON would carry
// as a lone escape the apiserver turns into U+FFFD.
const cut = (text: string, max: number): string =>
  text.length <= max ? text : `${headOf(text, Math.max(0, max - ELLIPSIS.length))}${ELLIPSIS}`;

/**
 * A field error as a warning of at most `max` characters. The path is what the reader needs to
 * find the problem, so the value is shortened first, then the reason; the path only if it alone
 * is too long.
 */
export function renderWarning(e: FieldError, max = MAX_WARNING_LENGTH): string {
  const full = renderError(e);
  if (full.length <= max) return full;
  const head = `${e.path}: ${e.type}`;
  const reason = e.reason ? `: ${e.reason}` : '';
  let value = '';
  if (!VALUELESS.has(e.type)) {
    // Keep enough of the value to recognise it, but let a long value give way to the reason.
    const budget = Math.max(12, max - head.length - reason.length - 2);
    value = `: ${cut(renderValue(e.value), budget)}`;
  }
  return cut(`${head}${value}${reason}`, max);
}

/** A warning that is not a field error: `path: text` (only `text` when the path is empty). */
export interface Note {
  path: string;
  text: string;
}

const noteText = (n: Note): string => (n.path ? `${n.path}: ${n.text}` : n.text);

/** `path: text` within `max` characters, the text shortened rather than the path. */
export const renderNote = (n: Note, max = MAX_WARNING_LENGTH): string => cut(noteText(n), max);

/**
 * A warning as data: a field error (a Warn finding, a problem an UPDATE may keep) or a note. It is
 * cut to what kubectl shows on a line only in the response; logs and `netattach check` show it whole.
 */
export type Warning = { readonly field: FieldError } | { readonly note: Note };

/** The whole text of a warning. */
export const warningText = (w: Warning): string => ('field' in w ? renderError(w.field) : noteText(w.note));

/** A warning within `max` characters, as the response carries it. */
export const shortWarning = (w: Warning, max = MAX_WARNING_LENGTH): string => ('field' in w ? renderWarning(w.field, max) : renderNote(w.note, max));

/** The response's warnings: each cut to a line, then deduplicated and fitted to the apiserver's budget. */
export const responseWarnings = (warnings: readonly Warning[]): string[] => limitWarnings(warnings.map((w) => shortWarning(w)));

/** A plain-text warning cut to the per-warning limit (last resort; the core renders short ones). */
export const fitWarning = (text: string): string => cut(text.replace(/^warning:\s*/i, ''), MAX_WARNING_LENGTH);

/**
 * The warnings to send: deduplicated, each within the per-warning limit, and in all within the
 * apiserver's budget, the overflow summarized as a final "and N more warnings".
 */
export function limitWarnings(warnings: readonly string[]): string[] {
  const unique = [...new Set(warnings.map(fitWarning))].filter((w) => w.length > 0);
  const out: string[] = [];
  let total = 0;
  for (let i = 0; i < unique.length; i++) {
    const w = unique[i]!;
    const rest = unique.length - i - 1;
    // Reserve room for the summary line unless this is the last warning.
    const reserve = rest > 0 ? summary(rest + 1).length : 0;
    if (total + w.length + reserve > MAX_WARNINGS_TOTAL || (rest > 0 && out.length === MAX_WARNINGS - 1)) {
      out.push(summary(unique.length - i));
      return out;
    }
    out.push(w);
    total += w.length;
  }
  return out;
}

const summary = (n: number): string => `and ${n} more warning${n === 1 ? '' : 's'} (not shown: too many)`;
