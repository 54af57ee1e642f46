/**
 * The device-plugin path proven by a real kube-scheduler: pods whose extended resources netattach
 * injected (a selection -> the NAD's k8s.v1.cni.cncf.io/resourceName -> a request) are placed
 * where the devices are, wait when they are all taken, and are placed once one is freed.
 * network-resources-injector's pods for the same selections go through the same placement.
 *
 * No kubelet: the test plays the device plugin by writing the two Nodes' capacity/allocatable.
 * The controller-manager runs only its resourceclaim controller (cluster.ts), so no node-lifecycle
 * controller marks the Nodes NotReady: they need no heartbeats.
 *
 *   npm run test:e2e     (runs this after the DRA suite, on the same v1.37.2 binaries)
 */
import t, { type Test } from 'tap';
import fastJsonPatch from 'fast-json-patch';
import { eventually, startE2e, type E2e } from './lib/env.js';
import { Nri, createReview, nriBinary, nriOptionsFor, postJson } from './lib/nri.js';
import { explain, loadDifferences, type Delta } from './lib/nri-differences.js';
import { IMAGE, NETWORKS, RESOURCE_NAME, macvlanConfig, namespace, nad, sriovConfig } from './lib/objects.js';

type Obj = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const NS = 'sched'; // netattach mutates pods here (through the real webhook)
const OFF_NS = 'sched-off'; // excluded from netattach (netattach.io/admission=disabled)
const NRI_NS = 'sched-nri'; // excluded too: NRI's pods, mutated by NRI alone
const DEVICE_NODE = 'sched-sriov-node';
const PLAIN_NODE = 'sched-plain-node';
const NETDEVICE = 'intel.com/sriov_netdevice';
const SRIOV_B = 'intel.com/sriov_b';
const DEFAULT_NETWORK = 'v1.multus-cni.io/default-network';
/**
 * The device node is tainted PreferNoSchedule, as operators keep SR-IOV nodes for the pods that
 * need them: a pod that needs no device then lands on the plain node every time (TaintToleration
 * scores outweigh the resource scores), so every placement in this file is deterministic.
 */
const DEVICE_TAINT = 'example.com/sriov-nics=true:PreferNoSchedule';
const SCHEDULED_MS = 120_000;
/** On every pod of this file (NRI's too): one call deletes them all. */
const SUITE_LABEL = 'e2e.netattach.io/scheduler';
const table = loadDifferences();

let e: E2e;
let nri: Nri | undefined;

t.before(async () => {
  const t0 = Date.now();
  e = await startE2e((m) => t.comment(m), { scheduling: true });
  t.comment(`cluster with scheduler, netattach and webhooks up in ${Date.now() - t0} ms`);
});

t.teardown(async () => {
  if (e && !t.passing()) process.stderr.write(`\n[e2e] failure: log tails\n${nri?.tail(40) ?? ''}\n${e.tails(80)}\n`);
  await nri?.stop();
  await e?.stop();
});

// ---------------------------------------------------------------------------- objects

interface PodOptions {
  networks?: string;
  defaultNetwork?: string;
  /** The container's own request (and limit) of NETDEVICE. */
  asks?: string;
  nodeName?: string;
}

function podOf(ns: string, name: string, o: PodOptions): Obj {
  const annotations: Record<string, string> = {};
  if (o.networks !== undefined) annotations[NETWORKS] = o.networks;
  if (o.defaultNetwork !== undefined) annotations[DEFAULT_NETWORK] = o.defaultNetwork;
  const resources = o.asks ? { requests: { [NETDEVICE]: o.asks }, limits: { [NETDEVICE]: o.asks } } : undefined;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: ns, labels: { [SUITE_LABEL]: 'true' }, annotations },
    spec: {
      ...(o.nodeName ? { nodeSelector: { 'kubernetes.io/hostname': o.nodeName } } : {}),
      containers: [{ name: 'app', image: IMAGE, ...(resources ? { resources } : {}) }],
    },
  };
}

/** The Node as a kubelet and a device plugin would have it: Ready, with the given extended resources. */
async function createNode(name: string, devices: Record<string, string>): Promise<void> {
  await e.applyOk({ apiVersion: 'v1', kind: 'Node', metadata: { name, labels: { 'kubernetes.io/hostname': name } } });
  const now = new Date().toISOString();
  const amounts = { cpu: '8', memory: '16Gi', pods: '110', ...devices };
  const status = {
    status: {
      capacity: amounts,
      allocatable: amounts,
      conditions: [
        { type: 'Ready', status: 'True', reason: 'KubeletReady', message: 'e2e', lastHeartbeatTime: now, lastTransitionTime: now },
      ],
    },
  };
  await e.cluster.kubectlOk(['patch', 'node', name, '--subresource=status', '--type=merge', '-p', JSON.stringify(status)]);
  // TaintNodesByCondition (an admission plugin) taints a new Node not-ready; the node-lifecycle
  // controller would lift it once the kubelet reports Ready, and it does not run here.
  await e.cluster.kubectlOk(['taint', 'node', name, 'node.kubernetes.io/not-ready:NoSchedule-']);
}

// ---------------------------------------------------------------------------- observing

interface Created {
  /** 'allowed', 'denied' (by a webhook) or 'refused by the apiserver (CODE)': the nri-oracle vocabulary. */
  outcome: string;
  pod?: Obj;
  message?: string;
}

const DENIED = /admission webhook "[^"]+" denied the request/;

async function create(pod: Obj, dryRun = false): Promise<Created> {
  const r = await e.cluster.request('POST', `/api/v1/namespaces/${pod.metadata.namespace}/pods${dryRun ? '?dryRun=All' : ''}`, pod);
  const body = JSON.parse(r.body) as Obj;
  if (r.status >= 200 && r.status < 300) return { outcome: 'allowed', pod: body };
  const message = String(body.message ?? r.body);
  return { outcome: DENIED.test(message) ? 'denied' : `refused by the apiserver (${r.status})`, message };
}

async function createOk(pod: Obj): Promise<Obj> {
  const c = await create(pod);
  if (!c.pod) throw new Error(`creating ${pod.metadata.namespace}/${pod.metadata.name}: ${c.outcome}: ${c.message}`);
  return c.pod;
}

/** Where the scheduler put the pod: a node, or why it waits (the PodScheduled condition, without the preemption part). */
type Placement = { node: string } | { pending: string };

async function placement(ns: string, name: string): Promise<Placement> {
  return eventually(
    `a scheduling decision for ${ns}/${name}`,
    async () => {
      const r = await e.cluster.request('GET', `/api/v1/namespaces/${ns}/pods/${name}`);
      const p = JSON.parse(r.body) as Obj;
      if (p.spec?.nodeName) return { node: p.spec.nodeName as string };
      const c = (p.status?.conditions ?? []).find((x: Obj) => x.type === 'PodScheduled');
      if (c?.status === 'False' && c.reason === 'Unschedulable') return { pending: String(c.message).split(' preemption:')[0]! };
      return undefined;
    },
    SCHEDULED_MS,
  );
}

/** The scheduler's first decision for a new pod is a bind to `node`. */
async function placedOn(t: Test, ns: string, name: string, node: string): Promise<void> {
  t.same(await placement(ns, name), { node }, `${ns}/${name} is bound to ${node}`);
}

/** A waiting pod is bound to `node` once the scheduler retries it (after a device was freed). */
async function boundTo(t: Test, ns: string, name: string, node: string): Promise<void> {
  const p = await eventually(
    `${ns}/${name} bound`,
    async () => {
      const got = await placement(ns, name);
      return 'node' in got ? got : undefined;
    },
    SCHEDULED_MS,
  );
  t.same(p, { node }, `${ns}/${name} is bound to ${node}`);
}

/** The device requests of the stored pod's containers (what the scheduler sees). */
function deviceRequests(pod: Obj): Array<Record<string, string>> {
  return (pod.spec.containers as Obj[]).map((c) =>
    Object.fromEntries(Object.entries((c.resources?.requests ?? {}) as Record<string, string>).filter(([k]) => k.includes('/'))),
  );
}

/** Deleted at once, as the kubelet finishes a pod (there is none to do it). `which`: kubectl's pod selection. */
async function deletePods(which: string[]): Promise<void> {
  await e.cluster.kubectlOk(['delete', 'pod', ...which, '--grace-period=0', '--force', '--wait=true']);
}

async function failedSchedulingEvents(ns: string, name: string): Promise<string[]> {
  const r = await e.cluster.request(
    'GET',
    `/api/v1/namespaces/${ns}/events?fieldSelector=${encodeURIComponent(`involvedObject.name=${name},reason=FailedScheduling`)}`,
  );
  return ((JSON.parse(r.body) as Obj).items as Obj[]).map((ev) => String(ev.message));
}

// ---------------------------------------------------------------------------- the cases

// Every case (the NRI scenarios too) starts on empty nodes, whether the one before passed or not.
t.afterEach(() => deletePods(['-A', '-l', SUITE_LABEL]));

t.test('two nodes, one with the devices; NADs', async (t) => {
  // The device node: two VFs of the network's pool, one of a second pool (the comma-separated
  // case). The plain node has no VF, only a device of the second pool: a pod given only the
  // second resource of a comma-separated list would fit there, so placement shows both are asked.
  await createNode(DEVICE_NODE, { [NETDEVICE]: '2', [SRIOV_B]: '1' });
  await createNode(PLAIN_NODE, { [SRIOV_B]: '1' });
  await e.cluster.kubectlOk(['taint', 'node', DEVICE_NODE, DEVICE_TAINT]);
  const nads = (ns: string): Obj[] => [
    nad({ namespace: ns, name: 'sriov', config: sriovConfig('sriov'), annotations: { [RESOURCE_NAME]: NETDEVICE } }),
    nad({
      namespace: ns,
      name: 'sriov-rdma',
      config: sriovConfig('sriov-rdma'),
      annotations: { [RESOURCE_NAME]: `${NETDEVICE}, ${SRIOV_B}` },
    }),
    nad({ namespace: ns, name: 'plain', config: macvlanConfig('plain') }),
  ];
  await e.applyOk([
    namespace(NS),
    namespace(OFF_NS, { 'netattach.io/admission': 'disabled' }),
    namespace(NRI_NS, { 'netattach.io/admission': 'disabled' }),
  ]);
  await e.applyOk([
    ...nads(NS),
    ...nads(NRI_NS),
    nad({
      namespace: 'kube-system',
      name: 'default-sriov',
      config: sriovConfig('default-sriov'),
      annotations: { [RESOURCE_NAME]: NETDEVICE },
    }),
  ]);
  // netattach's NAD cache follows its watch (the canary's NAD and these seven).
  await eventually('netattach has the NADs', async () => ((await e.netattach.metric('netattach_nad_cache_size')) >= 8 ? true : undefined));
  const nodes = await e.getJson<{ items: Obj[] }>(['nodes']);
  t.same(
    nodes.items
      .map((n) => [n.metadata.name, n.status.allocatable[NETDEVICE] ?? '0', n.status.allocatable[SRIOV_B] ?? '0', n.spec.taints ?? []])
      .sort(),
    [
      [PLAIN_NODE, '0', '1', []],
      [DEVICE_NODE, '2', '1', [{ key: 'example.com/sriov-nics', value: 'true', effect: 'PreferNoSchedule' }]],
    ].sort(),
    'the device node alone has VFs; neither is tainted not-ready',
  );
});

t.test('injected devices: two pods on the device node, the third waits, placed once one is freed', async (t) => {
  for (const name of ['vf-1', 'vf-2']) {
    const stored = await createOk(podOf(NS, name, { networks: 'sriov' }));
    t.same(deviceRequests(stored), [{ [NETDEVICE]: '1' }], `${name}: netattach injected one device`);
    await placedOn(t, NS, name, DEVICE_NODE);
  }
  await createOk(podOf(NS, 'vf-3', { networks: 'sriov' }));
  const waiting = await placement(NS, 'vf-3');
  t.match(
    waiting,
    { pending: new RegExp(`^0/2 nodes are available: 2 Insufficient ${NETDEVICE}\\.`) },
    'vf-3 waits: no node has a free device',
  );
  const events = await eventually(
    'a FailedScheduling event for vf-3',
    async () => {
      const got = await failedSchedulingEvents(NS, 'vf-3');
      return got.length > 0 ? got : undefined;
    },
    SCHEDULED_MS,
  );
  t.match(events[0], `Insufficient ${NETDEVICE}`, 'and the scheduler says so in an event');

  // The same selection in an excluded namespace: nothing injected, no device used.
  const off = await createOk(podOf(OFF_NS, 'no-vf', { networks: `${NS}/sriov` }));
  t.same(deviceRequests(off), [{}], 'excluded namespace: nothing injected');
  await placedOn(t, OFF_NS, 'no-vf', PLAIN_NODE);
  await createOk(podOf(OFF_NS, 'no-vf-pinned', { networks: `${NS}/sriov`, nodeName: DEVICE_NODE }));
  await placedOn(t, OFF_NS, 'no-vf-pinned', DEVICE_NODE);
  t.match(await placement(NS, 'vf-3'), { pending: String }, 'vf-3 still waits: the excluded pods took no device');

  await deletePods(['-n', NS, 'vf-1']);
  await boundTo(t, NS, 'vf-3', DEVICE_NODE);
});

t.test('comma-separated resourceName: one of each resource, placed where both are', async (t) => {
  const stored = await createOk(podOf(NS, 'rdma-1', { networks: 'sriov-rdma' }));
  t.same(deviceRequests(stored), [{ [NETDEVICE]: '1', [SRIOV_B]: '1' }], 'netattach injected one of each resource of the list');
  await placedOn(t, NS, 'rdma-1', DEVICE_NODE);
  await createOk(podOf(NS, 'rdma-2', { networks: 'sriov-rdma' }));
  const waiting = await placement(NS, 'rdma-2');
  t.same(
    waiting,
    { pending: `0/2 nodes are available: 1 Insufficient ${SRIOV_B}, 1 Insufficient ${NETDEVICE}.` },
    'rdma-2 waits: each node lacks one of the two',
  );
  // Each resource is counted on its own: the device node's second VF is still free.
  await createOk(podOf(NS, 'vf-only', { networks: 'sriov' }));
  await placedOn(t, NS, 'vf-only', DEVICE_NODE);
  await deletePods(['-n', NS, 'rdma-1']);
  await boundTo(t, NS, 'rdma-2', DEVICE_NODE);
});

t.test("default network: its NAD's devices count with the secondary networks'", async (t) => {
  const first = await createOk(podOf(NS, 'default-1', { defaultNetwork: 'kube-system/default-sriov' }));
  t.same(deviceRequests(first), [{ [NETDEVICE]: '1' }], "the default network's device injected");
  await placedOn(t, NS, 'default-1', DEVICE_NODE);
  const second = await createOk(podOf(NS, 'default-2', { defaultNetwork: 'kube-system/default-sriov', networks: 'sriov' }));
  t.same(deviceRequests(second), [{ [NETDEVICE]: '2' }], 'default network and one selection: two devices');
  t.match(
    await placement(NS, 'default-2'),
    { pending: new RegExp(`Insufficient ${NETDEVICE}`) },
    'default-2 waits: one device is left, it needs two',
  );
  await deletePods(['-n', NS, 'default-1']);
  await boundTo(t, NS, 'default-2', DEVICE_NODE);
});

// ---------------------------------------------------------------------------- NRI as the oracle

interface Scenario {
  name: string;
  /** Created one after another on empty nodes; later pods see what earlier ones hold. */
  pods: Array<PodOptions & { differences?: string[] }>;
  /** netattach's placements, so that a scenario cannot pass by both sides failing alike. */
  netattach: Array<'device' | 'plain' | 'pending' | 'denied' | 'refused'>;
}

const SCENARIOS: Scenario[] = [
  {
    name: 'one network, three pods',
    pods: [{ networks: 'sriov' }, { networks: 'sriov' }, { networks: 'sriov' }],
    netattach: ['device', 'device', 'pending'],
  },
  {
    name: 'a network twice in one pod, then once more',
    pods: [{ networks: 'sriov,sriov' }, { networks: 'sriov' }],
    netattach: ['device', 'pending'],
  },
  { name: 'a network without a resourceName', pods: [{ networks: 'plain' }], netattach: ['plain'] },
  {
    name: 'default network, then default and one network',
    pods: [{ defaultNetwork: 'kube-system/default-sriov' }, { defaultNetwork: 'kube-system/default-sriov', networks: 'sriov' }],
    netattach: ['device', 'pending'],
  },
  {
    name: 'comma-separated resourceName',
    pods: [
      { networks: 'sriov-rdma', differences: ['comma-resource-name'] },
      { networks: 'sriov-rdma', differences: ['comma-resource-name'] },
    ],
    netattach: ['device', 'pending'],
  },
  {
    name: 'the container asks for fewer devices than its networks need',
    pods: [{ networks: 'sriov,sriov', asks: '1', differences: ['raise-user-value'] }, { networks: 'sriov' }],
    netattach: ['device', 'pending'],
  },
  {
    name: 'default network without a namespace',
    pods: [{ defaultNetwork: 'default-sriov', differences: ['default-network-namespace'] }],
    netattach: ['device'],
  },
];

interface Outcome {
  outcome: string;
  /** What the mutation decides for the scheduler: the containers' resources. */
  pod?: { spec: { containers: Array<{ resources?: Obj }> } };
  placement?: Placement;
}

const mutated = (pod: Obj): Outcome['pod'] => ({
  spec: { containers: (pod.spec.containers as Obj[]).map((c) => ({ resources: c.resources })) },
});

/** netattach's side: created through the apiserver, so through the real webhooks. */
async function throughNetattach(name: string, o: PodOptions): Promise<Outcome> {
  const c = await create(podOf(NS, name, o));
  if (!c.pod) return { outcome: c.outcome };
  return { outcome: c.outcome, pod: mutated(c.pod), placement: await placement(NS, name) };
}

/** NRI's side: the defaulted pod sent to NRI's /mutate, its patch applied, the result created in a namespace netattach skips. */
async function throughNri(name: string, o: PodOptions): Promise<Outcome> {
  const given = await create(podOf(NRI_NS, name, o), true);
  if (!given.pod) throw new Error(`the corpus pod is invalid: ${given.message}`);
  const object = given.pod;
  for (const k of ['uid', 'creationTimestamp', 'managedFields']) delete object.metadata[k];
  const r = await postJson(`${nri!.url}/mutate`, createReview(object));
  if (r.status !== 200) return { outcome: `HTTP ${r.status}` };
  const response = (JSON.parse(r.body) as Obj).response as Obj;
  if (!response.allowed) return { outcome: 'denied' };
  const patch = ((response.patch ? JSON.parse(Buffer.from(response.patch, 'base64').toString('utf8')) : null) ??
    []) as fastJsonPatch.Operation[];
  const patched = fastJsonPatch.applyPatch(structuredClone(object), patch, true, false).newDocument;
  delete patched.metadata.resourceVersion;
  const c = await create(patched);
  if (!c.pod) return { outcome: c.outcome };
  return { outcome: c.outcome, pod: mutated(c.pod), placement: await placement(NRI_NS, name) };
}

const shortPlacement = (o: Outcome): string =>
  o.outcome === 'denied'
    ? 'denied'
    : !o.placement
      ? 'refused'
      : 'pending' in o.placement
        ? 'pending'
        : o.placement.node === DEVICE_NODE
          ? 'device'
          : 'plain';

t.test('network-resources-injector: the same selections, the same placements', async (t) => {
  nri = new Nri({ bin: await nriBinary(), ...(await nriOptionsFor(e)) });
  await nri.start();
  await nri.waitReady();

  const seen = new Set<string>();
  for (const s of SCENARIOS) {
    await t.test(s.name, async (t) => {
      const names = s.pods.map((_, i) => `p${i + 1}`);
      const fromNetattach: Outcome[] = [];
      for (const [i, o] of s.pods.entries()) fromNetattach.push(await throughNetattach(names[i]!, o));
      await deletePods(['-n', NS, '--all']);
      const fromNri: Outcome[] = [];
      for (const [i, o] of s.pods.entries()) fromNri.push(await throughNri(names[i]!, o));
      await deletePods(['-n', NRI_NS, '--all']);

      t.same(
        fromNetattach.map(shortPlacement),
        s.netattach,
        `netattach: ${JSON.stringify(fromNetattach.map((o) => o.placement ?? o.outcome))}`,
      );
      // Placements must agree while every pod so far was mutated alike; after a listed difference
      // in the mutation, the pods that follow see other free devices and may be placed otherwise.
      let alike = true;
      for (const [i, o] of s.pods.entries()) {
        const listed = o.differences ?? [];
        for (const id of listed) seen.add(id);
        const strip = ({ outcome, pod }: Outcome): Outcome => ({ outcome, ...(pod ? { pod } : {}) });
        const deltas = fastJsonPatch.compare(strip(fromNri[i]!), strip(fromNetattach[i]!)) as Delta[];
        const { unexplained, unused } = explain(deltas, listed, table);
        t.same(unexplained, [], `${names[i]}: the mutations differ only as docs/nri-differences.json lists (NRI: ${fromNri[i]!.outcome})`);
        t.same(unused, [], `${names[i]}: every listed difference shows`);
        alike &&= deltas.length === 0;
        if (alike) t.same(fromNri[i]!.placement, fromNetattach[i]!.placement, `${names[i]}: placed alike`);
      }
    });
  }
  t.ok(seen.size > 0);
});
