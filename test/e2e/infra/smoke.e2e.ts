/**
 * Smoke test of the e2e infrastructure: a real etcd + kube-apiserver + kubectl,
 * server-side apply, a CRD, and a (fake, in-process) admission webhook wired
 * through webhook.ts, including CEL matchConditions.
 *
 *   npx tsx test/e2e/infra/smoke.e2e.ts
 *
 * The first run builds the binaries (several minutes); see build.sh.
 */
import assert from 'node:assert/strict';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { issueServingCert, makeCa, startCluster, type Cluster } from './cluster.js';
import { applyWebhookConfigs, canaryPod, NETWORKS_ANNOTATION, rewriteWebhookConfigs, toYaml } from './webhook.js';

let cluster: Cluster;

before(async () => {
  const t0 = Date.now();
  cluster = await startCluster({ log: (m) => process.stderr.write(`[e2e] ${m}\n`) });
  process.stderr.write(`[e2e] cluster up in ${Date.now() - t0} ms at ${cluster.server} (logs: ${cluster.logsDir})\n`);
});

after(async () => {
  await cluster?.stop();
});

const NS_AND_POD = `
apiVersion: v1
kind: Namespace
metadata:
  name: smoke
---
apiVersion: v1
kind: Pod
metadata:
  name: p1
  namespace: smoke
  annotations:
    ${NETWORKS_ANNOTATION}: macvlan-conf
spec:
  containers:
    - name: c
      image: registry.invalid/pause:1
`;

test('server-side apply of a Namespace and a Pod, read back', async () => {
  const out = await cluster.kubectlOk(['apply', '--server-side', '-f', '-'], { input: NS_AND_POD });
  assert.match(out, /namespace\/smoke serverside-applied/);
  assert.match(out, /pod\/p1 serverside-applied/);
  const pod = JSON.parse(await cluster.kubectlOk(['get', 'pod', '-n', 'smoke', 'p1', '-o', 'json'])) as {
    metadata: { annotations: Record<string, string>; labels?: Record<string, string> };
    status: { phase: string };
  };
  assert.equal(pod.metadata.annotations[NETWORKS_ANNOTATION], 'macvlan-conf');
  assert.equal(pod.status.phase, 'Pending');
  const ns = JSON.parse(await cluster.kubectlOk(['get', 'ns', 'smoke', '-o', 'json'])) as {
    metadata: { labels: Record<string, string> };
  };
  assert.equal(ns.metadata.labels['kubernetes.io/metadata.name'], 'smoke');
  // raw API access with the same credentials
  const r = await cluster.request('GET', '/api/v1/namespaces/smoke/pods/p1');
  assert.equal(r.status, 200);
});

const NAD_CRD = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: network-attachment-definitions.k8s.cni.cncf.io
spec:
  group: k8s.cni.cncf.io
  scope: Namespaced
  names:
    plural: network-attachment-definitions
    singular: network-attachment-definition
    kind: NetworkAttachmentDefinition
    shortNames: [net-attach-def]
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec:
              type: object
              properties:
                config:
                  type: string
`;

test('CRD: create, wait Established, create and read a custom object', async () => {
  await cluster.kubectlOk(['apply', '--server-side', '-f', '-'], { input: NAD_CRD });
  await cluster.kubectlOk(['wait', '--for=condition=Established', '--timeout=60s', 'crd/network-attachment-definitions.k8s.cni.cncf.io']);
  const nad = {
    apiVersion: 'k8s.cni.cncf.io/v1',
    kind: 'NetworkAttachmentDefinition',
    metadata: { name: 'macvlan-conf', namespace: 'smoke' },
    spec: { config: '{"cniVersion":"0.3.1","type":"macvlan","master":"eth0"}' },
  };
  // discovery of a fresh CRD can lag a moment behind Established
  let last = '';
  for (let i = 0; i < 20; i++) {
    const r = await cluster.kubectl(['apply', '--server-side', '-f', '-'], { input: JSON.stringify(nad) });
    if (r.code === 0) break;
    last = r.stderr;
    await new Promise((res) => setTimeout(res, 500));
    if (i === 19) assert.fail(`cannot create NetworkAttachmentDefinition: ${last}`);
  }
  const got = JSON.parse(await cluster.kubectlOk(['get', 'net-attach-def', '-n', 'smoke', 'macvlan-conf', '-o', 'json'])) as {
    spec: { config: string };
  };
  assert.equal(got.spec.config, nad.spec.config);
});

test('admission webhooks over url + caBundle, with matchConditions', async () => {
  // a tiny webhook: mutating adds a label, validating denies networks "deny-me"
  const ca = makeCa('fake-webhook-ca');
  const serving = issueServingCert(ca, 'fake-webhook', ['localhost'], ['127.0.0.1']);
  const seen: Array<{ path: string; dryRun: boolean; name: string }> = [];
  const server = https.createServer({ key: serving.keyPem, cert: serving.certPem }, (req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (d: string) => (body += d));
    req.on('end', () => {
      const review = JSON.parse(body) as {
        apiVersion: string;
        kind: string;
        request: {
          uid: string;
          dryRun: boolean;
          name: string;
          object: { metadata: { annotations?: Record<string, string>; labels?: Record<string, string> } };
        };
      };
      const path = (req.url ?? '').split('?')[0] ?? '';
      const { request } = review;
      seen.push({ path, dryRun: request.dryRun, name: request.name });
      const response: Record<string, unknown> = { uid: request.uid, allowed: true };
      if (path === '/mutate') {
        const patch = request.object.metadata.labels
          ? [{ op: 'add', path: '/metadata/labels/netattach-e2e~1mutated', value: 'true' }]
          : [{ op: 'add', path: '/metadata/labels', value: { 'netattach-e2e/mutated': 'true' } }];
        response.patch = Buffer.from(JSON.stringify(patch)).toString('base64');
        response.patchType = 'JSONPatch';
      } else if (request.object.metadata.annotations?.[NETWORKS_ANNOTATION] === 'deny-me') {
        response.allowed = false;
        response.status = { code: 403, reason: 'Forbidden', message: 'network deny-me is not allowed' };
      }
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ apiVersion: review.apiVersion, kind: review.kind, response }));
    });
  });
  server.keepAliveTimeout = 120_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;

  try {
    const matchConditions = [
      {
        name: 'has-networks',
        expression: `has(object.metadata.annotations) && '${NETWORKS_ANNOTATION}' in object.metadata.annotations`,
      },
    ];
    const common = {
      admissionReviewVersions: ['v1'],
      sideEffects: 'None',
      failurePolicy: 'Fail',
      timeoutSeconds: 5,
      rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['pods'] }],
      namespaceSelector: { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['kube-system'] }] },
      matchConditions,
    };
    const manifest = toYaml(
      (['Mutating', 'Validating'] as const).map((kind) => ({
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: `${kind}WebhookConfiguration`,
        metadata: { name: 'smoke-netattach' },
        webhooks: [
          {
            name: `${kind === 'Mutating' ? 'mutate' : 'validate'}.smoke.netattach.io`,
            clientConfig: {
              service: { name: 'netattach', namespace: 'netattach-system', path: kind === 'Mutating' ? '/mutate' : '/validate' },
            },
            ...common,
          },
        ],
      })),
    );
    const configs = rewriteWebhookConfigs(manifest, base, ca.certPem);
    assert.equal(configs.length, 2);
    assert.equal(configs[0]!.webhooks![0]!.clientConfig!.url, `${base}/mutate`);

    // mutating: detected by the canary's diff against a baseline
    const [mutating, validating] = configs as [(typeof configs)[0], (typeof configs)[0]];
    const t0 = Date.now();
    const res = await applyWebhookConfigs(cluster, [mutating]);
    const labels = (res.object?.metadata as { labels?: Record<string, string> } | undefined)?.labels;
    assert.equal(labels?.['netattach-e2e/mutated'], 'true');
    // validating: detected by a callback (what the netattach suite should use)
    const before = seen.filter((s) => s.path === '/validate').length;
    await applyWebhookConfigs(cluster, [validating], {
      isCalled: () => seen.filter((s) => s.path === '/validate' && s.dryRun).length > before,
    });
    process.stderr.write(`[e2e] webhooks active after ${Date.now() - t0} ms\n`);

    // a real (non-dry-run) create goes through both
    const pod = canaryPod('smoke', 'macvlan-conf');
    (pod.metadata as { name: string }).name = 'p2';
    const created = JSON.parse(await cluster.kubectlOk(['create', '-o', 'json', '-f', '-'], { input: JSON.stringify(pod) })) as {
      metadata: { labels: Record<string, string> };
    };
    assert.equal(created.metadata.labels['netattach-e2e/mutated'], 'true');

    // denial is reported to kubectl with the webhook's name and message
    (pod.metadata as { name: string; annotations: Record<string, string> }).name = 'p3';
    (pod.metadata as { annotations: Record<string, string> }).annotations[NETWORKS_ANNOTATION] = 'deny-me';
    const denied = await cluster.kubectl(['create', '-f', '-'], { input: JSON.stringify(pod) });
    assert.notEqual(denied.code, 0);
    assert.match(denied.stderr, /admission webhook "validate\.smoke\.netattach\.io" denied the request: network deny-me is not allowed/);

    // matchConditions: a pod without the annotation never reaches the webhook
    const count = seen.length;
    const plain = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p4', namespace: 'smoke' },
      spec: { containers: [{ name: 'c', image: 'x' }] },
    };
    const out = JSON.parse(await cluster.kubectlOk(['create', '-o', 'json', '-f', '-'], { input: JSON.stringify(plain) })) as {
      metadata: { labels?: Record<string, string> };
    };
    assert.equal(out.metadata.labels, undefined);
    assert.equal(seen.length, count);
  } finally {
    await cluster.kubectl([
      'delete',
      '--ignore-not-found',
      'mutatingwebhookconfiguration/smoke-netattach',
      'validatingwebhookconfiguration/smoke-netattach',
    ]);
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});
