// Cluster mode of the policy wiring against the fake API server of the policy tests: readiness
// names what has not synced (and why) without blocking start-up, policies and namespace labels
// come from watches, the pod watch feeds uniqueness and the NAD DELETE warning.
import t, { type Test } from 'tap';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubeCredentials } from '../../src/kube/index.js';
import { wirePolicy } from '../../src/cli/serve-policy.js';
import { createServer, type WebhookServer } from '../../src/server/index.js';
import { ClusterNadSource, StaticNadSource } from '../../src/nads/index.js';
import { DEFAULT_ADMISSION_CONFIG, type AdmissionReview } from '../../src/admission/types.js';
import { POLICIES_PATH } from '../../src/policy/index.js';
import { FakeApiServer, until } from '../kube/fake-apiserver.js';
import { captureLogger, getHttp, makeCerts, request } from '../server/fixtures.js';
import { eventually, nadDelete, nadObject, NETWORKS, podCreate } from './policy-helpers.js';

const GUID = '00:11:22:33:44:55:66:77';

async function start(t: Test, kc: KubeCredentials): Promise<{ server: WebhookServer; url: string; healthUrl: string; ca: string }> {
  const certDir = mkdtempSync(join(tmpdir(), 'netattach-certs-'));
  t.teardown(() => rmSync(certDir, { recursive: true, force: true }));
  const { ca } = await makeCerts(certDir);
  const { logger } = captureLogger();
  const wiring = await wirePolicy({ kubeConfig: kc, podWatch: true, logger, backoffMs: 20 });
  const nadSource = new StaticNadSource([
    nadObject('prod', 'ib', ['infinibandGUID']),
    nadObject('prod', 'net-a'),
    nadObject('team-b', 'net-b'),
  ]);
  const server = await createServer(
    {
      host: '127.0.0.1',
      port: 0,
      healthPort: 0,
      tls: { certFile: `${certDir}/tls.crt`, keyFile: `${certDir}/tls.key` },
      bodyLimit: 1 << 20,
      admission: DEFAULT_ADMISSION_CONFIG,
      shutdownGraceMs: 1000,
      tlsReloadPollMs: 0,
    },
    { nadSource, logger, ...wiring.deps },
  );
  const { url, healthUrl } = await server.listen();
  t.teardown(() => server.close());
  return { server, url, healthUrl, ca };
}

const send = async (url: string, ca: string, endpoint: string, review: AdmissionReview) =>
  (await request(`${url}/${endpoint}`, JSON.stringify(review), { ca })).json.response as {
    allowed: boolean;
    status?: { code: number; message: string };
    warnings?: string[];
  };

t.test('an unreachable API server: start-up does not wait, readiness names each watch and why, reviews are answered', async (t) => {
  const kc: KubeCredentials = { server: 'http://127.0.0.1:9', source: 'static' };
  const { url, healthUrl, ca } = await start(t, kc);
  const ready = await eventually(
    () => getHttp(`${healthUrl}/readyz`),
    (r) => ['policies', 'namespaces', 'pods'].every((c) => /ECONNREFUSED/.test(r.json?.checks?.[c]?.reason ?? '')),
    'every watch to report its failure',
  );
  t.equal(ready.status, 503);
  t.same(ready.json.notReady, ['policies', 'namespaces', 'pods']);
  t.match(ready.json.checks.pods.reason, /^pod watch has not synced: .*ECONNREFUSED.*\(retrying\)$/);
  const answered = await send(url, ca, 'validate', podCreate({ namespace: 'prod', name: 'p', uid: 'u', networks: 'net-a' }));
  t.equal(answered.allowed, true, 'the webhook keeps serving');
});

t.test('policies, namespace labels and pods from the cluster', async (t) => {
  const api = new FakeApiServer();
  const kc = await api.start();
  t.teardown(() => api.stop());
  api.setList(
    '/api/v1/namespaces',
    [{ metadata: { name: 'prod', resourceVersion: '1', labels: { 'kubernetes.io/metadata.name': 'prod', tier: 'prod' } } }],
    '1',
  );
  const { server, url, healthUrl, ca } = await start(t, kc);

  // No CRD (404): no policy can exist, so policies are ready with none; pods not listed yet.
  const waiting = await eventually(
    () => getHttp(`${healthUrl}/readyz`),
    (r) => /HTTP 404/.test(r.json?.checks?.pods?.reason ?? '') && r.json?.checks?.namespaces?.ok === true,
    'the pod list to fail',
  );
  t.same(waiting.json.notReady, ['pods']);
  t.same(waiting.json.checks.policies, { ok: true }, 'no CRD: ready without policies');

  api.setList(
    '/api/v1/pods',
    [
      {
        metadata: {
          namespace: 'prod',
          name: 'running',
          uid: 'u-run',
          resourceVersion: '5',
          annotations: { [NETWORKS]: JSON.stringify([{ name: 'ib', 'infiniband-guid': GUID }]) },
        },
      },
      { metadata: { namespace: 'prod', name: 'plain', uid: 'u-plain', resourceVersion: '6', annotations: { [NETWORKS]: 'ib' } } },
    ],
    '6',
  );
  api.setList(
    POLICIES_PATH,
    [
      {
        apiVersion: 'netattach.io/v1alpha1',
        kind: 'NetworkAttachmentPolicy',
        metadata: { name: 'prod-rules', generation: 1, resourceVersion: '1' },
        spec: {
          namespaceSelector: { matchLabels: { tier: 'prod' } },
          rules: { allowedNetworks: { ownNamespace: true }, uniqueAddresses: { 'infiniband-guid': 'Cluster' } },
        },
      },
    ],
    '1',
  );
  await eventually(
    () => getHttp(`${healthUrl}/readyz`),
    (r) => r.status === 200,
    'readiness',
  );
  await until(
    () => api.requests.some((r) => r.method === 'PATCH' && r.path === `${POLICIES_PATH}/prod-rules/status`),
    'the Accepted condition',
  );

  const foreign = await send(url, ca, 'validate', podCreate({ namespace: 'prod', name: 'p1', uid: 'u1', networks: 'team-b/net-b' }));
  t.notOk(foreign.allowed, 'the policy applies through the namespace label tier=prod');
  t.match(foreign.status?.message, /policy "prod-rules" \(allowedNetworks\)/);

  const dup = await send(
    url,
    ca,
    'validate',
    podCreate({ namespace: 'prod', name: 'p2', uid: 'u2', networks: JSON.stringify([{ name: 'ib', 'infiniband-guid': GUID }]) }),
  );
  t.notOk(dup.allowed, 'a GUID a running pod holds');
  t.match(dup.status?.message, /is already used by pod prod\/running \(running\)/);

  const del = await send(url, ca, 'validate', nadDelete('prod', 'ib'));
  t.ok(del.allowed);
  t.same(del.warnings, ['prod/ib is still used by 2 pods (prod/plain, prod/running); new pods naming it will fail']);

  const metrics = (await getHttp(`${healthUrl}/metrics`)).text;
  t.match(metrics, 'netattach_policies_loaded{source="cluster"} 1');
  t.match(metrics, 'netattach_address_index_entries{entry="pods"} 1');
  t.match(metrics, 'netattach_policy_findings_total{endpoint="validate",policy="prod-rules",rule="uniqueAddresses",action="Enforce"} 1');
  t.ok(server.readiness().ready);
});

t.test('after the first sync, watches lost to an API server outage degrade readiness but keep it 200', async (t) => {
  const api = new FakeApiServer();
  const kc = await api.start();
  t.teardown(() => api.stop());
  api.setList(
    '/api/v1/namespaces',
    [{ metadata: { name: 'prod', resourceVersion: '1', labels: { 'kubernetes.io/metadata.name': 'prod' } } }],
    '1',
  );
  api.setList('/api/v1/pods', [], '1');
  api.setList(POLICIES_PATH, [], '1');
  const { healthUrl } = await start(t, kc);
  await eventually(
    () => getHttp(`${healthUrl}/readyz`),
    (r) => r.status === 200,
    'ready',
  );
  api.watchFailures = 1_000_000;
  api.listFailures = 1_000_000;
  api.dropWatches();
  const degraded = await eventually(
    () => getHttp(`${healthUrl}/readyz`),
    (r) => ['policies', 'namespaces', 'pods'].every((c) => (r.json?.degraded ?? []).includes(c)),
    'every watch degraded',
  );
  t.equal(degraded.status, 200, 'still ready: the caches answer');
  t.match(degraded.json.checks.pods.degraded, /^pod watch failing since .* \(stale for \d+ s\): .+; answering from the cache$/);
  const verbose = await getHttp(`${healthUrl}/readyz?verbose`);
  t.equal(verbose.status, 200);
  t.match(verbose.text, /\[\+\]pods ok \(degraded: pod watch failing since/);
  t.match((await getHttp(`${healthUrl}/metrics`)).text, /netattach_cache_stale_seconds\{cache="pods"\} \d/);
  api.watchFailures = 0;
  api.listFailures = 0;
  const back = await eventually(
    () => getHttp(`${healthUrl}/readyz`),
    (r) => (r.json?.degraded ?? []).length === 0,
    'recovered',
    60_000,
  );
  t.equal(back.status, 200);
});

t.test('the background audit is fed by the pod watch and counts findings; without the PolicyReport CRD nothing is written', async (t) => {
  const api = new FakeApiServer();
  const kc = await api.start();
  t.teardown(() => api.stop());
  api.setList('/api/v1/namespaces', [{ metadata: { name: 'prod', resourceVersion: '1' } }], '1');
  api.setList(
    '/api/v1/pods',
    [{ metadata: { name: 'old', namespace: 'prod', uid: 'u1', resourceVersion: '2', annotations: { [NETWORKS]: 'gone' } } }],
    '2',
  );
  const { logger } = captureLogger();
  const nadSource = new StaticNadSource([nadObject('prod', 'net-a')]);
  const wiring = await wirePolicy({
    kubeConfig: kc,
    podWatch: true,
    logger,
    backoffMs: 20,
    audit: { nadSource, config: DEFAULT_ADMISSION_CONFIG, tickMs: 20, publishIntervalMs: 100 },
  });
  t.ok(wiring.audit && wiring.publisher);
  t.match(wiring.summary.audit, /every live pod/);
  // As the server does: started, never awaited (the policy watch of a cluster without the CRD retries forever).
  for (const b of wiring.deps.background) void b.start();
  t.teardown(() => Promise.all(wiring.deps.background.map((b) => b.stop())));
  const audit = wiring.audit!;
  await eventually(
    async () => audit.allFindings(),
    (f) => f.length === 1,
    'the live pod to be judged',
  );
  t.match(audit.allFindings()[0], { pod: { name: 'old' }, findings: [{ policy: 'builtin', rule: 'networkExists', result: 'fail' }] });
  // A new pod arriving through the watch is judged too.
  await until(() => api.watching('/api/v1/pods') > 0, 'the pod watch');
  api.emit('/api/v1/pods', {
    type: 'ADDED',
    object: { metadata: { name: 'new', namespace: 'prod', uid: 'u2', resourceVersion: '3', annotations: { [NETWORKS]: 'net-a' } } },
  });
  await eventually(
    async () => audit.podCount(),
    (n) => n === 2,
    'the new pod',
  );
  const metrics = await wiring.deps.registry.metrics();
  t.match(metrics, /netattach_audit_findings\{policy="builtin",rule="networkExists",action="Enforce",result="fail"\} 1/);
  await eventually(
    async () => (await wiring.deps.registry.metrics()).includes('netattach_audit_policyreport_crd_present 0'),
    Boolean,
    'the CRD check',
  );
  t.notOk(wiring.publisher!.isLeader(), 'no CRD: no Lease taken');
  t.notOk(
    api.requests.some((r) => r.method === 'PATCH'),
    'nothing written',
  );
});

t.test("the background audit judges the NADs themselves, fed by the NAD cache's own watch (no second one)", async (t) => {
  const api = new FakeApiServer();
  const kc = await api.start();
  t.teardown(() => api.stop());
  const NADS = '/apis/k8s.cni.cncf.io/v1/network-attachment-definitions';
  const nad = (name: string, config: string, rv: string) => ({
    apiVersion: 'k8s.cni.cncf.io/v1',
    kind: 'NetworkAttachmentDefinition',
    metadata: { name, namespace: 'prod', uid: `n-${name}`, resourceVersion: rv },
    spec: { config },
  });
  const NO_TYPE = '{"cniVersion":"1.0.0","name":"x"}';
  api.setList('/api/v1/namespaces', [{ metadata: { name: 'prod', resourceVersion: '1' } }], '1');
  api.setList('/api/v1/pods', [], '2');
  api.setList(NADS, [nad('stored-before', NO_TYPE, '3'), nad('fine', '{"cniVersion":"1.0.0","name":"x","type":"macvlan"}', '4')], '4');
  const { logger } = captureLogger();
  const nadSource = new ClusterNadSource(kc, { backoff: { initialMs: 20 } });
  const wiring = await wirePolicy({
    kubeConfig: kc,
    podWatch: true,
    logger,
    backoffMs: 20,
    audit: { nadSource, config: DEFAULT_ADMISSION_CONFIG, tickMs: 20, publishIntervalMs: 100 },
  });
  t.match(wiring.summary.audit, /every live pod and NAD/);
  void nadSource.start();
  for (const b of wiring.deps.background) void b.start();
  t.teardown(() => Promise.all([nadSource.stop(), ...wiring.deps.background.map((b) => b.stop())]));
  const audit = wiring.audit!;
  const found = () => audit.allNadFindings().map((a) => `${a.nad.name}:${a.findings.map((f) => f.rule).join(',')}`);
  await eventually(
    async () => found(),
    (f) => f.length === 1,
    'the stored NAD to be judged',
  );
  t.same(found(), ['stored-before:nadValid']);
  t.match(audit.allNadFindings()[0]!.findings[0]!.message, /^spec\.config\.type: Required value/);
  t.match(
    await wiring.deps.registry.metrics(),
    /netattach_audit_findings\{policy="builtin",rule="nadValid",action="Enforce",result="fail"\} 1/,
  );
  // Fixed through the watch: gone. Broken again, then deleted: gone.
  await until(() => api.watching(NADS) > 0, 'the NAD watch');
  api.emit(NADS, { type: 'MODIFIED', object: nad('stored-before', '{"cniVersion":"1.0.0","name":"x","type":"macvlan"}', '5') });
  await eventually(
    async () => found(),
    (f) => f.length === 0,
    'the fixed NAD to be judged',
  );
  api.emit(NADS, { type: 'ADDED', object: nad('new-bad', NO_TYPE, '6') });
  await eventually(
    async () => found(),
    (f) => f.length === 1,
    'the new NAD to be judged',
  );
  api.emit(NADS, { type: 'DELETED', object: nad('new-bad', NO_TYPE, '7') });
  await eventually(
    async () => found(),
    (f) => f.length === 0,
    'the deleted NAD to be dropped',
  );
  t.notMatch(await wiring.deps.registry.metrics(), /netattach_audit_findings\{[^}]*rule="nadValid"/, 'no NAD finding left in the metric');
  t.equal(
    api.requests.filter((r) => r.path === NADS && r.query.get('watch') !== 'true' && r.query.get('watch') !== '1').length,
    1,
    "one NAD list: the cache's",
  );
});
