import t from 'tap';
import {
  AddressIndex,
  NadUsage,
  ClusterNamespaceLabels,
  ClusterPolicySource,
  PodAddressSource,
  POLICIES_PATH,
  LIVE_PODS_FIELD_SELECTOR,
} from '../../src/policy/index.js';
import { FakeApiServer, until } from '../kube/fake-apiserver.js';

const NETWORKS = 'k8s.v1.cni.cncf.io/networks';
const pod = (name: string, rv: string, networks?: string) => ({
  kind: 'PartialObjectMetadata',
  apiVersion: 'meta.k8s.io/v1',
  metadata: {
    namespace: 'ns',
    name,
    uid: `uid-${name}`,
    resourceVersion: rv,
    ...(networks ? { annotations: { [NETWORKS]: networks } } : {}),
  },
});
const other = { namespace: 'x', name: 'x' };
const DEFAULT_NETWORK = 'v1.multus-cni.io/default-network';

t.test('pod source: a default-network selection is indexed in the configured namespace', async (t) => {
  const api = new FakeApiServer();
  const kc = await api.start();
  t.teardown(() => api.stop());
  const withDefault = {
    ...pod('a', '1'),
    metadata: {
      ...pod('a', '1').metadata,
      annotations: { [DEFAULT_NETWORK]: '[{"name":"sriov-default","mac":"02:00:00:00:00:0b"}]', [NETWORKS]: 'n' },
    },
  };
  api.setList('/api/v1/pods', [withDefault], '5');
  const index = new AddressIndex();
  const usage = new NadUsage();
  const source = new PodAddressSource(kc, index, { backoffMs: 10, usage, defaultNetworkNamespace: 'multus' });
  t.teardown(() => source.stop());
  await source.start();
  t.same(usage.podsUsing('multus', 'sriov-default'), ['ns/a'], 'the default network is a use of its NAD');
  t.same(usage.podsUsing('ns', 'n'), ['ns/a']);
  t.equal(index.conflicts('mac', '02:00:00:00:00:0b', 'multus/sriov-default', 'Cluster', other)[0]?.pod, 'ns/a', 'its MAC is held');
});

t.test('pod source: metadata-only paged list, watch, delete, 410 relist', async (t) => {
  const api = new FakeApiServer();
  const kc = await api.start();
  t.teardown(() => api.stop());
  api.setList(
    '/api/v1/pods',
    [
      pod('a', '1', '[{"name":"n","mac":"02-00-00-00-00-01"}]'),
      pod('b', '2', '[{"name":"ib","infiniband-guid":"00:11:22:33:44:55:66:77"}]'),
      pod('c', '3'),
    ],
    '10',
  );
  const index = new AddressIndex();
  const usage = new NadUsage();
  const source = new PodAddressSource(kc, index, { pageSize: 2, backoffMs: 10, usage });
  t.teardown(() => source.stop());
  await source.start();
  t.ok(source.synced());
  t.same(index.stats(), { pods: 2, addresses: 2, reservations: 0 });
  t.same(usage.podsUsing('ns', 'n'), ['ns/a'], 'NAD usage kept beside the addresses');
  t.equal(index.conflicts('mac', '02:00:00:00:00:01', 'ns/n', 'Network', other)[0]?.pod, 'ns/a', 'canonical value indexed');

  const lists = api.requests.filter((r) => r.path === '/api/v1/pods' && r.query.get('watch') !== 'true');
  t.equal(lists.length, 2, 'two pages');
  t.match(lists[0]!.headers.accept, 'as=PartialObjectMetadataList;g=meta.k8s.io;v=v1');
  t.equal(lists[0]!.headers.authorization, 'Bearer secret-token', 'kubeconfig credentials used');
  t.equal(lists[0]!.query.get('fieldSelector'), LIVE_PODS_FIELD_SELECTOR);
  t.equal(lists[1]!.query.get('continue'), '2');

  await until(() => api.watching('/api/v1/pods') === 1, 'the watch');
  const watch = api.requests.find((r) => r.query.get('watch') === 'true')!;
  t.equal(watch.query.get('resourceVersion'), '10');
  t.match(watch.headers.accept, 'as=PartialObjectMetadata;g=meta.k8s.io;v=v1');

  api.emit('/api/v1/pods', { type: 'ADDED', object: pod('d', '11', 'n@net1') });
  api.emit('/api/v1/pods', { type: 'ADDED', object: pod('e', '12', '[{"name":"n","mac":"02:00:00:00:00:05"}]') });
  await until(() => index.stats().pods === 3, 'pod e');
  api.emit('/api/v1/pods', { type: 'DELETED', object: pod('a', '13') });
  await until(() => index.stats().pods === 2, 'pod a released');
  t.same(usage.podsUsing('ns', 'n'), ['ns/d', 'ns/e'], 'pods without addresses count as users too');
  t.same(index.conflicts('mac', '02:00:00:00:00:01', 'ns/n', 'Cluster', other), []);

  // 410 Gone: the source lists again and drops what is no longer there.
  api.setList('/api/v1/pods', [pod('e', '12', '[{"name":"n","mac":"02:00:00:00:00:05"}]')], '20');
  api.emit('/api/v1/pods', { type: 'ERROR', object: { kind: 'Status', code: 410, message: 'too old resource version' } });
  api.endWatches('/api/v1/pods');
  await until(() => index.stats().pods === 1, 'relist');
  t.same(usage.podsUsing('ns', 'n'), ['ns/e'], 'relist drops usage of pods gone');
  await until(() => api.watching('/api/v1/pods') === 1, 'the second watch');
  t.equal(
    api.requests
      .filter((r) => r.query.get('watch') === 'true')
      .at(-1)!
      .query.get('resourceVersion'),
    '20',
  );
});

const policyObject = (name: string, spec: unknown, generation = 1, status?: unknown) => ({
  apiVersion: 'netattach.io/v1alpha1',
  kind: 'NetworkAttachmentPolicy',
  metadata: {
    name,
    uid: `uid-${name}`,
    generation,
    resourceVersion: String(generation),
    creationTimestamp: '2025-01-01T00:00:00Z',
    managedFields: [],
  },
  spec,
  ...(status ? { status } : {}),
});

t.test('cluster policy source: status conditions, invalid versions ignored, deletes', async (t) => {
  const api = new FakeApiServer();
  const kc = await api.start();
  t.teardown(() => api.stop());
  const accepted = {
    observedGeneration: 1,
    conditions: [{ type: 'Accepted', status: 'True', reason: 'Valid', message: 'policy is in force', observedGeneration: 1 }],
  };
  api.setList(
    POLICIES_PATH,
    [
      policyObject('good', { rules: { maxAttachments: { max: 2 } } }),
      policyObject('bad', { rules: { maxAttachments: { max: 'two' } } }),
      policyObject('already', {}, 1, accepted),
    ],
    '5',
  );
  const source = new ClusterPolicySource(kc, { backoffMs: 10 });
  t.teardown(() => source.stop());
  const changes: string[][] = [];
  source.onChange((s) => changes.push(s.policies.map((p) => p.name)));
  await source.start();
  await source.flushStatus();
  t.same(
    source.current().policies.map((p) => p.name),
    ['already', 'good'],
  );
  const patches = () => api.requests.filter((r) => r.method === 'PATCH');
  t.same(
    patches().map((r) => r.path),
    [`${POLICIES_PATH}/good/status`, `${POLICIES_PATH}/bad/status`],
    'no write when the status is already right',
  );
  t.equal(patches()[0]!.headers['content-type'], 'application/merge-patch+json');
  const badStatus = JSON.parse(patches()[1]!.body).status;
  t.match(badStatus.conditions[0], { type: 'Accepted', status: 'False', reason: 'Invalid', observedGeneration: 1 });
  t.match(badStatus.conditions[0].message, 'spec.rules.maxAttachments.max: Invalid value: "two": must be integer');

  await until(() => api.watching(POLICIES_PATH) === 1, 'the watch');
  api.emit(POLICIES_PATH, { type: 'MODIFIED', object: policyObject('good', { rules: { maxAttachments: { max: -3 } } }, 2) });
  await until(() => patches().length === 3, 'status of the invalid version');
  await source.flushStatus();
  t.equal(source.current().policies.find((p) => p.name === 'good')!.rules.maxAttachments!.max, 2, 'previous valid version in force');
  t.match(JSON.parse(patches()[2]!.body).status.conditions[0].message, 'the previous valid version stays in force');

  api.emit(POLICIES_PATH, { type: 'DELETED', object: policyObject('good', {}, 2) });
  await until(() => source.current().policies.length === 1, 'delete');
  t.same(changes.at(-1), ['already']);
});

t.test('namespace labels from a metadata-only watch', async (t) => {
  const api = new FakeApiServer();
  const kc = await api.start();
  t.teardown(() => api.stop());
  api.setList(
    '/api/v1/namespaces',
    [{ metadata: { name: 'prod', resourceVersion: '1', labels: { 'kubernetes.io/metadata.name': 'prod', tier: 'prod' } } }],
    '1',
  );
  const ns = new ClusterNamespaceLabels(kc, { backoffMs: 10 });
  t.teardown(() => ns.stop());
  await ns.start();
  t.same(ns.labels('prod'), { 'kubernetes.io/metadata.name': 'prod', tier: 'prod' });
  t.same(ns.labels('unknown'), { 'kubernetes.io/metadata.name': 'unknown' });
  t.match(api.requests[0]!.headers.accept, 'PartialObjectMetadataList');
  await until(() => api.watching('/api/v1/namespaces') === 1, 'the watch');
  api.emit('/api/v1/namespaces', {
    type: 'MODIFIED',
    object: { metadata: { name: 'prod', resourceVersion: '2', labels: { 'netattach.io/exempt': 'true' } } },
  });
  await until(() => ns.labels('prod')['netattach.io/exempt'] === 'true', 'label update');
});
