// Where a JSON text stops being JSON. Node 20's JSON.parse names an offset for some errors
// ("... in JSON at position 7") but not for others ("Unexpected token 'm', ... is not valid
// JSON"), so on failure this scanner walks the text once (RFC 8259 grammar) to find the offset.

/**
 * A JSON.parse message without the text V8 quotes after an unexpected token: the whole text up
 * to 20 characters, past that an excerpt with "..." on its cut sides
 * (`Unexpected token 'm', ..."type": m, "na"... is not valid JSON`). An error must not echo the
 * document it is about.
 */
export const withoutQuotedText = (message: string): string => message.replace(/, (?:\.\.\.)?".*"(?:\.\.\.)? is not valid JSON$/s, '');

/**
 * A JSON.parse message without the line and column V8 14 (Node.js 26) appends to "at position N"
 * ("... in JSON at position 19 (line 1 column 20)"), so that a message reads the same on every
 * Node.js line (Node 20's had none).
 */
export const withoutLineAndColumn = (message: string): string => message.replace(/ \(line \d+ column \d+\)$/, '');

const WS = new Set([' ', '\t', '\n', '\r']);

/** Offset of the first syntax error, or undefined when the text is valid JSON. */
export function jsonErrorOffset(text: string): number | undefined {
  let i = 0;
  const fail = (): never => {
    throw i;
  };
  const ws = (): void => {
    while (i < text.length && WS.has(text[i]!)) i++;
  };
  const literal = (word: string): void => {
    for (const ch of word) {
      if (text[i] !== ch) fail();
      i++;
    }
  };
  const digits = (): void => {
    if (!/[0-9]/.test(text[i] ?? '')) fail();
    while (/[0-9]/.test(text[i] ?? '')) i++;
  };
  const number = (): void => {
    if (text[i] === '-') i++;
    if (text[i] === '0') i++;
    else digits();
    if (text[i] === '.') {
      i++;
      digits();
    }
    if (text[i] === 'e' || text[i] === 'E') {
      i++;
      if (text[i] === '+' || text[i] === '-') i++;
      digits();
    }
  };
  const string = (): void => {
    i++; // opening quote
    for (;;) {
      const ch = text[i];
      if (ch === undefined || ch < ' ') fail();
      if (ch === '"') {
        i++;
        return;
      }
      if (ch === '\\') {
        i++;
        const esc = text[i];
        if (esc === 'u') {
          for (let k = 1; k <= 4; k++) if (!/[0-9a-fA-F]/.test(text[i + k] ?? '')) (i += k), fail();
          i += 5;
        } else if (esc !== undefined && '"\\/bfnrt'.includes(esc)) i++;
        else fail();
      } else i++;
    }
  };
  const value = (): void => {
    ws();
    const ch = text[i];
    if (ch === '{') {
      i++;
      ws();
      if (text[i] === '}') return void i++;
      for (;;) {
        ws();
        if (text[i] !== '"') fail();
        string();
        ws();
        if (text[i] !== ':') fail();
        i++;
        value();
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === '}') return void i++;
        else fail();
      }
    } else if (ch === '[') {
      i++;
      ws();
      if (text[i] === ']') return void i++;
      for (;;) {
        value();
        ws();
        if (text[i] === ',') i++;
        else if (text[i] === ']') return void i++;
        else fail();
      }
    } else if (ch === '"') string();
    else if (ch === 't') literal('true');
    else if (ch === 'f') literal('false');
    else if (ch === 'n') literal('null');
    else if (ch === '-' || (ch !== undefined && ch >= '0' && ch <= '9')) number();
    else fail();
  };
  try {
    value();
    ws();
    if (i < text.length) fail();
    return undefined;
  } catch (offset) {
    // A RangeError from absurd nesting: no position rather than a crash.
    return typeof offset === 'number' ? offset : undefined;
  }
}
