// Loopback HTTPS load on `netattach serve` running in its own process: latency at a fixed 1,000
// reviews/s (a paced keep-alive client timing each request in microseconds; autocannon's
// histogram has 1 ms resolution) and throughput at saturation (autocannon, median of rounds).
// Reviews go to /mutate with real NADs from a --nads directory. The targets are for one core:
// where taskset exists, the server (all its threads) runs on CPU 0 and this process, the load
// generator, on CPU 1, so neither steals the other's time.
// Run alone: npm run build && node dist/bench/main.js http   (or: npx tsx bench/main.ts http)
import https from 'node:https';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, extname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import type { BenchResult } from './harness.js';
import { paced, post } from './https-client.js';
import { PRODUCTION_NODE_OPTIONS } from './hostile-lib.js';

const benchNodeArgs = (): string[] | undefined =>
  process.env.BENCH_NODE_OPTIONS === undefined ? undefined : process.env.BENCH_NODE_OPTIONS.split(' ').filter(Boolean);

export const name = 'http';

const self = fileURLToPath(import.meta.url);
const compiled = extname(self) === '.js';
// dist/bench/http.bench.js -> dist/src/cli/main.js; bench/http.bench.ts -> src/cli/main.ts (tsx)
const mainScript = resolve(dirname(self), '../src/cli', compiled ? 'main.js' : 'main.ts');
const mainArgs = compiled ? [mainScript] : ['--import', 'tsx', mainScript];

export const NAMESPACE = 'bench';
/** A NAD of the bench's review (an SR-IOV network; without `resourceName`, no annotations at all). */
export const benchNad = (n: string, resourceName: string | undefined, caps: string[]): Record<string, unknown> => ({
  apiVersion: 'k8s.cni.cncf.io/v1',
  kind: 'NetworkAttachmentDefinition',
  metadata: {
    name: n,
    namespace: NAMESPACE,
    ...(resourceName ? { annotations: { 'k8s.v1.cni.cncf.io/resourceName': resourceName } } : {}),
  },
  spec: {
    config: JSON.stringify({
      cniVersion: '1.0.0',
      name: n,
      plugins: [{ type: 'sriov', capabilities: Object.fromEntries(caps.map((c) => [c, true])), ipam: { type: 'static' } }],
    }),
  },
});
const nadYaml = (n: string, resourceName: string, caps: string[]): string => JSON.stringify(benchNad(n, resourceName, caps));

const NETWORKS = JSON.stringify([
  { name: 'sriov-a', interface: 'net1', mac: '02:23:45:67:89:01', ips: ['10.10.0.5/24'] },
  { name: 'sriov-b', interface: 'net2', ips: ['fd00:10::5/64'] },
  { name: 'rdma-c', interface: 'net3', ips: ['192.168.1.10/24'] },
]);

/** CPU pinning: server on CPU 0, load generator (this process) on CPU 1; none on a 1-CPU machine or without taskset. */
const pinning = (() => {
  const ok =
    availableParallelism() >= 2 && spawnSync('taskset', ['-a', '-p', '-c', '1', String(process.pid)], { stdio: 'ignore' }).status === 0;
  return {
    ok,
    server: ok ? ['taskset', '-c', '0'] : [],
    note: ok ? 'server pinned to CPU 0, load generator to CPU 1' : 'not pinned (no taskset or one CPU)',
  };
})();

/** An AdmissionReview body whose pod is about `targetBytes` of JSON (containers with env vars). */
export function reviewOfSize(targetBytes: number, networks = NETWORKS): string {
  const containers: Array<Record<string, unknown>> = [];
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: 'app-7d9f8c6b5-',
      namespace: NAMESPACE,
      labels: { app: 'app', 'pod-template-hash': '7d9f8c6b5' },
      annotations: { 'k8s.v1.cni.cncf.io/networks': networks },
    },
    spec: { containers, restartPolicy: 'Always' },
  };
  do {
    const i = containers.length;
    const env = Array.from({ length: 12 }, (_, j) => ({ name: `VAR_${i}_${j}`, value: `value-${i}-${j}-${'x'.repeat(20)}` }));
    containers.push({
      name: `c${i}`,
      image: `registry.example.com/app/c${i}:1.2.3`,
      env,
      resources: { requests: { cpu: '100m', memory: '128Mi' } },
    });
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
      const config = {
        cniVersion: '1.0.0',
        name: `net-${n}`,
        plugins: [
          { type: 'sriov', vlan: n % 4000, ipam: { type: 'whereabouts', range: `10.${n % 250}.0.0/16` } },
          { type: 'tuning', capabilities: { mac: true } },
        ],
      };
      docs.push(
        JSON.stringify({
          apiVersion: 'k8s.cni.cncf.io/v1',
          kind: 'NetworkAttachmentDefinition',
          metadata: {
            name: `net-${n}`,
            namespace: `ns-${n % 50}`,
            annotations: { 'k8s.v1.cni.cncf.io/resourceName': `intel.com/sriov_pool_${n % 20}` },
          },
          spec: { config: JSON.stringify(config) },
        }),
      );
    }
    writeFileSync(join(dir, `many-${f}.yaml`), docs.join('\n---\n'));
  }
}

/** Resident set size and its peak, MB, from /proc. */
export function rssMb(pid: number | undefined): { rss: number; peak: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? NaN);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

export async function startServer(
  dir: string,
  extra: { nads?: number; nodeArgs?: string[]; env?: Record<string, string> } = {},
): Promise<Server> {
  mkdirSync(join(dir, 'nads'));
  writeFileSync(join(dir, 'nads', 'a.json'), nadYaml('sriov-a', 'intel.com/sriov_a', ['ips', 'mac']));
  writeFileSync(join(dir, 'nads', 'b.json'), nadYaml('sriov-b', 'intel.com/sriov_b', ['ips', 'mac']));
  writeFileSync(join(dir, 'nads', 'c.json'), nadYaml('rdma-c', 'rdma/hca_shared_c', ['ips']));
  if (extra.nads) writeManyNads(join(dir, 'nads'), extra.nads);
  const args = [
    process.execPath,
    ...(extra.nodeArgs ?? []),
    ...mainArgs,
    'serve',
    '--tls-dir',
    join(dir, 'tls'),
    '--nads',
    join(dir, 'nads'),
    '--host',
    '127.0.0.1',
    '--port',
    '0',
    '--health-port',
    '0',
  ];
  // taskset execs node: the child's pid is the server's.
  const [command, ...rest] = [...pinning.server, ...args];
  const child = spawn(command!, rest, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...extra.env } });
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

/** The floor (bench/floor-server.ts) with the same TLS material, pinning and Node flags as netattach. */
export async function startFloor(tlsDir: string, nodeArgs: string[], env: Record<string, string> = {}): Promise<Server> {
  const floorScript = resolve(dirname(self), compiled ? 'floor-server.js' : 'floor-server.ts');
  const args = [process.execPath, ...nodeArgs, ...(compiled ? [] : ['--import', 'tsx']), floorScript, tlsDir];
  const [command, ...rest] = [...pinning.server, ...args];
  const child = spawn(command!, rest, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let out = '';
  const url = await new Promise<string>((res, rej) => {
    child.stdout!.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /"url":"(https:\/\/[^"]+)"/.exec(out);
      if (m) res(m[1]!);
    });
    child.stderr!.on('data', (c: Buffer) => (out += c.toString()));
    child.on('exit', (code) => rej(new Error(`floor server exited (${code}):\n${out}`)));
  });
  const exited = new Promise<void>((r) => child.on('exit', () => r()));
  return { child, url, ca: readFileSync(join(tlsDir, 'ca.crt'), 'utf8'), stop: async () => (child.kill('SIGTERM'), exited) };
}

/** CPU seconds (user + system) the server process has used: load-independent cost per request. */
export function cpuSeconds(pid: number | undefined): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ 100)
  } catch {
    return NaN;
  }
}

/** Saturation load: one body for every request, or a fresh body per request from `bodies`. */
export function saturate(url: string, body: string | (() => string), seconds: number): Promise<autocannon.Result> {
  return autocannon({
    url,
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    ...(typeof body === 'string' ? { body } : { requests: [{ setupRequest: (req: autocannon.Request) => ({ ...req, body: body() }) }] }),
    connections: 32,
    pipelining: 1,
    duration: seconds,
  });
}

/** Saturation in rounds (after a warm-up): the median round's rate, and the range, so one noisy second does not decide. */
async function saturateRounds(
  server: Server,
  url: string,
  body: string | (() => string),
  rounds = 3,
  seconds = 4,
): Promise<{ rps: number; min: number; max: number; errors: number; p99: number; cpuUs: number }> {
  await saturate(url, body, 2);
  const rates: number[] = [];
  let errors = 0,
    ok = 0,
    p99 = 0;
  const cpu0 = cpuSeconds(server.child.pid);
  for (let i = 0; i < rounds; i++) {
    const s = await saturate(url, body, seconds);
    rates.push(s['2xx'] / s.duration);
    errors += s.errors + s.non2xx + s.timeouts;
    ok += s['2xx'];
    p99 = Math.max(p99, s.latency.p99);
  }
  const cpuUs = ((cpuSeconds(server.child.pid) - cpu0) / Math.max(1, ok)) * 1e6;
  rates.sort((a, b) => a - b);
  return { rps: rates[Math.floor(rates.length / 2)]!, min: rates[0]!, max: rates[rates.length - 1]!, errors, p99, cpuUs };
}

/** The networks annotation with a MAC and IPs that differ on every call: no two requests share a parse. */
function distinctNetworks(): () => string {
  let n = 0;
  return () => {
    n++;
    const b = (shift: number) => ((n >> shift) & 0xff).toString(16).padStart(2, '0');
    return JSON.stringify([
      {
        name: 'sriov-a',
        interface: 'net1',
        mac: `02:00:00:${b(16)}:${b(8)}:${b(0)}`,
        ips: [`10.${(n >> 16) & 0xff}.${(n >> 8) & 0xff}.${n & 0xff}/8`],
      },
      { name: 'sriov-b', interface: 'net2', ips: [`fd00:10::${n.toString(16)}/64`] },
      { name: 'rdma-c', interface: 'net3', ips: ['192.168.1.10/24'] },
    ]);
  };
}

export async function run(log: (line: string) => void = () => {}): Promise<BenchResult[]> {
  const dir = mkdtempSync(join(tmpdir(), 'netattach-http-bench-'));
  // BENCH_NODE_OPTIONS: V8 flags for the server of every row (docs/performance.md compares them);
  // unset, the first rows run without flags and the RSS row with the Deployment's.
  const server = await startServer(dir, { nodeArgs: benchNodeArgs() ?? [] });
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
      if (check.status !== 200 || !response?.allowed || !response.patch)
        throw new Error(`bench review not admitted with a patch: ${check.status} ${check.text.slice(0, 800)}`);
      const size = `${(body.length / 1024).toFixed(1)} KiB body`;
      await paced(agent, url, body, rate, 2); // warm-up
      const cpu0 = cpuSeconds(server.child.pid);
      const p = await paced(agent, url, body, rate, 10);
      const cpuUs = ((cpuSeconds(server.child.pid) - cpu0) / p.sent) * 1e6;
      log(
        `${label}: ${p.sent} requests at ${rate}/s (achieved ${p.achieved.toFixed(0)}/s), ${p.failed} failed, p50 ${(p.p50Us / 1000).toFixed(2)} ms, p99 ${(p.p99Us / 1000).toFixed(2)} ms, server CPU ${cpuUs.toFixed(0)} µs/request`,
      );
      results.push({
        name: `HTTPS /mutate at ${rate}/s: ${label}`,
        p50Us: p.p50Us,
        p99Us: p.p99Us,
        target: rate === 1000 ? 'p99 < 2 ms' : undefined,
        met: rate === 1000 ? p.p99Us < 2000 && p.failed === 0 : undefined,
        notes: `${size}; ${p.failed} failed; server CPU ${cpuUs.toFixed(0)} µs/req`,
      });
      const s = await saturateRounds(server, url, body);
      log(
        `${label}: saturation ${s.rps.toFixed(0)} req/s median of 3 rounds (${s.min.toFixed(0)}–${s.max.toFixed(0)}), 32 connections, errors ${s.errors}, p99 ${s.p99} ms, server CPU ${s.cpuUs.toFixed(0)} µs/request; ${pinning.note}`,
      );
      results.push({
        name: `HTTPS /mutate saturation: ${label}`,
        opsPerSec: s.rps,
        target: minRps > 0 ? `≥ ${minRps.toLocaleString('en')}/s` : undefined,
        met: minRps > 0 ? s.rps >= minRps && s.errors === 0 : undefined,
        notes: `${size}; median of 3 × 4 s (${s.min.toFixed(0)}–${s.max.toFixed(0)}); p99 ${s.p99} ms; errors ${s.errors}; server CPU ${s.cpuUs.toFixed(0)} µs/req`,
      });
      if (bytes < 10_000) {
        // Replicas of one template share their annotation text, parsed once; here no two requests do.
        const next = distinctNetworks();
        const template = reviewOfSize(bytes, '@NETWORKS@');
        const d = await saturateRounds(server, url, () => template.replace('@NETWORKS@', JSON.stringify(next()).slice(1, -1)));
        log(
          `${label}, a different annotation on every request: saturation ${d.rps.toFixed(0)} req/s (${d.min.toFixed(0)}–${d.max.toFixed(0)}), errors ${d.errors}, server CPU ${d.cpuUs.toFixed(0)} µs/request`,
        );
        results.push({
          name: `HTTPS /mutate saturation: ${label}, distinct annotations`,
          opsPerSec: d.rps,
          notes: `every request parses its own annotation; median of 3 × 4 s (${d.min.toFixed(0)}–${d.max.toFixed(0)}); errors ${d.errors}; server CPU ${d.cpuUs.toFixed(0)} µs/req`,
        });
      }
    }
    agent.destroy();
    results.push(...(await againstTheFloor(join(dir, 'tls'), log)));
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
  const flags = benchNodeArgs() ?? PRODUCTION_NODE_OPTIONS.split(' '); // manifests/base/deployment.yaml sets the same
  const HEAP = flags.join(' ');
  const dir = mkdtempSync(join(tmpdir(), 'netattach-rss-bench-'));
  const server = await startServer(dir, { nads: NADS, nodeArgs: flags });
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

/**
 * Issue 39: netattach beside the floor of its stack in one run, same body, same TLS, same flags
 * (BENCH_NODE_OPTIONS, else the Deployment's): CPU per review, throughput, p50/p99 at 1,000/s and
 * RSS after the load, each as netattach's ratio to the floor. Both run one after the other on the
 * same pinned CPU, so the ratios hold on a busy machine better than either figure alone.
 */
async function againstTheFloor(tlsDir: string, log: (line: string) => void): Promise<BenchResult[]> {
  const body = reviewOfSize(4 * 1024);
  const measure = async (target: Server, label: string) => {
    const agent = new https.Agent({ keepAlive: true, maxSockets: 16, ca: target.ca });
    const url = `${target.url}/mutate?timeout=10s`;
    await paced(agent, url, body, 1000, 2);
    const p = await paced(agent, url, body, 1000, 10);
    const sat = await saturateRounds(target, url, body);
    agent.destroy();
    const rss = rssMb(target.child.pid).rss;
    log(
      `${label}: ${sat.rps.toFixed(0)} reviews/s, CPU ${sat.cpuUs.toFixed(0)} µs/review, p50 ${(p.p50Us / 1000).toFixed(2)} / p99 ${(p.p99Us / 1000).toFixed(2)} ms at 1,000/s, RSS after load ${rss.toFixed(0)} MB`,
    );
    return { rps: sat.rps, cpuUs: sat.cpuUs, p50Us: p.p50Us, p99Us: p.p99Us, rss };
  };
  const flags = benchNodeArgs() ?? PRODUCTION_NODE_OPTIONS.split(' ');
  // netattach again with the flags the floor gets (the rows above ran it without flags).
  const dir = mkdtempSync(join(tmpdir(), 'netattach-floor-bench-'));
  const flagged = await startServer(dir, { nodeArgs: flags });
  let ours: Awaited<ReturnType<typeof measure>>;
  try {
    ours = await measure(flagged, 'netattach');
  } finally {
    await flagged.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  const floor = await startFloor(tlsDir, flags);
  let base: Awaited<ReturnType<typeof measure>>;
  try {
    base = await measure(floor, 'bare fastify route (the floor)');
  } finally {
    await floor.stop();
  }
  const cpu = ours.cpuUs / base.cpuUs;
  const rss = ours.rss / base.rss;
  log(
    `netattach / floor: CPU per review ${cpu.toFixed(2)}x (goal ≤ 1.3x), throughput ${(ours.rps / base.rps).toFixed(2)}x, p99 ${(ours.p99Us / base.p99Us).toFixed(2)}x, RSS after load ${rss.toFixed(2)}x (goal ≤ 1.1x); flags ${flags.join(' ')}`,
  );
  return [
    {
      name: 'netattach / bare fastify route: CPU per review (~4 KiB pod)',
      target: '≤ 1.3x',
      met: cpu <= 1.3,
      notes: `${ours.cpuUs.toFixed(0)} / ${base.cpuUs.toFixed(0)} µs = ${cpu.toFixed(2)}x; throughput ${ours.rps.toFixed(0)} / ${base.rps.toFixed(0)} reviews/s`,
    },
    {
      name: 'netattach / bare fastify route: RSS after load',
      target: '≤ 1.1x',
      met: rss <= 1.1,
      notes: `${ours.rss.toFixed(0)} / ${base.rss.toFixed(0)} MB = ${rss.toFixed(2)}x`,
    },
    {
      name: 'netattach / bare fastify route: p99 at 1,000/s',
      notes: `${(ours.p99Us / 1000).toFixed(2)} / ${(base.p99Us / 1000).toFixed(2)} ms; p50 ${(ours.p50Us / 1000).toFixed(2)} / ${(base.p50Us / 1000).toFixed(2)} ms`,
    },
  ];
}
