// Engine edges found by mutation testing (docs/mutation.md): no policies at all, the order of
// policies, the strictest action and ties, exemptions, memoized index look-ups, and claims.
import t from 'tap';
import { renderError } from '../../src/field/index.js';
import { AddressIndex, PolicyEngine, policySet, strictest, type Finding, type PolicyInput } from '../../src/policy/index.js';
import { brief, input, policies, policyYaml } from './helpers.js';

const set = (...docs: Array<[string, string]>) => policySet(policies(docs.map(([name, spec]) => policyYaml(name, spec)).join('---\n')));
const missing: Finding = {
  policy: 'builtin',
  rule: 'networkExists',
  action: 'Enforce',
  error: { path: 'metadata.annotations[k8s.v1.cni.cncf.io/networks][0]', type: 'Not found', value: 'team-a/a', reason: 'no such NetworkAttachmentDefinition' },
};

t.test('no policies: built-in findings pass through, nothing else', async (t) => {
  const e = new PolicyEngine();
  t.same(e.policies().policies, []);
  const r = e.evaluate(input('a@eth1', { builtin: [missing] }));
  t.same(r.findings, [missing]);
  t.same(r.claims, []);
});

t.test('policies are evaluated in name order, whatever order they came in', async (t) => {
  const r = new PolicyEngine({ policies: set(['c', 'rules:\n  maxAttachments: {max: 0}'], ['a', 'rules:\n  maxAttachments: {max: 0}'], ['b', 'rules:\n  maxAttachments: {max: 0}']) }).evaluate(input('x'));
  t.same(r.findings.map(brief), ['a/maxAttachments/Enforce', 'b/maxAttachments/Enforce', 'c/maxAttachments/Enforce']);
});

t.test('strictest', async (t) => {
  const cases: Array<[Parameters<typeof strictest>[0], Parameters<typeof strictest>[1], string]> = [
    ['Audit', 'Warn', 'Warn'],
    ['Warn', 'Audit', 'Warn'],
    ['Enforce', 'Warn', 'Enforce'],
    ['Warn', 'Enforce', 'Enforce'],
    ['Audit', 'Audit', 'Audit'],
  ];
  for (const [a, b, want] of cases) t.equal(strictest(a, b), want, `${a} vs ${b}`);
});

t.test('re-grading: the strictest policy wins, the first by name on a tie; only built-in checks are re-graded', async (t) => {
  const strictFirst = new PolicyEngine({ policies: set(['a', 'rules:\n  networkExists: {action: Enforce}'], ['b', 'rules:\n  networkExists: {action: Warn}']) });
  t.same(strictFirst.evaluate(input('x', { builtin: [missing] })).findings.map(brief), ['a/networkExists/Enforce']);
  const tie = new PolicyEngine({ policies: set(['a', 'rules:\n  networkExists: {action: Warn}'], ['b', 'rules:\n  networkExists: {action: Warn}']) });
  t.same(tie.evaluate(input('x', { builtin: [missing] })).findings.map(brief), ['a/networkExists/Warn']);
  const other: Finding = { ...missing, rule: 'maxAttachments' };
  const e = new PolicyEngine({ policies: set(['a', 'rules:\n  maxAttachments: {max: 5, action: Audit}']) });
  t.same(e.evaluate(input('x', { builtin: [other] })).findings, [other], 'a finding of another rule is left as it came');
});

t.test('an exemption is an Audit finding on metadata.namespace', async (t) => {
  const r = new PolicyEngine({ policies: set(['p', 'exemptNamespaces: [team-a]\nrules:\n  maxAttachments: {max: 0}']) }).evaluate(input('x'));
  t.same(r.findings, [
    {
      policy: 'p',
      rule: 'exemption',
      action: 'Audit',
      error: { path: 'metadata.namespace', type: 'Forbidden', reason: 'policy "p" not applied: namespace "team-a" is exempt (spec.exemptNamespaces)' },
    },
  ]);
});

t.test('a rule a policy does not set is not evaluated', async (t) => {
  const r = new PolicyEngine({ policies: set(['p', 'rules:\n  maxAttachments: {max: 5}']) }).evaluate(input('a@eth1, b@weird0'));
  t.same(r.findings, []);
});

t.test('index look-ups are per address: two addresses, two different holders', async (t) => {
  const index = new AddressIndex();
  index.setPod({ namespace: 'team-a', name: 'one', uid: 'u1' }, [{ kind: 'mac', value: '02:00:00:00:00:01', network: 'team-a/a' }]);
  index.setPod({ namespace: 'team-a', name: 'two', uid: 'u2' }, [{ kind: 'mac', value: '02:00:00:00:00:02', network: 'team-a/a' }]);
  const e = new PolicyEngine({ policies: set(['u', 'rules:\n  uniqueAddresses: {mac: Network}'], ['v', 'rules:\n  uniqueAddresses: {mac: Network}']), index });
  const r = e.evaluate(input('[{"name":"a","mac":"02:00:00:00:00:01"},{"name":"a","mac":"02:00:00:00:00:02"}]'));
  t.same(
    r.findings.map((f) => renderError(f.error).replace(/.*is already used by (pod \S+).*/, '$1')),
    ['pod team-a/one', 'pod team-a/two', 'pod team-a/one', 'pod team-a/two'],
  );
});

t.test("claims name the pod by what it has: name, generateName, uid, and nothing it lacks", async (t) => {
  const e = new PolicyEngine({ policies: set(['u', 'rules:\n  uniqueAddresses: {mac: Network}']) });
  const ann = '[{"name":"a","mac":"02:00:00:00:00:01"}]';
  const podOf = (pod: PolicyInput['pod']) => e.evaluate(input(ann, { pod })).claims.map((c) => c.pod);
  t.strictSame(podOf({ name: 'p1' }), [{ namespace: 'team-a', name: 'p1' }]);
  t.strictSame(podOf({ generateName: 'web-', uid: 'u1' }), [{ namespace: 'team-a', generateName: 'web-', uid: 'u1' }]);
  t.strictSame(podOf({ name: 'web-x', generateName: 'web-', uid: 'u2' }), [{ namespace: 'team-a', name: 'web-x', generateName: 'web-', uid: 'u2' }]);
});
