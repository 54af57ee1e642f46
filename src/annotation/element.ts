// One element of the extended (JSON) form: keys normalized as Go reads them, structure checked
// by the JSON Schema (schema.ts), then the per-element rules a schema cannot express.
import { child, duplicate, index as at, invalid, required, type FieldError } from '../field/index.js';
import { guidWarning, macWarning } from './hwaddr.js';
import { dns1123SubdomainProblem, gatewayFamily, ipProblem } from './formats.js';
import { canonicalKey, normalizeKeys, type KeyTable } from './keys.js';
import { setData, type JsonPath } from './json-reader.js';
import { schemaErrors } from './schema.js';
import type { Bandwidth, NetworkSelection, PortMapping } from './types.js';

export interface Collector {
  error(e: FieldError): void;
  warning(e: FieldError): void;
}

/** Spec keys in the order the normalized output writes them. */
export const SELECTION_KEYS = [
  'name',
  'namespace',
  'interface',
  'mac',
  'infiniband-guid',
  'ips',
  'default-route',
  'portMappings',
  'bandwidth',
  'cni-args',
  'ipam-claim-reference',
  'deviceID',
] as const;

const ELEMENT_KEYS: KeyTable = { known: SELECTION_KEYS, deprecated: { interfaceRequest: 'interface' }, extensions: true };
const PORT_MAPPING_KEYS: KeyTable = { known: ['hostPort', 'containerPort', 'protocol', 'hostIP'], extensions: false };
const BANDWIDTH_KEYS: KeyTable = { known: ['ingressRate', 'ingressBurst', 'egressRate', 'egressBurst'], extensions: false };

// Optional strings that Go treats as unset when empty (`omitempty`, `!= ""` checks in Multus).
const EMPTY_MEANS_UNSET = ['interface', 'mac', 'infiniband-guid', 'ipam-claim-reference', 'deviceID'] as const;

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

function toRecord(values: Map<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of values) setData(out, k, v);
  return out;
}

const quiet: Collector = { error: () => undefined, warning: () => undefined };

/** Both objects: `next`'s keys over `previous`'s (`__proto__` stays data). */
function overlay(previous: Record<string, unknown>, next: Record<string, unknown>): Record<string, unknown> {
  const merged: Record<string, unknown> = {};
  for (const k of Object.keys(previous)) setData(merged, k, previous[k]);
  for (const k of Object.keys(next)) setData(merged, k, next[k]);
  return merged;
}

/**
 * Go's decoder on a repeated key (what Multus then reads): a map (`cni-args`) or a struct
 * (`bandwidth`) is decoded into the one already there, so keys merge; a slice of struct pointers
 * (`portMappings`) is decoded element by element into the one there, taking the later length;
 * anything else, and null, replaces. `occurrences` are normalized, in document order.
 */
function goMerge(key: string, occurrences: unknown[]): unknown {
  let merged = occurrences[0];
  for (const next of occurrences.slice(1)) {
    if (key === 'portMappings' && Array.isArray(merged) && Array.isArray(next)) {
      const before = merged;
      merged = next.map((m, j) => (isObject(before[j]) && isObject(m) ? overlay(before[j] as Record<string, unknown>, m) : m));
    } else if ((key === 'cni-args' || key === 'bandwidth') && isObject(merged) && isObject(next)) merged = overlay(merged, next);
    else merged = next;
  }
  return merged;
}

/** The JSON type Go's decoder needs for each spec key Multus decodes (it ignores ipam-claim-reference). */
const GO_TYPES: ReadonlyMap<string, 'string' | 'array' | 'object'> = new Map([
  ['name', 'string'],
  ['namespace', 'string'],
  ['interface', 'string'],
  ['mac', 'string'],
  ['infiniband-guid', 'string'],
  ['deviceID', 'string'],
  ['ips', 'array'],
  ['default-route', 'array'],
  ['portMappings', 'array'],
  ['bandwidth', 'object'],
  ['cni-args', 'object'],
] as const);

const jsonType = (v: unknown): string => (Array.isArray(v) ? 'array' : v === null ? 'null' : typeof v === 'object' ? 'object' : typeof v);

/**
 * An earlier value of a repeated key is decoded too: where Go cannot decode it (a wrong type, a
 * default-route entry that is not an IP), the whole annotation fails, although the last value is fine.
 */
function shadowedErrors(path: string, shadowed: Map<string, unknown[]>): FieldError[] {
  const errors: FieldError[] = [];
  for (const [key, earlier] of shadowed) {
    const want = GO_TYPES.get(key);
    if (want === undefined) continue;
    for (const v of earlier) {
      const got = jsonType(v);
      let problem: string | undefined;
      if (got !== want && got !== 'null') problem = `must be a JSON ${want}`;
      else if (key === 'default-route' && Array.isArray(v)) {
        const gw = v.find((g) => g !== null && g !== '' && (typeof g !== 'string' || ipProblem(g) !== undefined));
        if (gw !== undefined) problem = `${JSON.stringify(gw)} is not an IP address`;
      }
      if (problem) {
        errors.push(
          invalid(
            child(path, key),
            v,
            `an earlier value of this repeated key ${problem}: Go's decoder reads every value and fails the whole annotation (Multus fails the pod)`,
          ),
        );
        break;
      }
    }
  }
  return errors;
}

/** Normalizes the keys of portMappings items and bandwidth, so the schema sees spec keys only; merges repeated keys as Go does. */
function normalizeNested(values: Map<string, unknown>, shadowed: Map<string, unknown[]>, path: string, out: Collector): void {
  const mappingsOf = (mappings: unknown, o: Collector): unknown =>
    Array.isArray(mappings)
      ? mappings.map((m, j) =>
          isObject(m) ? toRecord(normalizeKeys(m, PORT_MAPPING_KEYS, at(child(path, 'portMappings'), j), o).values) : m,
        )
      : mappings;
  const bandwidthOf = (bandwidth: unknown, o: Collector): unknown =>
    isObject(bandwidth) ? toRecord(normalizeKeys(bandwidth, BANDWIDTH_KEYS, child(path, 'bandwidth'), o).values) : bandwidth;
  if (values.has('portMappings')) values.set('portMappings', mappingsOf(values.get('portMappings'), out));
  if (values.has('bandwidth')) values.set('bandwidth', bandwidthOf(values.get('bandwidth'), out));
  if (shadowed.size === 0) return;
  for (const key of ['portMappings', 'bandwidth', 'cni-args'] as const) {
    const earlier = shadowed.get(key);
    if (!earlier || !values.has(key)) continue;
    const normalize = key === 'portMappings' ? mappingsOf : key === 'bandwidth' ? bandwidthOf : (v: unknown): unknown => v;
    values.set(key, goMerge(key, [...earlier.map((v) => normalize(v, quiet)), values.get(key)]));
  }
}

/** What the JSON reader noticed inside this element, paths relative to it. */
export interface ElementNotes {
  duplicateKeys: Array<{ path: JsonPath; key: string }>;
  nonIntegerNumbers: Array<{ path: JsonPath; lexeme: string }>;
  outOfRangeNumbers: Array<{ path: JsonPath; lexeme: string }>;
}

// A Map, not an object literal: element keys are the user's, and `toString` or `__proto__` must not
// find Object.prototype's members.
const INTEGER_FIELDS: ReadonlyMap<string, KeyTable> = new Map([
  ['portMappings', PORT_MAPPING_KEYS],
  ['bandwidth', BANDWIDTH_KEYS],
]);

// Keys Go decodes (so a number it cannot read fails the annotation): the rest it skips.
const DECODED_KEYS: ReadonlySet<string> = new Set([...GO_TYPES.keys(), 'interfaceRequest']);

/**
 * Lexical problems: duplicate keys (warnings), numbers Go cannot read, integers written as 8080.0
 * or 1e3. A number out of range fails only where Go decodes it: under a key it skips (an unknown or
 * dotted key) it is a warning, and a dotted key holding one is left out of the selection.
 */
/**
 * Whether a number out of range at `rel` (relative to an element) fails the annotation: under a key
 * Go decodes (cni-args, bandwidth, portMappings...), yes; under an unknown or dotted key Go skips it.
 */
export function outOfRangeIsError(rel: JsonPath): boolean {
  return rel.length === 0 || DECODED_KEYS.has(canonicalKey(ELEMENT_KEYS, String(rel[0])));
}

function lexicalErrors(path: string, notes: ElementNotes, bad: Set<string>, out: Collector): FieldError[] {
  const errors: FieldError[] = [];
  const topKey = (rel: JsonPath): string => canonicalKey(ELEMENT_KEYS, String(rel[0]));
  const nestedPath = (rel: JsonPath): string => {
    // Known nested keys (portMappings[j].hostPort, bandwidth.ingressRate) get their spec spelling.
    const top = topKey(rel);
    const table = INTEGER_FIELDS.get(top);
    let p = child(path, top);
    rel.slice(1).forEach((seg) => {
      p = typeof seg === 'number' ? at(p, seg) : child(p, table ? canonicalKey(table, seg) : seg);
    });
    return p;
  };
  for (const d of notes.duplicateKeys) {
    const where = d.path.length === 0 ? path : nestedPath(d.path);
    const key = d.path.length === 0 ? canonicalKey(ELEMENT_KEYS, d.key) : d.key;
    out.warning(
      duplicate(
        child(where, key),
        d.key,
        'key appears more than once in this object; Multus uses the last value (objects merge, as Go decodes them): write it once',
      ),
    );
  }
  // Paths already reported out of range: a Set, since 41,000 notes fit in one annotation.
  const outOfRange = new Set<string>();
  for (const n of notes.outOfRangeNumbers) {
    const top = topKey(n.path);
    if (outOfRangeIsError(n.path)) {
      const p = nestedPath(n.path);
      outOfRange.add(p);
      errors.push(invalid(p, n.lexeme, 'number out of range: Go (Multus) cannot read it'));
    } else {
      out.warning(
        invalid(
          nestedPath(n.path),
          n.lexeme,
          'number out of range: Go (Multus) skips this key, so the pod runs; left out of the selection',
        ),
      );
    }
    bad.add(top);
  }
  for (const n of notes.nonIntegerNumbers) {
    const top = topKey(n.path);
    const table = INTEGER_FIELDS.get(top);
    const last = n.path[n.path.length - 1];
    const isIntegerField =
      table !== undefined &&
      typeof last === 'string' &&
      table.known.includes(canonicalKey(table, last)) &&
      canonicalKey(table, last) !== 'protocol' &&
      canonicalKey(table, last) !== 'hostIP' &&
      n.path.length === (top === 'portMappings' ? 3 : 2);
    if (!isIntegerField) continue;
    const p = nestedPath(n.path);
    if (outOfRange.has(p)) continue; // out of range already says it
    // The value is shown as written ("8080.0"): Number() would print 8080 and hide the problem.
    errors.push(invalid(p, n.lexeme, 'must be an integer written without a fraction or exponent (Go rejects 8080.0 and 1e3)'));
    bad.add(top);
  }
  return errors;
}

export interface ElementResult {
  /** Undefined when the element does not name a network. */
  selection: NetworkSelection | undefined;
  /** Explicit interface name, when valid (for cross-element rules). */
  interface: string | undefined;
}

/**
 * Validates element `value` at `path`; `namespace` fills an unqualified name. Keys whose values
 * are invalid are left out of the selection; `name` and `namespace` are kept as sent when they
 * are strings, because they identify the network in later messages.
 */
export function checkElement(value: unknown, path: string, namespace: string, out: Collector, notes?: ElementNotes): ElementResult {
  if (!isObject(value)) {
    const reason =
      value === null
        ? 'must be a JSON object, not null (Multus crashes on null elements)'
        : 'must be a JSON object such as {"name": "my-network"}';
    out.error(invalid(path, value, reason));
    return { selection: undefined, interface: undefined };
  }
  const { values, deprecated, shadowed } = normalizeKeys(value, ELEMENT_KEYS, path, out);
  const old = deprecated.get('interface');
  if (old) {
    const hasNew = typeof values.get('interface') === 'string' && values.get('interface') !== '';
    out.warning(
      invalid(
        child(path, old.key),
        old.value,
        hasNew
          ? 'deprecated Multus key, ignored because "interface" is also set'
          : 'deprecated Multus key: Multus still reads it as "interface", and so do we; write "interface"',
      ),
    );
    if (!hasNew && old.value !== '' && old.value !== undefined) values.set('interface', old.value);
  }
  if (values.get('namespace') === '') values.delete('namespace'); // the spec: empty means the pod's namespace
  for (const key of SELECTION_KEYS) {
    // Go decodes null into a field as "leave it unset".
    if (key !== 'name' && values.has(key) && values.get(key) === null) {
      out.warning(invalid(child(path, key), null, 'null, treated as not set (as Multus does)'));
      values.delete(key);
    }
  }
  for (const key of EMPTY_MEANS_UNSET) {
    if (values.get(key) === '') {
      out.warning(invalid(child(path, key), '', 'empty, treated as not set (as Multus does)'));
      values.delete(key);
    }
  }
  const ips = values.get('ips');
  if (Array.isArray(ips) && ips.length === 0) {
    out.warning(
      invalid(
        child(path, 'ips'),
        ips,
        'empty: requests no address, treated as not set (Multus passes an empty IP= that every IPAM ignores)',
      ),
    );
    values.delete('ips');
  }
  normalizeNested(values, shadowed, path, out);

  const normalized = toRecord(values);
  const bad = new Set<string>();
  const reported = new Set<string>();
  for (const e of shadowed.size === 0 ? [] : shadowedErrors(path, shadowed)) {
    out.error(e);
    reported.add(e.path);
  }
  if (notes) {
    for (const e of lexicalErrors(path, notes, bad, out)) {
      out.error(e);
      reported.add(e.path);
    }
  }
  for (const e of schemaErrors(path, normalized)) {
    // A field already reported (an earlier value of a repeated key) is still left out of the selection.
    if (!reported.has(e.path)) out.error(e);
    const rest = e.path.slice(path.length + 1);
    bad.add(SELECTION_KEYS.find((k) => rest === k || rest.startsWith(`${k}.`) || rest.startsWith(`${k}[`)) ?? rest);
  }
  for (const e of elementRules(path, values, bad)) out.error(e);
  for (const w of elementWarnings(path, values, bad)) out.warning(w);

  const name = values.get('name');
  if (typeof name !== 'string' || name === '') return { selection: undefined, interface: undefined };
  const ns = values.get('namespace');
  const selection: NetworkSelection = { name, namespace: typeof ns === 'string' ? ns : namespace };
  const sel = selection as unknown as Record<string, unknown>;
  for (const key of SELECTION_KEYS) {
    if (key === 'name' || key === 'namespace' || bad.has(key) || !values.has(key)) continue;
    sel[key] = values.get(key);
  }
  for (const [key, v] of values) if (key.includes('.') && !bad.has(key)) setData(sel, key, v);
  return { selection, interface: bad.has('interface') ? undefined : (values.get('interface') as string | undefined) };
}

/** Rules on one element that the schema cannot express; `bad` holds keys that already failed. */
function elementRules(path: string, values: Map<string, unknown>, bad: Set<string>): FieldError[] {
  const errors: FieldError[] = [];
  const ips = values.get('ips');
  if (Array.isArray(ips) && !bad.has('ips')) {
    const seen = new Set<string>();
    ips.forEach((ip: string, j) => {
      if (seen.has(ip)) errors.push(duplicate(at(child(path, 'ips'), j), ip));
      seen.add(ip);
    });
  }
  const routes = values.get('default-route');
  if (Array.isArray(routes) && !bad.has('default-route')) {
    const first: Partial<Record<4 | 6, number>> = {};
    routes.forEach((gw: string, j) => {
      const family = gatewayFamily(gw);
      if (family === undefined) return;
      const k = first[family];
      if (k !== undefined) {
        errors.push(
          invalid(
            at(child(path, 'default-route'), j),
            gw,
            `only one IPv${family} gateway is allowed (default-route[${k}] is one already; Multus counts an IPv4-mapped IPv6 address as IPv4)`,
          ),
        );
        bad.add('default-route');
      } else first[family] = j;
    });
  }
  const bandwidth = values.get('bandwidth') as Bandwidth | undefined;
  if (isObject(bandwidth) && !bad.has('bandwidth')) {
    for (const dir of ['ingress', 'egress'] as const) {
      if (bandwidth[`${dir}Burst`] !== undefined && bandwidth[`${dir}Rate`] === undefined) {
        errors.push(required(child(child(path, 'bandwidth'), `${dir}Rate`), `${dir}Burst needs ${dir}Rate`));
        bad.add('bandwidth');
      }
    }
  }
  return errors;
}

function elementWarnings(path: string, values: Map<string, unknown>, bad: Set<string>): FieldError[] {
  const warnings: FieldError[] = [];
  // Multus's own selection type has no ipam-claim-reference: it ignores the key, so the pod runs
  // (unless the CNI reads the claim itself, which the NAD tells; the admission checks judge that).
  const claim = values.get('ipam-claim-reference');
  if (values.has('ipam-claim-reference')) {
    const problem = typeof claim !== 'string' ? 'must be a string (an IPAMClaim name)' : dns1123SubdomainProblem(claim);
    if (problem) warnings.push(invalid(child(path, 'ipam-claim-reference'), claim, `${problem}; Multus ignores this key`));
    if (typeof claim !== 'string') bad.add('ipam-claim-reference');
    if (values.has('ips') && !bad.has('ips')) {
      warnings.push(
        invalid(
          child(path, 'ips'),
          values.get('ips'),
          'set together with ipam-claim-reference, which the spec forbids (v1.3): Multus ignores the claim and passes the ips; a CNI that reads the claim decides',
        ),
      );
    }
  }
  const guid = values.get('infiniband-guid');
  if (typeof guid === 'string' && !bad.has('infiniband-guid')) {
    const w = guidWarning(guid);
    if (w) warnings.push(invalid(child(path, 'infiniband-guid'), guid, w));
  }
  const mac = values.get('mac');
  if (typeof mac === 'string' && !bad.has('mac')) {
    const w = macWarning(mac);
    if (w) warnings.push(invalid(child(path, 'mac'), mac, w));
  }
  const routes = values.get('default-route');
  if (Array.isArray(routes) && routes.length === 0 && !bad.has('default-route')) {
    warnings.push(invalid(child(path, 'default-route'), routes, 'empty: names no gateway'));
  }
  const bandwidth = values.get('bandwidth') as Bandwidth | undefined;
  if (isObject(bandwidth) && !bad.has('bandwidth')) {
    for (const dir of ['ingress', 'egress'] as const) {
      if (bandwidth[`${dir}Rate`] !== undefined && bandwidth[`${dir}Burst`] === undefined) {
        warnings.push(
          invalid(
            child(child(path, 'bandwidth'), `${dir}Rate`),
            bandwidth[`${dir}Rate`],
            `set without ${dir}Burst: the CNI bandwidth plugin rejects a rate without a burst`,
          ),
        );
      }
    }
  }
  return warnings;
}

export type { PortMapping };
