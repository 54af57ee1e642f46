// Where a review's CPU goes (issue 39): runs netattach and the floor (bench/floor-server.ts) one
// after the other under the same saturating load with V8's --cpu-prof, then prints each one's
// self time per request, grouped by who spends it (the server's own folders, fastify, Node's
// HTTP and TLS, the garbage collector, ...), side by side. The groups add up to the CPU per review
// the http bench reports, less the time V8 spends outside JavaScript samples.
//   npm run build && node dist/bench/profile.js [SECONDS] [--top N]
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cpuSeconds, reviewOfSize, saturate, startFloor, startServer } from './http.bench.js';
import { PRODUCTION_NODE_OPTIONS } from './hostile-lib.js';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  startTime: number;
  endTime: number;
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Who a frame's time belongs to: the first matching rule names its group. */
const GROUPS: Array<[string, (url: string, fn: string) => boolean]> = [
  ['(garbage collector)', (_u, f) => f === '(garbage collector)'],
  ['(idle)', (_u, f) => f === '(idle)'],
  ['(program: V8, libuv, OpenSSL)', (_u, f) => f === '(program)' || f === '(root)'],
  ['netattach src/', (u) => /\/dist\/src\//.test(u) || /\/src\/[a-z-]+\/[^/]+\.ts$/.test(u)],
  ['floor script', (u) => u.includes('floor-server')],
  [
    'fastify',
    (u) =>
      /node_modules\/(fastify|@fastify|avvio|find-my-way|light-my-request|secure-json-parse|fast-json-stringify|toad-cache|abstract-logging|process-warning|rfdc|fast-querystring|fast-decode-uri-component)\//.test(
        u,
      ),
  ],
  [
    'pino',
    (u) =>
      /node_modules\/(pino|pino-std-serializers|sonic-boom|thread-stream|quick-format-unescaped|fast-redact|safe-stable-stringify|atomic-sleep|on-exit-leak-free|real-require)/.test(
        u,
      ),
  ],
  ['prom-client', (u) => /node_modules\/(prom-client|tdigest|bintrees)\//.test(u)],
  ['ajv', (u) => /node_modules\/ajv/.test(u)],
  ['native (JSON.parse, TLS writes, ...)', (u) => u === ''],
  ['node: http', (u) => /node:_http|node:http/.test(u)],
  ['node: tls, net, streams', (u) => /node:(_tls|tls|net|internal\/stream|stream|internal\/streams|_stream|internal\/tls)/.test(u)],
  ['node: other', (u) => u.startsWith('node:')],
  ['other node_modules', (u) => u.includes('node_modules')],
];

function groupOf(frame: ProfileNode['callFrame']): string {
  for (const [name, test] of GROUPS) if (test(frame.url, frame.functionName)) return name;
  return frame.url || frame.functionName;
}

/** Self time (µs) per group and per function, from one .cpuprofile's samples taken in its last `windowUs`. */
function selfTimes(
  p: Profile,
  windowUs: number,
): { groups: Map<string, number>; functions: Map<string, number>; inclusive: Map<string, number>; total: number } {
  const from = p.endTime - windowUs;
  let at = p.startTime;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const groups = new Map<string, number>();
  const functions = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let total = 0;
  p.samples.forEach((id, i) => {
    const dt = p.timeDeltas[i] ?? 0;
    at += dt;
    const node = byId.get(id);
    if (!node || at < from) return;
    const g = groupOf(node.callFrame);
    if (g === '(idle)') return;
    total += dt;
    groups.set(g, (groups.get(g) ?? 0) + dt);
    const short = node.callFrame.url.replace(/^.*\/(node_modules|dist|src)\//, '$1/');
    const f = `${node.callFrame.functionName || '(anonymous)'} ${short}:${node.callFrame.lineNumber + 1}`;
    functions.set(f, (functions.get(f) ?? 0) + dt);
    // Inclusive time of the server's own named functions: each counted once per sample.
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = byId.get(at)!.callFrame;
      if (!/\/src\/[a-z-]+\/[^/]+\.(js|ts)$/.test(frame.url) || !frame.functionName) continue;
      const name = `${frame.functionName} ${frame.url.replace(/^.*\/src\//, '')}`;
      if (seen.has(name)) continue;
      seen.add(name);
      inclusive.set(name, (inclusive.get(name) ?? 0) + dt);
    }
  });
  return { groups, functions, inclusive, total };
}

async function profileOne(
  label: string,
  start: (profileDir: string) => Promise<{ url: string; child: { pid?: number }; stop: () => Promise<void> }>,
  seconds: number,
): Promise<{ label: string; requests: number; cpuUs: number; profile: ReturnType<typeof selfTimes> }> {
  const profileDir = mkdtempSync(join(tmpdir(), 'netattach-prof-'));
  const server = await start(profileDir);
  const body = reviewOfSize(4 * 1024);
  const url = `${server.url}/mutate?timeout=10s`;
  await saturate(url, body, 2);
  const cpu0 = cpuSeconds(server.child.pid);
  const t0 = performance.now();
  const s = await saturate(url, body, seconds);
  const cpuUs = ((cpuSeconds(server.child.pid) - cpu0) / Math.max(1, s['2xx'])) * 1e6;
  await server.stop();
  // Only the samples of the measured load (and the stop after it): not start-up, not the warm-up.
  const windowUs = (performance.now() - t0) * 1000;
  const file = readdirSync(profileDir).find((f) => f.endsWith('.cpuprofile'));
  if (!file) throw new Error(`${label}: no .cpuprofile written in ${profileDir}`);
  const profile = selfTimes(JSON.parse(readFileSync(join(profileDir, file), 'utf8')) as Profile, windowUs);
  rmSync(profileDir, { recursive: true, force: true });
  return { label, requests: s['2xx'] + s.non2xx, cpuUs, profile };
}

async function main(argv: string[]): Promise<void> {
  const seconds = Number(argv.find((a) => /^\d+$/.test(a)) ?? 8);
  const topAt = argv.indexOf('--top');
  const top = topAt >= 0 ? Number(argv[topAt + 1]) : 25;
  const flags = PRODUCTION_NODE_OPTIONS.split(' ');
  const prof = (dir: string) => ['--cpu-prof', `--cpu-prof-dir=${dir}`, '--cpu-prof-interval=200'];
  const tlsHome = mkdtempSync(join(tmpdir(), 'netattach-prof-tls-'));
  const ours = await profileOne('netattach', (d) => startServer(tlsHome, { nodeArgs: [...flags, ...prof(d)] }), seconds);
  const floor = await profileOne('floor', (d) => startFloor(join(tlsHome, 'tls'), [...flags, ...prof(d)]), seconds);
  rmSync(tlsHome, { recursive: true, force: true });
  for (const r of [ours, floor]) {
    process.stdout.write(`${r.label}: ${r.requests} reviews in ${seconds} s, CPU ${r.cpuUs.toFixed(0)} µs/review (from /proc)\n`);
  }
  // Per-request figures: the window's busy time in proportion to the CPU per review from /proc.
  const perReq = (r: typeof ours, us: number) => (us / r.profile.total) * r.cpuUs;
  const names = [...new Set([...ours.profile.groups.keys(), ...floor.profile.groups.keys()])].sort(
    (a, b) => (ours.profile.groups.get(b) ?? 0) - (ours.profile.groups.get(a) ?? 0),
  );
  process.stdout.write(`\n${'group'.padEnd(34)} ${'netattach µs'.padStart(13)} ${'floor µs'.padStart(10)}\n`);
  for (const n of names) {
    const a = perReq(ours, ours.profile.groups.get(n) ?? 0);
    const b = perReq(floor, floor.profile.groups.get(n) ?? 0);
    process.stdout.write(`${n.slice(0, 34).padEnd(34)} ${a.toFixed(1).padStart(13)} ${b.toFixed(1).padStart(10)}\n`);
  }
  process.stdout.write(`\nnetattach: its own functions by inclusive time, µs per review\n`);
  for (const [f, us] of [...ours.profile.inclusive.entries()].sort((a, b) => b[1] - a[1]).slice(0, top))
    process.stdout.write(`${perReq(ours, us).toFixed(2).padStart(8)}  ${f}\n`);
  for (const r of [ours, floor]) {
    process.stdout.write(`\n${r.label}: top ${top} functions by self time, µs per review\n`);
    const fns = [...r.profile.functions.entries()].sort((a, b) => b[1] - a[1]).slice(0, top);
    for (const [f, us] of fns) process.stdout.write(`${perReq(r, us).toFixed(2).padStart(8)}  ${f}\n`);
  }
}

await main(process.argv.slice(2));
