import t from 'tap';
import { renderError } from '../../src/field/index.js';
import { review, toResponse, type AdmissionRequest } from '../../src/admission/index.js';
import { cniWith, context, nadLookup, nadObject, request, warningLines } from './fixtures.js';

const NAD_RESOURCE = { group: 'k8s.cni.cncf.io', version: 'v1', resource: 'network-attachment-definitions' };
const NAD_KIND = { group: 'k8s.cni.cncf.io', version: 'v1', kind: 'NetworkAttachmentDefinition' };
const nadRequest = (
  object: unknown,
  operation: AdmissionRequest['operation'] = 'CREATE',
  oldObject?: unknown,
  name = 'net-a',
): AdmissionRequest => ({
  ...request(object, { operation, resource: NAD_RESOURCE, kind: NAD_KIND, ...(oldObject !== undefined ? { oldObject } : {}) }),
  name,
});
const none = nadLookup();

t.test('NAD CREATE/UPDATE is validated by src/nads: errors deny with 422', async (t) => {
  const good = nadObject('net-a', { resourceName: 'intel.com/sriov', config: cniWith('mac') });
  for (const endpoint of ['mutate', 'validate'] as const) {
    t.ok(review(nadRequest(good), context(none, { endpoint })).allowed, 'a good NAD');
  }
  const bad = nadObject('net-a', { config: '{"cniVersion":"1.0.0","plugins":[{}]', resourceName: 'intel.com/a,' });
  const d = review(nadRequest(bad), context(none));
  t.notOk(d.allowed);
  t.equal(d.code, 422);
  const rendered = d.errors.map(renderError);
  t.ok(
    rendered.some((e) => e.startsWith('spec.config: ')),
    JSON.stringify(rendered),
  );
  t.ok(
    rendered.some((e) => e.startsWith('metadata.annotations[k8s.v1.cni.cncf.io/resourceName]')),
    JSON.stringify(rendered),
  );
  const response = toResponse('admission.k8s.io/v1', 'u', d, 'validate').response!;
  t.equal(response.status?.reason, 'Invalid');
  t.same(d.patch, []);
});

t.test('NAD UPDATE keeps problems the object already had as warnings', async (t) => {
  const old = nadObject('net-a', { resourceName: 'not a resource' });
  const updated = { ...old, metadata: { ...(old['metadata'] as object), labels: { a: 'b' } } };
  const d = review(nadRequest(updated, 'UPDATE', old), context(none));
  t.ok(d.allowed);
  t.ok(
    warningLines(d).some((w) => w.includes('resourceName')),
    JSON.stringify(d.warnings),
  );
  t.ok(warningLines(d).every((w) => w.length <= 256));
});

t.test('NAD UPDATE: an error the object already had is a warning; the same object created is denied', async (t) => {
  const old = nadObject('net-a', { config: '{"cniVersion":"1.0.0","plugins":[{}]' });
  const updated = { ...old, metadata: { ...(old['metadata'] as object), labels: { a: 'b' } } };
  const created = review(nadRequest(updated), context(none));
  t.notOk(created.allowed, 'created: denied');
  t.ok(created.errors.map(renderError).some((e) => e.startsWith('spec.config: ')));
  const kept = review(nadRequest(updated, 'UPDATE', old), context(none));
  t.ok(kept.allowed, JSON.stringify(kept.errors.map(renderError)));
  t.ok(
    kept.warnings.some(
      (w) => 'field' in w && w.field.path === 'spec.config' && w.field.reason.endsWith('(already present before this update)'),
    ),
    JSON.stringify(kept.warnings),
  );
  // An UPDATE that brings the error in is denied.
  const clean = nadObject('net-a');
  t.notOk(review(nadRequest(updated, 'UPDATE', clean), context(none)).allowed, 'an error brought in by the update');
});

t.test('NAD DELETE is allowed; a NAD in use warns with some pods and the count', async (t) => {
  const old = nadObject('net-a');
  const cases: Array<[string[], string[]]> = [
    [[], []],
    [['default/p1'], ['default/net-a is still used by 1 pod (default/p1); new pods naming it will fail']],
    [
      ['default/p1', 'default/p2', 'default/p3', 'default/p4', 'default/p5'],
      ['default/net-a is still used by 5 pods (default/p1, default/p2, default/p3 and 2 more); new pods naming it will fail'],
    ],
  ];
  for (const [pods, warnings] of cases) {
    let asked = '';
    const d = review(
      nadRequest(null, 'DELETE', old),
      context(none, {
        podsUsingNad: (ns, name) => {
          asked = `${ns}/${name}`;
          return pods;
        },
      }),
    );
    t.ok(d.allowed);
    t.equal(asked, 'default/net-a');
    t.same(warningLines(d), warnings);
  }
  t.ok(review(nadRequest(null, 'DELETE', old), context(none)).allowed, 'without pod knowledge: allowed silently');
});

t.test('a NAD request without an object is a field error', async (t) => {
  const d = review(nadRequest(null), context(none));
  t.notOk(d.allowed);
  t.same(d.errors.map(renderError), ['object: Required value: the request carries no object']);
});

t.test('a NAD CONNECT is allowed untouched, even without an object', async (t) => {
  const d = review(nadRequest(null, 'CONNECT'), context(none));
  t.ok(d.allowed);
  t.same(d.errors, []);
  t.same(d.warnings, []);
});

t.test('device-path problems warn only for a NAD without errors, read with the configured resource keys', async (t) => {
  const dra = {
    classesFor: (r: string) => (r === 'example.com/nic' ? [{ name: 'class-a' }, { name: 'class-b' }] : []),
    template: () => ({ status: 'found' as const }),
  };
  const withDra = (config = {}) => ({ ...context(none, { config }), dra });
  const keys = { resourceNameKeys: ['example.com/res'] };
  const nad = nadObject('net-a', { annotations: { 'example.com/res': 'example.com/nic' } });
  const shared = 'DeviceClasses class-a, class-b share extendedResourceName example.com/nic; the scheduler picks class-a';
  const good = review(nadRequest(nad), withDra(keys));
  t.ok(good.allowed);
  t.same(warningLines(good), [shared]);
  t.same(warningLines(review(nadRequest(nad), withDra())), [], 'the key is not a resource key by default');
  // The same NAD with a broken config: the errors, and no device-path warning.
  const bad = { ...nad, spec: { config: '{' } };
  const d = review(nadRequest(bad), withDra(keys));
  t.notOk(d.allowed);
  t.ok(d.errors.length > 0);
  t.same(warningLines(d), []);
});

t.test('NAD DELETE: the name and namespace come from the request, else from the old object; without both nothing is asked', async (t) => {
  const cases: Array<[string, string, unknown, string]> = [
    ['default', 'net-a', nadObject('net-a', { namespace: 'other' }), 'default/net-a'],
    ['', '', nadObject('net-b', { namespace: 'other' }), 'other/net-b'],
    ['', 'net-a', nadObject('net-b', { namespace: 'other' }), 'other/net-a'],
    ['team', '', nadObject('net-b', { namespace: 'other' }), 'team/net-b'],
    ['', '', { metadata: { name: 'net-b' } }, ''],
    ['', '', { metadata: { namespace: 'other' } }, ''],
    ['', '', null, ''],
  ];
  for (const [namespace, name, old, want] of cases) {
    const asked: string[] = [];
    const req = { ...nadRequest(null, 'DELETE', old ?? undefined, name), namespace };
    const d = review(req, context(none, { podsUsingNad: (ns, n) => (asked.push(`${ns}/${n}`), ['default/p1']) }));
    t.ok(d.allowed);
    t.same(asked, want ? [want] : [], `${namespace}/${name}`);
    t.same(warningLines(d), want ? [`${want} is still used by 1 pod (default/p1); new pods naming it will fail`] : []);
  }
});

t.test('NAD DELETE: exactly three pods are all shown, with no "more"', async (t) => {
  const d = review(
    nadRequest(null, 'DELETE', nadObject('net-a')),
    context(none, { podsUsingNad: () => ['default/p1', 'default/p2', 'default/p3'] }),
  );
  t.same(warningLines(d), ['default/net-a is still used by 3 pods (default/p1, default/p2, default/p3); new pods naming it will fail']);
});
