// scripts/gen.ts, the docs' generators: every generated doc is current (regenerated in memory and
// compared), a block without its markers is an error, and the generators stay out of the product.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { GENERATED, ROOT, staleDocs } from '../../scripts/gen.js';
import { replaceGenerated } from '../../scripts/gen/blocks.js';

t.test('every generated doc is what its generator renders', async (t) => {
  t.ok(GENERATED.length >= 2, 'the plugin table and the policy reference at least');
  for (const g of GENERATED) {
    const doc = readFileSync(join(ROOT, g.doc), 'utf8');
    t.equal(doc, g.regenerate(doc), `${g.doc}, from ${g.source} (regenerate: npm run gen)`);
  }
  t.strictSame(staleDocs(), [], 'the --check of npm run gen agrees');
});

t.test('replaceGenerated: the block between the markers, markers included; missing markers throw', async (t) => {
  t.equal(replaceGenerated('a <!--B--> old <!--E--> z', '<!--B-->', '<!--E-->', '<!--B-->new<!--E-->'), 'a <!--B-->new<!--E--> z');
  t.throws(() => replaceGenerated('no markers', '<!--B-->', '<!--E-->', 'x'), /markers of the generated block not found: <!--B-->/);
  t.throws(() => replaceGenerated('<!--E--> before <!--B-->', '<!--B-->', '<!--E-->', 'x'), /not found/, 'the end before the begin');
});

t.test('a stale block is found and regenerated whole', async (t) => {
  for (const g of GENERATED) {
    const doc = readFileSync(join(ROOT, g.doc), 'utf8');
    const stale = doc.replace(/(<!-- BEGIN GENERATED[^\n]*\n)/, '$1| a row no generator wrote |\n');
    t.not(stale, doc, `${g.doc}: the fixture added a row inside the block`);
    t.equal(g.regenerate(stale), doc, `${g.doc}: regenerating restores it`);
  }
});

t.test(
  'the generators are not the product: not built into dist/, not published (src/ cannot import them: test/layering.test.ts)',
  async (t) => {
    const build = JSON.parse(readFileSync(join(ROOT, 'tsconfig.build.json'), 'utf8')) as { include: string[] };
    t.notOk(
      build.include.some((p) => p.startsWith('scripts')),
      'tsconfig.build.json builds no scripts/',
    );
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { files: string[]; scripts: Record<string, string> };
    t.notOk(
      pkg.files.some((p) => p.startsWith('scripts')),
      'package.json publishes no scripts/',
    );
    t.match(pkg.scripts['gen'], /scripts\/gen\.ts/, 'npm run gen runs them');
  },
);
