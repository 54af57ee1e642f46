import t, { type Test } from 'tap';
import { nadFromObject } from '../../src/nads/index.js';

const obj = (metadata: Record<string, unknown>, spec?: unknown): Record<string, unknown> => ({
  apiVersion: 'k8s.cni.cncf.io/v1',
  kind: 'NetworkAttachmentDefinition',
  metadata,
  ...(spec === undefined ? {} : { spec }),
});

t.test('a NAD object becomes a cache entry', async (t) => {
  const nad = nadFromObject(
    obj(
      {
        name: 'ib-net',
        namespace: 'hpc',
        uid: 'u-1',
        resourceVersion: '42',
        annotations: {
          'k8s.v1.cni.cncf.io/resourceName': 'mellanox.com/mlnx_sriov_ib, rdma/hca',
          'k8s.v1.cni.cncf.io/nodeSelector': 'ib=true,zone',
        },
      },
      { config: JSON.stringify({ cniVersion: '1.0.0', name: 'ib-net', type: 'ib-sriov', capabilities: { infinibandGUID: true } }) },
    ),
  );
  t.equal(nad.namespace, 'hpc');
  t.equal(nad.name, 'ib-net');
  t.equal(nad.uid, 'u-1');
  t.equal(nad.resourceVersion, '42');
  t.same(nad.resourceNames, ['mellanox.com/mlnx_sriov_ib', 'rdma/hca']);
  t.same(nad.nodeSelector, { ib: 'true', zone: '' });
  t.same(nad.cni?.pluginTypes, ['ib-sriov']);
  t.ok(nad.cni?.capabilities.has('infinibandGUID'));
  t.equal(nad.cni?.cniVersion, '1.0.0');
  t.same(nad.problems, []);
});

// Each case asserts on its own subtest (`t` is the subtest's): an assertion on the parent would be
// counted there, and the subtest would pass with no assertion of its own. Broken-build recipe:
// make a check assert the opposite (e.g. `t.equal(n.name, 'x')` in 'a number'): that subtest fails.
t.test('never throws; problems are kept as rendered field errors', async (t) => {
  const cases: Array<{ name: string; input: unknown; check: (t: Test, n: ReturnType<typeof nadFromObject>) => void }> = [
    {
      name: 'empty config: capabilities unknown',
      input: obj({ name: 'a', namespace: 'x' }, { config: '' }),
      check: (t, n) => {
        t.equal(n.cni, undefined);
        t.same(n.problems, []);
      },
    },
    {
      name: 'missing spec',
      input: obj({ name: 'a', namespace: 'x' }),
      check: (t, n) => t.same([n.cni, n.problems], [undefined, []]),
    },
    {
      name: 'bad JSON',
      input: obj({ name: 'a', namespace: 'x' }, { config: '{"type":' }),
      check: (t, n) => {
        t.equal(n.cni, undefined);
        t.match(n.problems, [/^spec\.config: Invalid value: .*invalid JSON at line 1, column 9/]);
      },
    },
    {
      name: 'empty resourceName item dropped with a problem',
      input: obj({ name: 'a', namespace: 'x', annotations: { 'k8s.v1.cni.cncf.io/resourceName': 'intel.com/a,,' } }),
      check: (t, n) => {
        t.same(n.resourceNames, ['intel.com/a']);
        t.equal(n.problems.length, 2);
        t.match(n.problems[0], /empty item/);
      },
    },
    {
      name: 'a=b=c nodeSelector',
      input: obj({ name: 'a', namespace: 'x', annotations: { 'k8s.v1.cni.cncf.io/nodeSelector': 'a=b=c,d=e' } }),
      check: (t, n) => {
        t.same(n.nodeSelector, { d: 'e' });
        t.match(n.problems, [/more than one '='/]);
      },
    },
    {
      name: 'no namespace (a file): default',
      input: obj({ name: 'a' }),
      check: (t, n) => t.equal(n.namespace, 'default'),
    },
    { name: 'null', input: null, check: (t, n) => t.match(n.problems, ['not an object', /metadata\.name/]) },
    { name: 'a number', input: 3, check: (t, n) => t.equal(n.name, '') },
    {
      name: 'wrong kind',
      input: { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } },
      check: (t, n) => t.match(n.problems, [/not a NetworkAttachmentDefinition/]),
    },
    {
      name: 'metadata not an object',
      input: { kind: 'NetworkAttachmentDefinition', metadata: 'x' },
      check: (t, n) => t.match(n.problems, [/metadata\.name: Required value/]),
    },
    {
      name: 'config not a string',
      input: obj({ name: 'a' }, { config: 5 }),
      check: (t, n) => t.match(n.problems, [/spec\.config: must be a string/]),
    },
  ];
  for (const c of cases) {
    t.test(c.name, async (t) => c.check(t, nadFromObject(c.input)));
  }
});

t.test('configurable resource-name keys', async (t) => {
  const input = obj({
    name: 'a',
    annotations: { 'k8s.v1.cni.cncf.io/resourceName': 'intel.com/a', 'example.com/resource': 'example.com/b' },
  });
  t.same(nadFromObject(input).resourceNames, ['intel.com/a']);
  t.same(nadFromObject(input, { resourceNameKeys: ['k8s.v1.cni.cncf.io/resourceName', 'example.com/resource'] }).resourceNames, [
    'intel.com/a',
    'example.com/b',
  ]);
  t.same(nadFromObject(input, { resourceNameKeys: ['example.com/resource'] }).resourceNames, ['example.com/b']);
});

t.test('nadFromObject: apiVersion and kind each, namespace, selector and claim template, problem counts', async (t) => {
  const meta = { namespace: 'ns', name: 'a' };
  const problems = (o: Record<string, unknown>) => nadFromObject(o).problems;
  t.same(problems({ ...obj(meta), apiVersion: 'v1' }), [
    'not a NetworkAttachmentDefinition (k8s.cni.cncf.io/v1): apiVersion v1, kind NetworkAttachmentDefinition',
  ]);
  t.same(problems({ ...obj(meta), kind: 'Pod' }), [
    'not a NetworkAttachmentDefinition (k8s.cni.cncf.io/v1): apiVersion k8s.cni.cncf.io/v1, kind Pod',
  ]);
  t.same(problems({ metadata: meta }), [], 'no apiVersion or kind: taken as a NAD');
  t.equal(nadFromObject(obj({ namespace: '', name: 'a' })).namespace, 'default');
  t.same(problems(obj({ ...meta, annotations: { 'k8s.v1.cni.cncf.io/nodeSelector': 7 } })), [
    'metadata.annotations[k8s.v1.cni.cncf.io/nodeSelector]: must be a string',
  ]);
  t.equal(nadFromObject(obj({ ...meta, annotations: { 'netattach.io/resourceClaimTemplate': ' tmpl ' } })).claimTemplate, 'tmpl');
  t.notOk('claimTemplate' in nadFromObject(obj(meta)), 'no template, no key');
  t.same(
    problems(obj({ ...meta, annotations: { 'netattach.io/resourceClaimTemplate': 'Bad_Name' } })),
    [
      "metadata.annotations[netattach.io/resourceClaimTemplate]: Invalid value: \"Bad_Name\": not a valid ResourceClaimTemplate name: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com')",
    ],
    "a template name that is no ResourceClaimTemplate's: a problem",
  );
  // A resource name outside the extended-resource syntax works only with DRA: kept apart.
  const dra = nadFromObject(obj({ ...meta, annotations: { 'k8s.v1.cni.cncf.io/resourceName': 'intel.com/a, vf' } }));
  t.same([dra.resourceNames, dra.draOnlyResourceNames], [['intel.com/a'], ['vf']], 'the DRA-only names apart');
  t.notOk(
    'draOnlyResourceNames' in nadFromObject(obj({ ...meta, annotations: { 'k8s.v1.cni.cncf.io/resourceName': 'intel.com/a' } })),
    'none: no key',
  );
  const unloadable = nadFromObject(obj(meta, { config: '[]' }));
  t.equal(unloadable.configUnloadable, 'not a JSON object but an array', 'a config Multus cannot decode is said so');
  t.notOk('configUnloadable' in nadFromObject(obj(meta, { config: '{"cniVersion":"1.0.0","name":"n","type":"macvlan"}' })));
  t.same(problems(obj(meta, { config: null })), [], 'a null config is no config');
  const bad = (n: number) => Array.from({ length: n }, (_, i) => `bad${i}`).join(',');
  const twenty = problems(obj({ ...meta, annotations: { 'k8s.v1.cni.cncf.io/resourceName': bad(20) } }));
  t.equal(twenty.length, 20, 'exactly MAX_PROBLEMS: all listed, nothing added');
  t.notMatch(twenty[19], /more problems/);
  const more = problems(obj({ ...meta, annotations: { 'k8s.v1.cni.cncf.io/resourceName': bad(21) } }));
  t.equal(more.length, 21);
  t.equal(more[20], 'and 1 more problems');
});

t.test('empty parts are the one shared frozen instance (intern.ts: thousands of NADs in a few MB)', async (t) => {
  const plain = nadFromObject(obj({ namespace: 'ns', name: 'a' }));
  const other = nadFromObject(
    obj({ namespace: 'ns', name: 'b' }, { config: JSON.stringify({ cniVersion: '1.0.0', name: 'b', type: 'macvlan' }) }),
  );
  // No problems: the shared empty list, not a fresh one per NAD.
  t.same(plain.problems, []);
  t.equal(plain.problems, other.problems, 'one empty problem list for all');
  t.ok(Object.isFrozen(plain.problems), 'frozen: a reader cannot add to it');
  // A selector that yields no label (only a problem) is the shared empty selector too.
  const noLabel = nadFromObject(obj({ namespace: 'ns', name: 'c', annotations: { 'k8s.v1.cni.cncf.io/nodeSelector': 'a=b=c' } }));
  t.same(noLabel.nodeSelector, {});
  t.equal(noLabel.nodeSelector, plain.nodeSelector, 'one empty selector for all');
  t.ok(Object.isFrozen(noLabel.nodeSelector));
  t.equal(noLabel.problems.length, 1, 'its problem is kept');
});
