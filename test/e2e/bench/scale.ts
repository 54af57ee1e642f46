/**
 * `npm run bench:scale`: what netattach costs in a big cluster (issue 28). One etcd +
 * kube-apiserver (test/e2e/infra), loaded with N namespaces, M NADs and P pods (never scheduled:
 * there is no kubelet, and netattach watches pod metadata only), the four policies of the issue
 * and the PolicyReport CRD; netattach runs `serve` in cluster mode with the Deployment's settings
 * (NODE_OPTIONS, MALLOC_ARENA_MAX, its ServiceAccount's token and RBAC, the claims namespace).
 * What the pods and reviews look like: scale-model.ts.
 *
 * Reported: ready time (process start to /readyz 200), RSS (/proc) and V8 heap (/metrics) at
 * ready, after the first audit pass and at peak (sampled every 250 ms from the start), the audit
 * pass time and its findings against what was planted, idle CPU, then AdmissionReviews sent
 * straight to netattach's /mutate and /validate at a fixed rate (a pod's /validate gets the pod
 * as /mutate patched it; a pod denied at /mutate goes no further, as in the API server), some
 * colliding with a live pod's address: CPU per review, p50/p99 per endpoint, every verdict checked.
 * The same driver against a bare netattach (`serve --nads` with five NADs, no policy, no claims,
 * no audit), in alternating windows, gives the reference and the ratio.
 *
 * Environment:
 *   SCALE_NAMESPACES=200 SCALE_NADS=1000 SCALE_PODS=5000   the cluster (SCALE_DUP_PAIRS=10 twins, SCALE_SEED=1)
 *   SCALE_RATE=200            reviews per second (calls to /mutate plus /validate)
 *   SCALE_REVIEW_SECONDS=20   length of one window; SCALE_ROUNDS=2 (realistic, bare) pairs,
 *                             after SCALE_WARMUP_SECONDS=5 of reviews to each (not counted)
 *   SCALE_COLLIDE=0.1         share of review pods colliding with a live pod's address
 *   SCALE_CONNECTIONS=8       keep-alive HTTPS connections of the review driver
 *   SCALE_LOAD_CONCURRENCY=192 SCALE_LOAD_SESSIONS=4   in-flight creates over HTTP/2 sessions
 *   SCALE_AUDIT_RATE=N        netattach's --audit-rate (default: netattach's own)
 *   SCALE_NETATTACH_ARGS='...' more `serve` arguments; BENCH_NETATTACH_NODE_OPTIONS as bench:apiserver
 *   SCALE_NO_BUILD=1          use dist/ as it is;  BENCH_JSON=FILE  the figures as JSON
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import http2 from 'node:http2';
import os from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { DEFAULT_K8S_VERSION, startCluster, type Cluster } from '../infra/cluster.js';
import { freePort } from '../infra/ports.js';
import { parseManifests } from '../infra/webhook.js';
import { MAIN, Netattach, REPO, httpGet, metricSum, plainEnv } from '../lib/netattach.js';
import { cpuSeconds, drive, merge, rssMb, type DriveResult } from './scale-driver.js';
import {
  cpuPerCallUs,
  dupTarget,
  expectedIpsFindings,
  fmt,
  kibPerPod,
  namespaceObject,
  nadObject,
  peaks,
  percentile,
  podObject,
  podPlan,
  policies,
  reviewPlan,
  sampleAt,
  sizesFromEnv,
  table,
  verdictsRight,
  type Sample,
  type ScaleSizes,
} from './scale-model.js';
import { deploymentEnv } from './deployment.js';

type Obj = Record<string, unknown>;
const log = (m: string): void => void process.stderr.write(`[scale ${new Date().toISOString().slice(11, 19)}] ${m}\n`);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const envInt = (k: string, d: number): number => {
  const raw = process.env[k];
  if (raw === undefined || raw === '') return d;
  if (!/^\d+$/.test(raw) || Number(raw) < 1) throw new RangeError(`${k}: invalid value ${JSON.stringify(raw)}: a whole number, at least 1`);
  return Number(raw);
};

const SIZES = sizesFromEnv(process.env);
const RATE = envInt('SCALE_RATE', 200);
const WINDOW_S = envInt('SCALE_REVIEW_SECONDS', 20);
const ROUNDS = envInt('SCALE_ROUNDS', 2);
const WARMUP_S = envInt('SCALE_WARMUP_SECONDS', 5);
const CONNECTIONS = envInt('SCALE_CONNECTIONS', 8);
const LOAD_CONCURRENCY = envInt('SCALE_LOAD_CONCURRENCY', 192);
const LOAD_SESSIONS = envInt('SCALE_LOAD_SESSIONS', 4);
const AUDIT_RATE = process.env.SCALE_AUDIT_RATE ? envInt('SCALE_AUDIT_RATE', 1000) : undefined;

// ------------------------------------------------------------------ loading over HTTP/2

interface Loaded {
  what: string;
  count: number;
  seconds: number;
  retries: number;
}

/** POSTs over a few HTTP/2 sessions to the API server as admin, `concurrency` in flight. */
class H2Loader {
  #sessions: http2.ClientHttp2Session[] = [];
  #next = 0;
  constructor(
    private readonly cluster: Cluster,
    sessions: number,
  ) {
    for (let i = 0; i < sessions; i++) this.#sessions.push(this.#connect());
  }
  #connect(): http2.ClientHttp2Session {
    const s = http2.connect(this.cluster.server, { ca: this.cluster.caPem });
    s.on('error', () => {
      /* the request sees it */
    });
    return s;
  }
  post(p: string, body: Obj): Promise<{ status: number; body: string }> {
    const i = this.#next++ % this.#sessions.length;
    let s = this.#sessions[i]!;
    if (s.closed || s.destroyed) s = this.#sessions[i] = this.#connect();
    return new Promise((resolve, reject) => {
      const req = s.request({
        ':method': 'POST',
        ':path': p,
        authorization: `Bearer ${this.cluster.token}`,
        'content-type': 'application/json',
        accept: 'application/json',
      });
      let status = 0;
      let b = '';
      req.setEncoding('utf8');
      req.on('response', (h) => (status = Number(h[':status'])));
      req.on('data', (d: string) => (b += d));
      req.on('end', () => resolve({ status, body: b }));
      req.on('error', reject);
      req.end(JSON.stringify(body));
    });
  }
  close(): void {
    for (const s of this.#sessions) s.close();
  }

  /** Creates objects 0..count-1 (`make(i)` gives the path and body); an existing one counts as created. */
  async load(what: string, count: number, concurrency: number, make: (i: number) => { path: string; body: Obj }): Promise<Loaded> {
    const t = performance.now();
    let next = 0;
    let retries = 0;
    let done = 0;
    let lastLog = t;
    const worker = async (): Promise<void> => {
      while (next < count) {
        const i = next++;
        const { path: p, body } = make(i);
        for (let attempt = 0; ; attempt++) {
          let r: { status: number; body: string };
          try {
            r = await this.post(p, body);
          } catch (e) {
            r = { status: 0, body: (e as Error).message };
          }
          if (r.status === 201 || r.status === 409) break;
          // 429 (priority and fairness), 5xx, a namespace the admission cache does not know yet, a dropped session
          if (attempt >= 20) throw new Error(`creating ${what} ${i} (${p}): ${r.status} ${r.body.slice(0, 400)}`);
          retries++;
          await sleep(100 * (attempt + 1));
        }
        done++;
        if (performance.now() - lastLog > 10_000) {
          lastLog = performance.now();
          log(`  ${what}: ${done}/${count}, ${(done / ((lastLog - t) / 1000)).toFixed(0)}/s`);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, count) }, worker));
    return { what, count, seconds: (performance.now() - t) / 1000, retries };
  }
}

// ------------------------------------------------------------------ setup

/** Where to POST the objects of the install a netattach process needs (the rest: undefined). */
function createPath(o: Obj): string | undefined {
  const ns = (o.metadata as { namespace?: string }).namespace ?? 'netattach-system';
  switch (o.kind) {
    case 'Namespace':
      return '/api/v1/namespaces';
    case 'CustomResourceDefinition':
      return '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
    case 'ServiceAccount':
      return `/api/v1/namespaces/${ns}/serviceaccounts`;
    case 'ClusterRole':
      return '/apis/rbac.authorization.k8s.io/v1/clusterroles';
    case 'ClusterRoleBinding':
      return '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings';
    case 'Role':
      return `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/roles`;
    case 'RoleBinding':
      return `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`;
    default:
      return undefined; // Deployment, Service, PDB, PriorityClass, webhook configurations
  }
}

/** The cached servers (DEFAULT_K8S_VERSION) even while kubectl is still being built (the bench uses no kubectl). */
function binDir(): string | undefined {
  const dir =
    process.env.NETATTACH_E2E_BIN_DIR ||
    path.join(process.env.NETATTACH_E2E_CACHE || path.join(os.homedir(), '.cache', 'netattach-e2e'), DEFAULT_K8S_VERSION, 'bin');
  return existsSync(path.join(dir, 'kube-apiserver')) && existsSync(path.join(dir, 'etcd')) ? dir : undefined;
}

/** Metrics of a netattach, or undefined while it does not answer. */
async function metricsText(healthUrl: string, timeoutMs = 2000): Promise<string | undefined> {
  try {
    const r = await httpGet(`${healthUrl}/metrics`, timeoutMs);
    return r.status === 200 ? r.body : undefined;
  } catch {
    return undefined;
  }
}

/** `netattach_audit_findings` summed by rule. */
function findingsByRule(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of text.split('\n')) {
    const m = /^netattach_audit_findings\{([^}]*)\}\s+(\S+)/.exec(line);
    if (!m) continue;
    const rule = /rule="([^"]*)"/.exec(m[1]!)?.[1] ?? '?';
    out[rule] = (out[rule] ?? 0) + Number(m[2]);
  }
  return out;
}

// ------------------------------------------------------------------ main

async function main(): Promise<void> {
  const tStart = Date.now();
  const s = SIZES;
  const {
    NODE_OPTIONS: deployedNodeOptions = '',
    MALLOC_ARENA_MAX: arenas = '',
    NETATTACH_CLAIMS_NAMESPACE: claimsNs = 'netattach-claims',
  } = deploymentEnv();
  const nodeOptions = process.env.BENCH_NETATTACH_NODE_OPTIONS ?? deployedNodeOptions;
  if (!process.env.SCALE_NO_BUILD) {
    log('building netattach (npm run build)');
    if (spawnSync('npm', ['run', '--silent', 'build'], { cwd: REPO, stdio: 'inherit' }).status !== 0)
      throw new Error('npm run build failed');
  }
  log(`cluster: ${s.namespaces} namespaces, ${s.nads} NADs, ${s.pods} pods (+${s.dupPairs} twins), seed ${s.seed}`);
  const cluster = await startCluster({
    log,
    binDir: binDir(),
    startTimeoutMs: 300_000,
    // room for the load: the admin is exempt from priority and fairness, netattach is not
    apiserverFlags: ['--max-requests-inflight=2000', '--max-mutating-requests-inflight=1000'],
    // etcd keeps every revision until the apiserver compacts (every 5 min): 1 GiB is ~60,000 of
    // these pods with their create history; give it 16 KiB per object, at least the e2e's 1 GiB
    etcdQuotaBytes: Math.max(1 << 30, (s.pods + s.dupPairs + s.nads) * 16 * 1024),
  });
  let netattach: Netattach | undefined;
  let bare: ChildProcess | undefined;
  const loader = new H2Loader(cluster, LOAD_SESSIONS);
  try {
    // CRDs: NADs (as Multus installs them), netattach's base (what a process needs of it: its
    // namespaces, CRD, ServiceAccount and RBAC), PolicyReport; then the policies. Through the REST
    // API, so that the bench needs no kubectl.
    const base = (
      parse(readFileSync(path.join(REPO, 'manifests/base/kustomization.yaml'), 'utf8')) as { resources: string[] }
    ).resources.flatMap((f) => parseManifests(readFileSync(path.join(REPO, 'manifests/base', f), 'utf8')));
    const crds = [
      ...parseManifests(readFileSync(path.join(REPO, 'test/e2e/fixtures/nad-crd.yaml'), 'utf8')),
      ...parseManifests(readFileSync(path.join(REPO, 'manifests/components/policyreport-crd/crd-policyreport.yaml'), 'utf8')),
    ];
    for (const o of [...crds, ...base]) {
      const p = createPath(o);
      if (!p) continue;
      const r = await loader.post(p, o);
      if (r.status !== 201)
        throw new Error(`creating ${o.kind as string} ${(o.metadata as Obj).name as string}: ${r.status} ${r.body.slice(0, 400)}`);
    }
    for (const p of [
      '/apis/k8s.cni.cncf.io/v1/network-attachment-definitions',
      '/apis/netattach.io/v1alpha1/networkattachmentpolicies',
      '/apis/wgpolicyk8s.io/v1alpha2/policyreports',
    ]) {
      for (let i = 0; (await cluster.request('GET', p)).status !== 200; i++) {
        if (i > 240) throw new Error(`${p} not served after 60 s`);
        await sleep(250);
      }
    }
    for (const o of policies()) {
      const r = await loader.post('/apis/netattach.io/v1alpha1/networkattachmentpolicies', o);
      if (r.status !== 201) throw new Error(`creating policy ${(o.metadata as Obj).name as string}: ${r.status} ${r.body.slice(0, 400)}`);
    }

    // The load.
    const loads: Loaded[] = [];
    loads.push(
      await loader.load('namespaces', s.namespaces, LOAD_CONCURRENCY, (k) => ({ path: '/api/v1/namespaces', body: namespaceObject(k) })),
    );
    await sleep(1500); // the NamespaceLifecycle admission's informer
    loads.push(
      await loader.load('NADs', s.nads, LOAD_CONCURRENCY, (j) => {
        const o = nadObject(s, j);
        return {
          path: `/apis/k8s.cni.cncf.io/v1/namespaces/${(o.metadata as Obj).namespace as string}/network-attachment-definitions`,
          body: o,
        };
      }),
    );
    const podCount = s.pods + s.dupPairs;
    loads.push(
      await loader.load('pods', podCount, LOAD_CONCURRENCY, (i) => {
        const p = i < s.pods ? podPlan(s, i) : { ...podPlan(s, dupTarget(s, i - s.pods)), name: `dup-${i - s.pods}` };
        return { path: `/api/v1/namespaces/${p.namespace}/pods`, body: podObject(p) };
      }),
    );
    loader.close();
    for (const l of loads)
      log(`loaded ${l.count} ${l.what} in ${l.seconds.toFixed(1)} s (${(l.count / l.seconds).toFixed(0)}/s, ${l.retries} retries)`);

    // netattach, as the Deployment runs it.
    const work = path.join(cluster.workDir, 'scale');
    const tlsDir = path.join(work, 'tls');
    const saDir = path.join(work, 'serviceaccount');
    mkdirSync(saDir, { recursive: true });
    const certs = spawnSync(
      process.execPath,
      [path.join(REPO, 'dist/src/cli/main.js'), 'certs', '--out', tlsDir, '--san', '127.0.0.1', '--san', 'localhost'],
      { encoding: 'utf8' },
    );
    if (certs.status !== 0) throw new Error(`netattach certs failed: ${certs.stderr}`);
    const ca = readFileSync(path.join(tlsDir, 'ca.crt'), 'utf8');
    const tr = await cluster.request('POST', '/api/v1/namespaces/netattach-system/serviceaccounts/netattach/token', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: { expirationSeconds: 43200 },
    });
    if (tr.status !== 201) throw new Error(`a token for netattach's ServiceAccount: ${tr.status} ${tr.body.slice(0, 400)}`);
    writeFileSync(path.join(saDir, 'token'), (JSON.parse(tr.body) as { status: { token: string } }).status.token, { mode: 0o600 });
    writeFileSync(path.join(saDir, 'ca.crt'), cluster.caPem);
    writeFileSync(path.join(saDir, 'namespace'), 'netattach-system');
    const api = new URL(cluster.server);
    const [port, healthPort] = [await freePort(), await freePort()];
    netattach = new Netattach({
      inCluster: { host: api.hostname, port: api.port, serviceAccountDir: saDir },
      tlsDir,
      port,
      healthPort,
      logPath: path.join(cluster.logsDir, 'netattach.log'),
      nodeOptions,
      env: { NETATTACH_CLAIMS_NAMESPACE: claimsNs, ...(arenas ? { MALLOC_ARENA_MAX: arenas } : {}) },
      extraArgs: [
        ...(AUDIT_RATE ? [`--audit-rate=${AUDIT_RATE}`] : []),
        ...(process.env.SCALE_NETATTACH_ARGS ?? '').split(' ').filter(Boolean),
      ],
    });
    log(`starting netattach (NODE_OPTIONS=${nodeOptions || '(none)'}, MALLOC_ARENA_MAX=${arenas || '(unset)'})`);
    const t0 = Date.now();
    netattach.start();
    const pid = netattach.pid;
    const na = netattach;

    // Samples every 250 ms from the start: RSS from /proc, the heap from /metrics (when it answers in time).
    const samples: Sample[] = [];
    let sampling = true;
    let heapFromMetrics = true;
    const sampler = (async () => {
      while (sampling && na.running) {
        const t = Date.now() - t0;
        const sample: Sample = { t, rssMb: rssMb(pid) };
        if (heapFromMetrics) {
          const m = await metricsText(na.healthUrl, 1000);
          if (m) {
            sample.heapUsedMb = metricSum(m, 'nodejs_heap_size_used_bytes') / 2 ** 20;
            sample.heapTotalMb = metricSum(m, 'nodejs_heap_size_total_bytes') / 2 ** 20;
          }
        }
        samples.push(sample);
        await sleep(Math.max(0, 250 - (Date.now() - t0 - t)));
      }
    })();

    // Ready.
    let readyMs = NaN;
    for (;;) {
      if (!na.running) throw new Error(`netattach exited before it was ready\n${na.tail(40)}`);
      try {
        if ((await httpGet(`${na.healthUrl}/readyz`, 2000)).status === 200) {
          readyMs = Date.now() - t0;
          break;
        }
      } catch {
        /* not yet */
      }
      if (Date.now() - t0 > 600_000) throw new Error(`netattach not ready in 10 min\n${na.tail(40)}`);
      await sleep(100);
    }
    log(`netattach ready after ${(readyMs / 1000).toFixed(1)} s`);

    // The first audit pass: every live pod judged (the queue empty once).
    let auditMs = NaN;
    let metrics = '';
    for (;;) {
      await sleep(500);
      metrics = (await metricsText(na.healthUrl, 5000)) ?? '';
      const done = metricSum(metrics, 'netattach_audit_last_complete_timestamp_seconds');
      if (done > 0 && metricSum(metrics, 'netattach_audit_pods', { state: 'pending' }) === 0) {
        auditMs = done * 1000 - t0;
        break;
      }
      if (!na.running) throw new Error(`netattach exited\n${na.tail(40)}`);
      if (Date.now() - t0 > 1_800_000) throw new Error('the first audit pass did not end in 30 min');
    }
    const audited = metricSum(metrics, 'netattach_audit_pods', { state: 'audited' });
    log(`first audit pass done ${(auditMs / 1000).toFixed(1)} s after start (${audited} pods audited)`);
    // Reports are written after the pass; give the writer a moment, then read the findings.
    await sleep(3000);
    metrics = (await metricsText(na.healthUrl, 5000)) ?? metrics;
    const findings = findingsByRule(metrics);
    const expectedDup = 2 * s.dupPairs;
    const expectedIps = expectedIpsFindings(s);
    const afterAuditT = Date.now() - t0;

    // Idle CPU (watches, audit bookkeeping, the sampler's /metrics).
    const idle0 = cpuSeconds(pid);
    await sleep(10_000);
    const idlePct = ((cpuSeconds(pid) - idle0) / 10) * 100;

    // The bare reference: offline, five NADs of one namespace, no policy, no claims, no audit.
    const bareSizes: ScaleSizes = { ...s, namespaces: 1, nads: 5, collide: 0 };
    const nadDir = path.join(work, 'bare-nads');
    mkdirSync(nadDir, { recursive: true });
    for (let j = 0; j < bareSizes.nads; j++) writeFileSync(path.join(nadDir, `nad-${j}.json`), JSON.stringify(nadObject(bareSizes, j)));
    const [barePort, bareHealth] = [await freePort(), await freePort()];
    bare = spawn(
      process.execPath,
      [MAIN, 'serve', `--nads=${nadDir}`, `--tls-dir=${tlsDir}`, '--host=127.0.0.1', `--port=${barePort}`, `--health-port=${bareHealth}`],
      {
        cwd: REPO,
        stdio: ['ignore', 'ignore', 'inherit'],
        env: plainEnv({
          KUBECONFIG: '',
          HOME: work,
          ...(nodeOptions ? { NODE_OPTIONS: nodeOptions } : {}),
          ...(arenas ? { MALLOC_ARENA_MAX: arenas } : {}),
        }),
      },
    );
    const bareProc = bare;
    process.on('exit', () => bareProc.kill('SIGKILL'));
    for (let i = 0; ; i++) {
      try {
        if ((await httpGet(`http://127.0.0.1:${bareHealth}/readyz`, 1000)).status === 200) break;
      } catch {
        /* not yet */
      }
      if (i > 300 || bare.exitCode !== null) throw new Error('the bare netattach did not get ready');
      await sleep(200);
    }

    // Reviews: realistic and bare windows alternating; no /metrics sampling inside them.
    heapFromMetrics = false;
    let real: DriveResult | undefined;
    let ref: DriveResult | undefined;
    log(`warm-up: ${WARMUP_S} s of reviews to each`);
    const WARM_K = 10_000_000; // review pods of their own (names and addresses)
    await drive({
      url: na.url,
      ca,
      pid,
      plan: (n) => reviewPlan(s, n, 'w'),
      kFrom: WARM_K,
      seconds: WARMUP_S,
      rate: RATE,
      connections: CONNECTIONS,
    });
    await drive({
      url: `https://127.0.0.1:${barePort}`,
      ca,
      pid: bare.pid,
      plan: (n) => reviewPlan(bareSizes, n, 'w'),
      kFrom: WARM_K,
      seconds: WARMUP_S,
      rate: RATE,
      connections: CONNECTIONS,
    });
    let k = 0;
    for (let round = 0; round < ROUNDS; round++) {
      log(`round ${round + 1}/${ROUNDS}: ${WINDOW_S} s of reviews at ${RATE}/s to the realistic netattach, then to the bare one`);
      const from = k;
      const r = await drive({
        url: na.url,
        ca,
        pid,
        plan: (n) => reviewPlan(s, n),
        kFrom: from,
        seconds: WINDOW_S,
        rate: RATE,
        connections: CONNECTIONS,
      });
      k += r.pods;
      real = merge(real, r);
      await sleep(1000);
      ref = merge(
        ref,
        await drive({
          url: `https://127.0.0.1:${barePort}`,
          ca,
          pid: bare.pid,
          plan: (n) => reviewPlan(bareSizes, n, 'b'),
          kFrom: from,
          seconds: WINDOW_S,
          rate: RATE,
          connections: CONNECTIONS,
        }),
      );
      await sleep(1000);
    }
    heapFromMetrics = true;
    await sleep(1000);
    sampling = false;
    await sampler;
    const bareRss = rssMb(bare.pid);
    bare.kill('SIGTERM');

    // The report.
    const endRss = rssMb(pid);
    const atReady = sampleAt(samples, readyMs);
    const atAudit = sampleAt(samples, afterAuditT);
    const beforeReady = peaks(samples, readyMs);
    const all = peaks(samples);
    const realUs = cpuPerCallUs(real!.cpuSeconds, real!.calls);
    const refUs = cpuPerCallUs(ref!.cpuSeconds, ref!.calls);
    const runnerPeakMb = process.resourceUsage().maxRSS / 1024; // KiB, over the runner's life
    const loadavg = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
    const verdictOk =
      verdictsRight(real!.tally) &&
      verdictsRight(ref!.tally) &&
      (findings.uniqueAddresses ?? 0) === expectedDup &&
      (findings.requestedFields ?? 0) === expectedIps;
    const out: string[] = [];
    out.push(
      `\nnpm run bench:scale: ${s.namespaces} namespaces, ${s.nads} NADs, ${s.pods} pods + ${s.dupPairs} twins (seed ${s.seed}); kube-apiserver ${path.basename(path.dirname(cluster.binDir))}; load average ${loadavg}`,
    );
    out.push('');
    out.push(
      table(
        ['loaded', 'count', 's', 'per s', 'retries'],
        loads.map((l) => [l.what, l.count, l.seconds, l.count / l.seconds, l.retries]),
      ),
    );
    out.push('');
    out.push(
      `netattach (NODE_OPTIONS=${nodeOptions || 'none'}, MALLOC_ARENA_MAX=${arenas || 'unset'}): ready ${fmt(readyMs / 1000)} s, first audit pass ${fmt(auditMs / 1000)} s after start (${audited} pods), idle CPU ${fmt(idlePct)} % of a core`,
    );
    out.push('');
    out.push(
      table(
        ['memory', 'RSS MB', 'heap used MB', 'heap total MB'],
        [
          ['at ready', atReady?.rssMb ?? NaN, atReady?.heapUsedMb ?? NaN, atReady?.heapTotalMb ?? NaN],
          ['peak before ready', beforeReady.rssMb, beforeReady.heapUsedMb, ''],
          ['after the first audit pass', atAudit?.rssMb ?? NaN, atAudit?.heapUsedMb ?? NaN, atAudit?.heapTotalMb ?? NaN],
          ['after the reviews', endRss, samples.at(-1)?.heapUsedMb ?? NaN, samples.at(-1)?.heapTotalMb ?? NaN],
          ['peak (every 250 ms)', all.rssMb, all.heapUsedMb, ''],
          ['bare netattach after its reviews', bareRss, '', ''],
        ],
      ),
    );
    out.push(
      `(${samples.length} samples; RSS per live pod at ready: ${fmt(kibPerPod(bareRss, 0, atReady?.rssMb ?? NaN, s.pods + s.dupPairs))} KiB over the bare process)`,
    );
    out.push('');
    const lat = (d: DriveResult, e: 'mutate' | 'validate') => [percentile(d[e], 50), percentile(d[e], 90), percentile(d[e], 99)];
    out.push(
      table(
        ['reviews', 'calls', 'calls/s', 'CPU µs/call', '/mutate p50', 'p90', 'p99 ms', '/validate p50', 'p90', 'p99 ms', 'late'],
        [
          ['realistic', real!.calls, real!.calls / real!.seconds, realUs, ...lat(real!, 'mutate'), ...lat(real!, 'validate'), real!.late],
          ['bare', ref!.calls, ref!.calls / ref!.seconds, refUs, ...lat(ref!, 'mutate'), ...lat(ref!, 'validate'), ref!.late],
        ],
      ),
    );
    out.push(
      `CPU per review, realistic / bare: ${fmt(realUs / refUs)}x (issue 28's target: at most 2x); ${ROUNDS} alternating windows of ${WINDOW_S} s each, ${CONNECTIONS} connections`,
    );
    out.push('');
    const t = real!.tally;
    out.push(
      `verdicts: ${t.collisionsDenied}/${t.collisions} colliding pods denied, ${t.freshDenied} of ${t.fresh} other pods denied, ${t.errors} errors; bare: ${ref!.tally.freshDenied} of ${ref!.tally.fresh} denied, ${ref!.tally.errors} errors`,
    );
    out.push(
      `audit findings: uniqueAddresses ${findings.uniqueAddresses ?? 0} (planted ${expectedDup}), requestedFields (Audit, ips) ${findings.requestedFields ?? 0} (expected ${expectedIps}); all by rule: ${JSON.stringify(findings)}`,
    );
    for (const w of [...t.wrong, ...ref!.tally.wrong]) out.push(`  wrong: ${w}`);
    out.push(
      `every verdict right: ${verdictOk ? 'yes' : 'NO'}; the runner's own peak RSS ${fmt(runnerPeakMb)} MB; total ${((Date.now() - tStart) / 1000).toFixed(0)} s`,
    );
    process.stdout.write(`${out.join('\n')}\n`);
    if (process.env.BENCH_JSON) {
      const strip = (d: DriveResult) => ({ ...d, mutate: lat(d, 'mutate'), validate: lat(d, 'validate') });
      writeFileSync(
        process.env.BENCH_JSON,
        JSON.stringify(
          {
            sizes: s,
            rate: RATE,
            windowSeconds: WINDOW_S,
            rounds: ROUNDS,
            loadavg,
            loads,
            nodeOptions,
            readyMs,
            auditMs,
            audited,
            idlePct,
            atReady,
            atAudit,
            beforeReady,
            peak: all,
            endRss,
            bareRss,
            real: strip(real!),
            bare: strip(ref!),
            ratio: realUs / refUs,
            findings,
            expectedDup,
            expectedIps,
            verdictOk,
            runnerPeakMb,
            samples,
          },
          null,
          1,
        ),
      );
    }
    if (!verdictOk) process.exitCode = 1;
  } finally {
    loader.close();
    bare?.kill('SIGKILL');
    await netattach?.close();
    await cluster.stop();
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`[scale] failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exitCode = 1;
});
