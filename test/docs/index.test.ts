// docs/README.md is the index of the docs (issue 41): a doc it does not link is one nobody finds
// (docs/overview.md was), and a link to a doc that is gone is a dead end.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const DOCS = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'docs');
const index = readFileSync(join(DOCS, 'README.md'), 'utf8');
const linked = new Set([...index.matchAll(/\]\(([^)#]+)(?:#[^)]*)?\)/g)].map((m) => m[1]!));

t.test('docs/README.md links every doc of docs/', async (t) => {
  const docs = readdirSync(DOCS).filter((f) => f.endsWith('.md') && f !== 'README.md');
  t.strictSame(
    docs.filter((f) => !linked.has(f)),
    [],
    'docs the index does not link',
  );
});

t.test('every link of docs/README.md names a file that exists', async (t) => {
  t.strictSame(
    [...linked].filter((l) => !/^[a-z]+:/.test(l) && !existsSync(join(DOCS, l))),
    [],
    'links to nothing',
  );
});
