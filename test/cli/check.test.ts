import t from 'tap';
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { run } from '../../src/cli/check.js';
import type { CliIO } from '../../src/cli/io.js';
import { FakeApiServer } from '../kube/fake-apiserver.js';

const ROOT = resolve(import.meta.dirname, '../..');
const FIXTURES = join(ROOT, 'test/fixtures/check');
const STREAM = join(FIXTURES, 'stream.yaml');
const POLICIES = join(ROOT, 'examples/policies');
const NETS = 'k8s.v1.cni.cncf.io/networks';

interface Captured extends CliIO {
  out: () => string;
  err: () => string;
}

function io(stdin = '', env: NodeJS.ProcessEnv = {}): Captured {
  const out: string[] = [];
  const err: string[] = [];
  return {
    stdout: (s) => out.push(s),
    stderr: (s) => err.push(s),
    stdin: Readable.from(stdin ? [stdin] : []),
    env,
    cwd: ROOT,
    out: () => out.join(''),
    err: () => err.join(''),
  };
}

async function check(args: string[], stdin = '', env: NodeJS.ProcessEnv = {}) {
  const cli = io(stdin, env);
  const code = await run(args, cli);
  return { code, out: cli.out(), err: cli.err() };
}

t.test('a kustomize-build-like stream: the denied objects, with file, line, object and field path', async (t) => {
  const r = await check([STREAM]);
  t.equal(r.code, 1, r.err);
  t.equal(r.err, '');
  t.equal(
    r.out,
    [
      `${STREAM}:36: Deployment/prod/du`,
      `  error: spec.template.metadata.annotations[${NETS}][0].mac: Invalid value: "02:00:00:00:00:zz": must be a 6-byte Ethernet MAC (02:23:45:67:89:01, 02-23-45-67-89-01 or 0223.4567.8901) or a 20-byte IPoIB address in the same forms`,
      `${STREAM}:55: CronJob/prod/pm-export`,
      `  error: spec.jobTemplate.spec.template.metadata.annotations[${NETS}][0]: Not found: "prod/oam-net": no such NetworkAttachmentDefinition`,
      '8 objects checked, 2 denied, 2 errors, 0 warnings',
      '',
    ].join('\n'),
  );
});

t.test('stdin: `kustomize build | netattach check -` gives the same verdicts', async (t) => {
  const r = await check(['-o', 'json', '-'], readFileSync(STREAM, 'utf8'));
  t.equal(r.code, 1);
  const doc = JSON.parse(r.out);
  t.equal(doc.version, 1);
  t.same(
    doc.results
      .filter((x: { allowed: boolean }) => !x.allowed)
      .map((x: { file: string; kind: string; name: string; line: number }) => [x.file, x.kind, x.name, x.line]),
    [
      ['<stdin>', 'Deployment', 'du', 36],
      ['<stdin>', 'CronJob', 'pm-export', 55],
    ],
  );
  t.same(doc.summary, { objects: 8, denied: 2, errors: 2, warnings: 0, skipped: 0, readErrors: 0 });
});

t.test('--nads: NADs of the cluster as files; --mutate shows resources and nodeSelector', async (t) => {
  const r = await check(['--nads', join(FIXTURES, 'nads'), '--mutate', '-o', 'json', STREAM]);
  t.equal(r.code, 1, 'the Deployment is still denied');
  const doc = JSON.parse(r.out);
  const byName = (n: string) => doc.results.find((x: { name: string }) => x.name === n);
  t.equal(byName('pm-export').allowed, true, 'oam-net now exists');
  t.same(byName('ru-probe').mutation.resources, {
    probe: { requests: { 'intel.com/sriov_netdevice': '1' }, limits: { 'intel.com/sriov_netdevice': '1' } },
  });
  t.same(byName('ru-probe').mutation.patch, [
    {
      op: 'add',
      path: '/spec/containers/0/resources',
      value: { requests: { 'intel.com/sriov_netdevice': '1' }, limits: { 'intel.com/sriov_netdevice': '1' } },
    },
  ]);
  const text = await check(['--nads', join(FIXTURES, 'nads'), '--mutate', STREAM]);
  t.match(
    text.out,
    `${STREAM}:74: Pod/prod/ru-probe\n  mutate: container probe: requests intel.com/sriov_netdevice=1; limits intel.com/sriov_netdevice=1\n  patch: [`,
  );
});

t.test('an unparseable file among good ones: a clear error, exit 2, the other files still checked', async (t) => {
  const r = await check([join(FIXTURES, 'mixed')]);
  t.equal(r.code, 2);
  t.equal(
    r.err,
    `${join(FIXTURES, 'mixed/b-broken.yaml')}:7:1: error: Flow sequence in block collection must be sufficiently indented and end with a ]\n`,
  );
  t.match(r.out, `${join(FIXTURES, 'mixed/a-nads.yaml')}:12: NetworkAttachmentDefinition/hpc/typo\n  error: spec.config: Invalid value:`);
  t.match(
    r.out,
    `${join(FIXTURES, 'mixed/c-list.json')}:15: Pod/hpc/solver-1\n  error: metadata.annotations[${NETS}][0].infiniband-guid: Invalid value: "not-a-guid"`,
  );
  t.notMatch(r.out, /solver-0|checkpoint|hidden|notes/, 'clean objects quiet; dot files and other extensions not read');
  t.match(r.out, /5 objects checked, 2 denied, 2 errors, 0 warnings, 1 unreadable input \(results incomplete\)\n$/);
  const json = JSON.parse((await check(['-o', 'json', join(FIXTURES, 'mixed')])).out);
  t.same(json.readErrors, [
    {
      file: join(FIXTURES, 'mixed/b-broken.yaml'),
      line: 7,
      column: 1,
      message: 'Flow sequence in block collection must be sufficiently indented and end with a ]',
    },
  ]);
  t.same(
    json.results.map((x: { name: string }) => x.name),
    ['ib-storage', 'typo', 'solver-0', 'solver-1', 'checkpoint'],
  );
});

t.test('a missing file: exit 2, named; the rest checked', async (t) => {
  const r = await check([join(FIXTURES, 'nope.yaml'), STREAM]);
  t.equal(r.code, 2);
  t.equal(r.err, `${join(FIXTURES, 'nope.yaml')}: error: cannot read: no such file or directory\n`);
  t.match(r.out, /8 objects checked, 2 denied/);
});

t.test('--policy with the example policies', async (t) => {
  const dir = t.testdir();
  const manifests = join(dir, 'm.yaml');
  writeFileSync(
    manifests,
    `apiVersion: v1
kind: Namespace
metadata: {name: apps, labels: {gitops.example.com/managed: "true"}}
---
apiVersion: v1
kind: Pod
metadata: {name: early, namespace: apps, annotations: {${NETS}: not-yet}}
spec: {containers: [{name: c, image: busybox}]}
---
apiVersion: v1
kind: Pod
metadata: {name: early, namespace: other, annotations: {${NETS}: not-yet}}
spec: {containers: [{name: c, image: busybox}]}
`,
  );
  const gitops = await check(['--policy', join(POLICIES, 'gitops-missing-nads.yaml'), manifests]);
  t.equal(gitops.code, 1, 'the pod outside the GitOps namespace is still denied');
  t.match(
    gitops.out,
    `${manifests}:5: Pod/apps/early\n  warning: metadata.annotations[${NETS}][0]: Not found: "apps/not-yet": no such NetworkAttachmentDefinition (Warn by policy "gitops-late-nads" (networkExists))\n`,
  );
  t.match(gitops.out, `${manifests}:10: Pod/other/early\n  error:`);

  const crossing = join(dir, 'crossing.yaml');
  writeFileSync(
    crossing,
    `apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: prod, annotations: {${NETS}: "lab/net, default/shared"}}\nspec: {containers: [{name: c, image: i}]}\n`,
  );
  const nads = ['lab/net', 'default/shared'].map((ref) => {
    const [namespace, name] = ref.split('/');
    return `---\napiVersion: k8s.cni.cncf.io/v1\nkind: NetworkAttachmentDefinition\nmetadata: {name: ${name}, namespace: ${namespace}}\nspec: {config: ""}\n`;
  });
  writeFileSync(join(dir, 'nads.yaml'), nads.join(''));
  const isolation = await check(['--policy', join(POLICIES, 'multus-isolation.yaml'), '-o', 'json', crossing, join(dir, 'nads.yaml')]);
  t.equal(isolation.code, 1);
  const denied = JSON.parse(isolation.out).results[0];
  t.same(
    denied.errors.map((e: { path: string; rule: string; policy: string }) => [e.path, e.rule, e.policy]),
    [[`metadata.annotations[${NETS}][0]`, 'allowedNetworks', 'namespace-isolation']],
    'only the NAD of another, non-global namespace',
  );
  const macs = join(dir, 'macs.yaml');
  writeFileSync(
    macs,
    readFileSync(STREAM, 'utf8').replace('"mac": "02:00:00:00:00:zz"', '"mac": "02:00:00:00:00:01"').replace('oam-net', 'macvlan-mgmt'),
  );
  const user = await check(['--policy', join(POLICIES, 'no-user-macs.yaml'), '--user', 'dev', macs]);
  t.equal(user.code, 1);
  t.match(
    user.out,
    /Deployment\/prod\/du\n  error: spec\.template\.metadata\.annotations\[k8s\.v1\.cni\.cncf\.io\/networks\]\[0\]\.mac: Forbidden/,
  );
  const admin = await check(['--policy', join(POLICIES, 'no-user-macs.yaml'), '--user', 'ops', '--group', 'network-admins', macs]);
  t.equal(admin.code, 0, admin.out);
  t.equal(admin.out, '8 objects checked, 0 denied, 0 errors, 0 warnings\n');
});

t.test('an invalid policy file stops with its errors, exit 2', async (t) => {
  const dir = t.testdir({
    'bad.yaml':
      'apiVersion: netattach.io/v1alpha1\nkind: NetworkAttachmentPolicy\nmetadata: {name: bad}\nspec: {rules: {allowedNetworks: {action: Sometimes}}}\n',
  });
  const r = await check(['--policy', join(dir, 'bad.yaml'), STREAM]);
  t.equal(r.code, 2);
  t.equal(r.out, '');
  t.match(r.err, /^netattach check: policy "bad" \(.*bad\.yaml#0\) is invalid: .*action/);
  const missing = await check(['--policy', join(dir, 'none.yaml'), STREAM]);
  t.equal(missing.code, 2);
  t.match(missing.err, /cannot read policy file .*none\.yaml: ENOENT/);
});

t.test('usage errors: exit 2 with a reason', async (t) => {
  const cases: Array<[string[], RegExp]> = [
    [[], /no PATH given/],
    [['-o', 'yaml', STREAM], /--output must be text or json/],
    [['--nads', FIXTURES, '--cluster', STREAM], /mutually exclusive/],
    [['-', '-'], /only once/],
    [['--bogus', STREAM], /Unknown option '--bogus'/],
    [['--namespace', '', STREAM], /--namespace must not be empty/],
    [['--cluster', '--timeout', 'soon', STREAM], /--timeout must be a positive number/],
    [['--plugin-reads', 'acme-cni', STREAM], /--plugin-reads: invalid value "acme-cni"/],
    [['--multus-default-networks', 'two', STREAM], /--multus-default-networks: invalid value "two": a whole number/],
  ];
  for (const [args, message] of cases) {
    const r = await check(args);
    t.equal(r.code, 2, args.join(' '));
    t.match(r.err, message, args.join(' '));
    t.equal(r.out, '');
  }
  const help = await check(['--help']);
  t.equal(help.code, 0);
  t.match(help.out, /^Usage: netattach check/);
});

t.test('--plugin-reads: a third-party plugin declared as a MAC reader turns the warning into a clean pass', async (t) => {
  const nad = {
    apiVersion: 'k8s.cni.cncf.io/v1',
    kind: 'NetworkAttachmentDefinition',
    metadata: { name: 'acme', namespace: 'default' },
    spec: { config: JSON.stringify({ cniVersion: '1.0.0', name: 'acme', type: 'acme-cni' }) },
  };
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'default', annotations: { [NETS]: '[{"name":"acme","mac":"02:00:00:00:00:01"}]' } },
    spec: { containers: [{ name: 'c', image: 'x' }] },
  };
  const input = [nad, pod].map((o) => JSON.stringify(o)).join('\n---\n');
  const plain = await check(['-o', 'json', '-'], input);
  t.equal(plain.code, 0, 'a warning only');
  t.match(plain.out, /may be ignored: netattach does not know plugin \\"acme-cni\\"/);
  const told = await check(['-o', 'json', '--plugin-reads', 'acme-cni=mac', '-'], input);
  t.equal(told.code, 0);
  t.notMatch(told.out, /may be ignored/);
});

t.test('--multus-default-networks: the net<N> names shift, and so does the collision', async (t) => {
  const nad = {
    apiVersion: 'k8s.cni.cncf.io/v1',
    kind: 'NetworkAttachmentDefinition',
    metadata: { name: 'mv', namespace: 'default' },
    spec: { config: JSON.stringify({ cniVersion: '1.0.0', name: 'mv', type: 'macvlan', master: 'eth1' }) },
  };
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'p', namespace: 'default', annotations: { [NETS]: '[{"name":"mv","interface":"net2"},{"name":"mv"}]' } },
    spec: { containers: [{ name: 'c', image: 'x' }] },
  };
  const input = [nad, pod].map((o) => JSON.stringify(o)).join('\n---\n');
  const stated = await check(['-o', 'json', '--multus-default-networks', '0', '-'], input);
  t.equal(stated.code, 1, 'no defaultNetworks, stated: element [1] is net2 too, and macvlan creates net2 first');
  t.match(stated.out, /Multus names element \[1\] \\"net2\\" too/);
  const unstated = await check(['-o', 'json', '-'], input);
  t.equal(
    unstated.code,
    0,
    'the count not stated: the same pod works on a cluster whose Multus has one defaultNetwork, so it is not denied',
  );
  t.match(unstated.out, /Multus names element \[1\] \\"net2\\" too .*when Multus's config has no defaultNetworks/);
  const shifted = await check(['-o', 'json', '--multus-default-networks', '1', '-'], input);
  t.equal(shifted.code, 0, 'one defaultNetwork: element [1] is net3');
});

t.test('--nads with an unreadable file: exit 2 before checking', async (t) => {
  const dir = t.testdir({ 'nads.yaml': 'kind: [\n' });
  const r = await check(['--nads', dir, STREAM]);
  t.equal(r.code, 2);
  t.match(r.err, /nads\.yaml:2:1: error: --nads: /);
  t.equal(r.out, '');
});

t.test('--cluster: NADs and namespace labels from the API server, read once', async (t) => {
  const api = new FakeApiServer();
  await api.start();
  t.teardown(() => api.stop());
  api.setList(
    '/apis/k8s.cni.cncf.io/v1/network-attachment-definitions',
    [
      {
        apiVersion: 'k8s.cni.cncf.io/v1',
        kind: 'NetworkAttachmentDefinition',
        metadata: { name: 'oam-net', namespace: 'prod', resourceVersion: '5' },
        spec: { config: '' },
      },
    ],
    '10',
  );
  api.setList('/api/v1/namespaces', [{ metadata: { name: 'prod', labels: { 'gitops.example.com/managed': 'true' } } }], '11');
  const dir = t.testdir();
  const kubeconfig = join(dir, 'config');
  writeFileSync(kubeconfig, api.kubeconfig());
  const r = await check(['--cluster', '--timeout', '5', '-o', 'json', STREAM], '', { KUBECONFIG: kubeconfig });
  t.equal(r.err, '');
  const doc = JSON.parse(r.out);
  t.equal(doc.results.find((x: { name: string }) => x.name === 'pm-export').allowed, true, 'oam-net found in the cluster');
  t.ok(
    api.requests.every((q) => q.method === 'GET'),
    'read-only',
  );
  t.equal(r.code, 1, 'the Deployment with a bad MAC is still denied');

  // Namespace labels from the cluster select the GitOps policy; the Namespace object in the stream wins, so strip it.
  const noNamespace = join(dir, 'm.yaml');
  writeFileSync(
    noNamespace,
    `apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: prod, annotations: {${NETS}: late}}\nspec: {containers: [{name: c, image: i}]}\n`,
  );
  const gitops = await check(['--cluster', '--policy', join(POLICIES, 'gitops-missing-nads.yaml'), noNamespace], '', {
    KUBECONFIG: kubeconfig,
  });
  t.equal(gitops.code, 0, gitops.out + gitops.err);
  t.match(gitops.out, /warning: .*Not found: "prod\/late".*gitops-late-nads/);
});

t.test('--cluster with DRA: how each network is served, and the templates pods need', async (t) => {
  const api = new FakeApiServer();
  await api.start();
  t.teardown(() => api.stop());
  const nadOf = (name: string, annotations: Record<string, string>) => ({
    apiVersion: 'k8s.cni.cncf.io/v1',
    kind: 'NetworkAttachmentDefinition',
    metadata: { name, namespace: 'prod', resourceVersion: '5', annotations },
    spec: { config: '' },
  });
  api.setList(
    '/apis/k8s.cni.cncf.io/v1/network-attachment-definitions',
    [
      nadOf('plugin', { 'k8s.v1.cni.cncf.io/resourceName': 'intel.com/sriov_a' }),
      nadOf('dra-ext', { 'k8s.v1.cni.cncf.io/resourceName': 'example.com/nic' }),
      nadOf('claimed', { 'k8s.v1.cni.cncf.io/resourceName': 'example.com/nic2', 'netattach.io/resourceClaimTemplate': 'nic2' }),
      nadOf('plain', {}),
    ],
    '10',
  );
  api.setList('/api/v1/namespaces', [{ metadata: { name: 'prod' } }], '11');
  api.setList(
    '/apis/resource.k8s.io/v1/deviceclasses',
    [
      { metadata: { name: 'nic-a', creationTimestamp: '2026-01-01T00:00:00Z' }, spec: { extendedResourceName: 'example.com/nic' } },
      { metadata: { name: 'nic-b', creationTimestamp: '2026-02-01T00:00:00Z' }, spec: { extendedResourceName: 'example.com/nic' } },
    ],
    '12',
  );
  api.setList('/apis/resource.k8s.io/v1/resourceclaimtemplates', [{ metadata: { name: 'nic2', namespace: 'other' } }], '13');
  const dir = t.testdir();
  const kubeconfig = join(dir, 'config');
  writeFileSync(kubeconfig, api.kubeconfig());
  const manifest = join(dir, 'p.yaml');
  writeFileSync(
    manifest,
    `apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: prod, annotations: {${NETS}: claimed}}\nspec: {containers: [{name: c, image: i}]}\n`,
  );
  const r = await check(['--cluster', '--timeout', '5', manifest], '', { KUBECONFIG: kubeconfig });
  t.equal(r.err, '');
  t.equal(r.code, 1, 'the pod is denied: prod has no template nic2');
  t.match(r.out, /Not found: "prod\/nic2": the network's device is claimed from ResourceClaimTemplate nic2, which namespace prod lacks/);
  t.match(r.out, /networks \(how each device is served\):\n/);
  t.match(r.out, /  prod\/plugin: extended resources: intel\.com\/sriov_a via a device plugin\n/);
  t.match(
    r.out,
    /  prod\/dra-ext: extended resources: example\.com\/nic via DeviceClass nic-b \(DRA\)\n    missing: DeviceClasses nic-b, nic-a share extendedResourceName example\.com\/nic; the scheduler picks nic-b\n/,
  );
  t.match(r.out, /  prod\/claimed: explicit DRA claims from ResourceClaimTemplate nic2 in the pod's namespace \(present in other\)\n/);
  t.notMatch(r.out, /prod\/plain/, 'networks without a device are not listed');

  // With the template in the inputs, the pod passes and gets its claim.
  writeFileSync(
    manifest,
    `${readFileSync(manifest, 'utf8')}---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: nic2, namespace: prod}\nspec: {spec: {devices: {requests: [{name: nic, exactly: {deviceClassName: nic}}]}}}\n`,
  );
  const json = await check(['--cluster', '--mutate', '-o', 'json', manifest], '', { KUBECONFIG: kubeconfig });
  t.equal(json.code, 0, json.out + json.err);
  const doc = JSON.parse(json.out);
  t.match(JSON.stringify(doc.results[0].mutation.patch), /"resourceClaimTemplateName":"nic2"/);
  t.same(
    doc.networks.map((n: { name: string; path: string }) => `${n.name}:${n.path}`),
    ['plugin:device-plugin', 'dra-ext:dra-extended-resource', 'claimed:claim-template'],
  );
});

t.test('--cluster: no kubeconfig, or an unreachable server, is exit 2 with a clear error', async (t) => {
  const none = await check(['--cluster', STREAM], '', { HOME: t.testdir(), KUBECONFIG: '' });
  t.equal(none.code, 2);
  t.match(none.err, /--cluster: no kubeconfig found/);

  const api = new FakeApiServer();
  await api.start();
  const config = api.kubeconfig();
  await api.stop(); // the port is now closed
  const dir = t.testdir();
  writeFileSync(join(dir, 'config'), config);
  const started = Date.now();
  const down = await check(['--cluster', '--timeout', '1', STREAM], '', { KUBECONFIG: join(dir, 'config') });
  t.equal(down.code, 2);
  t.match(
    down.err,
    /^netattach check: --cluster: cannot list NetworkAttachmentDefinitions from http:\/\/127\.0\.0\.1:\d+ within 1s: .*ECONNREFUSED/,
  );
  t.ok(Date.now() - started < 5000, 'gives up after the timeout');
  t.equal(down.out, '');
});

t.test('the real binary, as a subprocess: stdin, exit code and output', async (t) => {
  const child = execFile(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'check', '-'], { cwd: ROOT });
  child.stdin!.end(readFileSync(STREAM));
  let out = '';
  child.stdout!.on('data', (chunk: string) => (out += chunk));
  const code = await new Promise<number | null>((done) => child.on('close', done));
  t.equal(code, 1);
  t.match(out, /^<stdin>:36: Deployment\/prod\/du\n  error: spec\.template\.metadata\.annotations/);
  t.match(out, /8 objects checked, 2 denied, 2 errors, 0 warnings\n$/);
  const usage = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'check'], { cwd: ROOT }).catch(
    (e: { code: number; stderr: string }) => e,
  );
  t.equal((usage as { code: number }).code, 2);
});

t.test('nothing to judge (issue 25): an empty stream, or only kinds no webhook sees, is exit 2 with the kinds counted', async (t) => {
  const empty = await check(['-']);
  t.equal(empty.code, 2, 'an empty `kustomize build |` is a failed pipeline, not a clean apply');
  t.match(empty.out, /^0 objects checked/, 'the report is still printed');
  t.match(empty.err, /^netattach check: nothing to judge: the input holds no objects; check judges Pods, workloads/);
  const others = await check(
    ['-o', 'json', '-'],
    'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Service\nmetadata: {name: s}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: b}\n',
  );
  t.equal(others.code, 2);
  t.match(others.err, /nothing to judge: 3 objects skipped \(2 ConfigMap, 1 Service\)/);
  t.equal(JSON.parse(others.out).summary.objects, 3, 'JSON still printed for CI scripts');
  const judged = await check(
    ['-'],
    'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: x}]}\n',
  );
  t.equal(judged.code, 0, 'one Pod among them is enough');
  t.equal(judged.err, '');
});

t.test("--address-sharing-owner: as serve's flag, it decides whether one owner's pods share a MAC", async (t) => {
  const pod = (name: string) =>
    `apiVersion: v1\nkind: Pod\nmetadata:\n  name: ${name}\n  namespace: vms\n  annotations: {${NETS}: '[{"name":"br","mac":"02:00:00:00:aa:01"}]'}\n  ownerReferences: [{apiVersion: kubevirt.io/v1, kind: VirtualMachineInstance, name: vm1, uid: u1, controller: true}]\nspec: {containers: [{name: c, image: x}]}\n---\n`;
  const nadDoc = `apiVersion: k8s.cni.cncf.io/v1\nkind: NetworkAttachmentDefinition\nmetadata: {name: br, namespace: vms}\nspec: {config: '{"cniVersion":"1.0.0","name":"br","type":"bridge"}'}\n---\n`;
  const policy = join(
    t.testdir({
      'p.yaml':
        'apiVersion: netattach.io/v1alpha1\nkind: NetworkAttachmentPolicy\nmetadata: {name: unique-macs}\nspec:\n  rules:\n    uniqueAddresses: {mac: Network}\n',
    }),
    'p.yaml',
  );
  const input = nadDoc + pod('src') + pod('dst');
  t.equal((await check(['--policy', policy, '-'], input)).code, 0, "the default: a VMI's pods hold the MAC as one");
  const r = await check(['--policy', policy, '--address-sharing-owner', 'example.com/Mover', '-'], input);
  t.equal(r.code, 1);
  t.match(r.out, /already used by pod vms\/src/);
});

t.test("--default-network-namespace and --resource-name-key: as serve's flags, they change the verdict alike", async (t) => {
  const input = `apiVersion: k8s.cni.cncf.io/v1\nkind: NetworkAttachmentDefinition\nmetadata: {name: cluster-net, namespace: infra, annotations: {example.com/resource: intel.com/vf}}\nspec: {config: '{"cniVersion":"1.0.0","name":"n","type":"bridge"}'}\n---\napiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: team-a, annotations: {v1.multus-cni.io/default-network: cluster-net}}\nspec: {containers: [{name: c, image: x}]}\n`;
  const plain = await check(['-'], input);
  t.equal(plain.code, 1, 'an unqualified default network resolves in kube-system by default');
  t.match(plain.out, /kube-system\/cluster-net/);
  t.equal((await check(['--default-network-namespace', 'infra', '-'], input)).code, 0);
  const keyed = await check(
    ['--default-network-namespace', 'infra', '--resource-name-key', 'example.com/resource', '--mutate', '-'],
    input,
  );
  t.equal(keyed.code, 0);
  t.match(keyed.out, /requests intel\.com\/vf=1/, 'the extra key names the device resource');
  const bad = await check(['--default-network-namespace', 'Not_A_Namespace', '-'], input);
  t.equal(bad.code, 2);
  t.match(bad.err, /--default-network-namespace: invalid value "Not_A_Namespace"/);
});

t.test("--cluster: KubeVirt's binding plugins from the cluster; no KubeVirt is not waited out", async (t) => {
  const api = new FakeApiServer();
  await api.start();
  t.teardown(() => api.stop());
  api.setList('/apis/k8s.cni.cncf.io/v1/network-attachment-definitions', [], '10');
  api.setList('/api/v1/namespaces', [{ metadata: { name: 'apps' } }], '11');
  const dir = t.testdir();
  const kubeconfig = join(dir, 'config');
  writeFileSync(kubeconfig, api.kubeconfig());
  const vm = join(dir, 'vm.yaml');
  writeFileSync(
    vm,
    'apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {name: v, namespace: apps}\nspec:\n  runStrategy: Always\n  template:\n    spec:\n      domain: {devices: {interfaces: [{name: default, binding: {name: passt}}]}}\n      networks: [{name: default, pod: {}}]\n',
  );
  const started = Date.now();
  const before = await check(['--cluster', '--timeout', '20', vm], '', { KUBECONFIG: kubeconfig });
  t.equal(before.code, 0, 'no KubeVirt CRD: the binding only noted');
  t.match(before.out, /binding plugin "passt": its NetworkAttachmentDefinition .* is not known here/);
  t.ok(Date.now() - started < 10_000, 'the 404 is an answer: the 20 s timeout is not waited out');
  api.setList(
    '/apis/kubevirt.io/v1/kubevirts',
    [
      {
        apiVersion: 'kubevirt.io/v1',
        kind: 'KubeVirt',
        metadata: { name: 'kubevirt', namespace: 'kubevirt', resourceVersion: '3' },
        spec: { configuration: { network: { binding: { passt: { networkAttachmentDefinition: 'default/netbindingpasst' } } } } },
        status: { phase: 'Deployed' },
      },
    ],
    '12',
  );
  const after = await check(['--cluster', '--timeout', '5', vm], '', { KUBECONFIG: kubeconfig });
  t.equal(after.code, 1, after.out + after.err);
  t.match(after.out, /spec\.template\.spec\.domain\.devices\.interfaces\[0\]\.binding\.name: Not found: "default\/netbindingpasst"/);
});
