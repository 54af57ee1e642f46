import t from 'tap';
import { DEFAULT_ADMISSION_CONFIG, plan } from '../../src/admission/index.js';
import { pod, request } from './fixtures.js';

const config = DEFAULT_ADMISSION_CONFIG;

t.test('the NADs a pod refers to, deduplicated, default network included', async (t) => {
  const cases: Array<[string, unknown, Array<{ namespace: string; name: string }>]> = [
    ['no annotations', pod(), []],
    [
      'simple',
      pod({ networks: 'a, b, a, other/a' }),
      [
        { namespace: 'default', name: 'a' },
        { namespace: 'default', name: 'b' },
        { namespace: 'other', name: 'a' },
      ],
    ],
    ['json', pod({ networks: '[{"name":"a","namespace":"x"},{"name":"a","namespace":"x"}]' }), [{ namespace: 'x', name: 'a' }]],
    [
      'default network in Multus namespace',
      pod({ networks: 'a', defaultNetwork: 'calico' }),
      [
        { namespace: 'default', name: 'a' },
        { namespace: 'kube-system', name: 'calico' },
      ],
    ],
    ['names the parser rejects are not looked up', pod({ networks: 'a,Bad,,' }), [{ namespace: 'default', name: 'a' }]],
    ['garbage', { metadata: 7 }, []],
    ['no object', null, []],
  ];
  for (const [name, object, want] of cases) t.same(plan(request(object), config).nadRefs, want, name);
});

t.test('the request namespace wins over the object', async (t) => {
  const p = pod({ networks: 'a', namespace: 'ignored' });
  t.same(plan(request(p, { namespace: 'team' }), config).nadRefs, [{ namespace: 'team', name: 'a' }]);
  t.same(plan(request(p, { namespace: '' }), config).nadRefs, [{ namespace: 'ignored', name: 'a' }]);
});

t.test('nothing to resolve for pod updates, deletes and unrelated objects', async (t) => {
  const p = pod({ networks: 'a' });
  t.same(plan(request(p, { operation: 'UPDATE', oldObject: p }), config).nadRefs, []);
  t.same(plan(request(null, { operation: 'DELETE', oldObject: p }), config).nadRefs, []);
  t.same(plan(request(p, { resource: { group: '', version: 'v1', resource: 'services' } }), config).nadRefs, []);
  t.same(plan(request(p, { subResource: 'status' }), config).nadRefs, []);
});

t.test('the configured default-network namespace is used', async (t) => {
  const p = pod({ defaultNetwork: 'calico' });
  t.same(plan(request(p), { ...config, defaultNetworkNamespace: 'multus' }).nadRefs, [{ namespace: 'multus', name: 'calico' }]);
});

t.test('a network whose reference the parser rejected is not looked up; other errors do not matter', async (t) => {
  const networks = JSON.stringify([
    { name: 'Bad' },
    { name: 'b', namespace: 'Bad_NS' },
    { name: 'c', interface: 'a b' },
    { name: 'd', mac: 'zz' },
    { name: 'e' },
  ]);
  t.same(plan(request(pod({ networks })), config).nadRefs, [
    { namespace: 'default', name: 'c' },
    { namespace: 'default', name: 'd' },
    { namespace: 'default', name: 'e' },
  ]);
  // A whole element rejected (not an object).
  t.same(plan(request(pod({ networks: '[7, {"name":"e"}]' })), config).nadRefs, [{ namespace: 'default', name: 'e' }]);
});

t.test('workload templates: resolved on create and on update too', async (t) => {
  const deployment = (networks: string) => ({
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'd', namespace: 'default' },
    spec: { template: pod({ networks }) },
  });
  const opts = {
    resource: { group: 'apps', version: 'v1', resource: 'deployments' },
    kind: { group: 'apps', version: 'v1', kind: 'Deployment' },
  };
  t.same(plan(request(deployment('a'), opts), config).nadRefs, [{ namespace: 'default', name: 'a' }]);
  t.same(plan(request(deployment('b'), { ...opts, operation: 'UPDATE', oldObject: deployment('a') }), config).nadRefs, [
    { namespace: 'default', name: 'b' },
  ]);
  t.same(plan(request(deployment('a'), { ...opts, operation: 'DELETE' }), config).nadRefs, [], 'a delete');
});

t.test('a pod update without the old object is resolved; other operations are not', async (t) => {
  const p = pod({ networks: 'a' });
  t.same(plan(request(p, { operation: 'UPDATE' }), config).nadRefs, [{ namespace: 'default', name: 'a' }]);
  for (const operation of ['DELETE', 'CONNECT'] as const) t.same(plan(request(p, { operation }), config).nadRefs, [], operation);
});

t.test('a request plan cannot read: nothing to resolve, no exception', async (t) => {
  const broken = { ...request(pod({ networks: 'a' })), resource: undefined } as unknown as Parameters<typeof plan>[0];
  t.same(plan(broken, config), { nadRefs: [] });
});

t.test('a pod CREATE is resolved even if the request carries an old object', async (t) => {
  // Only an UPDATE of a pod skips the NADs; a CREATE is judged on its networks whatever else it carries.
  const p = pod({ networks: 'a' });
  t.same(plan(request(p, { oldObject: pod({ networks: 'b' }) }), config).nadRefs, [{ namespace: 'default', name: 'a' }]);
});
