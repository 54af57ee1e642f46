// `npm run build:plugin` (scripts/build-plugin.ts): the kubectl plugin as one executable, the
// archive Krew installs and its manifest. Heavy: the build bundles the CLI and writes a ~170 MB
// executable (about a minute and a half on 2 cores).
import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { parse } from 'yaml';
import { FakeApiServer } from '../kube/fake-apiserver.js';

t.setTimeout(900_000);

const ROOT = resolve(import.meta.dirname, '../..');
const OUT = join(ROOT, 'dist/plugin');
const EXE = join(OUT, 'kubectl-netattach');
const ARCHIVE = join(OUT, 'kubectl-netattach_linux_amd64.tar.gz');

/** Runs the executable with no Node.js and no npm on PATH: what a Krew user has. */
async function plugin(args: string[], env: NodeJS.ProcessEnv = {}, exe = EXE): Promise<{ code: number; out: string; err: string }> {
  try {
    const { stdout, stderr } = await promisify(execFile)(exe, args, {
      env: { PATH: '/usr/bin:/bin', HOME: '/nonexistent', ...env },
      timeout: 30_000,
    });
    return { code: 0, out: stdout, err: stderr };
  } catch (e) {
    const x = e as { code: number; stdout: string; stderr: string };
    return { code: x.code, out: x.stdout, err: x.stderr };
  }
}

t.before(() => {
  execFileSync('npm', ['run', '--silent', 'build:plugin'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'inherit'], timeout: 600_000 });
});

t.test('the executable answers as the kubectl plugin, without Node.js or npm on PATH', async (t) => {
  t.ok(existsSync(EXE));
  const help = await plugin(['--help']);
  t.equal(help.code, 0, help.err);
  t.match(help.out, /^Explain, check and audit pods/);
  t.match(help.out, /kubectl netattach explain pod NAME/);
  t.notMatch(help.out, /CustomResourceDefinition/, 'no module of the bundle runs as a script (the policy CRD was printed once)');
});

t.test('named netattach, the same executable checks a file offline, with the schemas it carries', async (t) => {
  const dir = t.testdir({});
  // The name it is called by picks the CLI (src/cli/main.ts): kubectl-netattach or netattach.
  const netattach = join(dir, 'netattach');
  symlinkSync(EXE, netattach);
  const file = join(dir, 'pod.yaml');
  writeFileSync(
    file,
    'apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  namespace: default\n  annotations:\n    k8s.v1.cni.cncf.io/networks: \'[{"name":"net1","mac":"zz:00"}]\'\nspec:\n  containers: [{name: c, image: busybox}]\n',
  );
  const r = await plugin(['check', file], {}, netattach);
  t.equal(r.code, 1, r.err);
  t.match(r.out, /\[0\]\.mac: Invalid value: "zz:00"/);
  t.match(r.out, /1 object checked, 1 denied/);
});

t.test('the cluster commands read the kubeconfig and reach the API server', async (t) => {
  const api = new FakeApiServer();
  await api.start();
  t.teardown(() => api.stop());
  const dir = t.testdir({ config: api.kubeconfig('PLANTED-TOKEN') });
  const r = await plugin(['audit', '-A', '--request-timeout', '5s'], { KUBECONFIG: join(dir, 'config') });
  t.ok(api.requests.length > 0, `the fake API server was asked (${api.requests.map((q) => q.path).join(', ')})`);
  t.ok(
    api.requests.every((q) => q.headers.authorization === 'Bearer PLANTED-TOKEN'),
    'with the kubeconfig token',
  );
  t.notMatch(r.out + r.err, /PLANTED-TOKEN/, 'the token is never printed');
});

t.test('the archive holds the executable and the Krew manifest names it by its sha256', async (t) => {
  const listing = execFileSync('tar', ['-tzf', ARCHIVE], { encoding: 'utf8' });
  t.same(listing.trim().split('\n'), ['kubectl-netattach']);
  const manifest = parse(readFileSync(join(OUT, 'netattach.yaml'), 'utf8'));
  t.equal(manifest.kind, 'Plugin');
  t.equal(manifest.apiVersion, 'krew.googlecontainertools.github.com/v1alpha2');
  t.equal(manifest.metadata.name, 'netattach');
  const [platform] = manifest.spec.platforms;
  t.same(platform.selector.matchLabels, { os: 'linux', arch: 'amd64' });
  t.equal(platform.bin, 'kubectl-netattach');
  t.equal(platform.sha256, createHash('sha256').update(readFileSync(ARCHIVE)).digest('hex'));
  t.match(manifest.spec.version, /^v\d+\.\d+\.\d+$/);
});
