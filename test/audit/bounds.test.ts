// The bounds of what the audit keeps and writes: messages cut by bytes (start and end kept, never
// a character split), the prefix of results that fits a count and a byte budget, and the findings
// kept per pod.
import t from 'tap';
import fc from 'fast-check';
import {
  capFindings,
  cutMiddleBytes,
  keepWithin,
  MAX_MESSAGE_BYTES,
  MAX_POD_FINDINGS,
  MAX_RESULTS,
  MAX_RESULTS_BYTES,
  POD_TEXT_CHARS,
  type AuditFinding,
} from '../../src/audit/index.js';
import { auditWith } from './helpers.js';

const bytes = (s: string): number => Buffer.byteLength(s, 'utf8');
const MARKER = /\.\.\.\((\d+) bytes cut\)\.\.\./;

t.test('cutMiddleBytes: within the bound, unchanged when it fits, the count of what was cut exact, no character split', async (_t) => {
  fc.assert(
    // size 'max': fast-check's default size gives strings of about 10 characters, which never
    // reach the cut (a text of at most max / 3 units is returned as it is). U+FFFD itself is left
    // out: the check below reads one in the cut as a split character (a text holding one failed
    // about one run in ten).
    fc.property(
      fc.string({
        unit: fc.oneof(
          fc.constantFrom('k', 'é', '€', '😀'),
          fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }).filter((c) => c !== '\ufffd'),
        ),
        maxLength: 4000,
        size: 'max',
      }),
      fc.integer({ min: 40, max: 3000 }),
      (text, max) => {
        const cut = cutMiddleBytes(text, max);
        if (bytes(text) <= max) return cut === text;
        const m = MARKER.exec(cut);
        return bytes(cut) <= max && m !== null && bytes(cut) - m[0].length + Number(m[1]) === bytes(text) && !cut.includes('\ufffd');
      },
    ),
    // endOnFailure: shrinking a 4,000-character counterexample takes minutes (a mutant would time out).
    { numRuns: 500, endOnFailure: true },
  );
});

t.test('cutMiddleBytes: a message keeps the field it starts with and the type, value and reason it ends with', async (t) => {
  const message = `metadata.annotations[k8s.v1.cni.cncf.io/networks][0].cni-args.${'k'.repeat(200_000)}[99]: Invalid value: "1e400": number out of range: Go (Multus) cannot read it`;
  const cut = cutMiddleBytes(message, MAX_MESSAGE_BYTES);
  t.ok(bytes(cut) <= MAX_MESSAGE_BYTES);
  t.match(
    cut,
    /^metadata\.annotations\[k8s\.v1\.cni\.cncf\.io\/networks\]\[0\]\.cni-args\.k+\.\.\.\(\d+ bytes cut\)\.\.\.k+\[99\]: Invalid value: "1e400": number out of range: Go \(Multus\) cannot read it$/,
  );
  t.equal(cutMiddleBytes('short', MAX_MESSAGE_BYTES), 'short');
});

t.test('keepWithin: a prefix within both the count and the bytes, the rest counted', async (t) => {
  const items = Array.from({ length: 10 }, (_, i) => i);
  t.same(
    keepWithin(items, () => 9, 4, 1000),
    { kept: [0, 1, 2, 3], omitted: 6 },
  );
  t.same(
    keepWithin(items, () => 9, 100, 35),
    { kept: [0, 1, 2], omitted: 7 },
    'three items and their commas are 30 bytes, four 40',
  );
  t.same(
    keepWithin(items, (i) => (i === 2 ? 1000 : 1), 100, 100),
    { kept: [0, 1], omitted: 8 },
    'an item that does not fit ends the list',
  );
  t.ok(MAX_RESULTS_BYTES * 3 <= 1.5 * 1024 * 1024 && MAX_RESULTS === 1000, "a third of etcd's limit");
});

t.test('cutMiddleBytes: the exact cut: half the room to the start, the rest to the end, the marker counting what went', async (t) => {
  // total 100: the marker '...(100 bytes cut)...' is 21 bytes, so 19 are kept: 9 of the start, 10 of the end.
  t.equal(cutMiddleBytes('a'.repeat(50) + 'b'.repeat(50), 40), `${'a'.repeat(9)}...(81 bytes cut)...${'b'.repeat(10)}`);
  t.equal(cutMiddleBytes('a'.repeat(50) + 'b'.repeat(50), 41), `${'a'.repeat(10)}...(80 bytes cut)...${'b'.repeat(10)}`);
  // A text of max bytes is kept, one byte more is cut (also past the quick length test: 14 units of 3 bytes).
  t.equal(cutMiddleBytes('k'.repeat(40), 40), 'k'.repeat(40));
  t.equal(cutMiddleBytes('€'.repeat(14), 42), '€'.repeat(14), '42 bytes in 14 units: within 42');
  t.not(cutMiddleBytes('€'.repeat(14), 41), '€'.repeat(14), '42 bytes: over 41');
  t.equal(cutMiddleBytes('k'.repeat(13), 40), 'k'.repeat(13), 'short: as it is');
  // A 3-byte character across the middle: the start ends before it (never after), the end gets the rest of the room.
  t.equal(cutMiddleBytes('€'.repeat(40), 41), `${'€'.repeat(3)}...(102 bytes cut)...${'€'.repeat(3)}`);
  // A room smaller than the marker: nothing of the text is kept.
  t.equal(cutMiddleBytes('x'.repeat(100), 10), '...(100 bytes cut)...');
});

t.test('cutMiddleBytes: never splits a character, wherever the cut falls', async (t) => {
  for (const ch of ['é', '€', '😀']) {
    for (let max = 30; max <= 60; max++) {
      for (const text of [ch.repeat(40), `k${ch.repeat(40)}`, `kk${ch.repeat(40)}kk`, `${ch.repeat(20)}kkk${ch.repeat(20)}`]) {
        const cut = cutMiddleBytes(text, max);
        const m = MARKER.exec(cut);
        if (!m) {
          t.fail(`no marker: ${cut}`);
          continue;
        }
        const [head, tail] = cut.split(m[0]) as [string, string];
        const ok =
          !cut.includes('\ufffd') &&
          bytes(cut) <= max &&
          text.startsWith(head) &&
          text.endsWith(tail) &&
          bytes(head) + Number(m[1]) + bytes(tail) === bytes(text);
        if (!ok) t.fail(`${JSON.stringify(text)} at ${max}: ${JSON.stringify(cut)}`);
        // As much as fits: one more character at either end would pass the room.
        const room = max - `...(${bytes(text)} bytes cut)...`.length;
        if (bytes(head) + bytes(tail) + 4 <= room - 4)
          t.fail(`${JSON.stringify(text)} at ${max}: kept too little (${JSON.stringify(cut)})`);
      }
    }
  }
  t.pass('checked');
});

t.test('keepWithin: the documented caps are its defaults (1,000 items, 512 KiB)', async (t) => {
  t.equal(MAX_MESSAGE_BYTES, 1024);
  t.equal(MAX_RESULTS, 1000);
  t.equal(MAX_RESULTS_BYTES, 512 * 1024);
  const items = Array.from({ length: 1001 }, (_, i) => i);
  t.same(keepWithin(items, () => 1).omitted, 1, '1,000 kept');
  t.same(keepWithin(items.slice(0, 600), () => 1023).kept.length, 512, '512 items of 1,023 bytes and their commas: 512 KiB');
  t.same(keepWithin(items.slice(0, 600), () => 1024).kept.length, 511);
  t.same(
    keepWithin([5, 1, 1], (i) => i, 10, 4),
    { kept: [], omitted: 3 },
    'the first does not fit: nothing is kept after it either',
  );
  t.same(
    keepWithin([1, 1, 1], (i) => i, 10, 4),
    { kept: [1, 1], omitted: 1 },
    'exactly the budget: 2 + 2 bytes',
  );
});

t.test('capFindings: at the bound as they are; one past, the first 31 and one graded as the worst of the rest', async (t) => {
  const f = (i: number, severity: AuditFinding['severity'] = 'low'): AuditFinding => ({
    policy: 'p',
    rule: `r${i}`,
    action: 'Audit',
    result: 'fail',
    severity,
    message: `m${i}`,
  });
  const at = Array.from({ length: MAX_POD_FINDINGS }, (_, i) => f(i));
  t.equal(capFindings(at), at, 'at the bound: the same array');
  const past = [...at, f(MAX_POD_FINDINGS, 'high')];
  const capped = capFindings(past);
  t.equal(capped.length, MAX_POD_FINDINGS);
  t.same(capped.slice(0, MAX_POD_FINDINGS - 1), past.slice(0, MAX_POD_FINDINGS - 1), 'the first ones kept as they are');
  t.match(
    capped.at(-1),
    { policy: 'builtin', rule: 'moreFindings', action: 'Audit', result: 'fail', severity: 'high' },
    'graded as the worst left out',
  );
  t.match(
    capped.at(-1)!.message,
    /^metadata\.annotations: Too many: 2: more findings about this pod, not kept by the background audit \(it keeps 31 and this count; the worst of them: p\/r32\)/,
  );
  t.equal(MAX_POD_FINDINGS, 32, 'the documented bound');
});

t.test('capFindings: the summary takes the worst severity left out, the first of equals', async (t) => {
  const f = (rule: string, severity: AuditFinding['severity']): AuditFinding => ({
    policy: 'p',
    rule,
    action: 'Audit',
    result: 'fail',
    severity,
    message: rule,
  });
  // The rest (past the first MAX_POD_FINDINGS - 1), in order; the worst one the summary names.
  const cases: Array<[string, Array<[string, AuditFinding['severity']]>, string]> = [
    [
      'info then low',
      [
        ['a', 'info'],
        ['b', 'low'],
      ],
      'b',
    ],
    [
      'low then medium',
      [
        ['a', 'low'],
        ['b', 'medium'],
      ],
      'b',
    ],
    [
      'medium then high',
      [
        ['a', 'medium'],
        ['b', 'high'],
      ],
      'b',
    ],
    [
      'high then critical',
      [
        ['a', 'high'],
        ['b', 'critical'],
      ],
      'b',
    ],
    [
      'the worst first, milder after',
      [
        ['a', 'critical'],
        ['b', 'high'],
        ['c', 'info'],
      ],
      'a',
    ],
    [
      'the worst in the middle',
      [
        ['a', 'low'],
        ['b', 'critical'],
        ['c', 'medium'],
      ],
      'b',
    ],
    [
      'equals: the first',
      [
        ['a', 'high'],
        ['b', 'high'],
        ['c', 'low'],
      ],
      'a',
    ],
  ];
  for (const [name, rest, worst] of cases) {
    const head = Array.from({ length: MAX_POD_FINDINGS - 1 }, (_, i) => f(`h${i}`, 'info'));
    const capped = capFindings([...head, ...rest.map(([rule, severity]) => f(rule, severity))]);
    const expected = rest.find(([rule]) => rule === worst)![1];
    t.match(capped.at(-1), { rule: 'moreFindings', severity: expected }, `${name}: severity`);
    t.match(capped.at(-1)!.message, new RegExp(`the worst of them: p/${worst}\\)`), `${name}: names ${worst}`);
  }
});

t.test('capFindings in the audit: a pod of 1,000 missing networks keeps 32 findings, not 1,000', async (t) => {
  const text = JSON.stringify(Array.from({ length: 1000 }, (_, i) => ({ name: `m${i}` })));
  t.ok(text.length <= POD_TEXT_CHARS, 'within the per-pod text bound: judged');
  const findings = auditWith([{ ns: 'x', name: 'p', networks: text }]).namespaceAudits('x')[0]!.findings;
  t.equal(findings.length, MAX_POD_FINDINGS);
  t.match(findings.at(-1), { rule: 'moreFindings', action: 'Enforce', result: 'fail', severity: 'high' });
  t.match(findings.at(-1)!.message, /Too many: 969: /);
  t.ok(Buffer.byteLength(JSON.stringify(findings)) < 16 * 1024, `${Buffer.byteLength(JSON.stringify(findings))} bytes kept (were ~220 KB)`);
});
