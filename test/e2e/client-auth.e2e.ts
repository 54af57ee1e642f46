/**
 * End-to-end: the kube-apiserver authenticates itself to netattach with a client certificate, so a
 * review it did not send has no effect (issue 24). docs/deploy.md, "Authenticating the apiserver",
 * executed: the openssl commands, the AdmissionConfiguration and the webhook kubeconfig are read
 * from that page (the blocks marked `<!-- e2e: ... -->`); the apiserver starts with
 * `--admission-control-config-file`; netattach runs with `--client-ca` on the CA file laid out as
 * manifests/components/client-auth mounts it. Then the two optional components are rendered with
 * `kubectl kustomize` and applied to the apiserver with strict server-side validation.
 *
 * The webhooks are reached by `url: https://127.0.0.1:PORT` (no Service routing here), so the
 * kubeconfig gets, besides the documented Service-named user, a user named for that host:port
 * holding the same certificate: the apiserver's lookup by host:port (docs/deploy.md).
 *
 *   npm run test:e2e            (this file runs with the others; see docs/e2e.md)
 */
import t from 'tap';
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { freePort, isWebhookConfig, kustomize, run, startE2e, type E2e } from './lib/env.js';
import { REPO, httpGet } from './lib/netattach.js';
import { RESOURCE_NAME, namespace, nad, pod, policy, sriovConfig } from './lib/objects.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const NS = 'e2e-authn';
const DOCS = path.join(REPO, 'docs/deploy.md');
/** Where docs/deploy.md puts the apiserver's files; replaced by this test's directory. */
const DOC_DIR = '/etc/kubernetes/netattach/';
/** Where manifests/components/client-auth mounts ConfigMap netattach-client-ca. */
const COMPONENT_MOUNT = '/etc/netattach/client-ca';
const DENIED_POD = /admission webhook "pods(\.mutate)?\.netattach\.io" denied the request/;

let e: E2e;
let pki: string;
let kubeconfigPath: string;
let documentedKubeconfig: Obj;

/** The fenced block that follows `<!-- e2e: NAME -->` in docs/deploy.md, its list indentation removed. */
function docBlock(markdown: string, name: string): string {
  const at = markdown.indexOf(`<!-- e2e: ${name} -->`);
  if (at < 0) throw new Error(`docs/deploy.md has no block marked e2e: ${name}`);
  const m = /\n([ \t]*)```[a-z]*\n([\s\S]*?)\n[ \t]*```/.exec(markdown.slice(at));
  if (!m) throw new Error(`no fenced block after e2e: ${name}`);
  const indent = m[1]!.length;
  return (
    m[2]!
      .split('\n')
      .map((l) => l.slice(Math.min(indent, l.length - l.trimStart().length)))
      .join('\n') + '\n'
  );
}

function bash(script: string, cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-euo', 'pipefail', '-c', script], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', (err) => resolve({ code: 127, stdout, stderr: stderr + err.message }));
    child.on('close', (code) => resolve({ code: code ?? 1, stdout, stderr }));
  });
}

/** A file laid out as the kubelet mounts a ConfigMap key (`ca.crt -> ..data/ca.crt`). */
async function configMapVolume(dir: string, files: Record<string, string>): Promise<void> {
  await mkdir(path.join(dir, '..gen1'), { recursive: true });
  for (const [name, text] of Object.entries(files)) await writeFile(path.join(dir, '..gen1', name), text);
  await symlink('..gen1', path.join(dir, '..data_tmp'));
  await rename(path.join(dir, '..data_tmp'), path.join(dir, '..data'));
  for (const name of Object.keys(files)) await symlink(path.join('..data', name), path.join(dir, name));
}

interface Sent {
  status: number;
  body: string;
  error?: string;
}

/** One HTTPS POST to netattach, optionally with a client certificate; never rejects. */
function send(urlPath: string, body: string, client?: { cert: string; key: string }): Promise<Sent> {
  return new Promise((resolve) => {
    const req = https.request(
      `${e.netattach.url}${urlPath}`,
      {
        method: 'POST',
        ca: e.caPem,
        servername: 'localhost',
        agent: false,
        timeout: 10_000,
        headers: { 'content-type': 'application/json' },
        ...client,
      },
      (res) => {
        let data = '';
        res.setEncoding('utf8').on('data', (d: string) => (data += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: data }));
        res.on('error', (err) => resolve({ status: 0, body: data, error: `${(err as NodeJS.ErrnoException).code ?? ''} ${err.message}` }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', (err) => resolve({ status: 0, body: '', error: `${(err as NodeJS.ErrnoException).code ?? ''} ${err.message}` }));
    req.end(body);
  });
}

/** A Pod CREATE review as the apiserver would send it, for a pod that does not exist. */
function forgedReview(name: string, macs: string[]): string {
  const networks = JSON.stringify(macs.map((mac) => ({ name: 'sriov', mac })));
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: `forged-${name}`,
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      name,
      namespace: NS,
      operation: 'CREATE',
      userInfo: { username: 'system:serviceaccount:default:nobody' },
      object: {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, namespace: NS, uid: `uid-${name}`, annotations: { 'k8s.v1.cni.cncf.io/networks': networks } },
        spec: { containers: [{ name: 'c', image: 'registry.k8s.io/pause:3.10' }] },
      },
      oldObject: null,
      dryRun: false,
    },
  });
}

const mac = (n: number): string =>
  `02:aa:00:${((n >> 16) & 0xff).toString(16).padStart(2, '0')}:${((n >> 8) & 0xff).toString(16).padStart(2, '0')}:${(n & 0xff).toString(16).padStart(2, '0')}`;

/** The address-claim Leases netattach wrote (names), in its namespace. */
async function claimLeases(): Promise<string[]> {
  const r = await e.cluster.request(
    'GET',
    '/apis/coordination.k8s.io/v1/namespaces/netattach-system/leases?labelSelector=netattach.io%2Faddress-claim%3Dtrue',
  );
  return (JSON.parse(r.body) as { items: Array<{ metadata: { name: string } }> }).items.map((i) => i.metadata.name).sort();
}

const reviews = (): Promise<number> => e.netattach.metric('netattach_admission_reviews_total');
const refusedHandshakes = (): Promise<number> => e.netattach.metric('netattach_tls_handshake_failures_total');

t.before(async () => {
  const t0 = Date.now();
  const docs = await readFile(DOCS, 'utf8');
  pki = await mkdtemp(path.join(os.tmpdir(), 'netattach-e2e-authn-'));

  // 1. The client CA and the apiserver's client certificate, with the documented commands.
  const certs = await bash(docBlock(docs, 'client-certs'), pki);
  if (certs.code !== 0) throw new Error(`the openssl commands of docs/deploy.md failed (${certs.code}):\n${certs.stderr}`);

  // 2. The documented AdmissionConfiguration and kubeconfig, pointed at this directory. The
  //    webhooks here are URLs, so a user named for netattach's host:port is added beside the
  //    documented one, with the same certificate and key.
  const port = await freePort();
  const admission = docBlock(docs, 'admission-config').replaceAll(DOC_DIR, `${pki}/`);
  documentedKubeconfig = YAML.parse(docBlock(docs, 'webhook-kubeconfig').replaceAll(DOC_DIR, `${pki}/`)) as Obj;
  const served = {
    ...documentedKubeconfig,
    users: [...documentedKubeconfig.users, { name: `127.0.0.1:${port}`, user: documentedKubeconfig.users[0].user }],
  };
  kubeconfigPath = path.join(pki, 'webhook-kubeconfig.yaml');
  await writeFile(kubeconfigPath, YAML.stringify(served));
  const admissionPath = path.join(pki, 'admission.yaml');
  await writeFile(admissionPath, admission);
  t.comment(`apiserver admission configuration: ${admissionPath}`);

  // 3. netattach with --client-ca on the CA as the component mounts ConfigMap netattach-client-ca.
  const caDir = path.join(pki, 'client-ca-volume');
  await configMapVolume(caDir, { 'ca.crt': await readFile(path.join(pki, 'client-ca.crt'), 'utf8') });
  // startE2e only returns once a dry-run canary pod was reviewed by both webhooks: through TLS
  // that requires the client certificate, so the apiserver presented it.
  e = await startE2e(
    (m) => t.comment(m),
    { admissionControlConfigFile: admissionPath },
    { port, extraArgs: [`--client-ca=${caDir}/ca.crt`] },
  );
  await e.applyOk([
    namespace(NS),
    nad({ namespace: NS, name: 'sriov', config: sriovConfig('sriov'), annotations: { [RESOURCE_NAME]: 'intel.com/sriov' } }),
    policy('e2e-authn-unique-mac', {
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': NS } },
      rules: { uniqueAddresses: { mac: 'Cluster' } },
    }),
  ]);
  await waitPolicy();
  t.comment(`cluster with client authentication up in ${Date.now() - t0} ms`);
});

async function waitPolicy(): Promise<void> {
  const deadline = Date.now() + 30_000;
  while ((await e.netattach.metric('netattach_policies_loaded', { source: 'cluster' })) < 1) {
    if (Date.now() > deadline) throw new Error('policy e2e-authn-unique-mac not loaded in 30 s');
    await new Promise((r) => setTimeout(r, 200));
  }
}

t.teardown(async () => {
  if (e && !t.passing()) process.stderr.write(`\n[e2e] failure: log tails\n${e.tails(80)}\n`);
  await e?.stop();
  if (pki) await rm(pki, { recursive: true, force: true });
});

t.test('the documented openssl commands make a CA and a client certificate the apiserver uses', async (t) => {
  const text = await run('openssl', ['x509', '-in', path.join(pki, 'apiserver-webhook-client.crt'), '-noout', '-text']);
  t.equal(text.code, 0, text.stderr);
  t.match(text.stdout, /TLS Web Client Authentication/, 'extendedKeyUsage clientAuth');
  t.match(text.stdout, /CA:FALSE/);
  const verify = await run('openssl', [
    'verify',
    '-CAfile',
    path.join(pki, 'client-ca.crt'),
    '-purpose',
    'sslclient',
    path.join(pki, 'apiserver-webhook-client.crt'),
  ]);
  t.equal(verify.code, 0, `signed by the client CA, valid for TLS clients: ${verify.stdout}${verify.stderr}`);
  t.same(
    documentedKubeconfig.users.map((u: Obj) => u.name),
    ['netattach.netattach-system.svc'],
    "the documented user is named for the manifests' Service",
  );
});

t.test('a pod create through the apiserver is reviewed: the apiserver authenticated itself', async (t) => {
  const before = await refusedHandshakes();
  const bad = await e.apply(pod(NS, 'bad-mac', [{ name: 'sriov', mac: '02:00:00:00:00:zz' }]));
  t.not(bad.code, 0, 'kubectl apply fails');
  t.match(bad.stderr, DENIED_POD, 'denied by netattach, so netattach answered the apiserver');
  t.match(bad.stderr, /\.mac: Invalid value: "02:00:00:00:00:zz"/, 'naming the field and the value');
  const good = await e.apply(pod(NS, 'good', [{ name: 'sriov', mac: mac(1) }]));
  t.equal(good.code, 0, good.stderr);
  const stored = await e.getJson<Obj>(['pod', '-n', NS, 'good']);
  t.equal(stored.spec.containers[0].resources?.requests?.['intel.com/sriov'], '1', 'mutated: the VF resource injected');
  t.equal(await refusedHandshakes(), before, 'no handshake of the apiserver was refused');
});

t.test('a forged review without a client certificate is refused at TLS and leaves nothing behind', async (t) => {
  const [reviewsBefore, refusedBefore, leasesBefore] = [await reviews(), await refusedHandshakes(), await claimLeases()];
  // Finding 4 of issue 24: a /validate review for a pod that does not exist, 1,000 MACs under a
  // uniqueAddresses policy, would claim every MAC with netattach's own credentials.
  const forged = forgedReview(
    'ghost-1',
    Array.from({ length: 1000 }, (_, i) => mac(0x10000 + i)),
  );
  const noCert = await send('/validate', forged);
  t.equal(noCert.status, 0, `no HTTP answer (${noCert.error})`);
  t.match(
    noCert.error ?? '',
    /CERTIFICATE_REQUIRED|certificate required|HANDSHAKE_FAILURE|ECONNRESET|socket hang up/i,
    'the handshake is refused for want of a certificate',
  );
  // A certificate from a CA of the sender's own making is refused as well.
  const attackerDir = await mkdtemp(path.join(pki, 'attacker-'));
  const own = await bash(docBlock(await readFile(DOCS, 'utf8'), 'client-certs'), attackerDir);
  t.equal(own.code, 0, own.stderr);
  const wrongCa = await send('/mutate', forged, {
    cert: await readFile(path.join(attackerDir, 'apiserver-webhook-client.crt'), 'utf8'),
    key: await readFile(path.join(attackerDir, 'apiserver-webhook-client.key'), 'utf8'),
  });
  t.equal(wrongCa.status, 0, `no HTTP answer (${wrongCa.error})`);
  t.match(
    wrongCa.error ?? '',
    /UNKNOWN_CA|unknown ca|ECONNRESET|socket hang up/i,
    'refused during the handshake (an alert, or a reset after the client wrote)',
  );

  t.equal(await reviews(), reviewsBefore, 'neither request reached the admission core');
  t.ok((await refusedHandshakes()) >= refusedBefore + 2, 'both refusals counted in netattach_tls_handshake_failures_total');
  t.same(await claimLeases(), leasesBefore, 'no Lease was written');
  t.equal((await httpGet(`${e.netattach.healthUrl}/readyz`)).status, 200, 'netattach is ready');
  // A real pod may use the first MAC of the forged review: nothing holds it.
  const real = await e.apply(pod(NS, 'real-1', [{ name: 'sriov', mac: mac(0x10000) }]));
  t.equal(real.code, 0, `the MAC is free for a real pod: ${real.stderr}`);

  // Control: with the apiserver's certificate the same kind of review is answered and counted, so
  // the refusal above, not anything else, is what kept the forged one out.
  const client = {
    cert: await readFile(path.join(pki, 'apiserver-webhook-client.crt'), 'utf8'),
    key: await readFile(path.join(pki, 'apiserver-webhook-client.key'), 'utf8'),
  };
  const [reviewsBeforeControl, leasesBeforeControl] = [await reviews(), await claimLeases()];
  const control = await send('/validate', forgedReview('ghost-2', [mac(0x20000), mac(0x20001)]), client);
  t.equal(control.status, 200, `answered with the certificate: ${control.error ?? ''}`);
  t.equal((JSON.parse(control.body) as Obj).response?.uid, 'forged-ghost-2', 'an AdmissionReview answer');
  t.equal(await reviews(), reviewsBeforeControl + 1, 'and counted as a review');
  t.comment(
    `claim Leases written for the control review's 2 MACs: ${(await claimLeases()).length - leasesBeforeControl.length} (an authenticated caller is trusted as the apiserver)`,
  );
});

t.test('the components render with kubectl kustomize and pass strict server-side validation', async (t) => {
  // An overlay as docs/deploy.md shows it: the default install, both components, the CIDR set.
  const overlay = await mkdtemp(path.join(e.cluster.workDir, 'overlay-'));
  const rel = (p: string): string => path.relative(overlay, path.join(REPO, p));
  await writeFile(
    path.join(overlay, 'kustomization.yaml'),
    YAML.stringify({
      apiVersion: 'kustomize.config.k8s.io/v1beta1',
      kind: 'Kustomization',
      resources: [rel('manifests')],
      components: [rel('manifests/components/client-auth'), rel('manifests/components/networkpolicy')],
      patches: [
        {
          target: { kind: 'NetworkPolicy', name: 'netattach' },
          patch: '- op: replace\n  path: /spec/ingress/0/from\n  value:\n    - ipBlock: {cidr: 127.0.0.1/32}\n',
        },
      ],
    }),
  );
  const objects = await kustomize(e.cluster, path.relative(REPO, overlay));
  const deployment = objects.find((o) => o.kind === 'Deployment') as Obj;
  const container = deployment.spec.template.spec.containers[0] as Obj;
  const clientCaArg = (container.args as string[]).find((a) => a.startsWith('--client-ca='));
  t.equal(clientCaArg, `--client-ca=${COMPONENT_MOUNT}/ca.crt`, 'the rendered Deployment requires client certificates');
  t.equal(
    e.netattach.options.extraArgs?.[0],
    clientCaArg!.replace(COMPONENT_MOUNT, path.join(pki, 'client-ca-volume')),
    'the flag this suite runs netattach with, at the mount mapped to a local directory',
  );
  t.same((deployment.spec.template.spec.volumes as Obj[]).find((v) => v.name === 'client-ca')?.configMap?.name, 'netattach-client-ca');
  const policyObj = objects.find((o) => o.kind === 'NetworkPolicy') as Obj;
  t.same(policyObj.spec.ingress[0].from, [{ ipBlock: { cidr: '127.0.0.1/32' } }], "the overlay's patch replaced the placeholder");

  // The documented ConfigMap command, then the whole rendering through strict server-side
  // validation (dry run: nothing of the live install changes).
  const cm = await e.cluster.kubectl([
    '-n',
    'netattach-system',
    'create',
    'configmap',
    'netattach-client-ca',
    `--from-file=ca.crt=${path.join(pki, 'client-ca.crt')}`,
  ]);
  t.equal(cm.code, 0, cm.stderr);
  // The live webhook configurations carry a url; the rendered ones (a Service) are checked under
  // another name, as netattach.e2e.ts does, so the two are not merged.
  const checked = objects.map((o) => (isWebhookConfig(o) ? { ...o, metadata: { ...(o.metadata as Obj), name: 'netattach-dryrun' } } : o));
  const dry = await e.apply(checked as Obj[], ['--dry-run=server', '--force-conflicts']);
  t.equal(dry.code, 0, `server-side dry run: ${dry.stderr}`);
  t.equal(
    dry.stdout.split('\n').filter((l) => / serverside-applied \(server dry run\)$/.test(l)).length,
    checked.length,
    'every object checked',
  );
  t.match(dry.stdout, /networkpolicy\.networking\.k8s\.io\/netattach serverside-applied \(server dry run\)/);
  t.match(dry.stdout, /deployment\.apps\/netattach serverside-applied \(server dry run\)/);
  t.notMatch(dry.stderr, /Warning:/, 'no apiserver warning');

  // Unpatched, the component's placeholder is refused: no policy, so nothing is blocked by a guess.
  // (A Component is not built alone; its one resource is the object.)
  const raw = YAML.parse(await readFile(path.join(REPO, 'manifests/components/networkpolicy/networkpolicy.yaml'), 'utf8')) as Obj;
  const refused = await e.apply(raw, ['--dry-run=server']);
  t.not(refused.code, 0, 'the apiserver refuses the unpatched NetworkPolicy');
  t.match(
    refused.stderr,
    /spec\.ingress\[0\]\.from\[0\]\.ipBlock\.cidr: Invalid value: "SET-APISERVER-CIDR"/,
    'naming the field and the placeholder',
  );
});

t.test('a kubeconfig user that does not match the webhook sends no certificate: pods with networks are refused', async (t) => {
  // The documented file alone: its user is named for the Service, these webhooks are URLs, so the
  // apiserver finds no user for 127.0.0.1:PORT and calls without a certificate. This is the
  // outage docs/deploy.md warns of when step 3 comes before step 2.
  await writeFile(kubeconfigPath, YAML.stringify(documentedKubeconfig));
  await e.cluster.restartApiserver();
  const before = await refusedHandshakes();
  const r = await e.apply(pod(NS, 'no-cert', [{ name: 'sriov', mac: mac(2) }]));
  t.not(r.code, 0, 'the create fails (failurePolicy Fail)');
  t.match(r.stderr, /failed calling webhook "pods\.mutate\.netattach\.io"/, 'the apiserver could not call netattach');
  t.notMatch(r.stderr, DENIED_POD, 'netattach never saw the request');
  t.ok((await refusedHandshakes()) > before, 'netattach counted the refused handshake');
  const exists = await e.cluster.kubectl(['get', 'pod', '-n', NS, 'no-cert', '--ignore-not-found', '-o', 'name']);
  t.equal(exists.stdout.trim(), '', 'nothing created');
});
