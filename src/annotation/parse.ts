// The annotation parser: detects the format as Multus does, parses every element, applies the
// cross-element rules, and collects every problem (never only the first; never throws).
import { child, index as at, invalid, key, tooMany, type FieldError } from '../field/index.js';
import { checkAcross } from './cross.js';
import { checkElement, outOfRangeIsError, type Collector, type ElementNotes } from './element.js';
import { readJson, type JsonNotes } from './json-reader.js';
import { parseSimpleItem } from './simple.js';
import { goTrimSpace } from './formats.js';
import {
  DEFAULT_NETWORK_ANNOTATION,
  NETWORKS_ANNOTATION,
  type AnnotationFormat,
  type DefaultNetworkOptions,
  type ParsedNetwork,
  type ParseOptions,
  type ParseResult,
} from './types.js';

/** At most this many errors (and as many warnings) are listed; one more entry says how many were left out. */
export const MAX_PROBLEMS = 100;
export const DEFAULT_MULTUS_NAMESPACE = 'kube-system';
/**
 * Elements beyond this many are counted but not validated: it bounds the work on a 256 KiB
 * value, and no pod needs a thousand secondary interfaces.
 */
export const MAX_ELEMENTS = 1000;

class Problems implements Collector {
  readonly errors: FieldError[] = [];
  readonly warnings: FieldError[] = [];
  private droppedErrors = 0;
  private droppedWarnings = 0;

  error(e: FieldError): void {
    if (this.errors.length < MAX_PROBLEMS) this.errors.push(e);
    else this.droppedErrors++;
  }

  /** Problems known to exist that were not built, because the list is already full. */
  unlisted(n: { errors: number; warnings: number } | undefined): void {
    if (!n) return;
    this.droppedErrors += n.errors;
    this.droppedWarnings += n.warnings;
  }

  warning(w: FieldError): void {
    if (this.warnings.length < MAX_PROBLEMS) this.warnings.push(w);
    else this.droppedWarnings++;
  }

  finish(path: string): void {
    const more = (n: number, what: string): FieldError => ({
      path,
      type: 'Too many',
      value: n,
      reason: `${n} more ${what} not listed (only the first ${MAX_PROBLEMS} are)`,
    });
    if (this.droppedErrors > 0) this.errors.push(more(this.droppedErrors, 'errors'));
    if (this.droppedWarnings > 0) this.warnings.push(more(this.droppedWarnings, 'warnings'));
  }
}

/**
 * Multus's rule: JSON when the value contains any of `[`, `{`, `"`; only the empty string means no
 * attachments (a blank value is the simple form, one item with an empty name).
 */
export function detectFormat(value: string): AnnotationFormat {
  if (value === '') return 'empty';
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c === 91 || c === 123 || c === 34) return 'json';
  }
  return 'simple';
}

/**
 * The reader's notes split by element, paths made relative to it. One pass over the notes: filtering
 * them again for every element was quadratic (1,000 elements and 41,000 notes took 0.9 s).
 * Duplicate keys and out-of-range numbers each make one error: past MAX_PROBLEMS of one kind under
 * one key of an element the list of errors is full anyway, so the rest are only counted (`unlisted`).
 */
function notesByElement(notes: JsonNotes): {
  byElement: Map<number, ElementNotes>;
  unlisted: Map<number, { errors: number; warnings: number }>;
} {
  const byElement = new Map<number, ElementNotes>();
  const unlisted = new Map<number, { errors: number; warnings: number }>();
  const add = <K extends keyof ElementNotes>(kind: K, capped: boolean) => {
    const perKey = new Map<number, Map<string | number | undefined, number>>();
    for (const n of notes[kind]) {
      // A duplicate key directly in element i has path [i]; deeper ones [i, ...]. Top-level ones are reported apart.
      const i = n.path[0];
      if (typeof i !== 'number') continue;
      if (capped) {
        let keys = perKey.get(i);
        if (!keys) perKey.set(i, (keys = new Map()));
        const seen = (keys.get(n.path[1]) ?? 0) + 1;
        keys.set(n.path[1], seen);
        if (seen > MAX_PROBLEMS) {
          // Counted as the listed ones under the same key are reported: duplicate keys warn (Go
          // takes the last), numbers out of range fail only under a key Go decodes.
          let u = unlisted.get(i);
          if (!u) unlisted.set(i, (u = { errors: 0, warnings: 0 }));
          if (kind === 'outOfRangeNumbers' && outOfRangeIsError(n.path.slice(1))) u.errors++;
          else u.warnings++;
          continue;
        }
      }
      let mine = byElement.get(i);
      if (!mine) byElement.set(i, (mine = { duplicateKeys: [], nonIntegerNumbers: [], outOfRangeNumbers: [] }));
      (mine[kind] as Array<typeof n>).push({ ...n, path: n.path.slice(1) });
    }
  };
  add('duplicateKeys', true);
  add('nonIntegerNumbers', false);
  add('outOfRangeNumbers', true);
  return { byElement, unlisted };
}

const NO_NOTES: ElementNotes = { duplicateKeys: [], nonIntegerNumbers: [], outOfRangeNumbers: [] };

function countChar(text: string, ch: string, from: number): number {
  let n = 0;
  for (let i = text.indexOf(ch, from); i >= 0; i = text.indexOf(ch, i + 1)) n++;
  return n;
}

function near(text: string, offset: number): string {
  const from = Math.max(0, offset - 10);
  return JSON.stringify(text.slice(from, offset + 10));
}

const BLANK = 'blank: Multus reads it as one network with an empty name, and the pod fails to start';

/**
 * The result, and how many elements the list has (undefined when it could not be read as a list).
 * `defaultNetwork`: the value replaces the cluster network, so its interface is eth0.
 */
function parseAnnotation(
  value: string,
  namespace: string,
  path: string,
  defaultNetwork = false,
): { result: ParseResult; count: number | undefined } {
  const problems = new Problems();
  const networks: ParsedNetwork[] = [];
  const interfaces = new Map<number, string>();
  let count: number | undefined;
  const format = typeof value === 'string' ? detectFormat(value) : 'json';

  if (typeof value !== 'string') {
    problems.error(invalid(path, value, 'must be a string'));
  } else if (format === 'simple' && goTrimSpace(value) === '') {
    problems.error(
      invalid(
        path,
        value,
        `${BLANK} (${defaultNetwork ? 'remove the annotation for no override' : 'remove the annotation, or set it to "", for no attachments'})`,
      ),
    );
    count = 1;
  } else if (format === 'simple') {
    let start = 0;
    let i = 0;
    for (; i < MAX_ELEMENTS; i++) {
      const comma = value.indexOf(',', start);
      const item = parseSimpleItem(comma < 0 ? value.slice(start) : value.slice(start, comma), i, path, namespace, problems);
      if (item.selection) networks.push({ index: i, path: item.path, selection: item.selection });
      if (item.interface !== undefined) interfaces.set(i, item.interface);
      if (comma < 0) break;
      start = comma + 1;
    }
    count = i < MAX_ELEMENTS ? i + 1 : i + countChar(value, ',', start) + 1;
  } else if (format === 'json') {
    const read = readJson(value);
    if (!read.ok) {
      problems.error(invalid(path, value, `invalid JSON at offset ${read.offset} (near ${near(value, read.offset)}): ${read.reason}`));
    } else if (!Array.isArray(read.value)) {
      const bare = read.value !== null && typeof read.value === 'object';
      problems.error(
        invalid(
          path,
          value,
          bare
            ? 'must be a JSON array of objects: wrap a single object in [ ] (Multus rejects a bare object too)'
            : 'must be a JSON array of objects',
        ),
      );
    } else {
      const elements = read.value;
      count = elements.length;
      const hasNotes = read.notes.duplicateKeys.length + read.notes.nonIntegerNumbers.length + read.notes.outOfRangeNumbers.length > 0;
      const notes = hasNotes ? notesByElement(read.notes) : undefined;
      elements.slice(0, MAX_ELEMENTS).forEach((element, i) => {
        const elementPath = at(path, i);
        const r = checkElement(element, elementPath, namespace, problems, notes ? (notes.byElement.get(i) ?? NO_NOTES) : undefined);
        problems.unlisted(notes?.unlisted.get(i));
        if (r.selection) networks.push({ index: i, path: elementPath, selection: r.selection });
        if (r.interface !== undefined) interfaces.set(i, r.interface);
      });
    }
  }
  if (format === 'empty') count = 0;
  if (count !== undefined && count > MAX_ELEMENTS) {
    problems.error(tooMany(path, count, MAX_ELEMENTS));
  }
  checkAcross({ count: count ?? 0, interfaces, networks, defaultNetwork }, problems);
  problems.finish(path);
  return { result: { format, networks, errors: problems.errors, warnings: problems.warnings }, count };
}

/** Parses and validates a `k8s.v1.cni.cncf.io/networks` value; unqualified names resolve in `namespace`. */
export function parseNetworks(value: string, options: ParseOptions): ParseResult {
  return parseAnnotation(value, options.namespace, options.path ?? key('metadata.annotations', NETWORKS_ANNOTATION)).result;
}

/**
 * Parses and validates a `v1.multus-cni.io/default-network` value: exactly one element; an
 * unqualified name resolves in Multus's namespace. Multus reads the annotation whenever it is
 * present, so an empty value fails the pod as much as a bad one: only its absence means no override.
 */
export function parseDefaultNetwork(value: string, options: DefaultNetworkOptions = {}): ParseResult {
  const path = options.path ?? key('metadata.annotations', DEFAULT_NETWORK_ANNOTATION);
  const { result, count } = parseAnnotation(value, options.defaultNamespace ?? DEFAULT_MULTUS_NAMESPACE, path, true);
  if (result.format === 'empty') {
    result.errors.unshift(
      invalid(path, value, 'empty: Multus cannot parse it and the pod fails to start (remove the annotation for no override)'),
    );
  } else if (count !== undefined && count !== 1) {
    result.errors.unshift(invalid(path, value, `must select exactly one network, not ${count} (it replaces the cluster default network)`));
  }
  const chosen = result.networks[0];
  const ifname = chosen?.selection.interface;
  if (chosen && ifname !== undefined && ifname !== 'eth0') {
    result.warnings.push(
      invalid(
        child(chosen.path, 'interface'),
        ifname,
        "Multus names the default network's interface as requested, not eth0; the container runtime expects eth0 and may not find the pod's address (remove it, or use eth0)",
      ),
    );
  }
  return result;
}
