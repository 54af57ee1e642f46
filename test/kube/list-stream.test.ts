// The streamed list reader: items out one at a time whatever the chunking, the list's own fields
// kept apart, and each bound answered by a refusal (never a list read in part as if whole).
import t from 'tap';
import fc from 'fast-check';
import { LineSplitter, ListSplitter } from '../../src/kube/index.js';

const TOO_LARGE = { name: 'ListTooLargeError' };

/** Splits `text` at the given cut points (byte offsets) and feeds the splitter. */
function feed(text: string, cuts: number[], maxItem?: number, maxEnvelope?: number) {
  const items: unknown[] = [];
  const s = new ListSplitter((i) => items.push(i), maxItem, maxEnvelope);
  const bytes = Buffer.from(text, 'utf8');
  let from = 0;
  for (const cut of [...new Set(cuts)].filter((c) => c > 0 && c < bytes.length).sort((a, b) => a - b)) {
    s.write(bytes.subarray(from, cut));
    from = cut;
  }
  s.write(bytes.subarray(from));
  return { items, envelope: s.end() };
}

const json = fc.jsonValue({ maxDepth: 4 });
const item = fc.dictionary(fc.string(), json, { maxKeys: 5 });
const envelopeOf = (list: Record<string, unknown>) => ({ ...list, items: [] });

t.test('items and envelope survive any chunking of any list (property)', async (t) => {
  fc.assert(
    fc.property(
      fc.array(item, { maxLength: 6 }),
      fc.dictionary(
        fc.string().filter((k) => k !== 'items'),
        json,
        { maxKeys: 4 },
      ),
      fc.array(fc.nat(), { maxLength: 12 }),
      fc.boolean(),
      (items, extra, cuts, itemsFirst) => {
        const list = itemsFirst ? { items, ...extra } : { ...extra, items };
        const text = JSON.stringify(list, null, cuts.length % 2 ? 1 : undefined);
        const out = feed(
          text,
          cuts.map((c) => c % (text.length + 1)),
        );
        t.same(out.items, items);
        t.same(out.envelope, envelopeOf(list));
      },
    ),
    { numRuns: 300 },
  );
});

t.test('one byte at a time: brackets, quotes and "items" inside strings and nested keys', async (t) => {
  const list = {
    kind: 'PodList',
    metadata: { resourceVersion: '12', continue: 'abc', items: ['not these'] },
    items: [
      { metadata: { name: 'a', annotations: { x: '{"items":[1,2]}]}', y: 'back\\slash \\" quote' } } },
      { metadata: { name: 'b' }, items: [{ nested: true }] },
      { metadata: { name: 'ü€😀' } },
    ],
  };
  const text = JSON.stringify(list);
  const out = feed(
    text,
    Array.from({ length: Buffer.byteLength(text) }, (_, i) => i),
  );
  t.same(out.items, list.items);
  t.same(out.envelope, { ...list, items: [] });
});

t.test('an empty or absent items array, and a body that ends early', async (t) => {
  t.same(feed('{"kind":"L","items":[],"metadata":{"resourceVersion":"3"}}', [10, 20, 21]).envelope, {
    kind: 'L',
    items: [],
    metadata: { resourceVersion: '3' },
  });
  t.same(feed('{"kind":"L","items":null}', []).items, []);
  t.throws(() => feed('{"kind":"L","items":[{"a":1}', []), SyntaxError);
});

t.test('an item over the bound refuses the list; one at the bound passes', async (t) => {
  const big = { metadata: { annotations: { blob: 'x'.repeat(1000) } } };
  const size = Buffer.byteLength(JSON.stringify(big));
  const text = JSON.stringify({ items: [big, big] });
  t.equal(feed(text, [50, 500, 900], size).items.length, 2, 'exactly at the bound');
  t.throws(() => feed(text, [50, 500, 900], size - 1), TOO_LARGE, 'one byte over, across chunks');
  t.throws(() => feed(text, [], size - 1), TOO_LARGE, 'one byte over, in one chunk');
});

t.test('the envelope has its own bound', async (t) => {
  const text = JSON.stringify({ metadata: { continue: 'c'.repeat(500) }, items: [{ a: 1 }] });
  t.throws(() => feed(text, [100], undefined, 400), TOO_LARGE);
  t.equal(feed(text, [100], undefined, 600).envelope.metadata?.continue?.length, 500);
});

t.test('held memory is one item, not the page: a 50 MB page read with a 1 MB item bound', async (t) => {
  const blob = 'b'.repeat(250_000);
  const s = new ListSplitter(() => undefined, 1024 * 1024);
  s.write(Buffer.from('{"metadata":{"resourceVersion":"9"},"items":['));
  const one = Buffer.from(JSON.stringify({ metadata: { name: 'p', annotations: { blob } } }) + ',');
  // 200 items of 250 KB: a page that, held whole, is 50 MB. The item bound (1 MB) never trips,
  // so nothing accumulates across items.
  for (let i = 0; i < 199; i++) for (let at = 0; at < one.length; at += 65536) s.write(one.subarray(at, at + 65536));
  s.write(one.subarray(0, one.length - 1));
  s.write(Buffer.from(']}'));
  t.same(s.end(), { metadata: { resourceVersion: '9' }, items: [] });
});

t.test('watch lines: split across chunks, bounded per line, the unterminated tail kept', async (t) => {
  const lines: string[] = [];
  const l = new LineSplitter((x) => lines.push(x), 10);
  l.write(Buffer.from('{"a":1}\n{"b"'));
  l.write(Buffer.from(':2}\n\n{"c":3}'));
  l.end();
  t.same(lines, ['{"a":1}', '{"b":2}', '', '{"c":3}']);
  const over = new LineSplitter(() => undefined, 10);
  over.write(Buffer.from('0123456789\n'));
  t.throws(() => over.write(Buffer.from('0123456789A')), TOO_LARGE);
});
