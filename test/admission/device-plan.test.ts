// src/admission/device-plan.ts through its exported functions (docs/dra.md): which pods need the DRA
// planning, `netattach.io/networkClaims` parsing and its pairs, the template checks' exact messages,
// and the claims `addTemplateClaims` writes (names, what it leaves alone, what it refuses).
import t from 'tap';
import {
  addTemplateClaims,
  checkNetworkClaims,
  checkTemplates,
  MAX_OWN_CLAIM_RESOURCES,
  MAX_OWN_CLAIM_SOURCES,
  needsDevicePlan,
  ownClaimsServing,
  parseNetworkClaims,
  planDevices,
  NETWORK_CLAIMS_ANNOTATION,
  type Attachment,
  type DevicePlan,
} from '../../src/admission/device-plan.js';
import { PodDraft } from '../../src/admission/draft.js';
import { POD_LOCATION } from '../../src/admission/object.js';
import { StaticDraView, type DraView } from '../../src/dra/index.js';
import { renderError, type FieldError } from '../../src/field/index.js';
import { review } from '../../src/admission/index.js';
import { context, nadLookup, nadObject, pod, request } from './fixtures.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const ANN_PATH = `metadata.annotations[${NETWORK_CLAIMS_ANNOTATION}]`;
const ITEM_REASON = "each item must be 'network=claim' or 'namespace/network=claim', claim being the name of one of spec.resourceClaims";

function attachment(
  name: string,
  opts: { namespace?: string; template?: string; resourceNames?: string[]; index?: number } = {},
): Attachment {
  const namespace = opts.namespace ?? 'default';
  const i = opts.index ?? 0;
  return {
    net: { index: i, path: `metadata.annotations[k8s.v1.cni.cncf.io/networks][${i}]`, selection: { name, namespace } },
    nad: {
      namespace,
      name,
      resourceNames: opts.resourceNames ?? ['example.com/nic'],
      nodeSelector: {},
      problems: [],
      ...(opts.template !== undefined ? { claimTemplate: opts.template } : {}),
    },
  };
}

function podWith(annotations: Obj | undefined, claims?: unknown): Obj {
  return {
    ...(annotations ? { metadata: { annotations } } : {}),
    spec: { containers: [{ name: 'app' }], ...(claims !== undefined ? { resourceClaims: claims } : {}) },
  };
}

t.test('needsDevicePlan: a template NAD, the networkClaims annotation, or own claims with a device network; nothing else', async (t) => {
  const cases: Array<{ name: string; pod: Obj | undefined; attachments: Attachment[]; want: boolean }> = [
    { name: 'plain networks, no annotation', pod: podWith({ other: 'x' }), attachments: [attachment('a'), attachment('b')], want: false },
    { name: 'no pod, plain network', pod: undefined, attachments: [attachment('a')], want: false },
    { name: 'a template NAD', pod: podWith(undefined), attachments: [attachment('a'), attachment('b', { template: 'tpl' })], want: true },
    { name: 'the annotation alone', pod: podWith({ [NETWORK_CLAIMS_ANNOTATION]: 'a=c' }), attachments: [], want: true },
    // Issue 38: Multus's DRA how-to pod declares its own claims and no annotation.
    {
      name: 'own claims, a network with a resourceName',
      pod: podWith(undefined, [{ name: 'c', resourceClaimTemplateName: 't' }]),
      attachments: [attachment('a')],
      want: true,
    },
    {
      name: 'own claims, networks without a resourceName',
      pod: podWith(undefined, [{ name: 'c', resourceClaimTemplateName: 't' }]),
      attachments: [attachment('a', { resourceNames: [] })],
      want: false,
    },
    { name: 'an empty claims list', pod: podWith(undefined, []), attachments: [attachment('a')], want: false },
    {
      name: 'own claims, one of the networks with a resourceName',
      pod: podWith(undefined, [{ name: 'c', resourceClaimTemplateName: 't' }]),
      attachments: [attachment('a', { resourceNames: [] }), attachment('b', { index: 1 })],
      want: true,
    },
  ];
  for (const c of cases) t.equal(needsDevicePlan(c.pod, c.attachments), c.want, c.name);
});

t.test('parseNetworkClaims: the pairs and the items refused', async (t) => {
  const claim63 = 'c'.repeat(63);
  const claim64 = 'c'.repeat(64);
  const ok: Array<{ text: string; pairs: Obj[] }> = [
    { text: 'n=c', pairs: [{ namespace: 'ns', name: 'n', claim: 'c' }] },
    { text: 'a/net=gpu', pairs: [{ namespace: 'a', name: 'net', claim: 'gpu' }] },
    { text: 'team-b/sriov.a=gpu-nic', pairs: [{ namespace: 'team-b', name: 'sriov.a', claim: 'gpu-nic' }] },
    {
      text: ' net = claim , other=x ',
      pairs: [
        { namespace: 'ns', name: 'net', claim: 'claim' },
        { namespace: 'ns', name: 'other', claim: 'x' },
      ],
    },
    { text: `net=${claim63}`, pairs: [{ namespace: 'ns', name: 'net', claim: claim63 }] },
  ];
  for (const c of ok) t.strictSame(parseNetworkClaims(c.text, 'ns', 'P'), { pairs: c.pairs, errors: [] }, JSON.stringify(c.text));

  const bad: Array<{ text: string; item: string }> = [
    { text: 'Net=claim', item: 'Net=claim' },
    { text: 'net=claim!', item: 'net=claim!' },
    { text: '_ns/net=claim', item: '_ns/net=claim' },
    { text: 'net=Claim', item: 'net=Claim' },
    { text: `net=${claim64}`, item: `net=${claim64}` },
    { text: 'net=', item: 'net=' },
  ];
  for (const c of bad) {
    t.strictSame(
      parseNetworkClaims(c.text, 'ns', 'P'),
      { pairs: [], errors: [{ path: 'P', type: 'Invalid value', value: c.item, reason: ITEM_REASON }] },
      JSON.stringify(c.text),
    );
  }
  // A good item next to a bad one: the pair is kept, the bad one is an error.
  t.strictSame(parseNetworkClaims('a=b,,c=d', 'ns', 'P'), {
    pairs: [
      { namespace: 'ns', name: 'a', claim: 'b' },
      { namespace: 'ns', name: 'c', claim: 'd' },
    ],
    errors: [{ path: 'P', type: 'Invalid value', value: '', reason: ITEM_REASON }],
  });

  for (const text of ['', '   ']) {
    t.strictSame(
      parseNetworkClaims(text, 'ns', 'P'),
      {
        pairs: [],
        errors: [{ path: 'P', type: 'Invalid value', value: text, reason: "must hold 'network=claim' pairs, comma-separated" }],
      },
      `blank ${JSON.stringify(text)}: one error for the whole value`,
    );
  }
});

t.test('planDevices: the pairs against the pod claims and the selections', async (t) => {
  const own = (text: unknown, claims: unknown): Obj => podWith({ [NETWORK_CLAIMS_ANNOTATION]: text }, claims);
  const cases: Array<{
    name: string;
    pod: Obj;
    attachments: Attachment[];
    errors: FieldError[];
    warnings: Obj[];
    covered: number;
    extended: number;
  }> = [
    {
      name: 'not a string',
      pod: own(5, [{ name: 'gpu' }]),
      attachments: [attachment('a')],
      errors: [{ path: ANN_PATH, type: 'Invalid value', value: 5, reason: 'must be a string' }],
      warnings: [],
      covered: 0,
      extended: 1,
    },
    {
      name: 'covered, with a resourceName: no warning',
      pod: own('a=gpu', [null, 'x', { name: 7 }, { name: 'gpu' }]),
      attachments: [attachment('a', { template: 'tpl' })],
      errors: [],
      warnings: [],
      covered: 1,
      extended: 0,
    },
    {
      name: 'covered, without a resourceName',
      pod: own('a=gpu', [{ name: 'gpu' }]),
      attachments: [attachment('a', { template: 'tpl', resourceNames: [] })],
      errors: [],
      warnings: [{ path: '', text: 'default/a has no resourceName: Multus cannot tell which device of claim gpu is its' }],
      covered: 1,
      extended: 0,
    },
    {
      name: 'a claim the pod lacks, among entries without a usable name',
      pod: own('a=gpu', [null, { name: 7 }, { resourceClaimTemplateName: 'gpu' }]),
      attachments: [attachment('a', { template: 'tpl' })],
      errors: [
        {
          path: ANN_PATH,
          type: 'Not found',
          value: 'gpu',
          reason:
            'default/a is said to use pod claim "gpu", but spec.resourceClaims has no entry of that name: the network would get no device',
        },
      ],
      warnings: [],
      covered: 0,
      extended: 0,
    },
    {
      name: 'same name, other namespace: not a selection of the pod',
      pod: own('other/a=gpu', [{ name: 'gpu' }]),
      attachments: [attachment('a', { template: 'tpl' })],
      errors: [],
      warnings: [{ path: '', text: `${NETWORK_CLAIMS_ANNOTATION}: other/a=gpu unused: other/a is not among the pod's networks` }],
      covered: 0,
      extended: 0,
    },
    {
      name: 'same namespace, other name: not a selection of the pod',
      pod: own('b=gpu', [{ name: 'gpu' }]),
      attachments: [attachment('a', { template: 'tpl' })],
      errors: [],
      warnings: [{ path: '', text: `${NETWORK_CLAIMS_ANNOTATION}: default/b=gpu unused: default/b is not among the pod's networks` }],
      covered: 0,
      extended: 0,
    },
    {
      name: 'more pairs than selections',
      pod: own('a=gpu,a=gpu2', [{ name: 'gpu' }, { name: 'gpu2' }]),
      attachments: [attachment('a', { template: 'tpl' })],
      errors: [],
      warnings: [{ path: '', text: `${NETWORK_CLAIMS_ANNOTATION}: default/a=gpu2 unused: more pairs than selections of default/a` }],
      covered: 1,
      extended: 0,
    },
  ];
  for (const c of cases) {
    const plan = planDevices(c.pod, POD_LOCATION, c.attachments, 'default');
    t.strictSame(plan.errors, c.errors, `${c.name}: errors`);
    t.strictSame(plan.warnings, c.warnings, `${c.name}: warnings`);
    const claimed = [...plan.templates.values()].reduce((n, v) => n + v.count, 0);
    t.equal(c.attachments.length - claimed - plan.extended.length, c.covered, `${c.name}: covered`);
    t.equal(plan.extended.length, c.extended, `${c.name}: extended`);
  }

  // A pod without annotations (or none at all) is planned from its NADs alone.
  for (const p of [{ spec: {} }, undefined]) {
    const plan = planDevices(p, POD_LOCATION, [attachment('a', { template: 'tpl' }), attachment('b', { index: 1 })], 'default');
    t.strictSame([...plan.templates], [['tpl', { count: 1, paths: ['metadata.annotations[k8s.v1.cni.cncf.io/networks][0]'] }]]);
    t.strictSame(
      plan.extended.map((a) => a.net.selection.name),
      ['b'],
    );
    t.strictSame([plan.errors, plan.warnings], [[], []]);
  }
});

function planOf(templates: Array<[string, number]>): DevicePlan {
  return {
    extended: [],
    templates: new Map(templates.map(([name, count], i) => [name, { count, paths: [`P${i}`] }])),
    errors: [],
    warnings: [],
    claimed: [],
    podClaims: [],
    requested: new Set(),
    declared: new Set(),
  };
}

t.test('checkTemplates: exact findings and warnings', async (t) => {
  const absent = new StaticDraView([], []);
  const unavailable: DraView = { classesFor: () => [], template: () => ({ status: 'unavailable', reason: 'templates not synced' }) };
  const plan = planOf([['tpl', 1]]);
  t.strictSame(checkTemplates(plan, 'ns', undefined, false), {
    findings: [],
    warnings: [{ path: '', text: 'ResourceClaimTemplate ns/tpl unchecked: netattach does not read templates here' }],
  });
  t.strictSame(checkTemplates(plan, 'ns', unavailable, false), {
    findings: [],
    warnings: [{ path: '', text: 'ResourceClaimTemplate ns/tpl unchecked: templates not synced' }],
  });
  t.strictSame(checkTemplates(plan, 'ns', absent, true), {
    findings: [],
    warnings: [{ path: '', text: 'no ResourceClaimTemplate tpl in namespace ns: its pods will be denied until it exists' }],
  });
  t.strictSame(checkTemplates(plan, 'ns', absent, false), {
    findings: [
      {
        policy: 'builtin',
        rule: 'claimTemplateExists',
        action: 'Enforce',
        error: {
          path: 'P0',
          type: 'Not found',
          value: 'ns/tpl',
          reason:
            "the network's device is claimed from ResourceClaimTemplate tpl, which namespace ns lacks: create it in namespace ns (kubectl -n ns apply -f a ResourceClaimTemplate named tpl; see docs/dra.md)",
        },
      },
    ],
    warnings: [],
  });
  t.strictSame(checkTemplates(plan, 'ns', new StaticDraView([], [{ namespace: 'ns', name: 'tpl' }]), false), {
    findings: [],
    warnings: [],
  });
});

t.test('addTemplateClaims: claim names', async (t) => {
  const long = 'a'.repeat(70);
  const dashes = `${'x'.repeat(56)}--yz`; // cut at 58 characters it ends in two dashes
  const cases: Array<{ template: string; name: string }> = [
    { template: 'net-claimed', name: 'net-claimed-1' },
    { template: 'net.other.v1', name: 'net-other-v1-1' },
    { template: long, name: `${'a'.repeat(58)}-1` },
    { template: dashes, name: `${'x'.repeat(56)}-1` },
  ];
  for (const c of cases) {
    const draft = new PodDraft({ spec: { containers: [{ name: 'app' }] } });
    t.strictSame(addTemplateClaims(draft, planOf([[c.template, 1]])), { errors: [], warnings: [] }, c.template);
    t.strictSame(draft.pod['spec'], {
      containers: [{ name: 'app', resources: { claims: [{ name: c.name }] } }],
      resourceClaims: [{ name: c.name, resourceClaimTemplateName: c.template }],
    });
  }
});

t.test('addTemplateClaims: what the pod already has', async (t) => {
  const cases: Array<{ name: string; spec: Obj; want: Obj }> = [
    {
      name: 'resourceClaims null, resources null',
      spec: { resourceClaims: null, containers: [{ name: 'app', resources: null }] },
      want: {
        resourceClaims: [{ name: 'tpl-1', resourceClaimTemplateName: 'tpl' }],
        containers: [{ name: 'app', resources: { claims: [{ name: 'tpl-1' }] } }],
      },
    },
    {
      name: 'resources.claims null; entries that are no objects or have no usable name are kept',
      spec: { resourceClaims: [null, 'x', { name: 5 }, { name: 'tpl-1' }], containers: [{ name: 'app', resources: { claims: null } }] },
      want: {
        resourceClaims: [null, 'x', { name: 5 }, { name: 'tpl-1' }, { name: 'tpl-2', resourceClaimTemplateName: 'tpl' }],
        containers: [{ name: 'app', resources: { claims: [{ name: 'tpl-2' }] } }],
      },
    },
  ];
  for (const c of cases) {
    const draft = new PodDraft({ spec: c.spec });
    t.strictSame(addTemplateClaims(draft, planOf([['tpl', 1]])), { errors: [], warnings: [] }, c.name);
    t.strictSame(draft.pod['spec'], c.want, c.name);
  }

  // No templates: nothing is looked at, not even a malformed resourceClaims.
  const draft = new PodDraft({ spec: { resourceClaims: 'x', containers: [] } });
  t.strictSame(addTemplateClaims(draft, planOf([])), { errors: [], warnings: [] });
  t.equal(draft.changed, false);
});

t.test('addTemplateClaims: refused shapes', async (t) => {
  const containersError: FieldError = {
    path: 'spec.containers',
    type: 'Invalid value',
    value: '<list>',
    reason: "the claims for the pod's networks need a container",
  };
  const cases: Array<{ name: string; spec: Obj; errors: FieldError[] }> = [
    { name: 'no containers', spec: {}, errors: [containersError] },
    { name: 'containers not a list', spec: { containers: { name: 'app' } }, errors: [containersError] },
    { name: 'empty containers', spec: { containers: [] }, errors: [containersError] },
    { name: 'a container that is no object', spec: { containers: [{ name: 'app' }, 'x'] }, errors: [containersError] },
    {
      name: 'resources not an object',
      spec: { containers: [{ name: 'app', resources: 'x' }] },
      errors: [{ path: 'spec.containers[0].resources', type: 'Invalid value', value: 'x', reason: 'must be an object' }],
    },
    {
      name: 'resources of the default container not an object',
      spec: { containers: [{ name: 'app' }, { name: 'side', resources: 7 }] },
      errors: [{ path: 'spec.containers[1].resources', type: 'Invalid value', value: 7, reason: 'must be an object' }],
    },
  ];
  for (const c of cases) {
    const pod: Obj = { spec: c.spec };
    if (c.name.includes('default container')) pod['metadata'] = { annotations: { 'kubectl.kubernetes.io/default-container': 'side' } };
    const draft = new PodDraft(pod);
    t.strictSame(addTemplateClaims(draft, planOf([['tpl', 1]])), { errors: c.errors, warnings: [] }, c.name);
    t.equal(draft.changed, false, `${c.name}: nothing written`);
  }
});

// Issue 24, finding 7: a pod's own claim for a network dropped the network's extended resource
// without any check that the claim can hold a device with the NAD's resourceName; the pod then
// failed at CNI ADD (Multus found no device). Denied when certain, warned when netattach cannot tell.
const NIC = 'example.com/sriov_a';
const ATTR = 'device.attributes["k8s.cni.cncf.io"].resourceName';
const _pins = (name: string) => `${ATTR} == "${name}"`;
const nicRequest = (deviceClassName: string, selector?: string) => ({
  name: 'nic',
  alternatives: [{ deviceClassName, ...(selector ? { resourceNames: [selector] } : {}) }],
});
const gpuRequest = { name: 'gpu', alternatives: [{ deviceClassName: 'gpu' }] };
const CLASSES = [
  { name: 'sriov-a', resourceNames: [NIC] },
  { name: 'sriov-b', resourceNames: ['example.com/sriov_b'] },
  { name: 'ext-a', extendedResourceName: NIC },
  { name: 'generic-nic' },
  { name: 'gpu' },
];

t.test('checkNetworkClaims: can the pod claim hold a device with the network resourceName?', async (t) => {
  type Case = {
    name: string;
    requests?: Array<{ name: string; alternatives: Array<{ deviceClassName: string; resourceNames?: string[] }> }>;
    entry?: Obj;
    otherClaims?: Obj[];
    containerRequests?: Obj;
    view?: 'none' | 'not-held' | 'held';
    workload?: boolean;
    error?: RegExp;
    warning?: RegExp;
  };
  const cannot =
    /pod claim "gpu-nic" \(ResourceClaimTemplate gpu-and-nic\) cannot hold a device with resourceName example\.com\/sriov_a: its requests' DeviceClasses \(sriov-b\) select other devices, so Multus would find no device for default\/net/;
  const cases: Case[] = [
    { name: 'a class whose selectors require the resourceName (the docs example)', requests: [gpuRequest, nicRequest('sriov-a')] },
    { name: 'a class whose extendedResourceName is it', requests: [nicRequest('ext-a')] },
    { name: "the request's own selectors require it", requests: [nicRequest('generic-nic', NIC)] },
    {
      name: 'one firstAvailable alternative serving is enough',
      requests: [{ name: 'nic', alternatives: [{ deviceClassName: 'sriov-b' }, { deviceClassName: 'sriov-a' }] }],
    },
    { name: 'every request requires another resourceName: denied', requests: [nicRequest('sriov-b')], error: cannot },
    {
      name: 'the request narrows a serving class to another resourceName: denied',
      requests: [{ name: 'nic', alternatives: [{ deviceClassName: 'sriov-a', resourceNames: ['example.com/other'] }] }],
      error: /cannot hold a device/,
    },
    { name: 'the same in a workload template: a warning', requests: [nicRequest('sriov-b')], workload: true, warning: cannot },
    {
      name: 'another claim of the pod might serve it: a warning',
      requests: [nicRequest('sriov-b')],
      otherClaims: [{ name: 'more', resourceClaimName: 'shared-nic' }],
      warning: /cannot hold a device .*unless another claim of the pod serves it/,
    },
    {
      name: 'the pod requests the resource itself: a warning',
      requests: [nicRequest('sriov-b')],
      containerRequests: { [NIC]: '1' },
      warning: /unless another claim/,
    },
    {
      name: 'a request netattach cannot judge (a GPU class) and one ruled out: a warning',
      requests: [gpuRequest, nicRequest('sriov-b')],
      warning:
        /pod claim gpu-nic for default\/net \(example\.com\/sriov_a\) unchecked: no request of ResourceClaimTemplate gpu-and-nic names a DeviceClass known to select it/,
    },
    { name: 'a class netattach does not hold: a warning', requests: [nicRequest('unknown-class')], warning: /unchecked: no request/ },
    {
      name: 'a ResourceClaim by name: a warning',
      entry: { name: 'gpu-nic', resourceClaimName: 'shared' },
      warning: /unchecked: netattach does not read ResourceClaims/,
    },
    { name: 'no DRA view: a warning', view: 'none', warning: /unchecked: netattach does not read templates here/ },
    {
      name: 'a template netattach does not hold: a warning',
      view: 'not-held',
      warning: /unchecked: no ResourceClaimTemplate gpu-and-nic in namespace default/,
    },
  ];
  for (const c of cases) {
    const view = new StaticDraView(
      CLASSES,
      c.view === 'not-held' ? [] : [{ namespace: 'default', name: 'gpu-and-nic', devices: { requests: c.requests ?? [] } }],
    );
    const p = podWith({ [NETWORK_CLAIMS_ANNOTATION]: 'net=gpu-nic' }, [
      c.entry ?? { name: 'gpu-nic', resourceClaimTemplateName: 'gpu-and-nic' },
      ...(c.otherClaims ?? []),
    ]);
    if (c.containerRequests) p.spec.containers[0].resources = { requests: c.containerRequests };
    const plan = planDevices(p, POD_LOCATION, [attachment('net', { resourceNames: [NIC] })], 'default');
    const got = checkNetworkClaims(plan, 'default', c.view === 'none' ? undefined : view, c.workload === true);
    if (c.error) {
      t.equal(got.errors.length, 1, c.name);
      t.equal(got.errors[0]?.path, ANN_PATH, `${c.name}: the annotation's path`);
      t.equal(got.errors[0]?.value, 'default/net=gpu-nic', `${c.name}: the pair as value`);
      t.match(got.errors[0]?.reason, c.error, c.name);
    } else t.strictSame(got.errors, [], c.name);
    if (c.warning) t.match(got.warnings.map((w) => w.text).join('\n'), c.warning, c.name);
    else t.strictSame(got.warnings, [], c.name);
  }
});

t.test(
  'networkClaims through the admission core: a claim that cannot hold the device denies the pod (422), a serving one admits it',
  async (t) => {
    const nads = nadLookup(nadObject('net', { resourceName: NIC }));
    const view = new StaticDraView(CLASSES, [
      { namespace: 'default', name: 'wrong-nic', devices: { requests: [nicRequest('sriov-b')] } },
      { namespace: 'default', name: 'gpu-and-nic', devices: { requests: [gpuRequest, nicRequest('sriov-a')] } },
    ]);
    const podUsing = (template: string): Obj => {
      const p = pod({ networks: 'net', annotations: { [NETWORK_CLAIMS_ANNOTATION]: 'net=mine' } }) as Obj;
      p.spec.resourceClaims = [{ name: 'mine', resourceClaimTemplateName: template }];
      p.spec.containers[0].resources = { claims: [{ name: 'mine' }] };
      return p;
    };
    const denied = review(request(podUsing('wrong-nic')), { ...context(nads), dra: view });
    t.equal(denied.allowed, false, 'denied: the pod would fail at CNI ADD');
    t.equal(denied.code, 422);
    t.match(
      denied.errors.map(renderError).join('\n'),
      /^metadata\.annotations\[netattach\.io\/networkClaims\]: Invalid value: "default\/net=mine": pod claim "mine" \(ResourceClaimTemplate wrong-nic\) cannot hold a device with resourceName example\.com\/sriov_a/,
    );
    const admitted = review(request(podUsing('gpu-and-nic')), { ...context(nads), dra: view });
    t.equal(admitted.allowed, true, admitted.errors.map(renderError).join('; '));
    t.strictSame(admitted.warnings, [], 'no warning: the NIC request is served by a class selecting the resourceName');
  },
);

t.test('networkClaims in a workload template: a claim that cannot hold the device is a warning, not a denial', async (t) => {
  const nads = nadLookup(nadObject('net', { resourceName: NIC }));
  const view = new StaticDraView(CLASSES, [{ namespace: 'default', name: 'wrong-nic', devices: { requests: [nicRequest('sriov-b')] } }]);
  const template = pod({ networks: 'net', annotations: { [NETWORK_CLAIMS_ANNOTATION]: 'net=mine' } }) as Obj;
  template.spec.resourceClaims = [{ name: 'mine', resourceClaimTemplateName: 'wrong-nic' }];
  const deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'd', namespace: 'default' },
    spec: { selector: {}, template: { metadata: template.metadata, spec: template.spec } },
  };
  const d = review(
    request(deployment, {
      resource: { group: 'apps', version: 'v1', resource: 'deployments' },
      kind: { group: 'apps', version: 'v1', kind: 'Deployment' },
    }),
    { ...context(nads), dra: view },
  );
  t.equal(d.allowed, true, d.errors.map(renderError).join('; '));
  t.ok(
    d.warnings.some((w) => 'note' in w && /pod claim "mine" \(ResourceClaimTemplate wrong-nic\) cannot hold a device/.test(w.note.text)),
    JSON.stringify(d.warnings),
  );
});

// Issue 38, item 1: which of the pod's own claims ownClaimsServing reads. Claims the networkClaims
// annotation assigns, and claims from a template netattach draws claims from itself, are not read
// for the other selections (the annotation is explicit; the template's claims serve its network).
t.test('ownClaimsServing: which claims are read, which resources are served', async (t) => {
  const OTHER = 'example.com/sriov_b';
  // Every template here names a class selecting by driver alone: netattach cannot tell.
  const view = new StaticDraView(
    [{ name: 'by-driver' }, { name: 'sriov-a', resourceNames: [NIC] }],
    [
      { namespace: 'default', name: 'mine', devices: { requests: [{ name: 'vf', alternatives: [{ deviceClassName: 'by-driver' }] }] } },
      { namespace: 'default', name: 'nic-a', devices: { requests: [{ name: 'vf', alternatives: [{ deviceClassName: 'sriov-a' }] }] } },
      { namespace: 'default', name: 'tpl', devices: { requests: [{ name: 'vf', alternatives: [{ deviceClassName: 'by-driver' }] }] } },
    ],
  );
  type Case = { name: string; annotation?: string; claims: Obj[]; attachments: Attachment[]; served: string[]; warned: string[] };
  const cases: Case[] = [
    {
      name: 'a claim netattach cannot judge: injected, warned',
      claims: [{ name: 'c', resourceClaimTemplateName: 'mine' }],
      attachments: [attachment('net', { resourceNames: [NIC] })],
      served: [],
      warned: ['default/net'],
    },
    {
      name: 'a claim that serves: not injected, nothing said',
      claims: [{ name: 'c', resourceClaimTemplateName: 'nic-a' }],
      attachments: [attachment('net', { resourceNames: [NIC] })],
      served: [NIC],
      warned: [],
    },
    {
      name: 'a claim serving one resource is ruled out for another',
      claims: [{ name: 'c', resourceClaimTemplateName: 'nic-a' }],
      attachments: [attachment('net', { resourceNames: [OTHER] })],
      served: [],
      warned: [],
    },
    {
      name: 'a claim the annotation assigns is not read for other networks',
      annotation: 'a=c',
      claims: [{ name: 'c', resourceClaimTemplateName: 'mine' }],
      attachments: [attachment('a', { resourceNames: [NIC] }), attachment('b', { resourceNames: [OTHER], index: 1 })],
      served: [],
      warned: [],
    },
    {
      name: "claims from a template NAD's template are netattach's, not read",
      claims: [{ name: 'tpl-1', resourceClaimTemplateName: 'tpl' }],
      attachments: [attachment('a', { template: 'tpl' }), attachment('b', { resourceNames: [OTHER], index: 1 })],
      served: [],
      warned: [],
    },
    {
      name: 'an entry naming neither a template nor a claim is not read',
      claims: [{ name: 'c' }],
      attachments: [attachment('net', { resourceNames: [NIC] })],
      served: [],
      warned: [],
    },
    {
      name: 'one warning per resource, naming its selections and every claim',
      claims: [
        { name: 'c', resourceClaimTemplateName: 'mine' },
        { name: 'd', resourceClaimName: 'shared' },
      ],
      attachments: [
        attachment('x', { resourceNames: [NIC] }),
        attachment('y', { resourceNames: [NIC], index: 1 }),
        attachment('x', { resourceNames: [NIC], index: 2 }),
      ],
      served: [],
      warned: ['default/x, default/y'],
    },
  ];
  for (const c of cases) {
    const p = podWith(c.annotation ? { [NETWORK_CLAIMS_ANNOTATION]: c.annotation } : undefined, c.claims);
    const plan = planDevices(p, POD_LOCATION, c.attachments, 'default');
    const got = ownClaimsServing(plan, 'default', view);
    t.strictSame([...got.served], c.served, `${c.name}: served`);
    t.strictSame(
      got.warnings.map((w) => w.text.slice(0, w.text.indexOf(':'))),
      c.warned,
      `${c.name}: warned`,
    );
  }
  const both = planDevices(
    podWith(undefined, [
      { name: 'c', resourceClaimTemplateName: 'mine' },
      { name: 'd', resourceClaimName: 'shared' },
    ]),
    POD_LOCATION,
    [attachment('x', { resourceNames: [NIC] })],
    'default',
  );
  t.strictSame(ownClaimsServing(both, 'default', view).warnings, [
    {
      path: '',
      text: 'default/x: example.com/sriov_a added; pod claims c, d may hold its device instead (no request of ResourceClaimTemplate mine names a DeviceClass known to select it): if so, annotate netattach.io/networkClaims: x=c (docs/dra.md)',
    },
  ]);
});

t.test('ownClaimsServing: bounded work for a forged pod (mutating webhooks see it before validation)', async (t) => {
  // Each of 40 templates is certainly for other devices: read ones say "no"; unread ones cannot.
  const view = new StaticDraView(
    [{ name: 'other', resourceNames: ['example.com/other'] }],
    Array.from({ length: 40 }, (_, i) => ({
      namespace: 'default',
      name: `t${i}`,
      devices: { requests: [{ name: 'r', alternatives: [{ deviceClassName: 'other' }] }] },
    })),
  );
  const claims = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `c${i}`, resourceClaimTemplateName: `t${i % 40}` }));
  // 2,000 entries from 32 templates: one judgement per template, all "no": injected as before.
  const within = planDevices(
    podWith(
      undefined,
      claims(2000).filter((c) => Number(c.resourceClaimTemplateName.slice(1)) < MAX_OWN_CLAIM_SOURCES),
    ),
    POD_LOCATION,
    [attachment('net', { resourceNames: [NIC] })],
    'default',
  );
  t.strictSame(ownClaimsServing(within, 'default', view), { served: new Set(), warnings: [] });
  // 40 templates: 8 unread, so netattach cannot tell: injected as before (the answer at the bound), warned.
  const past = planDevices(podWith(undefined, claims(2000)), POD_LOCATION, [attachment('net', { resourceNames: [NIC] })], 'default');
  const got = ownClaimsServing(past, 'default', view);
  t.strictSame([...got.served], []);
  t.strictSame(
    got.warnings.map((w) => w.text),
    [
      `default/net: ${NIC} added; pod claim 8 more may hold its device instead (netattach reads ${MAX_OWN_CLAIM_SOURCES} claim sources): if so, annotate netattach.io/networkClaims: net=c32 (docs/dra.md)`,
    ],
  );
  // One serving claim past the bound is not seen either: injected, warned (never a denial).
  const hidden = claims(2000).map((c) => (c.name === 'c39' ? { name: 'c39', resourceClaimTemplateName: 'nic-a' } : c));
  const viewA = new StaticDraView(
    [
      { name: 'other', resourceNames: ['example.com/other'] },
      { name: 'sriov-a', resourceNames: [NIC] },
    ],
    [
      ...Array.from({ length: 40 }, (_, i) => ({
        namespace: 'default',
        name: `t${i}`,
        devices: { requests: [{ name: 'r', alternatives: [{ deviceClassName: 'other' }] }] },
      })),
      { namespace: 'default', name: 'nic-a', devices: { requests: [{ name: 'vf', alternatives: [{ deviceClassName: 'sriov-a' }] }] } },
    ],
  );
  const unseen = ownClaimsServing(
    planDevices(podWith(undefined, hidden), POD_LOCATION, [attachment('net', { resourceNames: [NIC] })], 'default'),
    'default',
    viewA,
  );
  t.strictSame([...unseen.served], [], 'the 40th source (past the 32 read) is not read');
  t.equal(unseen.warnings.length, 1);
  // 40 distinct resources: the 8 past the bound are injected without reading, said in one warning.
  const many = Array.from({ length: 40 }, (_, i) => attachment(`n${i}`, { resourceNames: [`example.com/r${i}`], index: i }));
  const wide = ownClaimsServing(planDevices(podWith(undefined, claims(1)), POD_LOCATION, many, 'default'), 'default', view);
  t.strictSame([...wide.served], []);
  t.strictSame(
    wide.warnings.map((w) => w.text),
    [`8 resources (example.com/r32, ...) added without reading the pod's own claims: netattach reads them for ${MAX_OWN_CLAIM_RESOURCES}`],
  );
});

t.test('planDevices: the first pod claim of a name, and every resource the containers request or limit', async (t) => {
  const first = { name: 'c', resourceClaimTemplateName: 'one' };
  const second = { name: 'c', resourceClaimTemplateName: 'two' };
  const p = podWith({ [NETWORK_CLAIMS_ANNOTATION]: 'net=c' }, [first, second, { name: 'd', resourceClaimName: 'x' }]);
  p.spec.containers = [
    { name: 'app', resources: { requests: { 'example.com/req': '1' }, limits: { 'example.com/lim': '1' } } },
    { name: 'side', resources: { limits: { 'example.com/side': '2' } } },
  ];
  p.spec.initContainers = [{ name: 'init', resources: { requests: { 'example.com/init': '1' } } }];
  const plan = planDevices(p, POD_LOCATION, [attachment('net')], 'default');
  t.strictSame(
    plan.podClaims,
    [first, { name: 'd', resourceClaimName: 'x' }],
    'a second entry of a name is not read (the API server refuses it)',
  );
  t.equal(plan.claimed[0]?.entry, first, 'the pair is judged on the first entry');
  t.strictSame([...plan.requested].sort(), ['example.com/init', 'example.com/lim', 'example.com/req', 'example.com/side']);
});

t.test('checkNetworkClaims: exact messages for a network of two resourceNames', async (t) => {
  const NIC_C = 'example.com/sriov_c';
  const view = new StaticDraView(CLASSES, [
    { namespace: 'default', name: 'gpu-only', devices: { requests: [gpuRequest] } },
    {
      namespace: 'default',
      name: 'two-wrong',
      devices: {
        requests: [
          nicRequest('sriov-b'),
          { name: 'nic2', alternatives: [{ deviceClassName: 'generic-nic', resourceNames: ['example.com/other'] }] },
        ],
      },
    },
    { namespace: 'default', name: 'wrong-nic', devices: { requests: [nicRequest('sriov-b')] } },
  ]);
  const check = (template: string, opts: { other?: Obj; requests?: Obj; workload?: boolean } = {}) => {
    const p = podWith({ [NETWORK_CLAIMS_ANNOTATION]: 'net=mine' }, [
      { name: 'mine', resourceClaimTemplateName: template },
      ...(opts.other ? [opts.other] : []),
    ]);
    if (opts.requests) p.spec.containers[0].resources = { requests: opts.requests };
    const plan = planDevices(p, POD_LOCATION, [attachment('net', { resourceNames: [NIC, NIC_C] })], 'default');
    return checkNetworkClaims(plan, 'default', view, opts.workload === true);
  };
  t.strictSame(check('gpu-only'), {
    errors: [],
    warnings: [
      {
        path: '',
        text: 'pod claim mine for default/net (example.com/sriov_a, example.com/sriov_c) unchecked: no request of ResourceClaimTemplate gpu-only names a DeviceClass known to select it',
      },
    ],
  });
  const reason =
    'pod claim "mine" (ResourceClaimTemplate two-wrong) cannot hold a device with resourceName example.com/sriov_a or example.com/sriov_c: its requests\' DeviceClasses (sriov-b, generic-nic) select other devices, so Multus would find no device for default/net';
  t.strictSame(check('two-wrong'), {
    errors: [{ path: ANN_PATH, type: 'Invalid value', value: 'default/net=mine', reason: `${reason}, and the pod would fail at CNI ADD` }],
    warnings: [],
  });
  // Another claim certainly for other devices changes nothing: still certain.
  t.strictSame(
    check('two-wrong', { other: { name: 'more', resourceClaimTemplateName: 'wrong-nic' } }).errors.length,
    1,
    'another claim ruled out too',
  );
  // One of the two resourceNames requested by a container: Multus may find that device.
  t.strictSame(check('two-wrong', { requests: { [NIC_C]: '1' } }), {
    errors: [],
    warnings: [{ path: '', text: `${reason} (unless another claim of the pod serves it)` }],
  });
  t.strictSame(check('two-wrong', { workload: true }), { errors: [], warnings: [{ path: '', text: reason }] });
});

t.test('ownClaimsServing: claims by name, other namespaces, one serving claim among others, and no claim to read', async (t) => {
  const OTHER = 'example.com/sriov_b';
  const view = new StaticDraView(
    [
      { name: 'sriov-a', resourceNames: [NIC] },
      { name: 'sriov-b', resourceNames: [OTHER] },
      { name: 'every-nic', resourceNames: Array.from({ length: 40 }, (_, i) => `example.com/r${i}`) },
    ],
    [
      { namespace: 'default', name: 'nic-a', devices: { requests: [{ name: 'vf', alternatives: [{ deviceClassName: 'sriov-a' }] }] } },
      { namespace: 'default', name: 'nic-b', devices: { requests: [{ name: 'vf', alternatives: [{ deviceClassName: 'sriov-b' }] }] } },
      { namespace: 'default', name: 'every', devices: { requests: [{ name: 'vf', alternatives: [{ deviceClassName: 'every-nic' }] }] } },
    ],
  );
  const serving = (claims: Obj[], attachments: Attachment[], annotation?: string) =>
    ownClaimsServing(
      planDevices(
        podWith(annotation ? { [NETWORK_CLAIMS_ANNOTATION]: annotation } : undefined, claims),
        POD_LOCATION,
        attachments,
        'default',
      ),
      'default',
      view,
    );
  // Two ResourceClaims by name: each is a source of its own, both named.
  t.strictSame(
    serving(
      [
        { name: 'c', resourceClaimName: 'first' },
        { name: 'd', resourceClaimName: 'second' },
      ],
      [attachment('net', { namespace: 'other', resourceNames: [NIC] })],
    ).warnings,
    [
      {
        path: '',
        text: 'other/net: example.com/sriov_a added; pod claims c, d may hold its device instead (netattach does not read ResourceClaims): if so, annotate netattach.io/networkClaims: other/net=c (docs/dra.md)',
      },
    ],
  );
  // One claim ruled out, one serving: served.
  const mixed = serving(
    [
      { name: 'b', resourceClaimTemplateName: 'nic-b' },
      { name: 'a', resourceClaimTemplateName: 'nic-a' },
    ],
    [attachment('net', { resourceNames: [NIC] })],
  );
  t.strictSame(mixed, { served: new Set([NIC]), warnings: [] });
  // An entry whose name is not a string is no claim a container can reference: not read.
  t.strictSame(serving([{ name: 7, resourceClaimTemplateName: 'nic-a' }], [attachment('net', { resourceNames: [NIC] })]), {
    served: new Set(),
    warnings: [],
  });
  // 40 resources and no claim left to read (the only one is assigned by the annotation): nothing said.
  const many = Array.from({ length: 40 }, (_, i) => attachment(`n${i}`, { resourceNames: [`example.com/r${i}`], index: i + 1 }));
  t.strictSame(serving([{ name: 'c', resourceClaimTemplateName: 'nic-a' }], [attachment('a', { resourceNames: [NIC] }), ...many], 'a=c'), {
    served: new Set(),
    warnings: [],
  });
  // 40 resources, one claim able to serve them all: the first 32 are served, the rest injected unread.
  const wide = serving([{ name: 'c', resourceClaimTemplateName: 'every' }], many);
  t.strictSame(
    [...wide.served],
    many.slice(0, MAX_OWN_CLAIM_RESOURCES).map((a) => a.nad.resourceNames[0]),
  );
  t.strictSame(wide.warnings, [
    {
      path: '',
      text: `8 resources (example.com/r32, ...) added without reading the pod's own claims: netattach reads them for ${MAX_OWN_CLAIM_RESOURCES}`,
    },
  ]);
});
