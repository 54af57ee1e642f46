// Memory per live pod, in-process and deterministic: N synthetic pods (metadata as the
// metadata-only list sends it: labels, an owner, managedFields, the Multus annotations; 30 % with a
// MAC or an InfiniBand GUID) go through the pod watch's own path (ListWatch -> PodAddressSource ->
// address index, NAD usage, the background audit's live-pod view), delivered by a fake transport
// in pages of 500 as JSON text parsed like the real transport parses it. Reported after a forced
// GC: heap bytes per pod once listed, once the audit's first pass is done, and the most the heap
// held during the list (a forced GC after every tenth page: what the list itself keeps alive, not when
// V8 happens to collect). Children run with the Deployment's heap flags.
//   npx tsx bench/main.ts memory            (50,000 and 150,000 pods)
//   npx tsx bench/memory.bench.ts --child 250000
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { getHeapStatistics } from 'node:v8';
import { BackgroundAudit } from '../src/audit/index.js';
import { DEFAULT_ADMISSION_CONFIG } from '../src/admission/index.js';
import { StaticNadSource } from '../src/nads/index.js';
import { AddressIndex, NadUsage, PodAddressSource, PolicyEngine } from '../src/policy/index.js';
import type { KubeTransport } from '../src/kube/index.js';
import type { BenchResult } from './harness.js';

export const name = 'memory';

const self = fileURLToPath(import.meta.url);
/** The Deployment's NODE_OPTIONS (manifests/base/deployment.yaml). */
const HEAP_FLAGS = ['--max-old-space-size=192', '--max-semi-space-size=1'];
const NAMESPACES = 2000;
const NADS = 10_000;
const PAGE = 500;

const hex = (n: number, bytes: number): string =>
  Array.from({ length: bytes }, (_, i) => ((n >>> (8 * (Math.min(bytes, 4) - 1 - (i % 4)))) & 0xff).toString(16).padStart(2, '0')).join(
    ':',
  );
const uid = (n: number, salt: string): string => `${salt}0fad5b-d9cb-469f-a165-${String(n).padStart(12, '0')}`;

/** Pod `n` as PartialObjectMetadata: a ReplicaSet's pod in one of 2,000 namespaces, on one or two of 10,000 NADs. */
export function podMetadata(n: number): Record<string, unknown> {
  const ns = `team-${String(n % NAMESPACES).padStart(4, '0')}`;
  const rs = `app-${n % 50}-7d9f8c6b5`;
  const net = `net-${n % NADS}`;
  const nadNs = `team-${String((n % NADS) % NAMESPACES).padStart(4, '0')}`;
  let networks: string;
  let status: unknown[];
  const kind = n % 10; // 0,1: MAC; 2: GUID; the rest: none (30 % with an address)
  if (kind < 2) {
    const mac = `02:00:${hex(n, 4)}`;
    networks = JSON.stringify([{ name: net, namespace: nadNs, interface: 'net1', mac }]);
    status = [{ name: `${nadNs}/${net}`, interface: 'net1', mac, dns: {} }];
  } else if (kind === 2) {
    const guid = `00:00:${hex(n, 4)}:00:00`;
    networks = JSON.stringify([{ name: net, namespace: nadNs, 'cni-args': { guid } }]);
    status = [{ name: `${nadNs}/${net}`, interface: 'net1', dns: {} }];
  } else {
    // Every third uses a second NAD of its namespace (net-K and net-K+2000 live in the same one).
    networks = n % 3 === 0 ? `${nadNs}/${net},${nadNs}/net-${(n + NAMESPACES) % NADS}` : `${nadNs}/${net}`;
    status = [{ name: `${nadNs}/${net}`, interface: 'net1', ips: [`10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`], dns: {} }];
  }
  const name = `${rs}-${n.toString(36).padStart(5, 'x')}`;
  return {
    metadata: {
      name,
      generateName: `${rs}-`,
      namespace: ns,
      uid: uid(n, 'a1'),
      resourceVersion: String(1000 + n),
      creationTimestamp: '2026-12-01T10:00:00Z',
      labels: { app: `app-${n % 50}`, 'pod-template-hash': '7d9f8c6b5' },
      annotations: {
        'k8s.v1.cni.cncf.io/networks': networks,
        'k8s.v1.cni.cncf.io/network-status': JSON.stringify(status, null, 4),
      },
      ownerReferences: [
        { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: rs, uid: uid(n % 50, 'b2'), controller: true, blockOwnerDeletion: true },
      ],
      managedFields: [
        {
          manager: 'kube-controller-manager',
          operation: 'Update',
          apiVersion: 'v1',
          time: '2026-12-01T10:00:00Z',
          fieldsType: 'FieldsV1',
          fieldsV1: {
            'f:metadata': {
              'f:annotations': { '.': {}, 'f:k8s.v1.cni.cncf.io/networks': {} },
              'f:generateName': {},
              'f:labels': { '.': {}, 'f:app': {}, 'f:pod-template-hash': {} },
              'f:ownerReferences': { '.': {}, [`k:{"uid":"${uid(n % 50, 'b2')}"}`]: {} },
            },
          },
        },
        {
          manager: 'multus',
          operation: 'Update',
          apiVersion: 'v1',
          time: '2026-12-01T10:00:01Z',
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:metadata': { 'f:annotations': { 'f:k8s.v1.cni.cncf.io/network-status': {} } } },
          subresource: 'status',
        },
      ],
    },
  };
}

/**
 * A transport that lists `count` pods in pages (limit/continue), each page a JSON text parsed
 * here as the real transport parses a body; `afterPage` runs once a page has been handed over
 * (the next request means the previous page was processed). The watch waits until aborted.
 */
export function pagedPods(count: number, afterPage: () => void): KubeTransport {
  return {
    async getJson(_path, query) {
      if (query['continue']) afterPage();
      const from = query['continue'] ? Number(query['continue']) : 0;
      const limit = Number(query['limit'] ?? 500);
      const to = Math.min(count, from + limit);
      const items = [];
      for (let n = from; n < to; n++) items.push(podMetadata(n));
      const text = JSON.stringify({
        kind: 'PartialObjectMetadataList',
        metadata: { resourceVersion: '1', ...(to < count ? { continue: String(to) } : {}) },
        items,
      });
      return JSON.parse(text) as unknown;
    },
    watch: (_p, _q, _a, _e, signal) =>
      new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true }))),
    patchJson: () => Promise.reject(new Error('not here')),
  };
}

/** The 10,000 NADs the pods use (every pod's networks exist: a clean audit keeps no findings). */
const nadObjects = (): unknown[] =>
  Array.from({ length: NADS }, (_, n) => ({
    apiVersion: 'k8s.cni.cncf.io/v1',
    kind: 'NetworkAttachmentDefinition',
    metadata: {
      name: `net-${n}`,
      namespace: `team-${String(n % NAMESPACES).padStart(4, '0')}`,
      uid: uid(n, 'c3'),
      resourceVersion: String(n + 1),
    },
    spec: {
      config: JSON.stringify({
        cniVersion: '1.0.0',
        name: `net-${n}`,
        plugins: [
          { type: 'macvlan', master: 'eth1', ipam: { type: 'whereabouts', range: '10.0.0.0/8' } },
          { type: 'tuning', capabilities: { mac: true } },
        ],
      }),
    },
  }));

interface ChildReport {
  pods: number;
  /** Heap bytes per pod after the list (forced GC), and after the audit's first pass. */
  listedBytesPerPod: number;
  auditedBytesPerPod: number;
  /** The most the heap held (forced GC after every tenth page) during the list, over the heap after it. */
  peakOverSteady: number;
  heapListedMB: number;
  heapAuditedMB: number;
  heapPeakMB: number;
  rssAuditedMB: number;
  heapLimitMB: number;
  byPart: Record<string, number>;
  /** Heap bytes per NAD cache entry (10,000 NADs of two plugins, built as the NAD watch builds them). */
  nadBytes: number;
  /** Pods with findings after the first pass (0: the synthetic cluster is clean). */
  withFindings: number;
}

async function child(pods: number, parts: boolean): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc!;
  const heap = (): number => (gc(), process.memoryUsage().heapUsed);
  const empty = heap();
  const nads = new StaticNadSource(nadObjects());
  const base = heap();
  const nadBytes = (base - empty) / NADS;
  let peak = 0;
  let pages = 0;
  const index = new AddressIndex();
  const usage = new NadUsage();
  const audit = new BackgroundAudit({
    nads,
    namespaceLabels: (ns) => ({ 'kubernetes.io/metadata.name': ns }),
    engine: new PolicyEngine({ index }),
    index,
    config: DEFAULT_ADMISSION_CONFIG,
    podsUsingNad: (ns, n) => usage.podsUsing(ns, n),
    ready: () => true,
  });
  const source = new PodAddressSource(undefined, index, {
    transport: pagedPods(pods, () => void (++pages % 10 === 0 && (peak = Math.max(peak, heap())))),
    pageSize: PAGE,
    usage,
    observer: audit,
  });
  await source.start();
  const listed = heap();
  peak = Math.max(peak, listed);
  audit.drain();
  const audited = heap();
  const rss = process.memoryUsage().rss;
  const byPart: Record<string, number> = {};
  if (parts) {
    // Each part alone, fed the same pods: its share of the total.
    const one = async (what: string, make: () => { observer?: BackgroundAudit; usage?: NadUsage; index: AddressIndex }): Promise<void> => {
      const b = heap();
      const w = make();
      const s = new PodAddressSource(undefined, w.index, {
        transport: pagedPods(pods, () => undefined),
        pageSize: PAGE,
        ...(w.usage ? { usage: w.usage } : {}),
        ...(w.observer ? { observer: w.observer } : {}),
      });
      await s.start();
      byPart[what] = Math.round((heap() - b) / pods);
      await s.stop();
      if (w.observer) w.observer.drain();
    };
    await source.stop();
    await one('address index', () => ({ index: new AddressIndex() }));
    await one('nad usage', () => ({ index: new AddressIndex(), usage: new NadUsage() }));
    byPart['nad usage']! -= byPart['address index']!;
  } else await source.stop();
  const report: ChildReport = {
    pods,
    listedBytesPerPod: Math.round((listed - base) / pods),
    auditedBytesPerPod: Math.round((audited - base) / pods),
    peakOverSteady: (peak - base) / (listed - base),
    heapListedMB: listed / 2 ** 20,
    heapAuditedMB: audited / 2 ** 20,
    heapPeakMB: peak / 2 ** 20,
    rssAuditedMB: rss / 2 ** 20,
    heapLimitMB: getHeapStatistics().heap_size_limit / 2 ** 20,
    byPart,
    nadBytes: Math.round(nadBytes),
    withFindings: audit.allFindings().length,
  };
  process.stdout.write(JSON.stringify(report) + '\n');
}

export function measure(pods: number, parts = false): ChildReport {
  const out = spawnSync(
    process.execPath,
    [...process.execArgv, ...HEAP_FLAGS, '--expose-gc', self, '--child', String(pods), ...(parts ? ['--parts'] : [])],
    { encoding: 'utf8', maxBuffer: 1 << 20 },
  );
  if (out.status !== 0) throw new Error(`memory child (${pods} pods) failed: ${out.stderr.slice(-2000)}`);
  return JSON.parse(out.stdout.trim().split('\n').at(-1)!) as ChildReport;
}

export async function run(log: (line: string) => void): Promise<BenchResult[]> {
  const rows: BenchResult[] = [];
  for (const pods of [50_000, 150_000]) {
    const r = measure(pods, pods === 50_000);
    log(`${pods} pods: ${JSON.stringify(r)}`);
    rows.push({
      name: `${pods.toLocaleString('en')} pods: heap per pod (listed / audited)`,
      notes: `${r.listedBytesPerPod} / ${r.auditedBytesPerPod} B; heap ${r.heapAuditedMB.toFixed(0)} of ${r.heapLimitMB.toFixed(0)} MB; list peak ${r.peakOverSteady.toFixed(2)}x steady`,
    });
  }
  return rows;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1] && process.argv.includes('--child')) {
  await child(Number(process.argv[process.argv.indexOf('--child') + 1]), process.argv.includes('--parts'));
}
