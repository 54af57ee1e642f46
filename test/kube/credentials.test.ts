import t from 'tap';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeRequestError, inClusterCredentials, kubeTransport, type KubeCredentials } from '../../src/kube/index.js';
import { FakeApiServer } from './fake-apiserver.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

t.test('in-cluster credentials: HTTPS with the service-account CA and token, re-read after a minute or on 401', async (t) => {
  const api = new FakeApiServer();
  const { port, ca } = await api.startTls();
  t.teardown(() => api.stop());
  api.setList('/api/v1/namespaces', [], '1');
  const sa = t.testdir({ token: 'one\n', 'ca.crt': ca });
  let clock = 0;
  const creds = inClusterCredentials({
    env: { KUBERNETES_SERVICE_HOST: '127.0.0.1', KUBERNETES_SERVICE_PORT: String(port) },
    dir: sa,
    now: () => clock,
  });
  t.ok(creds);
  t.equal(creds!.server, `https://127.0.0.1:${port}`);
  const transport = kubeTransport(creds!);
  const list = () => transport.getJson('/api/v1/namespaces', {});
  const lastAuth = () => api.authorizations.at(-1);

  api.requiredToken = 'one';
  await list();
  t.equal(lastAuth(), 'Bearer one', 'the token file, trimmed; TLS verified against ca.crt');

  writeFileSync(join(sa, 'token'), 'two');
  clock += 30_000;
  await list();
  t.equal(lastAuth(), 'Bearer one', 'not re-read within a minute');
  clock += 31_000;
  api.requiredToken = 'two';
  await list();
  t.equal(lastAuth(), 'Bearer two', 're-read after a minute');

  writeFileSync(join(sa, 'token'), 'three');
  api.requiredToken = 'three';
  const before = api.requests.length;
  await list();
  t.same(api.authorizations.slice(before), ['Bearer two', 'Bearer three'], 'a 401 re-reads the token and retries once');

  api.requiredToken = 'revoked';
  const again = api.requests.length;
  const err = await list().then(
    () => undefined,
    (e: unknown) => e,
  );
  t.ok(err instanceof KubeRequestError && err.statusCode === 401, 'an unchanged token: the 401 is the answer');
  t.equal(api.requests.length - again, 1, 'no retry when the token did not change');

  const noCa: KubeCredentials = { server: creds!.server, token: creds!.token!, source: 'in-cluster' };
  await t.rejects(
    kubeTransport(noCa).getJson('/api/v1/namespaces', {}),
    /self[- ]signed|unable to verify/i,
    'the server certificate is verified',
  );
});

t.test('in-cluster credentials: absent outside a cluster; an IPv6 service host is bracketed', async (t) => {
  const sa = t.testdir({ token: 'x' });
  t.equal(inClusterCredentials({ env: {}, dir: sa }), undefined, 'no KUBERNETES_SERVICE_HOST');
  t.equal(
    inClusterCredentials({ env: { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' }, dir: join(sa, 'nope') }),
    undefined,
    'no token',
  );
  const v6 = inClusterCredentials({ env: { KUBERNETES_SERVICE_HOST: 'fd00:10::1', KUBERNETES_SERVICE_PORT: '443' }, dir: sa });
  t.equal(v6?.server, 'https://[fd00:10::1]:443');
  t.equal(v6?.ca, undefined, 'no ca.crt: the system CAs');
});

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
