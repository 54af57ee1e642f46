// Keys the sender chose cost what their bytes cost (issue 24, finding 2): a 200 KB key under
// cni-args, at the top of an element or nested, used to be repeated whole in the path of every
// error under it (a 4 MB denial for a 203 KB annotation) and folded again for each of its notes
// (seconds of CPU). Compared with a normal annotation of the same size and the same problems: the
// key short, 200 KB of padding in a dotted extension key instead.
import t from 'tap';
import { parseNetworks } from '../../src/annotation/index.js';
import { MAX_RENDERED_TEXT, renderError } from '../../src/field/index.js';

const LONG = 'k'.repeat(200_000);
const numbers = Array.from({ length: 600 }, () => '1e400').join(',');
const PAD = `"x.pad":"${'p'.repeat(200_000)}"`;

// name, the hostile shape (a 200 KB key), the normal one (a 1-character key and 200 KB of padding)
const SHAPES: Array<[string, (key: string, pad: string) => string]> = [
  ['a cni-args key', (k, pad) => `[{"name":"a",${pad}"cni-args":{"${k}":[${numbers}]}}]`],
  ['a nested cni-args key', (k, pad) => `[{"name":"a",${pad}"cni-args":{"a":{"${k}":[${numbers}]}}}]`],
  ['an unknown top-level key', (k, pad) => `[{"name":"a",${pad}"${k}":[${numbers}]}]`],
  ['a dotted extension key', (k, pad) => `[{"name":"a",${pad}"x.${k}":[${numbers}]}]`],
  ['a bandwidth key', (k, pad) => `[{"name":"a",${pad}"bandwidth":{"${k}":1}}]`],
  ['a portMappings key', (k, pad) => `[{"name":"a",${pad}"portMappings":[{"${k}":1,"hostPort":1.5,"containerPort":1e400}]}]`],
];
const hostile = (shape: (key: string, pad: string) => string, run: number) => shape(LONG, `"x.run":${run},`);
const normal = (shape: (key: string, pad: string) => string, run: number) => shape('k', `${PAD},"x.run":${run},`);

/** Best CPU time of several runs, ms (each run a new text, as each review would be). */
function cpuMs(make: (run: number) => string, runs = 5): number {
  let best = Infinity;
  for (let i = 0; i < runs; i++) {
    const value = make(i);
    const before = process.cpuUsage();
    parseNetworks(value, { namespace: 'default' });
    const used = process.cpuUsage(before);
    best = Math.min(best, (used.user + used.system) / 1000);
  }
  return best;
}

t.test('a 200 KB key is cut in every path, so every rendered problem is short', async (t) => {
  const headAndLength = new RegExp(`k{${MAX_RENDERED_TEXT - 2},${MAX_RENDERED_TEXT}}\\.\\.\\.\\(20000[02] chars\\)`);
  for (const [name, shape] of SHAPES) {
    const value = hostile(shape, 0);
    t.ok(value.length > 200_000 && value.length <= 256 * 1024, `${name}: ${value.length} bytes, within the annotation limit`);
    const r = parseNetworks(value, { namespace: 'default' });
    const problems = [...r.errors, ...r.warnings];
    t.ok(problems.length > 0, `${name}: ${r.errors.length} errors, ${r.warnings.length} warnings`);
    const longestPath = Math.max(...problems.map((e) => e.path.length));
    const rendered = problems.reduce((n, e) => n + renderError(e).length, 0);
    t.ok(longestPath < 400, `${name}: longest path ${longestPath} characters`);
    t.ok(rendered < problems.length * 2000, `${name}: ${rendered} characters rendered for ${problems.length} problems`);
    t.ok(
      problems.some((e) => headAndLength.test(e.path)),
      `${name}: the key is named by its head and length`,
    );
  }
});

t.test('a 200 KB key costs about what 200 KB of padding costs', async (t) => {
  for (const [name, shape] of SHAPES) {
    const base = cpuMs((run) => normal(shape, run));
    const attack = cpuMs((run) => hostile(shape, run));
    // A ratio, not milliseconds: on main 100-3,000 times (seconds for a key folded per note).
    t.ok(
      attack / Math.max(base, 1) < 5,
      `${name}: ${attack.toFixed(1)} CPU-ms, ${(attack / Math.max(base, 1)).toFixed(1)} times the ${base.toFixed(1)} ms of a normal annotation`,
    );
  }
});
