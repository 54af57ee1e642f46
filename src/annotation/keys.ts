// Key normalization, matching how Go's encoding/json (and so Multus) reads the annotation:
// a key matches a field exactly or, failing that, case-insensitively (with Go's folding, where
// `ſ` folds to `s` and the Kelvin sign to `k`). We honour such matches but warn; we drop unknown
// dot-less keys with a warning (reserved by the spec, ignored by Multus) and keep dotted
// (reverse-DNS) extension keys.
import { child, duplicate, type FieldError } from '../field/index.js';
import { entriesOf } from './json-reader.js';

/** Go's key folding for the ASCII field names we know: upper-case ASCII, `ſ` -> S, Kelvin sign -> K. */
export function goFold(key: string): string {
  let out = '';
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    if (c >= 97 && c <= 122) out += String.fromCharCode(c - 32);
    else if (c === 0x17f) out += 'S';
    else if (c === 0x212a) out += 'K';
    else out += key[i];
  }
  return out;
}

export interface KeyTable {
  /** Spec keys, exactly spelled. */
  known: readonly string[];
  /** Keys Multus still reads but that are not the spec's: old name -> spec key. */
  deprecated?: Readonly<Record<string, string>>;
  /** Whether dotted keys are extensions (kept) rather than unknown. */
  extensions: boolean;
}

export interface NormalizedKeys {
  /** Spec keys (and extensions) with their values, in document order; the last duplicate wins, as in Go. */
  values: Map<string, unknown>;
  /** Values of deprecated keys, by the spec key they stand for. */
  deprecated: Map<string, { key: string; value: unknown }>;
  /** Earlier values of a repeated key (exactly or by case folding), in document order; empty when no key repeats. */
  shadowed: Map<string, unknown[]>;
}

interface Collector {
  error(e: FieldError): void;
  warning(e: FieldError): void;
}

interface FoldedIndex {
  byFold: Map<string, string>;
  /** The longest key of the table: folding keeps a key's length, so a longer key matches none. */
  longest: number;
}

const foldedTables = new WeakMap<KeyTable, FoldedIndex>();

function foldedIndex(table: KeyTable): FoldedIndex {
  let index = foldedTables.get(table);
  if (!index) {
    const byFold = new Map<string, string>();
    for (const k of table.known) byFold.set(goFold(k), k);
    for (const k of Object.keys(table.deprecated ?? {})) byFold.set(goFold(k), k);
    index = { byFold, longest: Math.max(...[...byFold.keys()].map((k) => k.length)) };
    foldedTables.set(table, index);
  }
  return index;
}

/**
 * The table's key that `key` folds to, if any. A key longer than every table key is not folded at
 * all: folding a 200 KB key for each of its 100 notes took seconds.
 */
function foldedMatch(table: KeyTable, key: string): string | undefined {
  const index = foldedIndex(table);
  return key.length > index.longest ? undefined : index.byFold.get(goFold(key));
}

/**
 * Maps an object's keys onto the table, in document order (repeats included, as the reader saw
 * them). Duplicates that the reader saw exactly are reported by the caller; duplicates that only
 * Go's case folding creates (`mac` and `MAC`) are reported here. Both are warnings: Multus reads
 * the value as Go's decoder leaves it (the caller merges maps and structs, see `shadowed`).
 */
export function normalizeKeys(obj: Record<string, unknown>, table: KeyTable, path: string, out: Collector): NormalizedKeys {
  const values = new Map<string, unknown>();
  const deprecated = new Map<string, { key: string; value: unknown }>();
  const shadowed = new Map<string, unknown[]>();
  const spelled = new Map<string, string>(); // canonical -> spelling first seen
  const known = table.known;
  const entries = entriesOf(obj);
  const keys = entries ? undefined : Object.keys(obj);
  const n = entries ? entries.length : keys!.length;
  for (let i = 0; i < n; i++) {
    const key = entries ? entries[i]![0] : keys![i]!;
    const value = entries ? entries[i]![1] : obj[key];
    let canonical: string | undefined;
    if (known.includes(key)) canonical = key;
    else if (table.extensions && key.includes('.')) {
      values.set(key, value);
      continue;
    } else {
      canonical = foldedMatch(table, key);
      if (canonical === undefined) {
        out.warning({
          path: child(path, key),
          type: 'Invalid value',
          value,
          reason: table.extensions
            ? 'unknown key, ignored: keys without a dot are reserved by the spec (Multus ignores unknown keys; extensions use reverse-DNS keys such as example.com/key)'
            : 'unknown key, ignored (Multus ignores unknown keys)',
        });
        continue;
      }
      if (canonical !== key) {
        out.warning({
          path: child(path, key),
          type: 'Invalid value',
          value,
          reason: `key matches ${JSON.stringify(canonical)} only case-insensitively; Multus (Go's encoding/json) honours it, and so do we: write ${JSON.stringify(canonical)}`,
        });
      }
    }
    const first = spelled.get(canonical);
    if (first !== undefined && first !== key) {
      out.warning(
        duplicate(
          child(path, canonical),
          key,
          `${JSON.stringify(key)} and ${JSON.stringify(first)} name the same key; Multus reads them as one (the later value wins, objects merge): write it once`,
        ),
      );
    }
    if (first === undefined) spelled.set(canonical, key);
    const target = table.deprecated && Object.hasOwn(table.deprecated, canonical) ? table.deprecated[canonical] : undefined;
    if (target !== undefined) deprecated.set(target, { key: canonical, value });
    else {
      if (values.has(canonical)) {
        const earlier = shadowed.get(canonical);
        if (earlier) earlier.push(values.get(canonical));
        else shadowed.set(canonical, [values.get(canonical)]);
      }
      values.set(canonical, value);
    }
  }
  return { values, deprecated, shadowed };
}

/** The spec key that `key` stands for under the table (exact or Go-folded), or `key` itself. */
export function canonicalKey(table: KeyTable, key: string): string {
  if (table.known.includes(key)) return key;
  return foldedMatch(table, key) ?? key;
}
