import t from 'tap';
import { entriesOf, MAX_DEPTH, readJson } from '../../src/annotation/json-reader.js';

t.test('reads what JSON.parse reads', async (t) => {
  const docs = [
    '[]',
    '{}',
    ' \r\n[1]\r',
    '"\\/\\b\\f\\r\\t\\n\\\\"',
    '"\\u00af\\u00AF\\u0009"',
    '[1,-0.5,2e3,"a\\u00e9\\n\\"",true,false,null,{"a":[{}]}]',
    ' \n[ 1 , 2 ] \t',
    '"\\ud83d\\ude00"',
    '0',
    '-0',
    '1E+2',
    // Whitespace wherever JSON allows it: inside empty containers, before each key, around colons
    // and commas (kubectl and editors write it so).
    '{ }',
    '[ ]',
    '{ "a" : 1 , "b" : { "c" : [ ] } }',
    '[{"name":"a", "interface":"net1"}]',
    '[\n  {\n    "name": "a",\n    "ips": [ "10.0.0.5/24" ]\n  }\n]\n',
  ];
  for (const d of docs) {
    const r = readJson(d);
    t.ok(r.ok, d);
    if (r.ok) t.same(r.value, JSON.parse(d), d);
  }
});

t.test('rejects what JSON.parse rejects, with an offset', async (t) => {
  const bad: Array<[string, number]> = [
    ['', 0],
    ['[', 1],
    ['[1,]', 3],
    ['{"a"}', 4],
    ['{"a":1,}', 7],
    ['01', 1],
    ['1.', 2],
    ['1e', 2],
    ['-', 1],
    ['"\\x"', 1],
    ['"\\u12"', 1],
    ['"a\nb"', 2],
    ['tru', 0],
    ['[1 2]', 3],
    ['NaN', 0],
    ["'a'", 0],
    ['[]]', 2],
    ['\ufeff[]', 0],
  ];
  for (const [d, offset] of bad) {
    const r = readJson(d);
    t.notOk(r.ok, JSON.stringify(d));
    t.throws(() => JSON.parse(d), JSON.stringify(d));
    if (!r.ok) t.equal(r.offset, offset, `${JSON.stringify(d)}: offset (${r.reason})`);
  }
});

t.test('keeps what JSON.parse hides: number lexemes, duplicates', async (t) => {
  const r = readJson('[{"p":8080.0,"q":1e3,"r":7,"s":1e400,"d":1,"d":2}]');
  t.ok(r.ok);
  if (!r.ok) return;
  t.same(r.notes.nonIntegerNumbers, [
    { path: [0, 'p'], lexeme: '8080.0' },
    { path: [0, 'q'], lexeme: '1e3' },
    { path: [0, 's'], lexeme: '1e400' },
  ]);
  t.same(r.notes.outOfRangeNumbers, [{ path: [0, 's'], lexeme: '1e400' }]);
  t.same(r.notes.duplicateKeys, [{ path: [0], key: 'd' }]);
  t.equal((r.value as Array<Record<string, number>>)[0]!.d, 2, 'the last duplicate wins, as in Go');
});

t.test('nesting is bounded', async (t) => {
  const deep = '['.repeat(MAX_DEPTH + 1) + ']'.repeat(MAX_DEPTH + 1);
  const r = readJson(deep);
  t.notOk(r.ok);
  if (!r.ok) t.match(r.reason, /nesting deeper than/);
  t.ok(readJson('['.repeat(MAX_DEPTH) + ']'.repeat(MAX_DEPTH)).ok, 'at the limit is fine');
  const huge = readJson('['.repeat(200_000));
  t.notOk(huge.ok, 'no stack overflow on 200k brackets');
});

t.test('__proto__ keys stay data', async (t) => {
  const r = readJson('{"__proto__":{"x":1}}');
  t.ok(r.ok);
  if (!r.ok) return;
  const v = r.value as Record<string, unknown>;
  t.equal(Object.getPrototypeOf(v), Object.prototype);
  t.ok(Object.hasOwn(v, '__proto__'));
  t.equal(({} as Record<string, unknown>).x, undefined);
});

t.test('each syntax error names what it found and what it expected, at the offset of the fault', async (t) => {
  const cases: Array<[string, number, string]> = [
    ['[', 1, 'unexpected end of input, expected a JSON value'],
    ['x', 0, 'unexpected character "x", expected a JSON value'],
    ["'a'", 0, 'unexpected character "\'", expected a JSON value'],
    [':', 0, 'unexpected character ":", expected a JSON value'],
    ['tru', 0, 'unexpected character "t", expected a JSON value'],
    ['[1]x', 3, 'unexpected character "x" after the end of the JSON value'],
    ['{1:2}', 1, 'unexpected character "1", expected a string key'],
    ['{"a" 1}', 5, 'unexpected character "1", expected \':\' after a key'],
    ['{"a":1 2}', 7, "unexpected character \"2\", expected ',' or '}'"],
    ['{"a":1', 6, "unexpected end of input, expected ',' or '}'"],
    ['[1 2]', 3, "unexpected character \"2\", expected ',' or ']'"],
    ['"abc', 0, 'unterminated string'],
    ['["abc', 1, 'unterminated string'],
    ['"a\nb"', 2, 'control character in a string (must be escaped)'],
    ['"\\x"', 1, 'invalid escape in a string'],
    ['"\\u12"', 1, 'invalid \\u escape in a string'],
    ['-', 1, 'invalid number: expected a digit'],
    ['1.', 2, 'invalid number: expected a digit after the decimal point'],
    ['1e', 2, 'invalid number: expected a digit in the exponent'],
  ];
  for (const [d, offset, reason] of cases) t.same(readJson(d), { ok: false, offset, reason }, JSON.stringify(d));
});

t.test('\\u escapes take exactly four hex digits', async (t) => {
  // Just below '0', just above '9', '@' and '`' (just below 'a' once case-folded), just above 'f'.
  for (const bad of ['/', ':', '@', '`', 'g', 'G']) {
    const d = `"\\u00${bad}0"`;
    t.same(readJson(d), { ok: false, offset: 1, reason: 'invalid \\u escape in a string' }, d);
  }
  const r = readJson('"\\u0061\\u0066\\u0041\\u0046\\u0030\\u0039"');
  t.same(r.ok && r.value, 'afAF09');
});

t.test('objects nest as deep as arrays, no deeper', async (t) => {
  const nested = (n: number): string => '{"a":'.repeat(n) + '1' + '}'.repeat(n);
  t.ok(readJson(nested(MAX_DEPTH)).ok, 'at the limit');
  t.same(readJson(nested(MAX_DEPTH + 1)), { ok: false, offset: 5 * MAX_DEPTH, reason: `nesting deeper than ${MAX_DEPTH} levels` });
  t.same(
    readJson('['.repeat(MAX_DEPTH) + '{}' + ']'.repeat(MAX_DEPTH)),
    { ok: false, offset: MAX_DEPTH, reason: `nesting deeper than ${MAX_DEPTH} levels` },
    'an object inside arrays counts too',
  );
});

t.test('entriesOf: every pair in document order, only for an object with a repeated key', async (t) => {
  const r = readJson('[{"a":1,"b":2,"a":3},{"a":1,"b":2}]');
  if (!r.ok) return t.fail(r.reason);
  const [twice, once] = r.value as object[];
  t.same(entriesOf(twice!), [
    ['a', 1],
    ['b', 2],
    ['a', 3],
  ]);
  t.equal(entriesOf(once!), undefined);
});

t.test('a "__proto__" key is an ordinary data property', async (t) => {
  const r = readJson('{"__proto__":1}');
  if (!r.ok) return t.fail(r.reason);
  t.same(Object.getOwnPropertyDescriptor(r.value, '__proto__'), { value: 1, writable: true, enumerable: true, configurable: true });
});

t.test('readJson never throws: what is not text is an error too', async (t) => {
  const r = readJson(undefined as unknown as string);
  t.equal(r.ok, false);
  if (!r.ok) {
    t.equal(r.offset, 0);
    t.match(r.reason, /^cannot be read: \S/);
  }
});
