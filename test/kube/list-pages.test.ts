// The list in pages through a fake transport (no HTTP): each page asked with limit and the
// previous page's continue token, handed over and dropped; a continue token that expired (410
// Expired, as the apiserver answers after its compaction) restarts the list from the start,
// as a new resync, and the watch starts from the complete list's resourceVersion.
import t from 'tap';
import { KubeRequestError, ListWatch, type KubeObject, type KubeTransport } from '../../src/kube/index.js';

const obj = (n: number): KubeObject => ({ metadata: { namespace: 'ns', name: `p${n}` } });

function pagedTransport(count: number, expireAt: Set<string>) {
  const asked: Array<{ limit?: string; continue?: string }> = [];
  const watched: string[] = [];
  let rv = 100;
  const transport: KubeTransport = {
    async getJson(_path, query) {
      asked.push({ limit: query['limit'], continue: query['continue'] });
      const cont = query['continue'];
      if (cont && expireAt.delete(cont)) throw new KubeRequestError(410, 'The provided continue parameter is too old', 'Expired');
      if (!cont) rv++;
      const from = cont ? Number(cont.split(':')[1]) : 0;
      const to = Math.min(count, from + Number(query['limit']));
      const items = Array.from({ length: to - from }, (_, i) => obj(from + i));
      return { metadata: { resourceVersion: String(rv), ...(to < count ? { continue: `${rv}:${to}` } : {}) }, items };
    },
    watch: (_p, q, _a, _e, signal) => {
      watched.push(q['resourceVersion'] ?? '');
      return new Promise<void>((resolve) =>
        signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true }),
      );
    },
    patchJson: () => Promise.reject(new Error('unused')),
  };
  return { transport, asked, watched };
}

function recorder() {
  const seen: string[] = [];
  return {
    seen,
    handler: {
      resync: () => void seen.push('resync'),
      upsert: (o: KubeObject) => void seen.push(o.metadata!.name!),
      remove: (o: KubeObject) => void seen.push(`remove:${o.metadata!.name}`),
      resynced: () => void seen.push('resynced'),
    },
  };
}

t.test('pages of pageSize, each with the previous continue token, every item handed over once', async (t) => {
  const { transport, asked, watched } = pagedTransport(7, new Set());
  const { seen, handler } = recorder();
  const lw = new ListWatch({ transport, path: '/api/v1/pods', listAccept: 'a', watchAccept: 'w', pageSize: 3, handler });
  t.teardown(() => lw.stop());
  await lw.start();
  t.same(asked, [
    { limit: '3', continue: undefined },
    { limit: '3', continue: '101:3' },
    { limit: '3', continue: '101:6' },
  ]);
  t.same(seen, ['resync', 'p0', 'p1', 'p2', 'p3', 'p4', 'p5', 'p6', 'resynced']);
  await new Promise((r) => setImmediate(r));
  t.same(watched, ['101'], 'the watch starts at the resourceVersion of the first page');
});

t.test('a continue token that expired (410) restarts the list from the start, as a new resync', async (t) => {
  const { transport, asked, watched } = pagedTransport(5, new Set(['101:4']));
  const { seen, handler } = recorder();
  const errors: unknown[] = [];
  const lw = new ListWatch({
    transport,
    path: '/api/v1/pods',
    listAccept: 'a',
    watchAccept: 'w',
    pageSize: 2,
    backoffMs: 1,
    handler,
    onError: (err) => errors.push(err),
  });
  // The retry waits on an unref'd timer (a retry loop alone keeps no process alive): with nothing
  // else pending, this test's process could exit before the list restarts. Hold it open.
  const alive = setInterval(() => {}, 1_000);
  t.teardown(() => {
    clearInterval(alive);
    lw.stop();
  });
  await lw.start();
  t.same(
    asked.map((a) => a.continue ?? '-'),
    ['-', '101:2', '101:4', '-', '102:2', '102:4'],
    'after the expired page, a list from the start with a new resourceVersion',
  );
  t.same(
    seen,
    ['resync', 'p0', 'p1', 'p2', 'p3', 'resync', 'p0', 'p1', 'p2', 'p3', 'p4', 'resynced'],
    'the restarted list is a resync of its own; the broken one never ends as a resync',
  );
  t.equal(errors.length, 1);
  t.match(errors[0], { statusCode: 410, reason: 'Expired' });
  await new Promise((r) => setImmediate(r));
  t.same(watched, ['102'], 'the watch starts at the complete list, not the expired one');
  t.ok(lw.synced());
});
