// The plugin's shell without a cluster: help, usage errors, the kubeconfig and context it picks
// (namespace from the context, as kubectl), and an unreachable cluster: exit 2 with a reason.
import t from 'tap';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { run, USAGE } from '../../src/cli/kubectl.js';
import { loadKubectlContext } from '../../src/cli/kubeconfig.js';
import type { CliIO } from '../../src/cli/io.js';

function io(env: NodeJS.ProcessEnv = {}): CliIO & { out: string; err: string } {
  const o = { out: '', err: '' };
  return Object.assign(o, {
    stdout: (s: string) => void (o.out += s),
    stderr: (s: string) => void (o.err += s),
    stdin: Readable.from([]),
    env,
    cwd: process.cwd(),
  });
}

const kubeconfig = (server: string): string => `apiVersion: v1
kind: Config
clusters:
- {name: c, cluster: {server: "${server}", insecure-skip-tls-verify: true}}
users:
- {name: u, user: {token: t0k}}
contexts:
- {name: dev, context: {cluster: c, user: u, namespace: apps}}
- {name: bare, context: {cluster: c, user: u}}
current-context: dev
`;

t.test('help and usage errors: no cluster needed', async (t) => {
  const help = io();
  t.equal(await run(['--help'], help), 0);
  t.equal(help.out, USAGE);
  const bad = io();
  t.equal(await run(['explain'], bad), 2);
  t.match(bad.err, /^error: explain takes either "pod NAME" or -f FILE\nSee 'kubectl netattach --help' for usage\.\n$/);
});

t.test('the kubeconfig and context as kubectl picks them', async (t) => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'netattach-kubectl-'));
  const file = path.join(dir, 'config');
  await writeFile(file, kubeconfig('https://127.0.0.1:1'));
  const viaEnv = await loadKubectlContext({ env: { KUBECONFIG: file } });
  t.match(
    viaEnv,
    { namespace: 'apps', context: 'dev', credentials: { server: 'https://127.0.0.1:1' } },
    "$KUBECONFIG, the current context's namespace",
  );
  t.match(
    await loadKubectlContext({ env: {}, kubeconfig: file, context: 'bare' }),
    { namespace: 'default', context: 'bare' },
    'a context without a namespace: default',
  );
  t.match(await loadKubectlContext({ env: {}, kubeconfig: file, context: 'prod' }), { error: /--context: context "prod" not found/ });
  const missing = io();
  t.equal(await run(['audit', '--kubeconfig', path.join(dir, 'nope')], missing), 2);
  t.match(missing.err, /--kubeconfig: no such file/);
});

t.test('an API server that does not answer: exit 2 naming the server', async (t) => {
  // A port that accepts connections and never answers.
  const server = createServer(() => {});
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => server.close());
  const port = (server.address() as { port: number }).port;
  const dir = await mkdtemp(path.join(os.tmpdir(), 'netattach-kubectl-'));
  const file = path.join(dir, 'config');
  await writeFile(file, kubeconfig(`https://127.0.0.1:${port}`));
  for (const argv of [['audit'], ['explain', 'pod', 'x'], ['check', '-f', file]]) {
    const out = io({ KUBECONFIG: file });
    t.equal(await run([...argv, '--request-timeout', '500ms'], out), 2, argv.join(' '));
    t.match(
      out.err,
      new RegExp(`error: cannot list .* from https://127\\.0\\.0\\.1:${port} within 0\\.5s`),
      `${argv.join(' ')}: ${out.err.trim()}`,
    );
    t.equal(out.out, '', 'nothing on stdout');
  }
});

t.test('a kubeconfig with a YAML syntax error: the position and the reason, never the lines around it (they hold the token)', async (t) => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'netattach-kubectl-'));
  const file = path.join(dir, 'config');
  const secret = 'sha256~PLANTED-SECRET-TOKEN';
  await writeFile(
    file,
    `apiVersion: v1\nusers:\n- name: u\n  user: {token: ${secret}, password: hunter2-PLANTED}\n  bad: [unclosed\nclusters: []\n`,
  );
  for (const argv of [['audit'], ['explain', 'pod', 'x']]) {
    const out = io({ KUBECONFIG: file });
    t.equal(await run(argv, out), 2, argv.join(' '));
    t.match(out.err, /not valid YAML at line 6, column 1: /, `${argv.join(' ')}: the position, as an editor counts it`);
    t.notMatch(out.err + out.out, /PLANTED/, 'no secret of the file in the output');
  }
});
