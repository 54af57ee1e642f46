/**
 * End-to-end: netattach as a real process behind a real kube-apiserver, installed from
 * manifests/, driven with kubectl and @kubernetes/client-node. One cluster for the whole file;
 * the subtests run in order and build on each other (namespaces, NADs, policies).
 *
 *   npm run test:e2e            (builds, then runs this with tap; see docs/e2e.md)
 */
import t from 'tap';
import { X509Certificate } from 'node:crypto';
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { CoreV1Api, KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { CANARY_NS, CERT_SANS, eventually, isWebhookConfig, kustomize, run, startE2e, type E2e } from './lib/env.js';
import { MAIN, REPO, httpGet } from './lib/netattach.js';
import {
  NETWORKS,
  NODE_SELECTOR,
  RESOURCE_NAME,
  restricted,
  cronJob,
  deployment,
  ibConfig,
  macvlanConfig,
  namespace,
  nad,
  percentile,
  pod,
  policy,
  sriovConfig,
} from './lib/objects.js';

type Obj = Record<string, unknown>;
type PodJson = {
  metadata: { name: string; annotations?: Record<string, string> };
  spec: {
    nodeSelector?: Record<string, string>;
    containers: Array<{ resources?: { requests?: Record<string, string>; limits?: Record<string, string> } }>;
  };
};

const NS = 'e2e';
const DENIED_POD = /admission webhook "pods(\.mutate)?\.netattach\.io" denied the request/;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const LATENCY_CREATES = Number(process.env.NETATTACH_E2E_LATENCY_CREATES ?? 300);

let e: E2e;
let core: CoreV1Api;

t.before(async () => {
  const t0 = Date.now();
  e = await startE2e((m) => t.comment(m));
  const kc = new KubeConfig();
  kc.loadFromFile(e.cluster.kubeconfigPath);
  core = kc.makeApiClient(CoreV1Api);
  t.comment(`cluster, manifests, netattach and webhooks up in ${Date.now() - t0} ms`);
});

t.teardown(async () => {
  if (e && !t.passing()) process.stderr.write(`\n[e2e] failure: log tails\n${e.tails(80)}\n`);
  await e?.stop();
});

async function getPod(ns: string, name: string): Promise<PodJson> {
  return e.getJson<PodJson>(['pod', '-n', ns, name]);
}

async function podExists(ns: string, name: string): Promise<boolean> {
  const r = await e.cluster.kubectl(['get', 'pod', '-n', ns, name, '--ignore-not-found', '-o', 'name']);
  return r.stdout.trim() !== '';
}

type Condition = { type: string; status: string; reason?: string; message?: string };
async function acceptedCondition(name: string, status: 'True' | 'False'): Promise<Condition> {
  return eventually(`NetworkAttachmentPolicy ${name} condition Accepted=${status}`, async () => {
    const p = await e.getJson<{ status?: { conditions?: Condition[] } }>(['networkattachmentpolicy', name]);
    const c = p.status?.conditions?.find((x) => x.type === 'Accepted');
    return c?.status === status ? c : undefined;
  });
}

t.test('install: manifests/base applied server-side with strict validation', async (t) => {
  const objects = e.base.filter((o) => !isWebhookConfig(o));
  t.equal(e.baseApply.code, 0, 'kubectl apply --server-side --validate=strict succeeded');
  const applied = e.baseApply.stdout.split('\n').filter((l) => l.endsWith(' serverside-applied'));
  t.equal(applied.length, objects.length, `every object applied: ${applied.join(', ')}`);
  t.notMatch(e.baseApply.stderr, /Warning:/, 'the apiserver had no warning about the manifests');
  for (const kind of [
    'Namespace',
    'CustomResourceDefinition',
    'ServiceAccount',
    'ClusterRole',
    'ClusterRoleBinding',
    'PriorityClass',
    'Deployment',
    'PodDisruptionBudget',
    'Service',
  ]) {
    t.ok(
      objects.some((o) => o.kind === kind),
      `base holds a ${kind}`,
    );
  }
  const deploy = await e.getJson<{ spec: { template: { spec: { serviceAccountName: string; priorityClassName: string } } } }>([
    'deployment',
    '-n',
    'netattach-system',
    'netattach',
  ]);
  t.equal(deploy.spec.template.spec.serviceAccountName, 'netattach');
  t.equal(deploy.spec.template.spec.priorityClassName, 'netattach-critical');

  // the webhook configurations in the cluster are the manifests' with only clientConfig changed
  const mutating = await e.getJson<{
    webhooks: Array<Obj & { name: string; clientConfig: { url?: string; caBundle?: string }; failurePolicy: string }>;
  }>(['mutatingwebhookconfiguration', 'netattach']);
  const validating = await e.getJson<{ webhooks: Array<Obj & { name: string; clientConfig: { url?: string }; failurePolicy: string }> }>([
    'validatingwebhookconfiguration',
    'netattach',
  ]);
  t.same(
    mutating.webhooks.map((w) => [w.name, w.failurePolicy, w.clientConfig.url]),
    [['pods.mutate.netattach.io', 'Fail', `${e.netattach.url}/mutate`]],
  );
  t.equal(mutating.webhooks[0]!.clientConfig.caBundle, Buffer.from(e.caPem).toString('base64'));
  t.same(
    validating.webhooks.map((w) => [w.name, w.failurePolicy, w.clientConfig.url]),
    [
      ['pods.netattach.io', 'Fail', `${e.netattach.url}/validate`],
      ['workloads.netattach.io', 'Ignore', `${e.netattach.url}/validate`],
      ['nads.netattach.io', 'Fail', `${e.netattach.url}/validate`],
      ['kubevirt.netattach.io', 'Ignore', `${e.netattach.url}/validate`],
    ],
  );
  for (const [live, manifest] of [
    [mutating, e.webhooks[0]],
    [validating, e.webhooks[1]],
  ] as const) {
    for (const w of live.webhooks) {
      const m = (manifest!.webhooks ?? []).find((x) => x.name === w.name)!;
      t.same(w.matchConditions, m.matchConditions, `${w.name}: matchConditions as in the manifest`);
      t.same(w.namespaceSelector, m.namespaceSelector, `${w.name}: namespaceSelector as in the manifest`);
      t.equal(w.timeoutSeconds, m.timeoutSeconds, `${w.name}: timeoutSeconds as in the manifest`);
    }
  }
});

t.test('install: both overlays pass a server-side dry run', async (t) => {
  for (const dir of ['manifests', 'manifests/overlays/cert-manager']) {
    const objs = await kustomize(e.cluster, dir);
    // cert-manager's CRDs are not installed here: Issuer and Certificate cannot be checked
    const skipped = objs.filter((o) => String(o.apiVersion).startsWith('cert-manager.io/'));
    if (skipped.length > 0) {
      t.comment(
        `${dir}: not applied (no cert-manager CRDs): ${skipped.map((o) => `${String(o.kind)}/${String((o.metadata as Obj).name)}`).join(', ')}`,
      );
    }
    // The live webhook configurations carry a url; a dry run of the same objects under another
    // name checks the manifests' own (service) clientConfig without merging the two.
    const checked = objs
      .filter((o) => !skipped.includes(o))
      .map((o) => (isWebhookConfig(o) ? { ...o, metadata: { ...(o.metadata as Obj), name: 'netattach-dryrun' } } : o));
    const r = await e.apply(checked, ['--dry-run=server', '--force-conflicts']);
    t.equal(r.code, 0, `${dir}: server-side dry run accepted (${checked.length} objects)\n${r.stderr}`);
    t.notMatch(r.stderr, /Warning:/, `${dir}: no warnings`);
    t.equal(
      r.stdout.split('\n').filter((l) => / serverside-applied \(server dry run\)$/.test(l)).length,
      checked.length,
      `${dir}: every object checked`,
    );
    if (dir === 'manifests')
      t.ok(
        checked.some((o) => o.kind === 'CronJob') && checked.some((o) => o.kind === 'Job'),
        'self-signed overlay: Job and CronJob checked',
      );
  }
});

t.test('netattach runs with the ServiceAccount and RBAC of the manifests', async (t) => {
  const sa = 'system:serviceaccount:netattach-system:netattach';
  const can = async (verb: string, resource: string, ...more: string[]): Promise<string> =>
    (await e.cluster.kubectl(['auth', 'can-i', verb, resource, '--all-namespaces', `--as=${sa}`, ...more])).stdout.trim();
  t.equal(await can('watch', 'network-attachment-definitions.k8s.cni.cncf.io'), 'yes');
  t.equal(await can('patch', 'networkattachmentpolicies.netattach.io', '--subresource=status'), 'yes', 'may write policy status');
  t.equal(await can('patch', 'networkattachmentpolicies.netattach.io'), 'no', 'but not the policies');
  t.equal(await can('get', 'secrets'), 'no', 'no secrets');
  t.equal(await can('patch', 'validatingwebhookconfigurations'), 'no', 'cannot change its own webhooks');
  t.equal(await can('create', 'pods'), 'no');
  const ready = await httpGet(`${e.netattach.healthUrl}/readyz`);
  t.equal(ready.status, 200, 'ready: every watch synced with those rights');
  const body = JSON.parse(ready.body) as { checks: Record<string, { ok: boolean }> };
  t.ok(body.checks.nads?.ok, 'NAD source synced');
  t.comment(`readiness checks: ${Object.keys(body.checks).join(', ')}`);
  t.notMatch(e.netattach.readLog(), /forbidden/i, 'no request of netattach was forbidden');
  t.match(e.netattach.readLog(), /"credentials":"in-cluster".*NADs are read from the cluster/, 'in-cluster credentials, as in a pod');
});

t.test("install: the self-signed overlay's certificate steps, run as its ServiceAccount", async (t) => {
  // What the overlay's Job and CronJob do, with their ServiceAccount and RBAC, against this
  // apiserver: publish-certs.sh fetch-ca, netattach certs, publish-certs.sh publish. The
  // kubelet's part (mounting Secret netattach-tls) is played by installCertificates().
  const overlay = await kustomize(e.cluster, 'manifests');
  const certsObjects = overlay.filter((o) => (o.metadata as Obj).name === 'netattach-certs' && o.kind !== 'Job' && o.kind !== 'CronJob');
  t.same(certsObjects.map((o) => o.kind).sort(), ['ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding', 'ServiceAccount']);
  await e.applyOk([...certsObjects, ...overlay.filter((o) => o.kind === 'ConfigMap')]);
  const work = path.join(e.cluster.workDir, 'certs-job');
  const env = {
    KUBECONFIG: await e.kubeconfigFor('netattach-system', 'netattach-certs'),
    PATH: `${e.cluster.binDir}:${process.env.PATH ?? ''}`,
    HOME: work,
  };
  const script = path.join(REPO, 'manifests/overlays/self-signed/publish-certs.sh');
  const job = async (dir: string): Promise<{ fetch: string; serial: string }> => {
    await mkdir(dir, { recursive: true });
    const fetch = await run('bash', [script, 'fetch-ca', dir], { env });
    t.equal(fetch.code, 0, `fetch-ca: ${fetch.stderr}`);
    const certs = await run(process.execPath, [
      MAIN,
      'certs',
      '--out',
      dir,
      '--force',
      '--service',
      'netattach',
      '--namespace',
      'netattach-system',
      ...CERT_SANS,
    ]);
    t.equal(certs.code, 0, `netattach certs: ${certs.stderr}`);
    const publish = await run('bash', [script, 'publish', dir], { env });
    t.equal(publish.code, 0, `publish: ${publish.stdout}${publish.stderr}`);
    return { fetch: fetch.stdout, serial: new X509Certificate(await readFile(path.join(dir, 'tls.crt'))).serialNumber };
  };
  const bundles = async (): Promise<string[]> => {
    const m = await e.getJson<{ webhooks: Array<{ clientConfig: { caBundle: string } }> }>(['mutatingwebhookconfiguration', 'netattach']);
    const v = await e.getJson<{ webhooks: Array<{ clientConfig: { caBundle: string } }> }>(['validatingwebhookconfiguration', 'netattach']);
    return [...m.webhooks, ...v.webhooks].map((w) => Buffer.from(w.clientConfig.caBundle, 'base64').toString());
  };
  const secret = async (name: string): Promise<{ type: string; data: Record<string, string> }> =>
    e.getJson(['secret', '-n', 'netattach-system', name]);
  const admitted = async (what: string): Promise<void> => {
    const r = await e.apply(pod(CANARY_NS, 'certs-probe', 'canary-missing'), ['--dry-run=server']);
    // a NAD that does not exist: netattach answers (denies), so TLS to it worked
    t.match(r.stderr, DENIED_POD, `${what}: the apiserver reaches netattach over TLS`);
  };

  // first install: a new CA
  const install = await job(path.join(work, 'install'));
  t.match(install.fetch, 'no CA in secret/netattach-ca yet');
  const ca = await readFile(path.join(work, 'install', 'ca.crt'), 'utf8');
  t.equal(Buffer.from((await secret('netattach-ca')).data['ca.crt']!, 'base64').toString(), ca, 'CA kept in secret/netattach-ca');
  const tlsSecret = await secret('netattach-tls');
  t.equal(tlsSecret.type, 'kubernetes.io/tls');
  t.equal(Buffer.from(tlsSecret.data['tls.crt']!, 'base64').toString(), await readFile(path.join(work, 'install', 'tls.crt'), 'utf8'));
  for (const b of await bundles()) {
    t.ok(b.startsWith(ca) && b.includes(e.caPem), 'caBundle: the new CA, then the one in use before');
  }
  // the kubelet refreshes the mounted Secret a while after the bundle changed
  await sleep(3000);
  t.equal(await e.installCertificates(path.join(work, 'install')), install.serial);
  await eventually('the published certificate in service', async () => ((await e.servedSerial()) === install.serial ? true : undefined));
  await admitted('after install');

  // the monthly renewal: same CA, new serving certificate, the old CA leaves the bundle
  const renewal = await job(path.join(work, 'renew'));
  t.match(renewal.fetch, 'signing with the CA kept in secret/netattach-ca');
  t.equal(await readFile(path.join(work, 'renew', 'ca.crt'), 'utf8'), ca, 'renewal keeps the CA');
  t.not(renewal.serial, install.serial);
  for (const b of await bundles()) t.equal(b.trim(), ca.trim(), 'caBundle: the CA alone');
  await e.installCertificates(path.join(work, 'renew'));
  await eventually('the renewed certificate in service', async () => ((await e.servedSerial()) === renewal.serial ? true : undefined));
  await admitted('after renewal');

  // and nothing beyond what the steps need
  const list = await run(path.join(e.cluster.binDir, 'kubectl'), ['-n', 'netattach-system', 'get', 'secrets'], { env });
  t.not(list.code, 0, 'netattach-certs cannot list Secrets');
  t.match(list.stderr, /forbidden/);
});

t.test('NADs created in the cluster are seen by the informer', async (t) => {
  const before = await e.netattach.metric('netattach_nad_cache_size');
  const out = await e.applyOk([
    namespace(NS),
    nad({
      namespace: NS,
      name: 'sriov-a',
      config: sriovConfig('sriov-a'),
      annotations: { [RESOURCE_NAME]: 'intel.com/sriov_a', [NODE_SELECTOR]: 'feature.node.kubernetes.io/network-sriov.capable=true' },
    }),
    nad({ namespace: NS, name: 'sriov-b', config: sriovConfig('sriov-b'), annotations: { [RESOURCE_NAME]: 'intel.com/sriov_b' } }),
    nad({ namespace: NS, name: 'macvlan-plain', config: macvlanConfig('macvlan-plain') }),
    nad({ namespace: NS, name: 'ib', config: ibConfig('ib'), annotations: { [RESOURCE_NAME]: 'mellanox.com/ib_vf' } }),
  ]);
  t.match(out, /networkattachmentdefinition\.k8s\.cni\.cncf\.io\/sriov-a serverside-applied/);
  const size = await eventually('the NAD cache to grow by 4', async () => {
    const n = await e.netattach.metric('netattach_nad_cache_size');
    return n >= before + 4 ? n : undefined;
  });
  t.ok(size >= before + 4, `cache size ${before} -> ${size}`);
  const hits = await e.netattach.metric('netattach_nad_lookups_total', { outcome: 'hit' });
  const fetched = await e.netattach.metric('netattach_nad_lookups_total', { outcome: 'fetched' });
  await e.cluster.kubectlOk(['apply', '--server-side', '--dry-run=server', '-f', '-'], {
    input: JSON.stringify(pod(NS, 'informer-probe', 'sriov-a,sriov-b')),
  });
  t.ok((await e.netattach.metric('netattach_nad_lookups_total', { outcome: 'hit' })) > hits, "the pod's NADs were answered from the cache");
  t.equal(
    await e.netattach.metric('netattach_nad_lookups_total', { outcome: 'fetched' }),
    fetched,
    'no read from the apiserver was needed',
  );
});

t.test('pods in simple and JSON form get their resources and node selector', async (t) => {
  await e.applyOk(pod(NS, 'simple', 'sriov-a,sriov-b'));
  const simple = await getPod(NS, 'simple');
  const res = simple.spec.containers[0]!.resources!;
  t.same(res.requests, { 'intel.com/sriov_a': '1', 'intel.com/sriov_b': '1' }, 'requests');
  t.same(res.limits, { 'intel.com/sriov_a': '1', 'intel.com/sriov_b': '1' }, 'limits');
  t.same(simple.spec.nodeSelector, { 'feature.node.kubernetes.io/network-sriov.capable': 'true' }, 'nodeSelector from the NAD');
  t.equal(simple.metadata.annotations?.[NETWORKS], 'sriov-a,sriov-b', 'annotation untouched');

  const selections = [
    { name: 'sriov-a', interface: 'net1', mac: '02:00:00:00:00:01' },
    { name: 'sriov-a', namespace: NS, interface: 'net2' },
    { name: 'ib', 'infiniband-guid': 'c2:11:22:33:44:55:66:77' },
  ];
  await e.applyOk(pod(NS, 'json', selections));
  const json = await getPod(NS, 'json');
  const jres = json.spec.containers[0]!.resources!;
  t.same(jres.requests, { 'intel.com/sriov_a': '2', 'mellanox.com/ib_vf': '1' }, 'one per attachment');
  t.same(jres.limits, jres.requests, 'limits equal requests');
  t.same(json.spec.nodeSelector, { 'feature.node.kubernetes.io/network-sriov.capable': 'true' });
  t.same(JSON.parse(json.metadata.annotations![NETWORKS]!), selections, 'annotation untouched');
});

t.test('a bad MAC or GUID fails kubectl apply with the webhook and the field path', async (t) => {
  const mac = await e.apply(pod(NS, 'bad-mac', [{ name: 'sriov-a', mac: '02:00:00:00:00:zz' }]));
  t.not(mac.code, 0, 'kubectl apply failed');
  t.match(mac.stderr, DENIED_POD);
  t.match(mac.stderr, 'metadata.annotations[k8s.v1.cni.cncf.io/networks][0].mac');
  t.match(mac.stderr, '"02:00:00:00:00:zz"', 'the value is named');
  t.notOk(await podExists(NS, 'bad-mac'), 'not created');
  t.comment(mac.stderr.trim());

  const guid = await e.apply(pod(NS, 'bad-guid', [{ name: 'sriov-b' }, { name: 'ib', 'infiniband-guid': '00:11:22:33:44:55:66' }]));
  t.not(guid.code, 0);
  t.match(guid.stderr, DENIED_POD);
  t.match(guid.stderr, 'metadata.annotations[k8s.v1.cni.cncf.io/networks][1].infiniband-guid');
  t.notOk(await podExists(NS, 'bad-guid'));
});

t.test('a request no plugin of the chain reads is denied; one a plugin reads through CNI_ARGS passes', async (t) => {
  // macvlan-plain's IPAM is dhcp, which reads no requested IP: the IPs would be ignored.
  const r = await e.apply(pod(NS, 'no-cap', [{ name: 'macvlan-plain', ips: ['10.0.0.5/24'] }]));
  t.not(r.code, 0);
  t.match(r.stderr, DENIED_POD);
  t.match(r.stderr, /Forbidden/);
  t.match(r.stderr, 'metadata.annotations[k8s.v1.cni.cncf.io/networks][0].ips');
  t.match(r.stderr, /would ignore it: no plugin of its chain \(macvlan\) reads IPs/);
  t.comment(r.stderr.trim());
  t.notOk(await podExists(NS, 'no-cap'));
  // macvlan reads MAC= from CNI_ARGS, which Multus sends to every plugin: no capability needed.
  t.equal(
    (await e.apply(pod(NS, 'mac-no-cap', [{ name: 'macvlan-plain', mac: '02:00:00:00:00:04' }]))).code,
    0,
    'a MAC on macvlan without the capability',
  );
  t.equal((await e.apply(pod(NS, 'with-cap', [{ name: 'sriov-b', mac: '02:00:00:00:00:02' }]))).code, 0);
});

t.test('--dry-run=server gets the same verdict and creates nothing', async (t) => {
  const bad = await e.apply(pod(NS, 'dry-bad', [{ name: 'macvlan-plain', ips: ['10.0.0.6/24'] }]), ['--dry-run=server']);
  t.not(bad.code, 0);
  t.match(bad.stderr, DENIED_POD);
  t.match(bad.stderr, 'metadata.annotations[k8s.v1.cni.cncf.io/networks][0].ips');
  const good = await e.apply(pod(NS, 'dry-good', 'sriov-a'), ['--dry-run=server', '-o', 'json']);
  t.equal(good.code, 0, good.stderr);
  const obj = JSON.parse(good.stdout) as PodJson;
  t.same(obj.spec.containers[0]!.resources!.requests, { 'intel.com/sriov_a': '1' }, 'the dry run shows the mutation');
  t.notOk(await podExists(NS, 'dry-good'), 'nothing was created');
  t.notOk(await podExists(NS, 'dry-bad'));
});

t.test('workloads with a bad template fail at apply', async (t) => {
  const badMac = [{ name: 'sriov-a', mac: 'not-a-mac' }];
  const d = await e.apply(deployment(NS, 'bad-deploy', badMac));
  t.not(d.code, 0);
  t.match(d.stderr, 'admission webhook "workloads.netattach.io" denied the request');
  t.match(d.stderr, 'spec.template.metadata.annotations[k8s.v1.cni.cncf.io/networks][0].mac');
  const c = await e.apply(cronJob(NS, 'bad-cron', badMac));
  t.not(c.code, 0);
  t.match(c.stderr, 'admission webhook "workloads.netattach.io" denied the request');
  t.match(c.stderr, 'spec.jobTemplate.spec.template.metadata.annotations[k8s.v1.cni.cncf.io/networks][0].mac');
  const missing = await e.apply(deployment(NS, 'missing-nad', 'no-such-net'));
  t.not(missing.code, 0, 'a template naming a missing NAD is denied');
  t.match(missing.stderr, /Not found: "e2e\/no-such-net"/);
  t.equal((await e.apply(deployment(NS, 'good-deploy', 'sriov-a'))).code, 0, 'a good Deployment is admitted');
  t.equal((await e.apply(cronJob(NS, 'good-cron', 'sriov-a'))).code, 0, 'a good CronJob is admitted');
});

t.test('NAD validation: a broken spec.config is refused', async (t) => {
  const r = await e.apply(nad({ namespace: NS, name: 'broken', config: '{"cniVersion": "0.3.1", "type": "macvlan",' }));
  t.not(r.code, 0);
  t.match(r.stderr, 'admission webhook "nads.netattach.io" denied the request');
  t.match(r.stderr, 'spec.config');
  const noType = await e.apply(nad({ namespace: NS, name: 'no-type', config: { cniVersion: '0.3.1', name: 'no-type' } }));
  t.not(noType.code, 0);
  t.match(noType.stderr, 'spec.config.type');
  t.equal((await e.cluster.kubectl(['get', 'net-attach-def', '-n', NS, 'broken'])).code, 1, 'not stored');
});

t.test('a NAD created right before the pod is found', async (t) => {
  for (let i = 0; i < 3; i++) {
    const name = `late-${i}`;
    const resource = `example.com/late_${i}`;
    // no wait between the two: the informer has likely not seen the NAD yet
    await e.applyOk(nad({ namespace: NS, name, config: sriovConfig(name), annotations: { [RESOURCE_NAME]: resource } }));
    const r = await e.apply(pod(NS, `uses-${name}`, name));
    t.equal(r.code, 0, `pod naming ${name} admitted: ${r.stderr}`);
    const p = await getPod(NS, `uses-${name}`);
    t.same(p.spec.containers[0]!.resources!.requests, { [resource]: '1' }, 'with the resource of the new NAD');
  }
});

t.test(
  "KubeVirt NIC hotplug: the kubevirt-controller patches a running pod's networks; a network needing a device is refused",
  async (t) => {
    // virt-controller's identity and the RBAC it has on pods (KubeVirt's rbac/controller.go).
    await e.applyOk([
      namespace('kubevirt'),
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'kubevirt-controller', namespace: 'kubevirt' } },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRole',
        metadata: { name: 'e2e-kubevirt-controller' },
        rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'] }],
      },
      {
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'ClusterRoleBinding',
        metadata: { name: 'e2e-kubevirt-controller' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'e2e-kubevirt-controller' },
        subjects: [{ kind: 'ServiceAccount', name: 'kubevirt-controller', namespace: 'kubevirt' }],
      },
    ]);
    const asController = ['--as=system:serviceaccount:kubevirt:kubevirt-controller'];
    const hotplug = (value: string) =>
      e.cluster.kubectl([
        ...asController,
        'patch',
        'pod',
        '-n',
        NS,
        'simple',
        '--type=json',
        '-p',
        JSON.stringify([{ op: 'add', path: '/metadata/annotations/k8s.v1.cni.cncf.io~1networks', value }]),
      ]);
    const plugged = `[{"name":"sriov-a","namespace":"${NS}","interface":"net1"},{"name":"sriov-b","namespace":"${NS}","interface":"net2"},{"name":"macvlan-plain","namespace":"${NS}","interface":"pod1b4f0e98519"}]`;
    const ok = await hotplug(plugged);
    t.equal(ok.code, 0, `a network without a device is plugged: ${ok.stderr}`);
    t.equal((await getPod(NS, 'simple')).metadata.annotations?.[NETWORKS], plugged, 'the new value is stored as sent');
    const device = await hotplug(`${plugged.slice(0, -1)},{"name":"sriov-a","namespace":"${NS}","interface":"pod16477688c0e"}]`);
    t.not(device.code, 0, 'a second SR-IOV VF cannot be added to a running pod');
    t.match(device.stderr, 'admission webhook "pods.netattach.io" denied the request');
    t.match(
      device.stderr,
      /\[3\]: Forbidden: e2e\/sriov-a needs device resource "intel\.com\/sriov_a" \(2 for the pod's networks; its containers request 1\)/,
    );
    const unplugged = await hotplug(
      `[{"name":"sriov-a","namespace":"${NS}","interface":"net1"},{"name":"sriov-b","namespace":"${NS}","interface":"net2"}]`,
    );
    t.equal(unplugged.code, 0, `hotunplug passes: ${unplugged.stderr}`);
    const bad = await hotplug('[{"name":"sriov-a","mac":"zz"}]');
    t.not(bad.code, 0, 'the new value gets the full checks');
    t.match(bad.stderr, 'metadata.annotations[k8s.v1.cni.cncf.io/networks][0].mac: Invalid value: "zz"');
    const label = await e.cluster.kubectl(['label', 'pod', '-n', NS, 'simple', 'tier=web']);
    t.equal(label.code, 0, `a label update passes: ${label.stderr}`);
  },
);

t.test('NetworkAttachmentPolicy objects are enforced and get a status', async (t) => {
  await e.applyOk([
    namespace('e2e-iso', { 'e2e.netattach.io/policy': 'isolate' }),
    namespace('e2e-warn', { 'e2e.netattach.io/policy': 'warn' }),
    nad({ namespace: 'e2e-iso', name: 'local', config: macvlanConfig('local') }),
  ]);
  await e.applyOk([
    policy('e2e-isolation', {
      namespaceSelector: { matchLabels: { 'e2e.netattach.io/policy': 'isolate' } },
      rules: { allowedNetworks: { ownNamespace: true } },
    }),
    policy('e2e-warn', {
      namespaceSelector: { matchLabels: { 'e2e.netattach.io/policy': 'warn' } },
      action: 'Warn',
      rules: { maxAttachments: { max: 1 } },
    }),
    policy('e2e-invalid', {
      rules: { hardwareAddresses: { guidRanges: [{ from: '00:00:00:00:00:00:00:09', to: '00:00:00:00:00:00:00:01' }] } },
    }),
  ]);
  const ok = await acceptedCondition('e2e-isolation', 'True');
  t.equal(ok.reason, 'Valid', 'status written by netattach');
  await acceptedCondition('e2e-warn', 'True');
  const invalid = await acceptedCondition('e2e-invalid', 'False');
  t.equal(invalid.reason, 'Invalid');
  t.match(invalid.message, 'spec.rules.hardwareAddresses.guidRanges[0].to', 'the field at fault is named');

  const denied = await e.apply(pod('e2e-iso', 'foreign', `${NS}/sriov-a`));
  t.not(denied.code, 0, 'Enforce: a NAD of another namespace is denied');
  t.match(denied.stderr, DENIED_POD);
  t.match(denied.stderr, 'metadata.annotations[k8s.v1.cni.cncf.io/networks][0]');
  t.match(denied.stderr, 'policy "e2e-isolation"');
  t.comment(denied.stderr.trim());
  t.equal((await e.apply(pod('e2e-iso', 'own', 'local'))).code, 0, 'its own NAD is allowed');

  const warned = await e.apply(pod('e2e-warn', 'two', `${NS}/sriov-a,${NS}/sriov-b`));
  t.equal(warned.code, 0, 'Warn: admitted');
  t.match(warned.stderr, /Warning: .*maxAttachments/, 'kubectl prints the warning');
  t.comment(warned.stderr.trim());
  t.ok(await podExists('e2e-warn', 'two'));

  await e.cluster.kubectlOk(['delete', 'networkattachmentpolicy', 'e2e-isolation']);
  const after = await eventually('the deleted policy to stop applying', async () => {
    const r = await e.apply(pod('e2e-iso', 'foreign', `${NS}/sriov-a`), ['--dry-run=server']);
    return r.code === 0 ? r : undefined;
  });
  t.equal(after.code, 0, 'a deleted policy no longer applies');
});

t.test('an InfiniBand GUID is unique across pods (policy uniqueAddresses)', async (t) => {
  await e.applyOk([
    namespace('e2e-ib', { 'e2e.netattach.io/fabric': 'ib' }),
    policy('e2e-fabric', {
      namespaceSelector: { matchLabels: { 'e2e.netattach.io/fabric': 'ib' } },
      rules: { uniqueAddresses: { 'infiniband-guid': 'Cluster' } },
    }),
  ]);
  await acceptedCondition('e2e-fabric', 'True');
  const guid = (n: number): Obj[] => [{ name: 'ib', namespace: NS, 'infiniband-guid': `00:11:22:33:44:55:00:0${n}` }];
  t.equal((await e.apply(pod('e2e-ib', 'ib-1', guid(1)))).code, 0, 'first holder admitted');
  const second = await e.apply(pod('e2e-ib', 'ib-2', guid(1)));
  t.not(second.code, 0, 'second pod with the same GUID denied');
  t.match(second.stderr, DENIED_POD);
  t.match(second.stderr, 'metadata.annotations[k8s.v1.cni.cncf.io/networks][0].infiniband-guid');
  t.match(second.stderr, /uniqueAddresses/);
  t.match(second.stderr, /ib-1/, 'names the holder (same namespace)');
  t.equal((await e.apply(pod('e2e-ib', 'ib-3', guid(3)))).code, 0, 'another GUID admitted');
  // once the holder is gone, the GUID is free again (the pod watch sees the deletion)
  await e.cluster.kubectlOk(['delete', 'pod', '-n', 'e2e-ib', 'ib-3']);
  const reused = await eventually('GUID of a deleted pod to be free', async () => {
    const r = await e.apply(pod('e2e-ib', 'ib-4', guid(3)), ['--dry-run=server']);
    return r.code === 0 ? r : undefined;
  });
  t.equal(reused.code, 0, 'a deleted pod releases its GUID');
});

t.test('KubeVirt live migration: two pods of one VMI hold one MAC; another VM does not get it', async (t) => {
  await e.applyOk([
    namespace('e2e-kv', { 'e2e.netattach.io/l2': 'unique' }),
    policy('e2e-unique-mac', {
      namespaceSelector: { matchLabels: { 'e2e.netattach.io/l2': 'unique' } },
      rules: { uniqueAddresses: { mac: 'Network' } },
    }),
  ]);
  await acceptedCondition('e2e-unique-mac', 'True');
  const launcher = (name: string, vm: string, uid: string, labels: Record<string, string> = {}): Obj => {
    const p = pod('e2e-kv', name, [{ name: 'sriov-a', namespace: NS, mac: 'de:ad:00:00:be:af', interface: 'pod16477688c0e' }], {
      labels: { 'kubevirt.io': 'virt-launcher', ...labels },
    });
    (p.metadata as Obj).ownerReferences = [
      { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', name: vm, uid, controller: true, blockOwnerDeletion: false },
    ];
    return p;
  };
  const asController = ['--as=system:serviceaccount:kubevirt:kubevirt-controller'];
  const create = (o: Obj) => e.cluster.kubectl([...asController, 'create', '-f', '-'], { input: JSON.stringify(o) });
  const source = await create(launcher('virt-launcher-vm1-src', 'vm1', '0c7d1c52-0000-4000-8000-0000000000a1'));
  t.equal(source.code, 0, `source pod: ${source.stderr}`);
  const target = await create(
    launcher('virt-launcher-vm1-dst', 'vm1', '0c7d1c52-0000-4000-8000-0000000000a1', { 'kubevirt.io/migrationJobUID': 'mig-1' }),
  );
  t.equal(target.code, 0, `the migration target with the same MAC is admitted: ${target.stderr}`);
  const other = await create(launcher('virt-launcher-vm2-aaa', 'vm2', '0c7d1c52-0000-4000-8000-0000000000b2'));
  t.not(other.code, 0, 'another VM with that MAC is denied');
  t.match(other.stderr, DENIED_POD);
  t.match(other.stderr, /MAC de:ad:00:00:be:af is already used by VM e2e-kv\/vm1/);
  t.comment(other.stderr.trim());
});

t.test('deleting a NAD that pods use warns and names them', async (t) => {
  // pods on e2e/sriov-b: e2e/simple, e2e/with-cap, e2e-warn/two (seen through the pod watch)
  const r = await e.cluster.kubectl(['delete', 'net-attach-def', '-n', NS, 'sriov-b']);
  t.equal(r.code, 0, `DELETE is allowed: ${r.stderr}`);
  t.match(r.stderr, /Warning: e2e\/sriov-b is still used by 3 pods/, 'with a warning counting the pods');
  t.match(r.stderr, 'e2e/simple');
  t.comment(r.stderr.trim());
  await e.applyOk(nad({ namespace: NS, name: 'unused', config: macvlanConfig('unused') }));
  const unused = await e.cluster.kubectl(['delete', 'net-attach-def', '-n', NS, 'unused']);
  t.equal(unused.code, 0);
  t.notMatch(unused.stderr, /Warning/, 'no warning for a NAD no pod uses');
});

t.test('netattach down: failurePolicy Fail for pods and NADs, Ignore for workloads; a restart recovers', async (t) => {
  await e.netattach.kill();
  const pod1 = await e.apply(pod(NS, 'while-down', 'sriov-a'));
  t.not(pod1.code, 0, 'pod with networks refused (Fail)');
  t.match(pod1.stderr, 'failed calling webhook "pods.mutate.netattach.io"');
  t.comment(pod1.stderr.trim());
  t.notOk(await podExists(NS, 'while-down'));
  const nad1 = await e.apply(nad({ namespace: NS, name: 'while-down', config: macvlanConfig('while-down') }));
  t.not(nad1.code, 0, 'NAD refused (Fail)');
  t.match(nad1.stderr, 'failed calling webhook "nads.netattach.io"');
  const plain = await e.apply(pod(NS, 'plain-while-down'));
  t.equal(plain.code, 0, `a pod without networks is never sent (matchConditions): ${plain.stderr}`);
  const d = await e.apply(deployment(NS, 'deploy-while-down', 'sriov-a'));
  t.equal(d.code, 0, `a Deployment is admitted (workloads webhook: Ignore): ${d.stderr}`);
  const sys = await e.apply(restricted(pod('netattach-system', 'own-namespace', 'sriov-a')), ['--dry-run=server']);
  t.equal(sys.code, 0, `netattach-system is excluded, so netattach can always start: ${sys.stderr}`);

  e.netattach.start();
  await e.netattach.waitReady();
  const back = await e.apply(pod(NS, 'after-restart', 'sriov-a'));
  t.equal(back.code, 0, `first pod after readiness admitted: ${back.stderr}`);
  t.same((await getPod(NS, 'after-restart')).spec.containers[0]!.resources!.requests, { 'intel.com/sriov_a': '1' }, 'and mutated');
  // the uniqueness index was rebuilt from the pod watch, not from memory
  const dup = await e.apply(pod('e2e-ib', 'ib-5', [{ name: 'ib', namespace: NS, 'infiniband-guid': '00:11:22:33:44:55:00:01' }]));
  t.not(dup.code, 0, 'GUID of ib-1 still taken after the restart');
  t.match(dup.stderr, /uniqueAddresses/);
  t.equal(e.netattach.starts, 2);
});

t.test('certificate rotation under load fails no request', async (t) => {
  const reloadsBefore = await e.netattach.metric('netattach_tls_reloads_total', { result: 'success' });
  const failuresBefore = await e.netattach.metric('netattach_tls_reloads_total', { result: 'failure' });
  let done = false;
  let ok = 0;
  const errors: string[] = [];
  const worker = async (w: number): Promise<void> => {
    for (let i = 0; !done; i++) {
      try {
        const created = await core.createNamespacedPod({
          namespace: NS,
          body: pod(NS, `rot-${w}-${i}`, 'sriov-a') as V1Pod,
          dryRun: 'All',
        });
        if (created.spec?.containers[0]?.resources?.requests?.['intel.com/sriov_a'] === '1') ok++;
        else errors.push(`rot-${w}-${i}: not mutated`);
      } catch (err) {
        const x = err as { code?: number; body?: unknown; message: string };
        errors.push(`rot-${w}-${i}: ${x.code ?? ''} ${typeof x.body === 'string' ? x.body : x.message}`.slice(0, 400));
      }
    }
  };
  const workers = [0, 1, 2, 3].map(worker);
  const serials = [await e.servedSerial()];
  for (let r = 0; r < 3; r++) {
    await sleep(1000);
    const serial = await e.rotateCertificate();
    const served = await eventually(
      `netattach to serve certificate ${serial}`,
      async () => ((await e.servedSerial()) === serial ? serial : undefined),
      20_000,
    );
    serials.push(served);
  }
  await sleep(1000);
  done = true;
  await Promise.all(workers);
  t.equal(new Set(serials).size, 4, `four certificates served in turn: ${serials.join(', ')}`);
  t.same(errors, [], 'no request failed');
  t.ok(ok >= 20, `${ok} dry-run pod creates through the webhooks during the rotations`);
  t.ok((await e.netattach.metric('netattach_tls_reloads_total', { result: 'success' })) >= reloadsBefore + 3, 'three reloads counted');
  t.comment(
    `reloads refused meanwhile (half-written pairs, kept the old one): ${(await e.netattach.metric('netattach_tls_reloads_total', { result: 'failure' })) - failuresBefore}`,
  );
});

t.test(`pod-create latency through the apiserver with and without netattach (${LATENCY_CREATES} creates each)`, async (t) => {
  await e.applyOk([namespace('e2e-lat-on'), namespace('e2e-lat-off', { 'netattach.io/admission': 'disabled' })]);
  const arms = {
    'networks, netattach called (mutate + validate)': {
      ns: 'e2e-lat-on',
      networks: `${NS}/sriov-a` as string | undefined,
      ms: [] as number[],
      mutated: 0,
    },
    'networks, namespace excluded (netattach.io/admission=disabled)': {
      ns: 'e2e-lat-off',
      networks: `${NS}/sriov-a` as string | undefined,
      ms: [] as number[],
      mutated: 0,
    },
    'no networks annotation (matchConditions skip the call)': {
      ns: 'e2e-lat-on',
      networks: undefined as string | undefined,
      ms: [] as number[],
      mutated: 0,
    },
  };
  const createOne = async (arm: (typeof arms)[keyof typeof arms], i: number, record: boolean): Promise<void> => {
    const body = pod(arm.ns, '', arm.networks) as V1Pod;
    delete body.metadata!.name;
    body.metadata!.generateName = `lat-${i}-`;
    const t0 = performance.now();
    const created = await core.createNamespacedPod({ namespace: arm.ns, body });
    const ms = performance.now() - t0;
    if (!record) return;
    arm.ms.push(ms);
    if (created.spec?.containers[0]?.resources?.requests?.['intel.com/sriov_a']) arm.mutated++;
  };
  // warm-up, then interleaved so that machine load falls on every arm alike
  for (let i = 0; i < 20; i++) for (const arm of Object.values(arms)) await createOne(arm, i, false);
  for (let i = 0; i < LATENCY_CREATES; i++) for (const arm of Object.values(arms)) await createOne(arm, i, true);
  const [on, off, none] = Object.values(arms);
  t.equal(on!.mutated, LATENCY_CREATES, 'every pod through netattach got its resources');
  t.equal(off!.mutated, 0, 'the excluded namespace was not sent to netattach');
  t.equal(none!.mutated, 0);
  t.comment(`pod CREATE latency (client-node -> kube-apiserver -> etcd, sequential, ${LATENCY_CREATES} each):`);
  for (const [name, arm] of Object.entries(arms)) {
    const mean = arm.ms.reduce((a, b) => a + b, 0) / arm.ms.length;
    t.comment(
      `  ${name}: p50 ${percentile(arm.ms, 50).toFixed(1)} ms, p90 ${percentile(arm.ms, 90).toFixed(1)} ms, p99 ${percentile(arm.ms, 99).toFixed(1)} ms, mean ${mean.toFixed(1)} ms`,
    );
  }
});
