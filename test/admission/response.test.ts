import t from 'tap';
import { forbidden, internal, invalid, notFound, renderError, type FieldError } from '../../src/field/index.js';
import {
  denialMessage,
  ENFORCEMENT_MODES,
  limitWarnings,
  MAX_DENIAL_BYTES,
  MAX_LISTED_ERRORS,
  MAX_WARNING_LENGTH,
  MAX_WARNING_LONG,
  MAX_WARNINGS,
  MAX_WARNINGS_TOTAL,
  OBSERVE_NOTE,
  observed,
  renderWarning,
  toResponse,
  type AdmissionRequest,
  type Decision,
} from '../../src/admission/index.js';
import { internalError } from '../../src/admission/decision.js';
import { namespaceOf } from '../../src/admission/namespace.js';
import { POD_LOCATION } from '../../src/admission/object.js';
import { NAD_GROUP, NAD_RESOURCE, targetOf } from '../../src/admission/target.js';

const decision = (over: Partial<Decision> = {}): Decision => ({
  allowed: true,
  errors: [],
  warnings: [],
  audits: [],
  findings: [],
  patch: [],
  addresses: [],
  ...over,
});

const PATCH = [{ op: 'add' as const, path: '/spec/nodeSelector', value: { a: 'b' } }];

t.test('echoes apiVersion, kind and uid; allowed is always present', async (t) => {
  for (const apiVersion of ['admission.k8s.io/v1', 'admission.k8s.io/v1beta1'] as const) {
    for (const allowed of [true, false]) {
      const r = toResponse(
        apiVersion,
        'abc',
        decision({ allowed, ...(allowed ? {} : { code: 403, errors: [forbidden('x', 'no')] }) }),
        'validate',
      );
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
  // 400 and an unknown code are not in Decision['code'], but the table answers them anyway.
  const cases: Array<[Decision['code'], string]> = [
    [400 as Decision['code'], 'BadRequest'],
    [409 as Decision['code'], 'Forbidden'],
    [403, 'Forbidden'],
    [422, 'Invalid'],
    [500, 'InternalError'],
    [503, 'ServiceUnavailable'],
  ];
  const mac = 'metadata.annotations[k8s.v1.cni.cncf.io/networks][1].mac';
  for (const [code, reason] of cases) {
    const r = toResponse(
      'admission.k8s.io/v1',
      'u',
      decision({ allowed: false, code, errors: [invalid(mac, 'zz', 'not a MAC')] }),
      'mutate',
    );
    t.same(r.response?.status, { code, reason, message: `${mac}: Invalid value: "zz": not a MAC` });
  }
});

t.test('several errors: one per line with a count; many are summarized', async (t) => {
  const two = toResponse(
    'admission.k8s.io/v1',
    'u',
    decision({ allowed: false, code: 403, errors: [forbidden('a', 'x'), notFound('b', 'ns/n', 'gone')] }),
    'validate',
  );
  t.equal(two.response?.status?.message, '2 errors:\n- a: Forbidden: x\n- b: Not found: "ns/n": gone');
  const many = Array.from({ length: 50 }, (_, i) => forbidden(`f${i}`, 'no'));
  const msg = toResponse('admission.k8s.io/v1', 'u', decision({ allowed: false, code: 403, errors: many }), 'validate').response!.status!
    .message!;
  t.match(msg, /^50 errors:\n/);
  t.equal(msg.split('\n').length, 1 + MAX_LISTED_ERRORS + 1);
  t.match(msg, /- and 30 more$/);
});

t.test('denial messages: none, exactly the listed maximum, one over it', async (t) => {
  t.equal(denialMessage([]), 'denied');
  t.same(toResponse('admission.k8s.io/v1', 'u', decision({ allowed: false, errors: [] }), 'validate').response?.status, {
    code: 403,
    reason: 'Forbidden',
    message: 'denied',
  });
  const errs = (n: number) => Array.from({ length: n }, (_, i) => forbidden(`f${i}`, 'no'));
  const lines = (n: number) => Array.from({ length: n }, (_, i) => `- f${i}: Forbidden: no`);
  t.equal(
    denialMessage(errs(MAX_LISTED_ERRORS)),
    `${MAX_LISTED_ERRORS} errors:\n${lines(MAX_LISTED_ERRORS).join('\n')}`,
    'no "and 0 more"',
  );
  t.equal(
    denialMessage(errs(MAX_LISTED_ERRORS + 1)),
    `${MAX_LISTED_ERRORS + 1} errors:\n${[...lines(MAX_LISTED_ERRORS), '- and 1 more'].join('\n')}`,
  );
});

t.test('internalError: a 500 denial naming the exception, cut to 200 characters, nothing else', async (t) => {
  const empty = { warnings: [], audits: [], findings: [], patch: [], addresses: [] };
  t.strictSame(internalError(new TypeError('boom')), {
    allowed: false,
    code: 500,
    errors: [internal('request', 'netattach failed to review the request (TypeError: boom)')],
    ...empty,
  });
  t.strictSame(internalError('a string'), {
    allowed: false,
    code: 500,
    errors: [internal('request', 'netattach failed to review the request (unknown error)')],
    ...empty,
  });
  const long = internalError(new Error('x'.repeat(500))).errors[0]!.reason;
  t.equal(long, `netattach failed to review the request (Error: ${'x'.repeat(200 - 'Error: '.length)})`);
});

t.test('observed: a denial becomes an admission with its reasons as warnings; an admission is untouched', async (t) => {
  t.strictSame(ENFORCEMENT_MODES, ['enforce', 'observe']);
  t.equal(OBSERVE_NOTE, 'netattach observe mode: would be denied; admitted unchanged');
  const ok = decision({ patch: PATCH, warnings: [{ note: { path: 'p', text: 't' } }] });
  t.equal(observed(ok), ok, 'allowed: the same decision');
  const finding = { error: forbidden('a', 'x') } as unknown as Decision['findings'][number];
  const claim = { mac: 'm' } as unknown as Decision['addresses'][number];
  const denied = decision({
    allowed: false,
    code: 422,
    errors: [invalid('a', 'v', 'bad'), forbidden('b', 'no')],
    warnings: [{ note: { path: 'w', text: 'earlier' } }],
    audits: [finding],
    findings: [finding],
    patch: PATCH,
    addresses: [claim],
  });
  t.strictSame(observed(denied), {
    allowed: true,
    errors: [],
    warnings: [
      { note: { path: '', text: `${OBSERVE_NOTE} (HTTP 422)` } },
      { field: invalid('a', 'v', 'bad') },
      { field: forbidden('b', 'no') },
      { note: { path: 'w', text: 'earlier' } },
    ],
    audits: [finding],
    findings: [finding],
    patch: [],
    addresses: [],
  });
  const noCode = observed(decision({ allowed: false, errors: [forbidden('b', 'no')] }));
  t.strictSame(noCode.warnings[0], { note: { path: '', text: `${OBSERVE_NOTE} (HTTP 403)` } }, 'no code: 403');
  t.equal(noCode.allowed, true);
});

const req = (group: string | undefined, resource: string, extra: Partial<AdmissionRequest> = {}): AdmissionRequest =>
  ({ uid: 'u', operation: 'CREATE', resource: { group, version: 'v1', resource }, ...extra }) as unknown as AdmissionRequest;

t.test('targetOf: by group and resource', async (t) => {
  const spec = { keys: ['spec', 'template'], metadataPath: 'spec.template.metadata', specPath: 'spec.template.spec' };
  const tpl = (resource: string, location = spec) => ({ kind: 'template', location, resource });
  const cases: Array<[string | undefined, string, unknown]> = [
    ['', 'pods', { kind: 'pod', location: POD_LOCATION }],
    [undefined, 'pods', { kind: 'pod', location: POD_LOCATION }],
    ['metrics.k8s.io', 'pods', { kind: 'other' }],
    [NAD_GROUP, NAD_RESOURCE, { kind: 'nad' }],
    [NAD_GROUP, 'pods', { kind: 'other' }],
    [NAD_GROUP, 'deployments', { kind: 'other' }],
    ['', NAD_RESOURCE, { kind: 'other' }],
    ['apps', NAD_RESOURCE, { kind: 'other' }],
    ['apps', 'deployments', tpl('deployments')],
    ['apps', 'replicasets', tpl('replicasets')],
    ['apps', 'statefulsets', tpl('statefulsets')],
    ['apps', 'daemonsets', tpl('daemonsets')],
    ['batch', 'jobs', tpl('jobs')],
    [
      'batch',
      'cronjobs',
      tpl('cronjobs', {
        keys: ['spec', 'jobTemplate', 'spec', 'template'],
        metadataPath: 'spec.jobTemplate.spec.template.metadata',
        specPath: 'spec.jobTemplate.spec.template.spec',
      }),
    ],
    ['', 'replicationcontrollers', tpl('replicationcontrollers')],
    ['', 'podtemplates', tpl('podtemplates', { keys: ['template'], metadataPath: 'template.metadata', specPath: 'template.spec' })],
    ['', 'deployments', { kind: 'other' }],
    ['', '', { kind: 'other' }],
    // KubeVirt: judged as the launcher pod rendered from them (src/kubevirt).
    ['kubevirt.io', 'virtualmachines', { kind: 'vm', resource: 'kubevirt.io/virtualmachines' }],
    ['kubevirt.io', 'virtualmachineinstances', { kind: 'vm', resource: 'kubevirt.io/virtualmachineinstances' }],
    ['kubevirt.io', 'virtualmachineinstancereplicasets', { kind: 'vm', resource: 'kubevirt.io/virtualmachineinstancereplicasets' }],
    ['pool.kubevirt.io', 'virtualmachinepools', { kind: 'vm', resource: 'pool.kubevirt.io/virtualmachinepools' }],
    ['kubevirt.io', 'pods', { kind: 'other' }],
    ['', 'virtualmachines', { kind: 'other' }],
  ];
  for (const [group, resource, want] of cases) t.strictSame(targetOf(req(group, resource)), want, `${group}/${resource}`);
  t.strictSame(targetOf(req('', 'pods', { subResource: 'status' })), { kind: 'other' }, 'subresource');
});

t.test("namespaceOf: the request's, else the object's, else default", async (t) => {
  t.equal(namespaceOf(req('', 'pods', { namespace: 'a', object: { metadata: { namespace: 'b' } } })), 'a');
  t.equal(namespaceOf(req('', 'pods', { object: { metadata: { namespace: 'b' } } })), 'b');
  t.equal(namespaceOf(req('', 'pods', { object: { metadata: {} } })), 'default');
  t.equal(namespaceOf(req('', 'pods', { object: { metadata: { namespace: '' } } })), 'default');
  t.equal(namespaceOf(req('', 'pods')), 'default');
});

t.test('a warning keeps its path and reason, shortening the value', async (t) => {
  const path = 'spec.jobTemplate.spec.template.metadata.annotations[k8s.v1.cni.cncf.io/networks][12].mac';
  const reason = 'a reason that is also fairly long to push past the limit';
  const w = renderWarning(invalid(path, 'x'.repeat(500), reason));
  t.ok(w.length > MAX_WARNING_LENGTH && w.length <= MAX_WARNING_LONG, `length ${w.length}`);
  t.equal(w, `${path}: Invalid value: "xxxxxxxx...: ${reason}`);
  const short = renderWarning(invalid('a.b', 'v', 'r'));
  t.equal(short, 'a.b: Invalid value: "v": r');
});

t.test('the response keeps warnings within the apiserver limits', async (t) => {
  const many = Array.from({ length: 100 }, (_, i) => ({ note: { path: `spec.x[${i}]`, text: `warning number ${i} ${'y'.repeat(100)}` } }));
  const out = toResponse('admission.k8s.io/v1', 'u', decision({ warnings: many }), 'mutate').response!.warnings!;
  const total = out.reduce((n, w) => n + w.length, 0);
  t.ok(total <= MAX_WARNINGS_TOTAL, `total ${total}`);
  for (const w of out) t.ok(w.length <= MAX_WARNING_LONG, `length ${w.length}`);
  t.ok(
    out.slice(0, -1).every((w, i) => w.endsWith('y'.repeat(100)) && w.includes(`warning number ${i} `)),
    'each whole: its point fits 256',
  );
  t.match(out.at(-1), /^and \d+ more warnings/);
  const shown = out.length - 1;
  t.match(out.at(-1), new RegExp(`^and ${100 - shown} more`));

  t.same(limitWarnings(['Warning: a', 'a', 'b']), ['a', 'b'], 'deduplicated, no "Warning:" prefix');
  t.same(
    limitWarnings(['a'.repeat(500)]).map((w) => w.length),
    [MAX_WARNING_LONG],
  );
  t.equal(toResponse('admission.k8s.io/v1', 'u', decision(), 'mutate').response?.warnings, undefined, 'none: field omitted');
});

t.test('a denial stays within MAX_DENIAL_BYTES whatever its errors hold; the rest are counted (issue 24, finding 2)', async (t) => {
  const long = 'k'.repeat(200_000);
  // Errors whose paths, values and reasons all carry 200 KB of the sender's text.
  const errors = Array.from({ length: 100 }, (_, i) => invalid(`x.${long}[${i}]`, long, `bad ${'€'.repeat(100_000)}`));
  const msg = toResponse('admission.k8s.io/v1', 'u', decision({ allowed: false, code: 403, errors }), 'mutate').response!.status!.message!;
  t.ok(Buffer.byteLength(msg) <= MAX_DENIAL_BYTES, `${Buffer.byteLength(msg)} bytes`);
  t.match(msg, /^100 errors:\n- x\.k+/);
  const listed = msg.split('\n').filter((l) => l.startsWith('- x.')).length;
  t.ok(listed >= 3, `${listed} listed`);
  t.match(msg, new RegExp(`\\n- and ${100 - listed} more$`), 'the rest counted');
  const one = denialMessage([invalid('x', 'v', 'y'.repeat(100_000))]);
  t.ok(Buffer.byteLength(one) <= MAX_DENIAL_BYTES, 'one error alone too');
  // Twenty real errors are listed whole.
  const real = Array.from({ length: 20 }, (_, i) =>
    invalid(
      `metadata.annotations[k8s.v1.cni.cncf.io/networks][${i}].mac`,
      'zz:zz',
      'must be a MAC address: six bytes in hexadecimal separated by colons',
    ),
  );
  t.equal(denialMessage(real).split('\n').length, 21);
});

t.test('the denial byte budget at its edge: room kept for the count, the count right, no count when all fit', async (t) => {
  const lineOf = (e: FieldError) => `\n- ${renderError(e)}`;
  /** An error whose line in the message is exactly `bytes` long (each field well under its own cut). */
  const sized = (bytes: number, tag: string): FieldError => {
    const e = invalid('x', tag, 'r'.repeat(bytes - lineOf(invalid('x', tag, 'r')).length + 1));
    t.equal(lineOf(e).length, bytes, `a line of ${bytes} bytes`);
    return e;
  };
  // Sixteen lines of 1,000 bytes, then the one at the edge, then what is left to count.
  const fillers = Array.from({ length: 16 }, (_, i) => sized(1000, `f${i}`));
  const message = (errors: FieldError[], listed: FieldError[], counted: number): string =>
    `${errors.length} errors:${listed.map(lineOf).join('')}${counted > 0 ? `\n- and ${counted} more` : ''}`;
  const room = (errors: number, left: number) =>
    MAX_DENIAL_BYTES - `${errors} errors:`.length - 16_000 - (left > 0 ? `\n- and ${left} more`.length : 0);
  // One error left after the edge: its count's room is kept, and the edge line fits to the byte.
  const small = sized(40, 'small');
  const edge = sized(room(18, 1), 'edge');
  const a = [...fillers, edge, small];
  t.equal(denialMessage(a), message(a, [...fillers, edge], 1), 'listed at the edge, the last counted');
  t.equal(Buffer.byteLength(denialMessage(a)), MAX_DENIAL_BYTES, 'exactly the budget');
  const over = [...fillers, sized(room(18, 1) + 1, 'edge'), small];
  t.equal(denialMessage(over), message(over, fillers, 2), 'one byte over: counted with the rest');
  // Nine left after it: the room kept is that count's text, one byte shorter than "and 11 more".
  const rest = Array.from({ length: 9 }, (_, i) => sized(30, `s${i}`));
  const b = [...fillers, sized(room(26, 9), 'edge'), ...rest];
  t.equal(denialMessage(b), message(b, b.slice(0, 17), 9), 'nine left: "and 9 more" fills the budget');
  t.equal(Buffer.byteLength(denialMessage(b)), MAX_DENIAL_BYTES);
  // The last error needs no room for a count: it may fill the budget to its last byte.
  const c = [...fillers, sized(room(17, 0), 'last')];
  t.equal(denialMessage(c), message(c, c, 0), 'the last one fills the budget; no count');
  t.equal(Buffer.byteLength(denialMessage(c)), MAX_DENIAL_BYTES);
  const d = [...fillers, sized(room(17, 0) + 1, 'last')];
  t.equal(denialMessage(d), message(d, fillers, 1), 'one byte over: the last is counted');
});

t.test('at most MAX_WARNINGS warnings, the last one counting the rest', async (t) => {
  const tiny = Array.from({ length: 1000 }, (_, i) => `w${i}`);
  const out = limitWarnings(tiny);
  t.equal(out.length, MAX_WARNINGS);
  t.equal(out.at(-1), `and ${1000 - MAX_WARNINGS + 1} more warnings (not shown: too many)`);
  t.same(limitWarnings(tiny.slice(0, MAX_WARNINGS)), tiny.slice(0, MAX_WARNINGS), 'exactly the maximum: no summary');
});
