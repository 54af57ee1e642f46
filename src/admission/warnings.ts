// Warnings within the apiserver's limits: each becomes a `Warning: 299` header that kubectl
// prints on one line; the apiserver keeps 4096 characters of them per request, and past that cuts
// each to 256. A warning's reason (what is wrong, what to do) is what a cut must spare.
import { headOf, renderError, renderValue, type FieldError } from '../field/index.js';

/**
 * A warning's length where its point fits: one terminal line, and what the AdmissionResponse API
 * asks for "if possible".
 */
export const MAX_WARNING_LENGTH = 120;
/**
 * A warning's length where the point does not fit 120. Past 4096 characters of warnings in one
 * request (theirs and every other webhook's), the apiserver cuts each to 256 runes
 * (k8s.io/apiserver endpoints/filters/warning.go): a warning within 256 is never cut by it.
 */
export const MAX_WARNING_LONG = 256;
export const MAX_WARNINGS_TOTAL = 4096;
/**
 * Warnings in one response, the summary line included. The character budget above already keeps
 * the bytes small; this keeps a flood of tiny ones (one per MAC of a 1,000-address pod) to a list
 * kubectl can print. Real responses carry a handful.
 */
export const MAX_WARNINGS = 64;

const ELLIPSIS = '...';
const VALUELESS = new Set(['Required value', 'Forbidden', 'Internal error', 'Too many']);
/** What a shortened value keeps: enough to recognise it. */
const MIN_VALUE = 12;
/** A path longer than this (a CronJob template's, a long key) keeps its start and its end. */
const MAX_PATH = 96;

// headOf: a cut never leaves half a surrogate pair (an emoji in a value), which JSON would carry
// as a lone escape the apiserver turns into U+FFFD.
const cut = (text: string, max: number): string =>
  text.length <= max ? text : `${headOf(text, Math.max(0, max - ELLIPSIS.length))}${ELLIPSIS}`;

/** The start and the end of a long path: the end names the element and the key. */
function cutMiddle(path: string, max: number): string {
  if (path.length <= max) return path;
  const keep = max - ELLIPSIS.length;
  const head = headOf(path, Math.ceil(keep * 0.4));
  let tail = path.slice(path.length - (keep - head.length));
  if (/^[\udc00-\udfff]/.test(tail)) tail = tail.slice(1); // never the low half of a pair
  return `${head}${ELLIPSIS}${tail}`;
}

/**
 * A field error as a warning whose reason survives: whole when it fits `line` characters;
 * otherwise the value is shortened first (to 12 characters if need be) to fit `line`, and where
 * the reason still does not fit it may use up to `max`; only past `max` does a long path lose its
 * middle, and last the reason its end. The reason is where netattach says what is wrong and what
 * to do; a value can be read in the object and a path is recognised by its ends.
 */
export function renderWarning(e: FieldError, line = MAX_WARNING_LENGTH, max = Math.max(line, MAX_WARNING_LONG)): string {
  const full = renderError(e);
  if (full.length <= line) return full;
  const reason = e.reason ? `: ${e.reason}` : '';
  const compose = (path: string): string => {
    const head = `${path}: ${e.type}`;
    if (VALUELESS.has(e.type)) return `${head}${reason}`;
    const budget = Math.max(MIN_VALUE, line - head.length - reason.length - 2);
    return `${head}: ${cut(renderValue(e.value), budget)}${reason}`;
  };
  const shortened = compose(e.path);
  if (shortened.length <= max) return shortened;
  return cut(compose(cutMiddle(e.path, MAX_PATH)), max);
}

/** A warning that is not a field error: `path: text` (only `text` when the path is empty). */
export interface Note {
  path: string;
  text: string;
}

const noteText = (n: Note): string => (n.path ? `${n.path}: ${n.text}` : n.text);

/**
 * `path: text`, whole when it fits `line` characters or, the point being longer, `max`; past
 * that a long path loses its middle, then the text its end.
 */
export function renderNote(n: Note, line = MAX_WARNING_LENGTH, max = Math.max(line, MAX_WARNING_LONG)): string {
  const whole = noteText(n);
  if (whole.length <= max) return whole;
  return cut(noteText({ path: cutMiddle(n.path, MAX_PATH), text: n.text }), max);
}

/**
 * A warning as data: a field error (a Warn finding, a problem an UPDATE may keep) or a note. It is
 * cut to what kubectl shows on a line only in the response; logs and `netattach check` show it whole.
 */
export type Warning = { readonly field: FieldError } | { readonly note: Note };

/** The whole text of a warning. */
export const warningText = (w: Warning): string => ('field' in w ? renderError(w.field) : noteText(w.note));

/** A warning as the response carries it: within `line` characters where its point fits, else `max`. */
export const shortWarning = (w: Warning, line = MAX_WARNING_LENGTH, max = Math.max(line, MAX_WARNING_LONG)): string =>
  'field' in w ? renderWarning(w.field, line, max) : renderNote(w.note, line, max);

/** The response's warnings: each cut to a line, then deduplicated and fitted to the apiserver's budget. */
export const responseWarnings = (warnings: readonly Warning[]): string[] => limitWarnings(warnings.map((w) => shortWarning(w)));

/** A plain-text warning cut to the limit the apiserver never cuts (last resort; the core renders short ones). */
export const fitWarning = (text: string): string => cut(text.replace(/^warning:\s*/i, ''), MAX_WARNING_LONG);

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

/** Elements named in a merged warning; the rest are counted. */
export const MAX_MERGED_NAMED = 5;

const INDEX = /\[\d+\]/g;

/** `path` with every list index blanked: warnings of the same cause on different elements share it. */
const pathPattern = (path: string): string => path.replace(INDEX, '[]');

/** The indices of `path` that differ from `first`'s (same pattern), e.g. `[2]` or `[1][0]`. */
function differingIndices(first: string, path: string): string {
  const a = first.match(INDEX) ?? [];
  const b = path.match(INDEX) ?? [];
  return b.filter((ix, i) => ix !== a[i]).join('') || path;
}

function causeOf(w: Warning): string {
  if ('field' in w) return `f\0${w.field.type}\0${w.field.reason}\0${pathPattern(w.field.path)}`;
  return `n\0${w.note.text}\0${pathPattern(w.note.path)}`;
}

/**
 * One warning per cause: warnings alike but for the list element they are on (the same unknown
 * key on every selection element of a chart) become the first one, its path naming the other
 * elements (`[0].gateway (and [1], [2])`, at most MAX_MERGED_NAMED, the rest counted). Order is
 * kept (the first occurrence's place); exact repeats are dropped.
 */
export function mergeSameCause(warnings: readonly Warning[]): Warning[] {
  const groups = new Map<string, Warning[]>();
  for (const w of warnings) {
    const cause = causeOf(w);
    const group = groups.get(cause);
    if (group) group.push(w);
    else groups.set(cause, [w]);
  }
  const out: Warning[] = [];
  for (const group of groups.values()) {
    const first = group[0]!;
    const firstPath = 'field' in first ? first.field.path : first.note.path;
    const others = [
      ...new Set(
        group
          .slice(1)
          .map((w) => ('field' in w ? w.field.path : w.note.path))
          .filter((p) => p !== firstPath),
      ),
    ];
    if (others.length === 0) {
      out.push(first);
      continue;
    }
    const named = others.slice(0, MAX_MERGED_NAMED).map((p) => differingIndices(firstPath, p));
    const more = others.length - named.length;
    // On the path, not the reason: a long reason loses its end when cut, a path keeps both ends.
    const path = `${firstPath} (and ${named.join(', ')}${more > 0 ? `, ${more} more` : ''})`;
    out.push('field' in first ? { field: { ...first.field, path } } : { note: { ...first.note, path } });
  }
  return out;
}
