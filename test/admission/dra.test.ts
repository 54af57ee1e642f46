// DRA for networks (docs/dra.md): the explicit-claim path, a pod's own claims, template checks for
// pods and workloads, and the NAD warnings about DeviceClasses.
import t, { type Test } from 'tap';
import { renderError } from '../../src/field/index.js';
import { review, MAX_WARNING_LONG, type AdmissionContext, type Decision } from '../../src/admission/index.js';
import { deviceClassInfo, StaticDraView, templateDevices, type DraView } from '../../src/dra/index.js';
import type { KubeObject } from '../../src/kube/index.js';
import { applied, context, nadLookup, nadObject, pod, request, warningLines } from './fixtures.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const CLAIMED = 'example.com/net_claimed';
const PLUGIN = 'intel.com/sriov_a';
const TEMPLATE = 'netattach.io/resourceClaimTemplate';
const OWN = 'netattach.io/networkClaims';
const nads = nadLookup(
  nadObject('claimed', { resourceName: CLAIMED, annotations: { [TEMPLATE]: 'net-claimed' } }),
  nadObject('other-template', { resourceName: 'example.com/net_other', annotations: { [TEMPLATE]: 'net.other.v1' } }),
  nadObject('plugin', { resourceName: PLUGIN }),
  nadObject('no-resource', { annotations: { [TEMPLATE]: 'net-claimed' } }),
);
const view = new StaticDraView(
  [],
  [
    { namespace: 'default', name: 'net-claimed' },
    { namespace: 'default', name: 'net.other.v1' },
  ],
);

function ctx(dra: DraView | 'none' = view, endpoint: 'mutate' | 'validate' = 'mutate'): AdmissionContext {
  return { ...context(nads, { endpoint }), ...(dra !== 'none' ? { dra } : {}) };
}

function mutate(p: Obj, dra: DraView | 'none' = view): { d: Decision; out: Obj } {
  const d = review(request(p), ctx(dra));
  return { d, out: d.allowed ? applied(p, d.patch) : p };
}

function assertIdempotent(t: Test, out: Obj): void {
  const again = review(request(out), ctx());
  t.ok(again.allowed, again.errors.map(renderError).join('; '));
  t.same(again.patch, [], 'reinvocation yields no patch');
}

t.test('explicit-claim path: one claim per selection from the template, referenced by the default container', async (t) => {
  const cases: Array<{
    name: string;
    networks: string;
    spec?: Obj;
    annotations?: Obj;
    containers?: Obj[];
    claims: Obj[];
    refs: Array<Array<Obj> | undefined>;
    requests?: Obj;
  }> = [
    {
      name: 'one selection',
      networks: 'claimed',
      claims: [{ name: 'net-claimed-1', resourceClaimTemplateName: 'net-claimed' }],
      refs: [[{ name: 'net-claimed-1' }]],
    },
    {
      name: 'duplicates count',
      networks: 'claimed@a, claimed@b',
      claims: [
        { name: 'net-claimed-1', resourceClaimTemplateName: 'net-claimed' },
        { name: 'net-claimed-2', resourceClaimTemplateName: 'net-claimed' },
      ],
      refs: [[{ name: 'net-claimed-1' }, { name: 'net-claimed-2' }]],
    },
    {
      name: 'mixed with a device-plugin network: extended resources for that one only',
      networks: 'claimed, plugin',
      claims: [{ name: 'net-claimed-1', resourceClaimTemplateName: 'net-claimed' }],
      refs: [[{ name: 'net-claimed-1' }]],
      requests: { [PLUGIN]: '1' },
    },
    {
      name: 'a template name with dots becomes a DNS label',
      networks: 'other-template',
      claims: [{ name: 'net-other-v1-1', resourceClaimTemplateName: 'net.other.v1' }],
      refs: [[{ name: 'net-other-v1-1' }]],
    },
    {
      name: 'the default container gets the references',
      networks: 'claimed',
      annotations: { 'kubectl.kubernetes.io/default-container': 'main' },
      containers: [{ name: 'sidecar' }, { name: 'main' }],
      claims: [{ name: 'net-claimed-1', resourceClaimTemplateName: 'net-claimed' }],
      refs: [undefined, [{ name: 'net-claimed-1' }]],
    },
    {
      name: 'entries the user wrote from the template count; a taken name is skipped',
      networks: 'claimed@a, claimed@b',
      spec: { resourceClaims: [{ name: 'net-claimed-1', resourceClaimTemplateName: 'net-claimed' }] },
      claims: [
        { name: 'net-claimed-1', resourceClaimTemplateName: 'net-claimed' },
        { name: 'net-claimed-2', resourceClaimTemplateName: 'net-claimed' },
      ],
      refs: [[{ name: 'net-claimed-2' }]],
    },
    {
      name: 'enough entries already: nothing added',
      networks: 'claimed',
      spec: { resourceClaims: [{ name: 'mine', resourceClaimTemplateName: 'net-claimed' }] },
      claims: [{ name: 'mine', resourceClaimTemplateName: 'net-claimed' }],
      refs: [undefined],
    },
    {
      name: 'existing references on the container are kept',
      networks: 'claimed',
      containers: [{ name: 'app', resources: { claims: [{ name: 'gpu' }], limits: { cpu: '1' } } }],
      spec: { resourceClaims: [{ name: 'gpu', resourceClaimTemplateName: 'gpu' }] },
      claims: [
        { name: 'gpu', resourceClaimTemplateName: 'gpu' },
        { name: 'net-claimed-1', resourceClaimTemplateName: 'net-claimed' },
      ],
      refs: [[{ name: 'gpu' }, { name: 'net-claimed-1' }]],
    },
  ];
  for (const c of cases) {
    await t.test(c.name, async (t) => {
      const p = pod({
        networks: c.networks,
        ...(c.annotations ? { annotations: c.annotations } : {}),
        ...(c.containers ? { containers: c.containers } : {}),
      }) as Obj;
      Object.assign(p.spec, structuredClone(c.spec ?? {}));
      const { d, out } = mutate(p);
      t.ok(d.allowed, d.errors.map(renderError).join('; '));
      t.same(out.spec.resourceClaims, c.claims);
      t.same(
        out.spec.containers.map((k: Obj) => k.resources?.claims),
        c.refs,
      );
      const requests = Object.assign({}, ...out.spec.containers.map((k: Obj) => k.resources?.requests ?? {}));
      t.notOk(requests[CLAIMED], 'no extended resource for a claimed network');
      if (c.requests) for (const [k, v] of Object.entries(c.requests)) t.equal(requests[k], v);
      assertIdempotent(t, out);
    });
  }
});

t.test('the template must exist in the pod namespace', async (t) => {
  const denied = review(request(pod({ networks: 'claimed', namespace: 'team-b' }), { namespace: 'team-b' }), {
    ...context(nadLookup(nadObject('claimed', { namespace: 'team-b', resourceName: CLAIMED, annotations: { [TEMPLATE]: 'net-claimed' } }))),
    dra: view,
  });
  t.notOk(denied.allowed);
  t.equal(denied.code, 403, 'a rule, not a malformed object');
  t.equal(denied.errors.length, 1);
  const text = renderError(denied.errors[0]!);
  t.match(text, /metadata\.annotations\[k8s\.v1\.cni\.cncf\.io\/networks\]\[0\]: Not found: "team-b\/net-claimed"/);
  t.match(text, /ResourceClaimTemplate net-claimed, which namespace team-b lacks: create it in namespace team-b/);
  t.same(denied.patch, []);
  t.same(
    denied.findings.map((f) => f.rule),
    ['claimTemplateExists'],
  );

  // The validating webhook denies it too.
  t.notOk(
    review(request(pod({ networks: 'claimed', namespace: 'team-b' }), { namespace: 'team-b' }), {
      ...context(
        nadLookup(nadObject('claimed', { namespace: 'team-b', resourceName: CLAIMED, annotations: { [TEMPLATE]: 'net-claimed' } })),
        { endpoint: 'validate' },
      ),
      dra: view,
    }).allowed,
  );

  // Templates that cannot be read, or are not read at all: a warning, never a denial.
  const unavailable: DraView = {
    classesFor: () => [],
    template: () => ({ status: 'unavailable', reason: 'ResourceClaimTemplates not read yet' }),
  };
  for (const [name, dra] of [
    ['unavailable', unavailable],
    ['not watched', 'none'],
  ] as const) {
    const { d, out } = mutate(pod({ networks: 'claimed' }) as Obj, dra);
    t.ok(d.allowed, name);
    t.equal(out.spec.resourceClaims.length, 1, `${name}: claims added all the same`);
    t.match(warningLines(d).join('\n'), /ResourceClaimTemplate default\/net-claimed unchecked/, name);
  }
});

t.test("a pod's own claim for the network (netattach.io/networkClaims)", async (t) => {
  const own = (annotation: string, extra: Obj = {}): Obj => {
    const p = pod({ networks: 'claimed, plugin', annotations: { [OWN]: annotation } }) as Obj;
    p.spec.resourceClaims = [{ name: 'gpu-nic', resourceClaimTemplateName: 'gpu-and-nic' }];
    p.spec.containers[0].resources = { claims: [{ name: 'gpu-nic' }] };
    Object.assign(p.spec, extra);
    return p;
  };
  await t.test('covers the selection: no claim added for it', async (t) => {
    const { d, out } = mutate(own('claimed=gpu-nic'));
    t.ok(d.allowed, d.errors.map(renderError).join('; '));
    t.same(out.spec.resourceClaims, [{ name: 'gpu-nic', resourceClaimTemplateName: 'gpu-and-nic' }]);
    t.same(out.spec.containers[0].resources.claims, [{ name: 'gpu-nic' }]);
    t.equal(out.spec.containers[0].resources.limits[PLUGIN], '1', 'the other network is served as before');
    assertIdempotent(t, out);
  });
  await t.test('a device-plugin network covered by an own claim gets no extended resource', async (t) => {
    const { d, out } = mutate(own('claimed=gpu-nic, default/plugin=gpu-nic'));
    t.ok(d.allowed);
    t.same(d.patch, [], 'nothing to add');
    t.notOk(out.spec.containers[0].resources.limits);
  });
  await t.test('covers one of two selections: the other gets a claim from the template', async (t) => {
    const p = own('claimed=gpu-nic');
    p.metadata.annotations['k8s.v1.cni.cncf.io/networks'] = 'claimed@a, claimed@b';
    const { d, out } = mutate(p);
    t.ok(d.allowed);
    t.same(
      out.spec.resourceClaims.map((c: Obj) => c.name),
      ['gpu-nic', 'net-claimed-1'],
    );
  });
  await t.test('naming a claim the pod lacks is denied: the network would get no device', async (t) => {
    const { d } = mutate(own('claimed=gpu'));
    t.notOk(d.allowed);
    t.equal(d.code, 422);
    t.match(
      renderError(d.errors[0]!),
      /metadata\.annotations\[netattach\.io\/networkClaims\]: Not found: "gpu": default\/claimed is said to use pod claim "gpu", but spec\.resourceClaims has no entry/,
    );
  });
  const bad: Array<[string, RegExp]> = [
    ['', /must hold 'network=claim' pairs/],
    ['claimed', /each item must be 'network=claim'/],
    ['claimed=Gpu_Nic', /each item must be 'network=claim'/],
    ['claimed=gpu-nic,', /each item must be 'network=claim'/],
    [`claimed=${'a'.repeat(64)}`, /each item must be 'network=claim'/],
  ];
  for (const [value, want] of bad) {
    await t.test(`malformed: ${JSON.stringify(value.slice(0, 20))}`, async (t) => {
      const { d } = mutate(own(value));
      t.notOk(d.allowed);
      t.match(d.errors.map(renderError).join('\n'), want);
    });
  }
  await t.test('pairs that cover nothing are warned about, not denied', async (t) => {
    const { d } = mutate(own('claimed=gpu-nic, claimed=gpu-nic, team/else=gpu-nic'));
    t.ok(d.allowed);
    const w = warningLines(d).join('\n');
    t.match(w, /default\/claimed=gpu-nic unused: more pairs than selections of default\/claimed/);
    t.match(w, /team\/else=gpu-nic unused: team\/else is not among the pod's networks/);
  });
  await t.test('a network without resourceName: Multus cannot match the device', async (t) => {
    const p = own('no-resource=gpu-nic');
    p.metadata.annotations['k8s.v1.cni.cncf.io/networks'] = 'no-resource';
    const { d } = mutate(p);
    t.ok(d.allowed);
    t.match(
      warningLines(d).join('\n'),
      /^default\/no-resource has no resourceName: Multus cannot tell which device of claim gpu-nic is its$/m,
    );
  });
});

t.test('pods without DRA networks are untouched by all this', async (t) => {
  const { d, out } = mutate(pod({ networks: 'plugin' }) as Obj);
  t.ok(d.allowed);
  t.notOk(out.spec.resourceClaims);
  t.same(out.spec.containers[0].resources, { requests: { [PLUGIN]: '1' }, limits: { [PLUGIN]: '1' } });
});

t.test('malformed spec.resourceClaims or container resources are reported, not crashed on', async (t) => {
  const p = pod({ networks: 'claimed' }) as Obj;
  p.spec.resourceClaims = 'x';
  const d = mutate(p).d;
  t.notOk(d.allowed);
  t.match(renderError(d.errors[0]!), /spec\.resourceClaims: Invalid value: "x": must be a list/);
  const q = pod({ networks: 'claimed', containers: [{ name: 'app', resources: { claims: 'x' } }] }) as Obj;
  t.match(renderError(mutate(q).d.errors[0]!), /spec\.containers\[0\]\.resources\.claims: Invalid value: "x": must be a list/);
});

const WORKLOAD = {
  kind: { group: 'apps', version: 'v1', kind: 'Deployment' },
  resource: { group: 'apps', version: 'v1', resource: 'deployments' },
};
const deployment = (template: Obj, namespace = 'default'): Obj => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: { name: 'd', namespace },
  spec: {
    selector: { matchLabels: { a: 'b' } },
    template: { metadata: { labels: { a: 'b' }, annotations: template.metadata.annotations }, spec: template.spec },
  },
});

t.test('workload templates: the same checks, a missing template only warned', async (t) => {
  const dep = deployment(pod({ networks: 'claimed', namespace: 'team-b' }) as Obj, 'team-b');
  const teamB = nadLookup(nadObject('claimed', { namespace: 'team-b', resourceName: CLAIMED, annotations: { [TEMPLATE]: 'net-claimed' } }));
  const d = review(request(dep, { namespace: 'team-b', ...WORKLOAD }), { ...context(teamB, { endpoint: 'validate' }), dra: view });
  t.ok(d.allowed);
  t.match(warningLines(d).join('\n'), /no ResourceClaimTemplate net-claimed in namespace team-b: its pods will be denied until it exists/);

  const p = pod({ networks: 'claimed', annotations: { [OWN]: 'claimed=nope' } }) as Obj;
  const bad = review(request(deployment(p), WORKLOAD), { ...context(nads, { endpoint: 'validate' }), dra: view });
  t.notOk(bad.allowed);
  t.match(renderError(bad.errors[0]!), /^spec\.template\.metadata\.annotations\[netattach\.io\/networkClaims\]: Not found: "nope"/);
});

t.test('NADs: the annotation is validated; device-path problems are warned about', async (t) => {
  const nadReview = (obj: Obj, dra?: DraView): Decision =>
    review(
      request(obj, {
        kind: { group: 'k8s.cni.cncf.io', version: 'v1', kind: 'NetworkAttachmentDefinition' },
        resource: { group: 'k8s.cni.cncf.io', version: 'v1', resource: 'network-attachment-definitions' },
      }),
      { ...context(nads, { endpoint: 'validate' }), ...(dra ? { dra } : {}) },
    );
  const bad = nadReview(nadObject('n', { resourceName: CLAIMED, annotations: { [TEMPLATE]: 'Not A Name' } }));
  t.notOk(bad.allowed);
  t.match(
    renderError(bad.errors[0]!),
    /metadata\.annotations\[netattach\.io\/resourceClaimTemplate\]: Invalid value: "Not A Name": not a valid ResourceClaimTemplate name/,
  );

  const noResource = nadReview(nadObject('n', { annotations: { [TEMPLATE]: 'net-claimed' } }));
  t.ok(noResource.allowed);
  t.match(warningLines(noResource).join('\n'), /no resourceName: Multus finds the claimed device by k8s\.v1\.cni\.cncf\.io\/resourceName/);

  const classes = new StaticDraView([
    { name: 'nic-old', extendedResourceName: PLUGIN, creationTimestamp: '2026-01-01T00:00:00Z' },
    { name: 'nic-new', extendedResourceName: PLUGIN, creationTimestamp: '2026-06-01T00:00:00Z' },
    { name: 'other', extendedResourceName: 'example.com/other' },
  ]);
  const ambiguous = nadReview(nadObject('n', { resourceName: PLUGIN }), classes);
  t.ok(ambiguous.allowed);
  t.match(
    warningLines(ambiguous).join('\n'),
    /^DeviceClasses nic-new, nic-old share extendedResourceName intel\.com\/sriov_a; the scheduler picks nic-new$/m,
  );
  t.same(nadReview(nadObject('n', { resourceName: 'example.com/other' }), classes).warnings, [], 'one class: nothing to say');

  const nowhere = nadReview(nadObject('n', { resourceName: CLAIMED, annotations: { [TEMPLATE]: 'missing' } }), view);
  t.match(warningLines(nowhere).join('\n'), /no namespace has ResourceClaimTemplate missing yet/);
});

// Issue 38, item 1: DRA as Multus's how-to writes it. The pod declares its own spec.resourceClaims
// (no netattach annotation), its template asks a DeviceClass for a device, and Multus matches the
// device's k8s.cni.cncf.io/resourceName attribute with the NAD's. netattach used to inject the
// NAD's extended resource all the same, which no device plugin advertises on a DRA-only node: the
// pod stayed Pending. The objects below are read by the production readers (deviceClassInfo,
// templateDevices), from manifests shaped as in the how-to (resource.k8s.io/v1).
const VF = 'intel.com/sriov_vf';
const DRIVER = 'sriovnetwork.k8snetworkplumbingwg.io';
const deviceClass = (name: string, spec: Obj): Obj => ({ apiVersion: 'resource.k8s.io/v1', kind: 'DeviceClass', metadata: { name }, spec });
const claimTemplate = (name: string, requests: Obj[]): Obj => ({
  apiVersion: 'resource.k8s.io/v1',
  kind: 'ResourceClaimTemplate',
  metadata: { name, namespace: 'default' },
  spec: { spec: { devices: { requests } } },
});
const cel = (expression: string): Obj[] => [{ cel: { expression } }];
const VF_ATTRIBUTE = `device.attributes["k8s.cni.cncf.io"].resourceName == "${VF}"`;
const multusClasses = [
  // The how-to's class: selects by driver alone (nothing netattach can match to a resourceName).
  deviceClass(DRIVER, { selectors: cel(`device.driver == '${DRIVER}'`) }),
  // The same class narrowed to the attribute Multus matches: certain.
  deviceClass('sriov-vf', { selectors: cel(`device.driver == '${DRIVER}' && ${VF_ATTRIBUTE}`) }),
  deviceClass('gpu', { selectors: cel("device.driver == 'gpu.example.com'") }),
  deviceClass('other-nic', { selectors: cel(`${VF_ATTRIBUTE.replace(VF, 'example.com/other')}`) }),
];
const multusTemplates = [
  claimTemplate('sriov-template', [{ name: 'vf', exactly: { deviceClassName: 'sriov-vf' } }]),
  claimTemplate('driver-only', [{ name: 'vf', exactly: { deviceClassName: DRIVER } }]),
  claimTemplate('request-selects', [{ name: 'vf', exactly: { deviceClassName: DRIVER, selectors: cel(VF_ATTRIBUTE) } }]),
  claimTemplate('first-available', [
    {
      name: 'vf',
      firstAvailable: [
        { name: 'a', deviceClassName: 'other-nic' },
        { name: 'b', deviceClassName: 'sriov-vf' },
      ],
    },
  ]),
  claimTemplate('gpu-and-vf', [
    { name: 'gpu', exactly: { deviceClassName: 'gpu' } },
    { name: 'vf', exactly: { deviceClassName: 'sriov-vf' } },
  ]),
  claimTemplate('other-nic', [{ name: 'nic', exactly: { deviceClassName: 'other-nic' } }]),
];
function multusView(extra: { ext?: boolean; templates?: boolean } = {}): StaticDraView {
  const classes = multusClasses.map((c) => deviceClassInfo(c as KubeObject)!);
  if (extra.ext) classes.push({ name: 'vf-extended', extendedResourceName: VF });
  const templates =
    extra.templates === false
      ? []
      : multusTemplates.map((o) => ({ namespace: 'default', name: o.metadata.name as string, devices: templateDevices(o) }));
  return new StaticDraView(classes, templates);
}
const multusNads = nadLookup(nadObject('sriov-net', { resourceName: VF }), nadObject('plugin', { resourceName: PLUGIN }));
/** The how-to's pod: the networks annotation, and its own claim referenced by the container. */
function multusPod(networks: string, claims: Obj[]): Obj {
  const p = pod({ networks }) as Obj;
  if (claims.length > 0) {
    p.spec.resourceClaims = claims;
    p.spec.containers[0].resources = { claims: claims.map((c) => ({ name: c.name })) };
  }
  return p;
}

t.test("a pod's own spec.resourceClaims without the annotation (Multus's DRA how-to)", async (t) => {
  const fromTemplate = (name: string, template: string): Obj => ({ name, resourceClaimTemplateName: template });
  type Case = {
    name: string;
    networks?: string;
    claims: Obj[];
    view?: DraView | 'none';
    /** The extended resources the patched pod's first container asks for (requests == limits). */
    resources: Obj | undefined;
    /** Every warning, in full; [] when none. */
    warnings: RegExp[];
    /** The device-plugin network's resource, when the pod selects it. */
    plugin?: string;
  };
  const injected = { [VF]: '1' };
  const unchecked = (claim: string, why: string, how = '') =>
    new RegExp(
      `^default/sriov-net: intel\\.com/sriov_vf added${how}; pod claim ${claim} may hold its device instead \\(${why}\\): if so, annotate netattach\\.io/networkClaims: sriov-net=${claim} \\(docs/dra\\.md\\)$`,
    );
  const cases: Case[] = [
    {
      name: 'the class selects by the attribute: no extended resource, nothing said',
      claims: [fromTemplate('sriov', 'sriov-template')],
      resources: undefined,
      warnings: [],
    },
    {
      name: "the request's own selector names the attribute",
      claims: [fromTemplate('sriov', 'request-selects')],
      resources: undefined,
      warnings: [],
    },
    {
      name: 'one firstAvailable alternative serving is enough',
      claims: [fromTemplate('sriov', 'first-available')],
      resources: undefined,
      warnings: [],
    },
    { name: 'a GPU+VF claim serves the network', claims: [fromTemplate('gpu-vf', 'gpu-and-vf')], resources: undefined, warnings: [] },
    {
      name: 'a class whose extendedResourceName is the resource (KEP-5004)',
      claims: [fromTemplate('sriov', 'ext')],
      view: new StaticDraView(
        [{ name: 'vf-extended', extendedResourceName: VF }],
        [
          {
            namespace: 'default',
            name: 'ext',
            devices: { requests: [{ name: 'vf', alternatives: [{ deviceClassName: 'vf-extended' }] }] },
          },
        ],
      ),
      resources: undefined,
      warnings: [],
    },
    {
      name: 'two selections, one claim serving: neither is injected',
      networks: 'sriov-net@a, sriov-net@b',
      claims: [fromTemplate('sriov', 'sriov-template')],
      resources: undefined,
      warnings: [],
    },
    {
      name: "the how-to's class, by driver alone: injected as before, warned with the opt-out",
      claims: [fromTemplate('sriov', 'driver-only')],
      resources: injected,
      warnings: [unchecked('sriov', 'no request of ResourceClaimTemplate driver-only names a DeviceClass known to select it')],
    },
    {
      name: 'a ResourceClaim by name: injected, warned',
      claims: [{ name: 'shared', resourceClaimName: 'shared-vf' }],
      resources: injected,
      warnings: [unchecked('shared', 'netattach does not read ResourceClaims')],
    },
    {
      name: 'a template not in the cache: injected, warned',
      claims: [fromTemplate('sriov', 'sriov-template')],
      view: multusView({ templates: false }),
      resources: injected,
      warnings: [unchecked('sriov', 'no ResourceClaimTemplate sriov-template in namespace default')],
    },
    {
      name: 'no DRA view (--no-dra): injected, warned',
      claims: [fromTemplate('sriov', 'sriov-template')],
      view: 'none',
      resources: injected,
      warnings: [unchecked('sriov', 'netattach does not read templates here')],
    },
    {
      name: 'a class serving the resource to the scheduler (KEP-5004): injected, warned of a second device',
      claims: [fromTemplate('sriov', 'driver-only')],
      view: multusView({ ext: true }),
      resources: { [VF]: '1' },
      warnings: [
        unchecked(
          'sriov',
          'no request of ResourceClaimTemplate driver-only names a DeviceClass known to select it',
          ' \\(DeviceClass vf-extended\\)',
        ),
      ],
    },
    {
      // The pod the dra-multus branch broke: a GPU claim unrelated to the network, an SR-IOV NAD
      // served by a device plugin. Not injecting would start it without its VF.
      name: 'a GPU claim (class by driver alone) next to a device-plugin NAD: injected, warned',
      claims: [fromTemplate('gpu', 'gpu-only')],
      view: new StaticDraView(
        multusClasses.map((c) => deviceClassInfo(c as KubeObject)!),
        [
          {
            namespace: 'default',
            name: 'gpu-only',
            devices: templateDevices(claimTemplate('gpu-only', [{ name: 'gpu', exactly: { deviceClassName: 'gpu' } }])),
          },
        ],
      ),
      resources: injected,
      warnings: [unchecked('gpu', 'no request of ResourceClaimTemplate gpu-only names a DeviceClass known to select it')],
    },
    {
      name: 'a claim that certainly holds other devices: injected as before, nothing said',
      claims: [fromTemplate('nic', 'other-nic')],
      resources: { [VF]: '1' },
      warnings: [],
    },
    { name: 'no claims: injected as before', claims: [], resources: { [VF]: '1' }, warnings: [] },
    {
      name: 'a claim serving one network leaves the other network injected',
      networks: 'sriov-net, plugin',
      claims: [fromTemplate('sriov', 'sriov-template')],
      resources: undefined,
      plugin: '1',
      warnings: [],
    },
  ];
  for (const c of cases) {
    await t.test(c.name, async (t) => {
      const p = multusPod(c.networks ?? 'sriov-net', c.claims);
      const context_: AdmissionContext = { ...context(multusNads), ...(c.view === 'none' ? {} : { dra: c.view ?? multusView() }) };
      const d = review(request(p), context_);
      t.ok(d.allowed, d.errors.map(renderError).join('; '));
      t.same(d.errors, []);
      const out = applied(p, d.patch) as Obj;
      const { requests, limits } = out.spec.containers[0].resources ?? {};
      t.same(requests?.[VF] === undefined ? undefined : { [VF]: requests[VF] }, c.resources, 'requests');
      t.same(limits?.[VF] === undefined ? undefined : { [VF]: limits[VF] }, c.resources, 'limits');
      if (c.plugin) t.same([requests?.[PLUGIN], limits?.[PLUGIN]], [c.plugin, c.plugin], 'the device-plugin network');
      t.same(out.spec.resourceClaims, p.spec.resourceClaims, "the claims are the user's, untouched");
      const texts = d.warnings.map((w) => ('note' in w ? w.note.text : renderError(w.field)));
      t.equal(texts.length, c.warnings.length, texts.join('\n'));
      c.warnings.forEach((w, i) => t.match(texts[i], w));
      for (const line of warningLines(d)) t.ok(line.length <= MAX_WARNING_LONG, `not cut: ${line}`);
      const again = review(request(out), context_);
      t.same(again.patch, [], 'reinvocation yields no patch');
    });
  }
});

t.test("workload templates with the how-to's own claims: warned at apply time when netattach cannot tell", async (t) => {
  const cases: Array<{ name: string; template: string; warning?: RegExp }> = [
    { name: 'a class selecting the attribute: nothing to say', template: 'sriov-template' },
    {
      name: 'a class selecting by driver alone',
      template: 'driver-only',
      warning:
        /^default\/sriov-net: intel\.com\/sriov_vf added; pod claim sriov may hold its device instead \(no request of ResourceClaimTemplate driver-only/m,
    },
  ];
  for (const c of cases) {
    const dep = deployment(multusPod('sriov-net', [{ name: 'sriov', resourceClaimTemplateName: c.template }]));
    const d = review(request(dep, WORKLOAD), { ...context(multusNads, { endpoint: 'validate' }), dra: multusView() });
    t.ok(d.allowed, c.name);
    if (c.warning) t.match(warningLines(d).join('\n'), c.warning, c.name);
    else t.same(d.warnings, [], c.name);
  }
});
