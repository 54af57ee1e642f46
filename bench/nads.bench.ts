// NAD benchmarks: nadFromObject / validateNadObject throughput, and the memory of 10,000 NADs
// in the static and directory sources (and the raw objects a cluster informer also keeps),
// each measured in a child process started with --expose-gc, against its own baseline.
// Run alone: npx tsx bench/nads.bench.ts, or through bench/main.ts.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { stringify } from 'yaml';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { KubeCredentials } from '../src/kube/index.js';
import {
  ClusterNadSource,
  DirectoryNadSource,
  StaticNadSource,
  nadFromObject,
  validateNadObject,
  type ClusterNadSourceOptions,
} from '../src/nads/index.js';
import { measureThroughput, type BenchResult } from './harness.js';

export const name = 'nads';

const COUNT = 10_000;
const RSS_TARGET_MB = 150;
const PAGE = 500;
let servedBytes = 0;

/** A realistic NAD: SR-IOV, macvlan+tuning, ib-sriov or RoCE, with annotations, in one of 50 namespaces. */
function nadObject(i: number): Record<string, unknown> {
  const kind = i % 4;
  const name = `net-${i}`;
  const config =
    kind === 0
      ? {
          cniVersion: '0.3.1',
          name,
          type: 'sriov',
          vlan: i % 4000,
          ipam: { type: 'host-local', subnet: `10.${(i >> 8) & 255}.${i & 255}.0/24` },
        }
      : kind === 1
        ? {
            cniVersion: '1.0.0',
            name,
            plugins: [
              { type: 'macvlan', master: 'eth1', mode: 'bridge', capabilities: { ips: true }, ipam: { type: 'static' } },
              { type: 'tuning', capabilities: { mac: true } },
            ],
          }
        : kind === 2
          ? {
              cniVersion: '0.3.1',
              name,
              type: 'ib-sriov',
              pkey: '0x6611',
              capabilities: { infinibandGUID: true },
              ipam: { type: 'whereabouts', range: '192.168.100.0/24' },
            }
          : {
              cniVersion: '0.3.1',
              name,
              plugins: [{ type: 'macvlan', master: 'ens13f1np1', ipam: { type: 'whereabouts', range: '192.168.50.0/24' } }],
            };
  const resource = ['intel.com/sriov_netdevice', undefined, 'mellanox.com/mlnx_sriov_ib', 'rdma/hpc_shared_devices_ens13f1np1'][kind];
  return {
    apiVersion: 'k8s.cni.cncf.io/v1',
    kind: 'NetworkAttachmentDefinition',
    metadata: {
      name,
      namespace: `team-${i % 50}`,
      uid: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
      resourceVersion: String(100_000 + i),
      annotations: {
        ...(resource ? { 'k8s.v1.cni.cncf.io/resourceName': resource } : {}),
        ...(i % 10 === 0 ? { 'k8s.v1.cni.cncf.io/nodeSelector': 'feature.node.kubernetes.io/network-sriov.capable=true' } : {}),
      },
    },
    spec: { config: JSON.stringify(config, null, 2) },
  };
}

/** Serves the NAD list (and an idle watch) from a body serialized once. */
async function listServer(): Promise<{ kubeConfig: KubeCredentials; server: Server }> {
  const items = Array.from({ length: COUNT }, (_, i) => {
    const obj = nadObject(i);
    const meta = obj.metadata as Record<string, unknown>;
    (meta.annotations as Record<string, string>)['kubectl.kubernetes.io/last-applied-configuration'] = JSON.stringify(obj);
    meta.managedFields = [
      {
        manager: 'kubectl-client-side-apply',
        operation: 'Update',
        apiVersion: 'k8s.cni.cncf.io/v1',
        time: '2024-05-01T10:00:00Z',
        fieldsType: 'FieldsV1',
        fieldsV1: {
          'f:metadata': { 'f:annotations': { '.': {}, 'f:kubectl.kubernetes.io/last-applied-configuration': {} } },
          'f:spec': { '.': {}, 'f:config': {} },
        },
      },
    ];
    return obj;
  });
  // Pages of 500 with continue tokens, as kube-apiserver answers the source's paginated list.
  const pages = new Map<number, Buffer>();
  for (let from = 0; from < items.length; from += PAGE) {
    const more = from + PAGE < items.length;
    const metadata = { resourceVersion: '200000', ...(more ? { continue: String(from + PAGE) } : {}) };
    pages.set(
      from,
      Buffer.from(
        JSON.stringify({
          apiVersion: 'k8s.cni.cncf.io/v1',
          kind: 'NetworkAttachmentDefinitionList',
          metadata,
          items: items.slice(from, from + PAGE),
        }),
      ),
    );
  }
  const server = createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.searchParams.get('watch') === 'true') res.flushHeaders();
    else res.end(pages.get(Number(url.searchParams.get('continue') ?? 0)));
  });
  servedBytes = [...pages.values()].reduce((n, b) => n + b.length, 0);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const kubeConfig: KubeCredentials = { server: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, source: 'static' };
  return { kubeConfig, server };
}

interface MemoryReport {
  mode: string;
  rssMB: number;
  heapMB: number;
  totalRssMB: number;
  ms: number;
  cpuMs: number;
  size: number;
}

async function memoryChild(mode: string): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('run with --expose-gc');
  let dir: string | undefined;
  let kubeConfig: KubeCredentials | undefined;
  let server: Server | undefined;
  if (mode === 'cluster') ({ kubeConfig, server } = await listServer());
  if (mode === 'directory') {
    // Written before the baseline: 100 files of 100 documents, as a GitOps repository would hold them.
    dir = mkdtempSync(join(tmpdir(), 'netattach-nads-'));
    for (let f = 0; f < COUNT / 100; f++) {
      writeFileSync(join(dir, `nads-${f}.yaml`), Array.from({ length: 100 }, (_, k) => stringify(nadObject(f * 100 + k))).join('---\n'));
    }
  }
  gc();
  gc();
  const base = process.memoryUsage();
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  let keep: unknown;
  let size = 0;
  if (mode === 'static') {
    const src = new StaticNadSource(Array.from({ length: COUNT }, (_, i) => nadObject(i)));
    size = src.size();
    keep = src;
  } else if (mode === 'directory') {
    const src = new DirectoryNadSource(dir!, { resyncIntervalMs: 0 });
    await src.start();
    size = src.size();
    await src.stop();
    keep = src;
  } else {
    // The real cluster source against a minimal API server in this process, whose list body
    // (objects as kubectl apply leaves them: managedFields, last-applied annotation) was
    // serialized before the baseline.
    const src = new ClusterNadSource(kubeConfig!, {} satisfies ClusterNadSourceOptions);
    await src.start();
    size = src.size();
    keep = src;
  }
  const ms = performance.now() - start;
  const cpu = process.cpuUsage(cpu0);
  const cpuMs = (cpu.user + cpu.system) / 1000;
  gc();
  gc();
  const after = process.memoryUsage();
  if (dir) rmSync(dir, { recursive: true, force: true });
  server?.closeAllConnections();
  server?.close();
  const report: MemoryReport = {
    mode,
    rssMB: (after.rss - base.rss) / 2 ** 20,
    heapMB: (after.heapUsed - base.heapUsed) / 2 ** 20,
    totalRssMB: (after.rss - servedBytes) / 2 ** 20,
    ms,
    cpuMs,
    size,
  };
  process.stdout.write(`${JSON.stringify(report)}\n`);
  if (keep === null) process.stdout.write('unreachable\n');
}

function memoryBench(mode: string, label: string): BenchResult {
  const self = fileURLToPath(import.meta.url);
  const child = spawnSync(process.execPath, [...process.execArgv, '--expose-gc', self, `--memory=${mode}`], { encoding: 'utf8' });
  if (child.status !== 0) throw new Error(`memory child (${mode}) failed: ${child.stderr}`);
  const r = JSON.parse(child.stdout.trim().split('\n').at(-1)!) as MemoryReport;
  return {
    name: `${label}: ${r.size.toLocaleString('en')} NADs`,
    ms: r.ms,
    cpuMs: r.cpuMs,
    target: `process RSS < ${RSS_TARGET_MB} MB`,
    met: r.totalRssMB < RSS_TARGET_MB,
    notes: `+${r.heapMB.toFixed(1)} MB heap, +${r.rssMB.toFixed(1)} MB RSS over baseline; process RSS ${r.totalRssMB.toFixed(0)} MB${mode === 'cluster' ? " (less the fake server's prepared pages)" : ''}; result = load time`,
  };
}

export async function run(log: (line: string) => void = console.log): Promise<BenchResult[]> {
  const objects = Array.from({ length: 1000 }, (_, i) => nadObject(i));
  let i = 0;
  const model = measureThroughput(() => nadFromObject(objects[i++ % objects.length]));
  const validate = measureThroughput(() => validateNadObject(objects[i++ % objects.length]));
  const results: BenchResult[] = [
    { name: 'nadFromObject (mixed SR-IOV/macvlan/IB/RoCE NADs)', ...model },
    { name: 'validateNadObject (same NADs)', ...validate },
    memoryBench('static', 'StaticNadSource'),
    memoryBench('directory', 'DirectoryNadSource, 100 YAML files'),
    memoryBench('cluster', 'ClusterNadSource (kubectl-applied objects)'),
  ];
  log(
    `NADs: ${results.map((r) => `${r.name}: ${r.opsPerSec ? `${Math.round(r.opsPerSec).toLocaleString('en')}/s` : r.notes}`).join('; ')}`,
  );
  return results;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const memory = process.argv.find((a) => a.startsWith('--memory='));
  if (memory) await memoryChild(memory.slice('--memory='.length));
  else {
    const { formatTable } = await import('./harness.js');
    process.stdout.write(`${formatTable(name, await run(() => {}))}\n`);
  }
}
