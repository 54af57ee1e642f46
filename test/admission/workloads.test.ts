import t from 'tap';
import { renderError } from '../../src/field/index.js';
import { plan, review, type AdmissionRequest } from '../../src/admission/index.js';
import type { PolicyEvaluator, PolicyInput } from '../../src/policy/types.js';
import { chain, context, nadLookup, nadObject, NETWORKS, request, warningLines } from './fixtures.js';

const nads = nadLookup(
  nadObject('sriov-a', {
    namespace: 'apps',
    resourceName: 'intel.com/sriov_a',
    config: chain({ type: 'ipvlan', ipam: { type: 'static', addresses: [{ address: '192.0.2.1/24' }] } }),
  }),
);

const template = (networks: string) => ({ metadata: { annotations: { [NETWORKS]: networks } }, spec: { containers: [{ name: 'c' }] } });

interface Kind {
  group: string;
  version: string;
  kind: string;
  resource: string;
  wrap: (tpl: object) => object;
  base: string;
}
const KINDS: Kind[] = [
  ...(['Deployment', 'ReplicaSet', 'StatefulSet', 'DaemonSet'] as const).map((kind) => ({
    group: 'apps',
    version: 'v1',
    kind,
    resource: `${kind.toLowerCase()}s`,
    wrap: (tpl: object) => ({ spec: { template: tpl } }),
    base: 'spec.template',
  })),
  { group: 'batch', version: 'v1', kind: 'Job', resource: 'jobs', wrap: (tpl) => ({ spec: { template: tpl } }), base: 'spec.template' },
  {
    group: 'batch',
    version: 'v1',
    kind: 'CronJob',
    resource: 'cronjobs',
    wrap: (tpl) => ({ spec: { schedule: '* * * * *', jobTemplate: { spec: { template: tpl } } } }),
    base: 'spec.jobTemplate.spec.template',
  },
  {
    group: '',
    version: 'v1',
    kind: 'ReplicationController',
    resource: 'replicationcontrollers',
    wrap: (tpl) => ({ spec: { template: tpl } }),
    base: 'spec.template',
  },
  { group: '', version: 'v1', kind: 'PodTemplate', resource: 'podtemplates', wrap: (tpl) => ({ template: tpl }), base: 'template' },
];

function workloadRequest(
  k: Kind,
  networks: string,
  opts: { operation?: 'CREATE' | 'UPDATE'; old?: string; subResource?: string } = {},
): AdmissionRequest {
  const object = {
    apiVersion: k.group ? `${k.group}/${k.version}` : k.version,
    kind: k.kind,
    metadata: { name: 'w', namespace: 'apps' },
    ...k.wrap(template(networks)),
  };
  const oldObject = opts.old !== undefined ? { ...object, ...k.wrap(template(opts.old)) } : undefined;
  return request(object, {
    namespace: 'apps',
    operation: opts.operation ?? 'CREATE',
    resource: { group: k.group, version: k.version, resource: k.resource },
    kind: { group: k.group, version: k.version, kind: k.kind },
    ...(oldObject ? { oldObject } : {}),
    ...(opts.subResource ? { subResource: opts.subResource } : {}),
  });
}

for (const k of KINDS) {
  t.test(`${k.kind}: checks the pod template with paths into it`, async (t) => {
    const ann = `${k.base}.metadata.annotations[${NETWORKS}]`;
    let seen: PolicyInput | undefined;
    const spy: PolicyEvaluator = {
      evaluate: (input) => {
        seen = input;
        return { findings: input.builtin, addresses: [] };
      },
    };
    for (const endpoint of ['mutate', 'validate'] as const) {
      const d = review(
        workloadRequest(k, '[{"name":"sriov-a","mac":"02:00:00:00:00:01"},{"name":"nope"},{"name":"x","interface":"a b"}]'),
        context(nads, { endpoint, policy: spy }),
      );
      t.notOk(d.allowed);
      const errors = d.errors.map(renderError);
      t.equal(errors.length, 4, JSON.stringify(errors));
      t.ok(errors[0]!.startsWith(`${ann}[2].interface: Invalid value: "a b": `), 'parser error first, path into the template');
      t.same(
        errors.slice(1),
        [
          `${ann}[0].mac: Forbidden: apps/sriov-a would ignore it: no plugin of its chain (ipvlan) reads a MAC (MAC= in CNI_ARGS, or runtimeConfig "mac" where the capability is declared)`,
          `${ann}[1]: Not found: "apps/nope": no such NetworkAttachmentDefinition`,
          `${ann}[2]: Not found: "apps/x": no such NetworkAttachmentDefinition`,
        ],
        "field paths point into the template; unqualified names resolve in the object's namespace",
      );
      t.same(d.patch, [], 'templates are never mutated');
      t.equal(seen?.template, true);
      t.equal(seen?.annotationPath, ann);
      t.equal(seen?.namespace, 'apps');
    }
    const ok = review(workloadRequest(k, 'sriov-a, sriov-a'), context(nads));
    t.ok(ok.allowed);
    t.same(ok.patch, [], 'resources are injected at the Pod, not the template');
    t.same(plan(workloadRequest(k, 'sriov-a, other/b'), context(nads).config).nadRefs, [
      { namespace: 'apps', name: 'sriov-a' },
      { namespace: 'other', name: 'b' },
    ]);
  });
}

t.test('template UPDATE: a changed annotation is judged; an unchanged one only warns', async (t) => {
  const deploy = KINDS[0]!;
  const changed = review(workloadRequest(deploy, 'nope', { operation: 'UPDATE', old: 'sriov-a' }), context(nads));
  t.notOk(changed.allowed, 'changing the networks of future pods is fine, but they must exist');
  t.equal(changed.code, 403);
  const fixed = review(workloadRequest(deploy, 'sriov-a', { operation: 'UPDATE', old: 'nope' }), context(nads));
  t.ok(fixed.allowed, 'changing the annotation is allowed');
  const untouched = review(workloadRequest(deploy, 'nope,', { operation: 'UPDATE', old: 'nope,' }), context(nads));
  t.ok(untouched.allowed, 'an unrelated edit is not blocked by problems it did not introduce');
  t.equal(untouched.warnings.length, 2);
  t.match(warningLines(untouched), [/\[1\]: Invalid value: "": empty list item/, /\[0\]: Not found: "apps\/nope"/]);
});

t.test('subresources and objects being deleted pass', async (t) => {
  const deploy = KINDS[0]!;
  t.ok(review(workloadRequest(deploy, 'nope', { subResource: 'scale' }), context(nads)).allowed);
  const r = workloadRequest(deploy, 'nope', { operation: 'UPDATE', old: 'nope' });
  (r.object as { metadata: Record<string, unknown> }).metadata['deletionTimestamp'] = '2024-01-01T00:00:00Z';
  t.ok(review(r, context(nads)).allowed);
});

t.test('a workload without a template or annotations is allowed', async (t) => {
  const r = request(
    { spec: {} },
    { resource: { group: 'apps', version: 'v1', resource: 'deployments' }, kind: { group: 'apps', version: 'v1', kind: 'Deployment' } },
  );
  t.ok(review(r, context(nads)).allowed);
  const weird = request(
    { spec: { template: { metadata: { annotations: { [NETWORKS]: ['x'] } } } } },
    { resource: { group: 'apps', version: 'v1', resource: 'deployments' }, kind: { group: 'apps', version: 'v1', kind: 'Deployment' } },
  );
  const d = review(weird, context(nads));
  t.notOk(d.allowed);
  t.same(d.errors.map(renderError), [`spec.template.metadata.annotations[${NETWORKS}]: Invalid value: ["x"]: must be a string`]);
});

t.test('unrelated resources are allowed without a patch', async (t) => {
  const r = request(
    { metadata: { annotations: { [NETWORKS]: 'nope' } } },
    { resource: { group: '', version: 'v1', resource: 'services' }, kind: { group: '', version: 'v1', kind: 'Service' } },
  );
  const d = review(r, context(nads));
  t.ok(d.allowed);
  t.same(d.patch, []);
});

t.test('template requests the core refuses or skips', async (t) => {
  const deploy = KINDS[0]!;
  const base = workloadRequest(deploy, 'nope');
  const none = review({ ...base, object: null }, context(nads));
  t.equal(none.code, 422);
  t.same(none.errors.map(renderError), ['object: Required value: the request carries no object']);
  const deleted = review({ ...base, operation: 'DELETE', object: null, oldObject: base.object }, context(nads));
  t.same(deleted, { allowed: true, errors: [], warnings: [], audits: [], findings: [], patch: [], addresses: [] });
  // Being deleted and changing the networks: still allowed (only finalizers are expected to change).
  const r = workloadRequest(deploy, 'nope', { operation: 'UPDATE', old: 'sriov-a' });
  (r.object as { metadata: Record<string, unknown> }).metadata['deletionTimestamp'] = '2024-01-01T00:00:00Z';
  t.same(review(r, context(nads)), { allowed: true, errors: [], warnings: [], audits: [], findings: [], patch: [], addresses: [] });
  // An oldObject on CREATE (not sent by the apiserver) does not make the check warn-only.
  const created = review(workloadRequest(deploy, 'nope', { old: 'nope' }), context(nads));
  t.equal(created.code, 403);
  t.same(created.errors.map(renderError), [
    `spec.template.metadata.annotations[${NETWORKS}][0]: Not found: "apps/nope": no such NetworkAttachmentDefinition`,
  ]);
});

t.test('template UPDATE: device-plan errors of an unchanged template only warn', async (t) => {
  const deploy = KINDS[0]!;
  const withClaims = (r: AdmissionRequest) => {
    for (const o of [r.object, r.oldObject]) {
      if (o)
        (o as { spec: { template: { metadata: { annotations: Record<string, string> } } } }).spec.template.metadata.annotations[
          'netattach.io/networkClaims'
        ] = 'sriov-a=c';
    }
    return r;
  };
  const unchanged = review(withClaims(workloadRequest(deploy, 'sriov-a', { operation: 'UPDATE', old: 'sriov-a' })), context(nads));
  t.ok(unchanged.allowed);
  t.same(unchanged.errors, []);
  const missing = `spec.template.metadata.annotations[netattach.io/networkClaims]: Not found: "c": apps/sriov-a is said to use pod claim "c", but spec.resourceClaims has no entry of that name: the network would get no device`;
  t.equal(unchanged.warnings.length, 1);
  t.ok(missing.startsWith(warningLines(unchanged)[0]!.replace(/\.\.\.$/, '')), String(warningLines(unchanged)[0]));
  const created = review(withClaims(workloadRequest(deploy, 'sriov-a')), context(nads));
  t.equal(created.code, 422);
  t.same(created.errors.map(renderError), [missing]);
});
