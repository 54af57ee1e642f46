import t from 'tap';
import { checkManifests, type ObjectResult } from '../../src/check/index.js';
import { loadPolicyDocuments, policySet } from '../../src/policy/index.js';
import { nadFromObject } from '../../src/nads/index.js';
import { cni, inputs, nad, namespace, NETWORKS, pod, podTemplate, workloads } from './helpers.js';

const _only = (results: ObjectResult[], kind: string): ObjectResult => {
  const r = results.find((x) => x.kind === kind);
  if (!r) throw new Error(`no ${kind} in results`);
  return r;
};

const policies = (yaml: string) => {
  const loaded = loadPolicyDocuments(yaml, 'test');
  if (loaded.errors.length > 0) throw new Error(loaded.errors[0]!.message);
  return policySet(loaded.policies);
};

t.test('every workload kind: a bad MAC in the template is denied at its own field path', async (t) => {
  for (const w of workloads(podTemplate('[{"name": "net1", "mac": "zz:00:00:00:00:01"}]'))) {
    const [r] = checkManifests(inputs(nad('net1'), w.object)).slice(1);
    const prefix = w.at ? `${w.at}.metadata` : 'metadata';
    t.equal(r!.allowed, false, w.kind);
    t.equal(r!.errors.length, 1, `${w.kind}: one error`);
    t.equal(r!.errors[0]!.path, `${prefix}.annotations[${NETWORKS}][0].mac`, `${w.kind}: path`);
    t.equal(r!.errors[0]!.type, 'Invalid value');
    t.equal(r!.errors[0]!.value, 'zz:00:00:00:00:01');
  }
});

t.test('every workload kind: a missing NAD is reported at the selection, a present one passes', async (t) => {
  for (const w of workloads(podTemplate('missing, net1'))) {
    const results = checkManifests(inputs(nad('net1'), w.object));
    const r = results[1]!;
    const prefix = w.at ? `${w.at}.metadata` : 'metadata';
    t.equal(r.allowed, false, w.kind);
    t.same(
      r.errors.map((e) => [e.path, e.type, e.value, e.rule, e.policy]),
      [[`${prefix}.annotations[${NETWORKS}][0]`, 'Not found', 'default/missing', 'networkExists', 'builtin']],
      w.kind,
    );
  }
  for (const w of workloads(podTemplate('net1'))) {
    const r = checkManifests(inputs(w.object, nad('net1')))[0]!;
    t.same([r.allowed, r.errors], [true, []], `${w.kind}: NAD later in the input counts as present`);
  }
});

t.test('workloads without the annotation and other kinds are allowed without findings', async (t) => {
  const results = checkManifests(
    inputs(
      ...workloads(podTemplate(undefined)).map((w) => w.object),
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' }, data: { [NETWORKS]: 'not checked' } },
      { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'x' } },
    ),
  );
  t.equal(results.length, 11);
  for (const r of results) t.same([r.kind, r.allowed, r.errors, r.warnings], [r.kind, true, [], []]);
  t.equal(results[9]!.namespace, 'default');
});

t.test('NAD rules: config and resourceName are validated like the NAD webhook does', async (t) => {
  const cases: Array<[string, Record<string, unknown>, RegExp | undefined]> = [
    ['valid', nad('ok', { resourceName: 'intel.com/sriov' }), undefined],
    ['config not JSON', nad('bad', { config: '{"cniVersion": "1.0.0",' }), /^spec\.config: Invalid value: .*invalid JSON/],
    ['config without type', nad('bad', { config: '{"cniVersion": "1.0.0", "name": "n"}' }), /^spec\.config/],
    ['bad resourceName', nad('bad', { resourceName: 'intel.com/a,' }), /^metadata\.annotations\[k8s\.v1\.cni\.cncf\.io\/resourceName\]/],
    // Not an extended resource name: it works with DRA, so a warning and no error.
    ['valid: a DRA-only resourceName', nad('ok', { resourceName: 'single-gpu' }), undefined],
    ['bad name', { ...nad('x'), metadata: { name: 'Not_DNS' } }, /^metadata\.name: Invalid value: "Not_DNS"/],
  ];
  for (const [name, object, expected] of cases) {
    const [r] = checkManifests(inputs(object));
    if (!expected) {
      t.same([r!.allowed, r!.errors], [true, []], name);
      continue;
    }
    t.equal(r!.allowed, false, name);
    t.match(r!.errors.map((e) => `${e.path}: ${e.type}: ${JSON.stringify(e.value)} ${e.reason}`).join('\n'), /./, name);
    const { renderError } = await import('../../src/field/index.js');
    t.match(renderError(r!.errors[0]!), expected, name);
  }
});

t.test('capabilities: a MAC is judged by what the chain reads, not by declared capabilities alone', async (t) => {
  // sriov reads MAC= from CNI_ARGS: no capability needed (SR-IOV operator NADs declare none).
  const sriov = checkManifests(inputs(nad('plain', { config: cni(['ips']) }), pod('p', '[{"name": "plain", "mac": "02:00:00:00:00:01"}]')));
  t.same([sriov[1]!.allowed, sriov[1]!.errors], [true, []]);
  // ipvlan reads no MAC by any road: the MAC would be ignored.
  const ipvlan = JSON.stringify({ cniVersion: '1.0.0', name: 'net', type: 'ipvlan', capabilities: { mac: true } });
  const results = checkManifests(inputs(nad('plain', { config: ipvlan }), pod('p', '[{"name": "plain", "mac": "02:00:00:00:00:01"}]')));
  const r = results[1]!;
  t.equal(r.allowed, false);
  t.same(
    r.errors.map((e) => [e.path, e.rule]),
    [[`metadata.annotations[${NETWORKS}][0].mac`, 'capabilities']],
  );
});

t.test('NADs: inputs win over --nads/--cluster ones, unqualified names resolve in the object namespace', async (t) => {
  const external = [nadFromObject(nad('net1', { namespace: 'prod', resourceName: 'old.example.com/vf' }))];
  const results = checkManifests(
    inputs(nad('net1', { namespace: 'prod', resourceName: 'new.example.com/vf' }), pod('p', 'net1', 'prod'), pod('q', 'net1')),
    {
      nads: external,
      mutate: true,
    },
  );
  t.same(Object.keys(results[1]!.mutation!.resources.app!.limits!), ['new.example.com/vf']);
  t.same(
    results[2]!.errors.map((e) => e.value),
    ['default/net1'],
    'namespace defaults to "default"',
  );
  const known = checkManifests(inputs(pod('p', 'net1', 'prod')), { nads: external });
  t.same([known[0]!.allowed, known[0]!.errors], [true, []], 'an external NAD counts as present');
});

t.test('--namespace: objects without one are checked (and their NADs placed) there', async (t) => {
  const results = checkManifests(inputs(nad('net1'), pod('p', 'net1')), { defaultNamespace: 'lab' });
  t.same(
    results.map((r) => [r.namespace, r.allowed]),
    [
      ['lab', true],
      ['lab', true],
    ],
  );
});

t.test('objects the webhooks never see are skipped, with the reason', async (t) => {
  const results = checkManifests(
    inputs(
      pod('sys', 'missing', 'kube-system'),
      pod('own', 'missing', 'netattach-system'),
      namespace('lab', { 'netattach.io/admission': 'disabled' }),
      pod('lab', 'missing', 'lab'),
      { metadata: { name: 'no-kind' } },
      'just a string',
      [1, 2],
    ),
  );
  t.same(
    results.map((r) => [r.allowed, r.skipped]),
    [
      [true, 'namespace kube-system is excluded from the netattach webhooks'],
      [true, 'namespace netattach-system is excluded from the netattach webhooks'],
      [true, undefined],
      [true, 'namespace lab is labelled netattach.io/admission=disabled'],
      [true, 'not a Kubernetes object: apiVersion and kind not set'],
      [true, 'not a Kubernetes object (a string, not a mapping)'],
      [true, 'not a Kubernetes object (a list, not a mapping)'],
    ],
  );
  t.equal(results[4]!.name, 'no-kind');
});

t.test('policies select namespaces by the labels of Namespace objects in the inputs', async (t) => {
  const gitops = policies(`
apiVersion: netattach.io/v1alpha1
kind: NetworkAttachmentPolicy
metadata: {name: gitops}
spec:
  namespaceSelector: {matchLabels: {gitops: "true"}}
  rules: {networkExists: {action: Warn}}
`);
  const results = checkManifests(inputs(namespace('apps', { gitops: 'true' }), pod('a', 'late', 'apps'), pod('b', 'late', 'other')), {
    policies: gitops,
  });
  t.equal(results[1]!.allowed, true);
  t.match(results[1]!.warnings, [/Not found: "apps\/late".*Warn by policy "gitops"/]);
  t.equal(results[2]!.allowed, false, 'namespace without the label: still denied');
  const external = checkManifests(inputs(pod('a', 'late', 'apps')), {
    policies: gitops,
    namespaceLabels: (ns) => (ns === 'apps' ? { gitops: 'true' } : undefined),
  });
  t.equal(external[0]!.allowed, true, 'labels from the cluster count too');
});

t.test('policies see the user and groups given', async (t) => {
  const macs = policies(`
apiVersion: netattach.io/v1alpha1
kind: NetworkAttachmentPolicy
metadata: {name: macs}
spec:
  rules:
    requestedFields:
      forbidden: [mac]
      allowedSubjects: {groups: [net-admins]}
`);
  const objects = inputs(nad('net1'), pod('p', '[{"name": "net1", "mac": "02:00:00:00:00:01"}]'));
  const user = checkManifests(objects, { policies: macs, userInfo: { username: 'dev' } })[1]!;
  t.equal(user.allowed, false);
  t.same(
    user.errors.map((e) => [e.rule, e.policy]),
    [['requestedFields', 'macs']],
  );
  const admin = checkManifests(objects, { policies: macs, userInfo: { username: 'ops', groups: ['net-admins'] } })[1]!;
  t.same([admin.allowed, admin.errors], [true, []]);
});

const uniqueMacs = () =>
  policies(`
apiVersion: netattach.io/v1alpha1
kind: NetworkAttachmentPolicy
metadata: {name: unique}
spec:
  rules: {uniqueAddresses: {mac: Network}}
`);

t.test('unique addresses: two Pods in the inputs with one MAC conflict, as when applied in order', async (t) => {
  const mac = '[{"name": "net1", "mac": "02:00:00:00:00:01"}]';
  const results = checkManifests(
    inputs(nad('net1'), pod('a', mac), pod('b', mac), pod('c', '[{"name": "net1", "mac": "02:00:00:00:00:02"}]')),
    { policies: uniqueMacs() },
  );
  t.same(
    results.map((r) => r.allowed),
    [true, true, false, true],
  );
  t.match(results[2]!.errors[0], { path: `metadata.annotations[${NETWORKS}][0].mac`, policy: 'unique' });
});

t.test("unique addresses: a duplicate is found past the webhook's reservation caps (10,000 a namespace)", async (t) => {
  // 200 pods of 64 MACs: 12,800 addresses in one namespace, then a pod reusing the very first.
  const mac = (i: number) => `02:00:00:00:${((i >> 8) & 0xff).toString(16).padStart(2, '0')}:${(i & 0xff).toString(16).padStart(2, '0')}`;
  const many = Array.from({ length: 200 }, (_, p) =>
    pod(`p${p}`, JSON.stringify(Array.from({ length: 64 }, (_, j) => ({ name: 'net1', mac: mac(p * 64 + j) })))),
  );
  const results = checkManifests(inputs(nad('net1'), ...many, pod('last', JSON.stringify([{ name: 'net1', mac: mac(0) }]))), {
    policies: uniqueMacs(),
  });
  t.equal(results.filter((r) => !r.allowed).length, 1, 'only the last pod is denied');
  t.match(results.at(-1)!.errors[0], { path: `metadata.annotations[${NETWORKS}][0].mac`, policy: 'unique' });
});

t.test('mutation: resources per container and nodeSelector, only with the mutate option and only for Pods', async (t) => {
  const withSelector = nad('vf', { resourceName: 'intel.com/vf', annotations: { 'k8s.v1.cni.cncf.io/nodeSelector': 'sriov=true' } });
  const p = pod('p', 'vf, vf');
  (p['spec'] as { initContainers?: unknown }).initContainers = [{ name: 'init', image: 'busybox' }];
  const [, r] = checkManifests(inputs(withSelector, p), { mutate: true });
  t.equal(r!.allowed, true);
  t.same(r!.mutation!.resources, { app: { requests: { 'intel.com/vf': '2' }, limits: { 'intel.com/vf': '2' } } });
  t.same(r!.mutation!.nodeSelector, { sriov: 'true' });
  t.ok(r!.mutation!.patch.length > 0);
  t.equal(checkManifests(inputs(withSelector, p))[1]!.mutation, undefined, 'not without the option');
  const deployment = workloads(podTemplate('vf'))[0]!.object;
  t.equal(checkManifests(inputs(withSelector, deployment), { mutate: true })[1]!.mutation, undefined, 'templates are not mutated');
  t.equal(checkManifests(inputs(pod('plain', undefined)), { mutate: true })[0]!.mutation, undefined, 'no patch, no mutation');
});

t.test('List items and positions are carried to the results', async (t) => {
  const results = checkManifests([{ file: 'f.json', index: 2, item: 1, line: 7, object: pod('p', undefined) }]);
  t.match(results[0], { file: 'f.json', index: 2, item: 1, line: 7, kind: 'Pod', name: 'p', namespace: 'default' });
  const generated = checkManifests(inputs({ apiVersion: 'v1', kind: 'Pod', metadata: { generateName: 'job-' }, spec: {} }));
  t.equal(generated[0]!.name, 'job-*');
});

t.test('cluster-scoped kinds carry no namespace', async (t) => {
  const results = checkManifests(
    inputs(namespace('x'), { apiVersion: 'netattach.io/v1alpha1', kind: 'NetworkAttachmentPolicy', metadata: { name: 'p' } }),
  );
  t.same(
    results.map((r) => r.namespace),
    [undefined, undefined],
  );
});
