// Run by `npm run build`: makes every file package.json's "bin" names executable. tsc writes them
// 0644, and `npx netattach` in a fresh clone runs the project's own bin file directly, so without
// this the README's `npx netattach parse ...` failed with "Permission denied".
//   node scripts/bin-mode.mjs [PACKAGE_DIR]
import { chmodSync, existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.argv[2] ?? process.cwd();
const { bin } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
const targets = typeof bin === 'string' ? [bin] : Object.values(bin ?? {});
for (const target of new Set(targets)) {
  const file = join(dir, target);
  if (!existsSync(file)) {
    console.error(`bin-mode: ${target} (package.json "bin") was not built`);
    process.exit(1);
  }
  chmodSync(file, statSync(file).mode | 0o111);
}
