/**
 * `npm run bench:apiserver`: what a webhook costs a pod create through a real kube-apiserver.
 *
 * One etcd + kube-apiserver (the e2e cluster, test/e2e/infra), netattach installed from
 * manifests/base and running `serve` in cluster mode as the e2e suite runs it (in-cluster
 * credentials, the example NADs), and a no-op webhook pair written for the bench in Go
 * (noop-webhook/main.go, built into the e2e cache at start) that answers /mutate with the very
 * patch netattach returns for the bench pod and /validate with allowed.
 *
 * Each phase has its own namespace, labelled for its own webhook-configuration pair
 * (namespaceSelector), and all pairs are registered at once: pod creates go round-robin over the
 * namespaces (the order rotates every round), so every phase sees the same apiserver state and
 * machine load. The no-op pairs are copies of netattach's configurations from manifests/ (same
 * failurePolicy, sideEffects, timeouts, matchPolicy, reinvocation, matchConditions); only the
 * names, the URL and the extra namespace selector differ.
 *
 * Phases: `none` (no webhook), `noop` (Go, HTTP/2 as Go's server negotiates it), `noop-h1` (the
 * same binary with HTTP/2 off), `netattach`. Options (environment):
 *   BENCH_CREATES=300       sequential creates per phase (after BENCH_WARMUP=30 rounds)
 *   BENCH_PHASES=none,noop,noop-h1,netattach
 *   BENCH_LOAD_SECONDS=60   then /mutate load straight at netattach (32 connections) for RSS; 0: none
 *   BENCH_NETATTACH_NODE_OPTIONS='--max-semi-space-size=...'  node flags for netattach (default:
 *                           the Deployment's NODE_OPTIONS from manifests/base)
 *   BENCH_NETATTACH_MALLOC_ARENA_MAX=N  glibc malloc arenas (default: the Deployment's; '' for glibc's default)
 *   BENCH_NETATTACH_NODE_ARGS='--cpu-prof --cpu-prof-dir=DIR'  node arguments NODE_OPTIONS refuses
 *   BENCH_NETATTACH_ARGS='--no-pod-watch'  extra `serve` arguments (experiments)
 *   BENCH_JSON=file         also write the figures as JSON
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import autocannon from 'autocannon';
import { parseManifests, toYaml, type WebhookConfig } from '../infra/webhook.js';
import { startE2e, type E2e } from '../lib/env.js';
import { REPO } from '../lib/netattach.js';
import { namespace as nsObj, percentile } from '../lib/objects.js';
import { deploymentEnv, pidOf } from './deployment.js';

type Obj = Record<string, unknown>;
const PHASE_LABEL = 'bench.netattach.io/phase';
const ALL_PHASES = ['none', 'noop', 'noop-h1', 'netattach'] as const;
type Phase = (typeof ALL_PHASES)[number];
const NETWORK = 'default/sriov-net';
const RESOURCE = 'intel.com/sriov_netdevice';

const env = (k: string, d: string): string => process.env[k] || d;
const CREATES = Number(env('BENCH_CREATES', '300'));
const WARMUP = Number(env('BENCH_WARMUP', '30'));
const LOAD_SECONDS = Number(env('BENCH_LOAD_SECONDS', '60'));
const PHASES = env('BENCH_PHASES', ALL_PHASES.join(','))
  .split(',')
  .map((p) => p.trim()) as Phase[];
for (const p of PHASES) if (!ALL_PHASES.includes(p)) throw new Error(`BENCH_PHASES: unknown phase ${p} (have ${ALL_PHASES.join(', ')})`);

const log = (m: string): void => void process.stderr.write(`[bench] ${m}\n`);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Builds the Go no-op webhook into the e2e cache (Go's build cache makes a rebuild instant). */
function buildNoop(): string {
  const cache = process.env.NETATTACH_E2E_CACHE || path.join(os.homedir(), '.cache', 'netattach-e2e');
  const out = path.join(cache, 'bench', 'noop-webhook');
  const src = path.join(REPO, 'test/e2e/bench/noop-webhook/main.go');
  const r = spawnSync('go', ['build', '-o', out, src], {
    cwd: path.dirname(src),
    env: { ...process.env, GOTOOLCHAIN: 'local', CGO_ENABLED: '0', GOFLAGS: '' },
    encoding: 'utf8',
  });
  if (r.status !== 0)
    throw new Error(`go build of the no-op webhook failed (Go is needed, as for the e2e binaries):\n${r.stderr}${r.error ?? ''}`);
  return out;
}

interface Noop {
  child: ChildProcess;
  url: string;
  stats(): Promise<{ connections: number; requests: number; h2Requests: number }>;
}

async function startNoop(bin: string, tlsDir: string, patchFile: string, http1: boolean): Promise<Noop> {
  const child = spawn(
    bin,
    [
      '-listen',
      '127.0.0.1:0',
      '-cert',
      path.join(tlsDir, 'tls.crt'),
      '-key',
      path.join(tlsDir, 'tls.key'),
      '-patch',
      patchFile,
      ...(http1 ? ['-http1'] : []),
    ],
    {
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  process.on('exit', () => child.kill('SIGKILL'));
  const addr = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      const m = /listening (\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.on('exit', (code) => reject(new Error(`no-op webhook exited with ${code}`)));
  });
  const url = `https://${addr}`;
  const ca = readFileSync(path.join(tlsDir, 'ca.crt'));
  return {
    child,
    url,
    stats: () =>
      new Promise((resolve, reject) => {
        https
          .get(`${url}/stats`, { ca, servername: 'localhost' }, (res) => {
            let b = '';
            res.setEncoding('utf8').on('data', (d: string) => (b += d));
            res.on('end', () => resolve(JSON.parse(b) as { connections: number; requests: number; h2Requests: number }));
          })
          .on('error', reject);
      }),
  };
}

/** A copy of netattach's configurations for one phase: its namespaces only, maybe another URL. */
function forPhase(configs: WebhookConfig[], phase: Phase, url?: string): WebhookConfig[] {
  return configs.map((c) => {
    const copy = structuredClone(c);
    if (url) copy.metadata = { name: `bench-${phase}` };
    for (const wh of copy.webhooks ?? []) {
      if (url) {
        wh.name = `${phase}.${wh.name}`;
        const cc = wh.clientConfig!;
        cc.url = url + new URL(cc.url!).pathname;
      }
      const sel = (wh.namespaceSelector ?? {}) as { matchExpressions?: Obj[] };
      sel.matchExpressions = [...(sel.matchExpressions ?? []), { key: PHASE_LABEL, operator: 'In', values: [phase] }];
      wh.namespaceSelector = sel;
    }
    return copy;
  });
}

function benchPod(ns: string, name: string): Obj {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: ns, annotations: { 'k8s.v1.cni.cncf.io/networks': NETWORK } },
    spec: { containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10' }] },
  };
}

/** One keep-alive connection to the apiserver, as a controller's client would hold. */
function apiClient(e: E2e) {
  const agent = new https.Agent({ keepAlive: true, maxSockets: 1, ca: e.cluster.caPem });
  const base = new URL(e.cluster.server);
  return (method: string, p: string, body?: unknown): Promise<{ status: number; body: string }> =>
    new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const req = https.request(
        {
          host: base.hostname,
          port: base.port,
          path: p,
          method,
          agent,
          headers: {
            authorization: `Bearer ${e.cluster.token}`,
            accept: 'application/json',
            ...(payload ? { 'content-type': 'application/json' } : {}),
          },
        },
        (res) => {
          let b = '';
          res.setEncoding('utf8').on('data', (d: string) => (b += d));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: b }));
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
}

/** CPU seconds (user + system) of a process, from /proc. */
function cpuSeconds(pid: number | undefined): number {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return NaN;
  }
}

function rssMb(pid: number | undefined): { rss: number; peak: number } {
  const s = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k: string) => Number(new RegExp(`^${k}:\\s+(\\d+)`, 'm').exec(s)?.[1] ?? NaN);
  return { rss: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024 };
}

/** Established TCP connections whose local port is `port` (the server's side). */
function connectionsTo(port: number): number {
  const r = spawnSync('ss', ['-Htn', 'state', 'established', `( sport = :${port} )`], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.split('\n').filter((l) => l.trim()).length : NaN;
}

const f1 = (n: number): string => n.toFixed(2);

async function main(): Promise<void> {
  const t0 = Date.now();
  const { NODE_OPTIONS: deployedNodeOptions = '', ...deployedEnv } = deploymentEnv();
  const nodeOptions = process.env.BENCH_NETATTACH_NODE_OPTIONS ?? deployedNodeOptions;
  // BENCH_NETATTACH_MALLOC_ARENA_MAX='' leaves glibc's default
  const arenas = process.env.BENCH_NETATTACH_MALLOC_ARENA_MAX ?? deployedEnv.MALLOC_ARENA_MAX ?? '';
  log(`building: netattach (npm run build), the Go no-op webhook`);
  const build = spawnSync('npm', ['run', '--silent', 'build'], { cwd: REPO, stdio: 'inherit' });
  if (build.status !== 0) throw new Error('npm run build failed');
  const noopBin = buildNoop();
  log(`starting etcd + kube-apiserver and netattach (NODE_OPTIONS=${nodeOptions || '(none)'}, MALLOC_ARENA_MAX=${arenas || '(unset)'})`);
  const nodeArgs = (process.env.BENCH_NETATTACH_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const extraArgs = (process.env.BENCH_NETATTACH_ARGS ?? '').split(' ').filter(Boolean);
  const e = await startE2e(log, {}, { nodeOptions, nodeArgs, extraArgs, env: arenas ? { MALLOC_ARENA_MAX: arenas } : {} });
  const noops: Noop[] = [];
  try {
    const api = apiClient(e);
    const ok = async (method: string, p: string, body?: unknown): Promise<Obj> => {
      const r = await api(method, p, body);
      if (r.status >= 300) throw new Error(`${method} ${p}: ${r.status} ${r.body.slice(0, 500)}`);
      return JSON.parse(r.body) as Obj;
    };

    // The example NADs, then one namespace per phase.
    const nads = readdirSync(path.join(REPO, 'examples/nads')).filter((f) => f.endsWith('.yaml'));
    await e.applyOk(nads.flatMap((f) => parseManifests(readFileSync(path.join(REPO, 'examples/nads', f), 'utf8'))));
    const ns = (p: Phase) => `bench-${p}`;
    await e.applyOk(PHASES.map((p) => nsObj(ns(p), { [PHASE_LABEL]: p })));

    // netattach's patch for the bench pod, as the apiserver would send it (defaulted by a dry run
    // in a namespace no webhook is called for).
    await e.applyOk(nsObj('bench-probe', { 'netattach.io/admission': 'disabled' }));
    const dry = await ok('POST', `/api/v1/namespaces/bench-probe/pods?dryRun=All`, benchPod('bench-probe', 'probe'));
    (dry.metadata as Obj).namespace = ns('netattach');
    // What the apiserver sends for a Pod CREATE (admission.k8s.io/v1), the defaulted pod inside.
    const podKind = { group: '', version: 'v1', kind: 'Pod' };
    const podResource = { group: '', version: 'v1', resource: 'pods' };
    const request = {
      uid: '00000000-0000-0000-0000-000000000001',
      ...{ kind: podKind, resource: podResource, requestKind: podKind, requestResource: podResource },
      ...{ name: 'probe', namespace: ns('netattach'), operation: 'CREATE', object: dry, oldObject: null, dryRun: true },
      userInfo: { username: 'admin', groups: ['system:masters', 'system:authenticated'] },
      options: { apiVersion: 'meta.k8s.io/v1', kind: 'CreateOptions' },
    };
    const review = { apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request };
    const callMutate = () =>
      new Promise<Obj>((resolve, reject) => {
        const req = https.request(
          `${e.netattach.url}/mutate`,
          { method: 'POST', ca: e.caPem, servername: 'localhost', headers: { 'content-type': 'application/json' } },
          (res) => {
            let b = '';
            res.setEncoding('utf8').on('data', (d: string) => (b += d));
            res.on('end', () => resolve(JSON.parse(b) as Obj));
          },
        );
        req.on('error', reject);
        req.end(JSON.stringify(review));
      });
    // The NADs just applied reach netattach through its watch: poll until it knows sriov-net.
    let resp: { allowed: boolean; patch?: string } = { allowed: false };
    for (let i = 0; i < 120 && !resp.patch; i++) {
      if (i > 0) await sleep(250);
      resp = (await callMutate()).response as typeof resp;
    }
    if (!resp.allowed || !resp.patch) throw new Error(`netattach did not mutate the bench pod: ${JSON.stringify(resp)}`);
    const patch = Buffer.from(resp.patch, 'base64').toString('utf8');
    const patchFile = path.join(e.cluster.workDir, 'bench-patch.json');
    writeFileSync(patchFile, patch);
    log(`netattach's patch for the bench pod (${(JSON.parse(patch) as unknown[]).length} operations, ${patch.length} bytes): ${patch}`);

    // Every pair registered at once; netattach's own configurations narrowed to its namespace.
    const configs: WebhookConfig[] = forPhase(e.webhooks, 'netattach');
    const noopOf: Partial<Record<Phase, Noop>> = {};
    for (const p of PHASES) {
      if (p !== 'noop' && p !== 'noop-h1') continue;
      const n = await startNoop(noopBin, e.tlsDir, patchFile, p === 'noop-h1');
      noops.push(n);
      noopOf[p] = n;
      configs.push(...forPhase(e.webhooks, p, n.url));
    }
    await e.cluster.kubectlOk(['apply', '--server-side', '--force-conflicts', '--field-manager=netattach-bench', '-f', '-'], {
      input: toYaml(configs),
    });

    let round = 0;
    const createIn = async (p: Phase): Promise<{ ms: number; mutated: boolean }> => {
      const body = benchPod(ns(p), `p-${round}`);
      const t = performance.now();
      const r = await api('POST', `/api/v1/namespaces/${ns(p)}/pods`, body);
      const ms = performance.now() - t;
      if (r.status !== 201) throw new Error(`create in ${ns(p)}: ${r.status} ${r.body.slice(0, 500)}`);
      const created = JSON.parse(r.body) as { spec: { containers: Array<{ resources?: { requests?: Record<string, string> } }> } };
      return { ms, mutated: created.spec.containers[0]?.resources?.requests?.[RESOURCE] !== undefined };
    };
    // Until every pair is seen acting (configuration changes reach the admission chain within ~1 s).
    for (let i = 0; ; i++) {
      round = -1 - i;
      const seen = await Promise.all(PHASES.map(async (p) => (await createIn(p)).mutated === (p !== 'none')));
      await Promise.all(PHASES.map((p) => api('DELETE', `/api/v1/namespaces/${ns(p)}/pods/p-${round}`)));
      if (seen.every(Boolean)) break;
      if (i > 60) throw new Error('the webhook configurations were not in effect after 60 attempts');
      await sleep(500);
    }

    const ms: Record<string, number[]> = Object.fromEntries(PHASES.map((p) => [p, []]));
    const pids = {
      netattach: e.netattach.pid,
      apiserver: pidOf('kube-apiserver', e.cluster.workDir),
      etcd: pidOf('etcd', e.cluster.workDir),
      noop: noopOf.noop?.child.pid,
      'noop-h1': noopOf['noop-h1']?.child.pid,
    };
    const port = Number(new URL(e.netattach.url).port);
    const rssReady = rssMb(pids.netattach);
    log(`warm-up: ${WARMUP} rounds`);
    for (round = 0; round < WARMUP; round++) for (const p of PHASES) await createIn(p);
    const cpu0 = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuSeconds(pid)]));
    const stats0 = await Promise.all(noops.map((n) => n.stats()));
    const conns0 = connectionsTo(port);
    const wall0 = performance.now();
    log(`measuring: ${CREATES} sequential creates per phase, round-robin over ${PHASES.join(', ')}`);
    const wrong: string[] = [];
    for (let i = 0; i < CREATES; i++, round++) {
      // rotate the order so that no phase always follows another
      for (let k = 0; k < PHASES.length; k++) {
        const p = PHASES[(i + k) % PHASES.length]!;
        const r = await createIn(p);
        ms[p]!.push(r.ms);
        if (r.mutated !== (p !== 'none')) wrong.push(`${p}#${i}`);
      }
    }
    const wallS = (performance.now() - wall0) / 1000;
    const cpu1 = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, cpuSeconds(pid)]));
    const stats1 = await Promise.all(noops.map((n) => n.stats()));
    const conns1 = connectionsTo(port);
    const rssAfterCreates = rssMb(pids.netattach);
    const netattachCalls = await e.netattach.metric('netattach_admission_reviews_total');
    if (wrong.length > 0) throw new Error(`pods not mutated as expected: ${wrong.slice(0, 10).join(', ')}`);

    // What netattach spends on pods it is not called for (its pod and namespace watches, the
    // audit): creates in the no-webhook namespace alone.
    let watchUs: number | undefined;
    if (PHASES.includes('netattach') && PHASES.includes('none')) {
      const c0 = cpuSeconds(pids.netattach);
      for (let i = 0; i < CREATES; i++, round++) await createIn('none');
      await sleep(500);
      watchUs = ((cpuSeconds(pids.netattach) - c0) * 1e6) / CREATES;
    }

    // Footprint: a minute of /mutate load straight at netattach (the bench pod's review).
    let load: { seconds: number; rps: number; rss: number; peak: number; cpuUs: number; p50: number; p99: number } | undefined;
    if (LOAD_SECONDS > 0) {
      log(`load: ${LOAD_SECONDS} s of /mutate at netattach, 32 connections`);
      const c0 = cpuSeconds(pids.netattach);
      const r = await autocannon({
        url: `${e.netattach.url}/mutate`,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ ...review, request: { ...review.request, dryRun: false } }),
        connections: 32,
        duration: LOAD_SECONDS,
        // the bench's own CA: autocannon takes node's TLS options
        tlsOptions: { ca: e.caPem, servername: 'localhost' },
      } as autocannon.Options);
      const after = rssMb(pids.netattach);
      load = {
        seconds: LOAD_SECONDS,
        rps: r.requests.average,
        ...after,
        cpuUs: ((cpuSeconds(pids.netattach) - c0) * 1e6) / Math.max(1, r['2xx']),
        p50: r.latency.p50,
        p99: r.latency.p99,
      };
      if (r.non2xx > 0 || r.errors > 0) log(`load: ${r.non2xx} non-2xx, ${r.errors} errors`);
    }

    // Report.
    const uptime = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
    const row = (p: Phase) => ({
      p50: percentile(ms[p]!, 50),
      p90: percentile(ms[p]!, 90),
      p99: percentile(ms[p]!, 99),
      mean: ms[p]!.reduce((a, b) => a + b, 0) / ms[p]!.length,
    });
    const rows = Object.fromEntries(PHASES.map((p) => [p, row(p)]));
    const out: string[] = [];
    out.push(
      `\npod create through kube-apiserver ${e.cluster.binDir.split('/').slice(-2, -1)[0] ?? ''}: ${CREATES} sequential creates per phase (after ${WARMUP} warm-up rounds), phases interleaved; load average ${uptime}; ${wallS.toFixed(1)} s`,
    );
    out.push('| phase | p50 ms | p90 ms | p99 ms | mean ms |');
    out.push('|---|---|---|---|---|');
    for (const p of PHASES) out.push(`| ${p} | ${f1(rows[p]!.p50)} | ${f1(rows[p]!.p90)} | ${f1(rows[p]!.p99)} | ${f1(rows[p]!.mean)} |`);
    const diff = (a: Phase, b: Phase) =>
      rows[a] && rows[b]
        ? `| ${a} − ${b} | ${f1(rows[a]!.p50 - rows[b]!.p50)} | ${f1(rows[a]!.p90 - rows[b]!.p90)} | ${f1(rows[a]!.p99 - rows[b]!.p99)} | ${f1(rows[a]!.mean - rows[b]!.mean)} |`
        : undefined;
    for (const d of [
      diff('netattach', 'noop'),
      diff('netattach', 'noop-h1'),
      diff('noop-h1', 'noop'),
      diff('noop', 'none'),
      diff('netattach', 'none'),
    ])
      if (d) out.push(d);
    const per = (k: string, calls: number) => (((cpu1[k]! - cpu0[k]!) * 1e6) / calls).toFixed(0);
    out.push('');
    out.push(
      `CPU over the measured creates (${PHASES.length * CREATES} creates): kube-apiserver ${per('apiserver', PHASES.length * CREATES)} µs/create, etcd ${per('etcd', PHASES.length * CREATES)} µs/create` +
        (PHASES.includes('netattach')
          ? `, netattach ${per('netattach', CREATES)} µs per create in its phase (2 calls; includes its pod/NAD watch events for all ${PHASES.length * CREATES} creates)`
          : '') +
        noops
          .map(
            (_n, i) =>
              `, ${PHASES.filter((p) => p.startsWith('noop'))[i]} ${per(PHASES.filter((p) => p.startsWith('noop'))[i]!, CREATES)} µs`,
          )
          .join(''),
    );
    noops.forEach((_n, i) => {
      const name = PHASES.filter((p) => p.startsWith('noop'))[i];
      out.push(
        `${name}: ${stats1[i]!.connections - stats0[i]!.connections} new TLS connections for ${stats1[i]!.requests - stats0[i]!.requests} requests (${stats1[i]!.h2Requests - stats0[i]!.h2Requests} over HTTP/2)`,
      );
    });
    if (watchUs !== undefined)
      out.push(
        `netattach CPU per pod created where no webhook is called (watch events, audit): ${watchUs.toFixed(0)} µs (${CREATES} creates in ${ns('none')} alone)`,
      );
    if (PHASES.includes('netattach'))
      out.push(
        `netattach: established connections from the apiserver ${conns0} before, ${conns1} after (${netattachCalls} reviews in all)`,
      );
    out.push(
      `netattach RSS (NODE_OPTIONS=${nodeOptions || 'none'}, MALLOC_ARENA_MAX=${arenas || 'unset'}): ready ${rssReady.rss.toFixed(0)} MB; after the creates ${rssAfterCreates.rss.toFixed(0)} MB` +
        (load
          ? `; after ${load.seconds} s of /mutate load (${load.rps.toFixed(0)}/s, ${load.cpuUs.toFixed(0)} µs CPU per review, p50 ${load.p50} ms, p99 ${load.p99} ms, 32 connections) ${load.rss.toFixed(0)} MB, peak ${load.peak.toFixed(0)} MB`
          : ''),
    );
    out.push(`total ${((Date.now() - t0) / 1000).toFixed(0)} s`);
    process.stdout.write(`${out.join('\n')}\n`);
    if (process.env.BENCH_JSON)
      writeFileSync(
        process.env.BENCH_JSON,
        JSON.stringify(
          {
            loadavg: uptime,
            creates: CREATES,
            rows,
            cpu0,
            cpu1,
            stats0,
            stats1,
            conns0,
            conns1,
            rssReady,
            rssAfterCreates,
            load,
            nodeOptions,
          },
          null,
          2,
        ),
      );
    for (const p of PHASES) await api('DELETE', `/api/v1/namespaces/${ns(p)}/pods`);
  } finally {
    for (const n of noops) n.child.kill('SIGTERM');
    await e.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`[bench] failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
