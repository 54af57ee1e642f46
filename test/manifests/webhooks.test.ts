// The webhook configurations: the apiserver-facing invariants, and which requests their
// matchConditions send (evaluated with a CEL interpreter, including objects with fields absent).
import t from 'tap';
import { BASE, kustomizeObjects, find, type Obj } from './load.js';
import { evaluate, type AdmissionInput } from './cel.js';

const objects = kustomizeObjects(BASE);
const mutating = find(objects, 'MutatingWebhookConfiguration', 'netattach');
const validating = find(objects, 'ValidatingWebhookConfiguration', 'netattach');
const service = find(objects, 'Service', 'netattach');
const webhooks: Array<{ kind: string; hook: Obj }> = [
  ...(mutating.webhooks as Obj[]).map((hook) => ({ kind: 'mutating', hook })),
  ...(validating.webhooks as Obj[]).map((hook) => ({ kind: 'validating', hook })),
];
const hook = (name: string): Obj => {
  const w = webhooks.find((x) => x.hook.name === name);
  if (!w) throw new Error(`no webhook ${name}`);
  return w.hook;
};

const NETWORKS = 'k8s.v1.cni.cncf.io/networks';
const DEFAULT_NETWORK = 'v1.multus-cni.io/default-network';

t.test('the webhooks are the ones design.md names', async (t) => {
  t.same(
    webhooks.map((w) => `${w.kind} ${w.hook.name}`),
    [
      'mutating pods.mutate.netattach.io',
      'validating pods.netattach.io',
      'validating workloads.netattach.io',
      'validating nads.netattach.io',
      'validating kubevirt.netattach.io',
    ],
  );
});

t.test('every webhook meets the apiserver contract and the good practices', async (t) => {
  for (const { kind, hook: w } of webhooks) {
    t.test(w.name, async (t) => {
      // Only the pod validation writes (address claims), and never for a dry run.
      t.equal(w.sideEffects, w.name === 'pods.netattach.io' && kind === 'validating' ? 'NoneOnDryRun' : 'None');
      t.same(w.admissionReviewVersions, ['v1']);
      // The README promises these exactly (3 s mutating, 5 s validating): short, so a slow replica
      // fails fast, and the mutating one shorter because the apiserver may call it twice. Broken-build
      // recipe: `timeoutSeconds: 4` in manifests/base/mutatingwebhookconfiguration.yaml fails this.
      t.equal(w.timeoutSeconds, kind === 'mutating' ? 3 : 5, `timeoutSeconds of the ${kind} webhook`);
      t.ok(['Fail', 'Ignore'].includes(w.failurePolicy), 'failurePolicy is set explicitly');
      t.equal(w.matchPolicy, 'Equivalent');
      t.same(w.clientConfig.service, {
        name: service.metadata.name,
        namespace: service.metadata.namespace,
        path: kind === 'mutating' ? '/mutate' : '/validate',
        port: service.spec.ports[0].port,
      });
      t.notOk(w.clientConfig.url, 'reached through the Service, not a URL');
      const byName = (w.namespaceSelector.matchExpressions as Obj[]).find((e) => e.key === 'kubernetes.io/metadata.name');
      t.equal(byName?.operator, 'NotIn');
      t.same([...(byName?.values ?? [])].sort(), ['kube-system', 'netattach-system']);
      t.ok(
        (w.namespaceSelector.matchExpressions as Obj[]).some(
          (e) => e.key === 'netattach.io/admission' && e.operator === 'NotIn' && e.values.includes('disabled'),
        ),
        'namespaces can opt out with netattach.io/admission=disabled',
      );
      t.notOk(w.objectSelector, 'no objectSelector: a pod cannot opt itself out');
      for (const rule of w.rules as Obj[]) {
        t.notOk([...rule.apiGroups, ...rule.apiVersions, ...rule.resources, ...rule.operations].includes('*'), 'no wildcards in rules');
        t.equal(rule.scope, 'Namespaced');
      }
    });
  }
});

t.test('mutation runs again after later mutations', async (t) => {
  t.equal(hook('pods.mutate.netattach.io').reinvocationPolicy, 'IfNeeded');
  t.same(hook('pods.mutate.netattach.io').rules, [
    { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE'], resources: ['pods'], scope: 'Namespaced' },
  ]);
});

t.test('failurePolicy: Fail where admitting unchecked does harm, Ignore for template feedback', async (t) => {
  t.equal(hook('pods.mutate.netattach.io').failurePolicy, 'Fail');
  t.equal(hook('pods.netattach.io').failurePolicy, 'Fail');
  t.equal(hook('nads.netattach.io').failurePolicy, 'Fail');
  t.equal(hook('workloads.netattach.io').failurePolicy, 'Ignore');
});

t.test('rules cover the resources and operations design.md lists', async (t) => {
  const covered = (name: string): string[] =>
    (hook(name).rules as Obj[]).flatMap((r) =>
      (r.resources as string[]).flatMap((res) =>
        (r.apiGroups as string[]).map((g) => `${g}/${r.apiVersions.join(',')}/${res} ${r.operations.join(',')}`),
      ),
    );
  t.same(covered('pods.netattach.io'), ['/v1/pods CREATE,UPDATE']);
  t.same(covered('workloads.netattach.io').sort(), [
    '/v1/podtemplates CREATE,UPDATE',
    '/v1/replicationcontrollers CREATE,UPDATE',
    'apps/v1/daemonsets CREATE,UPDATE',
    'apps/v1/deployments CREATE,UPDATE',
    'apps/v1/replicasets CREATE,UPDATE',
    'apps/v1/statefulsets CREATE,UPDATE',
    'batch/v1/cronjobs CREATE,UPDATE',
    'batch/v1/jobs CREATE,UPDATE',
  ]);
  t.same(covered('nads.netattach.io'), ['k8s.cni.cncf.io/v1/network-attachment-definitions CREATE,UPDATE,DELETE']);
});

t.test('pod and workload webhooks are called only for objects with networks annotations', async (t) => {
  t.ok(hook('pods.mutate.netattach.io').matchConditions?.length > 0);
  t.ok(hook('pods.netattach.io').matchConditions?.length > 0);
  t.ok(hook('workloads.netattach.io').matchConditions?.length > 0);
  for (const { hook: w } of webhooks) {
    for (const c of (w.matchConditions ?? []) as Obj[])
      t.match(c.name, /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, `${w.name}: condition name ${c.name} is a DNS label`);
  }
});

// --- matchConditions, evaluated -------------------------------------------------------------

const GVR: Record<string, { group: string; version: string }> = {
  pods: { group: '', version: 'v1' },
  podtemplates: { group: '', version: 'v1' },
  replicationcontrollers: { group: '', version: 'v1' },
  deployments: { group: 'apps', version: 'v1' },
  replicasets: { group: 'apps', version: 'v1' },
  statefulsets: { group: 'apps', version: 'v1' },
  daemonsets: { group: 'apps', version: 'v1' },
  jobs: { group: 'batch', version: 'v1' },
  cronjobs: { group: 'batch', version: 'v1' },
};

function input(resource: string, operation: string, object: unknown, oldObject: unknown = null): AdmissionInput {
  const gv = GVR[resource];
  if (!gv) throw new Error(resource);
  return { request: { operation, resource: { ...gv, resource } }, object, oldObject };
}

type Annotations = Record<string, string> | undefined;
const meta = (annotations: Annotations): Obj => (annotations ? { name: 'x', annotations } : { name: 'x' });
const pod = (annotations: Annotations): Obj => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: meta(annotations),
  spec: { containers: [{ name: 'c', image: 'i' }] },
});

t.test('pods.mutate.netattach.io sends new pods that carry a networks annotation', async (t) => {
  const conditions = hook('pods.mutate.netattach.io').matchConditions;
  const cases: Array<[string, Annotations, string]> = [
    ['no annotations at all', undefined, 'skip'],
    ['other annotations only', { 'example.com/x': 'y' }, 'skip'],
    ['networks', { [NETWORKS]: 'sriov-a' }, 'call'],
    ['default network only', { [DEFAULT_NETWORK]: 'kube-system/calico' }, 'call'],
    ['networks with an empty value', { [NETWORKS]: '' }, 'call'],
  ];
  for (const [name, annotations, want] of cases) t.same(evaluate(conditions, input('pods', 'CREATE', pod(annotations))), want, name);
});

t.test('pods.netattach.io sends a CREATE with networks and an UPDATE that changes them', async (t) => {
  const conditions = hook('pods.netattach.io').matchConditions;
  const cases: Array<[string, string, Annotations, Annotations | 'none', string]> = [
    ['create without annotations', 'CREATE', undefined, 'none', 'skip'],
    ['create with networks', 'CREATE', { [NETWORKS]: 'a' }, 'none', 'call'],
    ['create with the default network', 'CREATE', { [DEFAULT_NETWORK]: 'd' }, 'none', 'call'],
    ['update, networks unchanged (finalizers, labels)', 'UPDATE', { [NETWORKS]: 'a', other: '1' }, { [NETWORKS]: 'a' }, 'skip'],
    ['update, networks edited', 'UPDATE', { [NETWORKS]: 'b' }, { [NETWORKS]: 'a' }, 'call'],
    ['update, networks removed', 'UPDATE', { other: '1' }, { [NETWORKS]: 'a' }, 'call'],
    ['update, every annotation removed', 'UPDATE', undefined, { [NETWORKS]: 'a' }, 'call'],
    ['update, default network removed', 'UPDATE', { [NETWORKS]: 'a' }, { [NETWORKS]: 'a', [DEFAULT_NETWORK]: 'd' }, 'call'],
    ['update, networks added', 'UPDATE', { [NETWORKS]: 'a' }, undefined, 'call'],
    ['update, networks set to empty', 'UPDATE', { [NETWORKS]: '' }, { [NETWORKS]: 'a' }, 'call'],
    ['update, no networks before or after', 'UPDATE', { other: '2' }, { other: '1' }, 'skip'],
  ];
  for (const [name, op, now, before, want] of cases) {
    t.same(evaluate(conditions, input('pods', op, pod(now), before === 'none' ? null : pod(before))), want, name);
  }
});

// Where each kind keeps its pod template's metadata.
function workload(resource: string, templateMeta: Obj | undefined): Obj {
  const template = templateMeta ? { metadata: templateMeta, spec: { containers: [] } } : undefined;
  switch (resource) {
    case 'cronjobs':
      return {
        metadata: meta({ [NETWORKS]: 'on-the-cronjob-itself' }),
        spec: { schedule: '* * * * *', jobTemplate: { spec: template ? { template } : {} } },
      };
    case 'podtemplates':
      return template ? { metadata: meta(undefined), template } : { metadata: meta(undefined) };
    default:
      return { metadata: meta({ [NETWORKS]: 'on-the-workload-itself' }), spec: template ? { replicas: 1, template } : { replicas: 1 } };
  }
}

t.test('workloads.netattach.io looks at the pod template of every kind it covers', async (t) => {
  const conditions = hook('workloads.netattach.io').matchConditions;
  for (const resource of Object.keys(GVR).filter((r) => r !== 'pods')) {
    t.test(resource, async (t) => {
      const cases: Array<[string, string, Obj | undefined, Obj | undefined | 'none', string]> = [
        ['create, template with networks', 'CREATE', meta({ [NETWORKS]: 'a' }), 'none', 'call'],
        ['create, template with the default network', 'CREATE', meta({ [DEFAULT_NETWORK]: 'd' }), 'none', 'call'],
        ['create, template without annotations (only the object has them)', 'CREATE', meta(undefined), 'none', 'skip'],
        ['create, template without metadata', 'CREATE', {}, 'none', 'skip'],
        ['create, no template', 'CREATE', undefined, 'none', 'skip'],
        ['update, template networks unchanged (scaling)', 'UPDATE', meta({ [NETWORKS]: 'a' }), meta({ [NETWORKS]: 'a' }), 'skip'],
        ['update, template networks edited', 'UPDATE', meta({ [NETWORKS]: 'b' }), meta({ [NETWORKS]: 'a' }), 'call'],
        ['update, template networks removed', 'UPDATE', meta(undefined), meta({ [NETWORKS]: 'a' }), 'call'],
        ['update, template removed', 'UPDATE', undefined, meta({ [NETWORKS]: 'a' }), 'call'],
        ['update, template networks added', 'UPDATE', meta({ [NETWORKS]: 'a' }), undefined, 'call'],
        ['update, no networks before or after', 'UPDATE', meta({ other: 'x' }), meta(undefined), 'skip'],
      ];
      for (const [name, op, now, before, want] of cases) {
        const old = before === 'none' ? null : workload(resource, before);
        t.same(evaluate(conditions, input(resource, op, workload(resource, now), old)), want, name);
      }
    });
  }
});

t.test('every condition evaluates without error on every covered resource, also on sparse objects', async (t) => {
  const sparse: unknown[] = [
    { metadata: {} },
    { metadata: { annotations: {} }, spec: {} },
    { metadata: {}, spec: { template: {} } },
    { metadata: {}, spec: { jobTemplate: {} } },
    { metadata: {}, template: {} },
  ];
  for (const { hook: w } of webhooks) {
    const resources = (w.rules as Obj[]).flatMap((r) => r.resources as string[]).filter((r) => GVR[r]);
    for (const resource of resources) {
      for (const object of sparse) {
        for (const [op, old] of [
          ['CREATE', null],
          ['UPDATE', object],
        ] as const) {
          const outcome = evaluate(w.matchConditions ?? [], input(resource, op, object, old));
          t.ok(
            outcome === 'call' || outcome === 'skip',
            `${w.name} ${op} ${resource} ${JSON.stringify(object)}: ${JSON.stringify(outcome)}`,
          );
        }
      }
    }
  }
});

t.test('kubevirt.netattach.io fails open and sends only VMs with a multus network or a binding plugin', async (t) => {
  const w = hook('kubevirt.netattach.io');
  t.equal(w.failurePolicy, 'Ignore', 'the launcher pod is where the Pod webhook enforces');
  t.equal(w.sideEffects, 'None');
  const kv = (resource: string, group: string, version: string, object: unknown, operation = 'CREATE'): AdmissionInput => ({
    request: { operation, resource: { group, version, resource } },
    object,
    oldObject: operation === 'UPDATE' ? object : null,
  });
  const spec = (networks: unknown, interfaces?: unknown) => ({
    ...(networks === undefined ? {} : { networks }),
    ...(interfaces === undefined ? {} : { domain: { devices: { interfaces } } }),
  });
  const shapes: Array<[string, string, string, (s: object) => object]> = [
    ['virtualmachineinstances', 'kubevirt.io', 'v1', (s) => ({ metadata: {}, spec: s })],
    ['virtualmachines', 'kubevirt.io', 'v1', (s) => ({ metadata: {}, spec: { template: { spec: s } } })],
    ['virtualmachineinstancereplicasets', 'kubevirt.io', 'v1', (s) => ({ metadata: {}, spec: { template: { spec: s } } })],
    [
      'virtualmachinepools',
      'pool.kubevirt.io',
      'v1alpha1',
      (s) => ({ metadata: {}, spec: { virtualMachineTemplate: { spec: { template: { spec: s } } } } }),
    ],
  ];
  for (const [resource, group, version, wrap] of shapes) {
    const cases: Array<[string, unknown, string, unknown?]> = [
      [
        'a secondary multus network',
        [
          { name: 'd', pod: {} },
          { name: 'b', multus: { networkName: 'blue' } },
        ],
        'call',
      ],
      ['a multus default network', [{ name: 'd', multus: { networkName: 'x', default: true } }], 'call'],
      ['only the pod network', [{ name: 'd', pod: {} }], 'skip'],
      ['no networks', undefined, 'skip'],
      ['empty networks', [], 'skip'],
      // KubeVirt adds a registered binding plugin's NAD to the launcher pod (src/kubevirt/render.ts).
      ['the pod network through a binding plugin', [{ name: 'd', pod: {} }], 'call', [{ name: 'd', binding: { name: 'passt' } }]],
      ['the pod network, interfaces without a binding', [{ name: 'd', pod: {} }], 'skip', [{ name: 'd', masquerade: {} }]],
      ['no interfaces list', [{ name: 'd', pod: {} }], 'skip', null],
    ];
    for (const [name, networks, want, interfaces] of cases) {
      for (const op of ['CREATE', 'UPDATE']) {
        const object = wrap(spec(networks, interfaces === null ? undefined : interfaces));
        t.same(evaluate(w.matchConditions, kv(resource, group, version, object, op)), want, `${resource} ${op}: ${name}`);
      }
    }
    for (const sparse of [
      { metadata: {} },
      { metadata: {}, spec: {} },
      { metadata: {}, spec: { template: {} } },
      { metadata: {}, spec: { virtualMachineTemplate: {} } },
    ]) {
      t.equal(evaluate(w.matchConditions, kv(resource, group, version, sparse)), 'skip', `${resource} sparse ${JSON.stringify(sparse)}`);
    }
  }
  const covered = (w.rules as Obj[]).flatMap((r) => r.resources as string[]).sort();
  t.same(covered, shapes.map((s) => s[0]).sort(), 'every VM resource the core judges (src/kubevirt/render.ts VM_RESOURCES)');
});
