// A small JSON reader for the extended form. JSON.parse cannot be used: it hides how a number
// was written (`8080.0`, `1e3` are not integers for Go's encoding/json) and silently keeps the
// last of duplicate keys. One pass over the text, recursion bounded by MAX_DEPTH, no regex.

export type JsonPath = Array<string | number>;

export interface JsonNotes {
  /** Keys that appear more than once in one object (the last value is kept, as Go does). */
  duplicateKeys: Array<{ path: JsonPath; key: string }>;
  /** Numbers written with a fraction or an exponent (`8080.0`, `1e3`). */
  nonIntegerNumbers: Array<{ path: JsonPath; lexeme: string }>;
  /** Numbers outside the float64 range (`1e400`): Go's encoding/json rejects them. */
  outOfRangeNumbers: Array<{ path: JsonPath; lexeme: string }>;
}

export type JsonReadResult = { ok: true; value: unknown; notes: JsonNotes } | { ok: false; offset: number; reason: string };

export const MAX_DEPTH = 64;

// Objects that had a repeated key, with every key/value pair in document order: Go's decoder does
// not simply keep the last value of a repeated key that names a map or a struct (it decodes into
// the one it has, so keys merge), and key matching by case folding needs the true order. Kept
// aside, so the objects stay plain data; only objects with duplicates are entered.
const allEntries = new WeakMap<object, Array<[string, unknown]>>();

/** Every key/value pair of `obj` in document order, repeats included, if a key was repeated; else undefined. */
export function entriesOf(obj: object): ReadonlyArray<[string, unknown]> | undefined {
  return allEntries.get(obj);
}

class JsonSyntaxError {
  constructor(
    readonly offset: number,
    readonly reason: string,
  ) {}
}

const describeChar = (text: string, i: number): string => (i >= text.length ? 'end of input' : `character ${JSON.stringify(text[i])}`);

class Reader {
  private i = 0;
  private readonly path: JsonPath = [];
  readonly notes: JsonNotes = { duplicateKeys: [], nonIntegerNumbers: [], outOfRangeNumbers: [] };

  constructor(private readonly text: string) {}

  readDocument(): unknown {
    const value = this.readValue(0);
    this.skipSpace();
    if (this.i < this.text.length) this.fail(`unexpected ${describeChar(this.text, this.i)} after the end of the JSON value`);
    return value;
  }

  private fail(reason: string, at = this.i): never {
    throw new JsonSyntaxError(at, reason);
  }

  private skipSpace(): void {
    const t = this.text;
    let i = this.i;
    for (;;) {
      const c = t.charCodeAt(i);
      if (c === 32 || c === 10 || c === 13 || c === 9) i++;
      else break;
    }
    this.i = i;
  }

  private readValue(depth: number): unknown {
    this.skipSpace();
    const c = this.text.charCodeAt(this.i);
    switch (c) {
      case 123: // {
        return this.readObject(depth + 1);
      case 91: // [
        return this.readArray(depth + 1);
      case 34: // "
        return this.readString();
      case 116:
        return this.readWord('true', true);
      case 102:
        return this.readWord('false', false);
      case 110:
        return this.readWord('null', null);
      default:
        if (c === 45 || (c >= 48 && c <= 57)) return this.readNumber();
        return this.fail(`unexpected ${describeChar(this.text, this.i)}, expected a JSON value`);
    }
  }

  private readWord<T>(word: string, value: T): T {
    if (!this.text.startsWith(word, this.i)) this.fail(`unexpected ${describeChar(this.text, this.i)}, expected a JSON value`);
    this.i += word.length;
    return value;
  }

  private readObject(depth: number): Record<string, unknown> {
    if (depth > MAX_DEPTH) this.fail(`nesting deeper than ${MAX_DEPTH} levels`);
    this.i++; // {
    const out: Record<string, unknown> = {};
    let entries: Array<[string, unknown]> | undefined;
    this.skipSpace();
    if (this.text.charCodeAt(this.i) === 125) {
      this.i++;
      return out;
    }
    for (;;) {
      this.skipSpace();
      if (this.text.charCodeAt(this.i) !== 34) this.fail(`unexpected ${describeChar(this.text, this.i)}, expected a string key`);
      const key = this.readString();
      this.skipSpace();
      if (this.text.charCodeAt(this.i) !== 58) this.fail(`unexpected ${describeChar(this.text, this.i)}, expected ':' after a key`);
      this.i++;
      this.path.push(key);
      const value = this.readValue(depth);
      if (entries) entries.push([key, value]);
      else if (Object.hasOwn(out, key)) {
        entries = Object.keys(out).map((k): [string, unknown] => [k, out[k]]);
        entries.push([key, value]);
        allEntries.set(out, entries);
      }
      if (Object.hasOwn(out, key)) this.notes.duplicateKeys.push({ path: this.path.slice(0, -1), key });
      this.path.pop();
      setData(out, key, value);
      this.skipSpace();
      const c = this.text.charCodeAt(this.i);
      this.i++;
      if (c === 125) return out;
      if (c !== 44) this.fail(`unexpected ${describeChar(this.text, this.i - 1)}, expected ',' or '}'`, this.i - 1);
    }
  }

  private readArray(depth: number): unknown[] {
    if (depth > MAX_DEPTH) this.fail(`nesting deeper than ${MAX_DEPTH} levels`);
    this.i++; // [
    const out: unknown[] = [];
    this.skipSpace();
    if (this.text.charCodeAt(this.i) === 93) {
      this.i++;
      return out;
    }
    for (;;) {
      this.path.push(out.length);
      out.push(this.readValue(depth));
      this.path.pop();
      this.skipSpace();
      const c = this.text.charCodeAt(this.i);
      this.i++;
      if (c === 93) return out;
      if (c !== 44) this.fail(`unexpected ${describeChar(this.text, this.i - 1)}, expected ',' or ']'`, this.i - 1);
    }
  }

  private readString(): string {
    const t = this.text;
    const start = ++this.i; // after the opening quote
    let i = start;
    let out = '';
    let chunk = start;
    for (;;) {
      if (i >= t.length) this.fail('unterminated string', start - 1);
      const c = t.charCodeAt(i);
      if (c === 34) {
        out += t.slice(chunk, i);
        this.i = i + 1;
        return out;
      }
      if (c < 32) this.fail('control character in a string (must be escaped)', i);
      if (c !== 92) {
        i++;
        continue;
      }
      out += t.slice(chunk, i);
      const e = t[i + 1];
      switch (e) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          const hex = t.slice(i + 2, i + 6);
          if (hex.length !== 4 || !isHex4(hex)) this.fail('invalid \\u escape in a string', i);
          out += String.fromCharCode(parseInt(hex, 16));
          i += 4;
          break;
        }
        default:
          this.fail('invalid escape in a string', i);
      }
      i += 2;
      chunk = i;
    }
  }

  /** Skips decimal digits from `i`; returns the index after them. */
  private digitsEnd(i: number): number {
    const t = this.text;
    while (i < t.length && t.charCodeAt(i) >= 48 && t.charCodeAt(i) <= 57) i++;
    return i;
  }

  private readNumber(): number {
    const t = this.text;
    const start = this.i;
    let i = start;
    let integral = true;
    if (t.charCodeAt(i) === 45) i++;
    if (t.charCodeAt(i) === 48) i++;
    else if (this.digitsEnd(i) === i) this.fail('invalid number: expected a digit', i);
    else i = this.digitsEnd(i);
    if (t.charCodeAt(i) === 46) {
      integral = false;
      const end = this.digitsEnd(++i);
      if (end === i) this.fail('invalid number: expected a digit after the decimal point', i);
      i = end;
    }
    const e = t.charCodeAt(i);
    if (e === 101 || e === 69) {
      integral = false;
      i++;
      if (t.charCodeAt(i) === 43 || t.charCodeAt(i) === 45) i++;
      const end = this.digitsEnd(i);
      if (end === i) this.fail('invalid number: expected a digit in the exponent', i);
      i = end;
    }
    this.i = i;
    const lexeme = t.slice(start, i);
    const value = Number(lexeme);
    if (!integral) this.notes.nonIntegerNumbers.push({ path: this.path.slice(), lexeme });
    if (!Number.isFinite(value)) this.notes.outOfRangeNumbers.push({ path: this.path.slice(), lexeme });
    return value;
  }
}

/** `obj[key] = value`, except that a "__proto__" key becomes data, not a prototype change. */
export function setData(obj: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  else obj[key] = value;
}

function isHex4(s: string): boolean {
  for (let k = 0; k < 4; k++) {
    const c = s.charCodeAt(k);
    const lower = c | 0x20;
    if (!((c >= 48 && c <= 57) || (lower >= 97 && lower <= 102))) return false;
  }
  return true;
}

/** Reads one JSON document; never throws. */
export function readJson(text: string): JsonReadResult {
  const reader = new Reader(text);
  try {
    return { ok: true, value: reader.readDocument(), notes: reader.notes };
  } catch (e) {
    if (e instanceof JsonSyntaxError) return { ok: false, offset: e.offset, reason: e.reason };
    // A RangeError (stack) cannot happen with MAX_DEPTH, but the contract is: never throw.
    return { ok: false, offset: 0, reason: `cannot be read: ${e instanceof Error ? e.message : String(e)}` };
  }
}
