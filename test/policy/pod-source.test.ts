// What the pod watch feeds the address index and the NAD usage index (issue 30), through the
// public functions and a fake API server: what a running, changed, terminating, finished or
// deleted pod holds, which callbacks fire with what, and in which order.
import t from 'tap';
import { AddressIndex, NadUsage } from '../../src/policy/index.js';
import { indexPod, LIVE_PODS_FIELD_SELECTOR, PodAddressSource, podNetworkFacts, type IndexedPod } from '../../src/policy/pod-source.js';
import { FakeApiServer, until } from '../kube/fake-apiserver.js';

const NETWORKS = 'k8s.v1.cni.cncf.io/networks';
const DEFAULT_NETWORK = 'v1.multus-cni.io/default-network';
const stranger = { namespace: 'x', name: 'stranger' };
const vmiRef = { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', name: 'vm1', uid: 'uid-vm1', controller: true };

interface Meta {
  namespace?: string;
  name?: string;
  uid?: string;
  annotations?: Record<string, string>;
  ownerReferences?: unknown[];
  deletionTimestamp?: string;
  resourceVersion?: string;
}
const obj = (metadata: Meta) => ({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata });
const pod = (name: string, rv: string, networks?: string, extra: Meta = {}) =>
  obj({
    namespace: 'ns',
    name,
    uid: `uid-${name}`,
    resourceVersion: rv,
    ...(networks ? { annotations: { [NETWORKS]: networks } } : {}),
    ...extra,
  });
const holders = (index: AddressIndex, value: string, network = 'ns/n') =>
  index.conflicts('mac', value, network, 'Cluster', stranger).map((h) => h.pod);

t.test('the watch keeps only live pods: Succeeded and Failed are filtered out by the apiserver', async (t) => {
  t.equal(LIVE_PODS_FIELD_SELECTOR, 'status.phase!=Succeeded,status.phase!=Failed');
});

t.test('podNetworkFacts: both annotations read, NADs qualified, addresses canonical, with their network', async (t) => {
  const cases: Array<[string, string | undefined, string | undefined, string | undefined, { addresses: unknown[]; nads: string[] }]> = [
    ['nothing', undefined, undefined, undefined, { addresses: [], nads: [] }],
    ['an empty networks annotation', '', undefined, undefined, { addresses: [], nads: [] }],
    ['a list, the same NAD twice', 'a, a@eth2', undefined, undefined, { addresses: [], nads: ['ns/a', 'ns/a'] }],
    [
      'a MAC through cni-args',
      '[{"name":"a","cni-args":{"mac":"02:AA:00:00:00:01"}}]',
      undefined,
      undefined,
      { addresses: [{ kind: 'mac', value: '02:aa:00:00:00:01', network: 'ns/a' }], nads: ['ns/a'] },
    ],
    [
      'a GUID',
      '[{"name":"ib","namespace":"net","infiniband-guid":"00:11:22:33:44:55:66:77"}]',
      undefined,
      undefined,
      { addresses: [{ kind: 'infiniband-guid', value: '00:11:22:33:44:55:66:77', network: 'net/ib' }], nads: ['net/ib'] },
    ],
    [
      'the default network, default namespace kube-system',
      undefined,
      '[{"name":"d","mac":"02:00:00:00:00:0d"}]',
      undefined,
      { addresses: [{ kind: 'mac', value: '02:00:00:00:00:0d', network: 'kube-system/d' }], nads: ['kube-system/d'] },
    ],
    [
      'the default network in the configured namespace, after the networks',
      'a',
      'd',
      'multus',
      { addresses: [], nads: ['ns/a', 'multus/d'] },
    ],
  ];
  for (const [name, networks, defaultNetwork, defaultNamespace, expected] of cases)
    t.same(podNetworkFacts('ns', networks, defaultNetwork, defaultNamespace), expected, name);
});

t.test('indexPod: what a pod holds, and the pod as indexed', async (t) => {
  const index = new AddressIndex();
  const usage = new NadUsage();
  const mac = '[{"name":"n","mac":"02:00:00:00:00:01"}]';
  t.equal(indexPod(index, obj({ name: 'p', annotations: { [NETWORKS]: mac } }), usage), undefined, 'no namespace: not indexed');
  t.equal(indexPod(index, obj({ namespace: 'ns', annotations: { [NETWORKS]: mac } }), usage), undefined, 'no name: not indexed');
  t.equal(indexPod(index, { kind: 'PartialObjectMetadata' } as never, usage), undefined, 'no metadata: not indexed');
  t.same(index.stats(), { pods: 0, addresses: 0, reservations: 0 });
  t.same(usage.stats(), { pods: 0, nads: 0 });

  t.same(indexPod(index, pod('a', '1', mac), usage), { namespace: 'ns', name: 'a', uid: 'uid-a' });
  t.same(holders(index, '02:00:00:00:00:01'), ['ns/a']);
  t.same(usage.podsUsing('ns', 'n'), ['ns/a']);
  t.same(
    indexPod(index, obj({ namespace: 'ns', name: 'nouid', annotations: { [NETWORKS]: 'n' } })),
    { namespace: 'ns', name: 'nouid' },
    'no uid: none reported; no usage index: fine',
  );
  // Not even as an undefined field: the pod as indexed has only what it has.
  t.strictSame(Object.keys(indexPod(index, obj({ namespace: 'ns', name: 'nouid', annotations: { [NETWORKS]: 'n' } }))!), [
    'namespace',
    'name',
  ]);
  t.strictSame(Object.keys(indexPod(index, pod('a', '1', mac), usage)!), ['namespace', 'name', 'uid'], 'no sharing owner: none reported');
  t.strictSame(
    indexPod(index, obj({ namespace: 'ns', name: 'bare', uid: 'uid-bare' }), usage),
    { namespace: 'ns', name: 'bare', uid: 'uid-bare' },
    'no annotations at all: indexed, holding nothing',
  );
  t.same(index.stats(), { pods: 1, addresses: 1, reservations: 0 }, 'only pod a holds an address');
  t.same(usage.stats(), { pods: 1, nads: 1 }, 'and uses a NAD');

  // The sharing owner: only for pods holding addresses, only for listed owner kinds.
  const vm = { key: 'uid-vm1', label: 'VM ns/vm1', namespace: 'ns', kind: 'VirtualMachineInstance', name: 'vm1' };
  t.same(indexPod(index, pod('launcher', '2', '[{"name":"n","mac":"02:00:00:00:00:02"}]', { ownerReferences: [vmiRef] })), {
    namespace: 'ns',
    name: 'launcher',
    uid: 'uid-launcher',
    owner: vm,
  });
  t.ok(index.ownerHasPods('uid-vm1'));
  t.same(index.conflicts('mac', '02:00:00:00:00:02', 'ns/n', 'Cluster', stranger)[0]?.owner, vm, 'its address is held for the VM');
  t.ok(index.heldBy('mac', '02:00:00:00:00:02', { kind: 'VirtualMachineInstance', namespace: 'ns', name: 'vm1' }));
  t.same(
    indexPod(index, pod('idle', '3', 'n', { ownerReferences: [vmiRef] })),
    { namespace: 'ns', name: 'idle', uid: 'uid-idle' },
    'no addresses: no owner',
  );
  t.same(
    indexPod(index, pod('off', '4', '[{"name":"n","mac":"02:00:00:00:00:03"}]', { ownerReferences: [vmiRef] }), undefined, undefined, []),
    { namespace: 'ns', name: 'off', uid: 'uid-off' },
    'sharing turned off',
  );
  const custom = indexPod(
    index,
    pod('rs', '5', '[{"name":"n","mac":"02:00:00:00:00:04"}]', {
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web', uid: 'uid-rs', controller: true }],
    }),
    undefined,
    undefined,
    ['apps/ReplicaSet'],
  );
  t.equal(custom?.owner?.key, 'uid-rs', 'an owner kind given by --address-sharing-owner');

  // The default network resolves where it is told to.
  indexPod(
    index,
    pod('d', '6', undefined, { annotations: { [DEFAULT_NETWORK]: '[{"name":"def","mac":"02:00:00:00:00:05"}]' } }),
    usage,
    'multus',
  );
  t.same(
    index.conflicts('mac', '02:00:00:00:00:05', 'multus/def', 'Network', stranger).map((h) => h.pod),
    ['ns/d'],
  );
  t.same(usage.podsUsing('multus', 'def'), ['ns/d']);

  // Indexing again replaces: a changed annotation releases the old address and NAD.
  indexPod(index, pod('a', '7', '[{"name":"m","mac":"02:00:00:00:00:09"}]'), usage);
  t.same(holders(index, '02:00:00:00:00:01'), []);
  t.same(holders(index, '02:00:00:00:00:09', 'ns/m'), ['ns/a']);
  t.same(usage.podsUsing('ns', 'n'), []);
  t.same(usage.podsUsing('ns', 'm'), ['ns/a']);
});

t.test('pod source: running, changed, terminating, finished and deleted pods; callbacks after the indexes', async (t) => {
  const api = new FakeApiServer();
  const kc = await api.start();
  t.teardown(() => api.stop());
  api.setList(
    '/api/v1/pods',
    [pod('run', '1', '[{"name":"n","mac":"02:00:00:00:00:01"}]'), obj({ namespace: 'ns', resourceVersion: '2' })],
    '10',
  );
  const index = new AddressIndex();
  const usage = new NadUsage();
  const events: string[] = [];
  const indexed: IndexedPod[] = [];
  const removed: unknown[] = [];
  const source = new PodAddressSource(kc, index, {
    backoffMs: 10,
    pageSize: 1,
    usage,
    onIndexed: (p) => {
      indexed.push(p);
      events.push(
        `indexed ${p.name} live=${index.hasPod(p.namespace, p.name)} used=${usage.podsUsing('ns', 'n').includes(`ns/${p.name}`)}`,
      );
    },
    onRemove: (p) => {
      removed.push(p);
      events.push(
        `onRemove ${p.name} live=${index.hasPod(p.namespace, p.name)} used=${usage.podsUsing('ns', 'n').includes(`ns/${p.name}`)}`,
      );
    },
    observer: {
      resync: () => events.push('observer resync'),
      upsert: (o) => events.push(`observer upsert ${o.metadata?.name ?? '-'} live=${index.hasPod('ns', o.metadata?.name ?? '')}`),
      remove: (o) => events.push(`observer remove ${o.metadata?.name ?? '-'} live=${index.hasPod('ns', o.metadata?.name ?? '')}`),
      resynced: () => events.push('observer resynced'),
    },
  });
  t.teardown(() => source.stop());
  await source.start();
  t.same(
    events,
    [
      'observer resync',
      'indexed run live=true used=true',
      'observer upsert run live=true',
      'observer upsert - live=false',
      'observer resynced',
    ],
    'the first list: each pod indexed, then told; a pod without a name only to the observer',
  );
  t.same(indexed, [{ namespace: 'ns', name: 'run', uid: 'uid-run' }]);
  t.same(holders(index, '02:00:00:00:00:01'), ['ns/run'], 'a running pod holds its address');
  const lists = api.requests.filter((r) => r.query.get('watch') !== 'true');
  t.same(
    lists.map((r) => [r.path, r.query.get('limit'), r.query.get('continue'), r.query.get('fieldSelector')]),
    [
      ['/api/v1/pods', '1', null, LIVE_PODS_FIELD_SELECTOR],
      ['/api/v1/pods', '1', '1', LIVE_PODS_FIELD_SELECTOR],
    ],
    'pods of every namespace, live ones only, in pages of pageSize',
  );
  t.equal(lists[0]!.headers.accept, 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json', 'metadata only');

  // Pods named so that a delete missing its namespace or name would find them if read as "undefined".
  indexPod(
    index,
    obj({ namespace: 'undefined', name: 'no-namespace', annotations: { [NETWORKS]: '[{"name":"n","mac":"02:00:00:00:00:0e"}]' } }),
  );
  indexPod(
    index,
    obj({ namespace: 'ns', name: 'undefined', annotations: { [NETWORKS]: '[{"name":"u","mac":"02:00:00:00:00:0f"}]' } }),
    usage,
  );
  await until(() => api.watching('/api/v1/pods') === 1, 'the watch');
  const watch = api.requests.find((r) => r.query.get('watch') === 'true')!;
  t.equal(watch.query.get('fieldSelector'), LIVE_PODS_FIELD_SELECTOR);
  t.equal(watch.headers.accept, 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json');
  events.length = 0;
  // Terminating (deletionTimestamp set, containers still running): it still holds the address.
  api.emit('/api/v1/pods', {
    type: 'MODIFIED',
    object: pod('run', '11', '[{"name":"n","mac":"02:00:00:00:00:01"}]', { deletionTimestamp: '2026-12-02T10:00:00Z' }),
  });
  await until(() => events.length === 2, 'the terminating pod');
  t.same(holders(index, '02:00:00:00:00:01'), ['ns/run'], 'a terminating pod still holds its address');
  t.same(removed, [], 'and is not released');
  // Finished: the field selector drops it, which the apiserver reports as DELETED.
  api.emit('/api/v1/pods', { type: 'DELETED', object: pod('run', '12', '[{"name":"n","mac":"02:00:00:00:00:01"}]') });
  await until(() => removed.length === 1, 'the finished pod');
  t.same(holders(index, '02:00:00:00:00:01'), [], 'a finished pod holds nothing');
  t.same(usage.podsUsing('ns', 'n'), [], 'and uses no NAD');
  t.same(removed, [{ namespace: 'ns', name: 'run', uid: 'uid-run' }], 'onRemove names the pod and its uid');
  t.same(
    events.slice(2),
    ['onRemove run live=false used=false', 'observer remove run live=false'],
    'released from both indexes before the callbacks',
  );

  events.length = 0;
  api.emit('/api/v1/pods', {
    type: 'ADDED',
    object: obj({
      namespace: 'ns',
      name: 'nouid',
      resourceVersion: '13',
      annotations: { [NETWORKS]: '[{"name":"n","mac":"02:00:00:00:00:02"}]' },
    }),
  });
  await until(() => index.hasPod('ns', 'nouid'), 'a pod without uid');
  api.emit('/api/v1/pods', { type: 'DELETED', object: obj({ namespace: 'ns', name: 'nouid', resourceVersion: '14' }) });
  await until(() => removed.length === 2, 'its delete');
  t.same(removed[1], { namespace: 'ns', name: 'nouid' }, 'no uid: none named');
  t.strictSame(Object.keys(removed[1] as object), ['namespace', 'name'], 'not even as undefined');
  t.notOk(index.hasPod('ns', 'nouid'), 'the DELETED object needs no annotations to release the pod');
  api.emit('/api/v1/pods', { type: 'DELETED', object: obj({ name: 'no-namespace', resourceVersion: '15' }) });
  api.emit('/api/v1/pods', { type: 'DELETED', object: obj({ namespace: 'ns', resourceVersion: '16' }) });
  await until(
    () =>
      events.filter((e) => e === 'observer remove - live=false').length === 1 && events.includes('observer remove no-namespace live=false'),
    'the nameless deletes',
  );
  t.equal(removed.length, 2, 'a delete without namespace or name calls no onRemove');
  t.same(
    [holders(index, '02:00:00:00:00:0e'), holders(index, '02:00:00:00:00:0f', 'ns/u')],
    [['undefined/no-namespace'], ['ns/undefined']],
    'and releases nobody',
  );
  t.same(usage.podsUsing('ns', 'u'), ['ns/undefined']);
});

t.test('pod source: a relist drops what is gone from both indexes, and tells the observer', async (t) => {
  const api = new FakeApiServer();
  const kc = await api.start();
  t.teardown(() => api.stop());
  api.setList(
    '/api/v1/pods',
    [pod('a', '1', '[{"name":"n","mac":"02:00:00:00:00:01"}]'), pod('b', '2', '[{"name":"n","mac":"02:00:00:00:00:02"}]')],
    '10',
  );
  const index = new AddressIndex();
  const usage = new NadUsage();
  const seen: string[] = [];
  const source = new PodAddressSource(kc, index, {
    backoffMs: 10,
    usage,
    observer: {
      resync: () => seen.push('resync'),
      upsert: () => {},
      remove: () => {},
      resynced: () => seen.push(`resynced pods=${index.stats().pods} users=${usage.podsUsing('ns', 'n').length}`),
    },
  });
  t.teardown(() => source.stop());
  await source.start();
  await until(() => api.watching('/api/v1/pods') === 1, 'the watch');
  api.setList('/api/v1/pods', [pod('b', '2', '[{"name":"n","mac":"02:00:00:00:00:02"}]')], '20');
  api.emit('/api/v1/pods', { type: 'ERROR', object: { kind: 'Status', code: 410, message: 'too old resource version' } });
  api.endWatches('/api/v1/pods');
  await until(() => seen.length === 4, 'the relist');
  t.same(
    seen,
    ['resync', 'resynced pods=2 users=2', 'resync', 'resynced pods=1 users=1'],
    'the indexes have ended their resync before the observer hears of it',
  );
  t.same(holders(index, '02:00:00:00:00:01'), []);
  t.same(usage.podsUsing('ns', 'n'), ['ns/b']);
});

const watchRequests = (api: FakeApiServer): number => api.requests.filter((r) => r.query.get('watch') === 'true').length;

t.test('pod source: with nothing optional (no usage index, observer, callbacks or logger) it fails over and releases', async (t) => {
  const api = new FakeApiServer();
  const kc = await api.start();
  t.teardown(() => api.stop());
  api.setList('/api/v1/pods', [pod('a', '1', '[{"name":"n","mac":"02:00:00:00:00:01"}]')], '10');
  api.listFailures = 1;
  const index = new AddressIndex();
  const source = new PodAddressSource(kc, index, { backoffMs: 10 });
  t.teardown(() => source.stop());
  void source.start();
  // The failed list is retried with no logger to tell.
  await until(() => source.synced(), 'the list after a failure');
  t.same(holders(index, '02:00:00:00:00:01'), ['ns/a']);
  await until(() => api.watching('/api/v1/pods') === 1, 'the watch');
  api.emit('/api/v1/pods', { type: 'DELETED', object: pod('a', '11') });
  api.emit('/api/v1/pods', { type: 'ADDED', object: pod('b', '12', '[{"name":"n","mac":"02:00:00:00:00:02"}]') });
  // Or the watch failing (the handler threw): then at once, not at the time limit.
  await until(() => index.hasPod('ns', 'b') || source.lastFailure() !== undefined || watchRequests(api) > 1, 'the pod after the delete');
  t.ok(index.hasPod('ns', 'b'));
  t.same(holders(index, '02:00:00:00:00:01'), [], 'the deleted pod is released');
  t.equal(watchRequests(api), 1, 'on the same watch: the delete failed nothing');
  t.equal(source.lastFailure(), undefined);
});

t.test('pod source: a DELETED object without metadata goes to the observer only, and fails nothing', async (t) => {
  const api = new FakeApiServer();
  const kc = await api.start();
  t.teardown(() => api.stop());
  api.setList('/api/v1/pods', [pod('a', '1', '[{"name":"n","mac":"02:00:00:00:00:01"}]')], '10');
  const index = new AddressIndex();
  const usage = new NadUsage();
  const removed: unknown[] = [];
  const observed: unknown[] = [];
  const warnings: unknown[] = [];
  const logger = { info() {}, error() {}, warn: (o: object) => warnings.push(o) };
  const source = new PodAddressSource(kc, index, {
    backoffMs: 10,
    usage,
    logger,
    onRemove: (p) => removed.push(p),
    observer: { resync() {}, upsert() {}, remove: (o) => observed.push(o), resynced() {} },
  });
  t.teardown(() => source.stop());
  await source.start();
  await until(() => api.watching('/api/v1/pods') === 1, 'the watch');
  const bare = { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1' };
  api.emit('/api/v1/pods', { type: 'DELETED', object: bare });
  api.emit('/api/v1/pods', { type: 'ADDED', object: pod('b', '12', '[{"name":"n","mac":"02:00:00:00:00:02"}]') });
  await until(() => index.hasPod('ns', 'b') || warnings.length > 0 || watchRequests(api) > 1, 'the pod after the delete');
  t.ok(index.hasPod('ns', 'b'));
  t.same(observed, [bare], 'the observer is told');
  t.same(removed, [], 'no onRemove: it names no pod');
  t.same(holders(index, '02:00:00:00:00:01'), ['ns/a'], 'and releases nobody');
  t.same(usage.podsUsing('ns', 'n').sort(), ['ns/a', 'ns/b']);
  t.same(warnings, []);
  t.equal(watchRequests(api), 1, 'on the same watch');
});

t.test('pod source: failures are logged and retried; it needs credentials or a transport', async (t) => {
  const api = new FakeApiServer();
  const kc = await api.start();
  t.teardown(() => api.stop());
  api.setList('/api/v1/pods', [pod('a', '1', '[{"name":"n","mac":"02:00:00:00:00:01"}]')], '10');
  api.listFailures = 1;
  const warnings: Array<[object, string]> = [];
  const logger = { info() {}, error() {}, warn: (o: object, msg: string) => warnings.push([o, msg]) };
  const source = new PodAddressSource(kc, new AddressIndex(), { backoffMs: 10, logger });
  t.teardown(() => source.stop());
  await source.start();
  t.equal(warnings.length, 1);
  t.equal(warnings[0]![1], 'pod watch failed; retrying');
  t.match(warnings[0]![0], { err: /500|InternalError|watch failed/ });
  t.throws(() => new PodAddressSource(undefined, new AddressIndex()), {
    message: 'PodAddressSource needs cluster credentials or a transport',
  });
});
