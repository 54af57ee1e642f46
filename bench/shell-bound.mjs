// What netattach's server costs when the review costs nothing: the bound under the CPU ratio of
// issue 39. A copy of the built tree whose `handleReview` answers every call after the first with
// the first call's answer (same bytes sent, same body reader, shape and poisoning checks, TLS and
// HTTP) is loaded beside netattach and the bare floor in one interleaved run (bench/interleaved.mjs).
// The copy lives in a temporary directory and is removed; nothing in dist/ changes.
// usage (after `npm run build`): node bench/shell-bound.mjs [ROUNDS] [SECONDS]   (npm run bench:shell)
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const [rounds = '6', seconds = '8'] = process.argv.slice(2);
const work = mkdtempSync(join(tmpdir(), 'netattach-shell-'));
try {
  cpSync(join(root, 'dist'), join(work, 'dist'), { recursive: true });
  cpSync(join(root, 'package.json'), join(work, 'package.json'));
  symlinkSync(join(root, 'schemas'), join(work, 'schemas'));
  symlinkSync(join(root, 'node_modules'), join(work, 'node_modules'));
  const pipeline = join(work, 'dist/src/server/pipeline.js');
  const source = readFileSync(pipeline, 'utf8');
  const head = 'export function handleReview(';
  // Fails loudly when the compiled pipeline no longer has the entry point this bench wraps.
  if (source.split(head).length !== 2) throw new Error(`${pipeline}: expected exactly one "${head}"`);
  const wrapper = [
    'let firstAnswer;',
    'export function handleReview(body, endpoint, budgetMs, deps) {',
    '  if (firstAnswer !== undefined) return firstAnswer;',
    '  const answer = reviewForReal(body, endpoint, budgetMs, deps);',
    '  if (!(answer instanceof Promise)) firstAnswer = answer;',
    '  return answer;',
    '}',
    'function reviewForReal(',
  ].join('\n');
  writeFileSync(pipeline, source.replace(head, wrapper));
  const run = spawnSync(
    process.execPath,
    [
      join(root, 'bench/interleaved.mjs'),
      rounds,
      seconds,
      `floor=${join(root, 'dist/bench/floor-server.js')}`,
      `netattach=${join(root, 'dist/src/cli/main.js')}`,
      `shell=${join(work, 'dist/src/cli/main.js')}`,
    ],
    { stdio: 'inherit' },
  );
  process.exitCode = run.status ?? 1;
} finally {
  rmSync(work, { recursive: true, force: true });
}
