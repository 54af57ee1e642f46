// `netattach audit`: from files and from a cluster, table and JSON, exit codes; the same findings
// and messages as serve's background audit.
import t from 'tap';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { run } from '../../src/cli/audit.js';
import { main } from '../../src/cli/main.js';
import type { CliIO } from '../../src/cli/io.js';
import { BackgroundAudit, rowsOf } from '../../src/audit/index.js';
import { DEFAULT_ADMISSION_CONFIG } from '../../src/admission/index.js';
import { nadFromObject, nadKey } from '../../src/nads/index.js';
import { AddressIndex, NadUsage, PolicyEngine, loadPolicyDocuments, podNetworkFacts, policySet } from '../../src/policy/index.js';
import { parse as parseYaml } from 'yaml';
import { FakeApiServer } from '../kube/fake-apiserver.js';
import { hostileNetworks } from '../audit/helpers.js';

const ROOT = resolve(import.meta.dirname, '../..');
const CLUSTER = join(ROOT, 'test/fixtures/audit/cluster.yaml');
const POLICIES = join(ROOT, 'test/fixtures/audit/policies.yaml');

function io(stdin = '', env: NodeJS.ProcessEnv = {}) {
  const out: string[] = [];
  const err: string[] = [];
  const cli: CliIO = { stdout: (s) => out.push(s), stderr: (s) => err.push(s), stdin: Readable.from(stdin ? [stdin] : []), env, cwd: ROOT };
  return { cli, out: () => out.join(''), err: () => err.join('') };
}

async function audit(args: string[], stdin = '', env: NodeJS.ProcessEnv = {}) {
  const c = io(stdin, env);
  const code = await run(args, c.cli);
  return { code, out: c.out(), err: c.err() };
}

t.test('files: a table of findings, exit 1 for an Enforce violation', async (t) => {
  const r = await audit(['--policy', POLICIES, CLUSTER]);
  t.equal(r.err, '');
  t.equal(r.code, 1);
  const lines = r.out.split('\n');
  t.match(lines[0], /^NAMESPACE\s+RESOURCE\s+POLICY\s+RULE\s+RESULT\s+ACTION\s+MESSAGE$/);
  t.match(
    r.out,
    /team-a\s+pod\/du-0\s+unique-macs\s+uniqueAddresses\s+fail\s+Enforce\s+metadata\.annotations\[k8s\.v1\.cni\.cncf\.io\/networks\]\[0\]\.mac: Forbidden: policy "unique-macs" \(uniqueAddresses\): .*already used by pod team-a\/du-1 \(running\)/,
  );
  t.match(r.out, /team-a\s+pod\/du-1\s+unique-macs/);
  t.match(r.out, /team-a\s+pod\/oam\s+prod-sriov-only\s+allowedNetworks\s+warn\s+Warn/);
  t.match(
    r.out,
    /team-a\s+net-attach-def\/legacy\s+builtin\s+nadValid\s+fail\s+Enforce\s+metadata\.annotations\[k8s\.v1\.cni\.cncf\.io\/resourceName\]: Invalid value: "intel\.com\/sriov_netdevice,": empty item in the comma-separated list/,
    'a NAD stored before netattach, which the NAD webhook would deny now',
  );
  t.notMatch(r.out, /done|web/, 'finished pods and pods without networks are not audited');
  t.notMatch(r.out, /broken/, 'NADs in namespaces the webhooks do not see are not audited');
  t.match(lines.at(-2), /^3 pods with networks and 3 NADs audited: 2 clean, 3 fail, 1 warn, 0 skip, 0 error$/);
});

t.test('files: JSON naming pods and NADs; no finding is exit 0; no policy is the built-in checks only', async (t) => {
  const r = await audit(['-o', 'json', '--policy', POLICIES, CLUSTER]);
  const doc = JSON.parse(r.out);
  t.equal(doc.formatVersion, 1);
  t.same(doc.summary, { pods: 3, nads: 3, pass: 2, fail: 3, warn: 1, error: 0, skip: 0 });
  t.same(
    doc.findings.map((f: { kind: string; name: string; rule: string }) => `${f.kind}/${f.name}/${f.rule}`),
    ['Pod/du-0/uniqueAddresses', 'Pod/du-1/uniqueAddresses', 'Pod/oam/allowedNetworks', 'NetworkAttachmentDefinition/legacy/nadValid'],
  );
  t.same(
    doc.findings.map((f: { pod?: string }) => f.pod),
    ['du-0', 'du-1', 'oam', undefined],
    'pod rows keep `pod` (format version 1); NAD rows have none',
  );
  t.match(doc.findings[3], {
    namespace: 'team-a',
    kind: 'NetworkAttachmentDefinition',
    name: 'legacy',
    uid: 'n2',
    policy: 'builtin',
    action: 'Enforce',
    result: 'fail',
    severity: 'high',
  });
  const none = await audit([CLUSTER]);
  t.equal(none.code, 1, 'no policy: the built-in checks only, and the NAD the webhook would deny breaks one');
  t.match(
    none.out,
    /^NAMESPACE\s+RESOURCE.*\nteam-a\s+net-attach-def\/legacy\s+builtin\s+nadValid\s+fail.*\n3 pods with networks and 3 NADs audited: 5 clean, 1 fail, 0 warn, 0 skip, 0 error\n$/,
  );
  const withoutLegacy = readFileSync(CLUSTER, 'utf8').replace(
    /\n {2}- apiVersion: k8s.cni.cncf.io\/v1\n {4}kind: NetworkAttachmentDefinition\n {4}metadata: \{name: legacy,[^\n]*\n[^\n]*/,
    '',
  );
  t.notMatch(withoutLegacy, /legacy/);
  const clean = await audit(['-'], withoutLegacy);
  t.equal(clean.code, 0);
  t.equal(clean.out, '3 pods with networks and 2 NADs audited: 5 clean, 0 fail, 0 warn, 0 skip, 0 error\n');
  const stdin = await audit(['-o', 'json', '--policy', POLICIES, '-'], readFileSync(CLUSTER, 'utf8'));
  t.same(JSON.parse(stdin.out), doc, 'stdin reads the same');
});

t.test("the same findings and messages as serve's background audit", async (t) => {
  const r = await audit(['-o', 'json', '--policy', POLICIES, CLUSTER]);
  const fromCli = JSON.parse(r.out).findings;
  // serve: the pod watch feeds the index, the usage map and the audit; the engine holds the policies.
  const items = (parseYaml(readFileSync(CLUSTER, 'utf8')) as { items: Array<Record<string, any>> }).items;
  const nads = new Map(
    items
      .filter((i) => i['kind'] === 'NetworkAttachmentDefinition')
      .map((i) => nadFromObject(i))
      .map((n) => [nadKey(n.namespace, n.name), n]),
  );
  const index = new AddressIndex();
  const usage = new NadUsage();
  const { policies } = loadPolicyDocuments(readFileSync(POLICIES, 'utf8'), 'p');
  const engine = new PolicyEngine({ index, policies: policySet(policies) });
  const bg = new BackgroundAudit({
    nads: { get: (ns, n) => nads.get(nadKey(ns, n)), list: () => [...nads.values()], synced: () => true },
    namespaceLabels: (ns): Record<string, string> => (ns === 'team-a' ? { tier: 'prod' } : {}),
    engine,
    index,
    config: DEFAULT_ADMISSION_CONFIG,
    podsUsingNad: (ns, n) => usage.podsUsing(ns, n),
    ready: () => true,
  });
  for (const p of items.filter((i) => i['kind'] === 'Pod' && i['status']?.phase === 'Running')) {
    const md = p['metadata'];
    const facts = podNetworkFacts(md.namespace, md.annotations?.['k8s.v1.cni.cncf.io/networks']);
    index.setPod({ namespace: md.namespace, name: md.name, uid: md.uid }, facts.addresses);
    usage.setPod(md.namespace, md.name, facts.nads);
    bg.upsert({ metadata: md });
  }
  // The NAD cache's watch hands the NAD objects to the audit (serve: nadSource.observe).
  bg.nadWatch.resync();
  for (const n of items.filter((i) => i['kind'] === 'NetworkAttachmentDefinition')) bg.nadWatch.upsert(n);
  bg.nadWatch.resynced();
  bg.drain();
  t.ok(bg.allNadFindings().length > 0, 'a NAD is among the findings');
  t.same(rowsOf(bg.allFindings(), bg.allNadFindings()), fromCli);
});

t.test('--cluster: live pods, NADs, namespace labels and policies from the API server, read-only', async (t) => {
  const api = new FakeApiServer();
  await api.start();
  t.teardown(() => api.stop());
  const items = (parseYaml(readFileSync(CLUSTER, 'utf8')) as { items: Array<Record<string, any>> }).items;
  const running = items.filter((i) => i['kind'] === 'Pod' && i['status']?.phase === 'Running').map((p) => ({ metadata: p['metadata'] }));
  api.setList('/api/v1/pods', running, '20');
  api.setList(
    '/apis/k8s.cni.cncf.io/v1/network-attachment-definitions',
    items.filter((i) => i['kind'] === 'NetworkAttachmentDefinition'),
    '21',
  );
  api.setList('/api/v1/namespaces', [{ metadata: { name: 'team-a', labels: { tier: 'prod' } } }], '22');
  const docs = readFileSync(POLICIES, 'utf8')
    .split('---')
    .map((d) => parseYaml(d));
  api.setList('/apis/netattach.io/v1alpha1/networkattachmentpolicies', docs, '23');
  const dir = t.testdir();
  writeFileSync(join(dir, 'config'), api.kubeconfig());
  const env = { KUBECONFIG: join(dir, 'config') };
  const fromCluster = await audit(['--cluster', '--timeout', '5', '-o', 'json'], '', env);
  t.equal(fromCluster.err, '');
  t.equal(fromCluster.code, 1);
  const fromFiles = await audit(['-o', 'json', '--policy', POLICIES, CLUSTER]);
  t.same(JSON.parse(fromCluster.out), JSON.parse(fromFiles.out), 'the cluster and the same state in files agree');
  t.ok(
    JSON.parse(fromCluster.out).findings.some(
      (f: { kind: string; name: string }) => f.kind === 'NetworkAttachmentDefinition' && f.name === 'legacy',
    ),
    'the NADs of the cluster are judged themselves',
  );
  t.ok(
    api.requests.every((q) => q.method === 'GET'),
    'read-only',
  );
  t.ok(
    api.requests.some((q) => q.path === '/api/v1/pods' && /status.phase/.test(q.query.get('fieldSelector') ?? '')),
    'live pods only',
  );
});

t.test('--cluster without the policy CRD: built-in checks, with a warning', async (t) => {
  const api = new FakeApiServer();
  await api.start();
  t.teardown(() => api.stop());
  api.setList(
    '/api/v1/pods',
    [{ metadata: { name: 'p', namespace: 'a', annotations: { 'k8s.v1.cni.cncf.io/networks': 'missing' } } }],
    '1',
  );
  api.setList('/apis/k8s.cni.cncf.io/v1/network-attachment-definitions', [], '2');
  api.setList('/api/v1/namespaces', [], '3');
  const dir = t.testdir();
  writeFileSync(join(dir, 'config'), api.kubeconfig());
  const r = await audit(['--cluster', '--timeout', '2'], '', { KUBECONFIG: join(dir, 'config') });
  t.equal(r.code, 1);
  t.match(r.err, /warning: no NetworkAttachmentPolicy CRD in the cluster: built-in checks only/);
  t.match(r.out, /a\s+pod\/p\s+builtin\s+networkExists\s+fail\s+Enforce/);
});

/** A `kubectl get pods -o json` List of pods with networks. */
const podList = (pods: Array<{ namespace: string; name: string; networks: string }>): string =>
  JSON.stringify({
    apiVersion: 'v1',
    kind: 'List',
    items: pods.map((p) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { namespace: p.namespace, name: p.name, uid: `u-${p.name}`, annotations: { 'k8s.v1.cni.cncf.io/networks': p.networks } },
      spec: { containers: [{ name: 'c' }] },
    })),
  });

t.test(
  'issue 24 finding 3: five hostile pods give a bounded JSON output; the summary, the omitted count and the exit code count every finding',
  async (t) => {
    const r = await audit(
      ['-o', 'json', '-'],
      podList(Array.from({ length: 5 }, (_, i) => ({ namespace: 'evil', name: `h-${i}`, networks: hostileNetworks() }))),
    );
    t.equal(r.code, 1);
    t.ok(Buffer.byteLength(r.out) <= 1024 * 1024, `output ${Buffer.byteLength(r.out)} bytes (was 100 MB)`);
    const doc = JSON.parse(r.out) as {
      summary: Record<string, number>;
      findings: Array<{ message: string }>;
      omitted?: Array<{ namespace: string; findings: number }>;
    };
    t.ok(doc.summary.fail! >= 500, `every error counted (${doc.summary.fail})`);
    t.ok(Math.max(...doc.findings.map((f) => Buffer.byteLength(f.message))) <= 1024, 'messages cut to 1 KiB');
    t.equal(doc.findings.length + (doc.omitted?.[0]?.findings ?? 0), doc.summary.fail, 'printed and omitted add up to the summary');
    // Since keys are cut in paths (src/field), the 505 findings fit the namespace's 512 KiB: none
    // omitted. The bound itself is exercised by the next test.
    t.same(
      doc.omitted ?? [],
      doc.findings.length < doc.summary.fail! ? [{ namespace: 'evil', findings: doc.summary.fail! - doc.findings.length }] : [],
    );
  },
);

t.test(
  'many findings in a namespace: the table prints the worst within the bound, then "N more"; the exit code counts them all',
  async (t) => {
    const pods = Array.from({ length: 1500 }, (_, i) => ({
      namespace: 'big',
      name: `p-${String(i).padStart(4, '0')}`,
      networks: 'missing',
    }));
    const r = await audit(['-'], podList([...pods, { namespace: 'small', name: 'one', networks: 'missing' }]));
    t.equal(r.code, 1);
    const lines = r.out.trimEnd().split('\n');
    t.equal(lines.filter((l) => /^big\s/.test(l)).length, 1000, 'at most 1,000 findings printed per namespace');
    t.equal(lines.filter((l) => /^small\s/.test(l)).length, 1, 'another namespace is printed in full');
    t.equal(lines.at(-2), '... and 500 more findings in namespace big (not shown; counted below)');
    t.match(lines.at(-1), /^1501 pods with networks and 0 NADs audited: 0 clean, 1501 fail/);
  },
);

t.test('usage errors are exit 2', async (t) => {
  t.equal((await audit([])).code, 2);
  t.equal((await audit(['--cluster', CLUSTER])).code, 2);
  t.equal((await audit(['-o', 'yaml', CLUSTER])).code, 2);
  const missing = await audit(['/nonexistent/file.yaml']);
  t.equal(missing.code, 2);
  t.match(missing.err, /nonexistent/);
  t.equal((await audit(['--policy', '/nonexistent.yaml', CLUSTER])).code, 2);
  const help = io();
  t.equal(await main(['audit', '--help'], help.cli), 0);
  t.match(help.out(), /Usage: netattach audit/);
});

t.test('nothing to judge (issue 25): an empty stream or only other kinds is exit 2, saying what was skipped', async (t) => {
  const empty = await audit(['-']);
  t.equal(empty.code, 2, 'an empty `kubectl get ... |` is a failed pipeline, not a clean cluster');
  t.equal(
    empty.err,
    "netattach audit: nothing to judge: the input holds no objects; audit judges Pods and NetworkAttachmentDefinitions (e.g. 'kubectl get pods,namespaces,net-attach-def -A -o yaml')\n",
  );
  const emptyList = await audit(['-'], 'apiVersion: v1\nkind: List\nitems: []\n');
  t.equal(emptyList.code, 2, 'an empty List too');
  const others = await audit(
    ['-o', 'json', '-'],
    'apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: a}}\n- {apiVersion: v1, kind: Service, metadata: {name: s}}\n- {apiVersion: v1, kind: ConfigMap, metadata: {name: b}}\n- {apiVersion: v1, kind: Namespace, metadata: {name: team-a}}\n',
  );
  t.equal(others.code, 2);
  t.match(
    others.err,
    /^netattach audit: nothing to judge: 4 objects skipped \(2 ConfigMap, 1 Namespace, 1 Service\); audit judges Pods and NetworkAttachmentDefinitions/,
  );
  t.same(JSON.parse(others.out).summary, { pods: 0, nads: 0, pass: 0, fail: 0, warn: 0, error: 0, skip: 0 }, 'the output is still printed');
  const finished = await audit(['-'], 'apiVersion: v1\nkind: Pod\nmetadata: {name: done, namespace: team-a}\nstatus: {phase: Succeeded}\n');
  t.equal(finished.code, 0, 'a Pod is something judged, even one that finished (it holds no network)');
  const nadsOnly = await audit(['--nads', CLUSTER, '-'], 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n');
  t.not(nadsOnly.code, 2, 'NADs from --nads are judged');
});

t.test('a live migration: the two virt-launcher pods of one VMI are not a uniqueness violation (issue 25)', async (t) => {
  const launcher = (name: string, vmi: string) =>
    `- apiVersion: v1\n  kind: Pod\n  metadata:\n    name: ${name}\n    namespace: team-a\n    uid: uid-${name}\n    annotations: {k8s.v1.cni.cncf.io/networks: '[{"name":"sriov-net","mac":"02:00:00:00:aa:01"}]'}\n    ownerReferences: [{apiVersion: kubevirt.io/v1, kind: VirtualMachineInstance, name: ${vmi}, uid: uid-${vmi}, controller: true}]\n`;
  const nadYaml = `- apiVersion: k8s.cni.cncf.io/v1\n  kind: NetworkAttachmentDefinition\n  metadata: {name: sriov-net, namespace: team-a, annotations: {k8s.v1.cni.cncf.io/resourceName: intel.com/vf}}\n  spec: {config: '{"cniVersion":"1.0.0","name":"sriov-net","type":"sriov"}'}\n`;
  const policy = join(
    t.testdir({
      'p.yaml':
        'apiVersion: netattach.io/v1alpha1\nkind: NetworkAttachmentPolicy\nmetadata: {name: unique-macs}\nspec:\n  rules:\n    uniqueAddresses: {mac: Network}\n',
    }),
    'p.yaml',
  );
  const migration = `apiVersion: v1\nkind: List\nitems:\n${nadYaml}${launcher('virt-launcher-vm1-src', 'vm1')}${launcher('virt-launcher-vm1-dst', 'vm1')}`;
  const r = await audit(['--policy', policy, '-'], migration);
  t.equal(r.code, 0, r.out);
  t.equal(r.out, '2 pods with networks and 1 NAD audited: 3 clean, 0 fail, 0 warn, 0 skip, 0 error\n');
  const notShared = await audit(['--policy', policy, '--address-sharing-owner', 'example.com/Mover', '-'], migration);
  t.equal(notShared.code, 1, "--address-sharing-owner replaces the owners, as serve's flag does");
  t.match(notShared.out, /vm\/vm1 \(pod\/virt-launcher-vm1-src\)\s+unique-macs\s+uniqueAddresses\s+fail/);
  const twoVms = await audit(
    ['--policy', policy, '-'],
    `apiVersion: v1\nkind: List\nitems:\n${nadYaml}${launcher('virt-launcher-vm1-src', 'vm1')}${launcher('virt-launcher-vm2-src', 'vm2')}`,
  );
  t.equal(twoVms.code, 1, 'two VMs with one MAC still conflict');
  t.match(twoVms.out, /already used by VM team-a\/vm2/);
  const bad = await audit(['--address-sharing-owner', 'nope', '-'], migration);
  t.equal(bad.code, 2);
  t.match(bad.err, /--address-sharing-owner: invalid value "nope"/);
});

t.test("--default-network-namespace: as serve's flag, an unqualified default network resolves there", async (t) => {
  const input = `apiVersion: v1\nkind: List\nitems:\n- apiVersion: k8s.cni.cncf.io/v1\n  kind: NetworkAttachmentDefinition\n  metadata: {name: cluster-net, namespace: infra}\n  spec: {config: '{"cniVersion":"1.0.0","name":"n","type":"bridge"}'}\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: p, namespace: team-a, annotations: {v1.multus-cni.io/default-network: cluster-net}}\n`;
  const plain = await audit(['-'], input);
  t.equal(plain.code, 1);
  t.match(plain.out, /pod\/p\s+builtin\s+networkExists/);
  const flagged = await audit(['--default-network-namespace', 'infra', '-'], input);
  t.equal(flagged.code, 0, flagged.out);
});
