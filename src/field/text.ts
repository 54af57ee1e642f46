// Cutting text the sender chose (values, map keys, reasons quoting them) to a bound, so that a
// message costs about what a normal one costs whatever the request holds.

/**
 * Characters of one value or one map key kept in a message: a 256 KiB annotation must not become a
 * 256 KiB denial, and a 200 KB key must not either (it used to be repeated whole in every path).
 */
export const MAX_RENDERED_TEXT = 96;

/**
 * The first `max` characters of `text`, then `...(N chars)` with its whole length, so that two long
 * texts that differ only further on still read as different lengths. A surrogate pair is not split.
 */
export function cutText(text: string, max: number = MAX_RENDERED_TEXT): string {
  if (text.length <= max) return text;
  return `${headOf(text, max)}...(${text.length} chars)`;
}

/** At most `max` UTF-16 units of `text`, one fewer rather than half a surrogate pair. */
export function headOf(text: string, max: number): string {
  if (text.length <= max) return text;
  const last = text.charCodeAt(max - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? max - 1 : max);
}

/**
 * At most `maxBytes` bytes of UTF-8: whole characters, and `marker` at the end when cut (within the
 * bound). Linear in the bound, not in the text: only the head is measured.
 */
export function cutBytes(text: string, maxBytes: number, marker = '...'): string {
  // A UTF-16 unit is at most 3 bytes of UTF-8 (a pair, 2 units, is 4): a text this short fits.
  if (text.length * 3 <= maxBytes) return text;
  const head = headOf(text, maxBytes);
  if (text.length === head.length && Buffer.byteLength(head) <= maxBytes) return text;
  const room = maxBytes - Buffer.byteLength(marker);
  let cut = headOf(head, Math.max(0, room));
  while (cut.length > 0 && Buffer.byteLength(cut) > room)
    cut = headOf(cut, Math.max(0, cut.length - Math.ceil((Buffer.byteLength(cut) - room) / 3)));
  return `${cut}${marker}`;
}

// Text for a terminal. A namespace user chooses many printed bytes (a NAD's plugin `type`, a value
// quoted in a message): an ESC or a C1 control there must not rewrite the terminal of whoever reads
// it. The escapes are JSON's, so JSON output keeps its values (and YAML's, in double quotes).

/**
 * Characters that steer a terminal or reorder what it shows: C0 controls but tab and newline, DEL,
 * C1 controls (U+009B is CSI on many terminals), and the Unicode bidirectional marks, embeddings,
 * overrides and isolates (a "Trojan Source" reordering of a line).
 */
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
/** The same, and the line breaks that would let one value forge a line of text output. */
const UNSAFE_IN_LINE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

const escaped = (c: string): string => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`;

/** `text` with every terminal-steering character shown as `\uXXXX` (tabs and newlines kept). */
export const terminalSafe = (text: string): string => text.replace(UNSAFE, escaped);

/** One line of text output: newlines and carriage returns inside a value are shown escaped too. */
export const oneLineSafe = (text: string): string => text.replace(UNSAFE_IN_LINE, escaped);
