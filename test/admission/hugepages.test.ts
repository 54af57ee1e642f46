import t from 'tap';
import { renderError } from '../../src/field/index.js';
import { review, type AdmissionConfig, type Decision } from '../../src/admission/index.js';
import { addContainerNameEnv, hugepageFiles } from '../../src/admission/hugepages.js';
import { PodDraft } from '../../src/admission/draft.js';
import { applied, context, nadLookup, nadObject, pod, request, warningLines } from './fixtures.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const SRIOV = 'intel.com/sriov_a';
const nads = nadLookup(nadObject('sriov-a', { resourceName: SRIOV }), nadObject('plain', {}));
const HUGEPAGES: Partial<AdmissionConfig> = {
  podNetInfo: { enabled: false, volumeName: 'podnetinfo', mountPath: '/etc/podnetinfo', hugepages: true },
};

function mutate(p: Obj, config: Partial<AdmissionConfig> = HUGEPAGES): { d: Decision; out: Obj } {
  const d = review(request(p), context(nads, { endpoint: 'mutate', config }));
  return { d, out: applied(p, d.patch) };
}

const file = (path: string, container: string, resource: string) => ({
  path,
  resourceFieldRef: { containerName: container, resource, divisor: '1Mi' },
});
const LABELS = { path: 'labels', fieldRef: { fieldPath: 'metadata.labels' } };
const ANNOTATIONS = { path: 'annotations', fieldRef: { fieldPath: 'metadata.annotations' } };
const ENV = (name: string) => ({ name: 'CONTAINER_NAME', value: name });
const hp = (requests: Obj, limits: Obj = requests) => ({ resources: { requests, limits } });

t.test("file names and fields are NRI v1.9.0's", async (t) => {
  const cases: Array<{ name: string; containers: Obj[]; files: Obj[]; env: Array<Obj[] | undefined> }> = [
    {
      name: '1Gi requests and limits',
      containers: [{ name: 'dpdk', ...hp({ 'hugepages-1Gi': '2Gi', memory: '1Gi' }) }],
      files: [
        file('hugepages_1G_request_dpdk', 'dpdk', 'requests.hugepages-1Gi'),
        file('hugepages_1G_limit_dpdk', 'dpdk', 'limits.hugepages-1Gi'),
      ],
      env: [[ENV('dpdk')]],
    },
    {
      name: '2Mi and 1Gi in one container, requests before limits',
      containers: [{ name: 'c', ...hp({ 'hugepages-2Mi': '512Mi', 'hugepages-1Gi': '1Gi' }) }],
      files: [
        file('hugepages_2M_request_c', 'c', 'requests.hugepages-2Mi'),
        file('hugepages_1G_request_c', 'c', 'requests.hugepages-1Gi'),
        file('hugepages_2M_limit_c', 'c', 'limits.hugepages-2Mi'),
        file('hugepages_1G_limit_c', 'c', 'limits.hugepages-1Gi'),
      ],
      env: [[ENV('c')]],
    },
    {
      name: 'every container with hugepages, not only the first; none for one without',
      containers: [
        { name: 'a', ...hp({ 'hugepages-2Mi': '2Mi' }) },
        { name: 'plain' },
        { name: 'b', resources: { limits: { 'hugepages-1Gi': '1Gi' } } },
      ],
      files: [
        file('hugepages_2M_request_a', 'a', 'requests.hugepages-2Mi'),
        file('hugepages_2M_limit_a', 'a', 'limits.hugepages-2Mi'),
        file('hugepages_1G_limit_b', 'b', 'limits.hugepages-1Gi'),
      ],
      env: [[ENV('a')], undefined, [ENV('b')]],
    },
    {
      name: 'zero hugepages count as none',
      containers: [{ name: 'a', ...hp({ 'hugepages-1Gi': '0' }) }],
      files: [],
      env: [undefined],
    },
    {
      name: "the env var goes after the container's own",
      containers: [{ name: 'a', env: [{ name: 'X', value: '1' }], ...hp({ 'hugepages-1Gi': '1Gi' }) }],
      files: [file('hugepages_1G_request_a', 'a', 'requests.hugepages-1Gi'), file('hugepages_1G_limit_a', 'a', 'limits.hugepages-1Gi')],
      env: [[{ name: 'X', value: '1' }, ENV('a')]],
    },
  ];
  for (const c of cases) {
    const p = pod({ networks: 'sriov-a', containers: c.containers });
    const { d, out } = mutate(p);
    t.ok(d.allowed, `${c.name}: ${d.errors.map(renderError).join('; ')}`);
    t.same(out['spec'].volumes, [{ name: 'podnetinfo', downwardAPI: { items: [LABELS, ANNOTATIONS, ...c.files] } }], `${c.name}: volume`);
    t.same(
      out['spec'].containers.map((x: Obj) => x.env),
      c.env,
      `${c.name}: env`,
    );
    t.same(d.warnings, [], `${c.name}: no warnings`);
    const again = review(request(out), context(nads, { config: HUGEPAGES }));
    t.same(again.patch, [], `${c.name}: reinvocation yields no patch`);
  }
});

t.test('only when asked, and only when the networks need a resource (as NRI)', async (t) => {
  const containers = [{ name: 'a', ...hp({ 'hugepages-1Gi': '1Gi' }) }];
  const off = mutate(pod({ networks: 'sriov-a', containers }), {}).out;
  t.equal(off['spec'].volumes, undefined);
  t.equal(off['spec'].containers[0].env, undefined);
  const podnetinfoOnly = mutate(pod({ networks: 'sriov-a', containers }), {
    podNetInfo: { enabled: true, volumeName: 'podnetinfo', mountPath: '/etc/podnetinfo' },
  }).out;
  t.same(podnetinfoOnly['spec'].volumes[0].downwardAPI.items, [LABELS, ANNOTATIONS], '--podnetinfo alone: no hugepages files');
  t.equal(podnetinfoOnly['spec'].containers[0].env, undefined);
  t.same(mutate(pod({ networks: 'plain', containers })).d.patch, [], 'no resources: nothing');
});

t.test('never replaces what the user has', async (t) => {
  const containers = (extra: Obj = {}) => [{ name: 'a', ...hp({ 'hugepages-1Gi': '1Gi' }), ...extra }];
  const cases: Array<{ name: string; p: Obj; check: (out: Obj) => void; warnings: RegExp[] }> = [
    {
      name: 'CONTAINER_NAME with another value is kept',
      p: pod({ networks: 'sriov-a', containers: containers({ env: [{ name: 'CONTAINER_NAME', value: 'other' }] }) }),
      check: (out) => t.same(out['spec'].containers[0].env, [{ name: 'CONTAINER_NAME', value: 'other' }]),
      warnings: [/^spec\.containers\[0\]\.env\[0\]: CONTAINER_NAME is kept, but the hugepages files are named for "a"$/],
    },
    {
      name: 'CONTAINER_NAME from a fieldRef is kept',
      p: pod({
        networks: 'sriov-a',
        containers: containers({ env: [{ name: 'CONTAINER_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }] }),
      }),
      check: (out) =>
        t.same(out['spec'].containers[0].env, [{ name: 'CONTAINER_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }]),
      warnings: [/CONTAINER_NAME is kept/],
    },
    {
      name: 'CONTAINER_NAME already right: quiet',
      p: pod({ networks: 'sriov-a', containers: containers({ env: [ENV('a')] }) }),
      check: (out) => t.same(out['spec'].containers[0].env, [ENV('a')]),
      warnings: [],
    },
    {
      name: 'a user volume named podnetinfo: no files, no mount, but the env var',
      p: pod({ networks: 'sriov-a', containers: containers(), volumes: [{ name: 'podnetinfo', emptyDir: {} }] }),
      check: (out) => {
        t.same(out['spec'].volumes, [{ name: 'podnetinfo', emptyDir: {} }]);
        t.equal(out['spec'].containers[0].volumeMounts, undefined);
        t.same(out['spec'].containers[0].env, [ENV('a')]);
      },
      warnings: [/^spec\.volumes\[0\]: volume "podnetinfo" exists/],
    },
    {
      name: 'a file of our name in our volume that says something else is kept',
      p: pod({
        networks: 'sriov-a',
        containers: containers(),
        volumes: [
          { name: 'podnetinfo', downwardAPI: { items: [LABELS, ANNOTATIONS, file('hugepages_1G_request_a', 'a', 'limits.memory')] } },
        ],
      }),
      check: (out) =>
        t.same(out['spec'].volumes[0].downwardAPI.items, [
          LABELS,
          ANNOTATIONS,
          file('hugepages_1G_request_a', 'a', 'limits.memory'),
          file('hugepages_1G_limit_a', 'a', 'limits.hugepages-1Gi'),
        ]),
      warnings: [/^spec\.volumes\[0\]\.downwardAPI\.items\[2\]: "hugepages_1G_request_a" exists: kept as it is$/],
    },
    {
      name: 'env that is not a list is left alone',
      p: pod({ networks: 'sriov-a', containers: containers({ env: 'x' }) }),
      check: (out) => t.equal(out['spec'].containers[0].env, 'x'),
      warnings: [/^spec\.containers\[0\]\.env: not a list: CONTAINER_NAME not added$/],
    },
  ];
  for (const c of cases) {
    const { d, out } = mutate(c.p);
    t.ok(d.allowed, c.name);
    c.check(out);
    t.match(warningLines(d), c.warnings, `${c.name}: warnings`);
    t.equal(warningLines(d).length, c.warnings.length, `${c.name}: no other warnings`);
    const again = review(request(out), context(nads, { config: HUGEPAGES }));
    t.same(again.patch, [], `${c.name}: reinvocation yields no patch`);
  }
});

t.test('our volume from a first pass gains the files of hugepages another webhook added since', async (t) => {
  const first = mutate(pod({ networks: 'sriov-a', containers: [{ name: 'a' }] })).out;
  t.same(first['spec'].volumes[0].downwardAPI.items, [LABELS, ANNOTATIONS]);
  const later = structuredClone(first);
  later['spec'].volumes[0].downwardAPI.defaultMode = 420; // what the apiserver defaults in between
  later['spec'].containers[0].resources.requests['hugepages-2Mi'] = '4Mi';
  const { d, out } = mutate(later);
  t.same(d.warnings, []);
  t.same(out['spec'].volumes[0].downwardAPI, {
    defaultMode: 420,
    items: [LABELS, ANNOTATIONS, file('hugepages_2M_request_a', 'a', 'requests.hugepages-2Mi')],
  });
  t.same(out['spec'].containers[0].env, [ENV('a')]);
});

t.test('hugepageFiles reads nothing it cannot', async (t) => {
  t.same(hugepageFiles(undefined), []);
  t.same(
    hugepageFiles([
      null,
      'x',
      { name: 1, resources: {} },
      { name: 'a', resources: { requests: 'x' } },
      { name: 'b', resources: { requests: { 'hugepages-1Gi': 'lots' } } },
    ]),
    [],
  );
  t.same(hugepageFiles([{ name: 'n', resources: { requests: { 'hugepages-': '1', hugepages: '1', 'hugepages-1Gi': 1073741824 } } }]), [
    { container: 0, name: 'n', files: [file('hugepages_1G_request_n', 'n', 'requests.hugepages-1Gi')] },
  ]);
});

t.test('hugepageFiles: only hugepages-<size> keys, only named containers', async (t) => {
  const cases: Array<{ name: string; containers: unknown; files: Obj[] }> = [
    {
      name: 'a prefixed key is not hugepages',
      containers: [{ name: 'c', resources: { limits: { 'example.com/hugepages-1Gi': '1' } } }],
      files: [],
    },
    {
      name: 'a key with more after a newline is not hugepages',
      containers: [{ name: 'c', resources: { limits: { 'hugepages-1Gi\nx': '1Gi' } } }],
      files: [],
    },
    { name: 'a container without a name gets no files', containers: [{ resources: { limits: { 'hugepages-1Gi': '1Gi' } } }], files: [] },
    {
      name: 'a value that is no quantity is not non-zero',
      containers: [{ name: 'c', resources: { limits: { 'hugepages-1Gi': 'lots' } } }],
      files: [],
    },
  ];
  for (const c of cases) t.same(hugepageFiles(c.containers), c.files, c.name);
});

t.test('addContainerNameEnv called directly', async (t) => {
  const cases: Array<{ name: string; pod: Obj; containers: Array<{ container: number; name: string }>; warnings: Obj[] }> = [
    { name: 'no spec', pod: { metadata: {} }, containers: [], warnings: [] },
    { name: 'no containers list', pod: { spec: {} }, containers: [{ container: 0, name: 'c' }], warnings: [] },
    {
      name: 'env no list: the path is under spec',
      pod: { spec: { containers: [{ name: 'c', env: 'x' }] } },
      containers: [{ container: 0, name: 'c' }],
      warnings: [{ path: 'spec.containers[0].env', text: 'not a list: CONTAINER_NAME not added' }],
    },
  ];
  for (const c of cases) {
    const draft = new PodDraft(structuredClone(c.pod));
    t.same(addContainerNameEnv(draft, c.containers), c.warnings, c.name);
    t.equal(draft.changed, false, `${c.name}: unchanged`);
  }
});
