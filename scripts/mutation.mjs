// npm run test:mutation: StrykerJS once per part of the core (stryker.parts.mjs), one after the
// other, so each part keeps its own incremental file and a finished part stays recorded if a
// later one is stopped. NETATTACH_MUTATION_SCOPE chooses parts or groups (comma-separated);
// further arguments (--force) go to Stryker.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { partsOf } from '../stryker.parts.mjs';

const parts = partsOf(process.env.NETATTACH_MUTATION_SCOPE);
// The project's own Stryker, also when this script is run with node rather than through npm.
const stryker = fileURLToPath(new URL('../node_modules/.bin/stryker', import.meta.url));
const failed = [];
for (const part of parts) {
  console.log(`\n== mutation testing: ${part}`);
  const run = spawnSync(stryker, ['run', 'stryker.config.mjs', ...process.argv.slice(2)], {
    stdio: 'inherit',
    env: { ...process.env, NETATTACH_MUTATION_PART: part },
  });
  if (run.error) console.error(`could not start ${stryker}: ${run.error.message}`);
  if (run.status !== 0) failed.push(part);
}
if (failed.length) {
  console.error(`mutation testing failed to run for: ${failed.join(', ')}`);
  process.exit(1);
}
