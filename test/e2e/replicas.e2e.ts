/**
 * End-to-end: uniqueness across two replicas. Two netattach processes behind the real
 * kube-apiserver, its webhook calls spread over both by a round-robin TCP proxy (infra/proxy.ts),
 * address claims as Leases in netattach-claims under the manifests' RBAC.
 *
 *   npm run test:e2e            (this file runs after netattach.e2e.ts; see docs/e2e.md)
 */
import t from 'tap';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { freePort, isWebhookConfig, startE2e, type E2e } from './lib/env.js';
import { Netattach, eventually, httpGet } from './lib/netattach.js';
import { ibConfig, namespace, nad, percentile, pod, policy } from './lib/objects.js';
import { rewriteWebhookConfigs } from './infra/webhook.js';
import { RoundRobinProxy } from './infra/proxy.js';

type Obj = Record<string, unknown>;
const NS = 'e2e-rep';
const CLAIMS = 'netattach-claims';
const PENDING = '5s';
const LATENCY_CREATES = Number(process.env.NETATTACH_E2E_CLAIM_LATENCY_CREATES ?? 100);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

let e: E2e;
let second: Netattach;
let proxy: RoundRobinProxy;
const replicas = (): Netattach[] => [e.netattach, second];

const guid = (n: number): string =>
  `00:00:00:00:00:${((n >> 16) & 0xff).toString(16).padStart(2, '0')}:${((n >> 8) & 0xff).toString(16).padStart(2, '0')}:${(n & 0xff).toString(16).padStart(2, '0')}`;
const ibPod = (name: string, g?: string): Obj => pod(NS, name, [{ name: 'ib', ...(g ? { 'infiniband-guid': g } : {}) }]);

/** POST a pod as admin; a connection that fails is `{status: 0}` (the API server refused it). */
async function create(body: Obj): Promise<{ status: number; body: string; ms: number; at: number }> {
  const at = Date.now();
  const t0 = performance.now();
  try {
    const r = await e.cluster.request('POST', `/api/v1/namespaces/${NS}/pods`, body);
    return { ...r, ms: performance.now() - t0, at };
  } catch (err) {
    return { status: 0, body: (err as Error).message, ms: performance.now() - t0, at };
  }
}

/** The claim Leases: holder (`ns/name`) by address. */
async function claims(): Promise<Array<{ address: string; holder: string }>> {
  const r = await e.cluster.request(
    'GET',
    `/apis/coordination.k8s.io/v1/namespaces/${CLAIMS}/leases?labelSelector=netattach.io%2Faddress-claim%3Dtrue`,
  );
  const items = (JSON.parse(r.body) as { items: Array<{ metadata: { annotations: Record<string, string> } }> }).items;
  return items.map((i) => ({
    address: i.metadata.annotations['netattach.io/address']!,
    holder: i.metadata.annotations['netattach.io/holder']!,
  }));
}

async function podNames(): Promise<Set<string>> {
  const r = await e.cluster.request('GET', `/api/v1/namespaces/${NS}/pods`);
  return new Set((JSON.parse(r.body) as { items: Array<{ metadata: { name: string } }> }).items.map((p) => p.metadata.name));
}

async function reviewed(n: Netattach): Promise<number> {
  return n.metric('netattach_admission_reviews_total', { kind: 'Pod' });
}

/** Runs `jobs` with at most `width` at once. */
async function pool<T>(jobs: Array<() => Promise<T>>, width: number): Promise<T[]> {
  const out: T[] = new Array(jobs.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < jobs.length) {
        const i = next++;
        out[i] = await jobs[i]!();
      }
    }),
  );
  return out;
}

t.before(async () => {
  e = await startE2e((m) => t.comment(m));
  // Both replicas sweep claims whose pod never came after 5 s (the default is 60 s).
  await e.netattach.stop();
  e.netattach.options.extraArgs = [`--claim-pending=${PENDING}`];
  e.netattach.start();
  await e.netattach.waitReady();
  const [port, healthPort] = [await freePort(), await freePort()];
  second = new Netattach({ ...e.netattach.options, port, healthPort, logPath: path.join(e.cluster.logsDir, 'netattach-2.log') });
  second.start();
  await second.waitReady();
  proxy = new RoundRobinProxy([e.netattach.options.port, port]);
  const proxyPort = await proxy.start();
  await e.applyOk(rewriteWebhookConfigs(e.base.filter(isWebhookConfig), `https://127.0.0.1:${proxyPort}`, e.caPem) as unknown as Obj[], [
    '--force-conflicts',
  ]);
  await e.applyOk([
    namespace(NS),
    nad({ namespace: NS, name: 'ib', config: ibConfig('ib') }),
    policy('e2e-rep-fabric', {
      namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': NS } },
      rules: { uniqueAddresses: { 'infiniband-guid': 'Cluster' } },
    }),
  ]);
  // Both replicas have the policy and the NAD in force: a dry-run duplicate is denied through each.
  const holder = await create(ibPod('warm-holder', guid(0xfffff0)));
  if (holder.status !== 201) throw new Error(`warm-up pod: ${holder.status} ${holder.body}`);
  for (const n of replicas()) {
    await eventually(`policy in force in ${n.url}`, async () =>
      (await n.metric('netattach_policies_loaded', { source: 'cluster' })) >= 1 ? true : undefined,
    );
  }
  t.comment(`two replicas behind the proxy at 127.0.0.1:${proxyPort}`);
});

t.teardown(async () => {
  if (e && !t.passing()) process.stderr.write(`\n[e2e] failure: log tails\n${e.tails(80)}\n${second?.tail(80) ?? ''}\n`);
  await proxy?.stop();
  await second?.close();
  await e?.stop();
});

t.test('50 concurrent pod creates asking for one GUID across two replicas: exactly one is created', async (t) => {
  // Kept-alive connections from earlier calls may all lead to one replica: cut them, so that the
  // burst's new connections alternate.
  proxy.dropAll();
  const before = await Promise.all(replicas().map(reviewed));
  const conns = [...proxy.connections];
  const g = guid(1);
  const results = await Promise.all(Array.from({ length: 50 }, (_, i) => create(ibPod(`race-${i}`, g))));
  const created = results.map((r, i) => ({ r, i })).filter(({ r }) => r.status === 201);
  t.equal(created.length, 1, `exactly one created (${results.map((r) => r.status).join(' ')})`);
  // 403: lost (to the index or the claim); a 503 (claim not made in time on a loaded machine) is
  // a retryable denial, never an admission.
  const denied = results.filter((r) => r.status === 403);
  t.comment(
    `${denied.length} denied 403, ${results.filter((r) => r.status === 503).length} denied 503, ${results.filter((r) => ![201, 403, 503].includes(r.status)).length} other`,
  );
  t.ok(denied.length >= 40, 'the others denied as duplicates');
  t.ok(
    denied.every((r) => /GUID 00:00:00:00:00:00:00:01 is already used by pod e2e-rep\/race-\d+/.test(r.body)),
    'each denial names the holder the way messages do',
  );
  const after = await Promise.all(replicas().map(reviewed));
  t.ok(
    after[0]! > before[0]! && after[1]! > before[1]!,
    `both replicas judged some (${after[0]! - before[0]!} and ${after[1]! - before[1]!} reviews; ${proxy.connections.map((c, i) => c - conns[i]!).join(' and ')} new connections)`,
  );
  const held = (await claims()).filter((c) => c.address === g);
  t.same(held, [{ address: g, holder: `${NS}/race-${created[0]!.i}` }], 'one claim, held by the pod created');
});

t.test('a replica killed in the middle of a burst: no lost and no duplicated claim', async (t) => {
  const n = 40;
  let done = 0;
  const jobs = Array.from({ length: n }, (_, i) => async () => {
    const r = await create(ibPod(`burst-${i}`, guid(0x100 + i)));
    if (++done === 10) await second.kill();
    return r;
  });
  const results = await pool(jobs, 8);
  const statuses = results.map((r) => r.status);
  t.comment(`statuses: ${statuses.join(' ')}`);
  const created = new Set(results.flatMap((r, i) => (r.status === 201 ? [`burst-${i}`] : [])));
  t.ok(created.size >= n - 8, `${created.size} of ${n} created while a replica died (the apiserver retries a refused connection)`);
  t.same([...(await podNames())].filter((p) => p.startsWith('burst-')).sort(), [...created].sort(), 'the API server agrees');
  // Claims of creates that failed after their claim are swept once the pending bound has passed.
  const settled = await eventually(
    'one claim per created pod and none other',
    async () => {
      const held = (await claims()).filter((c) => c.holder.startsWith(`${NS}/burst-`));
      const holders = held.map((c) => c.holder.slice(NS.length + 1)).sort();
      return holders.length === created.size && holders.every((h, i) => h === [...created].sort()[i]) ? held : undefined;
    },
    60_000,
  );
  t.equal(new Set(settled.map((c) => c.address)).size, settled.length, 'no address claimed twice');
  for (const c of settled) t.equal(c.address, guid(0x100 + Number(c.holder.split('-').pop())), `${c.holder} holds its own GUID`);
  second.start();
  await second.waitReady();
});

t.test('pods deleted: their claims are released by the pod watch; the GUID is free again', async (t) => {
  await e.cluster.kubectlOk(['delete', 'pod', '-n', NS, '--wait=false', ...[...(await podNames())].filter((p) => p.startsWith('burst-'))]);
  await eventually('burst claims released', async () =>
    (await claims()).some((c) => c.holder.startsWith(`${NS}/burst-`)) ? undefined : true,
  );
  const again = await create(ibPod('reuse', guid(0x100)));
  t.equal(again.status, 201, `a released GUID is free: ${again.body.slice(0, 300)}`);
});

t.test(
  'the API server restarted during a load of pod creates: no failed review but those the API server refused; readiness stays 200',
  async (t) => {
    let loading = true;
    const readiness: string[] = [];
    const probe = (async () => {
      while (loading) {
        for (const n of replicas()) {
          const r = await httpGet(`${n.healthUrl}/readyz`).catch((err: Error) => ({ status: 0, body: err.message }));
          if (r.status !== 200) readiness.push(`${n.healthUrl}: ${r.status} ${r.body.slice(0, 200)}`);
        }
        await sleep(200);
      }
    })();
    const outcomes: Array<{ status: number; body: string; at: number }> = [];
    let i = 0;
    const load = (async () => {
      while (loading) {
        const batch = await Promise.all(
          Array.from({ length: 4 }, () => {
            const k = i++;
            return create(ibPod(`load-${k}`, k % 2 ? guid(0x10000 + k) : undefined));
          }),
        );
        outcomes.push(...batch);
        if (batch.every((b) => b.status === 0)) await sleep(200); // the API server is down: no busy loop
      }
    })();
    await sleep(3_000);
    const t0 = Date.now();
    await e.cluster.restartApiserver();
    const t1 = Date.now();
    t.comment(`kube-apiserver restarted in ${t1 - t0} ms`);
    await sleep(8_000);
    loading = false;
    await Promise.all([probe, load]);
    const byNetattach = outcomes.filter((o) => o.status !== 201 && o.status !== 0 && /netattach/.test(o.body));
    // A create the dying API server was still handling when it closed its port: netattach's claim
    // could not reach it (503, "could not be claimed ... ECONNREFUSED"), or the API server answered
    // the claim itself with its own 503 "apiserver is shutting down": the API server refused it.
    const dying = (o: { body: string; at: number }): boolean =>
      o.at >= t0 - 1_000 &&
      o.at <= t1 &&
      /could not be claimed in the API server \([^)]*(ECONNREFUSED|ECONNRESET|did not answer|HTTP 503: apiserver is shutting down)/.test(
        o.body,
      );
    const apiserverRefused = outcomes.filter((o) => o.status !== 201 && (!/netattach/.test(o.body) || dying(o)));
    t.comment(
      `${outcomes.length} creates: ${outcomes.filter((o) => o.status === 201).length} created, ${apiserverRefused.length} refused by the API server itself while it restarted (${byNetattach.filter(dying).length} of them denied 503 by netattach because the stopping API server no longer answered its claim)`,
    );
    for (const o of byNetattach) t.comment(`  ${o.at - t0} ms after the stop began: ${o.status} ${o.body.slice(0, 700)}`);
    t.same(
      byNetattach.filter((o) => !dying(o)).map((o) => `${o.status} ${o.body.slice(0, 600)}`),
      [],
      'no create failed because of netattach',
    );
    t.ok(outcomes.filter((o) => o.status === 201).length > 20, 'creates went through before and after');
    t.same(readiness, [], 'both replicas stayed ready through the restart');
    for (const n of replicas()) t.notMatch(n.readLog(), /MaxListenersExceededWarning/, `${n.url}: no listener leak warning`);
  },
);

t.test(`pod create latency with and without a claim (${LATENCY_CREATES} sequential creates each)`, async (t) => {
  const arms = { 'GUID judged unique (claim made)': [] as number[], 'same network, no address (no claim)': [] as number[] };
  for (let k = 0; k < 10; k++) await create(ibPod(`lat-warm-${k}`));
  for (let k = 0; k < LATENCY_CREATES; k++) {
    const withClaim = await create(ibPod(`lat-c-${k}`, guid(0x20000 + k)));
    const without = await create(ibPod(`lat-n-${k}`));
    if (withClaim.status !== 201 || without.status !== 201)
      throw new Error(`create failed: ${withClaim.status} ${without.status} ${withClaim.body.slice(0, 200)}`);
    arms['GUID judged unique (claim made)'].push(withClaim.ms);
    arms['same network, no address (no claim)'].push(without.ms);
  }
  t.comment('pod CREATE latency (admin HTTPS -> kube-apiserver -> proxy -> two netattach replicas, sequential):');
  for (const [name, ms] of Object.entries(arms)) {
    t.comment(`  ${name}: p50 ${percentile(ms, 50).toFixed(1)} ms, p99 ${percentile(ms, 99).toFixed(1)} ms`);
  }
  t.equal(arms['GUID judged unique (claim made)'].length, LATENCY_CREATES);
});
