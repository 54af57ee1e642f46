// The layering of src/, kept by a test (issue 41): every import of every src/**/*.ts file
// (`import`, `import type`, `export ... from`, a dynamic `import()`) is read, and the test fails on
//   - an import across folders that does not go through the folder's index.ts (its public face),
//   - a file importing its own folder's index.ts (the face is for other folders: a cycle waits),
//   - an import cycle between folders, or between files (type-only imports count: a circle of
//     types is still two modules that cannot be understood one without the other),
//   - src/contracts importing anything of src/ (the leaf of shared contracts every layer may use),
//   - a relative import that names no file of src/.
// Exceptions are listed in EXCEPTIONS below with their reason; there are none today.
//
// The imports are found by TypeScript's own pre-processor (ts.preProcessFile), which skips
// comments and strings. NETATTACH_LAYERING_ROOT=<checkout> runs the same checks on another tree.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import ts from 'typescript';

const ROOT = process.env['NETATTACH_LAYERING_ROOT'] ?? join(dirname(fileURLToPath(import.meta.url)), '..');
const SRC = join(ROOT, 'src');

/** Allowed imports past a face, `from -> to` as repository paths, each with why. */
const EXCEPTIONS: ReadonlyArray<{ from: string; to: string; reason: string }> = [];

/** The leaf folders: they import nothing of src/. */
const LEAVES = ['contracts'];

/** Relative module specifiers of one file, in order (`node:` and packages are not ours). */
function importsOf(text: string): string[] {
  return ts
    .preProcessFile(text, true, true)
    .importedFiles.map((i) => i.fileName)
    .filter((s) => s.startsWith('.'));
}

interface Edge {
  from: string;
  to: string;
  specifier: string;
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...sourceFiles(p));
    else if (name.endsWith('.ts')) out.push(p);
  }
  return out;
}

const repoPath = (abs: string): string => relative(ROOT, abs).split(sep).join('/');
/** `src/<folder>/...` -> folder; a file directly in src/ is its own folder (`.`). */
const folderOf = (repo: string): string => (repo.split('/').length > 2 ? repo.split('/')[1]! : '.');
const isFace = (repo: string): boolean => repo.split('/').length === 3 && repo.endsWith('/index.ts');

/** Every import of src/, resolved to repository paths; specifiers that name no file of src/ apart. */
function scan(): { edges: Edge[]; unresolved: Edge[] } {
  const edges: Edge[] = [];
  const unresolved: Edge[] = [];
  for (const abs of sourceFiles(SRC)) {
    const from = repoPath(abs);
    for (const specifier of importsOf(readFileSync(abs, 'utf8'))) {
      const target = normalize(join(dirname(abs), specifier));
      const candidates = [target.replace(/\.js$/, '.ts'), join(target, 'index.ts')];
      const hit = candidates.find((c) => c.startsWith(SRC + sep) && existsSync(c) && statSync(c).isFile());
      if (hit) edges.push({ from, to: repoPath(hit), specifier });
      else unresolved.push({ from, to: repoPath(target), specifier });
    }
  }
  return { edges, unresolved };
}

/** One cycle through each strongly connected component of more than one node (or a self-loop), as a path. */
function cyclesOf(graph: ReadonlyMap<string, ReadonlySet<string>>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const c: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        c.push(w);
      } while (w !== v);
      if (c.length > 1 || graph.get(v)?.has(v)) components.push(c);
    }
  };
  for (const v of [...graph.keys()].sort()) if (!index.has(v)) visit(v);
  // A path around each component: from its first node (sorted), breadth first back to it.
  return components.map((c) => {
    const inside = new Set(c);
    const start = [...c].sort()[0]!;
    const prev = new Map<string, string>();
    const queue = [start];
    while (queue.length > 0) {
      const v = queue.shift()!;
      for (const w of [...(graph.get(v) ?? [])].sort()) {
        if (!inside.has(w)) continue;
        if (w === start) {
          const path = [v];
          while (path[0] !== start) path.unshift(prev.get(path[0]!)!);
          return [...path, start];
        }
        if (!prev.has(w)) {
          prev.set(w, v);
          queue.push(w);
        }
      }
    }
    return [...c, c[0]!];
  });
}

const graphOf = (pairs: Iterable<[string, string]>): Map<string, Set<string>> => {
  const g = new Map<string, Set<string>>();
  for (const [a, b] of pairs) {
    if (!g.has(a)) g.set(a, new Set());
    g.get(a)!.add(b);
  }
  return g;
};

t.test('the scanner: every form of import, and nothing in comments or strings', async (t) => {
  const text = [
    "import { a } from './a.js';",
    "import type { B } from '../b/index.js';",
    "import * as c from '../c/c.js';",
    "import './side-effect.js';",
    "export { d } from './d.js';",
    "export type * from './e.js';",
    'import {',
    '  f,',
    '  type G,',
    "} from '../f/index.js';",
    "const h = () => import('../h/index.js');",
    "import { readFileSync } from 'node:fs';",
    "import fastify from 'fastify';",
    "// import { no } from './commented.js';",
    "/* export * from './block-comment.js'; */",
    'const s = "import { no } from \'./in-a-string.js\'";',
  ].join('\n');
  t.strictSame(importsOf(text), [
    './a.js',
    '../b/index.js',
    '../c/c.js',
    './side-effect.js',
    './d.js',
    './e.js',
    '../f/index.js',
    '../h/index.js',
  ]);
});

t.test('the cycle finder: a path around each circle, none in a chain', async (t) => {
  t.strictSame(
    cyclesOf(
      graphOf([
        ['a', 'b'],
        ['b', 'c'],
      ]),
    ),
    [],
  );
  t.strictSame(
    cyclesOf(
      graphOf([
        ['a', 'b'],
        ['b', 'a'],
        ['b', 'c'],
      ]),
    ),
    [['a', 'b', 'a']],
  );
  t.strictSame(cyclesOf(graphOf([['x', 'x']])), [['x', 'x']]);
  t.strictSame(
    cyclesOf(
      graphOf([
        ['c', 'd'],
        ['d', 'e'],
        ['e', 'c'],
        ['a', 'b'],
        ['b', 'a'],
      ]),
    ).sort(),
    [
      ['a', 'b', 'a'],
      ['c', 'd', 'e', 'c'],
    ],
  );
});

const { edges, unresolved } = scan();
const excepted = (e: Edge): boolean => EXCEPTIONS.some((x) => x.from === e.from && x.to === e.to);

t.test('src/ has files and imports to judge', async (t) => {
  t.ok(edges.length > 100, `${edges.length} imports read`);
  t.ok(new Set(edges.map((e) => folderOf(e.from))).size > 10, 'from more than ten folders');
});

t.test('every relative import names a file of src/', async (t) => {
  t.strictSame(
    unresolved.map((e) => `${e.from} imports '${e.specifier}': no such file in src/`),
    [],
  );
});

t.test("imports across folders go through the folder's index.ts", async (t) => {
  const deep = edges.filter((e) => folderOf(e.from) !== folderOf(e.to) && !isFace(e.to) && !excepted(e));
  t.strictSame(
    deep.map((e) => `${e.from} imports '${e.specifier}': across folders only through src/${folderOf(e.to)}/index.ts`),
    [],
  );
});

t.test("no file imports its own folder's index.ts", async (t) => {
  const own = edges.filter((e) => folderOf(e.from) === folderOf(e.to) && isFace(e.to) && !isFace(e.from) && !excepted(e));
  t.strictSame(
    own.map((e) => `${e.from} imports '${e.specifier}': its own folder's face; import the file itself`),
    [],
  );
});

t.test('the leaves import nothing of src/', async (t) => {
  for (const leaf of LEAVES) {
    t.ok(existsSync(join(SRC, leaf, 'index.ts')), `src/${leaf}/index.ts exists`);
    const out = edges.filter((e) => folderOf(e.from) === leaf && folderOf(e.to) !== leaf && !excepted(e));
    t.strictSame(
      out.map((e) => `${e.from} imports '${e.specifier}': src/${leaf} is a leaf`),
      [],
      `src/${leaf}`,
    );
  }
});

t.test('no import cycle between folders', async (t) => {
  const folders = graphOf(
    edges.filter((e) => folderOf(e.from) !== folderOf(e.to) && !excepted(e)).map((e) => [folderOf(e.from), folderOf(e.to)]),
  );
  t.strictSame(
    cyclesOf(folders).map((c) => `folders in a cycle: ${c.join(' -> ')}`),
    [],
  );
});

t.test('no import cycle between files', async (t) => {
  const files = graphOf(edges.filter((e) => !excepted(e)).map((e) => [e.from, e.to]));
  t.strictSame(
    cyclesOf(files).map((c) => `files in a cycle: ${c.join(' -> ')}`),
    [],
  );
});

t.test('each exception is still needed and says why', async (t) => {
  for (const x of EXCEPTIONS) {
    t.ok(x.reason.length > 20, `${x.from} -> ${x.to}: a reason`);
    t.ok(
      edges.some((e) => e.from === x.from && e.to === x.to),
      `${x.from} -> ${x.to}: still imported`,
    );
  }
});
