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
  error: {
    path: 'metadata.annotations[k8s.v1.cni.cncf.io/networks][0]',
    type: 'Not found',
    value: 'team-a/a',
    reason: 'no such NetworkAttachmentDefinition',
  },
};

t.test('no policies: built-in findings pass through, nothing else', async (t) => {
  const e = new PolicyEngine();
  t.same(e.policies().policies, []);
  const r = e.evaluate(input('a@eth1', { builtin: [missing] }));
  t.same(r.findings, [missing]);
  t.same(r.addresses, []);
});

t.test('policies are evaluated in name order, whatever order they came in', async (t) => {
  const r = new PolicyEngine({
    policies: set(
      ['c', 'rules:\n  maxAttachments: {max: 0}'],
      ['a', 'rules:\n  maxAttachments: {max: 0}'],
      ['b', 'rules:\n  maxAttachments: {max: 0}'],
    ),
  }).evaluate(input('x'));
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
  const strictFirst = new PolicyEngine({
    policies: set(['a', 'rules:\n  networkExists: {action: Enforce}'], ['b', 'rules:\n  networkExists: {action: Warn}']),
  });
  t.same(strictFirst.evaluate(input('x', { builtin: [missing] })).findings.map(brief), ['a/networkExists/Enforce']);
  const tie = new PolicyEngine({
    policies: set(['a', 'rules:\n  networkExists: {action: Warn}'], ['b', 'rules:\n  networkExists: {action: Warn}']),
  });
  t.same(tie.evaluate(input('x', { builtin: [missing] })).findings.map(brief), ['a/networkExists/Warn']);
  const other: Finding = { ...missing, rule: 'maxAttachments' };
  const e = new PolicyEngine({ policies: set(['a', 'rules:\n  maxAttachments: {max: 5, action: Audit}']) });
  t.same(e.evaluate(input('x', { builtin: [other] })).findings, [other], 'a finding of another rule is left as it came');
});

t.test('an exemption is an Audit finding on metadata.namespace', async (t) => {
  const r = new PolicyEngine({ policies: set(['p', 'exemptNamespaces: [team-a]\nrules:\n  maxAttachments: {max: 0}']) }).evaluate(
    input('x'),
  );
  t.same(r.findings, [
    {
      policy: 'p',
      rule: 'exemption',
      action: 'Audit',
      error: {
        path: 'metadata.namespace',
        type: 'Forbidden',
        reason: 'policy "p" not applied: namespace "team-a" is exempt (spec.exemptNamespaces)',
      },
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
  const e = new PolicyEngine({
    policies: set(['u', 'rules:\n  uniqueAddresses: {mac: Network}'], ['v', 'rules:\n  uniqueAddresses: {mac: Network}']),
    index,
  });
  const r = e.evaluate(input('[{"name":"a","mac":"02:00:00:00:00:01"},{"name":"a","mac":"02:00:00:00:00:02"}]'));
  t.same(
    r.findings.map((f) => renderError(f.error).replace(/.*is already used by (pod \S+).*/, '$1')),
    ['pod team-a/one', 'pod team-a/two', 'pod team-a/one', 'pod team-a/two'],
  );
});

t.test('claims name the pod by what it has: name, generateName, uid, and nothing it lacks', async (t) => {
  const e = new PolicyEngine({ policies: set(['u', 'rules:\n  uniqueAddresses: {mac: Network}']) });
  const ann = '[{"name":"a","mac":"02:00:00:00:00:01"}]';
  const podOf = (pod: PolicyInput['pod']) => e.evaluate(input(ann, { pod })).addresses.map((c) => c.pod);
  t.strictSame(podOf({ name: 'p1' }), [{ namespace: 'team-a', name: 'p1' }]);
  t.strictSame(podOf({ generateName: 'web-', uid: 'u1' }), [{ namespace: 'team-a', generateName: 'web-', uid: 'u1' }]);
  t.strictSame(podOf({ name: 'web-x', generateName: 'web-', uid: 'u2' }), [
    { namespace: 'team-a', name: 'web-x', generateName: 'web-', uid: 'u2' },
  ]);
});

t.test('policySet sorts stably: policies of one name keep the order they came in', async (t) => {
  // Sources reject a second policy of a name; this pins that the order compares names as equal.
  const warn = policies(policyYaml('p', 'rules:\n  maxAttachments: {max: 0, action: Warn}'));
  const audit = policies(policyYaml('p', 'rules:\n  maxAttachments: {max: 0, action: Audit}'));
  const order = (...ps: ReturnType<typeof policies>) =>
    new PolicyEngine({ policies: policySet(ps) }).evaluate(input('x')).findings.map(brief);
  t.same(order(...warn, ...audit), ['p/maxAttachments/Warn', 'p/maxAttachments/Audit']);
  t.same(order(...audit, ...warn), ['p/maxAttachments/Audit', 'p/maxAttachments/Warn']);
});

t.test('one look-up per address and scope: every policy of a request sees the same holders', async (t) => {
  // A reservation that expires between two policies' look-ups must not be a conflict for one
  // and not for the other: the clock moves on at each look-up.
  let time = 0;
  let ticking = false;
  const index = new AddressIndex({ reservationTtlMs: 10, now: () => (ticking ? (time += 7) : time) });
  index.reserve([{ kind: 'mac', value: '02:00:00:00:00:01', scope: 'network:team-a/a', pod: { namespace: 'team-a', name: 'first' } }]);
  ticking = true;
  const e = new PolicyEngine({
    policies: set(['u', 'rules:\n  uniqueAddresses: {mac: Network}'], ['v', 'rules:\n  uniqueAddresses: {mac: Network}']),
    index,
  });
  const r = e.evaluate(input('[{"name":"a","mac":"02:00:00:00:00:01"}]'));
  const reason = (p: string) =>
    `policy "${p}" (uniqueAddresses): MAC 02:00:00:00:00:01 is already used by pod team-a/first (being created) on network team-a/a (scope Network)`;
  t.same(
    r.findings.map((f) => f.error.reason),
    [reason('u'), reason('v')],
  );
});

t.test('claims: which uniqueAddresses rule judged each address', async (t) => {
  const P = 'metadata.annotations[k8s.v1.cni.cncf.io/networks]';
  const MAC = '02:00:00:00:00:01';
  const pod = { namespace: 'team-a', name: 'p1', uid: 'uid-p1' };
  const unique = (policy: string, action: string, scope: string, i = 0, mac = MAC) => ({
    policy,
    action,
    scope,
    path: `${P}[${i}].mac`,
    label: `MAC ${mac}`,
  });
  const uniqueOf = (docs: Array<[string, string]>, annotation = `[{"name":"a","mac":"${MAC}"}]`, index?: AddressIndex) =>
    new PolicyEngine({ policies: set(...docs), ...(index ? { index } : {}) }).evaluate(input(annotation)).addresses.map((c) => c.unique);

  t.strictSame(
    new PolicyEngine({ policies: set(['m', 'rules:\n  maxAttachments: {max: 5}']) }).evaluate(input(`[{"name":"a","mac":"${MAC}"}]`))
      .addresses,
    [{ kind: 'mac', value: MAC, scope: 'network:team-a/a', pod }],
    'no rule judged it: the claim has no unique key at all',
  );
  t.strictSame(uniqueOf([['u', 'rules:\n  uniqueAddresses: {mac: Network}']]), [unique('u', 'Enforce', 'Network')]);
  t.strictSame(
    uniqueOf(
      [['u', 'rules:\n  uniqueAddresses: {mac: Network}']],
      `[{"name":"a","mac":"${MAC}","infiniband-guid":"00:00:00:00:00:00:00:09"}]`,
    ),
    [unique('u', 'Enforce', 'Network'), undefined],
    'a kind the rule does not judge gets none',
  );
  t.strictSame(
    uniqueOf(
      [
        ['h', 'rules:\n  hardwareAddresses: {}'],
        ['u', 'rules:\n  uniqueAddresses: {mac: Network}'],
      ],
      '[{"name":"a","mac":"03:00:00:00:00:01"}]',
    ),
    [unique('u', 'Enforce', 'Network', 0, '03:00:00:00:00:01')],
    "another rule's finding at the same path does not matter",
  );

  const index = new AddressIndex();
  index.setPod({ namespace: 'team-a', name: 'old', uid: 'u-old' }, [{ kind: 'mac', value: MAC, network: 'team-a/a' }]);
  t.strictSame(
    uniqueOf(
      [['u', 'rules:\n  uniqueAddresses: {mac: Network}']],
      `[{"name":"a","mac":"${MAC}"},{"name":"a","mac":"02:00:00:00:00:02"}]`,
      index,
    ),
    [undefined, unique('u', 'Enforce', 'Network', 1, '02:00:00:00:00:02')],
    'an address the rule found held needs no address Lease; the free one beside it does',
  );

  // Several rules judge one address: the strictest action, then scope Cluster, then the first by name.
  const cases: Array<[string, string, string, string, ReturnType<typeof unique>]> = [
    ['Warn', 'Network', 'Enforce', 'Network', unique('b', 'Enforce', 'Network')],
    ['Enforce', 'Network', 'Warn', 'Network', unique('a', 'Enforce', 'Network')],
    ['Enforce', 'Network', 'Warn', 'Cluster', unique('a', 'Enforce', 'Network')],
    ['Enforce', 'Network', 'Enforce', 'Network', unique('a', 'Enforce', 'Network')],
    ['Enforce', 'Network', 'Enforce', 'Cluster', unique('b', 'Enforce', 'Cluster')],
    ['Enforce', 'Cluster', 'Enforce', 'Network', unique('a', 'Enforce', 'Cluster')],
    ['Enforce', 'Cluster', 'Enforce', 'Cluster', unique('a', 'Enforce', 'Cluster')],
    ['Audit', 'Cluster', 'Warn', 'Network', unique('b', 'Warn', 'Network')],
  ];
  for (const [actionA, scopeA, actionB, scopeB, want] of cases) {
    const rule = (action: string, scope: string) => `rules:\n  uniqueAddresses: {mac: ${scope}, action: ${action}}`;
    t.strictSame(
      uniqueOf([
        ['a', rule(actionA, scopeA)],
        ['b', rule(actionB, scopeB)],
      ]),
      [want],
      `a: ${actionA} ${scopeA}, b: ${actionB} ${scopeB}`,
    );
  }
});
