// Warnings within the apiserver's limits (docs/admission.md, "Warnings and their limits"): whole
// within 120 characters; else the value shortened first, and a reason that still does not fit 120
// kept whole up to 256 (what the apiserver never cuts); past 256 a long path loses its middle, and
// last the reason its end. Duplicates dropped; past 4096 characters in all, the rest summarized as
// `and N more warnings (not shown: too many)`.
import t from 'tap';
import { forbidden, internal, invalid, notFound, renderError, required, tooMany, type FieldError } from '../../src/field/index.js';
import {
  fitWarning,
  limitWarnings,
  MAX_MERGED_NAMED,
  mergeSameCause,
  MAX_WARNING_LENGTH,
  MAX_WARNING_LONG,
  MAX_WARNINGS_TOTAL,
  renderNote,
  renderWarning,
  responseWarnings,
  shortWarning,
  warningText,
  type Warning,
} from '../../src/admission/warnings.js';

const x = (n: number): string => 'x'.repeat(n);
// 84 characters: a path as long as the ones inside a CronJob's pod template.
const CRON = 'spec.jobTemplate.spec.template.metadata.annotations[k8s.v1.cni.cncf.io/networks][12]';

t.test('the limits are the ones the docs name', async (t) => {
  t.equal(MAX_WARNING_LENGTH, 120);
  t.equal(MAX_WARNING_LONG, 256);
  t.equal(MAX_WARNINGS_TOTAL, 4096);
  t.equal(CRON.length, 84);
});

t.test('a field error that fits is rendered whole', async (t) => {
  const cases: Array<[string, FieldError, string]> = [
    ['invalid', invalid('a.b', 'v', 'r'), 'a.b: Invalid value: "v": r'],
    ['no reason', invalid('a.b', 7, ''), 'a.b: Invalid value: 7'],
    ['required, no reason', required('a.b'), 'a.b: Required value'],
    ['forbidden', forbidden('a.b', 'no'), 'a.b: Forbidden: no'],
    ['too many', tooMany('a.b', 9, 8), 'a.b: Too many: must have at most 8 items'],
    // 120 characters exactly: `a.b: Invalid value: ` is 20, the value 92, `: reason` 8.
    ['exactly 120', invalid('a.b', x(90), 'reason'), `a.b: Invalid value: "${x(90)}": reason`],
  ];
  for (const [name, e, want] of cases) {
    t.equal(renderWarning(e), want, name);
  }
  t.equal(renderWarning(invalid('a.b', x(90), 'reason')).length, 120);
});

t.test('a long value is shortened first, to fit 120 where the reason allows', async (t) => {
  // `spec.x: Invalid value` is 21 characters and `: must be short` 15, so the value gets
  // 120 - 21 - 15 - 2 (its ": ") = 82 characters: the quote, 78 x and "...".
  const cases: Array<[string, FieldError, string]> = [
    ['long value', invalid('spec.x', x(500), 'must be short'), `spec.x: Invalid value: "${x(78)}...: must be short`],
    // No reason: the value takes all the room after the head.
    ['long value, no reason', invalid('spec.x', x(500), ''), `spec.x: Invalid value: "${x(93)}...`],
    ['not found, no reason', notFound('spec.template.x', x(500)), `spec.template.x: Not found: "${x(88)}...`],
  ];
  for (const [name, e, want] of cases) {
    const got = renderWarning(e);
    t.equal(got, want, name);
    t.equal(got.length, 120, `${name}: length`);
  }
});

t.test('a reason that does not fit 120 is kept whole up to 256, the value shortened to 12', async (t) => {
  const cases: Array<[string, FieldError, string]> = [
    // A short value stays whole: `a: Invalid value: "short": ` is 27, the reason 200.
    ['long reason', invalid('a', 'short', x(200)), `a: Invalid value: "short": ${x(200)}`],
    // A long value keeps 12 characters (the quote, 8 x and "..."), the reason whole.
    ['both long', invalid('a', x(500), x(200)), `a: Invalid value: "${x(8)}...: ${x(200)}`],
    // The issue-27 case: a Warn policy on a template's path of 84 characters.
    [
      'policy on a CronJob template',
      forbidden(
        `${CRON}.mac`,
        `policy "no-macs" (requestedFields): user "admin" may not set mac: ask for an address from the pool instead`,
      ),
      `${CRON}.mac: Forbidden: policy "no-macs" (requestedFields): user "admin" may not set mac: ask for an address from the pool instead`,
    ],
    ['exactly 256', invalid('a', 'v', x(256 - 'a: Invalid value: "v": '.length)), `a: Invalid value: "v": ${x(233)}`],
  ];
  for (const [name, e, want] of cases) {
    const got = renderWarning(e);
    t.equal(got, want, name);
    t.ok(got.length > 120 && got.length <= 256, `${name}: length ${got.length}`);
  }
});

t.test('past 256: a long path keeps its ends, then the reason loses its end', async (t) => {
  const longPath = `${CRON}.cni-args.${'k'.repeat(100)}`;
  const got = renderWarning(forbidden(longPath, `policy "p": ${x(100)}`));
  t.equal(got.length, `${longPath.slice(0, 38)}...${longPath.slice(-55)}: Forbidden: policy "p": ${x(100)}`.length, 'the path cut to 96');
  t.ok(got.startsWith(longPath.slice(0, 38)) && got.includes(`...${'k'.repeat(55)}: Forbidden: policy "p": ${x(100)}`), got);
  // Reason alone longer than 256: its start is kept, cut at 256.
  const huge = renderWarning(invalid('a', 'v', `the point first; ${x(400)}`));
  t.equal(huge, `a: Invalid value: "v": the point first; ${x(213)}...`);
  t.equal(huge.length, 256);
  // A path alone longer than 256 (a forged key: paths are cut at 512) still leaves the reason.
  const forged = renderWarning(invalid(`x.${'k'.repeat(500)}`, 'v', 'must be short'));
  t.ok(forged.endsWith(': Invalid value: "v": must be short') && forged.length <= 256, forged);
});

t.test('the types Kubernetes renders without a value get none when shortened either', async (t) => {
  const reason = `because ${x(150)}`;
  const cases: Array<[string, FieldError, string]> = [
    ['required', required('a.b', reason), `a.b: Required value: because ${x(150)}`],
    ['forbidden', forbidden('a.b', reason), `a.b: Forbidden: because ${x(150)}`],
    ['internal error', internal('a.b', reason), `a.b: Internal error: because ${x(150)}`],
    // A Too many error carries the count as its value, but it is not shown.
    ['too many', tooMany(`${CRON}.ips`, 300, 8), `${CRON}.ips: Too many: must have at most 8 items`],
  ];
  for (const [name, e, want] of cases) t.equal(renderWarning(e), want, name);
});

t.test('smaller limits', async (t) => {
  t.equal(renderWarning(invalid('a', x(500), 'r'), 40, 40), `a: Invalid value: "${x(15)}...: r`);
  t.equal(renderNote({ path: 'a', text: x(100) }, 10, 10), `a: ${x(4)}...`);
  t.equal(shortWarning({ note: { path: 'a', text: x(100) } }, 10, 10), `a: ${x(4)}...`);
  t.equal(shortWarning({ field: invalid('a', x(500), 'r') }, 40, 40), `a: Invalid value: "${x(15)}...: r`);
  // A line of 40 with the default long limit: the reason may use 256.
  t.equal(renderWarning(invalid('a', x(500), x(60)), 40), `a: Invalid value: "${x(8)}...: ${x(60)}`);
});

t.test('a cut never splits a surrogate pair (an emoji at the cut keeps whole or goes)', async (t) => {
  const lone = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
  for (let n = 0; n < 8; n++) {
    const text = `${x(n)}${'\u{1F600}'.repeat(20)}`;
    for (const max of [8, 9, 10, 11]) {
      const note = renderNote({ path: 'a', text }, max, max);
      t.notOk(lone.test(note), `note of ${n} x and emoji cut at ${max}: ${JSON.stringify(note)}`);
      t.ok(note.length <= max, 'within the limit');
    }
  }
});

t.test('a note is `path: text`, whole up to 256, then the path middle and the text end cut', async (t) => {
  const cases: Array<[string, { path: string; text: string }, string]> = [
    ['with a path', { path: 'spec.x', text: 'hello' }, 'spec.x: hello'],
    ['no path', { path: '', text: 'hello' }, 'hello'],
    ['exactly 120', { path: 'a', text: x(117) }, `a: ${x(117)}`],
    ['121: the text is the point, whole', { path: 'a', text: x(118) }, `a: ${x(118)}`],
    ['exactly 256', { path: 'a', text: x(253) }, `a: ${x(253)}`],
    ['257', { path: 'a', text: x(254) }, `a: ${x(250)}...`],
    ['no path, 257', { path: '', text: x(257) }, `${x(253)}...`],
    [
      'a long path',
      { path: `${CRON}.${x(100)}`, text: `the point ${'y'.repeat(160)}` },
      `${CRON.slice(0, 38)}...${x(55)}: the point ${'y'.repeat(145)}...`,
    ],
  ];
  for (const [name, note, want] of cases) {
    t.equal(renderNote(note), want, name);
    t.equal(shortWarning({ note }), want, `${name}: shortWarning`);
  }
});

t.test('warningText is the whole text, shortWarning what the response carries', async (t) => {
  const long = invalid('spec.x', x(500), 'must be short');
  // The value itself is cut at 96 characters wherever it is rendered.
  t.equal(warningText({ field: long }), `spec.x: Invalid value: "${x(95)}...(502 chars): must be short`);
  t.equal(shortWarning({ field: long }), `spec.x: Invalid value: "${x(78)}...: must be short`);
  t.equal(warningText({ field: forbidden('a', 'no') }), 'a: Forbidden: no');
  t.equal(warningText({ note: { path: 'a.b', text: x(200) } }), `a.b: ${x(200)}`);
  t.equal(warningText({ note: { path: '', text: 'hello' } }), 'hello');
});

t.test('fitWarning drops a leading "Warning:" and cuts to 256', async (t) => {
  const cases: Array<[string, string]> = [
    ['Warning: a', 'a'],
    ['warning:a', 'a'],
    ['WARNING:   a', 'a'],
    ['x: warning: y', 'x: warning: y'],
    ['Warning: ', ''],
    ['a', 'a'],
    [x(256), x(256)],
    [x(257), `${x(253)}...`],
    [`Warning: ${x(256)}`, x(256)],
  ];
  for (const [text, want] of cases) t.equal(fitWarning(text), want, JSON.stringify(text));
});

t.test('limitWarnings drops duplicates and empty warnings', async (t) => {
  const cases: Array<[string[], string[]]> = [
    [[], []],
    [
      ['a', 'a', 'b'],
      ['a', 'b'],
    ],
    [['Warning: a', 'a'], ['a']],
    [['', 'a', ''], ['a']],
    [['Warning: ', 'b'], ['b']],
    [[''], []],
  ];
  for (const [input, want] of cases) t.same(limitWarnings(input), want, JSON.stringify(input));
});

/** Distinct warnings of the given lengths (each at most 120). */
const ofLengths = (lengths: number[]): string[] => lengths.map((n, i) => `w${i}:`.padEnd(n, '-'));
const total = (ws: string[]): number => ws.reduce((n, w) => n + w.length, 0);
const repeat = (n: number, len: number): number[] => Array.from({ length: n }, () => len);

t.test('limitWarnings keeps to 4096 characters, room kept for the summary', async (t) => {
  // The summary: `and 1 more warning (not shown: too many)` is 40 characters, with 2 to 9 41.
  const one = 'and 1 more warning (not shown: too many)';
  const three = 'and 3 more warnings (not shown: too many)';
  t.equal(one.length, 40);
  t.equal(three.length, 41);

  // 33 × 120 + 40 = 4000 leaves 96 for the last warning, which needs no summary after it:
  // exactly 4096 is within the budget.
  const exact = ofLengths([...repeat(33, 120), 40, 96]);
  t.equal(total(exact), 4096);
  t.same(limitWarnings(exact), exact, 'the last warning fills the budget exactly');

  // One character more: the last warning is summarized, in the singular.
  const over = ofLengths([...repeat(33, 120), 40, 97]);
  t.same(limitWarnings(over), [...over.slice(0, 34), one], 'one over: "and 1 more warning"');

  // Three left at 3960 + 96 = 4056: taking the 96 would leave 40 characters, one fewer than
  // "and 2 more warnings (...)" needs should the next one not fit; so the three are summarized.
  const three_left = ofLengths([...repeat(33, 120), 96, 10, 10]);
  const out = limitWarnings(three_left);
  t.same(out, [...three_left.slice(0, 33), three], 'room kept for the summary');
  t.equal(total(out), 3960 + 41);

  // Many: each of the shown ones whole, the summary counting the rest.
  const many = ofLengths(repeat(100, 120));
  const shown = limitWarnings(many);
  t.same(shown, [...many.slice(0, 33), 'and 67 more warnings (not shown: too many)']);
  t.ok(total(shown) <= MAX_WARNINGS_TOTAL);
});

t.test('responseWarnings: each shortened, then deduplicated and fitted', async (t) => {
  const ws: Warning[] = [
    { field: invalid('spec.x', x(500), 'must be short') },
    { note: { path: 'a', text: 'b' } },
    { note: { path: 'a', text: 'b' } },
    // The same once shortened: one warning.
    { field: invalid('spec.x', x(501), 'must be short') },
    { note: { path: '', text: '' } },
  ];
  t.same(responseWarnings(ws), [`spec.x: Invalid value: "${x(78)}...: must be short`, 'a: b']);
});

t.test('one warning per cause: the same cause on several elements is said once, naming the others', async (t) => {
  const A = 'metadata.annotations[k8s.v1.cni.cncf.io/networks]';
  const unknown = (i: number, v = '10.0.0.1'): Warning => ({ field: invalid(`${A}[${i}].gateway`, v, 'unknown key, ignored') });
  const other: Warning = { field: invalid(`${A}[1].mac`, 'x', 'a multicast MAC') };
  const got = mergeSameCause([unknown(0), other, unknown(1, '10.0.0.2'), unknown(2), unknown(2)]).map(warningText);
  t.same(
    got,
    [`${A}[0].gateway (and [1], [2]): Invalid value: "10.0.0.1": unknown key, ignored`, `${A}[1].mac: Invalid value: "x": a multicast MAC`],
    'in place of the first, an exact repeat dropped',
  );
  t.same(
    mergeSameCause([unknown(0), { field: invalid(`${A}[1].gateway`, 'y', 'another reason') }]).length,
    2,
    'another reason is another cause',
  );
  t.same(
    mergeSameCause([unknown(0), { field: invalid(`${A}[1].gw`, 'y', 'unknown key, ignored') }]).length,
    2,
    'another key is another cause',
  );
  const many = mergeSameCause(Array.from({ length: 9 }, (_, i) => unknown(i))).map(warningText);
  t.same(many, [`${A}[0].gateway (and [1], [2], [3], [4], [5], 3 more): Invalid value: "10.0.0.1": unknown key, ignored`]);
  t.equal(MAX_MERGED_NAMED, 5);
  const nested = mergeSameCause([
    { field: invalid(`${A}[0].portMappings[0].hostPort`, 1, 'r') },
    { field: invalid(`${A}[0].portMappings[3].hostPort`, 1, 'r') },
    { field: invalid(`${A}[2].portMappings[0].hostPort`, 1, 'r') },
  ]).map(warningText);
  t.same(nested, [`${A}[0].portMappings[0].hostPort (and [3], [2]): Invalid value: 1: r`], 'only the indices that differ are named');
  const notes = mergeSameCause([
    { note: { path: `${A}[0]`, text: 'n' } },
    { note: { path: `${A}[4]`, text: 'n' } },
    { note: { path: '', text: 'n' } },
  ]).map(warningText);
  t.same(notes, [`${A}[0] (and [4]): n`, 'n'], 'notes too; a note without the path pattern stays apart');
});

t.test('each limit is inclusive: a text of exactly the limit is kept as it is', async (t) => {
  const P = `metadata.annotations[k8s.v1.cni.cncf.io/networks][0].${x(100)}`; // past MAX_PATH (96)
  // A field error of exactly 120 characters: whole.
  const at120 = invalid('a.b', 'v', '');
  at120.reason = x(MAX_WARNING_LENGTH - renderError({ ...at120, reason: '' }).length - 2); // ': ' before the reason
  t.equal(renderError(at120).length, MAX_WARNING_LENGTH);
  t.equal(renderWarning(at120), renderError(at120));
  // Shortened to exactly 256 with a long path: the path is kept whole.
  const long = invalid(P, x(40), '');
  // `path: Invalid value: ` + the value cut to 12 characters + `: ` + the reason.
  long.reason = x(MAX_WARNING_LONG - `${P}: Invalid value: `.length - 12 - 2);
  const shortened = renderWarning(long);
  t.equal(shortened.length, MAX_WARNING_LONG);
  t.ok(shortened.startsWith(`${P}: `), 'the path whole');
  // A note of exactly 256 with a long path: whole.
  const note = { path: P, text: x(MAX_WARNING_LONG - P.length - 2) };
  t.equal(renderNote(note), `${P}: ${note.text}`);
  // A path of exactly 96 characters is not cut in the middle when the rest must be cut.
  const p96 = x(96);
  t.equal(renderNote({ path: p96, text: x(400) }).slice(0, 98), `${p96}: `);
});

t.test("a path's middle cut never starts its tail with the low half of a pair, and keeps a whole pair", async (t) => {
  const text = x(400);
  const lone = /(^|[^\ud800-\udbff])[\udc00-\udfff]/;
  // The tail (55 characters of a 96-character path cut) would start on the low half of the emoji.
  const split = `${'p'.repeat(100)}😀${'s'.repeat(54)}`;
  const a = renderNote({ path: split, text });
  t.notMatch(a, lone, 'no lone low surrogate');
  t.ok(a.startsWith(`${'p'.repeat(38)}...${'s'.repeat(54)}: `), a.slice(0, 100));
  // A pair inside the tail is kept, and nothing before it dropped.
  const inside = `${'p'.repeat(100)}${'s'.repeat(20)}😀${'s'.repeat(33)}`;
  t.ok(renderNote({ path: inside, text }).startsWith(`${'p'.repeat(38)}...${'s'.repeat(20)}😀${'s'.repeat(33)}: `));
});

t.test('merging: two-digit indices, a path that repeats the first, and a path without an index', async (t) => {
  const A = 'metadata.annotations[k8s.v1.cni.cncf.io/networks]';
  const unknown = (i: number): Warning => ({ field: invalid(`${A}[${i}].gateway`, 'v', 'unknown key, ignored') });
  t.same(mergeSameCause([unknown(10), unknown(11)]).map(warningText), [
    `${A}[10].gateway (and [11]): Invalid value: "v": unknown key, ignored`,
  ]);
  t.same(mergeSameCause([unknown(0), unknown(0), unknown(1)]).map(warningText), [
    `${A}[0].gateway (and [1]): Invalid value: "v": unknown key, ignored`,
  ]);
  t.same(
    mergeSameCause([{ note: { path: A, text: 'n' } }, { note: { path: `${A}[0]`, text: 'n' } }]).map(warningText),
    [`${A}: n`, `${A}[0]: n`],
    'the annotation and its element are different places',
  );
});
