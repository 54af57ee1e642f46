import t from 'tap';
import { renderError } from '../../src/field/index.js';
import { AddressIndex, PolicyEngine, policySet, type Finding } from '../../src/policy/index.js';
import { brief, input, policies, policyYaml } from './helpers.js';

const engine = (spec: string, name = 'p'): PolicyEngine => new PolicyEngine({ policies: policySet(policies(policyYaml(name, spec))) });

interface Case {
  name: string;
  spec: string;
  annotation: string;
  over?: Parameters<typeof input>[1];
  /** `policy/rule/action` of each finding, in order. */
  expect: string[];
  /** Substrings of the rendered first finding. */
  message?: string[];
  /** One substring per finding, in order: every finding's own message is checked, not only the first. */
  messages?: string[];
}

const cases: Case[] = [
  {
    name: 'isolation: own namespace allowed',
    spec: 'rules:\n  allowedNetworks:\n    ownNamespace: true\n    globalNamespaces: [default]',
    annotation: 'net-a, default/shared',
    expect: [],
  },
  {
    name: 'isolation: other namespace denied with the reason',
    spec: 'rules:\n  allowedNetworks:\n    ownNamespace: true\n    globalNamespaces: [default]',
    annotation: 'net-a, team-b/net-b',
    expect: ['p/allowedNetworks/Enforce'],
    message: [
      'metadata.annotations[k8s.v1.cni.cncf.io/networks][1]: Forbidden: policy "p" (allowedNetworks): network "team-b/net-b" is not allowed for pods in namespace "team-a"',
      'own namespace; namespaces "default"',
    ],
  },
  {
    name: 'network patterns with wildcards',
    spec: 'rules:\n  allowedNetworks:\n    networks: ["infra/sriov-*", "*/shared"]',
    annotation: 'infra/sriov-a, x/shared, infra/other, infra/sriov-b/x@eth1',
    expect: ['p/allowedNetworks/Enforce'],
    message: ['network "infra/other"'],
  },
  {
    name: 'nothing allowed when no clause is set',
    spec: 'rules:\n  allowedNetworks: {}',
    annotation: 'net-a',
    expect: ['p/allowedNetworks/Enforce'],
  },
  {
    name: 'maxAttachments with Warn',
    spec: 'rules:\n  maxAttachments: {max: 2, action: Warn}',
    annotation: 'a,b,c',
    expect: ['p/maxAttachments/Warn'],
    message: ['3 attachments requested, at most 2 allowed'],
  },
  {
    name: 'maxAttachments at the limit',
    spec: 'rules:\n  maxAttachments: {max: 3}',
    annotation: 'a,b,c',
    expect: [],
  },
  {
    name: 'requestedFields: mac forbidden for ordinary users',
    spec: 'rules:\n  requestedFields:\n    forbidden: [mac, ips]\n    allowedSubjects: {groups: [net-admins]}',
    annotation: '[{"name":"a","mac":"02:00:00:00:00:01","ips":["10.0.0.1/24"]}]',
    expect: ['p/requestedFields/Enforce', 'p/requestedFields/Enforce'],
    message: ['[0].mac: Forbidden: policy "p" (requestedFields): user "alice" may not set mac'],
    messages: ['[0].mac: Forbidden', '[0].ips: Forbidden: policy "p" (requestedFields): user "alice" may not set ips'],
  },
  {
    name: 'requestedFields: allowed group',
    spec: 'rules:\n  requestedFields:\n    forbidden: [mac]\n    allowedSubjects: {groups: [net-admins]}',
    annotation: '[{"name":"a","mac":"02:00:00:00:00:01"}]',
    over: { userInfo: { username: 'bob', groups: ['net-admins'] } },
    expect: [],
  },
  {
    name: 'requestedFields: allowed service account by wildcard',
    spec: 'rules:\n  requestedFields:\n    forbidden: [deviceID]\n    allowedSubjects: {serviceAccounts: ["kube-system/*"]}',
    annotation: '[{"name":"a","deviceID":"0000:3b:00.1"}]',
    over: { userInfo: { username: 'system:serviceaccount:kube-system:replicaset-controller' } },
    expect: [],
  },
  {
    name: 'requestedFields: other service account denied',
    spec: 'rules:\n  requestedFields:\n    forbidden: [deviceID, infiniband-guid]\n    allowedSubjects: {serviceAccounts: ["kube-system/*"], users: [root]}',
    annotation: '[{"name":"a","deviceID":"0000:3b:00.1"}]',
    over: { userInfo: { username: 'system:serviceaccount:team-a:default' } },
    expect: ['p/requestedFields/Enforce'],
    message: ['[0].deviceID: Forbidden', 'may not set deviceID'],
  },
  {
    name: 'hardwareAddresses: MAC prefix',
    spec: 'rules:\n  hardwareAddresses:\n    macPrefixes: ["02:AA"]',
    annotation: '[{"name":"a","mac":"02:aa:00:00:00:01"},{"name":"b","mac":"02-bb-00-00-00-01"}]',
    expect: ['p/hardwareAddresses/Enforce'],
    message: ['[1].mac: Forbidden: policy "p" (hardwareAddresses): MAC 02:bb:00:00:00:01 does not start with an allowed prefix (02:aa)'],
  },
  {
    name: 'hardwareAddresses: multicast and broadcast forbidden by default',
    spec: 'rules:\n  hardwareAddresses: {}',
    annotation: '[{"name":"a","mac":"03:00:00:00:00:01"},{"name":"b","mac":"ff:ff:ff:ff:ff:ff"},{"name":"c","mac":"02:00:00:00:00:01"}]',
    expect: ['p/hardwareAddresses/Enforce', 'p/hardwareAddresses/Enforce'],
    message: ['MAC 03:00:00:00:00:01 is a multicast MAC'],
    messages: [
      '[0].mac: Forbidden: policy "p" (hardwareAddresses): MAC 03:00:00:00:00:01 is a multicast MAC',
      '[1].mac: Forbidden: policy "p" (hardwareAddresses): MAC ff:ff:ff:ff:ff:ff is the broadcast MAC',
    ],
  },
  {
    // Deleting the all-zero bans in src/policy/addresses.ts (macSpecial, guidSpecial) fails this case.
    // An all-zero or all-FF `infiniband-guid` is already an annotation error (ib-sriov-cni's rule), so
    // the policy sees such GUIDs only as the port GUID of a 20-byte IPoIB `mac`.
    name: 'hardwareAddresses: all-zero MAC, all-zero and all-FF IPoIB port GUIDs forbidden by default',
    spec: 'rules:\n  hardwareAddresses: {}',
    annotation:
      '[{"name":"a","mac":"00-00-00-00-00-00"},{"name":"ib","mac":"00:00:00:00:fe:80:00:00:00:00:00:00:00:00:00:00:00:00:00:00"},' +
      '{"name":"ib","mac":"00:00:00:00:fe:80:00:00:00:00:00:00:ff:ff:ff:ff:ff:ff:ff:ff"},' +
      '{"name":"ok","mac":"02:00:00:00:00:00","infiniband-guid":"00:00:00:00:00:00:00:01"}]',
    expect: ['p/hardwareAddresses/Enforce', 'p/hardwareAddresses/Enforce', 'p/hardwareAddresses/Enforce'],
    messages: [
      '[0].mac: Forbidden: policy "p" (hardwareAddresses): MAC 00:00:00:00:00:00 is the all-zero MAC',
      '[1].mac: Forbidden: policy "p" (hardwareAddresses): IPoIB port GUID 00:00:00:00:00:00:00:00 is the all-zero GUID',
      '[2].mac: Forbidden: policy "p" (hardwareAddresses): IPoIB port GUID ff:ff:ff:ff:ff:ff:ff:ff is the all-FF GUID (the reset value of ib-sriov-cni)',
    ],
  },
  {
    name: 'hardwareAddresses: a zero byte alone is not special',
    spec: 'rules:\n  hardwareAddresses: {}',
    annotation:
      '[{"name":"a","mac":"02:00:00:00:00:00"},{"name":"b","mac":"00:00:00:00:00:02"},{"name":"ib","infiniband-guid":"ff:ff:ff:ff:ff:ff:ff:fe"},' +
      '{"name":"ib","mac":"00:00:00:00:fe:80:00:00:00:00:00:00:00:00:00:00:00:00:00:01"}]',
    expect: [],
  },
  {
    // The parser lets an explicit all-FF GUID through with a warning (ib-sriov-cni accepts it): a policy still sees it.
    name: 'hardwareAddresses: all-FF GUID forbidden by default',
    spec: 'rules:\n  hardwareAddresses: {}',
    annotation: '[{"name":"ib","infiniband-guid":"FF:FF:FF:FF:FF:FF:FF:FF"}]',
    expect: ['p/hardwareAddresses/Enforce'],
    message: ['GUID ff:ff:ff:ff:ff:ff:ff:ff is the all-FF GUID'],
  },
  {
    name: 'hardwareAddresses: special values allowed when switched off',
    spec: 'rules:\n  hardwareAddresses: {forbidSpecialValues: false}',
    annotation: '[{"name":"a","mac":"03:00:00:00:00:01"}]',
    expect: [],
  },
  {
    name: 'hardwareAddresses: GUID outside ranges, with Audit',
    spec: 'rules:\n  hardwareAddresses:\n    action: Audit\n    guidRanges: [{from: "00:11:22:33:44:55:00:00", to: "00:11:22:33:44:55:00:ff"}]',
    annotation: '[{"name":"ib","infiniband-guid":"00:11:22:33:44:55:00:10"},{"name":"ib","infiniband-guid":"02:00:00:00:00:00:00:01"}]',
    expect: ['p/hardwareAddresses/Audit'],
    message: [
      '[1].infiniband-guid: Forbidden: policy "p" (hardwareAddresses): GUID 02:00:00:00:00:00:00:01 is outside the allowed ranges 00:11:22:33:44:55:00:00-00:11:22:33:44:55:00:ff',
    ],
  },
  {
    name: 'hardwareAddresses: IPoIB port GUID checked against ranges',
    spec: 'rules:\n  hardwareAddresses:\n    guidRanges: [{from: "00:11:22:33:44:55:00:00", to: "00:11:22:33:44:55:00:ff"}]',
    annotation: '[{"name":"ib","mac":"00:00:00:00:fe:80:00:00:00:00:00:00:00:11:22:33:44:55:01:00"}]',
    expect: ['p/hardwareAddresses/Enforce'],
    message: ['IPoIB port GUID 00:11:22:33:44:55:01:00 is outside'],
  },
  {
    name: 'interfaceNames',
    spec: 'rules:\n  interfaceNames: {allowed: ["net*", "ib?"]}',
    annotation: 'a@net1, b@ib0, c@eth9, d',
    expect: ['p/interfaceNames/Enforce'],
    message: ['[2].interface: Forbidden: policy "p" (interfaceNames): interface name "eth9" does not match "net*", "ib?"'],
  },
  {
    name: 'spec.action is the default of every rule',
    spec: 'action: Warn\nrules:\n  maxAttachments: {max: 0}\n  interfaceNames: {allowed: [x], action: Audit}',
    annotation: 'a@eth1',
    expect: ['p/maxAttachments/Warn', 'p/interfaceNames/Audit'],
    messages: [
      'metadata.annotations[k8s.v1.cni.cncf.io/networks]: Forbidden: policy "p" (maxAttachments): 1 attachments requested, at most 0 allowed',
      '[0].interface: Forbidden: policy "p" (interfaceNames): interface name "eth1" does not match "x"',
    ],
  },
  {
    name: 'namespaceSelector not matching: policy does not apply',
    spec: 'namespaceSelector: {matchLabels: {tier: prod}}\nrules:\n  maxAttachments: {max: 0}',
    annotation: 'a',
    expect: [],
  },
  {
    name: 'namespaceSelector matching by the name label',
    spec: 'namespaceSelector:\n  matchExpressions: [{key: kubernetes.io/metadata.name, operator: In, values: [team-a]}]\nrules:\n  maxAttachments: {max: 0}',
    annotation: 'a',
    expect: ['p/maxAttachments/Enforce'],
  },
  {
    name: 'exempt by policy: audited, rules skipped',
    spec: 'exemptNamespaces: ["team-*"]\nrules:\n  maxAttachments: {max: 0}',
    annotation: 'a',
    expect: ['p/exemption/Audit'],
    message: ['policy "p" not applied: namespace "team-a" is exempt (spec.exemptNamespaces)'],
  },
  {
    name: 'exempt by namespace label',
    spec: 'rules:\n  maxAttachments: {max: 0}',
    annotation: 'a',
    over: { namespaceLabels: { 'kubernetes.io/metadata.name': 'team-a', 'netattach.io/exempt': 'true' } },
    expect: ['p/exemption/Audit'],
    message: ['label netattach.io/exempt=true'],
  },
];

for (const c of cases) {
  t.test(c.name, async (t) => {
    const result = engine(c.spec).evaluate(input(c.annotation, c.over));
    t.same(result.findings.map(brief), c.expect);
    for (const m of c.message ?? []) t.match(renderError(result.findings[0]!.error), m);
    if (c.messages) {
      t.equal(c.messages.length, c.expect.length, 'the table gives one message per finding');
      c.messages.forEach((m, i) => t.match(renderError(result.findings[i]!.error), m, `finding ${i}`));
    }
  });
}

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
const capability: Finding = {
  ...missing,
  rule: 'capabilities',
  error: { ...missing.error, type: 'Forbidden', reason: 'no plugin declares mac' },
};

t.test('built-in findings stay Enforce without a policy setting them', async (t) => {
  const r = engine('rules:\n  maxAttachments: {max: 9}').evaluate(input('a', { builtin: [missing, capability] }));
  t.same(r.findings, [missing, capability]);
});

t.test('built-in findings re-graded; strictest of several policies wins', async (t) => {
  const set = policySet(
    policies(
      policyYaml('gitops', 'namespaceSelector: {matchLabels: {gitops: "true"}}\nrules:\n  networkExists: {action: Audit}') +
        '---\n' +
        policyYaml('lenient', 'rules:\n  networkExists: {action: Warn}\n  capabilities: {action: Audit}'),
    ),
  );
  const e = new PolicyEngine({ policies: set });
  const plain = e.evaluate(input('a', { builtin: [missing, capability] }));
  t.same(plain.findings.map(brief), ['lenient/networkExists/Warn', 'lenient/capabilities/Audit']);
  t.match(plain.findings[0]!.error.reason, 'no such NetworkAttachmentDefinition (Warn by policy "lenient" (networkExists))');
  const gitops = e.evaluate(input('a', { builtin: [missing], namespaceLabels: { gitops: 'true' } }));
  t.same(gitops.findings.map(brief), ['lenient/networkExists/Warn'], 'Warn beats Audit');
});

t.test('several policies: all apply, each finding keeps its action, stable order by name', async (t) => {
  const set = policySet(
    policies(
      policyYaml('zeta', 'rules:\n  maxAttachments: {max: 1, action: Warn}') +
        '---\n' +
        policyYaml('alpha', 'rules:\n  allowedNetworks: {ownNamespace: true}\n  maxAttachments: {max: 5}'),
    ),
  );
  const r = new PolicyEngine({ policies: set }).evaluate(input('a, other/b'));
  t.same(r.findings.map(brief), ['alpha/allowedNetworks/Enforce', 'zeta/maxAttachments/Warn']);
});

t.test('claims: every address on CREATE, none for templates or updates that change no networks', async (t) => {
  const e = engine('rules: {}');
  const ann = '[{"name":"a","mac":"02-00-00-00-00-0A"},{"name":"ib","infiniband-guid":"00:11:22:33:44:55:66:77"}]';
  t.same(e.evaluate(input(ann)).addresses, [
    { kind: 'mac', value: '02:00:00:00:00:0a', scope: 'network:team-a/a', pod: { namespace: 'team-a', name: 'p1', uid: 'uid-p1' } },
    {
      kind: 'infiniband-guid',
      value: '00:11:22:33:44:55:66:77',
      scope: 'network:team-a/ib',
      pod: { namespace: 'team-a', name: 'p1', uid: 'uid-p1' },
    },
  ]);
  t.same(e.evaluate(input(ann, { template: true })).addresses, []);
  t.same(e.evaluate(input(ann, { operation: 'UPDATE' })).addresses, []);
});

t.test('setPolicies swaps the snapshot atomically', async (t) => {
  const e = engine('rules:\n  maxAttachments: {max: 0}');
  const before = e.policies();
  t.equal(e.evaluate(input('a')).findings.length, 1);
  e.setPolicies(policySet([]));
  t.equal(e.evaluate(input('a')).findings.length, 0);
  t.equal(before.policies.length, 1, 'old snapshot unchanged');
  t.ok(Object.isFrozen(before.policies));
});

t.test('uniqueness against the index, per network and cluster-wide', async (t) => {
  const index = new AddressIndex();
  index.setPod({ namespace: 'team-a', name: 'old', uid: 'u-old' }, [{ kind: 'mac', value: '02:00:00:00:00:01', network: 'team-a/a' }]);
  index.setPod({ namespace: 'team-b', name: 'other', uid: 'u-other' }, [
    { kind: 'infiniband-guid', value: '00:11:22:33:44:55:66:77', network: 'team-b/ib' },
  ]);
  const set = policySet(policies(policyYaml('u', 'rules:\n  uniqueAddresses: {mac: Network, infiniband-guid: Cluster}')));
  const e = new PolicyEngine({ policies: set, index });
  const sameNet = e.evaluate(input('[{"name":"a","mac":"02:00:00:00:00:01"}]'));
  t.same(sameNet.findings.map(brief), ['u/uniqueAddresses/Enforce']);
  t.match(
    renderError(sameNet.findings[0]!.error),
    '[0].mac: Forbidden: policy "u" (uniqueAddresses): MAC 02:00:00:00:00:01 is already used by pod team-a/old (running) on network team-a/a (scope Network)',
  );
  t.same(e.evaluate(input('[{"name":"b","mac":"02:00:00:00:00:01"}]')).findings, [], 'another network: no conflict in scope Network');
  const guid = e.evaluate(input('[{"name":"ib","infiniband-guid":"00:11:22:33:44:55:66:77"}]'));
  t.match(
    guid.findings[0]!.error.reason,
    'already used by a pod in another namespace (running) on network team-b/ib (scope Cluster)',
    'other namespaces are not named',
  );
  t.same(
    e.evaluate(input('[{"name":"a","mac":"02:00:00:00:00:01"}]', { pod: { name: 'old', uid: 'u-old' } })).findings,
    [],
    'a pod does not conflict with itself',
  );
  t.same(e.evaluate(input('[{"name":"a","mac":"02:00:00:00:00:01"}]', { template: true })).findings, [], 'templates are not checked');
  const twice = e.evaluate(
    input('[{"name":"x","infiniband-guid":"00:00:00:00:00:00:00:09"},{"name":"y","infiniband-guid":"00:00:00:00:00:00:00:09"}]'),
  );
  t.match(twice.findings[0]!.error.reason, 'is also requested at metadata.annotations[k8s.v1.cni.cncf.io/networks][0].infiniband-guid');
});

t.test('cni-args is a second door: requestedFields, hardwareAddresses and uniqueness see it', async (t) => {
  const index = new AddressIndex();
  index.setPod({ namespace: 'team-a', name: 'old', uid: 'u-old' }, [
    { kind: 'infiniband-guid', value: '00:11:22:33:44:55:66:77', network: 'team-a/ib' },
  ]);
  const set = policySet(
    policies(
      policyYaml('fields', 'rules:\n  requestedFields: {forbidden: [infiniband-guid, mac, ips]}') +
        '---\n' +
        policyYaml('special', 'rules:\n  hardwareAddresses: {forbidSpecialValues: true}') +
        '---\n' +
        policyYaml('unique', 'rules:\n  uniqueAddresses: {infiniband-guid: Cluster, mac: Network}'),
    ),
  );
  const e = new PolicyEngine({ policies: set, index });
  const r = e.evaluate(input('[{"name":"ib","cni-args":{"guid":"00:11:22:33:44:55:66:77","ips":["10.0.0.1/24","10.0.0.2/24"]}}]'));
  t.same(
    r.findings.map((f) => renderError(f.error)),
    [
      'metadata.annotations[k8s.v1.cni.cncf.io/networks][0].cni-args.guid: Forbidden: policy "fields" (requestedFields): user "alice" may not set infiniband-guid (here through cni-args "guid")',
      'metadata.annotations[k8s.v1.cni.cncf.io/networks][0].cni-args.ips: Forbidden: policy "fields" (requestedFields): user "alice" may not set ips (here through cni-args "ips")',
      'metadata.annotations[k8s.v1.cni.cncf.io/networks][0].cni-args.guid: Forbidden: policy "unique" (uniqueAddresses): GUID 00:11:22:33:44:55:66:77 is already used by pod team-a/old (running) on network team-a/ib (scope Cluster)',
    ],
  );
  t.same(
    r.addresses.map((c) => c.value),
    ['00:11:22:33:44:55:66:77'],
    'the cni-args GUID is claimed like a top-level one',
  );
  const zero = e.evaluate(input('[{"name":"tuned","cni-args":{"mac":"00:00:00:00:00:00"}}]'));
  t.ok(
    zero.findings.some((f) => f.rule === 'hardwareAddresses' && f.error.path.endsWith('.cni-args.mac')),
    'special values are caught through cni-args',
  );
  const both = e.evaluate(input('[{"name":"n","mac":"02:00:00:00:00:0a","cni-args":{"mac":"02-00-00-00-00-0A"}}]'));
  t.same(both.addresses.length, 1, 'the same MAC at the top level and in cni-args is one address');
  t.notOk(
    both.findings.some((f) => f.rule === 'uniqueAddresses'),
    'and does not conflict with itself',
  );
});

t.test('pods of one KubeVirt VMI share their addresses; pods of a ReplicaSet do not', async (t) => {
  const vmi = { key: 'vmi-uid-1', label: 'VM team-a/vm1', namespace: 'team-a', kind: 'VirtualMachineInstance', name: 'vm1' };
  const index = new AddressIndex();
  index.setPod({ namespace: 'team-a', name: 'virt-launcher-vm1-abcde', uid: 'u-src', owner: vmi }, [
    { kind: 'mac', value: '02:00:00:00:00:01', network: 'team-a/a' },
  ]);
  index.setPod({ namespace: 'team-a', name: 'web-1', uid: 'u-web' }, [{ kind: 'mac', value: '02:00:00:00:00:02', network: 'team-a/a' }]);
  const e = new PolicyEngine({ policies: policySet(policies(policyYaml('u', 'rules:\n  uniqueAddresses: {mac: Network}'))), index });
  const target = e.evaluate(
    input('[{"name":"a","mac":"02:00:00:00:00:01"}]', { pod: { name: 'virt-launcher-vm1-fghij', uid: 'u-dst', owner: vmi } }),
  );
  t.same(target.findings, [], 'the migration target holds the MAC with its source');
  t.same(target.addresses[0]?.pod.owner, vmi, 'and claims it for the VM');
  const stranger = e.evaluate(input('[{"name":"a","mac":"02:00:00:00:00:01"}]', { pod: { name: 'other' } }));
  t.match(
    stranger.findings[0]!.error.reason,
    'MAC 02:00:00:00:00:01 is already used by VM team-a/vm1 (a pod running) on network team-a/a',
    'messages name the VM',
  );
  const otherVm = e.evaluate(
    input('[{"name":"a","mac":"02:00:00:00:00:01"}]', {
      pod: {
        name: 'x',
        owner: { key: 'vmi-uid-2', label: 'VM team-a/vm2', namespace: 'team-a', kind: 'VirtualMachineInstance', name: 'vm2' },
      },
    }),
  );
  t.equal(otherVm.findings.length, 1, 'another VM conflicts');
  const replica = e.evaluate(input('[{"name":"a","mac":"02:00:00:00:00:02"}]', { pod: { name: 'web-2' } }));
  t.equal(replica.findings.length, 1, 'a replica of an owner that is not listed conflicts');
  // Reservations carry the owner too: two migration pods admitted within the same seconds.
  index.reserve(target.addresses);
  const doppelganger = e.evaluate(
    input('[{"name":"a","mac":"02:00:00:00:00:01"}]', { pod: { name: 'virt-launcher-vm1-zzzzz', owner: vmi } }),
  );
  t.same(doppelganger.findings, []);
});

t.test("a running pod's networks change (hotplug): uniqueness for what it adds only; immutableNetworks refuses it", async (t) => {
  const index = new AddressIndex();
  index.setPod({ namespace: 'team-a', name: 'p1', uid: 'uid-p1' }, [{ kind: 'mac', value: '02:00:00:00:00:01', network: 'team-a/a' }]);
  index.setPod({ namespace: 'team-a', name: 'legacy', uid: 'u-l' }, [{ kind: 'mac', value: '02:00:00:00:00:01', network: 'team-a/a' }]);
  index.setPod({ namespace: 'team-a', name: 'q', uid: 'u-q' }, [{ kind: 'mac', value: '02:00:00:00:00:02', network: 'team-a/b' }]);
  const e = new PolicyEngine({ policies: policySet(policies(policyYaml('u', 'rules:\n  uniqueAddresses: {mac: Network}'))), index });
  const change = { heldBefore: new Set(['mac 02:00:00:00:00:01 team-a/a']) };
  const ann = '[{"name":"a","mac":"02:00:00:00:00:01"},{"name":"b","mac":"02:00:00:00:00:02"}]';
  const r = e.evaluate(input(ann, { operation: 'UPDATE', change }));
  t.same(
    r.findings.map((f) => f.error.path),
    ['metadata.annotations[k8s.v1.cni.cncf.io/networks][1].mac'],
    'only the added MAC is judged (a conflict held before the change is not re-judged)',
  );
  t.equal(r.addresses.length, 2, 'an update claims its addresses');
  t.same(e.evaluate(input(ann, { operation: 'UPDATE' })).addresses, [], 'an UPDATE that does not change the networks claims nothing');
  const strict = new PolicyEngine({
    policies: policySet(policies(policyYaml('frozen', 'rules:\n  immutableNetworks: {action: Enforce}'))),
  });
  t.same(strict.evaluate(input('a', { operation: 'UPDATE', change: { heldBefore: new Set() } })).findings.map(brief), [
    'frozen/immutableNetworks/Enforce',
  ]);
  t.same(strict.evaluate(input('a')).findings, [], 'a CREATE is not a change');
});
