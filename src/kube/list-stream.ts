// A list answer read as it arrives, one item at a time. A page of 500 pods that each carry a
// 250 KB annotation is 125 MB: read whole, its bytes, its string and its parsed objects are held
// at once (~500 MB), over the container's limit, at every start and relist (issue 37). Here only
// one item's bytes are held, and the list's own fields (metadata: resourceVersion, continue) are
// kept apart. The bytes are split by a scanner that follows strings and nesting only; each item
// is then parsed by the native JSON.parse, so no JSON is tokenized in JavaScript.

/** Largest item accepted (etcd's default request limit is 1.5 MiB; kube-apiserver's body limit 3 MiB). */
export const MAX_ITEM_BYTES = 4 * 1024 * 1024;
/** Largest list envelope (everything but the items: kind, apiVersion, metadata). */
export const MAX_ENVELOPE_BYTES = 64 * 1024;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const ITEMS_KEY = 'items';

/** What a streamed list leaves once its items are handed over. */
export interface ListEnvelope {
  metadata?: { resourceVersion?: string; continue?: string };
}

/** An item or an envelope over its bound: the list is refused, never read in part as if whole. */
export class ListTooLargeError extends Error {
  override readonly name = 'ListTooLargeError';
}

/**
 * Splits a JSON list (`{..., "items": [ {...}, ... ]}`) into its items as they arrive. `onItem`
 * gets each item parsed; the returned envelope is the list without its items (`"items": []`).
 */
export class ListSplitter {
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** Inside the top-level "items" array. */
  private inItems = false;
  /** The last string closed at depth 1 (a key or a short value), to recognize "items". */
  private lastTopString = '';
  private topString: number[] | undefined;
  private envelope: Buffer[] = [];
  private envelopeBytes = 0;
  private item: Buffer[] = [];
  private itemBytes = 0;
  private itemStart = -1;

  constructor(
    private readonly onItem: (item: unknown) => void,
    private readonly maxItemBytes = MAX_ITEM_BYTES,
    private readonly maxEnvelopeBytes = MAX_ENVELOPE_BYTES,
  ) {}

  write(chunk: Buffer): void {
    let envelopeFrom = this.inItems && this.depth >= 2 ? -1 : 0;
    if (this.itemStart === -2) this.itemStart = 0; // an item continues from the last chunk
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk[i]!;
      if (this.inString) {
        if (!this.escaped && !this.topString) {
          // Fast path through a string: jump to the next quote (native search); it ends the string
          // unless an odd run of backslashes stands before it. At `i` no escape is pending.
          const q = chunk.indexOf(QUOTE, i);
          const to = q < 0 ? chunk.length : q;
          let run = 0;
          while (to - run - 1 >= i && chunk[to - run - 1] === BACKSLASH) run++;
          if (q < 0) {
            this.escaped = run % 2 === 1;
            break;
          }
          i = q;
          if (run % 2 === 0) this.inString = false;
          continue;
        }
        if (this.escaped) this.escaped = false;
        else if (c === BACKSLASH) this.escaped = true;
        else if (c === QUOTE) {
          this.inString = false;
          if (this.topString) {
            this.lastTopString = String.fromCharCode(...this.topString);
            this.topString = undefined;
          }
        } else if (this.topString) {
          if (this.topString.length < ITEMS_KEY.length + 1) this.topString.push(c);
        }
        continue;
      }
      if (c === QUOTE) {
        this.inString = true;
        if (this.depth === 1) this.topString = [];
      } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
        if (this.inItems && this.depth === 2) {
          // An item starts: the envelope so far ends here.
          this.itemStart = i;
          if (envelopeFrom >= 0) this.appendEnvelope(chunk.subarray(envelopeFrom, i));
          envelopeFrom = -1;
        }
        if (c === OPEN_ARRAY && this.depth === 1 && this.lastTopString === ITEMS_KEY) this.inItems = true;
        this.depth++;
      } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
        this.depth--;
        if (this.inItems && this.depth === 2) {
          this.endItem(chunk.subarray(this.itemStart, i + 1));
          envelopeFrom = -1; // the comma before the next item is not the envelope's
        } else if (this.inItems && this.depth === 1) {
          this.inItems = false; // the items array closes: the envelope goes on from its ']'
          this.lastTopString = '';
          if (envelopeFrom < 0) envelopeFrom = i;
        }
      } else if (envelopeFrom < 0 && !this.inItems) {
        envelopeFrom = i;
      }
    }
    if (this.itemStart >= 0) {
      this.addToItem(chunk.subarray(this.itemStart));
      this.itemStart = -2;
    } else if (envelopeFrom >= 0) this.appendEnvelope(chunk.subarray(envelopeFrom));
  }

  /** The list without its items, parsed; throws if the body ended inside it. */
  end(): ListEnvelope {
    if (this.depth !== 0 || this.inString) throw new SyntaxError('the list ended before its closing brace');
    const text = Buffer.concat(this.envelope).toString('utf8');
    this.envelope = [];
    return JSON.parse(text) as ListEnvelope;
  }

  private appendEnvelope(bytes: Buffer): void {
    if (!bytes.length) return;
    this.envelopeBytes += bytes.length;
    if (this.envelopeBytes > this.maxEnvelopeBytes)
      throw new ListTooLargeError(`the list's own fields are larger than ${this.maxEnvelopeBytes} bytes`);
    this.envelope.push(Buffer.from(bytes));
  }

  /** A view, not a copy: a piece pins at most its own chunk, until the item ends. */
  private addToItem(bytes: Buffer): void {
    this.itemBytes += bytes.length;
    if (this.itemBytes > this.maxItemBytes) throw new ListTooLargeError(`a list item is larger than ${this.maxItemBytes} bytes`);
    this.item.push(bytes);
  }

  private endItem(tail: Buffer): void {
    this.addToItem(tail);
    const whole = this.item.length === 1 ? tail : Buffer.concat(this.item);
    this.item = [];
    this.itemBytes = 0;
    this.itemStart = -1;
    this.onItem(JSON.parse(whole.toString('utf8')));
  }
}

/**
 * A watch stream split into lines (one event each) with a bound per line: readline would hold a
 * line of any length. An event over the bound ends the watch with an error; the loop relists.
 */
export class LineSplitter {
  private pieces: Buffer[] = [];
  private bytes = 0;

  constructor(
    private readonly onLine: (line: string) => void,
    private readonly maxLineBytes = MAX_ITEM_BYTES + MAX_ENVELOPE_BYTES,
  ) {}

  write(chunk: Buffer): void {
    let from = 0;
    for (let nl = chunk.indexOf(0x0a); nl >= 0; nl = chunk.indexOf(0x0a, from)) {
      this.add(chunk.subarray(from, nl));
      const line = this.pieces.length === 1 ? this.pieces[0]! : Buffer.concat(this.pieces);
      this.pieces = [];
      this.bytes = 0;
      from = nl + 1;
      this.onLine(line.toString('utf8'));
    }
    if (from < chunk.length) this.add(chunk.subarray(from));
  }

  /** What is left after the last newline (a server may end the stream without one). */
  end(): void {
    if (!this.bytes) return;
    const line = Buffer.concat(this.pieces).toString('utf8');
    this.pieces = [];
    this.bytes = 0;
    this.onLine(line);
  }

  private add(bytes: Buffer): void {
    this.bytes += bytes.length;
    if (this.bytes > this.maxLineBytes) throw new ListTooLargeError(`a watch event is larger than ${this.maxLineBytes} bytes`);
    this.pieces.push(bytes);
  }
}
