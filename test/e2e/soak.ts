/**
 * `npm run soak`: paced AdmissionReviews against netattach (a real process, in-cluster
 * credentials, behind a real kube-apiserver) while the API server is frozen (SIGSTOP), thawed,
 * then restarted. Reports per phase: reviews sent, failed (no answer, or not HTTP 200), denied
 * with 503 because a claim could not be made (answered, by design), latency, readiness and RSS.
 *
 *   npm run soak                 short: ~1.5 minutes, 100 reviews/s
 *   npm run soak -- --long       long: ~9 minutes, 300 reviews/s, 60 s frozen
 *
 * One review in ten asks for a unique GUID (a claim in the API server); the others only for a
 * network. The reviews are sent straight to /validate: no pod is created, so every claim is of a
 * pod that never came and the sweep (--claim-pending=10s) deletes it: the claim count stays flat.
 * Exits 1 if any review failed or readiness left 200 after the first sync.
 */
import https from 'node:https';
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { startE2e } from './lib/env.js';
import { httpGet } from './lib/netattach.js';
import { ibConfig, namespace, nad, percentile, policy } from './lib/objects.js';

const long = process.argv.includes('--long');
const RATE = long ? 300 : 100;
const PHASES: Array<{ name: string; seconds: number; enter?: 'freeze' | 'thaw' | 'restart' }> = long
  ? [
      { name: 'steady', seconds: 120 },
      { name: 'API server frozen (SIGSTOP)', seconds: 60, enter: 'freeze' },
      { name: 'thawed (SIGCONT)', seconds: 90, enter: 'thaw' },
      { name: 'API server restarted', seconds: 240, enter: 'restart' },
    ]
  : [
      { name: 'steady', seconds: 20 },
      { name: 'API server frozen (SIGSTOP)', seconds: 20, enter: 'freeze' },
      { name: 'thawed (SIGCONT)', seconds: 20, enter: 'thaw' },
      { name: 'API server restarted', seconds: 30, enter: 'restart' },
    ];

interface Stats {
  sent: number;
  failed: number;
  claim503: number;
  otherDenied: number;
  ms: number[];
  notReady: number;
  degraded: number;
  rss: number[];
  claims: number[];
}
const fresh = (): Stats => ({ sent: 0, failed: 0, claim503: 0, otherDenied: 0, ms: [], notReady: 0, degraded: 0, rss: [], claims: [] });

const rssMb = (pid: number | undefined): number => {
  if (!pid) return 0;
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : 0;
};

async function main(): Promise<number> {
  const log = (m: string): void => void process.stderr.write(`[soak] ${m}\n`);
  const e = await startE2e(log);
  let code = 0;
  try {
    await e.netattach.stop();
    e.netattach.options.extraArgs = ['--claim-pending=10s'];
    e.netattach.start();
    await e.netattach.waitReady();
    await e.applyOk([
      namespace('soak'),
      nad({ namespace: 'soak', name: 'ib', config: ibConfig('ib') }),
      policy('soak-fabric', {
        namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'soak' } },
        rules: { uniqueAddresses: { 'infiniband-guid': 'Cluster' } },
      }),
    ]);
    for (let i = 0; i < 100 && (await e.netattach.metric('netattach_policies_loaded', { source: 'cluster' })) < 1; i++)
      await new Promise((r) => setTimeout(r, 200));

    const agent = new https.Agent({ keepAlive: true, maxSockets: 64, ca: e.caPem });
    const url = new URL(`${e.netattach.url}/validate`);
    let n = 0;
    const review = (): string => {
      const k = ++n;
      const networks = [
        {
          name: 'ib',
          ...(k % 10 === 0
            ? {
                'infiniband-guid': `00:00:00:00:00:${((k >> 16) & 0xff).toString(16).padStart(2, '0')}:${((k >> 8) & 0xff).toString(16).padStart(2, '0')}:${(k & 0xff).toString(16).padStart(2, '0')}`,
              }
            : {}),
        },
      ];
      const pod = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: {
          name: `soak-${k}`,
          namespace: 'soak',
          uid: `uid-${k}`,
          annotations: { 'k8s.v1.cni.cncf.io/networks': JSON.stringify(networks) },
        },
        spec: { containers: [{ name: 'c', image: 'pause' }] },
      };
      return JSON.stringify({
        apiVersion: 'admission.k8s.io/v1',
        kind: 'AdmissionReview',
        request: {
          uid: `r-${k}`,
          kind: { group: '', version: 'v1', kind: 'Pod' },
          resource: { group: '', version: 'v1', resource: 'pods' },
          name: `soak-${k}`,
          namespace: 'soak',
          operation: 'CREATE',
          userInfo: { username: 'soak' },
          object: pod,
          oldObject: null,
          dryRun: false,
        },
      });
    };
    const send = (stats: Stats): void => {
      stats.sent++;
      const body = review();
      const t0 = performance.now();
      const req = https.request(
        url,
        {
          method: 'POST',
          agent,
          timeout: 10_000,
          headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8').on('data', (d: string) => (text += d));
          res.on('end', () => {
            stats.ms.push(performance.now() - t0);
            if (res.statusCode !== 200) return void stats.failed++;
            const r = (JSON.parse(text) as { response: { allowed: boolean; status?: { code?: number; message?: string } } }).response;
            if (r.allowed) return;
            if (r.status?.code === 503 && /could not be claimed/.test(r.status.message ?? '')) stats.claim503++;
            else if (r.status?.code === 500) stats.failed++;
            else stats.otherDenied++;
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', () => void stats.failed++);
      req.end(body);
    };

    const results: Array<{ name: string; stats: Stats }> = [];
    for (const phase of PHASES) {
      if (phase.enter === 'freeze') e.cluster.signalApiserver('SIGSTOP');
      if (phase.enter === 'thaw') e.cluster.signalApiserver('SIGCONT');
      const stats = fresh();
      results.push({ name: phase.name, stats });
      log(`${phase.name}: ${phase.seconds} s at ${RATE}/s`);
      const restart = phase.enter === 'restart' ? e.cluster.restartApiserver() : undefined;
      const pacer = setInterval(() => {
        for (let i = 0; i < RATE / 100; i++) send(stats);
      }, 10);
      const sampler = setInterval(() => {
        stats.rss.push(rssMb(e.netattach.pid));
        void httpGet(`${e.netattach.healthUrl}/readyz`).then(
          (r) => {
            if (r.status !== 200) stats.notReady++;
            else if ((JSON.parse(r.body) as { degraded?: string[] }).degraded?.length) stats.degraded++;
          },
          () => void stats.notReady++,
        );
        void e.netattach.metric('netattach_address_claims').then(
          (c) => void stats.claims.push(c),
          () => {},
        );
      }, 1000);
      await new Promise((r) => setTimeout(r, phase.seconds * 1000));
      clearInterval(pacer);
      clearInterval(sampler);
      await restart;
      await new Promise((r) => setTimeout(r, 2000)); // answers in flight
    }
    e.cluster.signalApiserver('SIGCONT');

    const lines = [
      `soak (${long ? 'long' : 'short'}): ${RATE} reviews/s to /validate, 10% with a unique GUID (claimed), --claim-pending=10s`,
      '| phase | reviews | failed | 503 (claim not made) | p50 / p99 ms | readiness not 200 / degraded (samples) | RSS MB min-max | claims min-max |',
      '|---|---|---|---|---|---|---|---|',
    ];
    for (const { name, stats: s } of results) {
      const range = (v: number[]): string => (v.length ? `${Math.min(...v).toFixed(0)}-${Math.max(...v).toFixed(0)}` : '-');
      lines.push(
        `| ${name} | ${s.sent} | ${s.failed} | ${s.claim503} | ${percentile(s.ms, 50).toFixed(1)} / ${percentile(s.ms, 99).toFixed(1)} | ${s.notReady} / ${s.degraded} of ${s.rss.length} | ${range(s.rss)} | ${range(s.claims)} |`,
      );
      if (s.failed > 0 || s.notReady > 0) code = 1;
    }
    const warned = /MaxListenersExceededWarning/.test(e.netattach.readLog());
    lines.push(`MaxListenersExceededWarning in the netattach log: ${warned ? 'YES' : 'no'}`);
    if (warned) code = 1;
    process.stdout.write(`${lines.join('\n')}\n`);
    agent.destroy();
  } catch (err) {
    process.stderr.write(`[soak] ${(err as Error).stack}\n${e.tails(40)}\n`);
    code = 1;
  } finally {
    e.cluster.signalApiserver('SIGCONT');
    await e.stop();
  }
  return code;
}

process.exitCode = await main();
