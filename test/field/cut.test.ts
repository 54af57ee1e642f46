// Text the sender chose is cut wherever it enters a message (issue 24, finding 2): keys in paths
// like values, whole paths and reasons when rendered, and bytes of a whole message.
import t from 'tap';
import {
  child,
  cutBytes,
  cutText,
  invalid,
  key,
  MAX_RENDERED_PATH,
  MAX_RENDERED_REASON,
  MAX_RENDERED_TEXT,
  renderError,
  required,
} from '../../src/field/index.js';

const ANNOTATION = 'metadata.annotations[k8s.v1.cni.cncf.io/networks][0].cni-args';

t.test('a long key is cut in the path like a value: the first 96 characters and its length', async (t) => {
  const long = 'k'.repeat(200_000);
  const cases: Array<[string, string, string]> = [
    ['child', child(ANNOTATION, long), `${ANNOTATION}.${'k'.repeat(MAX_RENDERED_TEXT)}...(200000 chars)`],
    ['key', key('metadata.annotations', long), `metadata.annotations[${'k'.repeat(MAX_RENDERED_TEXT)}...(200000 chars)]`],
    ['child at the root', child('', long), `${'k'.repeat(MAX_RENDERED_TEXT)}...(200000 chars)`],
    // Real keys are whole: a label key of 96 characters, a spec key.
    ['96 characters', key('spec.nodeSelector', 'a'.repeat(96)), `spec.nodeSelector[${'a'.repeat(96)}]`],
    ['spec key', child(ANNOTATION, 'mac'), `${ANNOTATION}.mac`],
  ];
  for (const [name, got, want] of cases) t.equal(got, want, name);
  // Two long keys that differ only past the cut still differ by length.
  t.not(child('x', 'k'.repeat(1000)), child('x', 'k'.repeat(1001)));
});

t.test('rendering caps the path and the reason, whatever built the error', async (t) => {
  const path = `x${'.seg'.repeat(10_000)}`;
  const reason = `the item ${JSON.stringify('y'.repeat(100_000))} names no network`;
  const out = renderError(invalid(path, 'v', reason));
  t.ok(out.length < MAX_RENDERED_PATH + MAX_RENDERED_REASON + 100, `rendered ${out.length} characters`);
  t.match(out, new RegExp(`\\.\\.\\.\\(${path.length} chars\\): Invalid value: "v": the item "y+\\.\\.\\.\\(${reason.length} chars\\)$`));
  // Real ones are untouched.
  t.equal(renderError(required(`${ANNOTATION}.mac`, 'needed')), `${ANNOTATION}.mac: Required value: needed`);
});

t.test('cutText never splits a surrogate pair', async (t) => {
  const text = `${'a'.repeat(95)}😀${'b'.repeat(10)}`;
  t.equal(cutText(text), `${'a'.repeat(95)}...(${text.length} chars)`, 'the pair straddling the cut is dropped whole');
  t.equal(cutText('short'), 'short');
});

t.test('cutBytes: at most the bytes asked, whole characters, a marker when cut', async (t) => {
  const cases: Array<[string, string, number]> = [
    ['ascii', 'a'.repeat(100), 50],
    ['3-byte characters', '€'.repeat(100), 50],
    ['4-byte characters', '😀'.repeat(100), 50],
    ['mixed', 'a€😀'.repeat(100), 61],
  ];
  for (const [name, text, max] of cases) {
    const out = cutBytes(text, max);
    t.ok(Buffer.byteLength(out) <= max, `${name}: ${Buffer.byteLength(out)} <= ${max} bytes`);
    t.ok(Buffer.byteLength(out) > max - 8, `${name}: not cut much shorter than needed`);
    t.ok(out.endsWith('...'), `${name}: marked`);
    t.notOk(/[\ud800-\udbff](?![\udc00-\udfff])/.test(out), `${name}: no lone high surrogate`);
  }
  t.equal(cutBytes('fits', 4), 'fits');
  t.equal(cutBytes('€€', 6), '€€', 'exactly the bound in bytes');
});
