// Loopback HTTPS load on `netattach serve` running in its own process (so the load generator does
// not share its core): latency at a fixed 1,000 reviews/s (a paced keep-alive client timing each
// request in microseconds; autocannon's histogram has 1 ms resolution) and throughput at
// saturation (autocannon). Reviews go to /mutate with real NADs from a --nads directory.
// Run alone: npm run build && node dist/bench/main.js http   (or: npx tsx bench/main.ts http)
import https from 'node:https';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, extname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { percentile, type BenchResult } from './harness.js';

export const name = 'http';

const self = fileURLToPath(import.meta.url);
const compiled = extname(self) === '.js';
// dist/bench/http.bench.js -> dist/src/cli/main.js; bench/http.bench.ts -> src/cli/main.ts (tsx)
const mainScript = resolve(dirname(self), '../src/cli', compiled ? 'main.js' : 'main.ts');
const mainArgs = compiled ? [mainScript] : ['--import', 'tsx', mainScript];

const NAMESPACE = 'bench';
const nadYaml = (n: string, resourceName: string, caps: string[]) =>
  JSON.stringify({
    apiVersion: 'k8s.cni.cncf.io/v1',
    kind: 'NetworkAttachmentDefinition',
    metadata: { name: n, namespace: NAMESPACE, annotations: { 'k8s.v1.cni.cncf.io/resourceName': resourceName } },
    spec: { config: JSON.stringify({ cniVersion: '1.0.0', name: n, plugins: [{ type: 'sriov', capabilities: Object.fromEntries(caps.map((c) => [c, true])) }] }) },
  });

const NETWORKS = JSON.stringify([
  { name: 'sriov-a', interface: 'net1', mac: '02:23:45:67:89:01', ips: ['10.10.0.5/24'] },
  { name: 'sriov-b', interface: 'net2', ips: ['fd00:10::5/64'] },
  { name: 'rdma-c', interface: 'net3', ips: ['192.168.1.10/24'] },
]);

/** An AdmissionReview body whose pod is about `targetBytes` of JSON (containers with env vars). */
function reviewOfSize(targetBytes: number): string {
  const containers: Array<Record<string, unknown>> = [];
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { generateName: 'app-7d9f8c6b5-', namespace: NAMESPACE, labels: { app: 'app', 'pod-template-hash': '7d9f8c6b5' }, annotations: { 'k8s.v1.cni.cncf.io/networks': NETWORKS } },
    spec: { containers, restartPolicy: 'Always' },
  };
  do {
    const i = containers.length;
    const env = Array.from({ length: 12 }, (_, j) => ({ name: `VAR_${i}_${j}`, value: `value-${i}-${j}-${'x'.repeat(20)}` }));
    containers.push({ name: `c${i}`, image: `registry.example.com/app/c${i}:1.2.3`, env, resources: { requests: { cpu: '100m', memory: '128Mi' } } });
  } while (JSON.stringify(pod).length < targetBytes);
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: '705ab4f5-6393-11e8-b7cc-42010a800002',
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      namespace: NAMESPACE,
      operation: 'CREATE',
      userInfo: { username: 'system:serviceaccount:kube-system:replicaset-controller' },
      object: pod,
      oldObject: null,
      dryRun: false,
    },
  });
}

interface Server {
  child: ChildProcess;
  url: string;
  ca: string;
  stop: () => Promise<void>;
}

/** Writes `count` more NADs as 100 multi-document YAML files, the way a GitOps repo might hold them. */
function writeManyNads(dir: string, count: number): void {
  const perFile = Math.ceil(count / 100);
  for (let f = 0; f * perFile < count; f++) {
    const docs: string[] = [];
    for (let n = f * perFile; n < Math.min(count, (f + 1) * perFile); n++) {
      const config = { cniVersion: '1.0.0', name: `net-${n}`, plugins: [{ type: 'sriov', vlan: n % 4000, ipam: { type: 'whereabouts', range: `10.${n % 250}.0.0/16` } }, { type: 'tuning', capabilities: { mac: true } }] };
      docs.push(JSON.stringify({ apiVersion: 'k8s.cni.cncf.io/v1', kind: 'NetworkAttachmentDefinition', metadata: { name: `net-${n}`, namespace: `ns-${n % 50}`, annotations: { 'k8s.v1.cni.cncf.io/resourceName': `intel.com/sriov_pool_${n % 20}` } }, spec: { config: JSON.stringify(config) } }));
    }
    writeFileSync(join(dir, `many-${f}.yaml`), docs.join('\n---\n'));
  }
}

/** Resident set size and its peak, MB, from /proc. */
function rssMb(pid: number | undefined): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? NaN);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

async function startServer(dir: string, extra: { nads?: number; nodeArgs?: string[] } = {}): Promise<Server> {
  mkdirSync(join(dir, 'nads'));
  writeFileSync(join(dir, 'nads', 'a.json'), nadYaml('sriov-a', 'intel.com/sriov_a', ['ips', 'mac']));
  writeFileSync(join(dir, 'nads', 'b.json'), nadYaml('sriov-b', 'intel.com/sriov_b', ['ips', 'mac']));
  writeFileSync(join(dir, 'nads', 'c.json'), nadYaml('rdma-c', 'rdma/hca_shared_c', ['ips']));
  if (extra.nads) writeManyNads(join(dir, 'nads'), extra.nads);
  const args = [...(extra.nodeArgs ?? []), ...mainArgs, 'serve', '--tls-dir', join(dir, 'tls'), '--nads', join(dir, 'nads'), '--host', '127.0.0.1', '--port', '0', '--health-port', '0'];
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const url = await new Promise<string>((res, rej) => {
    const onData = (c: Buffer) => {
      out += c.toString();
      const m = /"url":"(https:\/\/[^"]+)".*"msg":"netattach serving"/.exec(out);
      if (m) res(m[1]!);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
    child.on('exit', (code) => rej(new Error(`server exited (${code}):\n${out}`)));
  });
  const exited = new Promise<void>((r) => child.on('exit', () => r()));
  // Measure a ready server: the NAD directory has been read.
  const healthUrl = /"healthUrl":"([^"]+)"/.exec(out)![1]!;
  for (let i = 0; i < 100 && (await fetch(`${healthUrl}/readyz`)).status !== 200; i++) await new Promise((r) => setTimeout(r, 50));
  return { child, url, ca: readFileSync(join(dir, 'tls', 'ca.crt'), 'utf8'), stop: async () => (child.kill('SIGTERM'), exited) };
}

/** CPU seconds (user + system) the server process has used: load-independent cost per request. */
function cpuSeconds(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ 100)
  } catch {
    return NaN;
  }
}

function post(agent: https.Agent, url: string, body: string): Promise<{ status: number; text: string }> {
  return new Promise((res, rej) => {
    const req = https.request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } }, (r) => {
      const chunks: Buffer[] = [];
      r.on('data', (c: Buffer) => chunks.push(c));
      r.on('end', () => res({ status: r.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
    });
    req.on('error', rej);
    req.end(body);
  });
}

/** Sends `rate` requests per second for `seconds`, on keep-alive connections; per-request latency in µs. */
async function paced(agent: https.Agent, url: string, body: string, rate: number, seconds: number): Promise<{ p50Us: number; p99Us: number; sent: number; failed: number; achieved: number }> {
  const latencies: number[] = [];
  let failed = 0;
  const total = rate * seconds;
  const interval = 1000 / rate;
  const start = performance.now();
  const inflight: Array<Promise<void>> = [];
  for (let i = 0; i < total; i++) {
    const due = start + i * interval;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait - 0.5));
    while (performance.now() < due) await new Promise((r) => setImmediate(r));
    const t0 = performance.now();
    inflight.push(
      post(agent, url, body).then(
        (r) => {
          if (r.status === 200) latencies.push((performance.now() - t0) * 1000);
          else failed++;
        },
        () => void failed++,
      ),
    );
    if (inflight.length > 1000) await Promise.all(inflight.splice(0, 500));
  }
  await Promise.all(inflight);
  const elapsed = (performance.now() - start) / 1000;
  latencies.sort((a, b) => a - b);
  return { p50Us: percentile(latencies, 50), p99Us: percentile(latencies, 99), sent: total, failed, achieved: total / elapsed };
}

function saturate(url: string, body: string, seconds: number): Promise<autocannon.Result> {
  return autocannon({
    url,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body,
    connections: 32,
    pipelining: 1,
    duration: seconds,
  });
}

export async function run(log: (line: string) => void = () => {}): Promise<BenchResult[]> {
  const dir = mkdtempSync(join(tmpdir(), 'netattach-http-bench-'));
  const server = await startServer(dir);
  const results: BenchResult[] = [];
  try {
    const agent = new https.Agent({ keepAlive: true, maxSockets: 16, ca: server.ca });
    for (const [label, bytes, rate, minRps] of [
      ['~4 KiB pod, 3 networks', 4 * 1024, 1000, 5000],
      ['~100 KiB pod, 3 networks', 100 * 1024, 200, 0],
    ] as const) {
      const body = reviewOfSize(bytes);
      const url = `${server.url}/mutate?timeout=10s`;
      const check = await post(agent, url, body);
      const response = (JSON.parse(check.text) as { response?: { allowed?: boolean; patch?: string; status?: unknown } }).response;
      if (check.status !== 200 || !response?.allowed || !response.patch) throw new Error(`bench review not admitted with a patch: ${check.status} ${check.text.slice(0, 800)}`);
      const size = `${(body.length / 1024).toFixed(1)} KiB body`;
      await paced(agent, url, body, rate, 2); // warm-up
      const cpu0 = cpuSeconds(server.child.pid);
      const p = await paced(agent, url, body, rate, 10);
      const cpuUs = ((cpuSeconds(server.child.pid) - cpu0) / p.sent) * 1e6;
      log(`${label}: ${p.sent} requests at ${rate}/s (achieved ${p.achieved.toFixed(0)}/s), ${p.failed} failed, p50 ${(p.p50Us / 1000).toFixed(2)} ms, p99 ${(p.p99Us / 1000).toFixed(2)} ms, server CPU ${cpuUs.toFixed(0)} µs/request`);
      results.push({
        name: `HTTPS /mutate at ${rate}/s: ${label}`,
        p50Us: p.p50Us,
        p99Us: p.p99Us,
        target: rate === 1000 ? 'p99 < 2 ms' : undefined,
        met: rate === 1000 ? p.p99Us < 2000 && p.failed === 0 : undefined,
        notes: `${size}; ${p.failed} failed; server CPU ${cpuUs.toFixed(0)} µs/req`,
      });
      const cpu1 = cpuSeconds(server.child.pid);
      const s = await saturate(url, body, 8);
      const ok = s['2xx'];
      const satCpuUs = ((cpuSeconds(server.child.pid) - cpu1) / Math.max(1, ok)) * 1e6;
      const rps = ok / s.duration;
      log(`${label}: saturation ${rps.toFixed(0)} req/s (32 connections), non-2xx ${s.non2xx}, errors ${s.errors}, timeouts ${s.timeouts}, p50 ${s.latency.p50} ms, p99 ${s.latency.p99} ms`);
      results.push({
        name: `HTTPS /mutate saturation: ${label}`,
        opsPerSec: rps,
        target: minRps > 0 ? `≥ ${minRps.toLocaleString('en')}/s` : undefined,
        met: minRps > 0 ? rps >= minRps && s.non2xx === 0 && s.errors === 0 : undefined,
        notes: `${size}; 32 conns; p99 ${s.latency.p99} ms; errors ${s.errors + s.non2xx}; server CPU ${satCpuUs.toFixed(0)} µs/req`,
      });
    }
    agent.destroy();
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  results.push(await memoryWithManyNads(log));
  return results;
}

/** RSS of a server holding 10,000 NADs, with the Deployment's heap cap, ready and after 8 s of load. */
async function memoryWithManyNads(log: (line: string) => void): Promise<BenchResult> {
  const NADS = 10_000;
  const HEAP = '--max-old-space-size=192'; // manifests/base/deployment.yaml sets the same
  const dir = mkdtempSync(join(tmpdir(), 'netattach-rss-bench-'));
  const server = await startServer(dir, { nads: NADS, nodeArgs: [HEAP] });
  try {
    const ready = rssMb(server.child.pid);
    const s = await saturate(`${server.url}/mutate?timeout=10s`, reviewOfSize(4 * 1024), 8);
    const loaded = rssMb(server.child.pid);
    const line = `RSS with ${NADS.toLocaleString('en')} NADs (+3 bench NADs), ${HEAP}: ready ${ready.rss.toFixed(0)} MB, after 8 s of load (${s['2xx']} reviews) ${loaded.rss.toFixed(0)} MB, peak ${loaded.peak.toFixed(0)} MB`;
    log(line);
    return {
      name: `netattach serve RSS, ${NADS.toLocaleString('en')} NADs (directory), after load`,
      target: '< 150 MB',
      met: loaded.rss < 150 && s.errors === 0 && s.non2xx === 0,
      notes: `${loaded.rss.toFixed(0)} MB after load; ${ready.rss.toFixed(0)} MB ready; peak ${loaded.peak.toFixed(0)} MB; ${HEAP}`,
    };
  } finally {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
