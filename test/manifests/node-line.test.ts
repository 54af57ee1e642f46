// One Node.js line everywhere (issue 26). package.json pins the runtime for development and CI
// (devDependencies.node: the `node` package, whose install script fetches that exact build), so
// `npm ci` on a machine whose own Node is older still runs every npm script on the pinned line:
// node_modules/.bin, where the package links `node`, comes first on an npm script's PATH. This file
// checks that engines, @types/node, the lockfile, .ci/run and the docs name the same line, and that
// every way the tests and benches start Node really runs it. Broken-build recipe: drop `node` from
// devDependencies or from allowScripts, or run `node_modules/.bin/tap` from a shell whose PATH has
// the machine's Node first: this fails, naming the version it found.
import t from 'tap';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './load.js';

interface PackageJson {
  engines?: Record<string, string>;
  devDependencies?: Record<string, string>;
  allowScripts?: Record<string, boolean>;
}
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as PackageJson;
const pinned = pkg.devDependencies?.node ?? '';
const major = /^(\d+)\.\d+\.\d+$/.exec(pinned)?.[1] ?? '';
const read = (file: string): string => readFileSync(join(ROOT, file), 'utf8');
const majorOf = (version: string): string => /^v(\d+)\./.exec(version.trim())?.[1] ?? `unreadable version ${JSON.stringify(version)}`;

t.test('package.json pins one exact Node.js LTS build, and engines, @types/node and the lockfile agree', async (t) => {
  t.match(pinned, /^\d+\.\d+\.\d+$/, `devDependencies.node: an exact version (got ${JSON.stringify(pinned)})`);
  t.ok(Number(major) % 2 === 0, `Node.js ${major}: an LTS line (even majors)`);
  t.equal(pkg.engines?.node, `>=${major}`, 'engines.node names the same line');
  t.match(pkg.devDependencies?.['@types/node'] ?? '', new RegExp(`^\\^${major}\\.`), '@types/node describes the same line');
  // npm's install-script approval: without it npm skips the download and scripts run on the machine's Node.
  t.equal(pkg.allowScripts?.node, true, 'allowScripts lets the `node` package fetch its build');
  const lock = JSON.parse(read('package-lock.json')) as { packages: Record<string, { version?: string; dev?: boolean }> };
  t.equal(lock.packages['node_modules/node']?.version, pinned, 'package-lock.json holds the same build');
  t.equal(lock.packages['node_modules/node']?.dev, true, 'a dev dependency only: the image brings its own Node');
});

t.test('CI runs on the pinned build and says so', async (t) => {
  const ci = read('.ci/run');
  const ciAt = (needle: string): number => ci.indexOf(needle);
  t.ok(ciAt('export PATH="$PWD/node_modules/.bin:$PATH"') > ciAt('npm ci'), 'after npm ci, node_modules/.bin first on the PATH');
  t.match(ci, /devDependencies\.node/, 'reads the pin from package.json');
  t.match(ci, /echo "== node \$\(node --version\)/, 'prints the version it runs on');
  t.ok(
    ciAt('is not the pinned') > 0 && ciAt('is not the pinned') < ciAt('npm test 2>&1'),
    'stops before the tests when the node found is not the pinned one',
  );
});

t.test('the image, the setup and the docs name the same line, and the old one nowhere', async (t) => {
  // The Dockerfile's two images: dockerfile.test.ts.
  for (const file of ['Dockerfile', '.ci/run', 'README.md', 'docs/deploy.md', 'docs/e2e.md']) {
    t.notMatch(read(file), /\bnode:20-|nodejs20-|Node(\.js)? 20 and `npm ci`/, `${file}: no Node 20 image or requirement left`);
  }
  t.match(
    read('docs/deploy.md'),
    new RegExp(`node:${major}-trixie-slim[\\s\\S]*nodejs${major}-debian13`),
    'docs/deploy.md names both images',
  );
  t.match(read('docs/e2e.md'), new RegExp(`Node\\.js ${major}`), 'docs/e2e.md names the line');
  t.match(read('README.md'), new RegExp(`Node\\.js ${major}`), 'the README names the line');
});

t.test('every way the tests, the e2e runner and the benches start Node runs the pinned line', async (t) => {
  const versionOf = (cmd: string, args: string[]): string => {
    const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 60_000 });
    return r.status === 0 ? r.stdout.trim() : `${cmd} failed (status ${r.status}): ${r.stderr || String(r.error)}`;
  };
  const dir = mkdtempSync(join(tmpdir(), 'netattach-node-line-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const script = join(dir, 'version.ts');
  writeFileSync(script, 'const v: string = process.version;\nconsole.log(v);\n');
  const seen: Array<[string, string]> = [
    // tap's test process (tap runs each file on process.execPath, through tsx's loader)
    ['this test process', process.version],
    // how tests and benches start netattach, `netattach certs` and their children
    ['process.execPath', versionOf(process.execPath, ['-p', 'process.version'])],
    // `node ...` in npm scripts (npm start, npm run bench, scripts/*.mjs) and in the e2e shell scripts
    ['`node` on the PATH', versionOf('node', ['-p', 'process.version'])],
    // `npm run test:e2e`, `npm run bench:apiserver` and `soak` start tsx, whose bin says `#!/usr/bin/env node`
    ['tsx', versionOf(join(ROOT, 'node_modules/.bin/tsx'), [script])],
    // the e2e runner starts the suite with `npx tap`
    ['npx', versionOf('npx', ['--no-install', 'node', '-p', 'process.version'])],
  ];
  for (const [how, version] of seen) {
    t.comment(`${how}: ${version}`);
    t.equal(
      majorOf(version),
      major,
      `${how} runs Node.js ${major} (found ${version}); run the tests through npm (npm test, npx tap) after npm ci`,
    );
  }
  t.equal(process.version, `v${pinned}`, 'the very build package.json pins');
});
