/**
 * End-to-end: the Helm chart charts/netattach (generated from manifests/ by scripts/chart.ts).
 *
 * 1. `helm lint` passes; a value the schema refuses fails lint naming the field.
 * 2. `helm template` equals `kubectl kustomize` as parsed objects: default values and the default
 *    install (manifests/), and one combination of values per overlay and component; values an
 *    admin changes equal the kustomize overlay an admin would write for the same change.
 * 3. `helm install` against the e2e kube-apiserver (the chart's objects as rendered, webhook
 *    configurations routed through the chart's Service), then the certificate Job's steps
 *    (`netattach certs`, publish-certs.sh) run here as the Job's ServiceAccount, since this
 *    apiserver has no controllers or kubelet; netattach runs as a process with the chart's
 *    ServiceAccount. A pod is admitted (mutated) and one denied through the Service route.
 * 4. `helm upgrade` to a chart whose policy CRD changed, with a flag changed (observe): the
 *    NetworkAttachmentPolicy objects are still stored and served, caBundle is kept; after
 *    `helm uninstall` the CRD and the policies remain (helm.sh/resource-policy: keep).
 *
 * The apiserver reaches a Service through its endpoints only with --enable-aggregator-routing
 * (kube-apiserver's buildServiceResolver, cmd/kube-apiserver/app/server.go; otherwise it dials the
 * ClusterIP, which nothing routes here). EndpointSlice addresses may not be loopback, so the
 * endpoint is this machine's first non-loopback IPv4 address, forwarded to netattach on 127.0.0.1.
 *
 * Needs helm (NETATTACH_E2E_HELM_BIN, built by infra/build-helm.sh) and the e2e binaries
 * (NETATTACH_E2E_BIN_DIR); test/e2e/run.ts provides both.
 */
import t, { type Test } from 'tap';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import { ensureBinaries, startCluster, type Cluster } from './infra/cluster.js';
import { parseManifests } from './infra/webhook.js';
import { eventually, run } from './lib/env.js';
import { MAIN, Netattach, REPO } from './lib/netattach.js';
import { freePort } from './infra/ports.js';
import { RESOURCE_NAME, namespace, nad, pod, policy, sriovConfig } from './lib/objects.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const HELM = process.env.NETATTACH_E2E_HELM_BIN;
const CHART = path.join(REPO, 'charts/netattach');
const NS = 'e2e-helm';
const DENIED_POD = /admission webhook "pods(\.mutate)?\.netattach\.io" denied the request/;

if (!HELM)
  throw new Error(
    'NETATTACH_E2E_HELM_BIN is not set: run this file through `npm run test:e2e` (test/e2e/run.ts builds helm with test/e2e/infra/build-helm.sh)',
  );

const work = await mkdtemp(path.join(os.tmpdir(), 'netattach-helm-'));
t.teardown(() => rm(work, { recursive: true, force: true }));
// helm's own state (cache, config, data) stays in the test's directory.
const helmEnv = {
  HELM_CACHE_HOME: path.join(work, 'helm/cache'),
  HELM_CONFIG_HOME: path.join(work, 'helm/config'),
  HELM_DATA_HOME: path.join(work, 'helm/data'),
};
const binDir = await ensureBinaries();
const kubectl = path.join(binDir, 'kubectl');

async function ok(cmd: string, args: string[], env: Record<string, string> = {}): Promise<string> {
  const r = await run(cmd, args, { env: { ...helmEnv, ...env } });
  if (r.code !== 0) throw new Error(`${path.basename(cmd)} ${args.join(' ')} exited with ${r.code}\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

const helmTemplate = async (args: string[], chart = CHART): Promise<Obj[]> =>
  parseManifests(await ok(HELM, ['template', 'netattach', chart, ...args]));
const kustomize = async (dir: string): Promise<Obj[]> =>
  parseManifests(await ok(kubectl, ['kustomize', '--load-restrictor=LoadRestrictionsNone', dir]));
const keyOf = (o: Obj): string => `${o.kind}/${o.metadata?.namespace ?? ''}/${o.metadata?.name}`;

/** The same objects, whatever their order. */
function sameObjects(t: Test, actual: Obj[], expected: Obj[], what: string): void {
  const a = new Map(actual.map((o) => [keyOf(o), o]));
  const e = new Map(expected.map((o) => [keyOf(o), o]));
  t.same([...a.keys()].sort(), [...e.keys()].sort(), `${what}: the same objects`);
  for (const [k, o] of e) if (a.has(k)) t.same(a.get(k), o, `${what}: ${k}`);
}

/** A kustomization in a directory of its own (absolute paths into manifests/). */
async function overlay(name: string, k: Obj): Promise<string> {
  const dir = path.join(work, 'kustomize', name);
  await rm(dir, { recursive: true, force: true });
  await cp(path.join(REPO, 'manifests'), path.join(dir, 'manifests'), { recursive: true });
  const abs = (p: string): string => path.join('manifests', p);
  const text = YAML.stringify({
    apiVersion: 'kustomize.config.k8s.io/v1beta1',
    kind: 'Kustomization',
    ...k,
    resources: (k.resources as string[]).map(abs),
    ...(k.components ? { components: (k.components as string[]).map(abs) } : {}),
  });
  await writeFile(path.join(dir, 'kustomization.yaml'), text);
  return dir;
}

t.test('helm lint passes; a value the schema refuses fails naming the field', async (t) => {
  const lint = await run(HELM, ['lint', '--strict', CHART], { env: helmEnv });
  t.equal(lint.code, 0, `${lint.stdout}${lint.stderr}`);
  const bad = await run(HELM, ['lint', CHART, '--set', 'networkPolicy.enabled=true'], { env: helmEnv });
  t.not(bad.code, 0, 'networkPolicy without the apiserver is refused');
  t.match(`${bad.stdout}${bad.stderr}`, /apiserverFrom/);
  const mode = await run(HELM, ['template', 'x', CHART, '--set', 'certificates.mode=vault'], { env: helmEnv });
  t.not(mode.code, 0);
  t.match(mode.stderr, /certificates.*mode/);
});

t.test('a NetworkPolicy without peers fails the render; NODE_OPTIONS takes no --inspect (issue 37)', async (t) => {
  // An empty key in a values file is null, which Helm drops before the schema sees it.
  const nullFrom = path.join(work, 'null-from.yaml');
  await writeFile(nullFrom, 'networkPolicy:\n  enabled: true\n  apiserverFrom:\n');
  const a = await run(HELM, ['template', 'x', CHART, '-f', nullFrom], { env: helmEnv });
  t.not(a.code, 0, 'apiserverFrom: (null) fails the render');
  t.match(a.stderr, /networkPolicy\.apiserverFrom: the NetworkPolicy needs at least one peer/);
  const nullProm = path.join(work, 'null-prometheus.yaml');
  await writeFile(nullProm, 'networkPolicy:\n  enabled: true\n  apiserverFrom:\n    - ipBlock: {cidr: 10.0.0.10/32}\n  prometheusFrom:\n');
  const b = await run(HELM, ['template', 'x', CHART, '-f', nullProm], { env: helmEnv });
  t.not(b.code, 0, 'prometheusFrom: (null) fails the render');
  t.match(b.stderr, /networkPolicy\.prometheusFrom: the NetworkPolicy needs at least one peer/);
  const good = await run(
    HELM,
    [
      'template',
      'x',
      CHART,
      '--set',
      'networkPolicy.enabled=true',
      '--set-json',
      'networkPolicy.apiserverFrom=[{"ipBlock":{"cidr":"10.0.0.10/32"}}]',
    ],
    { env: helmEnv },
  );
  t.equal(good.code, 0, good.stderr);
  t.match(good.stdout, /from: \[\{"ipBlock":\{"cidr":"10\.0\.0\.10\/32"\}\}\]/);
  const inspect = await run(HELM, ['template', 'x', CHART, '--set', 'nodeOptions=--inspect=0.0.0.0:9229 --max-old-space-size=192'], {
    env: helmEnv,
  });
  t.not(inspect.code, 0, 'an unanchored pattern accepted --inspect before the heap cap');
  t.match(inspect.stderr, /nodeOptions/);
  const after = await run(HELM, ['template', 'x', CHART, '--set', 'nodeOptions=--max-old-space-size=192 --inspect=0.0.0.0:9229'], {
    env: helmEnv,
  });
  t.not(after.code, 0, 'and after it');
  const ok = await run(HELM, ['template', 'x', CHART, '--set', 'nodeOptions=--max-old-space-size=320 --max-semi-space-size=1'], {
    env: helmEnv,
  });
  t.equal(ok.code, 0, ok.stderr);
});

t.test('helm template equals kubectl kustomize, overlay by overlay', async (t) => {
  sameObjects(t, await helmTemplate([]), await kustomize(path.join(REPO, 'manifests')), 'default values = manifests/');
  sameObjects(
    t,
    await helmTemplate(['--set', 'certificates.mode=none']),
    await kustomize(path.join(REPO, 'manifests/base')),
    'certificates.mode=none = manifests/base',
  );
  sameObjects(
    t,
    await helmTemplate(['--set', 'certificates.mode=cert-manager']),
    await kustomize(path.join(REPO, 'manifests/overlays/cert-manager')),
    'cert-manager',
  );
  sameObjects(t, await helmTemplate(['--set', 'observe=true']), await kustomize(path.join(REPO, 'manifests/overlays/observe')), 'observe');
  sameObjects(
    t,
    await helmTemplate(['--set', 'monitoring.enabled=true']),
    [...(await kustomize(path.join(REPO, 'manifests'))), ...(await kustomize(path.join(REPO, 'manifests/monitoring')))],
    'monitoring = manifests/ + manifests/monitoring',
  );
  // The three components together, networkpolicy with the patch docs/deploy.md shows.
  const from = [{ ipBlock: { cidr: '10.0.0.10/32' } }];
  const components = await overlay('components', {
    resources: ['overlays/self-signed'],
    components: ['components/client-auth', 'components/networkpolicy', 'components/policyreport-crd'],
    patches: [
      {
        target: { kind: 'NetworkPolicy', name: 'netattach' },
        patch: YAML.stringify([{ op: 'replace', path: '/spec/ingress/0/from', value: from }]),
      },
    ],
  });
  sameObjects(
    t,
    await helmTemplate([
      '--set',
      'clientAuth.enabled=true',
      '--set',
      'policyReportCrd.enabled=true',
      '--set',
      'networkPolicy.enabled=true',
      '--set-json',
      `networkPolicy.apiserverFrom=${JSON.stringify(from)}`,
    ]),
    await kustomize(components),
    'client-auth + networkpolicy + policyreport-crd',
  );
  // observe with cert-manager: the observe patch on the cert-manager overlay.
  const observeCertManager = await overlay('observe-cert-manager', {
    resources: ['overlays/cert-manager'],
    patches: (YAML.parse(await readFile(path.join(REPO, 'manifests/overlays/observe/kustomization.yaml'), 'utf8')) as Obj).patches,
  });
  sameObjects(
    t,
    await helmTemplate(['--set', 'certificates.mode=cert-manager', '--set', 'observe=true']),
    await kustomize(observeCertManager),
    'cert-manager + observe',
  );
});

t.test('the values an admin changes equal the kustomize overlay an admin would write', async (t) => {
  const resources = { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '320Mi' } };
  const custom = await overlay('custom', {
    resources: [''],
    replicas: [{ name: 'netattach', count: 3 }],
    images: [
      { name: 'ghcr.io/netattach/netattach', newName: 'registry.example/netattach', newTag: '0.2.0' },
      { name: 'registry.k8s.io/kubectl', newTag: 'v1.34.0' },
    ],
    patches: [
      {
        target: { kind: 'Deployment', name: 'netattach' },
        patch: YAML.stringify([
          { op: 'replace', path: '/spec/template/spec/containers/0/resources', value: resources },
          { op: 'replace', path: '/spec/template/spec/containers/0/imagePullPolicy', value: 'Always' },
          { op: 'add', path: '/spec/template/spec/containers/0/args/-', value: '--podnetinfo' },
          { op: 'add', path: '/spec/template/spec/containers/0/args/-', value: '--log-level=debug' },
        ]),
      },
      ...['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration'].map((kind) => ({
        target: { kind, name: 'netattach' },
        patch: YAML.stringify(
          (kind === 'MutatingWebhookConfiguration' ? [0] : [0, 2]).map((i) => ({
            op: 'replace',
            path: `/webhooks/${i}/failurePolicy`,
            value: 'Ignore',
          })),
        ),
      })),
    ],
  });
  const values = {
    replicas: 3,
    image: { repository: 'registry.example/netattach', tag: '0.2.0', pullPolicy: 'Always' },
    certificates: { kubectlImage: { repository: 'registry.k8s.io/kubectl', tag: 'v1.34.0' } },
    // Helm merges a map value into the default: a default key goes only when set to null.
    resources: { ...resources, limits: { ...resources.limits, cpu: null } },
    failurePolicy: 'Ignore',
    extraArgs: ['--podnetinfo', '--log-level=debug'],
  };
  const valuesFile = path.join(work, 'custom-values.yaml');
  await writeFile(valuesFile, YAML.stringify(values));
  const helm = await helmTemplate(['-f', valuesFile]);
  const expected = await kustomize(custom);
  // kustomize's images transformer renames every container's image, the Job's and CronJob's too,
  // as the chart's two image values do.
  sameObjects(t, helm, expected, 'replicas, image, resources, failurePolicy, extraArgs');
});

// ------------------------------------------------------------------ install and upgrade

/** This machine's first non-loopback IPv4 address: an EndpointSlice refuses loopback. */
function hostAddress(): string {
  for (const addrs of Object.values(os.networkInterfaces()))
    for (const a of addrs ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  throw new Error(
    'no non-loopback IPv4 address on this machine: the apiserver cannot reach a Service endpoint (EndpointSlice addresses may not be loopback)',
  );
}

/** Forwards HOST:port (a new port) to 127.0.0.1:target, as a Service endpoint reaches a pod. */
async function forward(host: string, target: number): Promise<{ port: number; close: () => void }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(target, '127.0.0.1');
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
      s.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((r) => server.listen(0, host, r));
  return {
    port: (server.address() as net.AddressInfo).port,
    close: () => {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}

t.test('installed and upgraded through the chart', async (t) => {
  const host = hostAddress();
  const cluster: Cluster = await startCluster({ binDir, apiserverFlags: ['--enable-aggregator-routing=true'] });
  let netattach: Netattach | undefined;
  let forwarder: { close: () => void } | undefined;
  t.teardown(async () => {
    forwarder?.close();
    await netattach?.close();
    await cluster.stop();
  });
  const helm = (args: string[]): Promise<string> => ok(HELM, [...args, '--kubeconfig', cluster.kubeconfigPath]);
  const getJson = async (args: string[]): Promise<Obj> => JSON.parse(await cluster.kubectlOk(['get', ...args, '-o', 'json'])) as Obj;
  try {
    // What Multus installs: the NAD CRD.
    await cluster.kubectlOk(['apply', '--server-side', '-f', path.join(REPO, 'test/e2e/fixtures/nad-crd.yaml')]);

    // The release record lives in `default`; the chart's objects name their own namespaces.
    const install = await helm(['install', 'netattach', CHART, '--namespace', 'default']);
    t.match(install, /STATUS: deployed/);
    const deployment = await getJson(['deployment', 'netattach', '-n', 'netattach-system']);
    t.equal(deployment.spec.replicas, 2, 'the Deployment as the chart renders it');

    // The certificate Job's two steps, as its ServiceAccount: no controller runs Jobs here.
    const certs = path.join(work, 'certs');
    await ok(process.execPath, [MAIN, 'certs', '--out', certs, '--service', 'netattach', '--namespace', 'netattach-system']);
    const jobToken = (await cluster.kubectlOk(['create', 'token', 'netattach-certs', '-n', 'netattach-system'])).trim();
    const jobKubeconfig = path.join(work, 'kubeconfig-certs');
    await writeFile(jobKubeconfig, kubeconfigWith(cluster, jobToken));
    await ok('bash', [path.join(CHART, 'files/overlays/self-signed/publish-certs.sh'), 'publish', certs], {
      KUBECONFIG: jobKubeconfig,
      PATH: `${binDir}:${process.env.PATH}`,
    });
    const caBundle = (await getJson(['validatingwebhookconfiguration', 'netattach'])).webhooks[0].clientConfig.caBundle as string;
    t.equal(
      Buffer.from(caBundle, 'base64').toString(),
      await readFile(path.join(certs, 'ca.crt'), 'utf8'),
      'the Job script filled in caBundle',
    );

    // netattach with the chart's ServiceAccount, reached through the chart's Service.
    const sa = path.join(work, 'serviceaccount');
    await ok('mkdir', ['-p', sa]);
    await writeFile(
      path.join(sa, 'token'),
      (await cluster.kubectlOk(['create', 'token', 'netattach', '-n', 'netattach-system', '--duration=2h'])).trim(),
    );
    await writeFile(path.join(sa, 'ca.crt'), cluster.caPem);
    await writeFile(path.join(sa, 'namespace'), 'netattach-system');
    const api = new URL(cluster.server);
    const env = deployment.spec.template.spec.containers[0].env as Array<{ name: string; value?: string }>;
    netattach = new Netattach({
      inCluster: { host: api.hostname, port: api.port, serviceAccountDir: sa },
      tlsDir: certs,
      port: await freePort(),
      healthPort: await freePort(),
      logPath: path.join(cluster.logsDir, 'netattach.log'),
      env: { NETATTACH_CLAIMS_NAMESPACE: env.find((e) => e.name === 'NETATTACH_CLAIMS_NAMESPACE')!.value! },
    });
    netattach.start();
    await netattach.waitReady();
    const fwd = await forward(host, netattach.options.port);
    forwarder = fwd;
    await cluster.kubectlOk(['apply', '--server-side', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'discovery.k8s.io/v1',
        kind: 'EndpointSlice',
        metadata: { name: 'netattach-e2e', namespace: 'netattach-system', labels: { 'kubernetes.io/service-name': 'netattach' } },
        addressType: 'IPv4',
        endpoints: [{ addresses: [host], conditions: { ready: true } }],
        ports: [{ name: 'https', port: fwd.port, protocol: 'TCP' }],
      }),
    });

    await cluster.kubectlOk(['apply', '--server-side', '-f', '-'], {
      input: [
        namespace(NS),
        nad({ namespace: NS, name: 'sriov', config: sriovConfig('sriov'), annotations: { [RESOURCE_NAME]: 'intel.com/sriov' } }),
      ]
        .map((o) => JSON.stringify(o))
        .join('\n---\n'),
    });
    // Admitted and mutated: the VF resource injected through the Service route.
    const admitted = await eventually(
      'a pod admitted through the chart',
      async () => {
        const r = await cluster.kubectl(['create', '-f', '-', '-o', 'json'], { input: JSON.stringify(pod(NS, 'admitted', 'sriov')) });
        return r.code === 0 ? (JSON.parse(r.stdout) as Obj) : undefined;
      },
      60_000,
    );
    t.equal(admitted.spec.containers[0].resources.requests['intel.com/sriov'], '1', 'the mutating webhook injected the resource');
    const denied = await cluster.kubectl(['create', '-f', '-'], { input: JSON.stringify(pod(NS, 'denied', 'no-such-network')) });
    t.not(denied.code, 0);
    t.match(denied.stderr, DENIED_POD, 'the validating webhook denied a pod whose network does not exist');

    // Stored policies, then an upgrade to a chart whose CRD changed, with a flag changed.
    await cluster.kubectlOk(['apply', '--server-side', '-f', '-'], {
      input: [
        policy('helm-a', { rules: { maxAttachments: { max: 4 } } }),
        policy('helm-b', { action: 'Warn', rules: { interfaceNames: { allowed: ['net*'] } } }),
      ]
        .map((o) => JSON.stringify(o))
        .join('\n---\n'),
    });
    const before = await getJson(['networkattachmentpolicies']);
    const next = path.join(work, 'chart-next');
    await cp(CHART, next, { recursive: true });
    const crdFile = path.join(next, 'templates/base/crd-networkattachmentpolicy.yaml');
    const crdText = await readFile(crdFile, 'utf8');
    const changed = crdText.replace(
      '        - name: Age\n',
      '        - name: Max\n          type: integer\n          jsonPath: .spec.rules.maxAttachments.max\n        - name: Age\n',
    );
    t.not(changed, crdText, 'the next chart adds a printer column to the CRD');
    await writeFile(crdFile, changed);
    const upgrade = await helm(['upgrade', 'netattach', next, '--namespace', 'default', '--reuse-values', '--set', 'observe=true']);
    t.match(upgrade, /REVISION: 2/);
    const crd = await getJson(['crd', 'networkattachmentpolicies.netattach.io']);
    t.ok(
      (crd.spec.versions[0].additionalPrinterColumns as Obj[]).some((c) => c.name === 'Max'),
      'the CRD change was applied',
    );
    const after = await getJson(['networkattachmentpolicies']);
    t.same(
      after.items.map((p: Obj) => [p.metadata.name, p.metadata.uid, p.spec]),
      before.items.map((p: Obj) => [p.metadata.name, p.metadata.uid, p.spec]),
      'every policy is still stored, unchanged',
    );
    const table = await cluster.kubectlOk(['get', 'nap', 'helm-a']);
    t.match(table, /MAX[\s\S]*helm-a\s.*\b4\b/, 'and served through the new CRD');
    const upgraded = await getJson(['deployment', 'netattach', '-n', 'netattach-system']);
    t.ok((upgraded.spec.template.spec.containers[0].args as string[]).includes('--enforcement=observe'), 'the flag changed');
    t.equal(
      (await getJson(['validatingwebhookconfiguration', 'netattach'])).webhooks[0].clientConfig.caBundle,
      caBundle,
      'caBundle, written by the Job, survives the upgrade',
    );
    t.equal((await getJson(['mutatingwebhookconfiguration', 'netattach'])).webhooks[0].clientConfig.caBundle, caBundle);
    const again = await cluster.kubectl(['create', '-f', '-', '-o', 'json'], { input: JSON.stringify(pod(NS, 'after-upgrade', 'sriov')) });
    t.equal(again.code, 0, `${again.stderr}`);

    // Uninstall keeps the CRD and with it the policies.
    await cluster.kubectlOk(['delete', 'validatingwebhookconfiguration', 'netattach']);
    await cluster.kubectlOk(['delete', 'mutatingwebhookconfiguration', 'netattach']);
    const uninstall = await helm(['uninstall', 'netattach', '--namespace', 'default']);
    t.match(uninstall, /uninstalled/);
    t.equal(
      (await cluster.kubectl(['get', 'crd', 'networkattachmentpolicies.netattach.io'])).code,
      0,
      'the CRD is kept (helm.sh/resource-policy: keep)',
    );
    t.equal((await getJson(['networkattachmentpolicies'])).items.length, 2, 'the policies outlive helm uninstall');
    const gone = await cluster.kubectl(['get', 'deployment', 'netattach', '-n', 'netattach-system']);
    t.not(gone.code, 0, 'the rest of the release is gone');
  } catch (e) {
    t.fail(`${(e as Error).message}\n${netattach?.tail(40) ?? ''}\n${cluster.tailLogs(40)}`);
  }
});

function kubeconfigWith(cluster: Cluster, token: string): string {
  return JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      { name: 'e2e', cluster: { server: cluster.server, 'certificate-authority-data': Buffer.from(cluster.caPem).toString('base64') } },
    ],
    users: [{ name: 'sa', user: { token } }],
    contexts: [{ name: 'e2e', context: { cluster: 'e2e', user: 'sa' } }],
    'current-context': 'e2e',
  });
}
