/**
 * Unit checks of the clientConfig rewriting in webhook.ts (no cluster needed); part of
 * `npm run test:e2e`, alone: npx tap --disable-coverage test/e2e/infra/webhook.unit.ts
 */
import t from 'tap';
import { canaryShowsWebhook, joinUrl, parseManifests, rewriteWebhookConfigs, toYaml } from './webhook.js';

const CA = '-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n';
const CA_B64 = Buffer.from(CA).toString('base64');

const MANIFEST = `
apiVersion: v1
kind: Service
metadata: {name: netattach, namespace: netattach-system}
spec: {ports: [{port: 443, targetPort: 8443}]}
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata:
  name: netattach
  annotations:
    cert-manager.io/inject-ca-from: netattach-system/netattach-serving
webhooks:
  - name: mutate.netattach.cni.cncf.io
    admissionReviewVersions: [v1]
    sideEffects: None
    clientConfig:
      service: {name: netattach, namespace: netattach-system, path: /mutate, port: 443}
      caBundle: b2xk
    rules:
      - {apiGroups: [""], apiVersions: [v1], operations: [CREATE], resources: [pods]}
    matchConditions:
      - name: has-networks
        expression: "has(object.metadata.annotations) && 'k8s.v1.cni.cncf.io/networks' in object.metadata.annotations"
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: netattach}
webhooks:
  - name: validate.netattach.cni.cncf.io
    admissionReviewVersions: [v1]
    sideEffects: None
    clientConfig:
      service: {name: netattach, namespace: netattach-system, path: validate}
  - name: nopath.netattach.cni.cncf.io
    admissionReviewVersions: [v1]
    sideEffects: None
    clientConfig:
      service: {name: netattach, namespace: netattach-system}
  - name: url.netattach.cni.cncf.io
    admissionReviewVersions: [v1]
    sideEffects: None
    clientConfig:
      url: https://netattach.example:9443/validate/strict
`;

t.test('joinUrl', async (t) => {
  t.equal(joinUrl('https://127.0.0.1:8443', '/mutate'), 'https://127.0.0.1:8443/mutate');
  t.equal(joinUrl('https://127.0.0.1:8443/', '/mutate'), 'https://127.0.0.1:8443/mutate');
  t.equal(joinUrl('https://127.0.0.1:8443/', 'mutate'), 'https://127.0.0.1:8443/mutate');
  t.equal(joinUrl('https://127.0.0.1:8443', undefined), 'https://127.0.0.1:8443/');
});

t.test('rewrites every webhook clientConfig to url + caBundle and drops other kinds', async (t) => {
  const parsed = parseManifests(MANIFEST);
  const before = JSON.stringify(parsed);
  const out = rewriteWebhookConfigs(parsed, 'https://127.0.0.1:18443/', CA);
  t.equal(JSON.stringify(parsed), before, 'input not modified');
  t.strictSame(
    out.map((c) => c.kind),
    ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration'],
  );
  const ccs = out.flatMap((c) => (c.webhooks ?? []).map((w) => [w.name, w.clientConfig]));
  t.strictSame(ccs, [
    ['mutate.netattach.cni.cncf.io', { url: 'https://127.0.0.1:18443/mutate', caBundle: CA_B64 }],
    ['validate.netattach.cni.cncf.io', { url: 'https://127.0.0.1:18443/validate', caBundle: CA_B64 }],
    ['nopath.netattach.cni.cncf.io', { url: 'https://127.0.0.1:18443/', caBundle: CA_B64 }],
    ['url.netattach.cni.cncf.io', { url: 'https://127.0.0.1:18443/validate/strict', caBundle: CA_B64 }],
  ]);
  // everything else is kept
  const m = out[0]!;
  const wh = m.webhooks![0]!;
  t.strictSame(wh.sideEffects, 'None');
  t.ok(Array.isArray(wh.matchConditions));
  t.equal(m.metadata.annotations, undefined, 'cert-manager injection annotation removed');
});

t.test('accepts YAML text, JSON and kind: List, and round-trips through toYaml', async (t) => {
  const list = JSON.stringify({ apiVersion: 'v1', kind: 'List', items: parseManifests(MANIFEST) });
  const fromJson = rewriteWebhookConfigs(list, 'https://127.0.0.1:1', CA);
  const fromYaml = rewriteWebhookConfigs(MANIFEST, 'https://127.0.0.1:1', CA);
  t.strictSame(fromJson, fromYaml);
  t.strictSame(parseManifests(toYaml(fromYaml)), fromYaml);
});

t.test('rejects invalid YAML', async (t) => {
  t.throws(() => parseManifests('a: [1,\n'), /invalid YAML/);
});

t.test('canaryShowsWebhook', async (t) => {
  const names = ['mutate.netattach.cni.cncf.io'];
  const base = { code: 0, object: { metadata: { name: 'x' } }, stderr: '' };
  t.equal(canaryShowsWebhook(base, base, names), false);
  t.equal(canaryShowsWebhook({ ...base, object: { metadata: { name: 'x', labels: { a: 'b' } } } }, base, names), true);
  t.equal(
    canaryShowsWebhook(
      { code: 1, stderr: 'Error from server (Forbidden): admission webhook "mutate.netattach.cni.cncf.io" denied the request: no' },
      base,
      names,
    ),
    true,
  );
  t.equal(
    canaryShowsWebhook(
      { code: 1, stderr: 'Internal error occurred: failed calling webhook "mutate.netattach.cni.cncf.io": connection refused' },
      base,
      names,
    ),
    false,
  );
});
