// CPU per review in a realistic mix, against the bare review, in one process and one run
// (issue 28). The server's pipeline (handleReview, as the HTTPS route calls it, with the body
// parsed from text and the answer serialized) runs over:
// - bare: 3 NADs, no policy, no index, no Leases (the admission bench's review);
// - realistic: 1,200 NADs in 200 namespaces (+ 3 global ones in `default`), four policies
//   (namespace isolation, uniqueAddresses, hardware-address and interface-name rules, an Audit
//   rule), an address index holding 50,000 live pods' MACs and GUIDs, address Leases
//   through the real AddressLeaseStore and Lease client over an in-memory apiserver (JSON on the "wire",
//   a watch event for every write), the background audit, and a pod watch: every admitted pod is
//   indexed (its Leases confirmed) and audited, its three later MODIFIED events are read too, and
//   the oldest bench pod ends (its Leases released), so the cluster keeps its size. 30 % of the
//   pods carry a MAC or GUID, and 10 % collide with a live pod's address (denied, as the policy says).
// Every pod is one /mutate and one /validate review. Bare and realistic batches alternate; the
// figures are CPU time (process.cpuUsage) per review, medians over the rounds, and the median of
// the rounds' ratios.
// Run alone: npm run build && node dist/bench/main.js realistic   (or: npx tsx bench/main.ts realistic)
import { pino, type DestinationStream } from 'pino';
import { Registry } from 'prom-client';
import * as core from '../src/admission/index.js';
import { DEFAULT_ADMISSION_CONFIG } from '../src/admission/types.js';
import { StaticNadSource } from '../src/nads/index.js';
import {
  AddressIndex,
  AddressLeaseStore,
  NadUsage,
  PolicyEngine,
  loadPolicyDocuments,
  policySet,
  registerPolicyMetrics,
} from '../src/policy/index.js';
import { NO_POLICY } from '../src/policy/types.js';
import { leaseApi, type KubeTransport } from '../src/kube/index.js';
import { BackgroundAudit, registerAuditMetrics } from '../src/audit/index.js';
import { indexPod } from '../src/policy/pod-source.js';
import { createLogger } from '../src/server/logger.js';
import { createMetrics } from '../src/server/metrics.js';
import { handleReview, type PipelineDeps } from '../src/server/pipeline.js';
import { percentile, type BenchResult } from './harness.js';

export const name = 'realistic';

const NETWORKS = 'k8s.v1.cni.cncf.io/networks';
const NAMESPACES = 200;
const NADS_PER_NAMESPACE = 6;
const LIVE_PODS = Number(process.env.BENCH_LIVE_PODS ?? 50_000);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 40);
/** Short batches, alternating: both mixes see the same machine (it is shared and noisy). */
const PODS_PER_ROUND = 100;
/** When a pod's MODIFIED events come, in pods admitted after it (about 0.1, 0.3 and 0.6 s at 200 pods/s). */
const MODIFIED_AFTER = [20, 60, 120];

const nadObject = (namespace: string, n: string, type: 'sriov' | 'ib-sriov') => ({
  apiVersion: 'k8s.cni.cncf.io/v1',
  kind: 'NetworkAttachmentDefinition',
  metadata: {
    name: n,
    namespace,
    annotations: { 'k8s.v1.cni.cncf.io/resourceName': type === 'sriov' ? `intel.com/sriov_${n}` : `mellanox.com/ib_${n}` },
  },
  spec: {
    config: JSON.stringify({
      cniVersion: '1.0.0',
      name: n,
      plugins: [
        { type, capabilities: type === 'sriov' ? { mac: true, ips: true } : { infinibandGUID: true, ips: true }, ipam: { type: 'static' } },
      ],
    }),
  },
});

function realisticNads(): StaticNadSource {
  const objects: unknown[] = [
    nadObject('default', 'sriov-a', 'sriov'),
    nadObject('default', 'sriov-b', 'sriov'),
    nadObject('default', 'ib-c', 'ib-sriov'),
  ];
  for (let ns = 0; ns < NAMESPACES; ns++) {
    for (let i = 0; i < NADS_PER_NAMESPACE; i++) objects.push(nadObject(`ns-${ns}`, `net-${i}`, i % 3 === 2 ? 'ib-sriov' : 'sriov'));
  }
  return new StaticNadSource(objects);
}

const POLICIES = `
apiVersion: netattach.io/v1alpha1
kind: NetworkAttachmentPolicy
metadata: {name: isolation}
spec:
  namespaceSelector:
    matchExpressions: [{key: kubernetes.io/metadata.name, operator: NotIn, values: [kube-system]}]
  rules:
    allowedNetworks: {action: Enforce, ownNamespace: true, globalNamespaces: [default]}
---
apiVersion: netattach.io/v1alpha1
kind: NetworkAttachmentPolicy
metadata: {name: unique}
spec:
  rules:
    uniqueAddresses: {mac: Network, infiniband-guid: Cluster, action: Enforce}
---
apiVersion: netattach.io/v1alpha1
kind: NetworkAttachmentPolicy
metadata: {name: hardware}
spec:
  rules:
    hardwareAddresses:
      forbidSpecialValues: true
      guidRanges: [{from: "00:11:22:33:00:00:00:00", to: "00:11:22:33:ff:ff:ff:ff"}]
    interfaceNames: {allowed: ["net*"]}
---
apiVersion: netattach.io/v1alpha1
kind: NetworkAttachmentPolicy
metadata: {name: audit-fields}
spec:
  rules:
    requestedFields: {forbidden: [mac, infiniband-guid], action: Audit}
`;

const mac = (n: number): string => `02:${[24, 16, 8, 0].map((s) => ((n >>> s) & 0xff).toString(16).padStart(2, '0')).join(':')}:01`;
const guid = (n: number): string => `00:11:22:33:${[24, 16, 8, 0].map((s) => ((n >>> s) & 0xff).toString(16).padStart(2, '0')).join(':')}`;

/** The networks of pod `n` in its namespace: two of its own, a MAC or GUID on 30 % (a live pod's on every tenth). */
function networksOf(n: number, live = false): { namespace: string; annotation: string } {
  const ns = n % NAMESPACES;
  const namespace = `ns-${ns}`;
  const withAddress = live || n % 10 < 3;
  const collides = !live && n % 10 === 0;
  // A colliding pod takes the address of live pod `n` (same namespace, same network).
  const a = collides ? n % LIVE_PODS : n + (live ? 0 : LIVE_PODS);
  const ib = a % 4 === 3;
  const first: Record<string, unknown> = { name: ib ? 'net-2' : 'net-0', interface: 'net1' };
  if (withAddress) first[ib ? 'infiniband-guid' : 'mac'] = ib ? guid(a) : mac(a);
  // Replicas of one template share its text (the namespace's); a pod with an address has its own.
  const nets = [first, { name: 'net-1', interface: 'net2' }];
  return { namespace, annotation: JSON.stringify(nets) };
}

/** A ~4 KiB pod body (containers with env vars), the admission bench's. */
function podBody(namespace: string, podName: string, annotation: string, endpoint: 'mutate' | 'validate'): string {
  const containers = Array.from({ length: 3 }, (_, i) => ({
    name: `c${i}`,
    image: `registry.example.com/app/c${i}:1.2.3`,
    env: Array.from({ length: 12 }, (_, j) => ({ name: `VAR_${i}_${j}`, value: `value-${i}-${j}-${'x'.repeat(20)}` })),
    resources: { requests: { cpu: '100m', memory: '128Mi' } },
  }));
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: podName, namespace, uid: `uid-${podName}`, labels: { app: 'app' }, annotations: { [NETWORKS]: annotation } },
    spec: { containers, restartPolicy: 'Always' },
  };
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: `review-${podName}-${endpoint}`,
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      namespace,
      name: podName,
      operation: 'CREATE',
      userInfo: { username: 'system:serviceaccount:kube-system:replicaset-controller' },
      object: pod,
      oldObject: null,
      dryRun: false,
    },
  });
}

/**
 * An in-memory apiserver for the address Leases behind the real Lease client: bodies cross as JSON
 * text both ways, creates are atomic (409), deletes check their preconditions, and every write is
 * a watch event (as JSON text) for the address Lease store's watch.
 */
class LeaseServer implements KubeTransport {
  readonly objects = new Map<string, Record<string, unknown>>();
  writes = 0;
  private rv = 1;
  private readonly watchers = new Set<(e: unknown) => void>();
  private emit(type: string, object: unknown): void {
    const text = JSON.stringify({ type, object });
    for (const w of this.watchers) w(JSON.parse(text));
  }
  async getJson(path: string): Promise<unknown> {
    const name = path.split('/leases/')[1];
    if (name === undefined)
      return JSON.parse(JSON.stringify({ metadata: { resourceVersion: String(this.rv) }, items: [...this.objects.values()] }));
    const o = this.objects.get(decodeURIComponent(name));
    if (!o) throw Object.assign(new Error('not found'), { statusCode: 404 });
    return JSON.parse(JSON.stringify(o));
  }
  watch(
    _path: string,
    _query: unknown,
    _accept: string,
    onEvent: (e: unknown) => void,
    signal: AbortSignal,
    onOpen?: () => void,
  ): Promise<void> {
    onOpen?.();
    this.watchers.add(onEvent);
    return new Promise((resolve) => signal.addEventListener('abort', () => (this.watchers.delete(onEvent), resolve()), { once: true }));
  }
  patchJson(): Promise<unknown> {
    return Promise.reject(new Error('not used'));
  }
  async send(method: 'POST' | 'PUT' | 'DELETE', path: string, body: unknown): Promise<{ status: number; body: unknown }> {
    this.writes++;
    const sent = JSON.parse(JSON.stringify(body)) as { metadata: Record<string, unknown>; preconditions?: { uid: string } };
    if (method === 'POST') {
      const name = sent.metadata['name'] as string;
      if (this.objects.has(name)) return { status: 409, body: { kind: 'Status', code: 409 } };
      const obj = {
        ...sent,
        metadata: {
          ...sent.metadata,
          uid: `lease-${++this.rv}`,
          resourceVersion: String(this.rv),
          creationTimestamp: new Date().toISOString(),
        },
      };
      this.objects.set(name, obj);
      this.emit('ADDED', obj);
      return { status: 201, body: JSON.parse(JSON.stringify(obj)) };
    }
    const name = decodeURIComponent(path.split('/leases/')[1] ?? '');
    const o = this.objects.get(name) as { metadata: { uid: string } } | undefined;
    if (!o) return { status: 404, body: {} };
    if (sent.preconditions && o.metadata.uid !== sent.preconditions.uid) return { status: 409, body: {} };
    this.objects.delete(name);
    this.emit('DELETED', o);
    return { status: 200, body: {} };
  }
}

/** Log lines written to /dev/null through pino's own destination (sonic-boom, as on stdout), counted. */
function sink(): { stream: DestinationStream; lines: () => number } {
  const stream = pino.destination({ dest: '/dev/null', sync: true });
  const write = stream.write.bind(stream);
  let lines = 0;
  stream.write = (chunk: string) => (lines++, write(chunk));
  return { stream, lines: () => lines };
}

interface Mix {
  deps: PipelineDeps;
  /** One pod: /mutate, then /validate; its watch events; the oldest bench pod ends. Resolves to [mutate allowed, validate allowed]. */
  pod(n: number): Promise<[boolean, boolean]>;
  /** Builds the bodies of pods `from`.. ahead (outside the measured time: the apiserver writes them). */
  prepare(from: number, count: number): void;
  stop(): void;
  sink: ReturnType<typeof sink>;
  /** What the mix's parts did (the realistic one: the audit memo's hits), for the log line. */
  notes?: () => string;
}

const parseBody = (text: string): unknown => JSON.parse(text);

/** The two review bodies of each pod, built ahead of the measured batch. */
class Bodies {
  private readonly ready = new Map<number, [string, string]>();
  constructor(private readonly podOf: (n: number) => { namespace: string; podName: string; annotation: string }) {}
  prepare(from: number, count: number): void {
    for (let n = from; n < from + count; n++) {
      const { namespace, podName, annotation } = this.podOf(n);
      this.ready.set(n, [podBody(namespace, podName, annotation, 'mutate'), podBody(namespace, podName, annotation, 'validate')]);
    }
  }
  take(n: number): [string, string] {
    if (!this.ready.has(n)) this.prepare(n, 1);
    const out = this.ready.get(n)!;
    this.ready.delete(n);
    return out;
  }
}

async function review(deps: PipelineDeps, body: string, endpoint: 'mutate' | 'validate'): Promise<boolean> {
  const r = await handleReview(parseBody(body), endpoint, 10_000, deps);
  if (r.status !== 200) throw new Error(`bench review refused: ${r.error}`);
  JSON.stringify(r.review);
  return r.review.response!.allowed;
}

export function bareMix(): Mix {
  const logs = sink();
  const nadSource = new StaticNadSource([
    nadObject('default', 'sriov-a', 'sriov'),
    nadObject('default', 'sriov-b', 'sriov'),
    nadObject('default', 'rdma-c', 'sriov'),
  ]);
  const deps: PipelineDeps = {
    core,
    nadSource,
    policy: NO_POLICY,
    reservations: { reserve: () => {} },
    config: DEFAULT_ADMISSION_CONFIG,
    logger: createLogger('info', logs.stream),
    metrics: createMetrics(() => nadSource, new Registry()),
  };
  const annotation = JSON.stringify([
    { name: 'sriov-a', interface: 'net1', mac: '02:23:45:67:89:01', ips: ['10.10.0.5/24'] },
    { name: 'sriov-b', interface: 'net2', ips: ['fd00:10::5/64'] },
    { name: 'rdma-c', interface: 'net3', ips: ['192.168.1.10/24'] },
  ]);
  const bodies = new Bodies((n) => ({ namespace: 'default', podName: `bare-${n}`, annotation }));
  return {
    deps,
    sink: logs,
    stop: () => {},
    prepare: (from, count) => bodies.prepare(from, count),
    pod: async (n) => {
      const [mutate, validate] = bodies.take(n);
      return [await review(deps, mutate, 'mutate'), await review(deps, validate, 'validate')];
    },
  };
}

export async function realisticMix(log: (line: string) => void): Promise<Mix> {
  const logs = sink();
  const logger = createLogger('info', logs.stream);
  const registry = new Registry();
  registerPolicyMetrics(registry);
  const nadSource = realisticNads();
  const index = new AddressIndex();
  const usage = new NadUsage();
  const loaded = loadPolicyDocuments(POLICIES, 'bench');
  if (loaded.errors.length > 0) throw new Error(loaded.errors.map((e) => e.message).join('\n'));
  const engine = new PolicyEngine({ index, policies: policySet(loaded.policies) });
  const namespaceLabels = (ns: string): Record<string, string> => ({ 'kubernetes.io/metadata.name': ns });
  const server = new LeaseServer();
  const leases = new AddressLeaseStore({
    api: leaseApi(server, 'netattach-system'),
    transport: server,
    live: (h, address) => index.heldBy(address.kind, address.value, h),
    livenessCurrent: () => true,
    logger,
  });
  await leases.start();
  const audit = new BackgroundAudit({
    nads: nadSource,
    namespaceLabels,
    engine,
    index,
    config: DEFAULT_ADMISSION_CONFIG,
    podsUsingNad: (ns, n) => usage.podsUsing(ns, n),
    ready: () => true,
    metrics: registerAuditMetrics(registry),
    logger,
  });
  // The pod watch: index (and NAD usage), confirm Leases, tell the audit; on removal, release.
  const watched = (podName: string, namespace: string, annotation: string) => ({
    metadata: { name: podName, namespace, uid: `uid-${podName}`, annotations: { [NETWORKS]: annotation } },
  });
  const upsert = (obj: ReturnType<typeof watched>): void => {
    const pod = indexPod(index, obj, usage);
    if (pod) leases.confirm({ kind: 'Pod', namespace: pod.namespace, name: pod.name, ...(pod.uid ? { uid: pod.uid } : {}) });
    audit.upsert(obj);
  };
  const remove = (obj: ReturnType<typeof watched>): void => {
    index.removePod(obj.metadata.namespace, obj.metadata.name);
    usage.removePod(obj.metadata.namespace, obj.metadata.name);
    void leases.releaseHolder({ kind: 'Pod', namespace: obj.metadata.namespace, name: obj.metadata.name, uid: obj.metadata.uid });
    audit.remove(obj);
  };
  const t0 = performance.now();
  audit.resync();
  for (let n = 0; n < LIVE_PODS; n++) {
    const { namespace, annotation } = networksOf(n, true);
    upsert(watched(`live-${n}`, namespace, annotation));
  }
  audit.resynced();
  // The first audit pass, before measuring (it is paced by --audit-rate in the server).
  audit.drain();
  log(
    `realistic: ${nadSource.size()} NADs, ${LIVE_PODS.toLocaleString('en')} live pods indexed and audited in ${((performance.now() - t0) / 1000).toFixed(1)} s; index ${JSON.stringify(index.stats())}`,
  );
  const deps: PipelineDeps = {
    core,
    nadSource,
    policy: engine,
    reservations: index,
    addressLeases: leases,
    config: DEFAULT_ADMISSION_CONFIG,
    namespaceLabels,
    podsUsingNad: (ns, n) => usage.podsUsing(ns, n),
    logger,
    metrics: createMetrics(() => nadSource, registry),
  };
  const running: Array<ReturnType<typeof watched>> = [];
  const bodies = new Bodies((n) => ({ ...networksOf(n), podName: `pod-${n}` }));
  // A starting pod is one ADDED event and then MODIFIED ones (scheduled, containers started,
  // ready: the metadata watch sends every change), later, between other pods' events.
  const later = new Map<number, Array<ReturnType<typeof watched>>>();
  let admitted = 0;
  return {
    deps,
    sink: logs,
    notes: () => {
      const m = audit.memoStats();
      return `audit: ${m.hits} pods' verdicts from the memo, ${m.misses} judged, ${m.entries} entries`;
    },
    stop: () => leases.stop(),
    prepare: (from, count) => bodies.prepare(from, count),
    pod: async (n) => {
      const { namespace, annotation } = networksOf(n);
      const podName = `pod-${n}`;
      const [mutate, validate] = bodies.take(n);
      const mutated = await review(deps, mutate, 'mutate');
      const validated = mutated && (await review(deps, validate, 'validate'));
      if (validated) {
        const obj = watched(podName, namespace, annotation);
        upsert(obj);
        running.push(obj);
        for (const after of MODIFIED_AFTER) {
          const at = admitted + after;
          const due = later.get(at);
          if (due) due.push(obj);
          else later.set(at, [obj]);
        }
        // The cluster keeps its size: the oldest bench pod ends.
        if (running.length > 2_000) remove(running.shift()!);
      }
      for (const obj of later.get(admitted) ?? []) upsert(obj);
      later.delete(admitted++);
      // The audit's timer, at its default pace (20 ms ticks, 1,000 pods/s) for 200 pods/s.
      if (n % 4 === 0) audit.tick();
      return [mutated, validated];
    },
  };
}

const cpuUs = (): number => {
  const c = process.cpuUsage();
  return c.user + c.system;
};

export async function run(log: (line: string) => void = () => {}): Promise<BenchResult[]> {
  const bare = bareMix();
  const real = await realisticMix(log);
  try {
    // Verdicts first: every colliding pod denied, every other one admitted.
    let wrong = 0;
    for (let n = 0; n < 100; n++) {
      const [m, v] = await real.pod(1_000_000 + n);
      const collides = n % 10 === 0;
      if (collides ? m || v : !(m && v)) wrong++;
    }
    if (wrong > 0) throw new Error(`realistic mix: ${wrong} of 100 verdicts not as planted`);
    for (let n = 0; n < 200; n++) await bare.pod(n); // warm-up
    const bareUs: number[] = [];
    const realUs: number[] = [];
    let next = 2_000_000;
    let denied = 0;
    for (let round = 0; round < ROUNDS; round++) {
      for (const [mix, out] of round % 2 === 0
        ? ([
            [bare, bareUs],
            [real, realUs],
          ] as const)
        : ([
            [real, realUs],
            [bare, bareUs],
          ] as const)) {
        mix.prepare(next, PODS_PER_ROUND);
        const c0 = cpuUs();
        for (let i = 0; i < PODS_PER_ROUND; i++) {
          const [m, v] = await mix.pod(next++);
          if (mix === real && !(m && v)) denied++;
        }
        out.push((cpuUs() - c0) / (2 * PODS_PER_ROUND));
      }
    }
    // The ratio of each round's pair (neighbours in time), and its median: robust to the machine's drift.
    const ratios = realUs.map((r, i) => r / bareUs[i]!).sort((a, b) => a - b);
    bareUs.sort((a, b) => a - b);
    realUs.sort((a, b) => a - b);
    const b = percentile(bareUs, 50);
    const r = percentile(realUs, 50);
    const ratio = percentile(ratios, 50);
    log(
      `CPU per review, median of ${ROUNDS} rounds of ${PODS_PER_ROUND} pods (/mutate + /validate each): bare ${b.toFixed(0)} µs (${bareUs[0]!.toFixed(0)}–${bareUs.at(-1)!.toFixed(0)}), realistic ${r.toFixed(0)} µs (${realUs[0]!.toFixed(0)}–${realUs.at(-1)!.toFixed(0)}), ratio ${ratio.toFixed(2)} (median of the rounds' ratios; quartiles ${percentile(ratios, 25).toFixed(2)}–${percentile(ratios, 75).toFixed(2)}); ${denied} pods denied of ${ROUNDS * PODS_PER_ROUND}; ${real.sink.lines()} log lines; ${real.notes?.() ?? ''}`,
    );
    return [
      { name: 'CPU per review: bare (3 NADs, no policy)', notes: `${b.toFixed(0)} µs/review (median of ${ROUNDS} rounds)` },
      {
        name: `CPU per review: realistic (1,203 NADs, 4 policies, ${LIVE_PODS.toLocaleString('en')} live pods, claims, audit)`,
        target: '≤ 2× bare',
        met: ratio <= 2,
        notes: `${r.toFixed(0)} µs/review, ${ratio.toFixed(2)}× bare`,
      },
    ];
  } finally {
    real.stop();
    bare.stop();
  }
}
