// review() throughput on the mutate endpoint: a typical ~4 KiB pod with 3 networks and a ~100 KiB
// pod (many containers and env vars), plus the whole per-request core path (plan + review +
// toResponse), with the annotation parsed once (as for replicas of one template, the common case)
// and with a different annotation on every call. Run alone: npx tsx bench/main.ts admission.
import {
  DEFAULT_ADMISSION_CONFIG,
  plan,
  review,
  toResponse,
  type AdmissionContext,
  type AdmissionRequest,
} from '../src/admission/index.js';
import { StaticNadSource } from '../src/nads/index.js';
import type { NadLookup } from '../src/nads/types.js';
import { NO_POLICY } from '../src/policy/types.js';
import { measureThroughput, type BenchResult } from './harness.js';

export const name = 'admission';

const nadObject = (n: string, resourceName: string, caps: string[]) => ({
  apiVersion: 'k8s.cni.cncf.io/v1',
  kind: 'NetworkAttachmentDefinition',
  metadata: {
    name: n,
    namespace: 'default',
    annotations: {
      'k8s.v1.cni.cncf.io/resourceName': resourceName,
      'k8s.v1.cni.cncf.io/nodeSelector': 'feature.node.kubernetes.io/network-sriov.capable=true',
    },
  },
  spec: {
    config: JSON.stringify({
      cniVersion: '1.0.0',
      name: n,
      plugins: [{ type: 'sriov', capabilities: Object.fromEntries(caps.map((c) => [c, true])), ipam: { type: 'static' } }],
    }),
  },
});

const source = new StaticNadSource([
  nadObject('sriov-a', 'intel.com/sriov_a', ['ips', 'mac']),
  nadObject('sriov-b', 'intel.com/sriov_b', ['ips', 'mac']),
  nadObject('rdma-c', 'rdma/hca_shared_c', ['ips']),
]);
const nads = (ns: string, n: string): NadLookup => {
  const nad = source.get(ns, n);
  return nad ? { status: 'found', nad } : { status: 'not-found' };
};

const NETWORKS = JSON.stringify([
  { name: 'sriov-a', interface: 'net1', mac: '02:23:45:67:89:01', ips: ['10.10.0.5/24'] },
  { name: 'sriov-b', interface: 'net2', ips: ['fd00:10::5/64'] },
  { name: 'rdma-c', interface: 'net3', ips: ['192.168.1.10/24'] },
]);

/** A pod of about `targetBytes` of JSON: containers with env vars, like a real workload's. */
function podOfSize(targetBytes: number): Record<string, unknown> {
  const env = (i: number) => Array.from({ length: 12 }, (_, j) => ({ name: `VAR_${i}_${j}`, value: `value-${i}-${j}-${'x'.repeat(20)}` }));
  const containers: Array<Record<string, unknown>> = [];
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'app-7d9f8c6b5-x2x4z',
      namespace: 'default',
      labels: { app: 'app', 'pod-template-hash': '7d9f8c6b5' },
      annotations: { 'k8s.v1.cni.cncf.io/networks': NETWORKS },
    },
    spec: { containers, restartPolicy: 'Always', nodeSelector: { 'kubernetes.io/os': 'linux' } },
  };
  do {
    const i = containers.length;
    containers.push({
      name: `c${i}`,
      image: `registry.example.com/app/c${i}:1.2.3`,
      env: env(i),
      resources: { requests: { cpu: '100m', memory: '128Mi' } },
    });
  } while (JSON.stringify(pod).length < targetBytes);
  return pod;
}

const requestFor = (object: unknown): AdmissionRequest => ({
  uid: 'bench',
  kind: { group: '', version: 'v1', kind: 'Pod' },
  resource: { group: '', version: 'v1', resource: 'pods' },
  namespace: 'default',
  operation: 'CREATE',
  userInfo: { username: 'bench' },
  object,
});

const context: AdmissionContext = { endpoint: 'mutate', nads, policy: NO_POLICY, config: DEFAULT_ADMISSION_CONFIG };

export async function run(): Promise<BenchResult[]> {
  const results: BenchResult[] = [];
  for (const [label, bytes, target] of [
    ['~4 KiB pod, 3 networks', 4 * 1024, 10_000],
    ['~100 KiB pod, 3 networks', 100 * 1024, 1_000],
  ] as const) {
    const pod = podOfSize(bytes);
    const req = requestFor(pod);
    const check = review(req, context);
    if (!check.allowed || check.patch.length === 0) throw new Error(`bench pod not admitted with a patch: ${JSON.stringify(check.errors)}`);
    const size = `${(JSON.stringify(pod).length / 1024).toFixed(1)} KiB, ${check.patch.length} patch ops`;
    const r = measureThroughput(() => review(req, context), { warmupMs: 500, durationMs: 2000, batch: bytes > 10_000 ? 5 : 50 });
    // Judged on CPU time (one core), which a busy machine does not distort as much as wall time.
    const rate = r.opsPerCpuSec ?? r.opsPerSec;
    results.push({
      name: `review (mutate): ${label}`,
      ...r,
      target: `≥ ${target.toLocaleString('en')}/CPU-s`,
      met: rate >= target,
      notes: size,
    });
    const full = measureThroughput(
      () => {
        plan(req, context.config);
        return toResponse('admission.k8s.io/v1', req.uid, review(req, context), 'mutate');
      },
      { warmupMs: 300, durationMs: 1000, batch: bytes > 10_000 ? 5 : 50 },
    );
    results.push({
      name: `plan + review + toResponse: ${label}`,
      ...full,
      notes: `${size}; annotation parsed once (replicas of one template)`,
    });
    // Every call a different annotation (a MAC and IPs per pod): nothing parsed is reused.
    let n = 0;
    const distinct = measureThroughput(
      () => {
        n++;
        const meta = pod['metadata'] as Record<string, unknown>;
        const nets = NETWORKS.replace(
          '02:23:45:67:89:01',
          `02:00:${((n >> 16) & 0xff).toString(16).padStart(2, '0')}:${((n >> 8) & 0xff).toString(16).padStart(2, '0')}:${(n & 0xff).toString(16).padStart(2, '0')}:01`,
        );
        const r = requestFor({ ...pod, metadata: { ...meta, annotations: { 'k8s.v1.cni.cncf.io/networks': nets } } });
        plan(r, context.config);
        return toResponse('admission.k8s.io/v1', r.uid, review(r, context), 'mutate');
      },
      { warmupMs: 300, durationMs: 1000, batch: bytes > 10_000 ? 5 : 50 },
    );
    results.push({
      name: `plan + review + toResponse: ${label}, distinct annotations`,
      ...distinct,
      notes: `${size}; every call parses its own annotation`,
    });
  }
  return results;
}
