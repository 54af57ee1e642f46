// Every kubeconfig field kubectl honours, each against the fake API server (and a local CONNECT
// proxy): what reaches the server (headers, SNI, client certificate) and through what. A field
// that cannot be honoured is refused naming it. Reading: the yaml package, merged as clientcmd.
import t, { type Test } from 'tap';
import { createHash } from 'node:crypto';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateCertificates } from '../../src/certs/index.js';
import { KubeconfigError, kubeconfigCredentials, kubeTransport, readKubeconfig, type KubeCredentials } from '../../src/kube/index.js';
import { proxyFromEnvironment } from '../../src/kube/proxy.js';
import { FakeApiServer } from './fake-apiserver.js';
import { FakeProxy } from './fake-proxy.js';

type Obj = Record<string, unknown>;
const b64 = (s: string): string => Buffer.from(s).toString('base64');

/** A one-context kubeconfig (JSON is YAML). */
const kubeconfig = (cluster: Obj, user: Obj = {}, context: Obj = {}): string =>
  JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster }],
    users: [{ name: 'u', user }],
    contexts: [{ name: 'ctx', context: { cluster: 'c', user: 'u', ...context } }],
    'current-context': 'ctx',
  });

async function credsOf(t: Test, text: string, files: Record<string, string> = {}): Promise<KubeCredentials> {
  const dir = t.testdir({ config: text, ...files });
  return kubeconfigCredentials([join(dir, 'config')]);
}

function refusal(t: Test, text: string, path: RegExp, files: Record<string, string> = {}): Promise<KubeconfigError> {
  return credsOf(t, text, files).then(
    () => {
      throw new Error('expected a refusal');
    },
    (e: unknown) => {
      t.ok(e instanceof KubeconfigError, String(e));
      t.match((e as KubeconfigError).problem.path, path);
      return e as KubeconfigError;
    },
  );
}

const fingerprint = (pem: string): string =>
  createHash('sha256')
    .update(Buffer.from(pem.replace(/-----[^-]+-----|\s/g, ''), 'base64'))
    .digest('hex')
    .toUpperCase()
    .replace(/(..)(?!$)/g, '$1:');

t.test('reading: merged as clientcmd merges, typed by field, relative paths from the file naming them', async (t) => {
  const dir = t.testdir({
    a: `apiVersion: v1
clusters:
- name: c
  cluster: {server: "https://first.example:6443", insecure-skip-tls-verify: yes}
users:
- name: u
  user: {token: 12345, tokenFile: tok}
contexts:
- name: one
  context: {cluster: c, user: u, namespace: ns1}
current-context: one
`,
    b: `clusters:
- name: c
  cluster: {server: "https://second.example"}
- name: d
  cluster: {server: "https://d.example", certificate-authority: ca.pem, prox-url: "http://typo"}
contexts:
- {name: two, context: {cluster: d}}
current-context: two
`,
    tok: 'from-file\n',
    'ca.pem': 'not really a CA',
  });
  const one = readKubeconfig([join(dir, 'a'), join(dir, 'b')]);
  t.equal(one.context, 'one', 'the first file to set current-context wins');
  t.equal(one.cluster.server, 'https://first.example:6443', 'the first file to name a cluster wins');
  t.equal(one.cluster.insecureSkipTLSVerify, true, 'a YAML 1.1 boolean, as sigs.k8s.io/yaml reads it');
  t.equal(one.user.token, '12345', 'a number-looking token stays the text written (a string field)');
  t.equal(one.user.tokenFile, join(dir, 'tok'), 'tokenFile relative to its kubeconfig');
  t.equal(one.namespace, 'ns1');
  const two = readKubeconfig([join(dir, 'a'), join(dir, 'b')], { context: 'two' });
  t.equal(two.cluster.ca?.toString(), 'not really a CA', 'certificate-authority relative to the second file');
  t.match(two.warnings, [/b: clusters\[1\]\.cluster\.prox-url: unknown field, ignored/], 'an unknown field is said, not silently dropped');
  const missing = (() => {
    try {
      return readKubeconfig([join(dir, 'a')], { context: 'nope' });
    } catch (e) {
      return e;
    }
  })();
  t.match(missing, { problem: { path: '--context', value: 'nope' } }, 'an unknown --context');
});

t.test('refused, naming the field (and never a secret value)', async (t) => {
  const secret = 'PLANTED-SECRET';
  const socks = await refusal(
    t,
    kubeconfig({ server: 'https://x', 'proxy-url': `socks5://me:${secret}@proxy:1080` }, { token: secret }),
    /proxy-url$/,
  );
  t.match(socks.message, /proxy-url: "socks5:\/\/proxy:1080": socks5 proxies are not supported/);
  await refusal(t, kubeconfig({ server: 'https://x' }, { token: secret, username: 'me', password: secret }), /users\[0\]\.user\.username$/);
  await refusal(t, kubeconfig({ server: 'https://x' }, { 'as-groups': ['g'] }), /\.as$/);
  await refusal(
    t,
    kubeconfig({ server: 'https://x', 'insecure-skip-tls-verify': true, 'certificate-authority-data': b64('x') }),
    /insecure-skip-tls-verify$/,
  );
  await refusal(t, kubeconfig({ server: 'https://x' }, { 'client-certificate-data': b64('cert') }), /client-key$/);
  await refusal(t, kubeconfig({ server: 'https://x' }, { 'client-key-data': `${secret}!!` }), /client-key-data$/);
  await refusal(t, kubeconfig({ server: `https://me:${secret}@x` }), /server$/);
  await refusal(t, kubeconfig({ server: 'https://x' }, { exec: { command: 'x' }, 'auth-provider': { name: 'oidc' } }), /\.exec$/);
  await refusal(t, kubeconfig({ server: 'https://x' }, { tokenFile: 'missing' }), /tokenFile$/);
  await refusal(t, kubeconfig({ server: 'https://x' }, { token: { nested: secret } }), /token$/);
  const bad = await credsOf(t, 'users:\n- name: u\n  user: {token: PLANTED-SECRET}\n  oops: [\n').catch((e: KubeconfigError) => e);
  t.match(String(bad), /not valid YAML at line \d+, column \d+/);
  for (const e of [socks, bad]) t.notMatch(String(e), /PLANTED/);
});

t.test('CA (data and file), insecure-skip-tls-verify, tls-server-name (SNI and the name checked)', async (t) => {
  const api = new FakeApiServer();
  const { port, ca } = await api.startTls();
  t.teardown(() => api.stop());
  const server = `https://127.0.0.1:${port}`;
  const version = (c: KubeCredentials) => kubeTransport(c).getJson('/version', {});

  await t.resolves(version(await credsOf(t, kubeconfig({ server, 'certificate-authority-data': b64(ca) }))), 'certificate-authority-data');
  await t.resolves(
    version(await credsOf(t, kubeconfig({ server, 'certificate-authority': 'ca.pem' }), { 'ca.pem': ca })),
    'certificate-authority (a file beside the kubeconfig)',
  );
  const other = generateCertificates({ service: 'other', namespace: 'default' }).caCert;
  await t.rejects(
    version(await credsOf(t, kubeconfig({ server, 'certificate-authority-data': b64(other) }))),
    { code: /UNABLE_TO_VERIFY|SELF_SIGNED|DEPTH_ZERO/ },
    'another CA: refused',
  );
  await t.resolves(version(await credsOf(t, kubeconfig({ server, 'insecure-skip-tls-verify': true }))), 'insecure-skip-tls-verify');

  await version(await credsOf(t, kubeconfig({ server: `https://localhost:${port}`, 'certificate-authority-data': b64(ca) })));
  t.equal(api.requests.at(-1)?.servername, 'localhost', 'without tls-server-name: the host is the SNI');
  await version(
    await credsOf(t, kubeconfig({ server, 'certificate-authority-data': b64(ca), 'tls-server-name': 'kubernetes.default.svc' })),
  );
  t.equal(api.requests.at(-1)?.servername, 'kubernetes.default.svc', 'tls-server-name is the SNI');
  await t.rejects(
    version(await credsOf(t, kubeconfig({ server, 'certificate-authority-data': b64(ca), 'tls-server-name': 'wrong.example' }))),
    { code: 'ERR_TLS_CERT_ALTNAME_INVALID', message: /wrong\.example/ },
    'the certificate is checked against tls-server-name, not the address in the URL',
  );
});

t.test('client certificate and key (data and files), sent to the server', async (t) => {
  const api = new FakeApiServer();
  const { port, ca } = await api.startTls({ requestCert: true });
  t.teardown(() => api.stop());
  const client = generateCertificates({ service: 'client', namespace: 'default' });
  const server = `https://127.0.0.1:${port}`;
  await kubeTransport(
    await credsOf(
      t,
      kubeconfig(
        { server, 'certificate-authority-data': b64(ca) },
        { 'client-certificate-data': b64(client.cert), 'client-key-data': b64(client.key) },
      ),
    ),
  ).getJson('/version', {});
  t.equal(api.requests.at(-1)?.clientCert, fingerprint(client.cert), 'client-certificate-data, client-key-data');
  await kubeTransport(
    await credsOf(
      t,
      kubeconfig({ server, 'certificate-authority-data': b64(ca) }, { 'client-certificate': 'c.pem', 'client-key': 'k.pem' }),
      { 'c.pem': client.cert, 'k.pem': client.key },
    ),
  ).getJson('/version', {});
  t.equal(api.requests.at(-1)?.clientCert, fingerprint(client.cert), 'client-certificate, client-key (files)');
});

t.test('token, tokenFile, basic auth, impersonation, disable-compression: the headers sent', async (t) => {
  const api = new FakeApiServer();
  await api.start();
  t.teardown(() => api.stop());
  const server = `http://127.0.0.1:${api.port}`;
  const last = () => api.requests.at(-1)!;
  const get = async (c: KubeCredentials) => kubeTransport(c).getJson('/version', {});

  await get(await credsOf(t, kubeconfig({ server }, { token: 'tok-1' })));
  t.equal(last().headers.authorization, 'Bearer tok-1', 'token');
  const dir = t.testdir({ config: kubeconfig({ server }, { token: 'tok-1', tokenFile: 'tf' }), tf: 'tok-file\n' });
  const fromFile = await kubeconfigCredentials([join(dir, 'config')]);
  await get(fromFile);
  t.equal(last().headers.authorization, 'Bearer tok-file', 'tokenFile wins over token while it can be read (client-go)');
  writeFileSync(join(dir, 'tf'), 'tok-rotated');
  api.requiredToken = 'tok-rotated';
  await get(fromFile);
  t.same(api.authorizations.slice(-2), ['Bearer tok-file', 'Bearer tok-rotated'], 'a 401 re-reads tokenFile and retries once');
  api.requiredToken = undefined;

  await get(await credsOf(t, kubeconfig({ server }, { username: 'ann', password: 'p:ss' })));
  t.equal(last().headers.authorization, `Basic ${b64('ann:p:ss')}`, 'username/password: basic auth');

  await get(
    await credsOf(
      t,
      kubeconfig(
        { server },
        {
          token: 'tok-1',
          as: 'jane',
          'as-uid': 'u-1',
          'as-groups': ['dev', 'ops'],
          'as-user-extra': { 'acme.com/project': ['a', 'b'], scopes: ['s'] },
        },
      ),
    ),
  );
  const raw = last().rawHeaders;
  t.equal(last().headers['impersonate-user'], 'jane', 'as: Impersonate-User');
  t.equal(last().headers['impersonate-uid'], 'u-1', 'as-uid: Impersonate-Uid');
  const valuesOf = (name: string): string[] => {
    const out: string[] = [];
    for (let i = 0; i < raw.length; i += 2) if (raw[i]!.toLowerCase() === name.toLowerCase()) out.push(raw[i + 1]!);
    return out;
  };
  t.same(valuesOf('Impersonate-Group'), ['dev', 'ops'], 'as-groups: one Impersonate-Group line per group');
  t.same(
    valuesOf('Impersonate-Extra-acme.com%2Fproject'),
    ['a', 'b'],
    'as-user-extra: the key escaped as client-go escapes it, one line per value',
  );
  t.same(valuesOf('Impersonate-Extra-scopes'), ['s']);
  t.equal(last().headers.authorization, 'Bearer tok-1', 'impersonation beside the token');

  await get(await credsOf(t, kubeconfig({ server, 'disable-compression': true }, { token: 'tok-1' })));
  t.equal(last().headers['accept-encoding'], undefined, 'disable-compression: no compression asked for (none ever is)');
});

t.test('proxy-url: every request through the proxy (CONNECT for https), its credentials only to it', async (t) => {
  const api = new FakeApiServer();
  const { port, ca } = await api.startTls();
  api.setList('/api/v1/namespaces', [], '1');
  const proxy = new FakeProxy();
  const proxyPort = await proxy.start();
  t.teardown(async () => {
    await api.stop();
    await proxy.stop();
  });
  proxy.requireAuth = `Basic ${b64('pu:pp@ss')}`;
  const creds = await credsOf(
    t,
    kubeconfig(
      {
        server: `https://127.0.0.1:${port}`,
        'certificate-authority-data': b64(ca),
        'proxy-url': `http://pu:pp%40ss@127.0.0.1:${proxyPort}`,
      },
      { token: 'tok-via-proxy' },
    ),
  );
  const transport = kubeTransport(creds);
  await transport.getJson('/version', {});
  await transport.getJson('/api/v1/namespaces', {});
  const r = await transport.send!('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {}, AbortSignal.timeout(5000));
  t.ok(r.status > 0);
  const lists: unknown[] = [];
  await transport.list!('/api/v1/namespaces', {}, 'application/json', (i) => lists.push(i));
  t.same(
    proxy.uses.map((u) => [u.method, u.target]),
    Array.from({ length: 4 }, () => ['CONNECT', `127.0.0.1:${port}`]),
    'each request (get, list, send) tunnelled through the proxy',
  );
  t.ok(
    proxy.uses.every((u) => u.proxyAuthorization === proxy.requireAuth && u.authorization === undefined),
    "the proxy got its credentials (URL-decoded), never the user's token",
  );
  t.equal(api.requests.at(-1)?.headers.authorization, 'Bearer tok-via-proxy', 'the token reached the server inside the tunnel');
  t.equal(api.requests.at(-1)?.servername, undefined, 'an address: no SNI (as Node and Go send none for an IP)');

  // An http server: absolute-URI requests to the proxy.
  const plain = new FakeApiServer();
  await plain.start();
  t.teardown(() => plain.stop());
  proxy.uses.length = 0;
  const viaHttp = await credsOf(
    t,
    kubeconfig({ server: `http://127.0.0.1:${plain.port}`, 'proxy-url': `http://pu:pp%40ss@127.0.0.1:${proxyPort}` }, { token: 't' }),
  );
  await kubeTransport(viaHttp).getJson('/version', {});
  t.match(
    proxy.uses,
    [{ method: 'GET', target: `http://127.0.0.1:${plain.port}/version`, proxyAuthorization: proxy.requireAuth }],
    'http: an absolute-URI request to the proxy',
  );
  t.equal(plain.requests.length, 1, 'and it reached the server');

  proxy.refuseConnect = true;
  await t.rejects(
    transport.getJson('/version', {}),
    { name: 'ProxyError', message: /the proxy http:\/\/127\.0\.0\.1:\d+ answered CONNECT with HTTP 403/ },
    'a proxy that refuses: named, without its credentials',
  );
});

t.test('exec credential plugins: still run (client-node, loaded for them only), relative command, env', async (t) => {
  const api = new FakeApiServer();
  await api.start();
  t.teardown(() => api.stop());
  const dir = t.testdir({
    bin: {
      'cred.sh': `#!/bin/sh\nprintf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"%s"}}' "$EXEC_TOKEN"\n`,
      'fail.sh': `#!/bin/sh\necho "cannot log in with $EXEC_SECRET" >&2\nexit 1\n`,
    },
  });
  chmodSync(join(dir, 'bin', 'cred.sh'), 0o755);
  chmodSync(join(dir, 'bin', 'fail.sh'), 0o755);
  const server = `http://127.0.0.1:${api.port}`;
  const exec = (command: string, env: Obj[]) => ({
    exec: { apiVersion: 'client.authentication.k8s.io/v1', command, env, interactiveMode: 'Never' },
  });
  writeFileSync(join(dir, 'config'), kubeconfig({ server }, exec('./bin/cred.sh', [{ name: 'EXEC_TOKEN', value: 'tok-from-exec' }])));
  const creds = await kubeconfigCredentials([join(dir, 'config')]);
  await kubeTransport(creds).getJson('/version', {});
  t.equal(
    api.requests.at(-1)?.headers.authorization,
    'Bearer tok-from-exec',
    'the ExecCredential token, the command relative to the kubeconfig',
  );

  writeFileSync(join(dir, 'config2'), kubeconfig({ server }, exec('./bin/fail.sh', [{ name: 'EXEC_SECRET', value: 'PLANTED-EXEC-ENV' }])));
  const err = await kubeconfigCredentials([join(dir, 'config2')]).catch((e: unknown) => e);
  t.ok(err instanceof KubeconfigError);
  t.match(
    String(err),
    /users\[0\]\.user\.exec: getting credentials: cannot log in with \[redacted\]/,
    'the plugin says why, its env value redacted',
  );
  t.notMatch(String(err), /PLANTED/);
});

t.test('no proxy-url: the environment proxy, as kubectl (Go) reads HTTPS_PROXY, HTTP_PROXY and NO_PROXY', async (t) => {
  const env = {
    HTTPS_PROXY: 'http://p:3128',
    http_proxy: 'proxy.local:8080',
    NO_PROXY: '.corp.example,10.0.0.0/8,db.example:6443,[fd00::1]',
  };
  t.match(proxyFromEnvironment('https://api.example:6443', env), { url: 'http://p:3128', variable: 'HTTPS_PROXY' });
  t.match(
    proxyFromEnvironment('http://api.example', env),
    { url: 'http://proxy.local:8080', variable: 'http_proxy' },
    'a proxy without a scheme: http',
  );
  for (const server of [
    'https://k.corp.example',
    'https://corp.example',
    'https://10.1.2.3:6443',
    'https://db.example:6443',
    'https://[fd00::1]:6443',
    'https://localhost:6443',
    'https://127.0.0.2',
    'https://[::1]:443',
  ]) {
    t.equal(proxyFromEnvironment(server, env), undefined, `${server}: direct`);
  }
  t.ok(proxyFromEnvironment('https://db.example:443', env), 'NO_PROXY host:port matches that port only');
  t.equal(proxyFromEnvironment('https://x.example', { ...env, NO_PROXY: '*' }), undefined, '*: nothing proxied');

  const api = new FakeApiServer();
  const { port, ca } = await api.startTls();
  const proxy = new FakeProxy();
  const proxyPort = await proxy.start();
  t.teardown(async () => {
    await api.stop();
    await proxy.stop();
  });
  proxy.hosts.set('kube.test', '127.0.0.1');
  const dir = t.testdir({
    config: kubeconfig(
      { server: `https://kube.test:${port}`, 'certificate-authority-data': b64(ca), 'tls-server-name': 'localhost' },
      { token: 'tok-env' },
    ),
  });
  const creds = await kubeconfigCredentials([join(dir, 'config')], { env: { HTTPS_PROXY: `http://u:pw@127.0.0.1:${proxyPort}` } });
  await kubeTransport(creds).getJson('/version', {});
  t.match(
    proxy.uses,
    [{ method: 'CONNECT', target: `kube.test:${port}`, proxyAuthorization: `Basic ${b64('u:pw')}` }],
    'HTTPS_PROXY used, with its credentials',
  );
  t.equal(api.requests.at(-1)?.headers.authorization, 'Bearer tok-env');
  t.equal(api.requests.at(-1)?.servername, 'localhost', 'tls-server-name inside the tunnel');
  const direct = await kubeconfigCredentials([join(dir, 'config')], {
    env: { HTTPS_PROXY: `http://127.0.0.1:${proxyPort}`, NO_PROXY: 'kube.test' },
  });
  t.equal(direct.proxy, undefined, 'NO_PROXY: direct');
});
