// The bounds of what the audit keeps and writes: messages cut by bytes (start and end kept, never
// a character split), and the prefix of results that fits a count and a byte budget.
import t from 'tap';
import fc from 'fast-check';
import { cutMiddleBytes, keepWithin, MAX_MESSAGE_BYTES, MAX_RESULTS, MAX_RESULTS_BYTES } from '../../src/audit/index.js';

const bytes = (s: string): number => Buffer.byteLength(s, 'utf8');
const MARKER = /\.\.\.\((\d+) bytes cut\)\.\.\./;

t.test('cutMiddleBytes: within the bound, unchanged when it fits, the count of what was cut exact, no character split', async (t) => {
  fc.assert(
    fc.property(fc.string({ unit: fc.oneof(fc.constantFrom('k', 'é', '€', '😀'), fc.string({ unit: 'binary', minLength: 1, maxLength: 1 })), maxLength: 4000 }), fc.integer({ min: 40, max: 3000 }), (text, max) => {
      const cut = cutMiddleBytes(text, max);
      if (bytes(text) <= max) return cut === text;
      const m = MARKER.exec(cut);
      return bytes(cut) <= max && m !== null && bytes(cut) - m[0].length + Number(m[1]) === bytes(text) && !cut.includes('\ufffd');
    }),
    { numRuns: 500 },
  );
});

t.test('cutMiddleBytes: a message keeps the field it starts with and the type, value and reason it ends with', async (t) => {
  const message = `metadata.annotations[k8s.v1.cni.cncf.io/networks][0].cni-args.${'k'.repeat(200_000)}[99]: Invalid value: "1e400": number out of range: Go (Multus) cannot read it`;
  const cut = cutMiddleBytes(message, MAX_MESSAGE_BYTES);
  t.ok(bytes(cut) <= MAX_MESSAGE_BYTES);
  t.match(cut, /^metadata\.annotations\[k8s\.v1\.cni\.cncf\.io\/networks\]\[0\]\.cni-args\.k+\.\.\.\(\d+ bytes cut\)\.\.\.k+\[99\]: Invalid value: "1e400": number out of range: Go \(Multus\) cannot read it$/);
  t.equal(cutMiddleBytes('short', MAX_MESSAGE_BYTES), 'short');
});

t.test('keepWithin: a prefix within both the count and the bytes, the rest counted', async (t) => {
  const items = Array.from({ length: 10 }, (_, i) => i);
  t.same(keepWithin(items, () => 9, 4, 1000), { kept: [0, 1, 2, 3], omitted: 6 });
  t.same(keepWithin(items, () => 9, 100, 35), { kept: [0, 1, 2], omitted: 7 }, 'three items and their commas are 30 bytes, four 40');
  t.same(keepWithin(items, (i) => (i === 2 ? 1000 : 1), 100, 100), { kept: [0, 1], omitted: 8 }, 'an item that does not fit ends the list');
  t.ok(MAX_RESULTS_BYTES * 3 <= 1.5 * 1024 * 1024 && MAX_RESULTS === 1000, 'a third of etcd\'s limit');
});
