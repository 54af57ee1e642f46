// Which credential modes load @kubernetes/client-node, seen from outside: \`serve\` and the plugin
// run as child processes (through tsx) whose loader refuses the package. Heavy: six such
// processes, each starting the CLI, about 7 s of CPU. Moved from test/kube/credentials.test.ts
// (the in-process credential tests stay there, in npm test).
import t from 'tap';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FakeApiServer } from '../../kube/fake-apiserver.js';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

// A child process whose ESM loader refuses @kubernetes/client-node: anything that imports it fails.
const REFUSE_CLIENT_NODE = `data:text/javascript,${encodeURIComponent(
  `import { register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent('export async function resolve(s, c, next) { if (s.startsWith("@kubernetes/client-node")) throw new Error("client-node imported by " + c.parentURL); return next(s, c); }'));`,
)}`;

function serveInChild(args: string[], env: NodeJS.ProcessEnv): { status: number | null; out: string } {
  const code = `
    const { startServe } = await import(${JSON.stringify(join(ROOT, 'src/cli/serve.ts'))});
    let log = '';
    const serving = await startServe(${JSON.stringify(args)}, { stdout: (s) => (log += s), stderr: (s) => (log += s), stdin: process.stdin, env: process.env, cwd: process.cwd() });
    await serving.server.close();
    await Promise.all(serving.policy.deps.background.map((task) => task.stop()));
    console.log(serving.config.nadsDir ? 'directory' : JSON.parse(log.split('\\n').find((l) => l.includes('NADs are read from the cluster'))).credentials);
    process.exit(0);
  `;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--import', REFUSE_CLIENT_NODE, '--input-type=module', '-e', code], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { status: r.status, out: r.stdout + r.stderr };
}

t.test('directory, in-cluster and token kubeconfig modes never load @kubernetes/client-node; an exec user does', async (t) => {
  const dir = t.testdir({ nads: {}, tls: {}, tls2: {}, tls3: {}, tls4: {}, sa: { token: 'tok' }, home: {} });
  const common = ['--port', '0', '--health-port', '0', '--host', '127.0.0.1', '--log-level', 'info'];

  const directory = serveInChild([...common, '--tls-dir', join(dir, 'tls'), '--nads', join(dir, 'nads')], { HOME: join(dir, 'home') });
  t.equal(directory.status, 0, directory.out);
  t.match(directory.out, /^directory$/m);

  const inCluster = serveInChild([...common, '--tls-dir', join(dir, 'tls2')], {
    HOME: join(dir, 'home'),
    KUBERNETES_SERVICE_HOST: '127.0.0.1',
    KUBERNETES_SERVICE_PORT: '1',
    NETATTACH_SERVICEACCOUNT_DIR: join(dir, 'sa'),
  });
  t.equal(inCluster.status, 0, inCluster.out);
  t.match(inCluster.out, /^in-cluster$/m);

  // A kubeconfig is read with the yaml package (src/kube/kubeconfig.ts): a token user needs no
  // client-node. (This control used to expect the import: every kubeconfig loaded it then.)
  const api = new FakeApiServer();
  await api.start();
  const text = api.kubeconfig();
  writeFileSync(join(dir, 'kubeconfig'), text);
  await api.stop();
  const kubeconfig = serveInChild([...common, '--tls-dir', join(dir, 'tls3'), '--kubeconfig', join(dir, 'kubeconfig')], {
    HOME: join(dir, 'home'),
  });
  t.equal(kubeconfig.status, 0, kubeconfig.out);
  t.match(kubeconfig.out, /^kubeconfig$/m);

  // The control: an exec credential plugin is run by client-node, so that child must trip the
  // guard, or the guard proves nothing.
  writeFileSync(
    join(dir, 'exec-kubeconfig'),
    text.replace(/user: \{token: [^}]*\}/, 'user: {exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/true}}'),
  );
  const exec = serveInChild([...common, '--tls-dir', join(dir, 'tls4'), '--kubeconfig', join(dir, 'exec-kubeconfig')], {
    HOME: join(dir, 'home'),
  });
  t.not(exec.status, 0);
  t.match(exec.out, /client-node imported by .*plugin-auth\.ts/);
});

t.test('the plugin: --help and a token kubeconfig never load @kubernetes/client-node', async (t) => {
  const plugin = (args: string[], env: NodeJS.ProcessEnv) =>
    spawnSync(process.execPath, ['--import', 'tsx', '--import', REFUSE_CLIENT_NODE, join(ROOT, 'src/cli/main.ts'), 'kubectl', ...args], {
      cwd: ROOT,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env },
      encoding: 'utf8',
      timeout: 60_000,
    });
  const help = plugin(['--help'], {});
  t.equal(help.status, 0, help.stderr);
  t.match(help.stdout, /kubectl netattach explain pod NAME/);

  const dir = t.testdir({
    config:
      'apiVersion: v1\nclusters: [{name: c, cluster: {server: "https://127.0.0.1:1", insecure-skip-tls-verify: true}}]\nusers: [{name: u, user: {token: t0k}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n',
  });
  const audit = plugin(['audit'], { KUBECONFIG: join(dir, 'config') });
  t.equal(audit.status, 2);
  t.match(
    audit.stderr,
    /^error: The connection to the server 127\.0\.0\.1:1 was refused - did you specify the right host or port\?$/m,
    'read, sent, refused: all without client-node',
  );
  t.notMatch(audit.stderr, /client-node imported/);
});
