// explainPod on small worlds built here: each expectation follows from the inputs (the NAD's
// chain and annotations, the policies' selectors and actions, the running pods), and the JSON
// and text carry the same facts.
import t from 'tap';
import { parse as parseYaml } from 'yaml';
import { explainExitCode, explainPod, renderExplanation, EXPLAIN_FORMAT_VERSION, type ExplainInput } from '../../src/explain/index.js';
import { renderExplanations } from '../../src/cli/kubectl-commands.js';
import { nadFromObject, reachOf, NO_EXTRA_READERS } from '../../src/nads/index.js';
import { loadPolicyDocuments, policySet } from '../../src/policy/index.js';

const NS = 'apps';
const RES = 'intel.com/sriov';
const nadObject = (name: string, config: object, annotations: Record<string, string> = {}) => ({
  apiVersion: 'k8s.cni.cncf.io/v1',
  kind: 'NetworkAttachmentDefinition',
  metadata: { name, namespace: NS, annotations },
  spec: { config: JSON.stringify(config) },
});
const NADS = [
  nadObject('sriov', { cniVersion: '1.0.0', type: 'sriov', ipam: { type: 'static' } }, { 'k8s.v1.cni.cncf.io/resourceName': RES }),
  nadObject('ipvlan', { cniVersion: '0.3.1', type: 'ipvlan', master: 'eth0', ipam: { type: 'host-local', subnet: '10.9.0.0/24' } }),
  nadObject('chain', { cniVersion: '0.3.1', plugins: [{ type: 'ipvlan', master: 'eth0' }, { type: 'tuning' }] }),
  nadObject('vendor', { cniVersion: '1.0.0', type: 'acme-cni' }),
  nadObject(
    'claimed',
    { cniVersion: '1.0.0', type: 'sriov' },
    { 'k8s.v1.cni.cncf.io/resourceName': RES, 'netattach.io/resourceClaimTemplate': 'vf' },
  ),
].map((o) => nadFromObject(o, { defaultNamespace: NS }));

const pod = (name: string, networks: object[], namespace = NS) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace, annotations: { 'k8s.v1.cni.cncf.io/networks': JSON.stringify(networks) } },
  spec: { containers: [{ name: 'app', image: 'app:1' }] },
});
const policies = (yaml: string) => {
  const loaded = loadPolicyDocuments(yaml, 'test');
  if (loaded.errors.length) throw new Error(loaded.errors.map((e) => e.message).join('; '));
  return policySet(loaded.policies);
};
const base = (p: object, extra: Partial<ExplainInput> = {}): ExplainInput => ({
  pod: p,
  source: 'file',
  defaultNamespace: NS,
  nads: NADS,
  ...extra,
});

t.test('each requested value is named with the reader the reach table gives', async (t) => {
  const cases = [
    { nad: 'sriov', sel: { mac: '02:00:00:00:00:01' }, field: 'mac', key: 'mac' as const },
    { nad: 'ipvlan', sel: { mac: '02:00:00:00:00:02' }, field: 'mac', key: 'mac' as const },
    { nad: 'chain', sel: { mac: '02:00:00:00:00:03' }, field: 'mac', key: 'mac' as const },
    { nad: 'ipvlan', sel: { ips: ['10.9.0.7'] }, field: 'ips', key: 'ips' as const },
    { nad: 'vendor', sel: { mac: '02:00:00:00:00:04' }, field: 'mac', key: 'mac' as const },
  ];
  for (const c of cases) {
    const e = explainPod(base(pod('p', [{ name: c.nad, ...c.sel }])));
    const nad = NADS.find((n) => n.name === c.nad)!;
    const reach = reachOf(nad.cni!, c.key, NO_EXTRA_READERS);
    const r = e.networks[0]!.requested.find((x) => x.field === c.field)!;
    t.equal(r.status, reach.status, `${c.nad} ${c.field}: ${reach.status}`);
    if (reach.status === 'read') t.equal(r.by, reach.by);
    // Ignored by every known plugin: the capability rule denies, as the check does.
    t.equal(e.admission.verdict, reach.status === 'ignored' ? 'denied' : 'allowed', `${c.nad} ${c.field}: verdict`);
    t.equal(explainExitCode(e), reach.status === 'ignored' ? 1 : 0);
    const builtin = e.policies.find((p) => p.name === 'builtin')!;
    t.equal(builtin.rules.find((x) => x.rule === 'capabilities')!.verdict, reach.status === 'ignored' ? 'deny' : 'pass');
    t.same(
      e.networks[0]!.nad.chain!.map((p) => p.type),
      nad.cni!.pluginTypes,
    );
  }
});

t.test('the device path: resources injected for resourceName, a claim for a claim template', async (t) => {
  const plugin = explainPod(base(pod('p', [{ name: 'sriov' }])));
  t.same(plugin.networks[0]!.device!.resourceNames, [RES]);
  t.match(plugin.networks[0]!.device!.summary, RES);
  t.same(plugin.admission.mutation.resources['app'], { requests: { [RES]: '1' }, limits: { [RES]: '1' } }, 'one VF for one selection');
  t.same(plugin.admission.mutation.resourceClaims, []);
  const two = explainPod(base(pod('p', [{ name: 'sriov' }, { name: 'sriov', interface: 'net2' }])));
  t.same(two.admission.mutation.resources['app'], { requests: { [RES]: '2' }, limits: { [RES]: '2' } }, 'two selections, two VFs');
  t.match(renderExplanation(two), new RegExp(`container app: requests ${RES}=2; limits ${RES}=2`));

  const claimed = explainPod(base(pod('p', [{ name: 'claimed' }]), { dra: { classes: [], templates: [{ namespace: NS, name: 'vf' }] } }));
  t.equal(claimed.networks[0]!.device!.claimTemplate, 'vf');
  t.equal(claimed.networks[0]!.device!.path, 'claim-template');
  t.equal(claimed.admission.verdict, 'allowed');
  t.ok(claimed.admission.mutation.resourceClaims.length > 0, `claims added: ${claimed.admission.mutation.resourceClaims.join(', ')}`);
  t.match(renderExplanation(claimed), /^  resourceClaims: /m);
});

t.test('policies: which apply, and each rule verdict from the action it sets', async (t) => {
  const set = policies(`
apiVersion: netattach.io/v1alpha1
kind: NetworkAttachmentPolicy
metadata: {name: other-team}
spec:
  namespaceSelector: {matchLabels: {team: other}}
  rules: {maxAttachments: {max: 1}}
---
apiVersion: netattach.io/v1alpha1
kind: NetworkAttachmentPolicy
metadata: {name: exempting}
spec:
  exemptNamespaces: [${NS}]
  rules: {maxAttachments: {max: 0}}
---
apiVersion: netattach.io/v1alpha1
kind: NetworkAttachmentPolicy
metadata: {name: no-macs}
spec:
  action: Warn
  rules: {requestedFields: {forbidden: [mac]}, maxAttachments: {max: 4, action: Enforce}}
`);
  const e = explainPod(
    base(pod('p', [{ name: 'sriov', mac: '02:00:00:00:00:09' }]), { policies: set, namespaceLabels: () => ({ team: 'mine' }) }),
  );
  const byName = Object.fromEntries(e.policies.map((p) => [p.name, p]));
  t.equal(byName['other-team']!.status, 'not-selected', 'its selector wants team=other');
  t.equal(byName['exempting']!.status, 'exempt', 'it exempts the namespace');
  t.equal(byName['no-macs']!.status, 'applies');
  t.same(byName['no-macs']!.rules.map((r) => [r.rule, r.action, r.verdict]).sort(), [
    ['maxAttachments', 'Enforce', 'pass'],
    ['requestedFields', 'Warn', 'warn'],
  ]);
  const fields = byName['no-macs']!.rules.find((r) => r.rule === 'requestedFields')!;
  t.equal(fields.action, 'Warn');
  t.equal(fields.verdict, 'warn', 'Warn action, mac requested');
  t.match(fields.messages[0], /policy "no-macs"/);
  t.equal(byName['no-macs']!.rules.find((r) => r.rule === 'maxAttachments')!.verdict, 'pass', 'one attachment of at most 4');
  t.equal(e.admission.verdict, 'allowed', 'a warning does not deny');
  t.ok(e.admission.warnings.some((w) => w.includes('no-macs')));
  const text = renderExplanation(e);
  t.match(text, /^  other-team: not selected \(namespaceSelector\)$/m);
  t.match(text, /^  exempting: namespace exempt$/m);
  t.match(text, /^    requestedFields +Warn +warn$/m);
  t.match(text, /^Admission: +would be allowed, with 1 warning$/m);
});

t.test('the audit: a running pod holding the same MAC under a uniqueness policy', async (t) => {
  const set = policies(
    'apiVersion: netattach.io/v1alpha1\nkind: NetworkAttachmentPolicy\nmetadata: {name: unique}\nspec:\n  rules: {uniqueAddresses: {mac: Network}}\n',
  );
  const mac = '02:00:00:00:00:42';
  const holder = { namespace: NS, name: 'first', networks: JSON.stringify([{ name: 'sriov', mac }]) };
  const p = pod('second', [{ name: 'sriov', mac }]);
  const without = explainPod(base(p, { policies: set }));
  t.equal(without.audit.status, 'unavailable', 'no running pods read');
  t.equal(without.admission.verdict, 'allowed', 'nobody holds the MAC');
  const e = explainPod(base(p, { policies: set, livePods: [holder] }));
  t.equal(e.admission.verdict, 'denied', 'admission would deny the duplicate');
  t.match(e.admission.errors[0]!.reason, /first/);
  t.equal(e.audit.status, 'judged');
  t.same(
    e.audit.findings.map((f) => [f.policy, f.rule, f.result]),
    [['unique', 'uniqueAddresses', 'fail']],
  );
  // The running pod itself is never its own duplicate.
  const self = explainPod(base(pod('first', [{ name: 'sriov', mac }]), { policies: set, livePods: [holder], source: 'cluster' }));
  t.equal(self.admission.verdict, 'allowed');
  t.same(self.audit.findings, []);
  t.match(renderExplanation(self), /^Audit: +clean$/m);
});

t.test('pods the webhooks do not see, and pods without networks', async (t) => {
  const e = explainPod(base(pod('p', [{ name: 'missing' }], 'kube-system'), { livePods: [] }));
  t.equal(e.admission.verdict, 'skipped');
  t.equal(explainExitCode(e), 0);
  t.equal(e.audit.status, 'not-audited');
  t.match(renderExplanation(e), /^Admission: +would be admitted without netattach: namespace kube-system/m);
  const bare = explainPod(
    base({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'b' }, spec: { containers: [{ name: 'c' }] } }, { livePods: [] }),
  );
  t.same(bare.networks, []);
  t.equal(bare.audit.reason, 'the pod has no network annotation');
  t.equal(bare.pod.namespace, NS, 'the default namespace');
  const missing = explainPod(base(pod('p', [{ name: 'missing' }])));
  t.equal(missing.networks[0]!.nad.status, 'not-found');
  t.equal(missing.admission.verdict, 'denied');
  t.equal(missing.policies[0]!.rules.find((r) => r.rule === 'networkExists')!.verdict, 'deny');
  t.match(renderExplanation(missing), /^    NAD: +not found$/m);
});

t.test('-o json and yaml: one versioned document, a List for several', async (t) => {
  const a = explainPod(base(pod('a', [{ name: 'sriov' }])));
  const b = explainPod(base(pod('b', [{ name: 'missing' }])));
  const one = JSON.parse(renderExplanations([a], 'json'));
  t.equal(one.formatVersion, EXPLAIN_FORMAT_VERSION);
  t.equal(one.kind, 'PodExplanation');
  t.same(one, JSON.parse(JSON.stringify(a)));
  t.same(parseYaml(renderExplanations([a], 'yaml')), one, 'yaml carries the same document');
  const list = JSON.parse(renderExplanations([a, b], 'json'));
  t.equal(list.kind, 'List');
  t.same(
    list.items.map((x: { pod: { name: string } }) => x.pod.name),
    ['a', 'b'],
  );
  t.match(renderExplanations([a, b], 'describe'), /^Name: +a$[\s\S]*^Name: +b$/m);
});

t.test('a running pod of the same VMI shares its MAC, as admission holds it (migration)', async (t) => {
  const set = policies(
    'apiVersion: netattach.io/v1alpha1\nkind: NetworkAttachmentPolicy\nmetadata: {name: unique}\nspec:\n  rules: {uniqueAddresses: {mac: Network}}\n',
  );
  const mac = '02:00:00:00:00:77';
  const vmi = { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', name: 'vm', uid: 'vmi-uid-1' };
  const networks = [{ name: 'sriov', mac }];
  const source = { namespace: NS, name: 'virt-launcher-vm-a', networks: JSON.stringify(networks), controller: vmi };
  const target = pod('virt-launcher-vm-b', networks);
  (target.metadata as Record<string, unknown>)['ownerReferences'] = [{ ...vmi, controller: true }];
  t.equal(explainPod(base(target, { policies: set, livePods: [source] })).admission.verdict, 'allowed', 'same VMI: one holder');
  const { controller: _, ...stranger } = source;
  t.equal(explainPod(base(target, { policies: set, livePods: [stranger] })).admission.verdict, 'denied', 'a pod of no VMI: a duplicate');
});
