// The audit of a fixed set of pods and NADs (src/audit/snapshot.ts): which namespaces the shipped
// webhooks see, the namespace labels a policy selects on (the name label always there), and the
// uniqueness index built from the pods themselves, as serve's pod watch builds it.
import t from 'tap';
import { audited, auditNadObjects, auditSnapshot } from '../../src/audit/snapshot.js';
import { DEFAULT_ADMISSION_CONFIG } from '../../src/admission/index.js';
import { EMPTY_POLICY_SET } from '../../src/policy/index.js';
import { nad as nadObject } from '../check/helpers.js';
import { live, nad, policiesOf, UNIQUE_MACS } from './helpers.js';

const config = DEFAULT_ADMISSION_CONFIG;
const brief = (a: ReturnType<typeof auditSnapshot>): string[] =>
  a.map((x) => `${x.pod.namespace}/${x.pod.name}:${x.findings.map((f) => `${f.policy}/${f.rule}`).join(',')}`);

t.test('audited: every namespace but kube-system, netattach-system and those labelled admission disabled', async (t) => {
  const cases: Array<[string, Record<string, string>, boolean]> = [
    ['team-a', {}, true],
    ['kube-system', {}, false],
    ['netattach-system', {}, false],
    ['kube-public', {}, true],
    ['team-a', { 'netattach.io/admission': 'disabled' }, false],
    ['team-a', { 'netattach.io/admission': 'enabled' }, true],
    ['team-a', { 'netattach.io/admission': 'Disabled' }, true],
    ['team-a', { other: 'disabled' }, true],
  ];
  for (const [ns, labels, want] of cases) t.equal(audited(ns, labels), want, `${ns} ${JSON.stringify(labels)}`);
});

t.test('auditSnapshot: pods with networks in audited namespaces, in input order', async (t) => {
  const pods = [
    live('b', 'z', 'missing'),
    live('a', 'none'),
    live('kube-system', 'k', 'missing'),
    live('off', 'o', 'missing'),
    live('a', 'y', 'missing'),
    { namespace: 'a', name: 'dflt', defaultNetwork: 'missing' },
  ];
  const out = auditSnapshot({
    pods,
    nads: [],
    namespaceLabels: (ns) => (ns === 'off' ? { 'netattach.io/admission': 'disabled' } : undefined),
    policies: EMPTY_POLICY_SET,
    config,
  });
  t.strictSame(brief(out), ['b/z:builtin/networkExists', 'a/y:builtin/networkExists', 'a/dflt:builtin/networkExists']);
  t.equal(out[0]!.pod, pods[0], 'the pod itself');
  t.strictSame(
    auditSnapshot({ pods: [live('off', 'o', 'missing')], nads: [], policies: EMPTY_POLICY_SET, config }).length,
    1,
    'without namespace labels every namespace is audited',
  );
});

t.test('auditSnapshot: the NADs given are found by namespace and name', async (t) => {
  const out = auditSnapshot({
    pods: [live('a', 'p', 'net'), live('b', 'q', 'net'), live('a', 'r', 'b/net'), live('a', 's', 'other')],
    nads: [nad('b', 'net')],
    policies: EMPTY_POLICY_SET,
    config,
  });
  t.strictSame(brief(out), ['a/p:builtin/networkExists', 'b/q:', 'a/r:', 'a/s:builtin/networkExists']);
});

t.test('auditSnapshot: a policy selects namespaces by their labels, the name label always set', async (t) => {
  const policy = (selector: string): string => `apiVersion: netattach.io/v1alpha1
kind: NetworkAttachmentPolicy
metadata: {name: only}
spec:
  namespaceSelector: {matchLabels: {${selector}}}
  rules:
    allowedNetworks: {networks: ["*/none"], action: Enforce}
`;
  const pods = [live('a', 'p', 'net'), live('b', 'q', 'net')];
  const nads = [nad('a', 'net'), nad('b', 'net')];
  const labels = (ns: string): Record<string, string> =>
    ns === 'a' ? { tier: 'prod', 'kubernetes.io/metadata.name': 'spoofed' } : { tier: 'dev' };
  t.strictSame(brief(auditSnapshot({ pods, nads, namespaceLabels: labels, policies: policiesOf(policy('tier: prod')), config })), [
    'a/p:only/allowedNetworks',
    'b/q:',
  ]);
  t.strictSame(
    brief(auditSnapshot({ pods, nads, namespaceLabels: labels, policies: policiesOf(policy('kubernetes.io/metadata.name: a')), config })),
    ['a/p:only/allowedNetworks', 'b/q:'],
    'the name label is the namespace, whatever the labels say',
  );
  t.strictSame(
    brief(auditSnapshot({ pods, nads, policies: policiesOf(policy('kubernetes.io/metadata.name: b')), config })),
    ['a/p:', 'b/q:only/allowedNetworks'],
    'and set without any labels',
  );
});

t.test('auditSnapshot: uniqueness among the pods given, by MAC; a pod without addresses holds none', async (t) => {
  const mac = (m: string): string => `[{"name":"sriov-net","mac":"02:00:00:00:00:0${m}"}]`;
  const nads = [nad('a', 'sriov-net')];
  const out = auditSnapshot({
    pods: [live('a', 'p1', mac('1')), live('a', 'p2', mac('1')), live('a', 'p3', mac('2')), live('a', 'p4', 'sriov-net')],
    nads,
    policies: policiesOf(UNIQUE_MACS),
    config,
  });
  t.strictSame(brief(out), ['a/p1:unique-macs/uniqueAddresses', 'a/p2:unique-macs/uniqueAddresses', 'a/p3:', 'a/p4:']);
  t.match(out[0]!.findings[0]!.message, /already used by pod a\/p2/);
  // Without uids the pods are still told apart by name.
  const noUid = auditSnapshot({
    pods: [
      { ...live('a', 'p1', mac('1')), uid: undefined as never },
      { namespace: 'a', name: 'p2', networks: mac('1') },
    ],
    nads,
    policies: policiesOf(UNIQUE_MACS),
    config,
  });
  t.strictSame(brief(noUid), ['a/p1:unique-macs/uniqueAddresses', 'a/p2:unique-macs/uniqueAddresses']);
});

t.test('auditSnapshot: pods of one sharing owner (a live migration) hold their MAC as one', async (t) => {
  const mac = '[{"name":"sriov-net","mac":"02:00:00:00:00:01"}]';
  const owner = { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', name: 'vm1', uid: 'vmi-1' };
  const pods = [
    { ...live('a', 'src', mac), controller: owner },
    { ...live('a', 'dst', mac), controller: owner },
  ];
  const nads = [nad('a', 'sriov-net')];
  t.strictSame(
    brief(auditSnapshot({ pods, nads, policies: policiesOf(UNIQUE_MACS), config })),
    ['a/src:', 'a/dst:'],
    'the default owner kinds include the VMI',
  );
  t.strictSame(
    brief(auditSnapshot({ pods, nads, policies: policiesOf(UNIQUE_MACS), config: { ...config, addressSharingOwners: [] } })),
    ['a/src:unique-macs/uniqueAddresses', 'a/dst:unique-macs/uniqueAddresses'],
    'without sharing owners: two holders',
  );
  const other = [
    { ...live('a', 'src', mac), controller: owner },
    { ...live('a', 'dst', mac), controller: { ...owner, name: 'vm2', uid: 'vmi-2' } },
  ];
  t.strictSame(
    brief(auditSnapshot({ pods: other, nads, policies: policiesOf(UNIQUE_MACS), config })),
    ['a/src:unique-macs/uniqueAddresses', 'a/dst:unique-macs/uniqueAddresses'],
    'two owners: two holders',
  );
});

t.test('auditNadObjects: NADs in input order, the default namespace for those without one, excluded namespaces skipped', async (t) => {
  const objects = [
    nadObject('bad', { namespace: 'b', config: '{"cniVersion":"1.0.0","name":"x"}' }),
    { ...nadObject('filed', {}), metadata: { name: 'filed' } },
    nadObject('sys', { namespace: 'kube-system', config: '{}' }),
    nadObject('off', { namespace: 'off', config: '{}' }),
    nadObject('good', { namespace: 'a', config: '{"cniVersion":"1.0.0","name":"x","type":"macvlan"}' }),
    { metadata: { namespace: 'a' } },
  ];
  const out = auditNadObjects({
    objects,
    namespaceLabels: (ns) => (ns === 'off' ? { 'netattach.io/admission': 'disabled' } : undefined),
    config,
    defaultNamespace: 'files',
  });
  t.strictSame(
    out.map((a) => `${a.nad.namespace}/${a.nad.name}:${a.findings.length}`),
    ['b/bad:1', 'files/filed:0', 'a/good:0'],
  );
  t.strictSame(auditNadObjects({ objects: [objects[1]], config }), [], 'no namespace and no default: not judged');
  const named = auditNadObjects({
    objects: [nadObject('x', { namespace: 'kube-public' })],
    namespaceLabels: () => ({ 'kubernetes.io/metadata.name': 'kube-system' }),
    config,
  });
  t.equal(named.length, 1, 'the name label is the namespace itself');
});

t.test('auditNadObjects without namespace labels: every namespace but the excluded ones', async (t) => {
  const objects = [nadObject('x', { namespace: 'a' }), nadObject('y', { namespace: 'kube-system' })];
  t.strictSame(
    auditNadObjects({ objects, config }).map((a) => `${a.nad.namespace}/${a.nad.name}`),
    ['a/x'],
  );
});
