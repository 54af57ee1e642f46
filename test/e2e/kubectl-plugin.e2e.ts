/**
 * End-to-end: `kubectl netattach` driven through a real kubectl against the e2e apiserver, as a
 * user types it. The plugin is dist/src/cli/main.js put on PATH as `kubectl-netattach` (a symlink,
 * as `npm i -g` makes one); kubectl finds it and passes the arguments on. What explain says must be
 * what admission decided: the pod it admitted is "would be allowed", the pod it denied (given as a
 * file) is "would be denied" with the reasons of the apiserver's denial text.
 */
import t from 'tap';
import os from 'node:os';
import path from 'node:path';
import { existsSync, statSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { run, startE2e, type E2e } from './lib/env.js';
import { MAIN, REPO } from './lib/netattach.js';
import { macvlanConfig, namespace, nad, pod, policy, sriovConfig, RESOURCE_NAME } from './lib/objects.js';
import type { KubectlResult } from './infra/cluster.js';

const NS = 'e2e-kubectl';
const RES = 'intel.com/e2e_vf';
let e: E2e;
let bin: string;

t.before(async () => {
  e = await startE2e((m) => t.comment(m));
  bin = await mkdtemp(path.join(os.tmpdir(), 'netattach-plugin-'));
  // What `npm i -g` does for a bin: the target made executable, a link named for the plugin.
  await chmod(MAIN, 0o755);
  await symlink(MAIN, path.join(bin, 'kubectl-netattach'));
  await e.applyOk([
    namespace(NS),
    nad({ namespace: NS, name: 'sriov', config: sriovConfig('sriov'), annotations: { [RESOURCE_NAME]: RES } }),
    nad({ namespace: NS, name: 'macvlan', config: macvlanConfig('macvlan') }),
    policy('e2e-kubectl-no-macs-on-sriov', {
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': NS } },
      rules: { requestedFields: { forbidden: ['mac'] } },
    }),
  ]);
});

t.teardown(async () => {
  if (e && !t.passing()) process.stderr.write(`\n[e2e] failure: log tails\n${e.tails(80)}\n`);
  await e?.stop();
  if (bin) await rm(bin, { recursive: true, force: true });
});

/**
 * `kubectl ARGS` as a user runs it: the cluster in $KUBECONFIG (kubectl takes no flags before a
 * plugin's name), the plugin on PATH, tap's loader hooks kept out (plainEnv).
 */
const kubectl = (args: string[]): Promise<KubectlResult> =>
  run(path.join(e.cluster.binDir, 'kubectl'), args, { env: { KUBECONFIG: e.cluster.kubeconfigPath, PATH: `${bin}:${process.env.PATH}` } });
const plugin = (args: string[]): Promise<KubectlResult> => kubectl(['netattach', ...args]);

/** The lines of the apiserver's denial text (kubectl's stderr): `Error from server ...: denied the request: A, B`. */
const said = (r: KubectlResult): string => `${r.stdout}\n${r.stderr}`;

t.test('kubectl finds the plugin', async (t) => {
  const r = await kubectl(['plugin', 'list']);
  t.match(r.stdout, /kubectl-netattach/, said(r));
  const help = await plugin(['--help']);
  t.equal(help.code, 0, said(help));
  t.match(help.stdout, /kubectl netattach explain pod NAME/);
});

t.test('explain pod X: the pod admission admitted would be allowed, with its NAD, readers and device', async (t) => {
  await e.applyOk(pod(NS, 'vf-1', [{ name: 'sriov', interface: 'net1' }]));
  const admitted = await e.getJson<{ spec: { containers: Array<{ resources?: { requests?: Record<string, string> } }> } }>([
    'pod',
    '-n',
    NS,
    'vf-1',
  ]);
  t.equal(admitted.spec.containers[0]!.resources?.requests?.[RES], '1', 'admission injected the VF');

  const r = await plugin(['explain', 'pod', 'vf-1', '-n', NS]);
  t.equal(r.code, 0, `exit 0: admission would allow it\n${said(r)}`);
  t.match(r.stdout, /^Admission: +would be allowed$/m);
  t.match(r.stdout, new RegExp(`^  ${NS}/sriov@net1:$`, 'm'));
  t.match(r.stdout, /^ {4}Chain: +sriov \(ipam host-local\) -> tuning$/m, 'the NAD chain');
  t.match(r.stdout, new RegExp(`^ {4}Device: +extended resources: ${RES} via a device plugin$`, 'm'));
  t.match(r.stdout, /^ {2}e2e-kubectl-no-macs-on-sriov:$/m, 'the policy applies');
  t.match(r.stdout, /^ {4}requestedFields +Enforce +pass$/m, 'and passes: no mac asked');
  t.match(r.stdout, /^Audit: +clean$/m, 'the audit finds nothing');
  t.comment(r.stdout);

  const json = await plugin(['explain', 'pod', 'vf-1', '-n', NS, '-o', 'json']);
  t.equal(json.code, 0, said(json));
  const doc = JSON.parse(json.stdout) as {
    kind: string;
    formatVersion: number;
    pod: { source: string };
    admission: { verdict: string };
    networks: Array<{ nad: { status: string }; device: { resourceNames: string[] } }>;
  };
  t.match(doc, { kind: 'PodExplanation', formatVersion: 1, pod: { source: 'cluster' }, admission: { verdict: 'allowed' } });
  t.same(doc.networks[0]!.device.resourceNames, [RES]);

  const missing = await plugin(['explain', 'pod', 'no-such-pod', '-n', NS]);
  t.equal(missing.code, 2, 'a pod that is not there: exit 2');
  t.match(missing.stderr, /pods "no-such-pod" not found/);
});

t.test("explain -f: a pod admission denies would be denied, with the apiserver's reasons", async (t) => {
  const cases = [
    {
      name: 'policy',
      pod: pod(NS, 'with-mac', [{ name: 'sriov', mac: '02:00:00:00:00:0a' }]),
      reason: /policy "e2e-kubectl-no-macs-on-sriov" \(requestedFields\)/,
    },
    {
      name: 'capability',
      pod: pod(NS, 'macvlan-ips', [{ name: 'macvlan', ips: ['10.1.1.1/24'] }]),
      reason: /e2e-kubectl\/macvlan would ignore it/,
    },
    { name: 'missing NAD', pod: pod(NS, 'nowhere', 'absent'), reason: /no such NetworkAttachmentDefinition/ },
  ];
  for (const c of cases) {
    const denied = await e.apply(c.pod);
    t.not(denied.code, 0, `${c.name}: the apiserver denies it`);
    const denial = denied.stderr;
    t.match(denial, /denied the request/, `${c.name}: ${denial.trim()}`);
    const file = path.join(bin, `${c.name.replace(/ /g, '-')}.yaml`);
    await writeFile(file, JSON.stringify(c.pod));

    const r = await plugin(['explain', '-f', file]);
    t.equal(r.code, 1, `${c.name}: exit 1, admission would deny\n${said(r)}`);
    t.match(r.stdout, /^Admission: +would be denied/m);
    const errors = r.stdout
      .split('\n')
      .filter((l) => l.startsWith('  error: '))
      .map((l) => l.slice('  error: '.length));
    t.ok(errors.length > 0, `${c.name}: reasons listed`);
    for (const err of errors) t.ok(denial.includes(err), `${c.name}: the apiserver said it too: ${err}`);
    t.match(errors.join('\n'), c.reason);

    const check = await plugin(['check', '-f', file]);
    t.equal(check.code, 1, `${c.name}: check exits 1\n${said(check)}`);
    for (const err of errors) t.ok(check.stdout.includes(`error: ${err}`), `${c.name}: check says it too`);
  }
  await writeFile(path.join(bin, 'fine.yaml'), JSON.stringify(pod(NS, 'fine', [{ name: 'sriov' }])));
  const fine = await plugin(['check', '-f', path.join(bin, 'fine.yaml'), '-o', 'yaml']);
  t.equal(fine.code, 0, said(fine));
  t.match(fine.stdout, /^version: 1$/m);
});

t.test('audit -n NS: the running pods of the namespace judged now', async (t) => {
  const r = await plugin(['audit', '-n', NS]);
  t.equal(r.code, 0, said(r));
  t.match(r.stdout, /1 pod with networks and 2 NADs audited: 3 clean/, 'vf-1 and the two NADs');
  const json = await plugin(['audit', '-n', NS, '-o', 'json']);
  t.equal(json.code, 0, said(json));
  t.match(JSON.parse(json.stdout), { formatVersion: 1, summary: { pods: 1, nads: 2, fail: 0 } });
  const all = await plugin(['audit', '-A', '-o', 'yaml']);
  t.equal(all.code, 0, said(all));
  t.match(all.stdout, /^formatVersion: 1$/m);
});

// Issue 40: installed the way kubectl plugins are. `kubectl krew` (krew v0.4.3 built from
// sigs.k8s.io/krew by infra/build-krew.sh, on PATH as kubectl-krew) installs the single executable
// by its Krew manifest and archive (npm run build:plugin; the heavy tier builds them too), and the
// real kubectl then finds and runs it from KREW_ROOT/bin, with no npm bin link on PATH.
t.test('kubectl krew install --manifest --archive, then kubectl netattach from KREW_ROOT', async (t) => {
  const out = path.join(REPO, 'dist/plugin');
  const manifest = path.join(out, 'netattach.yaml');
  const archive = path.join(out, 'kubectl-netattach_linux_amd64.tar.gz');
  const fresh = existsSync(manifest) && existsSync(archive) && statSync(archive).mtimeMs >= statSync(MAIN).mtimeMs;
  if (!fresh) {
    // The bundle step of build:plugin alone: dist/ is already built (run.ts), and rebuilding it
    // here would rewrite the files the suite's netattach process runs from.
    const built = await run(path.join(REPO, 'node_modules/.bin/tsx'), ['scripts/build-plugin.ts']);
    t.equal(built.code, 0, `scripts/build-plugin.ts\n${built.stderr}`);
  }
  const krewBuild = await run('bash', [path.join(REPO, 'test/e2e/infra/build-krew.sh')]);
  t.equal(krewBuild.code, 0, krewBuild.stderr);
  const tools = await mkdtemp(path.join(os.tmpdir(), 'netattach-krew-tools-'));
  const root = await mkdtemp(path.join(os.tmpdir(), 'netattach-krew-root-'));
  t.teardown(() => Promise.all([rm(tools, { recursive: true, force: true }), rm(root, { recursive: true, force: true })]));
  await symlink(krewBuild.stdout.trim().split('\n').at(-1)!, path.join(tools, 'kubectl-krew'));
  const env = {
    KUBECONFIG: e.cluster.kubeconfigPath,
    KREW_ROOT: root,
    HOME: root,
    PATH: `${tools}:${path.join(root, 'bin')}:/usr/bin:/bin`,
  };
  const kubectlK = (args: string[]) => run(path.join(e.cluster.binDir, 'kubectl'), args, { env });
  const installed = await kubectlK(['krew', 'install', `--manifest=${manifest}`, `--archive=${archive}`]);
  t.equal(installed.code, 0, said(installed));
  t.match(said(installed), /Installed plugin: netattach/);
  const listed = await kubectlK(['plugin', 'list']);
  t.match(listed.stdout, path.join(root, 'bin/kubectl-netattach'), 'kubectl finds the Krew-installed plugin');
  const help = await kubectlK(['netattach', '--help']);
  t.equal(help.code, 0, said(help));
  t.match(help.stdout, /^Explain, check and audit pods/);
  const audit = await kubectlK(['netattach', 'audit', '-n', NS]);
  t.equal(audit.code, 0, said(audit));
  t.match(audit.stdout, /1 pod with networks and 2 NADs audited/, 'the installed executable reads the cluster');
  // uninstall needs a local index; without network access to clone krew-index, an empty one.
  await mkdir(path.join(root, 'index/default/plugins'), { recursive: true });
  t.equal((await run('git', ['init', '-q', path.join(root, 'index/default')])).code, 0);
  const removed = await kubectlK(['krew', 'uninstall', 'netattach']);
  t.equal(removed.code, 0, said(removed));
  t.notOk(existsSync(path.join(root, 'bin/kubectl-netattach')), 'uninstalled');
});
