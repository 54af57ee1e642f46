import t from 'tap';
import { MAX_DEPTH, readJson } from '../../src/annotation/json-reader.js';

t.test('reads what JSON.parse reads', async (t) => {
  const docs = ['[]', '{}', '[1,-0.5,2e3,"a\\u00e9\\n\\"",true,false,null,{"a":[{}]}]', ' \n[ 1 , 2 ] \t', '"\\ud83d\\ude00"', '0', '-0', '1E+2'];
  for (const d of docs) {
    const r = readJson(d);
    t.ok(r.ok, d);
    if (r.ok) t.same(r.value, JSON.parse(d), d);
  }
});

t.test('rejects what JSON.parse rejects, with an offset', async (t) => {
  const bad: Array<[string, number]> = [
    ['', 0], ['[', 1], ['[1,]', 3], ['{"a"}', 4], ['{"a":1,}', 7], ['01', 1], ['1.', 2], ['1e', 2], ['-', 1], ['"\\x"', 1],
    ['"\\u12"', 1], ['"a\nb"', 2], ['tru', 0], ['[1 2]', 3], ['NaN', 0], ["'a'", 0], ['[]]', 2], ['\ufeff[]', 0],
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
  t.same(r.notes.nonIntegerNumbers, [{ path: [0, 'p'], lexeme: '8080.0' }, { path: [0, 'q'], lexeme: '1e3' }, { path: [0, 's'], lexeme: '1e400' }]);
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
