// injectResources, amountIn and targetContainer called directly: the device-plugin resources of
// the pod's networks (each NAD's k8s.v1.cni.cncf.io/resourceName), added the way
// network-resources-injector does (docs/admission.md, Mutation; docs/migrating-from-nri.md).
import t from 'tap';
import { renderError } from '../../src/field/index.js';
import { PodDraft } from '../../src/admission/draft.js';
import { amountIn, injectResources, targetContainer, DEFAULT_CONTAINER_ANNOTATION } from '../../src/admission/inject-resources.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const A = 'intel.com/sriov_a';
const B = 'intel.com/sriov_b';

function inject(pod: Obj, needed: Record<string, number>) {
  const draft = new PodDraft(structuredClone(pod));
  const r = injectResources(draft, new Map(Object.entries(needed)));
  return {
    errors: r.errors.map(renderError),
    warnings: r.warnings,
    changed: draft.changed,
    containers: (draft.pod['spec'] as Obj | undefined)?.['containers'] as Obj[] | undefined,
  };
}
const podOf = (containers: unknown, annotations?: Obj): Obj => ({
  metadata: { name: 'p', ...(annotations ? { annotations } : {}) },
  spec: { containers },
});

t.test('errors: the containers and resources the resources cannot go into', async (t) => {
  const cases: Array<{ name: string; pod: Obj; needed: Record<string, number>; errors: string[] }> = [
    {
      name: 'no containers at all',
      pod: { metadata: {}, spec: {} },
      needed: { [A]: 1, [B]: 2 },
      errors: [`spec.containers: Required value: resources for the pod's networks need a container (${A}, ${B})`],
    },
    {
      name: 'an empty list',
      pod: podOf([]),
      needed: { [A]: 1 },
      errors: [`spec.containers: Required value: resources for the pod's networks need a container (${A})`],
    },
    {
      name: 'a container that is no object',
      pod: podOf([{ name: 'c' }, 'x']),
      needed: { [A]: 1 },
      errors: ['spec.containers: Invalid value: "<list>": every container must be an object'],
    },
    {
      name: 'resources that are no object',
      pod: podOf([{ name: 'c', resources: 'x' }]),
      needed: { [A]: 1 },
      errors: ['spec.containers[0].resources: Invalid value: "x": must be an object'],
    },
    {
      name: 'requests that are no map',
      pod: podOf([{ name: 'c', resources: { requests: 'x' } }]),
      needed: { [A]: 1 },
      errors: ['spec.containers[0].resources.requests: Invalid value: "x": must be a map of resource name to quantity'],
    },
    { name: 'nothing needed: nothing checked', pod: { metadata: {} }, needed: {}, errors: [] },
  ];
  for (const c of cases) {
    const got = inject(c.pod, c.needed);
    t.same(got.errors, c.errors, c.name);
    t.equal(got.changed, false, `${c.name}: pod unchanged`);
  }
});

t.test('what is written into the target container', async (t) => {
  const cases: Array<{ name: string; pod: Obj; needed: Record<string, number>; containers: Obj[] | 'unchanged'; errors?: string[] }> = [
    {
      name: 'a null requests map holds nothing: replaced',
      pod: podOf([{ name: 'c', resources: { requests: null } }]),
      needed: { [A]: 2 },
      containers: [{ name: 'c', resources: { requests: { [A]: '2' }, limits: { [A]: '2' } } }],
    },
    {
      name: 'another container has exactly the need: nothing added',
      pod: podOf([{ name: 'c' }, { name: 'd', resources: { limits: { [A]: '1' } } }]),
      needed: { [A]: 1 },
      containers: 'unchanged',
    },
    {
      name: 'another container has more than the need',
      pod: podOf([{ name: 'c' }, { name: 'd', resources: { requests: { [A]: '3' }, limits: { [A]: '3' } } }]),
      needed: { [A]: 2 },
      containers: 'unchanged',
    },
    {
      name: 'requests and limits equal, above the need: the container not even copied',
      pod: podOf([{ name: 'c', resources: { requests: { [A]: '2' }, limits: { [A]: '2' } } }]),
      needed: { [A]: 1 },
      containers: 'unchanged',
    },
    {
      name: 'limits alone, enough: left alone (the apiserver copies them)',
      pod: podOf([{ name: 'c', resources: { limits: { [A]: '2' } } }]),
      needed: { [A]: 2 },
      containers: 'unchanged',
    },
    {
      name: 'requests above limits: limits raised, requests kept as written',
      pod: podOf([{ name: 'c', resources: { requests: { [A]: 2 }, limits: { [A]: '1' } } }]),
      needed: { [A]: 1 },
      containers: [{ name: 'c', resources: { requests: { [A]: 2 }, limits: { [A]: '2' } } }],
    },
    {
      name: 'one bad quantity: nothing written, not even the other resource',
      pod: podOf([{ name: 'c', resources: { requests: { [A]: 'lots' } } }]),
      needed: { [A]: 1, [B]: 1 },
      containers: 'unchanged',
      errors: [`spec.containers[0].resources.requests[${A}]: Invalid value: "lots": must be a quantity, e.g. "1"`],
    },
  ];
  for (const c of cases) {
    const got = inject(c.pod, c.needed);
    t.same(got.errors, c.errors ?? [], `${c.name}: errors`);
    if (c.containers === 'unchanged') {
      t.equal(got.changed, false, `${c.name}: pod unchanged`);
      t.same(got.containers, c.pod['spec']['containers'], `${c.name}: containers as given`);
    } else t.strictSame(got.containers, c.containers, c.name);
  }
});

t.test('amountIn: the larger of requests and limits', async (t) => {
  const cases: Array<{ c: Obj; want: number }> = [
    { c: { resources: { requests: { [A]: '3' } } }, want: 3 },
    { c: { resources: { limits: { [A]: '4' } } }, want: 4 },
    { c: { resources: { requests: { [A]: '2' }, limits: { [A]: '5' } } }, want: 5 },
    { c: { resources: { requests: { [B]: '2' } } }, want: 0 },
    { c: {}, want: 0 },
  ];
  for (const c of cases) t.equal(amountIn(c.c, A), c.want, JSON.stringify(c.c));
});

t.test('targetContainer: the default container, else the first', async (t) => {
  const containers = [{ name: 'first' }, { name: 'second' }];
  const cases: Array<{ wanted?: string; target: number; warnings: Obj[] }> = [
    { target: 0, warnings: [] },
    { wanted: 'first', target: 0, warnings: [] },
    { wanted: 'second', target: 1, warnings: [] },
    {
      wanted: 'third',
      target: 0,
      warnings: [
        { path: `metadata.annotations[${DEFAULT_CONTAINER_ANNOTATION}]`, text: 'no container "third"; resources go to the first one' },
      ],
    },
  ];
  for (const c of cases) {
    const warnings: Obj[] = [];
    const pod = { metadata: c.wanted === undefined ? {} : { annotations: { [DEFAULT_CONTAINER_ANNOTATION]: c.wanted } } };
    t.equal(targetContainer(pod, containers, warnings as never), c.target, String(c.wanted));
    t.same(warnings, c.warnings, `${String(c.wanted)}: warnings`);
  }
});

t.test('a name that is not an extended resource name is never written: the apiserver would refuse the pod', async (t) => {
  const got = inject(podOf([{ name: 'c' }]), { 'single-gpu': 1, [A]: 1 });
  t.same(got.errors, []);
  t.same(got.containers?.[0]?.resources, { requests: { [A]: '1' }, limits: { [A]: '1' } }, 'only the extended resource');
  t.match(got.warnings, [{ path: '', text: /^not requested: single-gpu \(not an extended resource name/ }]);
  const alone = inject(podOf([{ name: 'c' }]), { 'single-gpu': 1 });
  t.same([alone.changed, alone.errors], [false, []], 'nothing else to write: the pod is untouched');
  const two = inject(podOf([{ name: 'c' }]), { 'single-gpu': 1, 'dual-gpu': 1 });
  t.strictSame(
    two.warnings.map((w) => w.text),
    ['not requested: single-gpu, dual-gpu (not an extended resource name; only a DRA claim can serve it)'],
    'every such name in one warning, in the order asked',
  );
});
