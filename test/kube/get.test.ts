import t from 'tap';
import type { KubeCredentials } from '../../src/kube/index.js';
import { KubeRequestError, describeKubeError, getObject, kubeTransport } from '../../src/kube/index.js';
import { FakeApiServer, NADS_PATH } from './fake-apiserver.js';

const one = (name: string) => `/apis/k8s.cni.cncf.io/v1/namespaces/default/network-attachment-definitions/${name}`;

t.test('getObject: ok, not-found, unavailable with a reason, bounded by its deadline', async (t) => {
  const api = new FakeApiServer();
  const kc = await api.start();
  t.teardown(() => api.stop());
  api.setList(NADS_PATH, [{ metadata: { namespace: 'default', name: 'here' }, spec: { config: '{}' } }], '1');
  api.getBehaviour.set('default/slow', { delayMs: 3000 });
  api.getBehaviour.set('default/forbidden', { status: 403, body: { kind: 'Status', reason: 'Forbidden', message: 'no RBAC' } });
  api.getBehaviour.set('default/broken', { status: 500 });
  const transport = kubeTransport(kc);

  t.same(await getObject(transport, one('here'), { timeoutMs: 500 }), {
    status: 'ok',
    object: { metadata: { namespace: 'default', name: 'here' }, spec: { config: '{}' } },
  });
  t.same(await getObject(transport, one('absent'), { timeoutMs: 500 }), { status: 'not-found' });
  t.same(
    await getObject(transport, one('forbidden'), { timeoutMs: 500 }),
    { status: 'unavailable', reason: 'HTTP 403 (Forbidden: no RBAC)', timedOut: false },
    '403 is not not-found',
  );
  t.same(await getObject(transport, one('broken'), { timeoutMs: 500 }), { status: 'unavailable', reason: 'HTTP 500', timedOut: false });

  const started = Date.now();
  t.same(await getObject(transport, one('slow'), { timeoutMs: 100 }), {
    status: 'unavailable',
    reason: 'the API server did not answer within 100 ms',
    timedOut: true,
  });
  t.ok(Date.now() - started < 1500, 'gives up at the deadline');

  const stop = new AbortController();
  const pending = getObject(transport, one('slow'), { timeoutMs: 1000, signal: stop.signal });
  stop.abort();
  const aborted = await pending;
  t.match(aborted, { status: 'unavailable', timedOut: false }, 'an outer abort is not reported as the deadline');
});

t.test('getObject: an unreachable server is unavailable (connection refused)', async (t) => {
  const kc: KubeCredentials = { server: 'http://127.0.0.1:1', source: 'static' };
  t.same(await getObject(kubeTransport(kc), one('x'), { timeoutMs: 1000 }), {
    status: 'unavailable',
    reason: 'ECONNREFUSED',
    timedOut: false,
  });
});

t.test('describeKubeError: status code and Status reason, socket codes, never a body', async (t) => {
  const cases: Array<{ name: string; err: unknown; want: string }> = [
    {
      name: 'Status with reason and message',
      err: new KubeRequestError(500, 'GET /x: HTTP 500: etcd is sad', 'InternalError', 'etcd is sad'),
      want: 'HTTP 500 (InternalError: etcd is sad)',
    },
    {
      name: 'Status with a message only',
      err: new KubeRequestError(404, 'GET /x: HTTP 404: gone', undefined, 'gone'),
      want: 'HTTP 404 (gone)',
    },
    { name: 'no Status', err: new KubeRequestError(502, 'GET /x: HTTP 502: <html>'), want: 'HTTP 502' },
    {
      name: 'socket error code',
      err: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }),
      want: 'ECONNREFUSED',
    },
    { name: 'plain error, first line', err: new Error('first\nsecond'), want: 'first' },
    { name: 'named error', err: new TypeError('bad'), want: 'TypeError: bad' },
    { name: 'not an error', err: 'text', want: 'text' },
  ];
  for (const c of cases) t.equal(describeKubeError(c.err), c.want, c.name);
});

t.test('a non-2xx answer carries the Status reason and message', async (t) => {
  const api = new FakeApiServer();
  const kc = await api.start();
  t.teardown(() => api.stop());
  api.setList('/api/v1/pods', [], '1');
  api.listFailures = 1;
  const err = await kubeTransport(kc)
    .getJson('/api/v1/pods', {})
    .then(
      () => undefined,
      (e: unknown) => e,
    );
  t.ok(err instanceof KubeRequestError);
  t.match(err, { statusCode: 500, reason: 'InternalError', detail: 'etcd is sad', message: 'GET /api/v1/pods: HTTP 500: etcd is sad' });
});
