// The optional components that keep forged reviews out (docs/deploy.md, docs/security.md):
// client-auth (the webhook port requires the apiserver's client certificate) and networkpolicy
// (ingress only from the apiserver and Prometheus). Their JSON patches are applied here to the
// base's own objects with fast-json-patch (validating every path, so a patch that no longer fits
// the Deployment fails); test/e2e/client-auth.e2e.ts renders the same components with
// `kubectl kustomize` and applies them to a real apiserver.
import t from 'tap';
import { isIPv4, isIPv6 } from 'node:net';
import { join } from 'node:path';
import jsonpatch from 'fast-json-patch';
import YAML from 'yaml';
import { BASE, MANIFESTS, kustomization, kustomizeObjects, find, type Obj } from './load.js';

const CLIENT_AUTH = join(MANIFESTS, 'components', 'client-auth');
const NETWORK_POLICY = join(MANIFESTS, 'components', 'networkpolicy');

const base = kustomizeObjects(BASE);
const baseDeployment = find(base, 'Deployment', 'netattach');

/** The base Deployment with the component's patches for it applied, each path checked. */
function patchedDeployment(componentDir: string): Obj {
  const component = kustomization(componentDir);
  let deployment = jsonpatch.deepClone(baseDeployment) as Obj;
  for (const p of (component.patches ?? []) as Obj[]) {
    if (p.target?.kind !== 'Deployment' || p.target?.name !== 'netattach') continue;
    const ops = YAML.parse(String(p.patch)) as jsonpatch.Operation[];
    deployment = jsonpatch.applyPatch(deployment, ops, true, false).newDocument as Obj;
  }
  return deployment;
}

/** A CIDR the apiserver accepts for ipBlock.cidr: an address and a prefix length that fits it. */
function isCidr(text: string): boolean {
  const m = /^([^/]+)\/(\d{1,3})$/.exec(text);
  if (!m) return false;
  const bits = isIPv4(m[1]!) ? 32 : isIPv6(m[1]!) ? 128 : -1;
  return bits > 0 && Number(m[2]) <= bits;
}

t.test('isCidr tells a CIDR from anything else', async (t) => {
  for (const ok of ['10.0.0.10/32', '0.0.0.0/0', '2001:db8::/64']) t.ok(isCidr(ok), ok);
  for (const bad of ['SET-APISERVER-CIDR', '10.0.0.10', '10.0.0.0/33', '2001:db8::/129', '']) t.notOk(isCidr(bad), bad);
});

t.test('both are kustomize Components that an overlay can add', async (t) => {
  for (const dir of [CLIENT_AUTH, NETWORK_POLICY]) {
    const k = kustomization(dir);
    t.equal(k.apiVersion, 'kustomize.config.k8s.io/v1alpha1', `${dir}: a Component`);
    t.equal(k.kind, 'Component');
  }
});

t.test('client-auth: netattach requires a client certificate signed by the CA of ConfigMap netattach-client-ca', async (t) => {
  const deployment = patchedDeployment(CLIENT_AUTH);
  const spec = deployment.spec.template.spec as Obj;
  const container = (spec.containers as Obj[])[0]!;
  const args = container.args as string[];
  t.same(args.slice(0, 4), baseDeployment.spec.template.spec.containers[0].args.slice(0, 4), "the base's arguments stay, in order");
  const clientCa = args.filter((a) => a.startsWith('--client-ca'));
  t.same(clientCa, ['--client-ca=/etc/netattach/client-ca/ca.crt'], 'one --client-ca, a file path');
  const mount = (container.volumeMounts as Obj[]).find((m) => m.name === 'client-ca');
  t.same(mount, { name: 'client-ca', mountPath: '/etc/netattach/client-ca', readOnly: true });
  t.ok(clientCa[0]!.split('=')[1]!.startsWith(`${mount?.mountPath}/`), 'the file is in the mounted volume');
  const volume = (spec.volumes as Obj[]).find((v) => v.name === 'client-ca');
  t.same(volume?.configMap, { name: 'netattach-client-ca', items: [{ key: 'ca.crt', path: 'ca.crt' }] });
  t.notOk(volume?.configMap?.optional, 'not optional: without the CA the pod waits instead of serving without client authentication');
  // The TLS Secret and everything else of the base stay as they were.
  t.same(
    (spec.volumes as Obj[]).filter((v) => v.name !== 'client-ca'),
    baseDeployment.spec.template.spec.volumes,
  );
  t.same(
    (container.volumeMounts as Obj[]).filter((m) => m.name !== 'client-ca'),
    baseDeployment.spec.template.spec.containers[0].volumeMounts,
  );
  // Probes stay on the plain-HTTP health port, which a client certificate does not concern.
  for (const probe of ['startupProbe', 'livenessProbe', 'readinessProbe'])
    t.equal(container[probe].httpGet.port, 'health', `${probe} on the health port`);
});

t.test('networkpolicy: netattach pods take ingress only on their two ports, each from its one client', async (t) => {
  const objects = kustomizeObjects(NETWORK_POLICY);
  t.same(
    objects.map((o) => `${o.object.kind}/${o.object.metadata.name}`),
    ['NetworkPolicy/netattach'],
  );
  const policy = find(objects, 'NetworkPolicy', 'netattach');
  t.equal(policy.metadata.namespace, 'netattach-system');
  t.same(policy.spec.policyTypes, ['Ingress'], 'egress left alone: netattach calls the apiserver');
  t.same(policy.spec.podSelector.matchLabels, baseDeployment.spec.selector.matchLabels, "selects exactly the Deployment's pods");
  t.same(policy.spec.podSelector.matchLabels, baseDeployment.spec.template.metadata.labels, 'whose template carries those labels');

  const container = baseDeployment.spec.template.spec.containers[0] as Obj;
  const containerPorts = new Set((container.ports as Obj[]).map((p) => p.name as string));
  const rules = policy.spec.ingress as Obj[];
  t.same(
    rules.map((r) => (r.ports as Obj[]).map((p) => `${p.port}/${p.protocol}`)),
    [['https/TCP'], ['health/TCP']],
    'one rule per port, named ports',
  );
  for (const r of rules)
    for (const p of r.ports as Obj[]) t.ok(containerPorts.has(p.port as string), `${p.port} is a port of the container`);
  const service = find(base, 'Service', 'netattach');
  t.same(
    (service.spec.ports as Obj[]).map((p) => p.targetPort),
    ['https'],
    'the Service sends webhook calls to the port the first rule admits',
  );

  // Webhook port: an ipBlock to be set per cluster. The shipped value is no CIDR, so the apiserver
  // refuses the object (no policy, nothing blocked) instead of a guess that would refuse it.
  const webhookPeers = rules[0]!.from as Obj[];
  t.equal(webhookPeers.length, 1);
  t.equal(webhookPeers[0]!.ipBlock?.cidr, 'SET-APISERVER-CIDR');
  t.notOk(isCidr(webhookPeers[0]!.ipBlock.cidr as string), 'the placeholder is not a valid CIDR');
  t.notOk(
    rules[0]!.from.some((peer: Obj) => peer.podSelector && !peer.namespaceSelector),
    'no pod of netattach-system is admitted by default',
  );

  // Health port: Prometheus pods in one namespace, both selectors in one peer (AND, not OR).
  const healthPeers = rules[1]!.from as Obj[];
  t.equal(healthPeers.length, 1);
  t.ok(
    healthPeers[0]!.namespaceSelector?.matchLabels && healthPeers[0]!.podSelector?.matchLabels,
    'namespace AND pod selector in a single peer',
  );
});

t.test("the overlay the component documents replaces the placeholder with the cluster's CIDR", async (t) => {
  // The example in the component's header comment is what docs/deploy.md tells users to write.
  const header = (await import('node:fs')).readFileSync(join(NETWORK_POLICY, 'kustomization.yaml'), 'utf8');
  const example = header
    .split('\n')
    .filter((l) => l.startsWith('#   '))
    .map((l) => l.slice(4))
    .join('\n');
  const overlay = YAML.parse(example) as Obj;
  t.same(overlay.components, ['../../components/networkpolicy']);
  const patch = (overlay.patches as Obj[])[0]!;
  t.same(patch.target, { kind: 'NetworkPolicy', name: 'netattach' });
  const policy = jsonpatch.deepClone(find(kustomizeObjects(NETWORK_POLICY), 'NetworkPolicy', 'netattach')) as Obj;
  const patched = jsonpatch.applyPatch(policy, YAML.parse(String(patch.patch)) as jsonpatch.Operation[], true, false).newDocument as Obj;
  const cidrs = (patched.spec.ingress[0].from as Obj[]).map((p) => p.ipBlock?.cidr as string);
  t.ok(cidrs.length > 0 && cidrs.every(isCidr), `valid CIDRs after the patch: ${cidrs.join(', ')}`);
  t.same(patched.spec.ingress[1], policy.spec.ingress[1], 'the health rule is untouched');
});
