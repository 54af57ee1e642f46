// Warnings within the apiserver's limits, with exact values: what is cut, where, and what the
// "and N more" summary says.
import t from 'tap';
import { forbidden, internal, invalid, required, tooMany } from '../../src/field/index.js';
import {
  limitWarnings,
  MAX_WARNING_LENGTH,
  MAX_WARNINGS_TOTAL,
  renderWarning,
  responseWarnings,
  shortWarning,
  warningText,
} from '../../src/admission/index.js';
import { fitWarning, renderNote } from '../../src/admission/warnings.js';

const x = (n: number) => 'x'.repeat(n);
const r = (n: number) => 'r'.repeat(n);

t.test('the limits are kubectl\'s line and the apiserver\'s budget', async (t) => {
  t.equal(MAX_WARNING_LENGTH, 120);
  t.equal(MAX_WARNINGS_TOTAL, 4096);
});

t.test('a field error as a warning: whole when it fits, else the value gives way first', async (t) => {
  // Fits: the error as the apiserver renders it.
  t.equal(renderWarning(invalid('a.b', 'v', 'r')), 'a.b: Invalid value: "v": r');
  // Exactly the limit: kept whole.
  const exact = invalid(x(95), 'v', 'why');
  t.equal(renderWarning(exact), `${x(95)}: Invalid value: "v": why`);
  t.equal(renderWarning(exact).length, 120);

  // A long value: cut to the room the path, the type and the reason leave (120 - 16 - 5 - 2 = 97
  // characters of value, its last three the ellipsis).
  const longValue = renderWarning(invalid('p', x(200), 'why'));
  t.equal(longValue, `p: Invalid value: "${x(93)}...: why`);
  t.equal(longValue.length, 120);
  // No reason: the value has the room of the reason too (102 characters: the rendered value
  // is cut at 96 with "...(202 chars)", then to 99 and an ellipsis).
  t.equal(renderWarning(invalid('p', x(200), '')), `p: Invalid value: "${x(95)}......`);

  // A long reason: the value keeps 12 characters, then the whole line is cut.
  const longReason = renderWarning(invalid('p', 'abcdefghijklmnopqrstuvwxyz', r(200)));
  t.equal(longReason, `p: Invalid value: "abcdefgh...: ${r(85)}...`);
  t.equal(longReason.length, 120);

  // A path that alone is too long: cut too, as a last resort.
  const path = `spec.${x(200)}`;
  t.equal(renderWarning(required(path, 'needed')), `${path.slice(0, 117)}...`);

  // Another limit.
  t.equal(renderWarning(invalid('p', 'abcdefghijklmnopqrstuvwxyz', 'why'), 30), 'p: Invalid value: "abcdefgh...');
});

t.test('types rendered without a value get none when shortened either', async (t) => {
  const cases: Array<[string, ReturnType<typeof required>, string]> = [
    ['Required value', required('spec.x', 'must be set for this network'), 'spec.x: Required value: mus...'],
    ['Forbidden', forbidden('spec.x', 'not allowed in this namespace'), 'spec.x: Forbidden: not allo...'],
    ['Internal error', internal('spec.x', 'could not be looked up'), 'spec.x: Internal error: cou...'],
    ['Too many', tooMany('spec.x', 5, 3), 'spec.x: Too many: must have...'],
  ];
  for (const [type, e, want] of cases) {
    t.equal(renderWarning(e, 30), want, type);
    t.equal(renderWarning(e), renderWarning(e, 1000), `${type}: fits 120 whole`);
  }
  // A type with a value keeps it.
  t.equal(renderWarning(invalid('spec.x', 5, 'must be at most 3 of them'), 30), 'spec.x: Invalid value: 5: m...');
});

t.test('a note: `path: text`, only the text without a path, the text cut', async (t) => {
  t.equal(renderNote({ path: 'spec.x', text: 'hello' }), 'spec.x: hello');
  t.equal(renderNote({ path: '', text: 'hello' }), 'hello');
  t.equal(renderNote({ path: '', text: x(120) }), x(120), 'exactly the limit: whole');
  t.equal(renderNote({ path: '', text: x(121) }), `${x(117)}...`);
  t.equal(renderNote({ path: 'p', text: x(200) }, 20), `p: ${x(14)}...`);
  t.equal(renderNote({ path: '', text: 'abcdef' }, 2), '...', 'a limit below the ellipsis: the ellipsis alone');
});

t.test('whole text for logs, short text for the response', async (t) => {
  const field = { field: invalid('p', x(200), 'why') };
  const note = { note: { path: 'spec.x', text: r(200) } };
  const bare = { note: { path: '', text: 'plain' } };
  t.equal(warningText(field), `p: Invalid value: "${x(95)}...(202 chars): why`);
  t.equal(warningText(note), `spec.x: ${r(200)}`);
  t.equal(warningText(bare), 'plain');
  t.equal(shortWarning(field), `p: Invalid value: "${x(93)}...: why`);
  t.equal(shortWarning(note), `spec.x: ${r(109)}...`);
  t.equal(shortWarning(field, 30), 'p: Invalid value: "xxxxxxxx...');
  t.equal(shortWarning(note, 20), `spec.x: ${r(9)}...`);
  t.same(responseWarnings([field, note, bare, bare]), [`p: Invalid value: "${x(93)}...: why`, `spec.x: ${r(109)}...`, 'plain']);
  t.same(responseWarnings([]), []);
});

t.test('a plain-text warning: without a "warning:" prefix, cut to a line', async (t) => {
  const cases: Array<[string, string]> = [
    ['Warning: a', 'a'],
    ['WARNING:   spaced', 'spaced'],
    ['warning:tight', 'tight'],
    ['a warning: inside', 'a warning: inside'],
    ['warning: ', ''],
    [x(121), `${x(117)}...`],
    [`Warning: ${x(120)}`, x(120)],
  ];
  for (const [text, want] of cases) t.equal(fitWarning(text), want, JSON.stringify(text.slice(0, 20)));
});

t.test('warnings to send: deduplicated, no empty ones, the overflow summarized', async (t) => {
  t.same(limitWarnings([]), []);
  t.same(limitWarnings(['Warning: a', 'a', 'b', '', 'warning: ']), ['a', 'b']);
  t.same(limitWarnings([x(500)]), [`${x(117)}...`]);

  const distinct = (n: number, len: number) => Array.from({ length: n }, (_, i) => `${String(i).padStart(3, '0')}${x(len - 3)}`);
  // 40 of 100 characters (4000), then one of 96: exactly the budget, all sent.
  const fits = [...distinct(40, 100), `999${x(93)}`];
  t.same(limitWarnings(fits), fits);
  // The last one a character longer: summarized (the summary alone fits; it is not counted).
  const over = [...distinct(40, 100), `999${x(94)}`];
  t.same(limitWarnings(over), [...distinct(40, 100), 'and 1 more warning (not shown: too many)']);
  // Room is kept for the summary: 38 of 104 (3952) and a 39th would make 4056, which leaves
  // 40 characters, one too few for "and 3 more warnings (not shown: too many)" (41).
  const reserve = distinct(41, 104);
  t.same(limitWarnings(reserve), [...reserve.slice(0, 38), 'and 3 more warnings (not shown: too many)']);
  // Many: two-digit counts.
  const many = distinct(100, 100);
  // 40 of 100 and room for the 42-character summary: 4000 + 42 <= 4096; a 41st would need 4142.
  t.same(limitWarnings(many), [...many.slice(0, 40), 'and 60 more warnings (not shown: too many)']);
});
