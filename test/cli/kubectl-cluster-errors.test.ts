// What `kubectl netattach` says when the cluster cannot be read, and how soon: a refused or
// unresolvable server, a refused proxy, a 401, a certificate that does not verify; each in
// kubectl's words naming the server, within 1.5 s (a slow server: --request-timeout). Every
// kubeconfig secret (token, password, client key, exec env, the proxy's password) is planted and
// must never be printed on any of these paths.
import t from 'tap';
import { chmodSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { generateCertificates } from '../../src/certs/index.js';
import { run } from '../../src/cli/kubectl.js';
import type { CliIO } from '../../src/cli/io.js';
import { FakeApiServer } from '../kube/fake-apiserver.js';
import { FakeProxy } from '../kube/fake-proxy.js';

type Obj = Record<string, unknown>;
const b64 = (s: string): string => Buffer.from(s).toString('base64');

function io(env: NodeJS.ProcessEnv): CliIO & { out: string; err: string } {
  const o = { out: '', err: '' };
  return Object.assign(o, {
    stdout: (s: string) => void (o.out += s),
    stderr: (s: string) => void (o.err += s),
    stdin: Readable.from([]),
    env,
    cwd: process.cwd(),
  });
}

const kubeconfig = (cluster: Obj, user: Obj): string =>
  JSON.stringify({
    apiVersion: 'v1',
    clusters: [{ name: 'c', cluster }],
    users: [{ name: 'u', user }],
    contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
    'current-context': 'x',
  });

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

const client = generateCertificates({ service: 'client', namespace: 'default' });
const KEY_BODY = client.key.split('\n')[3]!; // a line of the key's base64
const PLANTED = /PLANTED/;

t.test('each error path, each kind of secret: kubectl-like, fast, nothing secret printed', async (t) => {
  // An exec user loads @kubernetes/client-node (its ExecAuth runs the plugin): a start-up cost
  // (docs/kubectl-plugin.md), paid here before the clock runs, which times the cluster's answer.
  // Likewise the commands' modules (transpiled on first import under the test runner).
  await import('@kubernetes/client-node');
  await import('../../src/cli/kubectl-commands.js');
  const dir = t.testdir({
    'exec.sh': `#!/bin/sh\necho "env is $PLANTED_ENV" >&2\nprintf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"PLANTED-EXEC-TOKEN"}}'\n`,
  });
  chmodSync(join(dir, 'exec.sh'), 0o755);
  const users: Record<string, Obj> = {
    token: { token: 'PLANTED-TOKEN' },
    basic: { username: 'ann', password: 'PLANTED-PASSWORD' },
    'client key': { 'client-certificate-data': b64(client.cert), 'client-key-data': b64(client.key), token: 'PLANTED-TOKEN-2' },
    exec: {
      exec: {
        apiVersion: 'client.authentication.k8s.io/v1',
        command: join(dir, 'exec.sh'),
        env: [{ name: 'PLANTED_ENV', value: 'PLANTED-EXEC-ENV' }],
      },
    },
  };

  const tlsApi = new FakeApiServer();
  const { port: tlsPort, ca } = await tlsApi.startTls();
  const authApi = new FakeApiServer();
  await authApi.start();
  authApi.requiredToken = 'something-else';
  const proxy = new FakeProxy();
  const proxyPort = await proxy.start();
  t.teardown(async () => {
    await tlsApi.stop();
    await authApi.stop();
    await proxy.stop();
  });
  const refused = await closedPort();
  const deadProxy = await closedPort();
  const otherCa = generateCertificates({ service: 'other', namespace: 'default' }).caCert;

  const paths: Array<{ name: string; cluster: Obj; says: RegExp; reached?: FakeApiServer }> = [
    {
      name: 'refused server',
      cluster: { server: `https://127.0.0.1:${refused}`, 'insecure-skip-tls-verify': true },
      says: new RegExp(
        `^error: The connection to the server 127\\.0\\.0\\.1:${refused} was refused - did you specify the right host or port\\?$`,
        'm',
      ),
    },
    {
      name: 'unresolvable server',
      cluster: { server: 'https://nothing-here.invalid:6443', 'insecure-skip-tls-verify': true },
      says: /^error: Unable to connect to the server nothing-here\.invalid:6443: no such host/m,
    },
    {
      name: 'refused proxy',
      cluster: {
        server: `https://127.0.0.1:${tlsPort}`,
        'certificate-authority-data': b64(ca),
        'proxy-url': `http://me:PLANTED-PROXY-PW@127.0.0.1:${deadProxy}`,
      },
      says: new RegExp(
        `^error: Unable to connect to the server 127\\.0\\.0\\.1:${tlsPort}: the connection to the proxy http://127\\.0\\.0\\.1:${deadProxy} \\(proxy-url\\) was refused$`,
        'm',
      ),
      reached: tlsApi,
    },
    {
      name: '401',
      cluster: { server: `http://127.0.0.1:${authApi.port}`, 'proxy-url': `http://me:PLANTED-PROXY-PW@127.0.0.1:${proxyPort}` },
      says: new RegExp(`^error: You must be logged in to the server 127\\.0\\.0\\.1:${authApi.port} \\(Unauthorized\\)$`, 'm'),
    },
    {
      name: 'bad CA',
      cluster: { server: `https://127.0.0.1:${tlsPort}`, 'certificate-authority-data': b64(otherCa) },
      says: new RegExp(
        `^error: Unable to connect to the server 127\\.0\\.0\\.1:${tlsPort}: tls: failed to verify certificate: .*see certificate-authority, tls-server-name`,
        'm',
      ),
      reached: tlsApi,
    },
  ];
  for (const path of paths) {
    for (const [kind, user] of Object.entries(users)) {
      if (path.name === '401' && kind === 'client key') continue; // the token beside the key: the same path as token
      const file = join(dir, 'config');
      writeFileSync(file, kubeconfig(path.cluster, user));
      const before = path.reached?.requests.length ?? 0;
      const out = io({ KUBECONFIG: file });
      const started = performance.now();
      const code = await run(['audit', '-n', 'x'], out);
      const ms = performance.now() - started;
      const what = `${path.name}, ${kind}`;
      t.equal(code, 2, `${what}: exit 2`);
      t.match(out.err, path.says, `${what}: ${out.err.trim()}`);
      t.ok(ms <= 1500, `${what}: said in ${Math.round(ms)} ms (at most 1.5 s)`);
      t.notMatch(out.err + out.out, PLANTED, `${what}: no planted secret printed`);
      t.notOk((out.err + out.out).includes(KEY_BODY), `${what}: no line of the client key printed`);
      if (path.reached)
        t.equal(path.reached.requests.length, before, `${what}: no request reached the server (no fallback around the proxy)`);
    }
  }
});

t.test('a server that accepts and never answers: bounded by --request-timeout', async (t) => {
  const silent = createServer(() => {});
  await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
  t.teardown(() => silent.close());
  const port = (silent.address() as { port: number }).port;
  const dir = t.testdir({
    config: kubeconfig({ server: `https://127.0.0.1:${port}`, 'insecure-skip-tls-verify': true }, { token: 'PLANTED-TOKEN' }),
  });
  const out = io({ KUBECONFIG: join(dir, 'config') });
  const started = performance.now();
  t.equal(await run(['audit', '--request-timeout', '1s'], out), 2);
  const ms = performance.now() - started;
  t.ok(ms >= 950 && ms <= 2500, `gave up after ${Math.round(ms)} ms for --request-timeout 1s`);
  t.match(out.err, new RegExp(`cannot list .* from https://127\\.0\\.0\\.1:${port} within 1s`));
  t.notMatch(out.err, PLANTED);
});

t.test('warnings for fields kubectl ignores; a refused field stops before any request', async (t) => {
  const api = new FakeApiServer();
  await api.start();
  t.teardown(() => api.stop());
  const dir = t.testdir({
    unknown: kubeconfig({ server: `http://127.0.0.1:${api.port}`, proxy_url: 'http://typo' }, { token: 'PLANTED-TOKEN' }),
    socks: kubeconfig(
      { server: `http://127.0.0.1:${api.port}`, 'proxy-url': 'socks5://me:PLANTED-PW@127.0.0.1:1080' },
      { token: 'PLANTED-TOKEN' },
    ),
  });
  const warned = io({ KUBECONFIG: join(dir, 'unknown') });
  await run(['audit', '--request-timeout', '300ms'], warned);
  t.match(warned.err, /^Warning: kubeconfig .*: clusters\[0\]\.cluster\.proxy_url: unknown field, ignored \(as kubectl ignores it\)$/m);
  const before = api.requests.length;
  const socks = io({ KUBECONFIG: join(dir, 'socks') });
  t.equal(await run(['audit'], socks), 2);
  t.match(
    socks.err,
    /^error: kubeconfig .*: clusters\[0\]\.cluster\.proxy-url: "socks5:\/\/127\.0\.0\.1:1080": socks5 proxies are not supported/m,
  );
  t.notMatch(socks.err, PLANTED);
  t.equal(api.requests.length, before, 'nothing was sent');
});
