// `npm run gen`: rewrites every generated block of the docs from its one source. Not part of the
// product: scripts/ is not built into dist/ (tsconfig.build.json), and nothing in src/ imports it.
//
//   npx tsx scripts/gen.ts           rewrites the docs in place
//   npx tsx scripts/gen.ts --check   exit 1 naming each doc that differs (test/scripts/gen.test.ts
//                                    makes the same comparison in memory in `npm test`)
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { withPluginTable } from './gen/plugin-table.js';
import { withPolicyReference } from './gen/policy-reference.js';
import { renderPolicyCrd } from '../src/policy/index.js';

/** Each generated doc (relative to the repository) and what it is once regenerated. */
export const GENERATED: ReadonlyArray<{ doc: string; source: string; regenerate: (markdown: string) => string }> = [
  { doc: 'docs/cni-runtime.md', source: 'src/nads/plugins.ts (scripts/gen/plugin-table.ts)', regenerate: withPluginTable },
  { doc: 'docs/policy.md', source: 'schemas/ (scripts/gen/policy-reference.ts)', regenerate: withPolicyReference },
];

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Whole generated files: the policy CRD from its schema (test/policy/crd.test.ts compares it too). */
export const GENERATED_FILES: ReadonlyArray<{ file: string; render: () => string }> = [
  { file: 'manifests/base/crd-networkattachmentpolicy.yaml', render: renderPolicyCrd },
];

/** The docs whose committed text differs from what their generator renders. */
export function staleDocs(root = ROOT): string[] {
  return GENERATED.filter((g) => {
    const text = readFileSync(join(root, g.doc), 'utf8');
    return g.regenerate(text) !== text;
  })
    .map((g) => g.doc)
    .concat(GENERATED_FILES.filter((f) => readFileSync(join(root, f.file), 'utf8') !== f.render()).map((f) => f.file));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  if (process.argv.includes('--check')) {
    const stale = staleDocs();
    for (const doc of stale) process.stderr.write(`${doc}: not what its generator renders (run: npm run gen)\n`);
    process.exitCode = stale.length > 0 ? 1 : 0;
  } else {
    for (const g of GENERATED) {
      const file = join(ROOT, g.doc);
      const text = readFileSync(file, 'utf8');
      const next = g.regenerate(text);
      if (next !== text) writeFileSync(file, next);
      process.stdout.write(`${g.doc}: ${next === text ? 'current' : 'rewritten'}\n`);
    }
    for (const f of GENERATED_FILES) {
      const file = join(ROOT, f.file);
      const next = f.render();
      const same = readFileSync(file, 'utf8') === next;
      if (!same) writeFileSync(file, next);
      process.stdout.write(`${f.file}: ${same ? 'current' : 'rewritten'}\n`);
    }
  }
}
