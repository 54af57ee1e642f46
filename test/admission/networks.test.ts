import t from 'tap';
import { renderError } from '../../src/field/index.js';
import { DEFAULT_ADMISSION_CONFIG, review } from '../../src/admission/index.js';
import { context, nadLookup, nadObject, pod, request } from './fixtures.js';
import { readPodNetworks, resolvable } from '../../src/admission/networks.js';
import { objectAt, podAt, POD_LOCATION, readAnnotations, stringAt } from '../../src/admission/object.js';

const config = DEFAULT_ADMISSION_CONFIG;
const TEMPLATE = { metadataPath: 'spec.template.metadata', specPath: 'spec.template.spec', keys: [] };
const meta = (annotations: Record<string, unknown>) => ({ metadata: { annotations } });
const NETWORKS = 'k8s.v1.cni.cncf.io/networks';
const DEFAULT_NETWORK = 'v1.multus-cni.io/default-network';

t.test('parsed results are shared between pods only when everything they depend on is equal', async (t) => {
  const value = 'a, other/b@net2';
  const first = readPodNetworks(meta({ [NETWORKS]: value }), POD_LOCATION, 'team', config);
  t.same(
    first.networks.map((n) => `${n.selection.namespace}/${n.selection.name}`),
    ['team/a', 'other/b'],
  );
  // A second pod from the same template: the same answer.
  t.same(readPodNetworks(meta({ [NETWORKS]: value }), POD_LOCATION, 'team', config), first);
  const cases: Array<[string, () => ReturnType<typeof readPodNetworks>, string[], string]> = [
    [
      'another namespace',
      () => readPodNetworks(meta({ [NETWORKS]: value }), POD_LOCATION, 'dev', config),
      ['dev/a', 'other/b'],
      `metadata.annotations[${NETWORKS}]`,
    ],
    [
      'a pod template',
      () => readPodNetworks(meta({ [NETWORKS]: value }), TEMPLATE, 'team', config),
      ['team/a', 'other/b'],
      `spec.template.metadata.annotations[${NETWORKS}]`,
    ],
    [
      'a default network too',
      () => readPodNetworks(meta({ [NETWORKS]: value, [DEFAULT_NETWORK]: 'calico' }), POD_LOCATION, 'team', config),
      ['team/a', 'other/b', 'kube-system/calico'],
      `metadata.annotations[${NETWORKS}]`,
    ],
    [
      'another default-network namespace',
      () =>
        readPodNetworks(meta({ [NETWORKS]: value, [DEFAULT_NETWORK]: 'calico' }), POD_LOCATION, 'team', {
          ...config,
          defaultNetworkNamespace: 'multus',
        }),
      ['team/a', 'other/b', 'multus/calico'],
      `metadata.annotations[${NETWORKS}]`,
    ],
  ];
  for (const [name, read, want, path] of cases) {
    const got = read();
    t.same(
      got.networks.map((n) => `${n.selection.namespace}/${n.selection.name}`),
      want,
      name,
    );
    t.equal(got.annotationPath, path, `${name}: path`);
  }
});

t.test('text moved from one annotation to the other is a different input', async (t) => {
  // Joined with a plain separator, both would read "x|y|z".
  const a = readPodNetworks(meta({ [NETWORKS]: 'x', [DEFAULT_NETWORK]: 'y|z' }), POD_LOCATION, 'team', config);
  const b = readPodNetworks(meta({ [NETWORKS]: 'x|y', [DEFAULT_NETWORK]: 'z' }), POD_LOCATION, 'team', config);
  t.same(
    a.networks.map((n) => n.selection.name),
    ['x', 'y|z'],
  );
  t.match(a.errors, [{ path: `metadata.annotations[${DEFAULT_NETWORK}]` }]);
  t.same(
    b.networks.map((n) => n.selection.name),
    ['x|y', 'z'],
  );
  t.match(b.errors, [{ path: new RegExp(`^metadata\\.annotations\\[${NETWORKS.replaceAll('.', '\\.')}\\]`) }]);
});

t.test('reviews leave a shared parse as they found it', async (t) => {
  // Everything downstream of the parse runs (judging, resource injection, node selector, patch),
  // with the cached parse serving every review; it must still equal a fresh parse.
  const value =
    '[{"name":"sriov","ips":["10.0.0.1/24"],"mac":"02:00:00:00:00:01","interface":"net1"},{"name":"zone-a"},{"name":"rdma","interface":"ib0"}]';
  const nads = nadLookup(
    nadObject('sriov', { resourceName: 'intel.com/sriov' }),
    nadObject('zone-a', { nodeSelector: 'zone=a' }),
    nadObject('rdma', { resourceName: 'rdma/hca' }),
  );
  const podWith = () => pod({ networks: value });
  const before = structuredClone(readPodNetworks(podWith(), POD_LOCATION, 'default', config));
  for (let i = 0; i < 3; i++) {
    const d = review(request(podWith()), context(nads));
    t.ok(d.allowed && d.patch.length > 0, `review ${i + 1} patched: ${JSON.stringify(d.errors)}`);
  }
  const after = readPodNetworks(podWith(), POD_LOCATION, 'default', config);
  t.same(after, before);
  const fresh = readPodNetworks(podWith(), { ...POD_LOCATION, metadataPath: 'metadata' }, 'default', {
    ...config,
    defaultNetworkNamespace: 'elsewhere',
  });
  t.same(fresh.networks, before.networks, 'equal to a parse of its own');
});

t.test('errors and warnings are reported on every read, cached or not', async (t) => {
  for (let i = 0; i < 2; i++) {
    const nets = readPodNetworks(meta({ [NETWORKS]: 'a, Bad' }), POD_LOCATION, 'default', config);
    t.equal(nets.errors.length, 1, `read ${i + 1}`);
    t.match(nets.errors[0]!.path, /\[1\]/);
  }
  // Malformed metadata points into this object: its errors are computed each time.
  const bad = readPodNetworks({ metadata: { annotations: { [NETWORKS]: 7 } } }, POD_LOCATION, 'default', config);
  t.equal(bad.errors.length, 1);
  t.equal(bad.errors[0]!.value, 7);
});

t.test('what is kept: the last text read, and texts seen twice; never a long one', async (t) => {
  const read = (value: string) => readPodNetworks(meta({ [NETWORKS]: value }), POD_LOCATION, 'keep-test', config);
  const x = 'x-net, y-net@net2';
  const other = 'other-net';
  const x1 = read(x);
  t.equal(read(x), x1, 'the second read of one request is not parsed again');
  read(other);
  const x2 = read(x);
  t.not(x2, x1, 'seen once: not kept beyond the last read');
  t.same(x2, x1);
  read(other);
  t.equal(read(x), x2, 'seen twice: kept');

  const long = Array.from({ length: 600 }, (_, i) => `net-${i}`).join(',');
  const l1 = read(long);
  t.equal(l1.networks.length, 600);
  read(other);
  read(long);
  read(other);
  const l3 = read(long);
  t.not(l3, l1, 'a long text is never held in the cache');
  t.same(l3, l1);
});

t.test('default-route gateways are counted over both annotations, as Multus counts them', async (t) => {
  const both = (networks: string, defaultNetwork: string) =>
    readPodNetworks(meta({ [NETWORKS]: networks, [DEFAULT_NETWORK]: defaultNetwork }), POD_LOCATION, 'team', config);
  const clash = both('[{"name":"a","default-route":["10.0.0.1"]}]', '[{"name":"calico","default-route":["10.1.0.1"]}]');
  t.match(clash.errors, [{ path: `metadata.annotations[${NETWORKS}][0].default-route[0]`, reason: /over both annotations/ }]);
  t.equal(clash.errors.length, 1);
  const families = both('[{"name":"a","default-route":["fd00::1"]}]', '[{"name":"calico","default-route":["10.1.0.1"]}]');
  t.same(families.errors, [], 'one IPv4 and one IPv6 gateway: fine');
});

t.test('an absent annotation is not the same input as the other one with the same text', async (t) => {
  // One pod names calico as its default network, the next one as a secondary network.
  const asDefault = readPodNetworks(meta({ [DEFAULT_NETWORK]: 'calico' }), POD_LOCATION, 'team', config);
  const asSecondary = readPodNetworks(meta({ [NETWORKS]: 'calico' }), POD_LOCATION, 'team', config);
  t.same(
    asDefault.networks.map((n) => `${n.selection.namespace}/${n.selection.name}`),
    ['kube-system/calico'],
  );
  t.same(
    asSecondary.networks.map((n) => `${n.selection.namespace}/${n.selection.name}`),
    ['team/calico'],
  );
  t.same(asSecondary.raw, new Map([[NETWORKS, 'calico']]));
  t.same(readPodNetworks(meta({}), POD_LOCATION, 'team', config).networks, [], 'neither');
});

t.test('malformed metadata is parsed on every read, never served from the cache', async (t) => {
  const bad = (value: unknown) => readPodNetworks({ metadata: { annotations: { [NETWORKS]: value } } }, POD_LOCATION, 'default', config);
  t.same(
    bad(7).errors.map((e) => e.value),
    [7],
  );
  t.same(
    bad(8).errors.map((e) => e.value),
    [8],
  );
  t.same(
    bad(8).errors.map((e) => e.value),
    [8],
  );
  // The same key as a pod without annotations: that pod has no errors.
  t.same(readPodNetworks(meta({}), POD_LOCATION, 'default', config).errors, []);
  t.same(
    bad(7).errors.map((e) => e.value),
    [7],
  );
});

t.test('the cache holds keys of up to 4096 characters', async (t) => {
  // The key is the five parts, each as `length:text|` (an absent one `-|`): here
  // "8:metadata|" (11), "4:edge|" (7), "11:kube-system|" (15), "L:text|" and "-|" (2), so a
  // text of 4055 characters (4 digits of length) makes 4096.
  const read = (value: string) => readPodNetworks(meta({ [NETWORKS]: value }), POD_LOCATION, 'edge', config);
  const text = (n: number) => `${'abcdefghi,'.repeat(405)}${'z'.repeat(n - 4050)}`;
  for (const [n, kept] of [
    [4055, true],
    [4056, false],
  ] as const) {
    const value = text(n);
    t.equal(value.length, n);
    read(value);
    read('other');
    const second = read(value);
    read('other');
    const third = read(value);
    t.equal(third === second, kept, `${n} characters: ${kept ? 'kept' : 'not kept'}`);
    t.same(third, second);
  }
});

t.test("the resolvable networks are a list of the caller's own: changing it leaves the shared parse alone", async (t) => {
  const read = () => readPodNetworks(meta({ [NETWORKS]: 'own-a, own-b' }), POD_LOCATION, 'team', config);
  for (const value of ['own-a, own-b', 'own-a, own-b, Bad']) {
    const nets = readPodNetworks(meta({ [NETWORKS]: value }), POD_LOCATION, 'team', config);
    const list = resolvable(nets);
    t.same(
      list.map((n) => n.selection.name),
      ['own-a', 'own-b'],
      value,
    );
    list.pop();
    t.same(
      resolvable(nets).map((n) => n.selection.name),
      ['own-a', 'own-b'],
      `${value}: unchanged`,
    );
  }
  t.same(
    read().networks.map((n) => n.selection.name),
    ['own-a', 'own-b'],
  );
});

t.test('texts too long to keep take no room from the ones kept', async (t) => {
  const read = (value: string) => readPodNetworks(meta({ [NETWORKS]: value }), POD_LOCATION, 'room', config);
  const kept = 'kept-a, kept-b';
  read(kept);
  read('other');
  const first = read(kept); // seen twice: kept
  // 600 distinct texts over the limit, each read twice: each would take ~17 KB of the 8 MiB.
  const longs = Array.from({ length: 600 }, (_, i) => `${i}-${'a'.repeat(4100)}`);
  for (let pass = 0; pass < 2; pass++) for (const l of longs) read(l);
  t.equal(read(kept), first, 'still kept');
});

t.test('a text whose key hashes to 0 is counted as seen once, like any other', async (t) => {
  // The key '8:metadata|4:zero|11:kube-system|3:\u9b1e\u68b9\u4e04|-|' has the FNV-1a hash 0
  // (found by running the hash backwards from 0); 0 marks an empty slot of the table of texts
  // seen once, so the hash must not be 0 or every such text would count as seen before.
  const read = (value: string) => readPodNetworks(meta({ [NETWORKS]: value }), POD_LOCATION, 'zero', config);
  const text = '\u9b1e\u68b9\u4e04';
  const first = read(text);
  read('other');
  const second = read(text);
  t.not(second, first, 'seen once: not kept');
  t.same(second, first);
  read('other');
  t.equal(read(text), second, 'seen twice: kept');
});

t.test('object readers: a member of the wanted type, else undefined, whatever the input', async (t) => {
  for (const v of [undefined, null, 'text', 7, ['a']]) {
    t.equal(objectAt(v, 'length'), undefined, `objectAt(${JSON.stringify(v)})`);
    t.equal(stringAt(v, 'length'), undefined, `stringAt(${JSON.stringify(v)})`);
  }
  const v = { o: { a: 1 }, s: 'x', n: 1, l: [1], z: null };
  t.same(objectAt(v, 'o'), { a: 1 });
  t.equal(stringAt(v, 's'), 'x');
  for (const k of ['n', 'l', 'z', 'o', 'missing']) t.equal(stringAt(v, k), undefined, `stringAt .${k}`);
  for (const k of ['s', 'n', 'l', 'z', 'missing']) t.equal(objectAt(v, k), undefined, `objectAt .${k}`);
  t.same(POD_LOCATION, { metadataPath: 'metadata', specPath: 'spec', keys: [] });
  t.same(podAt({ spec: { template: { metadata: {} } } }, { ...TEMPLATE, keys: ['spec', 'template'] }), { metadata: {} });
  t.equal(podAt({ spec: 'x' }, { ...TEMPLATE, keys: ['spec', 'template'] }), undefined);
});

t.test('annotations: absent or null metadata or annotations are no error; other shapes are', async (t) => {
  const keys = [NETWORKS, DEFAULT_NETWORK];
  const read = (pod: Record<string, unknown> | undefined) => {
    const got = readAnnotations(pod, 'spec.template.metadata', keys);
    return { values: [...got.values], errors: got.errors.map(renderError) };
  };
  const none = { values: [], errors: [] };
  for (const pod of [
    undefined,
    {},
    { metadata: null },
    { metadata: {} },
    { metadata: { annotations: null } },
    { metadata: { annotations: {} } },
  ]) {
    t.same(read(pod), none, JSON.stringify(pod));
  }
  t.same(read({ metadata: 'x' }), { values: [], errors: ['spec.template.metadata: Invalid value: "x": must be an object'] });
  t.same(read({ metadata: { annotations: ['x'] } }), {
    values: [],
    errors: ['spec.template.metadata.annotations: Invalid value: ["x"]: must be a map of strings'],
  });
  t.same(read({ metadata: { annotations: { [NETWORKS]: 7, [DEFAULT_NETWORK]: 'calico', other: 8 } } }), {
    values: [[DEFAULT_NETWORK, 'calico']],
    errors: [`spec.template.metadata.annotations[${NETWORKS}]: Invalid value: 7: must be a string`],
  });
});

t.test("parsedSize: the key's UTF-16 bytes, 512, and 256 per selection, error and warning", async (t) => {
  const { parsedSize } = await import('../../src/admission/networks.js');
  const value = { networks: [{}, {}], errors: [{}], warnings: [{}, {}, {}] } as unknown as Parameters<typeof parsedSize>[0];
  t.equal(parsedSize(value, 'abc'), 2 * 3 + 512 + 256 * 6);
});

t.test("the default network's warnings are the pod's warnings", async (t) => {
  const lookup = nadLookup(nadObject('net', { namespace: 'kube-system' }));
  const d = review(
    request(pod({ annotations: { 'v1.multus-cni.io/default-network': '[{"name":"net","interface":"eth5"}]' } })),
    context(lookup, { endpoint: 'validate' }),
  );
  t.ok(d.allowed);
  t.same(
    d.warnings.map((w) => ('field' in w ? w.field.path : w.note.path)),
    ['metadata.annotations[v1.multus-cni.io/default-network][0].interface'],
  );
});
