import t from 'tap';
import { decodeReview, MAX_UID_BYTES } from '../../src/admission/index.js';

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
    [
      'apiVersion',
      (r) => ({ ...r, apiVersion: 'admission.k8s.io/v2' }),
      /apiVersion: Unsupported value: "admission.k8s.io\/v2": supported values: "admission.k8s.io\/v1", "admission.k8s.io\/v1beta1"/,
    ],
    ['kind', (r) => ({ ...r, kind: 'Pod' }), /kind: Unsupported value: "Pod"/],
    ['no request', (r) => ({ ...r, request: undefined }), /^request: Required value$/],
    ['request not object', (r) => ({ ...r, request: 5 }), /request: Invalid value: "5": must be an object/],
    ['uid missing', (r) => ({ ...r, request: { ...r.request, uid: undefined } }), /request\.uid: Required value/],
    ['uid empty', (r) => ({ ...r, request: { ...r.request, uid: '' } }), /request\.uid: Required value/],
    ['uid number', (r) => ({ ...r, request: { ...r.request, uid: 7 } }), /request\.uid: Invalid value: "7": must be a string/],
    ['kind missing', (r) => ({ ...r, request: { ...r.request, kind: undefined } }), /request\.kind: Required value/],
    [
      'kind.kind empty',
      (r) => ({ ...r, request: { ...r.request, kind: { group: '', version: 'v1', kind: '' } } }),
      /request\.kind\.kind: Invalid value/,
    ],
    [
      'resource.version missing',
      (r) => ({ ...r, request: { ...r.request, resource: { group: '', resource: 'pods' } } }),
      /request\.resource\.version: Required value/,
    ],
    ['operation', (r) => ({ ...r, request: { ...r.request, operation: 'PATCH' } }), /request\.operation: Unsupported value: "PATCH"/],
    ['userInfo missing', (r) => ({ ...r, request: { ...r.request, userInfo: undefined } }), /request\.userInfo: Required value/],
    [
      'groups',
      (r) => ({ ...r, request: { ...r.request, userInfo: { groups: [1] } } }),
      /request\.userInfo\.groups: Invalid value: "array": must be a list of strings/,
    ],
    [
      'object not object',
      (r) => ({ ...r, request: { ...r.request, object: 'x' } }),
      /request\.object: Invalid value: "x": must be an object or null/,
    ],
    ['dryRun', (r) => ({ ...r, request: { ...r.request, dryRun: 'yes' } }), /request\.dryRun: Invalid value: "yes": must be a boolean/],
    [
      'subResource',
      (r) => ({ ...r, request: { ...r.request, subResource: 1 } }),
      /request\.subResource: Invalid value: "1": must be a string/,
    ],
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

t.test('accepts every operation and the optional fields when absent, null or empty', async (t) => {
  type Req = ReturnType<typeof good>['request'];
  const cases: Array<[string, (r: Req) => Record<string, unknown>]> = [
    ...['CREATE', 'UPDATE', 'DELETE', 'CONNECT'].map((operation): [string, (r: Req) => Record<string, unknown>] => [
      operation,
      (r) => ({ ...r, operation }),
    ]),
    [
      'requestKind and requestResource',
      (r) => ({
        ...r,
        requestKind: { group: 'apps', version: 'v1', kind: 'Deployment' },
        requestResource: { group: 'apps', version: 'v1', resource: 'deployments' },
      }),
    ],
    ['requestKind and requestResource null', (r) => ({ ...r, requestKind: null, requestResource: null })],
    ['name and namespace empty', (r) => ({ ...r, name: '', namespace: '' })],
    ['name and namespace null', (r) => ({ ...r, name: null, namespace: null })],
    ['groups absent', (r) => ({ ...r, userInfo: { username: 'admin', uid: 'u1' } })],
    ['groups null', (r) => ({ ...r, userInfo: { username: 'admin', groups: null } })],
    ['object and oldObject absent', ({ object: _o, oldObject: _p, ...r }) => r],
    ['object and oldObject null', (r) => ({ ...r, object: null, oldObject: null })],
    ['dryRun absent', ({ dryRun: _d, ...r }) => r],
    ['dryRun null', (r) => ({ ...r, dryRun: null })],
    ['dryRun true', (r) => ({ ...r, dryRun: true })],
  ];
  for (const [name, make] of cases) {
    const r = decodeReview({ ...good(), request: make(good().request) });
    t.ok(r.ok, name);
    if (!r.ok) t.fail(r.error);
  }
});

t.test('renders each problem exactly, with the type of a bad value in place of the value', async (t) => {
  type Req = ReturnType<typeof good>['request'];
  const cases: Array<[string, (r: Req) => Record<string, unknown>, string]> = [
    ['uid null', (r) => ({ ...r, uid: null }), 'request.uid: Required value'],
    ['name number', (r) => ({ ...r, name: 5 }), 'request.name: Invalid value: "5": must be a string'],
    ['namespace boolean', (r) => ({ ...r, namespace: true }), 'request.namespace: Invalid value: "true": must be a string'],
    ['kind null', (r) => ({ ...r, kind: null }), 'request.kind: Required value'],
    ['kind number', (r) => ({ ...r, kind: 5 }), 'request.kind: Invalid value: "5": must be an object'],
    [
      'kind.group number',
      (r) => ({ ...r, kind: { group: 5, version: 'v1', kind: 'Pod' } }),
      'request.kind.group: Invalid value: "5": must be a non-empty string',
    ],
    [
      'kind.kind empty',
      (r) => ({ ...r, kind: { group: '', version: 'v1', kind: '' } }),
      'request.kind.kind: Invalid value: "": must be a non-empty string',
    ],
    [
      'requestKind.kind empty',
      (r) => ({ ...r, requestKind: { version: 'v1', kind: '' } }),
      'request.requestKind.kind: Invalid value: "": must be a non-empty string',
    ],
    [
      'requestResource.resource missing',
      (r) => ({ ...r, requestResource: { group: 'apps', version: 'v1' } }),
      'request.requestResource.resource: Required value',
    ],
    ['operation missing', (r) => ({ ...r, operation: undefined }), 'request.operation: Required value'],
    [
      'operation unsupported',
      (r) => ({ ...r, operation: 'PATCH' }),
      'request.operation: Unsupported value: "PATCH": supported values: "CREATE", "UPDATE", "DELETE", "CONNECT"',
    ],
    ['userInfo null', (r) => ({ ...r, userInfo: null }), 'request.userInfo: Invalid value: "null": must be an object'],
    ['userInfo number', (r) => ({ ...r, userInfo: 5 }), 'request.userInfo: Invalid value: "5": must be an object'],
    [
      'username object',
      (r) => ({ ...r, userInfo: { username: {} } }),
      'request.userInfo.username: Invalid value: "object": must be a string',
    ],
    ['userInfo.uid number', (r) => ({ ...r, userInfo: { uid: 5 } }), 'request.userInfo.uid: Invalid value: "5": must be a string'],
    [
      'groups with one non-string',
      (r) => ({ ...r, userInfo: { groups: ['a', 1] } }),
      'request.userInfo.groups: Invalid value: "array": must be a list of strings',
    ],
    [
      'groups object',
      (r) => ({ ...r, userInfo: { groups: {} } }),
      'request.userInfo.groups: Invalid value: "object": must be a list of strings',
    ],
    ['oldObject string', (r) => ({ ...r, oldObject: 'x' }), 'request.oldObject: Invalid value: "x": must be an object or null'],
    [
      'object string of 40 chars',
      (r) => ({ ...r, object: 'x'.repeat(40) }),
      `request.object: Invalid value: "${'x'.repeat(40)}": must be an object or null`,
    ],
    [
      'object string of 41 chars',
      (r) => ({ ...r, object: 'x'.repeat(41) }),
      'request.object: Invalid value: "string(41 chars)": must be an object or null',
    ],
    ['dryRun number', (r) => ({ ...r, dryRun: 0 }), 'request.dryRun: Invalid value: "0": must be a boolean'],
  ];
  for (const [name, make, want] of cases) {
    const r = decodeReview({ ...good(), request: make(good().request) });
    t.notOk(r.ok, name);
    if (!r.ok) t.equal(r.error, want, name);
  }
  const kind = decodeReview({ ...good(), kind: 'Pod' });
  t.equal(kind.ok ? '' : kind.error, 'kind: Unsupported value: "Pod": supported values: "AdmissionReview"');
});

t.test(
  'request.uid: up to MAX_UID_BYTES bytes; longer is refused naming the field, without echoing it (issue 24, finding 2)',
  async (t) => {
    const withUid = (uid: string) => {
      const r = good();
      r.request.uid = uid;
      return r;
    };
    const cases: Array<[string, string, boolean]> = [
      ['a UUID', '705ab4f5-6393-11e8-b7cc-42010a800002', true],
      ['exactly the cap', 'u'.repeat(MAX_UID_BYTES), true],
      ['the cap in 3-byte characters', '€'.repeat(MAX_UID_BYTES / 4), true],
      ['one byte over', 'u'.repeat(MAX_UID_BYTES + 1), false],
      ['over in bytes, not in characters', '€'.repeat(MAX_UID_BYTES / 2), false],
      ['3.5 MB', 'u'.repeat(3_500_000), false],
    ];
    for (const [name, uid, ok] of cases) {
      const r = decodeReview(withUid(uid));
      t.equal(r.ok, ok, name);
      if (!r.ok) {
        t.match(
          r.error,
          new RegExp(`^request\\.uid: Too long: "string\\(${uid.length} chars\\)": may not be more than ${MAX_UID_BYTES} bytes$`),
          name,
        );
        t.ok(r.error.length < 200, `${name}: a short error`);
      }
    }
  },
);
