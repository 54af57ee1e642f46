// What a review allocates (issue 39: netattach scavenges about three times as often as the floor):
// runs netattach and the floor (bench/floor-server.ts) one after the other under the same load,
// each with V8's sampling heap profiler preloaded (bench/heap-sampler.ts, collected objects
// included), and prints the bytes allocated per review, in all and by the function that allocated.
// Bytes are counted, not timed: the figures hold on a busy machine too.
//   npm run bench:alloc [-- REVIEWS] [--top N]
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { reviewOfSize, startFloor, startServer } from './http.bench.js';
import { PRODUCTION_NODE_OPTIONS, sleep } from './hostile-lib.js';

interface SampleNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: SampleNode[];
}

const sampler = fileURLToPath(new URL('./heap-sampler.js', import.meta.url));

async function until(path: string): Promise<void> {
  for (let i = 0; i < 600 && !existsSync(path); i++) await sleep(50);
  if (!existsSync(path)) throw new Error(`${path} never appeared: the sampler did not run`);
}

/** Bytes per review by `function file:line`, and in all. */
async function sampleOne(
  label: string,
  start: (env: Record<string, string>) => Promise<{ url: string; stop: () => Promise<void> }>,
  reviews: number,
): Promise<{ label: string; reviews: number; total: number; functions: Map<string, number> }> {
  const dir = mkdtempSync(join(tmpdir(), 'netattach-alloc-'));
  const out = join(dir, 'heap.json');
  const server = await start({ NETATTACH_HEAP_SAMPLE: out });
  const body = reviewOfSize(4 * 1024);
  const load = (amount: number) =>
    autocannon({
      url: `${server.url}/mutate?timeout=10s`,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
      connections: 32,
      amount,
    });
  await load(Math.min(5_000, reviews)); // warm: compiled code, caches filled
  writeFileSync(`${out}.start`, '');
  await until(`${out}.started`);
  const s = await load(reviews);
  writeFileSync(`${out}.stop`, '');
  await until(out);
  await sleep(200);
  await server.stop();
  const head = (JSON.parse(readFileSync(out, 'utf8')) as { head: SampleNode }).head;
  rmSync(dir, { recursive: true, force: true });
  const functions = new Map<string, number>();
  let total = 0;
  const walk = (node: SampleNode): void => {
    const f = node.callFrame;
    const name = `${f.functionName || '(anonymous)'} ${f.url.replace(/^.*\/(node_modules|dist|src)\//, '$1/')}:${f.lineNumber + 1}`;
    total += node.selfSize;
    functions.set(name, (functions.get(name) ?? 0) + node.selfSize);
    for (const c of node.children) walk(c);
  };
  walk(head);
  return { label, reviews: s['2xx'], total, functions };
}

async function main(argv: string[]): Promise<void> {
  const reviews = Number(argv.find((a) => /^\d+$/.test(a)) ?? 10_000);
  const topAt = argv.indexOf('--top');
  const top = topAt >= 0 ? Number(argv[topAt + 1]) : 30;
  const flags = [...PRODUCTION_NODE_OPTIONS.split(' '), '--import', sampler];
  const home = mkdtempSync(join(tmpdir(), 'netattach-alloc-tls-'));
  const ours = await sampleOne('netattach', (env) => startServer(home, { nodeArgs: flags, env }), reviews);
  const floor = await sampleOne('floor', (env) => startFloor(join(home, 'tls'), flags, env), reviews);
  rmSync(home, { recursive: true, force: true });
  for (const r of [ours, floor]) {
    process.stdout.write(`${r.label}: ${r.reviews} reviews, ${(r.total / r.reviews / 1024).toFixed(1)} KiB allocated per review\n`);
  }
  for (const r of [ours, floor]) {
    process.stdout.write(`\n${r.label}: top ${top} allocating functions, bytes per review\n`);
    for (const [f, bytes] of [...r.functions.entries()].sort((a, b) => b[1] - a[1]).slice(0, top))
      process.stdout.write(`${(bytes / r.reviews).toFixed(0).padStart(8)}  ${f}\n`);
  }
}

await main(process.argv.slice(2));
