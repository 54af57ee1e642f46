// The Deployment, its Service, PDB and priority, the certificate jobs, and RBAC: the hardening
// and least-privilege invariants, and ports that agree with design.md and with each other.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { BASE, SELF_SIGNED, CERT_MANAGER, ROOT, kustomizeObjects, kustomization, find, type Obj } from './load.js';
import { PRODUCTION_NODE_OPTIONS } from '../../bench/hostile-lib.js';

const base = kustomizeObjects(BASE);
const selfSigned = kustomizeObjects(SELF_SIGNED);
const certManager = kustomizeObjects(CERT_MANAGER);
const deployment = find(base, 'Deployment', 'netattach');
const podSpec = deployment.spec.template.spec as Obj;
const container = (podSpec.containers as Obj[])[0] as Obj;
const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/** Every pod spec an install creates, with where it comes from. */
function podSpecs(objects: Array<{ object: Obj }>): Array<[string, Obj]> {
  const out: Array<[string, Obj]> = [];
  for (const { object: o } of objects) {
    if (o.kind === 'Deployment' || o.kind === 'Job') out.push([`${o.kind} ${o.metadata.name}`, o.spec.template.spec]);
    if (o.kind === 'CronJob') out.push([`${o.kind} ${o.metadata.name}`, o.spec.jobTemplate.spec.template.spec]);
  }
  return out;
}

t.test('every pod runs non-root, read-only, without capabilities, under RuntimeDefault seccomp', async (t) => {
  const specs = podSpecs([...base, ...selfSigned.filter((o) => !o.file.startsWith('manifests/base'))]);
  t.same(specs.map(([n]) => n).sort(), ['CronJob netattach-certs', 'Deployment netattach', 'Job netattach-certs']);
  for (const [name, spec] of specs) {
    t.test(name, async (t) => {
      t.equal(spec.securityContext.runAsNonRoot, true);
      t.ok(spec.securityContext.runAsUser > 0, 'runAsUser is not root');
      t.equal(spec.securityContext.seccompProfile.type, 'RuntimeDefault');
      t.notOk(spec.hostNetwork || spec.hostPID || spec.hostIPC, 'no host namespaces');
      for (const c of [...(spec.initContainers ?? []), ...spec.containers] as Obj[]) {
        const sc = c.securityContext as Obj;
        t.equal(sc.allowPrivilegeEscalation, false, `${c.name}: allowPrivilegeEscalation false`);
        t.equal(sc.readOnlyRootFilesystem, true, `${c.name}: readOnlyRootFilesystem`);
        t.same(sc.capabilities.drop, ['ALL'], `${c.name}: drops all capabilities`);
        t.notOk(sc.capabilities.add, `${c.name}: adds none`);
        t.notOk(sc.privileged, `${c.name}: not privileged`);
        t.ok(c.resources?.requests?.memory && c.resources?.limits?.memory, `${c.name}: memory request and limit`);
        t.ok(c.resources?.requests?.cpu, `${c.name}: cpu request`);
        t.match(c.image, /^[^:@]+(:[\w.-]+|@sha256:[0-9a-f]{64})$/, `${c.name}: image ${c.image} has a tag`);
        t.notMatch(c.image, /:latest$/, `${c.name}: no latest tag`);
      }
    });
  }
});

t.test('the Deployment is highly available', async (t) => {
  t.ok(deployment.spec.replicas >= 2, 'at least 2 replicas');
  t.equal(deployment.spec.strategy.rollingUpdate.maxUnavailable, 0);
  const anti = podSpec.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm;
  t.equal(anti.topologyKey, 'kubernetes.io/hostname');
  t.same(anti.labelSelector.matchLabels, deployment.spec.selector.matchLabels);
  t.same(podSpec.topologySpreadConstraints[0].labelSelector.matchLabels, deployment.spec.selector.matchLabels);
  const pdb = find(base, 'PodDisruptionBudget', 'netattach');
  t.equal(pdb.spec.minAvailable, 1);
  t.ok(pdb.spec.minAvailable < deployment.spec.replicas, 'a drain can still evict one replica');
  t.same(pdb.spec.selector.matchLabels, deployment.spec.selector.matchLabels);
  const priority = find(base, 'PriorityClass', podSpec.priorityClassName);
  t.ok(priority.value > 0 && priority.value <= 1_000_000_000, 'within the range of non-system classes');
  t.equal(priority.globalDefault, false);
});

t.test('ports, probes and arguments agree with design.md', async (t) => {
  const ports = Object.fromEntries((container.ports as Obj[]).map((p) => [p.name, p.containerPort]));
  t.same(ports, { https: 8443, health: 8080 });
  // --multus-default-networks=0: Multus's default count of defaultNetworks, stated, so a net<N> collision is denied (docs/annotation.md).
  t.same(container.args, ['serve', '--tls-dir=/etc/netattach/tls', '--port=8443', '--health-port=8080', '--multus-default-networks=0']);
  t.same(
    [container.livenessProbe.httpGet.path, container.readinessProbe.httpGet.path, container.startupProbe.httpGet.path],
    ['/healthz', '/readyz', '/healthz'],
  );
  for (const probe of [container.livenessProbe, container.readinessProbe, container.startupProbe]) {
    t.equal(probe.httpGet.port, 'health');
    t.notOk(probe.httpGet.scheme, 'plain HTTP on the health port');
  }
  const service = find(base, 'Service', 'netattach');
  t.same(service.spec.ports, [{ name: 'https', port: 443, targetPort: 'https', protocol: 'TCP' }]);
  t.same(service.spec.selector, deployment.spec.selector.matchLabels);
  t.equal(service.metadata.namespace, 'netattach-system');
  const tls = (podSpec.volumes as Obj[]).find((v) => v.name === 'tls');
  t.equal(tls?.secret?.secretName, 'netattach-tls');
  t.same(
    (container.volumeMounts as Obj[]).find((m) => m.name === 'tls'),
    { name: 'tls', mountPath: '/etc/netattach/tls', readOnly: true },
  );
  t.equal(podSpec.serviceAccountName, 'netattach');
  t.equal(podSpec.automountServiceAccountToken, true);
});

// The V8 settings the README's memory figures were measured with (the heap cap and 1 MiB
// young-generation semi-spaces, docs/performance.md), set where Node reads them, in the Deployment
// and the image alike, the heap below the container's memory limit. Broken-build recipe: remove
// the NODE_OPTIONS entry from manifests/base/deployment.yaml or the ENV from the Dockerfile, drop
// --max-semi-space-size or MALLOC_ARENA_MAX from either, or raise the cap to 512: this fails.
t.test("the Deployment and the image cap V8's heap below the container's memory limit", async (t) => {
  const env = (container.env as Obj[] | undefined) ?? [];
  const nodeOptions = env.find((e) => e.name === 'NODE_OPTIONS');
  t.equal(nodeOptions?.value, '--max-old-space-size=192 --max-semi-space-size=1', 'the settings the README measured');
  t.equal(nodeOptions?.value, PRODUCTION_NODE_OPTIONS, 'the settings the hostile tests and benches run netattach with');
  const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
  const imageEnv = /^ENV NODE_OPTIONS="([^"]*)"$/m.exec(dockerfile)?.[1];
  t.equal(imageEnv, nodeOptions?.value, 'the image sets the same NODE_OPTIONS');
  // glibc's malloc arenas, capped in both places alike (docs/performance.md).
  t.equal(env.find((e) => e.name === 'MALLOC_ARENA_MAX')?.value, '2', 'the Deployment caps the malloc arenas');
  t.equal(/^ENV MALLOC_ARENA_MAX="([^"]*)"$/m.exec(dockerfile)?.[1], '2', 'the image caps them the same');
  const mebibytes = (q: string): number => {
    const m = /^(\d+)(Mi|Gi)$/.exec(q);
    if (!m) throw new Error(`unexpected memory quantity ${q}`);
    return Number(m[1]) * (m[2] === 'Gi' ? 1024 : 1);
  };
  const limit = mebibytes(container.resources.limits.memory as string);
  // Node really applies it: the heap limit V8 reports under these options.
  const probe = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(require("v8").getHeapStatistics().heap_size_limit))'], {
    env: { ...process.env, NODE_OPTIONS: String(nodeOptions?.value ?? '') },
    encoding: 'utf8',
  });
  const heapMiB = Number(probe.stdout) / 2 ** 20;
  t.equal(probe.status, 0, `node accepts NODE_OPTIONS=${nodeOptions?.value} (it refuses most V8 flags there): ${probe.stderr}`);
  // The limit is the old space plus three semi-spaces: 195 MiB with 1 MiB ones, 240 with V8's default 16.
  t.ok(
    heapMiB >= 192 && heapMiB <= 192 + 3,
    `V8 heap limit ${heapMiB.toFixed(0)} MiB: the old space cap plus a young generation of 1 MiB semi-spaces`,
  );
  t.ok(heapMiB < limit, `below the memory limit of ${limit} MiB`);
});

t.test('the image tag is the package version, in the Deployment and the kustomize images', async (t) => {
  t.equal(container.image, `ghcr.io/netattach/netattach:${version}`);
  t.same(kustomization(BASE).images, [{ name: 'ghcr.io/netattach/netattach', newTag: version }]);
  const job = find(selfSigned, 'Job', 'netattach-certs');
  const certs = (job.spec.template.spec.initContainers as Obj[]).find((c) => c.name === 'certs');
  t.equal(certs?.image, `ghcr.io/netattach/netattach:${version}`);
});

t.test("every namespaced object lives in netattach-system, but the claims' Role in theirs", async (t) => {
  const clusterScoped = new Set([
    'Namespace',
    'CustomResourceDefinition',
    'ClusterRole',
    'ClusterRoleBinding',
    'PriorityClass',
    'MutatingWebhookConfiguration',
    'ValidatingWebhookConfiguration',
  ]);
  for (const { file, object } of [...selfSigned, ...certManager]) {
    const claims = (object.kind === 'Role' || object.kind === 'RoleBinding') && object.metadata.name === 'netattach-claims';
    if (clusterScoped.has(object.kind)) t.notOk(object.metadata.namespace, `${file}: ${object.kind} is cluster-scoped`);
    else
      t.equal(
        object.metadata.namespace,
        claims ? 'netattach-claims' : 'netattach-system',
        `${file}: ${object.kind} ${object.metadata.name}`,
      );
  }
  t.same(
    base.filter(({ object }) => object.kind === 'Namespace').map(({ object }) => object.metadata.name),
    ['netattach-system', 'netattach-claims'],
  );
});

// --- RBAC -------------------------------------------------------------------------------------

const rules = (objects: Array<{ object: Obj }>, kind: string, name: string): Obj[] => find(objects, kind, name).rules as Obj[];
const grants = (rs: Obj[]): string[] =>
  rs
    .flatMap((r) =>
      (r.apiGroups as string[]).flatMap((g) =>
        (r.resources as string[]).flatMap((res) => (r.verbs as string[]).map((v) => `${g}/${res}:${v}`)),
      ),
    )
    .sort();

t.test('netattach reads what it reads and writes only policy status, its PolicyReports and its Lease', async (t) => {
  const rs = rules(base, 'ClusterRole', 'netattach');
  // Writes of reports are limited to the one name netattach uses.
  t.same(
    rs.filter((r) => (r.verbs as string[]).includes('patch') && r.apiGroups[0] === 'wgpolicyk8s.io').map((r) => r.resourceNames),
    [['netattach']],
  );
  t.same(grants(rules(base, 'Role', 'netattach-audit-lease')), [
    'coordination.k8s.io/leases:create',
    'coordination.k8s.io/leases:get',
    'coordination.k8s.io/leases:patch',
  ]);
  t.same(find(base, 'Role', 'netattach-audit-lease').metadata.namespace, 'netattach-system');
  t.same(find(base, 'RoleBinding', 'netattach-audit-lease').subjects, [
    { kind: 'ServiceAccount', name: 'netattach', namespace: 'netattach-system' },
  ]);
  t.same(grants(rs), [
    '/namespaces:list',
    '/namespaces:watch',
    // get: one pod, before a claim its watch never confirmed is taken over (docs/policy.md).
    '/pods:get',
    '/pods:list',
    '/pods:watch',
    'k8s.cni.cncf.io/network-attachment-definitions:get',
    'k8s.cni.cncf.io/network-attachment-definitions:list',
    'k8s.cni.cncf.io/network-attachment-definitions:watch',
    // KubeVirt's binding plugin registry (docs/kubevirt.md): read only, and no single object.
    'kubevirt.io/kubevirts:list',
    'kubevirt.io/kubevirts:watch',
    'netattach.io/networkattachmentpolicies/status:patch',
    'netattach.io/networkattachmentpolicies/status:update',
    'netattach.io/networkattachmentpolicies:get',
    'netattach.io/networkattachmentpolicies:list',
    'netattach.io/networkattachmentpolicies:watch',
    // DRA (docs/dra.md): read only, nothing of resource.k8s.io is written.
    'resource.k8s.io/deviceclasses:list',
    'resource.k8s.io/deviceclasses:watch',
    'resource.k8s.io/resourceclaimtemplates:get',
    'resource.k8s.io/resourceclaimtemplates:list',
    'resource.k8s.io/resourceclaimtemplates:watch',
    'wgpolicyk8s.io/policyreports:create',
    'wgpolicyk8s.io/policyreports:get',
    'wgpolicyk8s.io/policyreports:list',
    'wgpolicyk8s.io/policyreports:patch',
  ]);
  const binding = find(base, 'ClusterRoleBinding', 'netattach');
  t.same(binding.subjects, [{ kind: 'ServiceAccount', name: 'netattach', namespace: 'netattach-system' }]);
  t.same(binding.roleRef, { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'netattach' });
});

t.test('address claims: Leases in netattach-claims only, bound to the netattach service account', async (t) => {
  const role = find(base, 'Role', 'netattach-claims');
  // Finding 7 of issue 24: in netattach-system this Role could delete every Lease there, the
  // audit's netattach-audit included. In a namespace of their own it reaches the claims only.
  t.equal(role.metadata.namespace, 'netattach-claims');
  const audit = find(base, 'Role', 'netattach-audit-lease');
  t.not(role.metadata.namespace, audit.metadata.namespace, 'no Role that may delete Leases shares a namespace with the audit Lease');
  t.same(grants(role.rules as Obj[]), [
    'coordination.k8s.io/leases:create',
    'coordination.k8s.io/leases:delete',
    'coordination.k8s.io/leases:get',
    'coordination.k8s.io/leases:list',
    'coordination.k8s.io/leases:watch',
  ]);
  const binding = find(base, 'RoleBinding', 'netattach-claims');
  t.equal(binding.metadata.namespace, 'netattach-claims');
  t.same(binding.subjects, [{ kind: 'ServiceAccount', name: 'netattach', namespace: 'netattach-system' }]);
  t.same(binding.roleRef, { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'netattach-claims' });
  const env = find(base, 'Deployment', 'netattach').spec.template.spec.containers[0].env as Obj[];
  t.same(
    env.find((e) => e.name === 'NETATTACH_NAMESPACE')?.valueFrom,
    { fieldRef: { fieldPath: 'metadata.namespace' } },
    'its own namespace: the audit Lease',
  );
  t.same(env.find((e) => e.name === 'NETATTACH_CLAIMS_NAMESPACE')?.value, 'netattach-claims', 'the claims in theirs');
  // serve reads the variable as the manifests set it.
  const { parseServeArgs } = await import('../../src/cli/serve.js');
  t.equal(
    (
      parseServeArgs(
        ['--tls-dir', '/tmp'],
        { NETATTACH_NAMESPACE: 'netattach-system', NETATTACH_CLAIMS_NAMESPACE: 'netattach-claims' },
        '/',
        '/',
      ) as { leaseNamespace?: string }
    ).leaseNamespace,
    'netattach-claims',
  );
  // Whatever Role may delete Leases: none in the audit Lease's namespace.
  for (const { file, object } of base) {
    if (object.kind !== 'Role' || object.metadata.namespace !== audit.metadata.namespace) continue;
    t.notOk(
      (object.rules as Obj[]).some((r) => (r.resources as string[]).includes('leases') && (r.verbs as string[]).includes('delete')),
      `${file}: ${object.metadata.name} cannot delete Leases next to the audit Lease`,
    );
  }
});

t.test('no RBAC rule anywhere uses wildcards or escalating verbs; the base never touches secrets', async (t) => {
  for (const { file, object } of [...selfSigned, ...certManager]) {
    if (object.kind !== 'Role' && object.kind !== 'ClusterRole') continue;
    for (const r of object.rules as Obj[]) {
      for (const field of ['apiGroups', 'resources', 'verbs'] as const)
        t.notOk((r[field] as string[]).includes('*'), `${file}: no * in ${field}`);
      t.notOk(
        (r.verbs as string[]).some((v) => ['escalate', 'bind', 'impersonate', 'deletecollection'].includes(v)),
        `${file}: no escalating verbs`,
      );
      // delete only for the address claims (Leases) in netattach's own namespace.
      if ((r.verbs as string[]).includes('delete'))
        t.ok(
          object.kind === 'Role' && object.metadata.name === 'netattach-claims' && (r.resources as string[]).join() === 'leases',
          `${file}: delete only on the claim Leases`,
        );
      if (file.startsWith('manifests/base')) t.notOk((r.resources as string[]).includes('secrets'), `${file}: no secrets in the base`);
    }
  }
});

t.test('the certificate job may touch only its own Secrets and webhook configurations', async (t) => {
  const role = rules(selfSigned, 'Role', 'netattach-certs');
  t.equal(find(selfSigned, 'Role', 'netattach-certs').metadata.namespace, 'netattach-system');
  for (const r of role) {
    t.same(r.resources, ['secrets']);
    // create cannot be scoped by name; everything else is.
    if (r.verbs.includes('create')) t.same(r.verbs, ['create']);
    else t.same(r.resourceNames, ['netattach-ca', 'netattach-tls']);
  }
  for (const r of rules(selfSigned, 'ClusterRole', 'netattach-certs')) {
    t.same(r.apiGroups, ['admissionregistration.k8s.io']);
    t.same(r.resourceNames, ['netattach']);
    t.same(r.verbs, ['get', 'patch']);
  }
  const job = find(selfSigned, 'Job', 'netattach-certs');
  t.equal(job.spec.template.spec.serviceAccountName, 'netattach-certs');
  t.ok(job.spec.ttlSecondsAfterFinished > 0, 'the finished Job goes away, so a re-apply can create it again');
});

t.test('cert-manager: the serving certificate names the Service and the CA is injected', async (t) => {
  const tls = find(certManager, 'Certificate', 'netattach-tls');
  t.equal(tls.spec.secretName, 'netattach-tls');
  t.ok(tls.spec.dnsNames.includes('netattach.netattach-system.svc'), 'SAN the apiserver dials');
  t.equal(tls.spec.issuerRef.name, 'netattach-ca');
  t.equal(find(certManager, 'Issuer', 'netattach-ca').spec.ca.secretName, find(certManager, 'Certificate', 'netattach-ca').spec.secretName);
  const patches = (kustomization(CERT_MANAGER).patches as Obj[]).map((p) => String(p.patch));
  for (const kind of ['MutatingWebhookConfiguration', 'ValidatingWebhookConfiguration']) {
    t.ok(
      patches.some((p) => p.includes(`kind: ${kind}`) && p.includes('cert-manager.io/inject-ca-from: netattach-system/netattach-tls')),
      `${kind} gets the CA`,
    );
  }
});
