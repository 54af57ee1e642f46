// The Lease adapter over a real HTTP transport: status codes become results, preconditions are
// sent, a dropped kept-alive connection is tried once more, no answer at all rejects.
import t, { type Test } from 'tap';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { kubeTransport, leaseApi } from '../../src/kube/index.js';

const PATH = '/apis/coordination.k8s.io/v1/namespaces/netattach-system/leases';

async function server(t: Test, handle: (req: http.IncomingMessage, body: string, res: http.ServerResponse) => void) {
  const srv = http.createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (d: string) => (body += d));
    req.on('end', () => handle(req, body, res));
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise((r) => (srv.closeAllConnections(), srv.close(r))));
  const port = (srv.address() as AddressInfo).port;
  return leaseApi(kubeTransport({ server: `http://127.0.0.1:${port}`, token: () => 't', source: 'static' }), 'netattach-system');
}

const json = (res: http.ServerResponse, status: number, body: unknown): void => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

t.test('create, get, delete: answers as data', async (t) => {
  const seen: string[] = [];
  const objects = new Map<string, { metadata: { name: string; uid: string; resourceVersion: string } }>();
  const api = await server(t, (req, body, res) => {
    seen.push(`${req.method} ${req.url}`);
    const name = decodeURIComponent(req.url!.slice(PATH.length + 1));
    if (req.method === 'POST') {
      const obj = JSON.parse(body) as { metadata: { name: string; uid: string; resourceVersion: string } };
      if (objects.has(obj.metadata.name)) return json(res, 409, { kind: 'Status', reason: 'AlreadyExists', message: 'exists' });
      obj.metadata.uid = 'u1';
      obj.metadata.resourceVersion = '5';
      objects.set(obj.metadata.name, obj);
      return json(res, 201, obj);
    }
    if (req.method === 'GET') return objects.has(name) ? json(res, 200, objects.get(name)) : json(res, 404, { kind: 'Status', code: 404 });
    if (req.method === 'DELETE') {
      const pre = (JSON.parse(body) as { preconditions: { uid: string; resourceVersion?: string } }).preconditions;
      const o = objects.get(name);
      if (!o) return json(res, 404, { kind: 'Status', code: 404 });
      if (o.metadata.uid !== pre.uid || o.metadata.resourceVersion !== pre.resourceVersion)
        return json(res, 409, { kind: 'Status', reason: 'Conflict', message: 'Precondition failed' });
      objects.delete(name);
      return json(res, 200, { kind: 'Status', status: 'Success' });
    }
    json(res, 403, { kind: 'Status', message: 'leases is forbidden' });
  });
  const signal = AbortSignal.timeout(5_000);
  t.match(await api.create({ metadata: { name: 'guid-1' } }, signal), { status: 'created', object: { metadata: { uid: 'u1' } } });
  t.same(await api.create({ metadata: { name: 'guid-1' } }, signal), { status: 'exists' });
  t.match(await api.get('guid-1', signal), { status: 'found', object: { metadata: { name: 'guid-1' } } });
  t.same(await api.get('guid-2', signal), { status: 'absent' });
  t.same(await api.delete('guid-1', { uid: 'other', resourceVersion: '5' }, signal), { status: 'changed' }, 'a precondition that fails');
  t.same(await api.delete('guid-1', { uid: 'u1', resourceVersion: '5' }, signal), { status: 'deleted' });
  t.same(await api.delete('guid-1', { uid: 'u1', resourceVersion: '5' }, signal), { status: 'absent' });
  t.match(seen, [
    `POST ${PATH}`,
    `POST ${PATH}`,
    `GET ${PATH}/guid-1`,
    `GET ${PATH}/guid-2`,
    `DELETE ${PATH}/guid-1`,
    `DELETE ${PATH}/guid-1`,
    `DELETE ${PATH}/guid-1`,
  ]);
});

t.test('other statuses fail with the reason; a dropped connection is tried once more; silence rejects at the deadline', async (t) => {
  let drops = 1;
  let mode: 'forbidden' | 'drop' | 'silent' = 'forbidden';
  const api = await server(t, (req, _body, res) => {
    if (mode === 'forbidden')
      return json(res, 403, { kind: 'Status', message: 'leases is forbidden: User "x" cannot create resource "leases"' });
    if (mode === 'drop' && drops-- > 0) return void req.socket.destroy();
    if (mode === 'drop') return json(res, 201, { metadata: { name: 'a', uid: 'u' } });
    // silent: never answers
  });
  t.match(await api.create({ metadata: { name: 'a' } }, AbortSignal.timeout(5_000)), {
    status: 'failed',
    reason: /^HTTP 403: leases is forbidden/,
  });
  t.match(await api.get('a', AbortSignal.timeout(5_000)), { status: 'failed', reason: /HTTP 403/ });
  mode = 'drop';
  t.match(await api.create({ metadata: { name: 'a' } }, AbortSignal.timeout(5_000)), { status: 'created' }, 'the second try answered');
  mode = 'silent';
  const alive = setInterval(() => {}, 1_000);
  t.teardown(() => clearInterval(alive));
  await t.rejects(api.create({ metadata: { name: 'b' } }, AbortSignal.timeout(100)));
});
