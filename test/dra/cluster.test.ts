// The DRA watches against a fake API server: DeviceClasses (whole objects, the scheduler's order)
// and ResourceClaimTemplates (whole objects of which a summary of the requests is kept; a
// metadata-only GET on a miss).
import t, { type Test } from 'tap';
import { ClusterClaimTemplates, ClusterDeviceClasses, ClusterDra } from '../../src/dra/index.js';
import { type KubeCredentials, type KubeTransport, kubeTransport } from '../../src/kube/index.js';
import { FakeApiServer, until } from '../kube/fake-apiserver.js';

const CLASSES = '/apis/resource.k8s.io/v1/deviceclasses';
const TEMPLATES = '/apis/resource.k8s.io/v1/resourceclaimtemplates';
const deviceClass = (name: string, ext: string | undefined, created: string, rv = '1') => ({
  apiVersion: 'resource.k8s.io/v1',
  kind: 'DeviceClass',
  metadata: { name, resourceVersion: rv, creationTimestamp: created },
  spec: { selectors: [], ...(ext ? { extendedResourceName: ext } : {}) },
});
const template = (namespace: string, name: string, rv = '1') => ({
  kind: 'PartialObjectMetadata',
  apiVersion: 'meta.k8s.io/v1',
  metadata: { namespace, name, resourceVersion: rv },
});

t.test('DeviceClasses: classes by extendedResourceName, created-last first; watch updates', async (t) => {
  const api = new FakeApiServer();
  const kc = await api.start();
  t.teardown(() => api.stop());
  api.setList(
    CLASSES,
    [
      deviceClass('old', 'example.com/nic', '2026-01-01T00:00:00Z'),
      deviceClass('new', 'example.com/nic', '2026-02-01T00:00:00Z'),
      deviceClass('plain', undefined, '2026-01-01T00:00:00Z'),
    ],
    '5',
  );
  const classes = new ClusterDeviceClasses(kc, { backoffMs: 10 });
  t.teardown(() => classes.stop());
  await classes.start();
  t.same(
    classes.classesFor('example.com/nic').map((c) => c.name),
    ['new', 'old'],
  );
  t.same(classes.classesFor('example.com/none'), []);
  t.equal(classes.list().length, 3);
  t.equal(api.requests[0]!.headers.accept, 'application/json', 'whole objects: the spec is needed');
  await until(() => api.watching(CLASSES) === 1, 'the watch');
  api.emit(CLASSES, { type: 'DELETED', object: deviceClass('new', 'example.com/nic', '2026-02-01T00:00:00Z', '6') });
  await until(() => classes.classesFor('example.com/nic').length === 1, 'delete');
  api.emit(CLASSES, { type: 'MODIFIED', object: deviceClass('plain', 'example.com/nic', '2026-01-01T00:00:00Z', '7') });
  await until(() => classes.classesFor('example.com/nic').length === 2, 'update');
  t.same(
    classes.classesFor('example.com/nic').map((c) => c.name),
    ['old', 'plain'],
    'same time: the name sorted first',
  );
});

t.test('ResourceClaimTemplates: list/watch, then a GET on a miss', async (t) => {
  const api = new FakeApiServer();
  const kc = await api.start();
  t.teardown(() => api.stop());
  api.setList(TEMPLATES, [template('a', 'net'), template('b', 'net'), template('a', 'gpu')], '5');
  const templates = new ClusterClaimTemplates(kc, { backoffMs: 10 });
  t.teardown(() => templates.stop());
  t.equal(templates.template('a', 'net').status, 'unavailable', 'not read yet: unavailable, not missing');
  t.equal(templates.templateNamespaces('net'), undefined);
  await templates.start();
  t.equal(api.requests[0]!.headers.accept, 'application/json', 'whole objects: the requests are in the spec');
  t.same(templates.template('a', 'net'), { status: 'found' });
  t.same(templates.template('c', 'net'), { status: 'not-found' });
  t.same(templates.templateNamespaces('net'), ['a', 'b']);
  t.same(templates.list().length, 3);

  // Created a moment ago: the watch has not seen it, a GET has.
  api.getOnly.set('c/net', template('c', 'net'));
  t.same(await templates.lookup('c', 'net', 1000), { status: 'found' });
  t.same(await templates.lookup('c', 'other', 1000), { status: 'not-found' });
  t.ok(
    api.requests.some((r) => r.path === '/apis/resource.k8s.io/v1/namespaces/c/resourceclaimtemplates/net'),
    'the GET path',
  );
  api.getBehaviour.set('c/slow', { delayMs: 500 });
  const slow = await templates.lookup('c', 'slow', 50);
  t.equal(slow.status, 'unavailable', 'a slow answer is unavailable, not missing');

  await until(() => api.watching(TEMPLATES) === 1, 'the watch');
  api.emit(TEMPLATES, { type: 'DELETED', object: template('b', 'net', '6') });
  await until(() => templates.template('b', 'net').status === 'not-found', 'delete');
});

t.test('a cluster without resource.k8s.io/v1: never synced, templates unavailable (warnings only)', async (t) => {
  const api = new FakeApiServer();
  const kc = await api.start();
  t.teardown(() => api.stop());
  const dra = new ClusterDra(kc, { backoffMs: 10 });
  t.teardown(() => dra.stop());
  void dra.start();
  await until(() => dra.templates.lastFailure() !== undefined, 'a failure');
  t.equal(dra.template('a', 'net').status, 'unavailable');
  t.same(dra.classesFor('x'), []);
});

/** A ResourceClaimTemplate asking for one device of class `cls`. */
const full = (namespace: string, name: string, cls: string, rv = '1') => ({
  apiVersion: 'resource.k8s.io/v1',
  kind: 'ResourceClaimTemplate',
  metadata: { namespace, name, resourceVersion: rv },
  spec: { spec: { devices: { requests: [{ name: 'nic', exactly: { deviceClassName: cls } }] } } },
});

t.test('ResourceClaimTemplates: the device requests of each template are kept (networkClaims check), and follow the watch', async (t) => {
  const api = new FakeApiServer();
  const kc = await api.start();
  t.teardown(() => api.stop());
  api.setList(TEMPLATES, [full('a', 'net', 'sriov-a')], '5');
  const dra = new ClusterClaimTemplates(kc, { backoffMs: 10 });
  t.teardown(() => dra.stop());
  await dra.start();
  t.same(dra.templateDevices('a', 'net'), { requests: [{ name: 'nic', alternatives: [{ deviceClassName: 'sriov-a' }] }] });
  t.equal(dra.templateDevices('b', 'net'), undefined);
  await until(() => api.watching(TEMPLATES) === 1, 'the watch');
  api.emit(TEMPLATES, { type: 'MODIFIED', object: full('a', 'net', 'sriov-b', '6') });
  await until(() => dra.templateDevices('a', 'net')?.requests[0]?.alternatives[0]?.deviceClassName === 'sriov-b', 'update');
  api.emit(TEMPLATES, { type: 'DELETED', object: full('a', 'net', 'sriov-b', '7') });
  await until(() => dra.templateDevices('a', 'net') === undefined, 'delete');
});

// Issue 30 (mutation part `dra-view`): what each watch keeps across a relist, what it says while
// it cannot read, and what it logs.
t.test('DeviceClasses: by name; a relist (410 Gone) keeps exactly the listed classes; failures logged', async (t) => {
  const api = new FakeApiServer();
  const kc = await api.start();
  t.teardown(() => api.stop());
  api.setList(
    CLASSES,
    [deviceClass('a', 'example.com/nic', '2026-01-01T00:00:00Z'), deviceClass('b', 'example.com/nic', '2026-02-01T00:00:00Z')],
    '5',
  );
  api.listFailures = 1;
  const warnings: Array<[object, string]> = [];
  const classes = new ClusterDeviceClasses(kc, {
    backoffMs: 10,
    logger: { warn: (fields, message) => void warnings.push([fields, message]) },
  });
  t.teardown(() => classes.stop());
  await classes.start();
  t.strictSame(warnings, [
    [{ err: 'Error: GET /apis/resource.k8s.io/v1/deviceclasses: HTTP 500: etcd is sad' }, 'DeviceClass watch failed; retrying'],
  ]);
  t.strictSame(classes.deviceClass('a'), { name: 'a', extendedResourceName: 'example.com/nic', creationTimestamp: '2026-01-01T00:00:00Z' });
  t.equal(classes.deviceClass('c'), undefined);
  await until(() => api.watching(CLASSES) === 1, 'the watch');
  api.setList(
    CLASSES,
    [deviceClass('b', 'example.com/nic', '2026-02-01T00:00:00Z', '6'), deviceClass('c', 'example.com/other', '2026-03-01T00:00:00Z', '7')],
    '20',
  );
  api.emit(CLASSES, { type: 'ERROR', object: { kind: 'Status', code: 410, message: 'too old resource version' } });
  api.endWatches(CLASSES);
  await until(() => classes.deviceClass('c') !== undefined, 'the relist');
  t.equal(classes.deviceClass('a'), undefined, 'not in the new list: gone');
  t.strictSame(
    classes
      .list()
      .map((c) => c.name)
      .sort(),
    ['b', 'c'],
  );
  t.strictSame(
    classes.classesFor('example.com/nic').map((c) => c.name),
    ['b'],
  );
  t.strictSame(
    classes.classesFor('example.com/other').map((c) => c.name),
    ['c'],
  );
  await until(() => api.watching(CLASSES) === 1, 'the new watch');
  api.emit(CLASSES, { type: 'DELETED', object: deviceClass('unknown', 'example.com/nic', '2026-01-01T00:00:00Z', '21') });
  api.emit(CLASSES, { type: 'ADDED', object: deviceClass('d', 'example.com/nic', '2026-04-01T00:00:00Z', '22') });
  await until(() => classes.deviceClass('d') !== undefined, 'the add');
  t.strictSame(
    classes.classesFor('example.com/nic').map((c) => c.name),
    ['d', 'b'],
    'indexed at once, in the scheduler order',
  );
  // Objects without a name (or without metadata) are skipped, and the watch goes on: no failure, no reconnect.
  const watches = api.watches;
  api.emit(CLASSES, {
    type: 'ADDED',
    object: { kind: 'DeviceClass', metadata: { resourceVersion: '23' }, spec: { extendedResourceName: 'example.com/nic' } },
  });
  api.emit(CLASSES, { type: 'DELETED', object: { kind: 'DeviceClass' } });
  api.emit(CLASSES, { type: 'ADDED', object: deviceClass('e', 'example.com/nic', '2026-05-01T00:00:00Z', '24') });
  await until(() => classes.deviceClass('e') !== undefined, 'the next add');
  t.strictSame(
    classes.classesFor('example.com/nic').map((c) => c.name),
    ['e', 'd', 'b'],
  );
  t.equal(warnings.length, 1, 'no failure');
  t.equal(api.watches, watches, 'the same watch');
});

t.test('ResourceClaimTemplates: why they cannot be read, a relist that drops what is gone, the GET on a miss', async (t) => {
  const api = new FakeApiServer();
  const kc = await api.start();
  t.teardown(() => api.stop());
  const warnings: Array<[object, string]> = [];
  const templates = new ClusterClaimTemplates(kc, {
    backoffMs: 10,
    logger: { warn: (fields, message) => void warnings.push([fields, message]) },
  });
  t.teardown(() => templates.stop());
  t.strictSame(templates.template('a', 'net'), { status: 'unavailable', reason: 'ResourceClaimTemplates not read yet' });
  t.throws(() => new ClusterClaimTemplates(undefined), { message: 'ClusterClaimTemplates needs cluster credentials or a transport' });
  t.throws(() => new ClusterDeviceClasses(undefined), { message: 'ClusterDeviceClasses needs cluster credentials or a transport' });
  // No collection yet (resource.k8s.io/v1 not served): the list fails.
  void templates.start();
  await until(() => templates.lastFailure() !== undefined, 'a failure');
  const failure = templates.lastFailure()!.message;
  t.ok(failure.length > 0);
  t.strictSame(templates.template('a', 'net'), { status: 'unavailable', reason: `ResourceClaimTemplates cannot be read: ${failure}` });
  t.equal(templates.templateNamespaces('net'), undefined, 'unknown, not none');
  t.strictSame(warnings[0], [
    { err: 'Error: GET /apis/resource.k8s.io/v1/resourceclaimtemplates: HTTP 404: the server could not find the requested resource' },
    'ResourceClaimTemplate watch failed; retrying',
  ]);
  api.setList(TEMPLATES, [full('a', 'net', 'x'), full('b', 'net', 'y'), { ...full('', 'nameless', 'z') }, { ...full('a', '', 'z') }], '5');
  await until(() => templates.synced(), 'the list');
  t.strictSame(
    templates.list(),
    [
      { namespace: 'a', name: 'net' },
      { namespace: 'b', name: 'net' },
    ],
    'objects without a namespace or a name are not kept',
  );
  t.strictSame(templates.templateNamespaces('net'), ['a', 'b']);
  t.strictSame(templates.templateNamespaces('none'), [], 'read: none');
  await until(() => api.watching(TEMPLATES) === 1, 'the watch');
  api.setList(TEMPLATES, [full('b', 'net', 'y2', '6'), full('c', 'gpu', 'g', '7')], '20');
  api.emit(TEMPLATES, { type: 'ERROR', object: { kind: 'Status', code: 410, message: 'too old resource version' } });
  api.endWatches(TEMPLATES);
  await until(() => templates.template('c', 'gpu').status === 'found', 'the relist');
  t.equal(
    api.requests.filter((r) => r.query.get('watch') === 'true').at(-1)!.headers.accept,
    'application/json',
    'the watch too: whole objects',
  );
  t.strictSame(templates.template('a', 'net'), { status: 'not-found' }, 'not in the new list: gone');
  t.equal(templates.templateDevices('a', 'net'), undefined, 'with its requests');
  t.strictSame(
    templates.templateDevices('b', 'net'),
    { requests: [{ name: 'nic', alternatives: [{ deviceClassName: 'y2' }] }] },
    'the newer requests',
  );
  t.strictSame(templates.list(), [
    { namespace: 'b', name: 'net' },
    { namespace: 'c', name: 'gpu' },
  ]);
  // A delete of a template not held changes nothing and does not fail the watch; namespaces come sorted.
  await until(() => api.watching(TEMPLATES) === 1, 'the new watch');
  const watches = api.watches;
  const failures = warnings.length;
  api.emit(TEMPLATES, { type: 'DELETED', object: full('x', 'unknown', 'u', '21') });
  api.emit(TEMPLATES, { type: 'ADDED', object: full('a', 'gpu', 'g', '22') });
  await until(() => templates.template('a', 'gpu').status === 'found', 'the add');
  t.strictSame(templates.templateNamespaces('gpu'), ['a', 'c']);
  t.equal(warnings.length, failures, 'no failure');
  t.equal(api.watches, watches, 'the same watch');
  // A template the watch holds is found without a GET; a miss is one metadata-only GET.
  const gets = api.gets;
  t.strictSame(await templates.lookup('b', 'net', 1000), { status: 'found' });
  t.equal(api.gets, gets, 'from the cache');
  t.strictSame(await templates.lookup('d', 'net', 1000), { status: 'not-found' });
  t.equal(api.gets, gets + 1);
  const get = api.requests.at(-1)!;
  t.equal(get.path, '/apis/resource.k8s.io/v1/namespaces/d/resourceclaimtemplates/net');
  t.match(get.headers.accept, /^application\/json;as=PartialObjectMetadataList/);
  api.getBehaviour.set('d/slow', { delayMs: 500 });
  t.strictSame(await templates.lookup('d', 'slow', 50), { status: 'unavailable', reason: 'the API server did not answer within 50 ms' });
});

t.test('template GETs on a miss are bounded: one per name at a time, 16 in flight, absent ones remembered (issue 37)', async (t) => {
  const api = new FakeApiServer();
  const kc = await api.start();
  t.teardown(() => api.stop());
  api.setList(TEMPLATES, [], '5');
  const templates = new ClusterClaimTemplates(kc, { backoffMs: 10 });
  t.teardown(() => templates.stop());
  await templates.start();
  const gets = (ns: string) =>
    api.requests.filter((r) => r.path.startsWith(`/apis/resource.k8s.io/v1/namespaces/${ns}/resourceclaimtemplates/`)).length;

  // Ten reviews naming one absent template at once: one GET; then remembered: no GET.
  const same = await Promise.all(Array.from({ length: 10 }, () => templates.lookup('x', 'gone', 1000)));
  t.same(new Set(same.map((s) => s.status)), new Set(['not-found']));
  t.equal(gets('x'), 1, 'concurrent lookups of one name share a GET');
  t.same(await templates.lookup('x', 'gone', 1000), { status: 'not-found' });
  t.equal(gets('x'), 1, 'an absent template is remembered');
  // The watch brings it: forgotten at once, found from the cache.
  await until(() => api.watching(TEMPLATES) === 1, 'the watch');
  api.emit(TEMPLATES, { type: 'ADDED', object: template('x', 'gone', '6') });
  await until(() => templates.template('x', 'gone').status === 'found', 'added');
  t.same(await templates.lookup('x', 'gone', 1000), { status: 'found' });

  // 40 distinct slow templates: at most 16 GETs reach the API server while they wait.
  for (let i = 0; i < 40; i++) api.getBehaviour.set(`y/t${i}`, { delayMs: 300 });
  const slow = Array.from({ length: 40 }, (_, i) => templates.lookup('y', `t${i}`, 200));
  await new Promise((r) => setTimeout(r, 100));
  t.equal(gets('y'), 16, 'sixteen in flight, the rest waiting');
  const outcomes = await Promise.all(slow);
  t.ok(
    outcomes.every((o) => o.status === 'unavailable'),
    'each slow or waiting lookup ends unavailable within its deadline',
  );
  t.equal(gets('y'), 16, 'the waiting ones sent no GET once their deadline passed');
});

/** A transport that counts the single-object GETs it is asked for, sent or not (a GET with 1 ms left may never reach the server). */
function countingTransport(kc: KubeCredentials): { transport: KubeTransport; attempted: (ns: string) => number } {
  const real = kubeTransport(kc);
  const paths: string[] = [];
  const transport: KubeTransport = {
    ...real,
    getJson: (path, query, accept, signal) => {
      if (path.includes('/resourceclaimtemplates/')) paths.push(path);
      return real.getJson(path, query, accept, signal);
    },
  };
  const attempted = (ns: string) => paths.filter((p) => p.startsWith(`/apis/resource.k8s.io/v1/namespaces/${ns}/`)).length;
  return { transport, attempted };
}

/** A fake API server without templates, and the template watch over a counting transport, started. */
async function startCounted(t: Test) {
  const api = new FakeApiServer();
  const kc = await api.start();
  t.teardown(() => api.stop());
  api.setList(TEMPLATES, [], '5');
  const { transport, attempted } = countingTransport(kc);
  const templates = new ClusterClaimTemplates(undefined, { transport, backoffMs: 10 });
  t.teardown(() => templates.stop());
  await templates.start();
  return { api, templates, attempted };
}

t.test(
  'template lookup slots: a full queue answers at once, a waiter past its deadline sends nothing, a late slot gets what is left',
  async (t) => {
    const { api, templates, attempted } = await startCounted(t);

    // 16 GETs in flight (their deadline 400 ms), 256 waiting (100 ms), then 4 more: refused at once.
    api.defaultGetBehaviour = { delayMs: 2_000 };
    const running = Array.from({ length: 16 }, (_, i) => templates.lookup('run', `t${i}`, 400));
    const waiting = Array.from({ length: 256 }, (_, i) => templates.lookup('wait', `t${i}`, 100));
    const refused = await Promise.all(Array.from({ length: 4 }, (_, i) => templates.lookup('over', `t${i}`, 100)));
    t.strictSame(
      refused,
      Array.from({ length: 4 }, () => ({
        status: 'unavailable',
        reason: 'too many ResourceClaimTemplate lookups in progress (16 running, 256 waiting)',
      })),
    );
    const waited = await Promise.all(waiting);
    t.strictSame(
      new Set(waited.map((w) => JSON.stringify(w))),
      new Set([JSON.stringify({ status: 'unavailable', reason: 'no ResourceClaimTemplate lookup slot free within 100 ms' })]),
    );
    t.equal(attempted('wait') + attempted('over'), 0, 'no GET asked for by a lookup that never had a slot');
    t.equal(attempted('run'), 16);

    // A lookup that waits for a slot gets, for its GET, only what is left of its deadline.
    const late = templates.lookup('late', 'x', 700);
    const ran = await Promise.all(running);
    t.ok(ran.every((r) => r.status === 'unavailable'));
    const answer = await late;
    t.equal(attempted('late'), 1, 'the late lookup had a slot');
    const within = Number(/within (\d+) ms/.exec(answer.status === 'unavailable' ? answer.reason : '')?.[1]);
    t.ok(within >= 1 && within < 700 - 200, `the late GET's deadline (${within} ms) is what was left after the wait`);
  },
);

t.test(
  'remembered-absent templates: asked again while the watch fails, after a delete, and when the watch brought one mid-GET',
  async (t) => {
    const { api, templates, attempted } = await startCounted(t);
    await until(() => api.watching(TEMPLATES) === 1, 'the watch');

    // A lookup that ended unavailable is not kept: the next one asks again.
    api.getBehaviour.set('a/slow', { delayMs: 500 });
    t.equal((await templates.lookup('a', 'slow', 50)).status, 'unavailable');
    api.getBehaviour.delete('a/slow');
    api.getOnly.set('a/slow', template('a', 'slow'));
    t.strictSame(await templates.lookup('a', 'slow', 1000), { status: 'found' });
    t.equal(attempted('a'), 2);

    // Remembered absent, then added by the watch and deleted again, then created: found by a GET.
    t.strictSame(await templates.lookup('b', 'net', 1000), { status: 'not-found' });
    api.emit(TEMPLATES, { type: 'ADDED', object: template('b', 'net', '6') });
    await until(() => templates.template('b', 'net').status === 'found', 'added');
    api.emit(TEMPLATES, { type: 'DELETED', object: template('b', 'net', '7') });
    await until(() => templates.template('b', 'net').status === 'not-found', 'deleted');
    api.getOnly.set('b/net', template('b', 'net'));
    t.strictSame(await templates.lookup('b', 'net', 1000), { status: 'found' }, 'the add forgot that it was absent');
    t.equal(attempted('b'), 2);

    // The GET says absent while the watch brings it: not remembered as absent.
    api.getBehaviour.set('c/race', { delayMs: 300 });
    const racing = templates.lookup('c', 'race', 2000);
    await until(() => api.getsInFlight === 1, 'the GET under way');
    api.emit(TEMPLATES, { type: 'ADDED', object: template('c', 'race', '8') });
    await until(() => templates.template('c', 'race').status === 'found', 'added mid-GET');
    t.strictSame(await racing, { status: 'not-found' }, 'what the GET said');
    api.emit(TEMPLATES, { type: 'DELETED', object: template('c', 'race', '9') });
    await until(() => templates.template('c', 'race').status === 'not-found', 'deleted');
    api.getBehaviour.delete('c/race');
    api.getOnly.set('c/race', template('c', 'race'));
    t.strictSame(await templates.lookup('c', 'race', 1000), { status: 'found' });
    t.equal(attempted('c'), 2);

    // Remembered absent, then the watch fails: the memory is not trusted, a GET is sent.
    t.strictSame(await templates.lookup('d', 'net', 1000), { status: 'not-found' });
    t.strictSame(await templates.lookup('d', 'net', 1000), { status: 'not-found' });
    t.equal(attempted('d'), 1, 'remembered');
    api.listFailures = 1_000_000;
    api.watchFailures = 1_000_000;
    api.endWatches(TEMPLATES);
    await until(() => templates.staleSince() !== undefined, 'the watch failing');
    api.getOnly.set('d/net', template('d', 'net'));
    t.strictSame(await templates.lookup('d', 'net', 1000), { status: 'found' }, 'asked again while the cache may be stale');
    t.equal(attempted('d'), 2);
  },
);

t.test('a GET that says absent during a relist (the new list half read) is answered, not thrown', async (t) => {
  const api = new FakeApiServer();
  const kc = await api.start();
  t.teardown(() => api.stop());
  api.setList(TEMPLATES, [template('a', 'net')], '5');
  const templates = new ClusterClaimTemplates(kc, { backoffMs: 10 });
  t.teardown(() => templates.stop());
  await templates.start();
  await until(() => api.watching(TEMPLATES) === 1, 'the watch');
  // A relist of two pages (the watch's page size is 500): the second page comes 500 ms later.
  api.setList(
    TEMPLATES,
    Array.from({ length: 501 }, (_, i) => template('a', `t${i}`, '20')),
    '20',
  );
  api.continueDelayMs = 500;
  api.emit(TEMPLATES, { type: 'ERROR', object: { kind: 'Status', code: 410, message: 'too old resource version' } });
  api.endWatches(TEMPLATES);
  await until(() => api.requests.some((r) => r.query.get('continue') !== null), 'the second page asked for');
  t.strictSame(await templates.lookup('b', 'none', 1000), { status: 'not-found' });
  await until(() => templates.template('a', 't500').status === 'found', 'the relist');
  t.equal(templates.template('a', 'net').status, 'not-found', 'the relist replaced the old list');
});
