// Identity strings are checked before any state: each bound exactly, the form Kubernetes
// requires, and a denial that names the field and the limit without echoing a huge value.
import t from 'tap';
import { identityErrors, MAX_NAME_BYTES, MAX_NAMESPACE_BYTES, MAX_OBJECT_UID_BYTES, plan, review } from '../../src/admission/index.js';
import type { AdmissionRequest } from '../../src/admission/types.js';

const podCreate = (metadata: Record<string, unknown>, extra: Partial<AdmissionRequest> = {}): AdmissionRequest =>
  ({
    uid: 'u1',
    kind: { group: '', version: 'v1', kind: 'Pod' },
    resource: { group: '', version: 'v1', resource: 'pods' },
    operation: 'CREATE',
    namespace: 'ns',
    userInfo: { username: 'alice' },
    object: {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { namespace: 'ns', annotations: { 'k8s.v1.cni.cncf.io/networks': 'net1' }, ...metadata },
      spec: { containers: [{ name: 'c', image: 'i' }] },
    },
    ...extra,
  }) as AdmissionRequest;

const paths = (r: AdmissionRequest) => identityErrors(r).map((e) => `${e.path}: ${e.type}`);

t.test('each bound: at the bound passes, one over is denied', async (t) => {
  const cases: Array<[string, (n: number) => AdmissionRequest, number, string]> = [
    ['name', (n) => podCreate({ name: 'a'.repeat(n) }), MAX_NAME_BYTES, 'metadata.name: Too long'],
    ['generateName', (n) => podCreate({ generateName: 'a'.repeat(n - 1) + '-' }), MAX_NAME_BYTES, 'metadata.generateName: Too long'],
    ['namespace', (n) => podCreate({ namespace: 'a'.repeat(n) }), MAX_NAMESPACE_BYTES, 'metadata.namespace: Too long'],
    ['uid', (n) => podCreate({ uid: 'a'.repeat(n) }), MAX_OBJECT_UID_BYTES, 'metadata.uid: Too long'],
    ['request.name', (n) => podCreate({}, { name: 'a'.repeat(n) }), MAX_NAME_BYTES, 'request.name: Too long'],
    ['request.namespace', (n) => podCreate({}, { namespace: 'a'.repeat(n) }), MAX_NAMESPACE_BYTES, 'request.namespace: Too long'],
  ];
  for (const [what, make, max, error] of cases) {
    t.same(paths(make(max)), [], `${what} at ${max}`);
    t.same(paths(make(max + 1)), [error], `${what} at ${max + 1}`);
  }
});

t.test('the form Kubernetes requires; a generateName may end with a dash', async (t) => {
  t.same(paths(podCreate({ name: 'Web_1' })), ['metadata.name: Invalid value']);
  t.same(paths(podCreate({ generateName: 'web-' })), []);
  t.same(paths(podCreate({ generateName: 'web.-' })), [], 'masked as Kubernetes masks it: "weba"');
  t.same(paths(podCreate({ generateName: '-web-' })), ['metadata.generateName: Invalid value']);
  // Only a trailing dash after at least one other character is masked (maskTrailingDash), and only
  // the last two characters: what comes before them is checked as written.
  t.same(paths(podCreate({ generateName: '-' })), ['metadata.generateName: Invalid value'], 'a lone dash is not masked');
  t.same(paths(podCreate({ generateName: 'aB' })), ['metadata.generateName: Invalid value'], 'no dash: checked as written');
  t.same(paths(podCreate({ generateName: 'abCd-' })), ['metadata.generateName: Invalid value'], 'masked to "abCa"');
  t.same(paths(podCreate({ namespace: 'a.b' })), ['metadata.namespace: Invalid value']);
  t.same(paths(podCreate({ name: 'web-0.x', uid: '0b0e7a5c-1f5a-4bb5-9c39-3b4f2f8a3b9e' })), []);
});

t.test('a review with a 1.8 MB name is denied at once: no NAD looked up, the value not echoed', async (t) => {
  const huge = 'a'.repeat(1_800_000);
  const request = podCreate({ name: huge });
  t.same(plan(request, {} as never).nadRefs, [], 'plan asks for no NAD');
  let asked = 0;
  const decision = review(request, {
    endpoint: 'mutate',
    nads: () => (asked++, { status: 'unavailable', reason: 'x' }),
    policy: {
      evaluate: () => {
        throw new Error('policy must not be asked');
      },
    },
    config: {},
  } as never);
  t.equal(decision.allowed, false);
  t.equal(asked, 0, 'no NAD asked for');
  t.same(decision.addresses, [], 'nothing claimed');
  const message = JSON.stringify(decision);
  t.ok(message.length < 2000, `the denial is short (${message.length} characters)`);
  t.same(decision.errors, [
    { path: 'metadata.name', type: 'Too long', value: 'string(1800000 chars)', reason: 'may not be more than 253 bytes' },
  ]);
});

t.test('other resources are not judged on identity (nothing is kept for them)', async (t) => {
  const r = podCreate({ name: 'a'.repeat(300) }, { resource: { group: '', version: 'v1', resource: 'configmaps' } });
  t.equal(review(r, { endpoint: 'validate', config: {} } as never).allowed, true);
});
