import t from 'tap';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { KubeRequestError, inClusterCredentials, kubeTransport, type KubeCredentials } from '../../src/kube/index.js';
import { FakeApiServer } from './fake-apiserver.js';

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
