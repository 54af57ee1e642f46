/**
 * `npm run bench:nri`: issue 39's table in one run. network-resources-injector v1.9.0 (the peer),
 * netattach and the stack's floor (a bare fastify HTTPS route, bench/floor-server.ts) answer the
 * same ~4 KiB review of a pod with 3 networks, in rounds, each server in turn.
 *
 * NRI reads NADs from an API server, so this runs where it can: the e2e cluster (etcd and
 * kube-apiserver, test/e2e/infra), netattach as the e2e suite runs it (cluster mode, the
 * Deployment's NODE_OPTIONS and MALLOC_ARENA_MAX), NRI as the oracle suite runs it (in-cluster
 * credentials, the same serving certificate), the floor on that certificate too. The three NADs
 * of the review are applied to the cluster (`bench/http.bench.ts`'s, each with a resourceName).
 *
 * Each server is pinned to CPU 0 (`taskset -a`: every thread, Go's too); the load generator, etcd
 * and kube-apiserver share CPU 1, so a server's own CPU per review is what is compared. NRI GETs
 * the NADs of every review from the API server (v1.9.0 has no cache): the API server's CPU in each
 * server's rounds is printed too. netattach reads its watch.
 *
 * Options (environment):
 *   BENCH_ROUNDS=5        saturation rounds per server (order rotating each round)
 *   BENCH_SECONDS=8       seconds per saturation round (32 connections)
 *   BENCH_PACED_SECONDS=15  then this long at 1,000 reviews/s per server, open loop: p50 and p99
 *   BENCH_JSON=file       also write the figures as JSON
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { cpus } from 'node:os';
import { benchNad, cpuSeconds, NAMESPACE, reviewOfSize, rssMb, saturate, startFloor } from '../../../bench/http.bench.js';
import { startE2e } from '../lib/env.js';
import { REPO } from '../lib/netattach.js';
import { Nri, nriBinary, nriOptionsFor, postJson } from '../lib/nri.js';
import { namespace as nsObj, percentile } from '../lib/objects.js';
import { deploymentEnv, pidOf } from './deployment.js';

const env = (k: string, d: string): string => process.env[k] || d;
const ROUNDS = Number(env('BENCH_ROUNDS', '5'));
const SECONDS = Number(env('BENCH_SECONDS', '8'));
const PACED_SECONDS = Number(env('BENCH_PACED_SECONDS', '15'));
const PACED_RATE = 1000;

const log = (m: string): void => void process.stderr.write(`[bench] ${m}\n`);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Pins every thread of `pid` to `cpu` (Go's runtime threads included). */
function pin(pid: number | undefined, cpu: string): void {
  if (pid === undefined || spawnSync('taskset', ['-a', '-p', '-c', cpu, String(pid)], { stdio: 'ignore' }).status !== 0)
    throw new Error(`could not pin pid ${pid} to CPU ${cpu} (taskset)`);
}

interface Target {
  label: string;
  url: string;
  pid: number | undefined;
  cpuUs: number[];
  rps: number[];
  apiserverUs: number[];
  errors: number;
  p50?: number;
  p99?: number;
  pacedAchieved?: number;
}

const median = (xs: number[]): number => percentile(xs, 50);

/**
 * An open-loop client at `rate` reviews per second, as the API server's calls arrive: each request
 * is sent when it is due, whether or not earlier ones were answered (keep-alive connections, as
 * many as are busy), and its latency is counted from when it was due, so a stall is not hidden
 * by the requests it delayed. Milliseconds, to the microsecond (autocannon's are whole ms).
 */
async function paced(
  url: string,
  body: string,
  rate: number,
  seconds: number,
  agent: https.Agent,
): Promise<{ latencies: number[]; errors: number }> {
  const total = rate * seconds;
  const latencies: number[] = [];
  let errors = 0;
  let sent = 0;
  const pending: Array<Promise<void>> = [];
  const start = performance.now();
  const send = (due: number): Promise<void> =>
    new Promise((resolve) => {
      const req = https.request(url, { method: 'POST', agent, headers: { 'content-type': 'application/json' } }, (res) => {
        res.resume();
        res.on('end', () => {
          if (res.statusCode === 200) latencies.push(performance.now() - due);
          else errors++;
          resolve();
        });
      });
      req.on('error', () => {
        errors++;
        resolve();
      });
      req.end(body);
    });
  while (sent < total) {
    const now = performance.now();
    // Every request due by now, then sleep until the next one is due (timers fire about every ms).
    while (sent < total && start + (sent * 1000) / rate <= now) {
      pending.push(send(start + (sent * 1000) / rate));
      sent++;
    }
    await sleep(Math.max(0, start + (sent * 1000) / rate - performance.now()));
  }
  await Promise.all(pending);
  return { latencies, errors };
}

async function main(): Promise<void> {
  // os.cpus(), not nproc: importing bench/http.bench.js pinned this process to CPU 1 already.
  if (cpus().length < 2) throw new Error('needs 2 CPUs: the servers on one, the load on the other');
  log('building: netattach (npm run build), network-resources-injector (infra/build-nri.sh, instant when cached)');
  const build = spawnSync('npm', ['run', '--silent', 'build'], { cwd: REPO, stdio: 'inherit' });
  if (build.status !== 0) throw new Error('npm run build failed');
  const nriBin = await nriBinary();
  const { NODE_OPTIONS: nodeOptions = '', ...deployed } = deploymentEnv();
  const arenas = deployed.MALLOC_ARENA_MAX ?? '';
  log(`starting etcd + kube-apiserver and netattach (NODE_OPTIONS=${nodeOptions}, MALLOC_ARENA_MAX=${arenas || '(unset)'})`);
  const e = await startE2e(log, {}, { nodeOptions, env: arenas ? { MALLOC_ARENA_MAX: arenas } : {} });
  let nri: Nri | undefined;
  let floor: Awaited<ReturnType<typeof startFloor>> | undefined;
  try {
    await e.applyOk([
      nsObj(NAMESPACE),
      benchNad('sriov-a', 'intel.com/sriov_a', ['ips', 'mac']),
      benchNad('sriov-b', 'intel.com/sriov_b', ['ips', 'mac']),
      benchNad('rdma-c', 'rdma/hca_shared_c', ['ips']),
      benchNad('plain', undefined, ['ips']),
    ]);
    nri = new Nri({ bin: nriBin, ...(await nriOptionsFor(e)) });
    await nri.start();
    await nri.waitReady();
    floor = await startFloor(e.tlsDir, nodeOptions.split(' ').filter(Boolean));
    const body = reviewOfSize(4 * 1024);

    // Each server must mutate the review before it is measured: the resources of the two NADs
    // with a resourceName (the floor answers its fixed patch).
    const patchOf = async (url: string): Promise<string> => {
      const answer = JSON.parse((await postJson(url, JSON.parse(body))).body) as { response?: { allowed?: boolean; patch?: string } };
      return answer.response?.patch ? Buffer.from(answer.response.patch, 'base64').toString('utf8') : '';
    };
    for (const [label, url] of [
      ['netattach', `${e.netattach.url}/mutate`],
      ['nri', `${nri.url}/mutate`],
    ] as const) {
      const injected = (patch: string): boolean => patch.includes('sriov_a') && patch.includes('sriov_b');
      let patch = '';
      for (let i = 0; i < 120 && !injected(patch); i++) {
        if (i > 0) await sleep(250);
        patch = await patchOf(url);
      }
      if (!injected(patch)) throw new Error(`${label} did not inject the review's resources: ${patch || '(no patch)'}`);
      log(`${label}'s patch: ${patch.length} bytes`);
    }

    const apiserver = pidOf('kube-apiserver', e.cluster.workDir);
    const etcd = pidOf('etcd', e.cluster.workDir);
    pin(apiserver, '1');
    pin(etcd, '1');
    const targets: Target[] = [
      { label: 'network-resources-injector v1.9.0', url: `${nri.url}/mutate`, pid: nri.pid },
      { label: 'netattach', url: `${e.netattach.url}/mutate?timeout=10s`, pid: e.netattach.pid },
      { label: 'bare fastify route (floor)', url: `${floor.url}/mutate`, pid: floor.child.pid },
    ].map((t) => ({ ...t, cpuUs: [], rps: [], apiserverUs: [], errors: 0 }));
    for (const t of targets) pin(t.pid, '0');

    log(`warm-up: 3 s each`);
    for (const t of targets) await saturate(t.url, body, 3);
    log(`saturation: ${ROUNDS} rounds × ${SECONDS} s per server, 32 connections, order rotating`);
    for (let r = 0; r < ROUNDS; r++) {
      for (let k = 0; k < targets.length; k++) {
        const t = targets[(r + k) % targets.length]!;
        const c0 = cpuSeconds(t.pid);
        const a0 = cpuSeconds(apiserver);
        const s = await saturate(t.url, body, SECONDS);
        const ok = Math.max(1, s['2xx']);
        t.cpuUs.push(((cpuSeconds(t.pid) - c0) / ok) * 1e6);
        t.apiserverUs.push(((cpuSeconds(apiserver) - a0) / ok) * 1e6);
        t.rps.push(s['2xx'] / s.duration);
        t.errors += s.errors + s.non2xx + s.timeouts;
      }
      log(
        `round ${r}: ${targets.map((t) => `${t.label.split(' ')[0]} ${t.rps.at(-1)!.toFixed(0)}/s ${t.cpuUs.at(-1)!.toFixed(0)} µs`).join(' | ')}`,
      );
    }
    log(`paced: ${PACED_SECONDS} s at ${PACED_RATE}/s per server`);
    for (const t of targets) {
      // The connections opened (TLS handshakes) in a warm-up the figures leave out, as the API
      // server keeps its connections to a webhook open.
      const agent = new https.Agent({ keepAlive: true, maxSockets: 256, rejectUnauthorized: false });
      await paced(t.url, body, PACED_RATE, 3, agent);
      const p = await paced(t.url, body, PACED_RATE, PACED_SECONDS, agent);
      agent.destroy();
      t.p50 = percentile(p.latencies, 50);
      t.p99 = percentile(p.latencies, 99);
      t.pacedAchieved = p.latencies.length / PACED_SECONDS;
      t.errors += p.errors;
    }

    // NRI's informer keeps each NAD's annotations, and takes a NAD without any (nil) for a miss:
    // a review naming one GETs it from the API server, through client-go's default rate limit
    // (5 per second, bursts of 10). Measured apart, since it is NRI's cliff, not its usual cost.
    const plainBody = reviewOfSize(4 * 1024, JSON.stringify([{ name: 'plain', interface: 'net1' }]));
    const plain: Record<string, number> = {};
    for (const t of [targets[0]!, targets[1]!]) {
      const s = await saturate(t.url, plainBody, SECONDS);
      plain[t.label] = s['2xx'] / s.duration;
      t.errors += s.errors + s.non2xx + s.timeouts;
    }

    const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
    const [peer, ours, floorT] = targets as [Target, Target, Target];
    const out: string[] = [
      '',
      `issue 39's table: ~4 KiB review, 3 networks, 32 connections; ${ROUNDS} rounds × ${SECONDS} s each (medians); servers on CPU 0, load, etcd and kube-apiserver on CPU 1; load average ${load}`,
      '',
      '| server | reviews/s | CPU/review | kube-apiserver CPU/review | p50 / p99 at 1,000/s | RSS after load |',
      '|---|---|---|---|---|---|',
      ...targets.map(
        (t) =>
          `| ${t.label} | ${median(t.rps).toFixed(0)} | ${median(t.cpuUs).toFixed(0)} µs | ${median(t.apiserverUs).toFixed(0)} µs | ${t.p50!.toFixed(2)} / ${t.p99!.toFixed(2)} ms${t.pacedAchieved! < PACED_RATE * 0.95 ? ` (reached ${t.pacedAchieved!.toFixed(0)}/s)` : ''} | ${rssMb(t.pid).rss.toFixed(0)} MB |`,
      ),
      '',
      `netattach against the floor: CPU per review ${(median(ours.cpuUs) / median(floorT.cpuUs)).toFixed(2)}× (goal ≤ 1.3×), RSS ${(rssMb(ours.pid).rss / rssMb(floorT.pid).rss).toFixed(2)}× (goal ≤ 1.1×)`,
      `netattach against NRI: throughput ${(median(ours.rps) / median(peer.rps)).toFixed(2)}× (goal ≥ 3×), p99 at 1,000/s ${ours.p99!.toFixed(2)} against ${peer.p99!.toFixed(2)} ms (goal: at or below)`,
      `a review naming a NAD without annotations: ${Object.entries(plain)
        .map(([label, rps]) => `${label} ${rps.toFixed(0)}/s`)
        .join(', ')}`,
      `errors: ${targets.map((t) => `${t.label.split(' ')[0]} ${t.errors}`).join(', ')}`,
    ];
    process.stdout.write(`${out.join('\n')}\n`);
    if (process.env.BENCH_JSON)
      writeFileSync(
        process.env.BENCH_JSON,
        JSON.stringify(
          targets.map((t) => ({ ...t, rss: rssMb(t.pid) })),
          null,
          2,
        ),
      );
  } finally {
    await nri?.stop();
    await floor?.stop();
    await e.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`[bench] failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
