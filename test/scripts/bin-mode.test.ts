// scripts/bin-mode.mjs, the last step of `npm run build`: package.json's "bin" files executable, so
// `npx netattach ...` works in a fresh clone (tsc writes 0644).
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';

const script = join(import.meta.dirname, '../../scripts/bin-mode.mjs');
const run = (dir: string) => spawnSync(process.execPath, [script, dir], { encoding: 'utf8' });

t.test('every bin target becomes executable; the other bits are kept', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'bin-mode-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(join(dir, 'dist'));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ bin: { a: 'dist/main.js', b: 'dist/main.js', c: 'dist/other.js' } }));
  for (const f of ['main.js', 'other.js']) {
    writeFileSync(join(dir, 'dist', f), '#!/usr/bin/env node\n');
    chmodSync(join(dir, 'dist', f), 0o640);
  }
  writeFileSync(join(dir, 'dist', 'lib.js'), '');
  chmodSync(join(dir, 'dist', 'lib.js'), 0o644);
  const r = run(dir);
  t.equal(r.status, 0, r.stderr);
  t.equal(statSync(join(dir, 'dist', 'main.js')).mode & 0o777, 0o751);
  t.equal(statSync(join(dir, 'dist', 'other.js')).mode & 0o777, 0o751);
  t.equal(statSync(join(dir, 'dist', 'lib.js')).mode & 0o777, 0o644, 'not a bin: left alone');
});

t.test('a bin target that was not built fails the build, naming it', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'bin-mode-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ bin: 'dist/missing.js' }));
  const r = run(dir);
  t.equal(r.status, 1);
  t.match(r.stderr, /dist\/missing\.js \(package\.json "bin"\) was not built/);
});

t.test("the project's build runs it", async (t) => {
  const pkg = JSON.parse(readFileSync(join(import.meta.dirname, '../../package.json'), 'utf8')) as { scripts: Record<string, string> };
  t.match(pkg.scripts.build, /&& node scripts\/bin-mode\.mjs$/);
});
