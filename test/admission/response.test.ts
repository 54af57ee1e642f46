import t from 'tap';
import { forbidden, invalid, notFound } from '../../src/field/index.js';
import {
  limitWarnings,
  MAX_LISTED_ERRORS,
  MAX_WARNING_LENGTH,
  MAX_WARNINGS_TOTAL,
  renderWarning,
  toResponse,
  type Decision,
} from '../../src/admission/index.js';

const decision = (over: Partial<Decision> = {}): Decision => ({
  allowed: true,
  errors: [],
  warnings: [],
  audits: [],
  findings: [],
  patch: [],
  claims: [],
  ...over,
});

const PATCH = [{ op: 'add' as const, path: '/spec/nodeSelector', value: { a: 'b' } }];

t.test('echoes apiVersion, kind and uid; allowed is always present', async (t) => {
  for (const apiVersion of ['admission.k8s.io/v1', 'admission.k8s.io/v1beta1'] as const) {
    for (const allowed of [true, false]) {
      const r = toResponse(apiVersion, 'abc', decision({ allowed, ...(allowed ? {} : { code: 403, errors: [forbidden('x', 'no')] }) }), 'validate');
      t.equal(r.apiVersion, apiVersion);
      t.equal(r.kind, 'AdmissionReview');
      t.equal(r.response?.uid, 'abc');
      t.equal(r.response?.allowed, allowed);
      t.ok(Object.hasOwn(r.response!, 'allowed'));
      t.equal(r.request, undefined, 'no request echoed back');
    }
  }
});

t.test('a patch travels only from mutate, only when allowed and non-empty, base64 with its type', async (t) => {
  const cases: Array<[string, Decision, 'mutate' | 'validate', boolean]> = [
    ['mutate with patch', decision({ patch: PATCH }), 'mutate', true],
    ['validate with patch', decision({ patch: PATCH }), 'validate', false],
    ['mutate without patch', decision(), 'mutate', false],
    ['denied with patch', decision({ allowed: false, code: 403, errors: [forbidden('x', 'no')], patch: PATCH }), 'mutate', false],
  ];
  for (const [name, d, endpoint, has] of cases) {
    const r = toResponse('admission.k8s.io/v1', 'u', d, endpoint).response!;
    t.equal(r.patch !== undefined, has, `${name}: patch`);
    t.equal(r.patchType !== undefined, has, `${name}: patchType`);
    if (has) {
      t.equal(r.patchType, 'JSONPatch');
      t.same(JSON.parse(Buffer.from(r.patch!, 'base64').toString('utf8')), PATCH);
    }
  }
});

t.test('denials carry code, reason and a field-error message', async (t) => {
  const cases: Array<[Decision['code'], string]> = [
    [403, 'Forbidden'],
    [422, 'Invalid'],
    [500, 'InternalError'],
    [503, 'ServiceUnavailable'],
  ];
  const mac = 'metadata.annotations[k8s.v1.cni.cncf.io/networks][1].mac';
  for (const [code, reason] of cases) {
    const r = toResponse('admission.k8s.io/v1', 'u', decision({ allowed: false, code, errors: [invalid(mac, 'zz', 'not a MAC')] }), 'mutate');
    t.same(r.response?.status, { code, reason, message: `${mac}: Invalid value: "zz": not a MAC` });
  }
});

t.test('several errors: one per line with a count; many are summarized', async (t) => {
  const two = toResponse('admission.k8s.io/v1', 'u', decision({ allowed: false, code: 403, errors: [forbidden('a', 'x'), notFound('b', 'ns/n', 'gone')] }), 'validate');
  t.equal(two.response?.status?.message, '2 errors:\n- a: Forbidden: x\n- b: Not found: "ns/n": gone');
  const many = Array.from({ length: 50 }, (_, i) => forbidden(`f${i}`, 'no'));
  const msg = toResponse('admission.k8s.io/v1', 'u', decision({ allowed: false, code: 403, errors: many }), 'validate').response!.status!.message!;
  t.match(msg, /^50 errors:\n/);
  t.equal(msg.split('\n').length, 1 + MAX_LISTED_ERRORS + 1);
  t.match(msg, /- and 30 more$/);
});

t.test('each warning fits 120 characters by shortening the value, not the path', async (t) => {
  const path = 'spec.jobTemplate.spec.template.metadata.annotations[k8s.v1.cni.cncf.io/networks][12].mac';
  const w = renderWarning(invalid(path, 'x'.repeat(500), 'a reason that is also fairly long to push past the limit'));
  t.ok(w.length <= MAX_WARNING_LENGTH, `length ${w.length}`);
  t.ok(w.startsWith(`${path}: Invalid value: "xxx`), w);
  const short = renderWarning(invalid('a.b', 'v', 'r'));
  t.equal(short, 'a.b: Invalid value: "v": r');
});

t.test('the response keeps warnings within the apiserver limits', async (t) => {
  const many = Array.from({ length: 100 }, (_, i) => ({ note: { path: `spec.x[${i}]`, text: `warning number ${i} ${'y'.repeat(100)}` } }));
  const out = toResponse('admission.k8s.io/v1', 'u', decision({ warnings: many }), 'mutate').response!.warnings!;
  const total = out.reduce((n, w) => n + w.length, 0);
  t.ok(total <= MAX_WARNINGS_TOTAL, `total ${total}`);
  for (const w of out) t.ok(w.length <= MAX_WARNING_LENGTH, `length ${w.length}`);
  t.match(out.at(-1), /^and \d+ more warnings/);
  const shown = out.length - 1;
  t.match(out.at(-1), new RegExp(`^and ${100 - shown} more`));

  t.same(limitWarnings(['Warning: a', 'a', 'b']), ['a', 'b'], 'deduplicated, no "Warning:" prefix');
  t.same(limitWarnings(['a'.repeat(500)]).map((w) => w.length), [MAX_WARNING_LENGTH]);
  t.equal(toResponse('admission.k8s.io/v1', 'u', decision(), 'mutate').response?.warnings, undefined, 'none: field omitted');
});
