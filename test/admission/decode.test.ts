import t from 'tap';
import { decodeReview } from '../../src/admission/index.js';

const good = () => ({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: {
    uid: '705ab4f5-6393-11e8-b7cc-42010a800002',
    kind: { group: '', version: 'v1', kind: 'Pod' },
    resource: { group: '', version: 'v1', resource: 'pods' },
    namespace: 'default',
    operation: 'CREATE',
    userInfo: { username: 'admin', groups: ['system:authenticated'] },
    object: { metadata: { name: 'p' } },
    oldObject: null,
    dryRun: false,
  },
});

t.test('accepts v1 and v1beta1 reviews as the apiserver sends them', async (t) => {
  for (const apiVersion of ['admission.k8s.io/v1', 'admission.k8s.io/v1beta1']) {
    const r = decodeReview({ ...good(), apiVersion });
    t.ok(r.ok, apiVersion);
    if (r.ok) t.equal(r.review.request?.uid, '705ab4f5-6393-11e8-b7cc-42010a800002');
  }
  const noGroup = good();
  delete (noGroup.request.kind as { group?: string }).group;
  t.ok(decodeReview(noGroup).ok, 'the core group may be omitted');
});

t.test('names the field that is wrong', async (t) => {
  const cases: Array<[string, (r: ReturnType<typeof good>) => unknown, RegExp]> = [
    ['not an object', () => 'hello', /<body>: Invalid value: "hello": must be an AdmissionReview object/],
    ['array', () => [1], /<body>: Invalid value: "array"/],
    ['apiVersion', (r) => ({ ...r, apiVersion: 'admission.k8s.io/v2' }), /apiVersion: Unsupported value: "admission.k8s.io\/v2": supported values: "admission.k8s.io\/v1", "admission.k8s.io\/v1beta1"/],
    ['kind', (r) => ({ ...r, kind: 'Pod' }), /kind: Unsupported value: "Pod"/],
    ['no request', (r) => ({ ...r, request: undefined }), /^request: Required value$/],
    ['request not object', (r) => ({ ...r, request: 5 }), /request: Invalid value: "5": must be an object/],
    ['uid missing', (r) => ({ ...r, request: { ...r.request, uid: undefined } }), /request\.uid: Required value/],
    ['uid empty', (r) => ({ ...r, request: { ...r.request, uid: '' } }), /request\.uid: Required value/],
    ['uid number', (r) => ({ ...r, request: { ...r.request, uid: 7 } }), /request\.uid: Invalid value: "7": must be a string/],
    ['kind missing', (r) => ({ ...r, request: { ...r.request, kind: undefined } }), /request\.kind: Required value/],
    ['kind.kind empty', (r) => ({ ...r, request: { ...r.request, kind: { group: '', version: 'v1', kind: '' } } }), /request\.kind\.kind: Invalid value/],
    ['resource.version missing', (r) => ({ ...r, request: { ...r.request, resource: { group: '', resource: 'pods' } } }), /request\.resource\.version: Required value/],
    ['operation', (r) => ({ ...r, request: { ...r.request, operation: 'PATCH' } }), /request\.operation: Unsupported value: "PATCH"/],
    ['userInfo missing', (r) => ({ ...r, request: { ...r.request, userInfo: undefined } }), /request\.userInfo: Required value/],
    ['groups', (r) => ({ ...r, request: { ...r.request, userInfo: { groups: [1] } } }), /request\.userInfo\.groups: Invalid value: "array": must be a list of strings/],
    ['object not object', (r) => ({ ...r, request: { ...r.request, object: 'x' } }), /request\.object: Invalid value: "x": must be an object or null/],
    ['dryRun', (r) => ({ ...r, request: { ...r.request, dryRun: 'yes' } }), /request\.dryRun: Invalid value: "yes": must be a boolean/],
    ['subResource', (r) => ({ ...r, request: { ...r.request, subResource: 1 } }), /request\.subResource: Invalid value: "1": must be a string/],
  ];
  for (const [name, make, want] of cases) {
    const r = decodeReview(make(good()));
    t.notOk(r.ok, name);
    if (!r.ok) t.match(r.error, want, name);
  }
});

t.test('lists every problem at once and never echoes a whole object', async (t) => {
  const r = decodeReview({ apiVersion: 'x', kind: 'y', request: { object: { secret: 'hunter2'.repeat(100) }, userInfo: [] } });
  t.notOk(r.ok);
  if (r.ok) return;
  for (const f of ['apiVersion', 'kind', 'request.uid', 'request.kind', 'request.resource', 'request.operation', 'request.userInfo']) {
    t.ok(r.error.includes(`${f}:`), f);
  }
  t.notMatch(r.error, /hunter2/);
});
