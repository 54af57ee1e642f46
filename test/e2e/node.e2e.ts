/**
 * The device-plugin path on a real node (issue 29): pods admitted through netattach run on a
 * kubelet with containerd, and the kubelet gives each the devices its networks need through a
 * device plugin. Everything here is real except the hardware and Multus:
 *   kube-apiserver + etcd + kube-scheduler (+ the controller-manager's resourceclaim controller),
 *   netattach as the webhook (--podnetinfo --hugepages-downward-api), a kubelet (lib/node.ts),
 *   containerd + runc, the pod network from the reference bridge plugin, and a fake device plugin
 *   (infra/node/fake-device-plugin) that advertises SR-IOV-like and RDMA-like devices, records
 *   every Allocate and returns `PCIDEVICE_<RESOURCE>=<ids>` as real plugins do. The containers
 *   run netprobe, which prints its environment and the files it is pointed at.
 * Multus is not here (neither a Go module nor a Debian package): secondary interfaces are not
 * attached; test/e2e/cni-oracle.e2e.ts executes the CNI plugins for that layer.
 *
 * Evidence per pod: the kubelet's device checkpoint (which devices which container of which pod
 * holds), the plugin's Allocate record (exactly those devices, nothing else since the pod was
 * created), and the container's log (the env the plugin returned).
 *
 *   npm run test:e2e     (runs this last, on the v1.37.2 binaries with the kubelet; build-node.sh)
 */
import t, { type Test } from 'tap';
import fastJsonPatch from 'fast-json-patch';
import { eventually, startE2e, type E2e } from './lib/env.js';
import { createReview, nriBinary, nriOptionsFor, postJson } from './lib/nri.js';
import {
  attributeRecords,
  parseNetprobeLog,
  runNriCorpus,
  type AllocateRecord,
  type CorpusPod,
  type CreateResult,
  type Webhook,
} from './node/nri-corpus.js';
import { NODE_APISERVER_FLAGS, nodeParts, startNode, type Allocation, type RealNode } from './lib/node.js';
import { NETWORKS, RESOURCE_NAME, namespace, nad, sriovConfig } from './lib/objects.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const NS = 'node';
const OFF_NS = 'node-off'; // netattach.io/admission=disabled: netattach is not called
const SRIOV = 'intel.com/sriov_netdevice';
const RDMA = 'rdma/hca_shared_devices_a';
const DEVICES = { [SRIOV]: 3, [RDMA]: 2 };
const DEFAULT_NETWORK = 'v1.multus-cni.io/default-network';
const DEFAULT_CONTAINER = 'kubectl.kubernetes.io/default-container';
const IMAGE = 'netattach.local/netprobe:e2e';
const RUNNING_MS = 120_000;

let e: E2e;
let node: RealNode | undefined;

t.before(async () => {
  const t0 = Date.now();
  const parts = nodeParts();
  e = await startE2e(
    (m) => t.comment(m),
    { scheduling: true, apiserverFlags: NODE_APISERVER_FLAGS },
    { extraArgs: ['--podnetinfo', '--hugepages-downward-api'] },
  );
  t.comment(`cluster with scheduler, netattach and webhooks up in ${Date.now() - t0} ms`);
  try {
    node = await startNode(e.cluster, parts, (m) => t.comment(m), { resources: DEVICES, hugepages2Mi: 16 });
  } catch (err) {
    await e.stop();
    throw err;
  }
  t.comment(`node ${node.name} Ready with its devices ${Date.now() - t0} ms after start`);
  await e.applyOk([
    namespace(NS),
    namespace(OFF_NS, { 'netattach.io/admission': 'disabled' }),
    nad({ namespace: NS, name: 'sriov-net', config: sriovConfig('sriov-net'), annotations: { [RESOURCE_NAME]: SRIOV } }),
    nad({ namespace: NS, name: 'rdma-net', config: sriovConfig('rdma-net'), annotations: { [RESOURCE_NAME]: RDMA } }),
    nad({ namespace: NS, name: 'both-net', config: sriovConfig('both-net'), annotations: { [RESOURCE_NAME]: `${SRIOV}, ${RDMA}` } }),
    nad({ namespace: OFF_NS, name: 'sriov-net', config: sriovConfig('sriov-net'), annotations: { [RESOURCE_NAME]: SRIOV } }),
  ]);
  // The namespaces' default ServiceAccounts (no ServiceAccount admission runs, but the pods name none).
});

t.teardown(async () => {
  if (e && !t.passing()) process.stderr.write(`\n[e2e] failure: log tails\n${node?.tails(60) ?? ''}\n${e.tails(60)}\n`);
  try {
    await node?.stop();
  } finally {
    await e?.stop();
  }
});

// ---------------------------------------------------------------------------- helpers

interface ContainerOpts {
  name?: string;
  /** the container's own resources (e.g. too few devices, hugepages) */
  resources?: Obj;
  cat?: string[];
}

function probePod(
  ns: string,
  name: string,
  annotations: Record<string, string>,
  containers: ContainerOpts[] = [{}],
  labels: Record<string, string> = {},
): Obj {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: ns, annotations, labels: { 'e2e.netattach.io/node': 'true', ...labels } },
    spec: {
      terminationGracePeriodSeconds: 2,
      containers: containers.map((c) => ({
        name: c.name ?? 'app',
        image: IMAGE,
        imagePullPolicy: 'Never',
        ...(c.cat ? { args: c.cat.flatMap((p) => ['--cat', p]) } : {}),
        ...(c.resources ? { resources: c.resources } : {}),
      })),
    },
  };
}

async function create(p: Obj): Promise<void> {
  await e.cluster.kubectlOk(['create', '-f', '-'], { input: JSON.stringify(p) });
}

const getPod = (ns: string, name: string): Promise<Obj> => e.getJson<Obj>(['pod', '-n', ns, name]);

async function running(ns: string, name: string): Promise<Obj> {
  return eventually(
    `pod ${ns}/${name} Running`,
    async () => {
      const p = await getPod(ns, name);
      if (p.status?.phase === 'Failed') throw new Error(`pod ${ns}/${name} failed: ${JSON.stringify(p.status)}`);
      return p.status?.phase === 'Running' ? p : undefined;
    },
    RUNNING_MS,
  );
}

/** The container's log once netprobe has printed everything. */
async function probeLog(ns: string, name: string, container = 'app'): Promise<string> {
  return eventually(
    `log of ${ns}/${name}/${container}`,
    async () => {
      const r = await e.cluster.kubectl(['logs', '-n', ns, name, '-c', container]);
      return r.code === 0 && r.stdout.includes('netprobe: ready') ? r.stdout : undefined;
    },
    60_000,
  );
}

/** PCIDEVICE_* variables of a netprobe log: variable -> sorted ids. */
function pciEnv(log: string): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const l of log.split('\n')) {
    const m = /^env: (PCIDEVICE_[A-Z0-9_]+)=(.*)$/.exec(l);
    if (m) out[m[1]!] = m[2]!.split(',').filter(Boolean).sort();
  }
  return out;
}

/** What a plugin names the variable of a resource: upper case, non-alphanumerics to `_`. */
const envName = (resource: string): string => `PCIDEVICE_${resource.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;

/** The content netprobe printed for FILE (`file: FILE` then the content up to the next marker). */
function fileIn(log: string, file: string): string | undefined {
  const lines = log.split('\n');
  const at = lines.indexOf(`file: ${file}`);
  if (at < 0) return undefined;
  const body: string[] = [];
  for (const l of lines.slice(at + 1)) {
    if (/^(file: |missing: |netprobe: ready)/.test(l)) break;
    body.push(l);
  }
  return body.join('\n');
}

async function deletePods(ns: string, ...names: string[]): Promise<void> {
  await e.cluster.kubectlOk(['delete', 'pod', '-n', ns, ...names, '--wait=true', '--timeout=90s'], { timeoutMs: 100_000 });
}

interface Proof {
  pod: Obj;
  /** container -> log */
  logs: Record<string, string>;
  /** Allocate calls since the pod was created */
  allocations: Allocation[];
}

/**
 * Creates `p`, waits for it to run, and asserts the device path: the kubelet's checkpoint gives
 * `container` exactly `want` (resource -> count) and no other container anything, the plugin was
 * asked to Allocate exactly those devices (one call per resource) and nothing else, and the
 * container's env holds them while the other containers' do not.
 */
async function proveDevices(t: Test, p: Obj, container: string, want: Record<string, number>): Promise<Proof> {
  const ns = p.metadata.namespace as string;
  const name = p.metadata.name as string;
  const before = node!.allocations().length;
  await create(p);
  const pod = await running(ns, name);
  const uid = pod.metadata.uid as string;
  const entries = node!.checkpoint().filter((c) => c.podUid === uid);
  t.same(
    Object.fromEntries(entries.filter((c) => c.container === container).map((c) => [c.resource, c.devices.length])),
    want,
    `${name}: the kubelet gave container ${container} ${JSON.stringify(want)}`,
  );
  t.same(
    entries.filter((c) => c.container !== container),
    [],
    `${name}: no other container got a device`,
  );
  const allocations = node!.allocations().slice(before);
  t.same(
    allocations.map((a) => [a.resource, [...a.devices].sort()]).sort(),
    entries.map((c) => [c.resource, [...c.devices].sort()]).sort(),
    `${name}: Allocate was called for exactly the devices the checkpoint holds`,
  );
  const logs: Record<string, string> = {};
  for (const c of pod.spec.containers as Array<{ name: string }>) logs[c.name] = await probeLog(ns, name, c.name);
  const expectEnv = Object.fromEntries(
    entries.filter((c) => c.container === container).map((c) => [envName(c.resource), [...c.devices].sort()]),
  );
  t.same(pciEnv(logs[container]!), expectEnv, `${name}: container ${container} sees its devices in its env`);
  for (const a of allocations)
    t.same(
      a.env[envName(a.resource)]?.split(',').sort(),
      [...a.devices].sort(),
      `${name}: the plugin returned ${envName(a.resource)} for its devices`,
    );
  for (const [c, log] of Object.entries(logs)) if (c !== container) t.same(pciEnv(log), {}, `${name}: container ${c} sees no device`);
  return { pod, logs, allocations };
}

/** The resources netattach wrote into the container (requests == limits for extended resources). */
function asked(pod: Obj, container: string, resource: string): [string | undefined, string | undefined] {
  const c = (pod.spec.containers as Obj[]).find((x) => x.name === container)!;
  return [c.resources?.requests?.[resource], c.resources?.limits?.[resource]];
}

// ---------------------------------------------------------------------------- the POC chain

t.test("simple form: one device of the NAD's resourceName, in the container's env", async (t) => {
  const { pod } = await proveDevices(t, probePod(NS, 'simple', { [NETWORKS]: 'sriov-net' }), 'app', { [SRIOV]: 1 });
  t.same(asked(pod, 'app', SRIOV), ['1', '1'], 'netattach asked for one');
  await deletePods(NS, 'simple');
});

t.test('JSON form selecting a network twice: two devices', async (t) => {
  const networks = JSON.stringify([{ name: 'sriov-net' }, { name: 'sriov-net', interface: 'net2' }]);
  const { pod } = await proveDevices(t, probePod(NS, 'twice', { [NETWORKS]: networks }), 'app', { [SRIOV]: 2 });
  t.same(asked(pod, 'app', SRIOV), ['2', '2']);
  await deletePods(NS, 'twice');
});

t.test('a comma-separated resourceName: one device of each', async (t) => {
  await proveDevices(t, probePod(NS, 'comma', { [NETWORKS]: 'both-net' }), 'app', { [SRIOV]: 1, [RDMA]: 1 });
  await deletePods(NS, 'comma');
});

t.test("the default network's resourceName", async (t) => {
  await proveDevices(t, probePod(NS, 'default-net', { [DEFAULT_NETWORK]: `${NS}/rdma-net` }), 'app', { [RDMA]: 1 });
  await deletePods(NS, 'default-net');
});

t.test('the default-container annotation: the devices go to that container', async (t) => {
  const p = probePod(NS, 'two-containers', { [NETWORKS]: 'sriov-net,rdma-net', [DEFAULT_CONTAINER]: 'app' }, [
    { name: 'sidecar' },
    { name: 'app' },
  ]);
  const { pod } = await proveDevices(t, p, 'app', { [SRIOV]: 1, [RDMA]: 1 });
  t.same(asked(pod, 'sidecar', SRIOV), [undefined, undefined], 'the first container is left alone');
  await deletePods(NS, 'two-containers');
});

t.test('more selections than free devices: Pending Insufficient, Running once one is freed', async (t) => {
  const hog = JSON.stringify([{ name: 'sriov-net' }, { name: 'sriov-net', interface: 'net2' }, { name: 'sriov-net', interface: 'net3' }]);
  await proveDevices(t, probePod(NS, 'hog', { [NETWORKS]: hog }), 'app', { [SRIOV]: 3 });
  const before = node!.allocations().length;
  await create(probePod(NS, 'waiter', { [NETWORKS]: 'sriov-net' }));
  const reason = await eventually(
    'waiter unschedulable',
    async () => {
      const p = await getPod(NS, 'waiter');
      const c = (p.status?.conditions ?? []).find((x: Obj) => x.type === 'PodScheduled');
      return c?.status === 'False' && c.reason === 'Unschedulable' ? String(c.message) : undefined;
    },
    RUNNING_MS,
  );
  t.match(reason, `Insufficient ${SRIOV}`, `the scheduler says: ${reason}`);
  t.equal((await getPod(NS, 'waiter')).status?.phase, 'Pending');
  t.equal(node!.allocations().length, before, 'no Allocate for the waiting pod');
  await deletePods(NS, 'hog');
  const pod = await running(NS, 'waiter');
  const entries = node!.checkpoint().filter((c) => c.podUid === pod.metadata.uid);
  t.same(
    entries.map((c) => [c.container, c.resource, c.devices.length]),
    [['app', SRIOV, 1]],
    'the freed device went to the waiting pod',
  );
  t.same(pciEnv(await probeLog(NS, 'waiter')), { [envName(SRIOV)]: entries[0]!.devices }, 'and it sees it');
  await deletePods(NS, 'waiter');
});

t.test('an excluded namespace: the pod runs without devices', async (t) => {
  const before = node!.allocations().length;
  await create(probePod(OFF_NS, 'off', { [NETWORKS]: 'sriov-net' }));
  const pod = await running(OFF_NS, 'off');
  t.same(asked(pod, 'app', SRIOV), [undefined, undefined], 'netattach did not inject');
  t.same(
    node!.checkpoint().filter((c) => c.podUid === pod.metadata.uid),
    [],
    'the kubelet gave no device',
  );
  t.equal(node!.allocations().length, before, 'no Allocate');
  t.same(pciEnv(await probeLog(OFF_NS, 'off')), {}, 'no device in the env');
  await deletePods(OFF_NS, 'off');
});

t.test("a user's too-low request is raised, and the container runs with what it needs", async (t) => {
  const low = { requests: { [SRIOV]: '1' }, limits: { [SRIOV]: '1' } };
  const networks = JSON.stringify([{ name: 'sriov-net' }, { name: 'sriov-net', interface: 'net2' }]);
  const { pod } = await proveDevices(t, probePod(NS, 'raised', { [NETWORKS]: networks }, [{ resources: low }]), 'app', { [SRIOV]: 2 });
  t.same(asked(pod, 'app', SRIOV), ['2', '2'], 'raised from 1 to 2');
  await deletePods(NS, 'raised');
});

t.test('the podnetinfo volume and the hugepages Downward API files, as the kubelet mounts them', async (t) => {
  const hugepages = node!.hugepages2Mi >= 2;
  if (!hugepages)
    t.comment(`the node has ${node!.hugepages2Mi} 2 MiB hugepages (the kernel refused more): only labels and annotations are checked`);
  const resources = hugepages
    ? { requests: { memory: '64Mi', 'hugepages-2Mi': '4Mi' }, limits: { memory: '64Mi', 'hugepages-2Mi': '4Mi' } }
    : undefined;
  const p = probePod(NS, 'podnetinfo', { [NETWORKS]: 'sriov-net' }, [{ cat: ['/etc/podnetinfo'], ...(resources ? { resources } : {}) }], {
    app: 'probe',
  });
  const { logs } = await proveDevices(t, p, 'app', { [SRIOV]: 1 });
  const log = logs.app!;
  t.match(fileIn(log, '/etc/podnetinfo/labels') ?? '', 'app="probe"', 'labels');
  t.match(fileIn(log, '/etc/podnetinfo/annotations') ?? '', `${NETWORKS}="sriov-net"`, 'annotations, the networks among them');
  if (hugepages) {
    t.equal(fileIn(log, '/etc/podnetinfo/hugepages_2M_request_app'), '4', 'hugepages request in MiB');
    t.equal(fileIn(log, '/etc/podnetinfo/hugepages_2M_limit_app'), '4', 'hugepages limit in MiB');
    t.match(log, /^env: CONTAINER_NAME=app$/m, 'CONTAINER_NAME');
  }
  await deletePods(NS, 'podnetinfo');
});

// ------------------------------------------------------- network-resources-injector on the node

/**
 * One corpus pod created through one webhook, run on the node, its Allocate records attributed to
 * containers from their netprobe logs, then deleted (every pod starts with all devices free).
 * netattach: created in NS, where it is the webhook. NRI: the pod sent to NRI's /mutate as in NS
 * (where the NADs are), its patch applied, the result created in OFF_NS, which netattach skips.
 */
async function viaWebhook(w: Webhook, given: Obj): Promise<CreateResult> {
  let pod = structuredClone(given);
  const name = `${w.name}-${pod.metadata.name as string}`;
  pod.metadata = { ...pod.metadata, name, namespace: NS };
  if (w.name === 'nri') {
    // NRI patches the pod as the apiserver hands it over, defaulted (`resources: {}` and the
    // like): the apiserver's dry run in OFF_NS, where netattach is not called, gives that pod.
    const dry = await e.cluster.kubectl(['create', '--dry-run=server', '-o', 'json', '-f', '-'], {
      input: JSON.stringify({ ...pod, metadata: { ...pod.metadata, namespace: OFF_NS } }),
    });
    if (dry.code !== 0) throw new Error(`${name}: the corpus pod is invalid: ${dry.stderr}`);
    pod = JSON.parse(dry.stdout) as Obj;
    for (const k of ['uid', 'creationTimestamp', 'managedFields', 'resourceVersion']) delete pod.metadata[k];
    pod.metadata.namespace = NS;
    const r = await postJson(`${w.url}/mutate`, createReview(pod));
    if (r.status !== 200) return { outcome: 'refused', allocations: [], message: `NRI answered HTTP ${r.status}` };
    const response = (JSON.parse(r.body) as Obj).response as Obj;
    if (!response.allowed) return { outcome: 'refused', allocations: [], message: String(response.status?.message) };
    const patch = (
      response.patch ? JSON.parse(Buffer.from(response.patch as string, 'base64').toString('utf8')) : []
    ) as fastJsonPatch.Operation[];
    pod = fastJsonPatch.applyPatch(pod, patch, true, false).newDocument as Obj;
    pod.metadata.namespace = OFF_NS;
  }
  const ns = pod.metadata.namespace as string;
  const before = node!.allocations().length;
  const created = await e.cluster.kubectl(['create', '-f', '-'], { input: JSON.stringify(pod) });
  if (created.code !== 0) return { outcome: 'refused', allocations: [], message: created.stderr.trim() };
  const running_ = await running(ns, name);
  const envs: Record<string, Record<string, string>> = {};
  for (const c of running_.spec.containers as Array<{ name: string }>)
    envs[c.name] = parseNetprobeLog(await probeLog(ns, name, c.name)).env;
  const records = node!
    .allocations()
    .slice(before)
    .map((a) => ({ ...a, time: String(a.time) }) as AllocateRecord);
  const { allocations, errors } = attributeRecords(records, envs);
  await deletePods(ns, name);
  if (errors.length) throw new Error(`${ns}/${name}: Allocate records no single container shows: ${errors.join('; ')}`);
  return { outcome: 'running', allocations };
}

t.test('network-resources-injector on the same node: the same devices, but for the documented differences', async (t) => {
  const twice = JSON.stringify([{ name: 'sriov-net' }, { name: 'sriov-net', interface: 'net2' }]);
  const low = { requests: { [SRIOV]: '1' }, limits: { [SRIOV]: '1' } };
  const corpus: CorpusPod[] = [
    { name: 'simple', pod: probePod(NS, 'simple', { [NETWORKS]: 'sriov-net' }) },
    { name: 'twice', pod: probePod(NS, 'twice', { [NETWORKS]: twice }) },
    { name: 'rdma-default', pod: probePod(NS, 'rdma-default', { [DEFAULT_NETWORK]: `${NS}/rdma-net` }) },
    { name: 'comma', pod: probePod(NS, 'comma', { [NETWORKS]: 'both-net' }), differences: ['comma-resource-name'] },
    {
      name: 'default-container',
      pod: probePod(NS, 'dc', { [NETWORKS]: 'sriov-net', [DEFAULT_CONTAINER]: 'app' }, [{ name: 'sidecar' }, { name: 'app' }]),
      differences: ['default-container'],
    },
    { name: 'too-low', pod: probePod(NS, 'low', { [NETWORKS]: twice }, [{ resources: low }]), differences: ['raise-user-value'] },
  ];
  const results = await runNriCorpus({
    nriBin: await nriBinary(),
    nri: await nriOptionsFor(e),
    netattachUrl: 'the apiserver (NS)',
    pods: corpus,
    create: viaWebhook,
  });
  t.equal(results.length, corpus.length);
  for (const r of results) {
    t.same(
      r.unexplained,
      [],
      `${r.name}: the devices differ only as docs/nri-differences.json lists (NRI ${r.nri.outcome}${r.nri.message ? `: ${r.nri.message.slice(0, 160)}` : ''}; netattach ${r.netattach.outcome})`,
    );
    t.same(r.unused, [], `${r.name}: each listed difference shows`);
    t.equal(r.netattach.outcome, 'running', `${r.name}: netattach's pod runs`);
  }
  const same = results.filter((r) => r.deltas.length === 0).map((r) => r.name);
  t.same(same, ['simple', 'twice', 'rdma-default'], 'the pods without a listed difference got the same devices through both');
  for (const r of results.filter((x) => same.includes(x.name)))
    t.ok(r.nri.allocations.length > 0, `${r.name}: devices were allocated through NRI too`);
});
