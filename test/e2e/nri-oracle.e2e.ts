/**
 * network-resources-injector v1.9.0 as a test oracle. NRI (built by infra/build-nri.sh) and
 * netattach run side by side against one kube-apiserver with the same NADs; every pod of the
 * corpus is defaulted by the apiserver (dry run), sent to both /mutate endpoints as the same
 * AdmissionReview over HTTPS, each answer's JSON Patch is applied (fast-json-patch), and the result
 * goes through the apiserver again (dry run), so what is compared is the pod that would be stored,
 * or the refusal. The two must be equal, except where the case lists a deliberate difference
 * from docs/nri-differences.json; a listed difference that does not show fails too.
 *
 *   npm run test:e2e     (builds kube-apiserver and NRI once, cached; see test/e2e/infra)
 */
import t, { type Test } from 'tap';
import { mkdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import fastJsonPatch from 'fast-json-patch';
import { startCluster, type Cluster } from './infra/cluster.js';
import { parseManifests } from './infra/webhook.js';
import { freePort, run, toDocs } from './lib/env.js';
import { MAIN, Netattach, REPO } from './lib/netattach.js';
import { Nri, createReview, nriBinary, postJson } from './lib/nri.js';
import { explain, loadDifferences, type Delta } from './lib/nri-differences.js';
import { IMAGE, NETWORKS, NODE_SELECTOR, RESOURCE_NAME, macvlanConfig, namespace, nad, sriovConfig } from './lib/objects.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const DEFAULT_CONTAINER = 'kubectl.kubernetes.io/default-container';
const DEFAULT_NETWORK = 'v1.multus-cni.io/default-network';
const SRIOV_A = 'intel.com/sriov_a';
const SRIOV_B = 'intel.com/sriov_b';
const table = loadDifferences();

// ------------------------------------------------------------------------------------ the corpus

const NADS: Obj[] = [
  nad({ namespace: 'nri-a', name: 'sriov-a', config: sriovConfig('sriov-a'), annotations: { [RESOURCE_NAME]: SRIOV_A } }),
  nad({ namespace: 'nri-a', name: 'sriov-b', config: sriovConfig('sriov-b'), annotations: { [RESOURCE_NAME]: SRIOV_B } }),
  nad({
    namespace: 'nri-a',
    name: 'rdma-sriov',
    config: sriovConfig('rdma-sriov'),
    annotations: { [RESOURCE_NAME]: `rdma/hca_shared, ${SRIOV_A}` },
  }),
  nad({
    namespace: 'nri-a',
    name: 'zone-a',
    config: sriovConfig('zone-a'),
    annotations: { [RESOURCE_NAME]: SRIOV_A, [NODE_SELECTOR]: 'topology.kubernetes.io/zone=a' },
  }),
  nad({ namespace: 'nri-a', name: 'capable', config: macvlanConfig('capable'), annotations: { [NODE_SELECTOR]: 'sriov-capable' } }),
  nad({ namespace: 'nri-a', name: 'plain', config: macvlanConfig('plain') }),
  nad({ namespace: 'nri-b', name: 'sriov-b', config: sriovConfig('sriov-b'), annotations: { [RESOURCE_NAME]: SRIOV_B } }),
  nad({
    namespace: 'kube-system',
    name: 'default-res',
    config: macvlanConfig('default-res'),
    annotations: { [RESOURCE_NAME]: 'example.com/default_net' },
  }),
  nad({
    namespace: 'nri-vm',
    name: 'sriov-vm',
    config: sriovConfig('sriov-vm'),
    annotations: { [RESOURCE_NAME]: 'openshift.io/sriov_vm' },
  }),
];

interface Case {
  name: string;
  pod: Obj;
  /** ids in docs/nri-differences.json: these differences, and only these, must show. */
  differences?: string[];
  /** netattach's outcome, so that a case cannot pass by both sides failing alike. */
  netattach: 'allowed' | 'denied';
  /** Extra checks of netattach's resulting pod (which NRI's then equals, but for the listed differences). */
  check?: (t: Test, pod: Obj) => void;
}

const res = (m: Obj) => ({ requests: m, limits: m });
const container = (name: string, extra: Obj = {}): Obj => ({ name, image: IMAGE, ...extra });

function pod(
  ns: string,
  name: string,
  o: { networks?: string | Obj[]; annotations?: Obj; labels?: Obj | null; containers?: Obj[]; spec?: Obj; metadata?: Obj } = {},
): Obj {
  const annotations: Obj = { ...(o.annotations ?? {}) };
  if (o.networks !== undefined) annotations[NETWORKS] = typeof o.networks === 'string' ? o.networks : JSON.stringify(o.networks);
  const labels = o.labels === null ? undefined : (o.labels ?? { app: name });
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: ns,
      ...(labels ? { labels } : {}),
      ...(Object.keys(annotations).length ? { annotations } : {}),
      ...(o.metadata ?? {}),
    },
    spec: { containers: o.containers ?? [container('app')], ...(o.spec ?? {}) },
  };
}

const hugepages = (size: '1Gi' | '2Mi', amount: string, memory = '1Gi') => res({ [`hugepages-${size}`]: amount, memory });
/** The podnetinfo volume's files by path (normalize() keys them so). */
const items = (p: Obj): Obj => p.spec.volumes.find((v: Obj) => v.name === 'podnetinfo').downwardAPI.items;

/** A virt-launcher pod as KubeVirt creates it for a VMI with an SR-IOV interface and hugepages. */
function virtLauncher(name: string, networks: Obj[], hugepages1Gi?: string): Obj {
  const compute: Obj = {
    name: 'compute',
    image: 'quay.io/kubevirt/virt-launcher:v1.6.0',
    command: ['/usr/bin/virt-launcher-monitor', '--qemu-timeout', '321s', '--name', 'vm1', '--namespace', 'nri-vm'],
    resources: {
      requests: {
        cpu: '100m',
        memory: '1280Mi',
        'devices.kubevirt.io/kvm': '1',
        'devices.kubevirt.io/tun': '1',
        'devices.kubevirt.io/vhost-net': '1',
        ...(hugepages1Gi ? { 'hugepages-1Gi': hugepages1Gi } : {}),
      },
      limits: {
        'devices.kubevirt.io/kvm': '1',
        'devices.kubevirt.io/tun': '1',
        'devices.kubevirt.io/vhost-net': '1',
        ...(hugepages1Gi ? { 'hugepages-1Gi': hugepages1Gi } : {}),
      },
    },
    volumeMounts: [
      { name: 'private', mountPath: '/var/run/kubevirt-private' },
      { name: 'hotplug-disks', mountPath: '/var/run/kubevirt/hotplug-disks', mountPropagation: 'HostToContainer' },
    ],
  };
  return pod('nri-vm', name, {
    networks,
    labels: {
      'kubevirt.io': 'virt-launcher',
      'kubevirt.io/created-by': '7f8e9d0c-1b2a-4c3d-9e8f-0a1b2c3d4e5f',
      'vm.kubevirt.io/name': 'vm1',
    },
    annotations: {
      [DEFAULT_CONTAINER]: 'compute',
      'kubevirt.io/domain': 'vm1',
      'kubevirt.io/migrationTransportUnix': 'true',
      'descheduler.alpha.kubernetes.io/request-evict-only': '',
    },
    metadata: {
      ownerReferences: [
        {
          apiVersion: 'kubevirt.io/v1',
          kind: 'VirtualMachineInstance',
          name: 'vm1',
          uid: '7f8e9d0c-1b2a-4c3d-9e8f-0a1b2c3d4e5f',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    containers: [compute, container('guest-console-log', { resources: res({ cpu: '15m', memory: '60M' }) })],
    spec: {
      automountServiceAccountToken: false,
      hostname: 'vm1',
      nodeSelector: { 'kubevirt.io/schedulable': 'true' },
      volumes: [
        { name: 'private', emptyDir: {} },
        { name: 'hotplug-disks', emptyDir: {} },
      ],
      terminationGracePeriodSeconds: 210,
    },
  });
}

const CASES: Case[] = [
  { name: 'no networks', pod: pod('nri-a', 'none'), netattach: 'allowed' },
  { name: 'a network without resources', pod: pod('nri-a', 'plain', { networks: 'plain' }), netattach: 'allowed' },
  {
    name: 'one network',
    pod: pod('nri-a', 'one', { networks: 'sriov-a' }),
    netattach: 'allowed',
    check: (t, p) => t.same(p.spec.containers[0].resources, res({ [SRIOV_A]: '1' })),
  },
  {
    name: 'one network, a pod without labels',
    pod: pod('nri-a', 'unlabelled', { networks: 'sriov-a', labels: null }),
    differences: ['podnetinfo-labels'],
    netattach: 'allowed',
  },
  {
    name: 'several networks, one twice',
    pod: pod('nri-a', 'several', { networks: 'sriov-a,sriov-a,sriov-b' }),
    netattach: 'allowed',
    check: (t, p) => t.same(p.spec.containers[0].resources, res({ [SRIOV_A]: '2', [SRIOV_B]: '1' })),
  },
  {
    name: 'JSON form with interface names',
    pod: pod('nri-a', 'json', {
      networks: [
        { name: 'sriov-a', interface: 'net1' },
        { name: 'sriov-b', namespace: 'nri-a', interface: 'net2' },
      ],
    }),
    netattach: 'allowed',
  },
  {
    name: 'comma-separated resourceName',
    pod: pod('nri-a', 'comma', { networks: 'rdma-sriov' }),
    differences: ['comma-resource-name'],
    netattach: 'allowed',
  },
  {
    name: 'several containers: resources in the first, podnetinfo mounted in all',
    pod: pod('nri-a', 'containers', {
      networks: 'sriov-a',
      containers: [container('app'), container('sidecar', { volumeMounts: [{ name: 'data', mountPath: '/data' }] })],
      spec: { volumes: [{ name: 'data', emptyDir: {} }] },
    }),
    netattach: 'allowed',
    check: (t, p) =>
      t.same(
        p.spec.containers.map((c: Obj) => c.volumeMounts.at(-1).mountPath),
        ['/etc/podnetinfo', '/etc/podnetinfo'],
      ),
  },
  {
    name: 'cpu and memory already set',
    pod: pod('nri-a', 'cpu', { networks: 'sriov-a', containers: [container('app', { resources: res({ cpu: '1', memory: '1Gi' }) })] }),
    netattach: 'allowed',
  },
  {
    name: 'the user asks for more devices than needed',
    pod: pod('nri-a', 'more', { networks: 'sriov-a', containers: [container('app', { resources: res({ [SRIOV_A]: '3' }) })] }),
    netattach: 'allowed',
  },
  {
    name: 'the user asks for fewer devices than needed',
    pod: pod('nri-a', 'fewer', { networks: 'sriov-a,sriov-a', containers: [container('app', { resources: res({ [SRIOV_A]: '1' }) })] }),
    differences: ['raise-user-value'],
    netattach: 'allowed',
  },
  {
    name: 'the devices are already asked for in another container',
    pod: pod('nri-a', 'elsewhere', {
      networks: 'sriov-a',
      containers: [container('app'), container('dpdk', { resources: res({ [SRIOV_A]: '1' }) })],
    }),
    netattach: 'allowed',
  },
  {
    name: "nodeSelector NAD merged with the pod's",
    pod: pod('nri-a', 'zone', { networks: 'zone-a', spec: { nodeSelector: { disk: 'ssd' } } }),
    netattach: 'allowed',
    check: (t, p) => t.same(p.spec.nodeSelector, { disk: 'ssd', 'topology.kubernetes.io/zone': 'a' }),
  },
  { name: 'nodeSelector key only, NAD without resources', pod: pod('nri-a', 'capable', { networks: 'capable' }), netattach: 'allowed' },
  {
    name: "nodeSelector conflicting with the pod's",
    pod: pod('nri-a', 'conflict', { networks: 'zone-a', spec: { nodeSelector: { 'topology.kubernetes.io/zone': 'b' } } }),
    differences: ['node-selector-conflict'],
    netattach: 'denied',
  },
  {
    name: 'hugepages 1Gi',
    pod: pod('nri-a', 'hp', { networks: 'sriov-a', containers: [container('dpdk', { resources: hugepages('1Gi', '2Gi') })] }),
    netattach: 'allowed',
    check: (t, p) => {
      t.same(items(p)['hugepages_1G_request_dpdk']?.resourceFieldRef, {
        containerName: 'dpdk',
        resource: 'requests.hugepages-1Gi',
        divisor: '1Mi',
      });
      t.same(p.spec.containers[0].env, [{ name: 'CONTAINER_NAME', value: 'dpdk' }]);
    },
  },
  {
    name: 'hugepages 2Mi and 1Gi in two containers, env kept',
    pod: pod('nri-a', 'hp2', {
      networks: 'sriov-a',
      containers: [
        container('a', { resources: hugepages('2Mi', '512Mi'), env: [{ name: 'MODE', value: 'poll' }] }),
        container('b', {
          resources: {
            requests: { 'hugepages-1Gi': '1Gi', 'hugepages-2Mi': '4Mi', cpu: '1' },
            limits: { 'hugepages-1Gi': '1Gi', 'hugepages-2Mi': '4Mi', cpu: '1' },
          },
        }),
        container('plain'),
      ],
    }),
    netattach: 'allowed',
    check: (t, p) => {
      t.equal(Object.keys(items(p)).filter((k) => k.startsWith('hugepages_')).length, 6);
      t.same(
        p.spec.containers.map((c: Obj) => c.env?.at(-1)?.value),
        ['a', 'b', undefined],
      );
    },
  },
  {
    name: 'hugepages with CONTAINER_NAME already set otherwise',
    pod: pod('nri-a', 'hp-env', {
      networks: 'sriov-a',
      containers: [container('dpdk', { resources: hugepages('1Gi', '1Gi'), env: [{ name: 'CONTAINER_NAME', value: 'other' }] })],
    }),
    netattach: 'allowed',
    check: (t, p) => t.same(p.spec.containers[0].env, [{ name: 'CONTAINER_NAME', value: 'other' }]),
  },
  {
    name: 'hugepages without a network that needs a resource',
    pod: pod('nri-a', 'hp-plain', { networks: 'plain', containers: [container('dpdk', { resources: hugepages('1Gi', '1Gi') })] }),
    netattach: 'allowed',
    check: (t, p) => t.equal(p.spec.volumes, undefined),
  },
  {
    name: "hugepages and the user's own volume named podnetinfo",
    pod: pod('nri-a', 'hp-vol', {
      networks: 'sriov-a',
      containers: [container('dpdk', { resources: hugepages('1Gi', '1Gi') })],
      spec: { volumes: [{ name: 'podnetinfo', emptyDir: {} }] },
    }),
    differences: ['user-podnetinfo-volume'],
    netattach: 'allowed',
  },
  {
    name: 'default-container annotation naming the second container',
    pod: pod('nri-a', 'default-c', {
      networks: 'sriov-a',
      annotations: { [DEFAULT_CONTAINER]: 'main' },
      containers: [container('proxy'), container('main')],
    }),
    differences: ['default-container'],
    netattach: 'allowed',
    check: (t, p) => t.same(p.spec.containers[1].resources, res({ [SRIOV_A]: '1' })),
  },
  {
    name: 'default-container annotation naming the first container',
    pod: pod('nri-a', 'default-first', {
      networks: 'sriov-a',
      annotations: { [DEFAULT_CONTAINER]: 'main' },
      containers: [container('main'), container('proxy')],
    }),
    netattach: 'allowed',
  },
  { name: 'networks in two namespaces', pod: pod('nri-b', 'cross', { networks: 'nri-a/sriov-a,sriov-b' }), netattach: 'allowed' },
  {
    name: 'default network, namespace given',
    pod: pod('nri-a', 'defnet', { networks: 'sriov-a', annotations: { [DEFAULT_NETWORK]: 'kube-system/default-res' } }),
    netattach: 'allowed',
  },
  {
    name: 'default network without a namespace',
    pod: pod('nri-a', 'defnet-bare', { annotations: { [DEFAULT_NETWORK]: 'default-res' } }),
    differences: ['default-network-namespace'],
    netattach: 'allowed',
  },
  { name: 'a NAD that does not exist', pod: pod('nri-a', 'ghost', { networks: 'ghost' }), netattach: 'denied' },
  {
    name: 'a malformed annotation',
    pod: pod('nri-a', 'malformed', { networks: 'a/b/c' }),
    differences: ['malformed-annotation'],
    netattach: 'denied',
  },
  {
    name: 'KubeVirt virt-launcher: SR-IOV interface with a MAC, hugepages',
    pod: virtLauncher(
      'virt-launcher-vm1-x7k2p',
      [{ name: 'sriov-vm', namespace: 'nri-vm', interface: 'pod37a8eec1ce1', mac: '02:00:00:00:00:01' }],
      '2Gi',
    ),
    netattach: 'allowed',
    check: (t, p) => {
      t.same(p.spec.containers[0].resources.limits['openshift.io/sriov_vm'], '1');
      t.ok('hugepages_1G_limit_compute' in items(p));
    },
  },
  {
    name: 'KubeVirt virt-launcher: two SR-IOV interfaces, no hugepages',
    pod: virtLauncher('virt-launcher-vm2-q9d4s', [
      { name: 'sriov-vm', namespace: 'nri-vm', interface: 'pod37a8eec1ce1' },
      { name: 'sriov-vm', namespace: 'nri-vm', interface: 'pod5d1f8e2c7a0' },
    ]),
    netattach: 'allowed',
    check: (t, p) => t.same(p.spec.containers[0].resources.requests['openshift.io/sriov_vm'], '2'),
  },
];

// ----------------------------------------------------------------------------- the harness

let cluster: Cluster;
let netattach: Netattach;
let nri: Nri;

/** The pod as the apiserver would store it (dry run, no webhooks are registered), or its refusal. */
async function dryRunCreate(p: Obj): Promise<{ status: number; pod?: Obj; message?: string }> {
  const r = await cluster.request('POST', `/api/v1/namespaces/${p.metadata.namespace}/pods?dryRun=All`, p);
  const body = JSON.parse(r.body) as Obj;
  if (r.status >= 200 && r.status < 300) return { status: r.status, pod: body };
  return { status: r.status, message: String(body.message ?? r.body) };
}

/** What differs by nature between two creations, and Downward API items keyed by path (order is NRI's Go map order). */
function normalize(p: Obj): Obj {
  const out = structuredClone(p);
  for (const k of ['uid', 'creationTimestamp', 'managedFields', 'resourceVersion', 'generation']) delete out.metadata[k];
  for (const v of out.spec.volumes ?? []) {
    if (Array.isArray(v.downwardAPI?.items)) v.downwardAPI.items = Object.fromEntries(v.downwardAPI.items.map((i: Obj) => [i.path, i]));
  }
  return out;
}

interface Result {
  outcome: string;
  pod?: Obj;
}

/** One webhook's answer to the review, applied and stored (dry run). */
async function resultOf(url: string, review: Obj, original: Obj): Promise<Result & { raw: string }> {
  const r = await postJson(`${url}/mutate`, review);
  if (r.status !== 200) return { outcome: `HTTP ${r.status}`, raw: r.body };
  const response = (JSON.parse(r.body) as Obj).response as Obj;
  if (!response.allowed) return { outcome: 'denied', raw: r.body };
  // NRI sends the patch `null` when a pod with networks needs nothing; the apiserver applies it as empty.
  const patch = ((response.patch ? JSON.parse(Buffer.from(response.patch, 'base64').toString('utf8')) : null) ??
    []) as fastJsonPatch.Operation[];
  let patched: Obj;
  try {
    patched = fastJsonPatch.applyPatch(structuredClone(original), patch, true, false).newDocument;
  } catch (e) {
    return { outcome: `patch does not apply: ${(e as Error).name}`, raw: r.body };
  }
  const stored = await dryRunCreate(patched);
  if (!stored.pod) return { outcome: `refused by the apiserver (${stored.status})`, raw: `${r.body}\n${stored.message}` };
  return { outcome: 'allowed', pod: normalize(stored.pod), raw: r.body };
}

t.before(async () => {
  const t0 = Date.now();
  const bin = await nriBinary();
  cluster = await startCluster({ log: (m) => t.comment(m) });
  const work = path.join(cluster.workDir, 'nri-oracle');
  await mkdir(work, { recursive: true });
  const kubectlApply = async (objs: Obj[]): Promise<void> => {
    await cluster.kubectlOk(['apply', '--server-side', '-f', '-'], { input: toDocs(objs) });
  };
  // The NAD CRD (what Multus installs) and netattach's policy CRD (it watches policies; none exist).
  for (const file of ['test/e2e/fixtures/nad-crd.yaml', 'manifests/base/crd-networkattachmentpolicy.yaml']) {
    await kubectlApply(parseManifests(await readFile(path.join(REPO, file), 'utf8')) as Obj[]);
  }
  await cluster.kubectlOk([
    'wait',
    '--for=condition=Established',
    '--timeout=60s',
    'crd/network-attachment-definitions.k8s.cni.cncf.io',
    'crd/networkattachmentpolicies.netattach.io',
  ]);
  await kubectlApply(['nri-a', 'nri-b', 'nri-vm'].map((n) => namespace(n)));
  for (let i = 0; ; i++) {
    try {
      await kubectlApply(NADS);
      break;
    } catch (e) {
      if (i > 60) throw e; // the CRD may not be in discovery yet
      await new Promise((r) => setTimeout(r, 500));
    }
  }

  const tls = path.join(work, 'tls');
  const certs = await run(process.execPath, [MAIN, 'certs', '--out', tls, '--san', '127.0.0.1', '--san', 'localhost']);
  if (certs.code !== 0) throw new Error(`netattach certs failed: ${certs.stderr}`);

  netattach = new Netattach({
    kubeconfig: cluster.kubeconfigPath,
    tlsDir: tls,
    port: await freePort(),
    healthPort: await freePort(),
    logPath: path.join(cluster.logsDir, 'netattach.log'),
    extraArgs: ['--podnetinfo', '--hugepages-downward-api', '--no-pod-watch'],
  });
  const api = new URL(cluster.server);
  nri = new Nri({
    bin,
    workDir: path.join(work, 'nri'),
    apiserver: { host: api.hostname, port: api.port, token: cluster.token, caPem: cluster.caPem },
    certFile: path.join(tls, 'tls.crt'),
    keyFile: path.join(tls, 'tls.key'),
    port: await freePort(),
    healthPort: await freePort(),
    logPath: path.join(cluster.logsDir, 'nri.log'),
    extraArgs: ['-injectHugepageDownApi'],
  });
  netattach.start();
  await nri.start();
  await Promise.all([netattach.waitReady(), nri.waitReady()]);
  t.comment(`cluster, netattach and NRI up in ${Date.now() - t0} ms`);
});

t.teardown(async () => {
  if (!t.passing())
    process.stderr.write(`\n[e2e] failure: log tails\n${nri?.tail(60)}\n${netattach?.tail(60)}\n${cluster?.tailLogs(40)}\n`);
  await nri?.stop();
  await netattach?.close();
  await cluster?.stop();
});

const seen = new Set<string>();

for (const c of CASES) {
  t.test(c.name, async (t) => {
    const given = await dryRunCreate(c.pod);
    t.ok(given.pod, `the corpus pod is valid: ${given.message ?? ''}`);
    if (!given.pod) return;
    const object = given.pod;
    delete object.metadata.uid;
    delete object.metadata.creationTimestamp;
    delete object.metadata.managedFields;
    const review = createReview(object);
    const [fromNri, fromNetattach] = await Promise.all([resultOf(nri.url, review, object), resultOf(netattach.url, review, object)]);
    t.equal(fromNetattach.outcome, c.netattach, `netattach: ${c.netattach}\n${fromNetattach.raw}`);
    if (fromNetattach.pod && c.check) c.check(t, fromNetattach.pod);

    const strip = ({ outcome, pod }: Result): Result => ({ outcome, ...(pod ? { pod } : {}) });
    const deltas = fastJsonPatch.compare(strip(fromNri), strip(fromNetattach)) as Delta[];
    const listed = c.differences ?? [];
    for (const id of listed) seen.add(id);
    const { unexplained, unused } = explain(deltas, listed, table);
    t.same(
      unexplained,
      [],
      `every difference is listed in docs/nri-differences.json (NRI: ${fromNri.outcome}, netattach: ${fromNetattach.outcome})\nNRI answered: ${fromNri.raw.slice(0, 2000)}`,
    );
    t.same(unused, [], 'every listed difference shows');
  });
}

t.test('every entry of the table is shown by some pod of the corpus', async (t) => {
  t.same(
    table.differences.map((d) => d.id).filter((id) => !seen.has(id)),
    [],
  );
});
