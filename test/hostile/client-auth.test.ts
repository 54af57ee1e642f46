// Issue 24, "a request the apiserver did not send has no lasting effect": with client certificates
// required (`--client-ca`, manifests/components/client-auth), the forged reviews of findings 1 and 4
// (Pod CREATE reviews with 1,000 MACs, sent as fast as they are refused) never reach the admission
// core. Replayed on a real `netattach serve` with the production heap cap (bench/hostile-lib.ts):
// the process stays alive and under the cap, not one forged review is counted, each refusal costs
// the server no more CPU than the handshake of a real review, and the apiserver's reviews (with
// its certificate) are answered correctly throughout. test/e2e/client-auth.e2e.ts shows the same
// through a real kube-apiserver.
import t from 'tap';
import https from 'node:https';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateCertificates } from '../../src/certs/index.js';
import { getText, post, review, serverCpuMs, startServe, validReviewAnswered, type Serve } from '../../bench/hostile-lib.js';

// A real process and a few thousand TLS handshakes on a shared machine: more than tap's default.
t.setTimeout(300_000);

/** Forged reviews, as the issue's finding 1 sent them: as fast as answered, from a few clients. */
const FORGED = 2_000;
const CONCURRENCY = 16;
/** Real reviews (new connection each, as the flood's) whose server CPU is the reference. */
const REFERENCE_REVIEWS = 60;
/** The hostile suite's memory bound: the 192 MB heap cap plus code, buffers and TLS state (docs/security.md). */
const RSS_BOUND_MB = 250;

const mac = (n: number): string =>
  `02:bb:00:${((n >> 16) & 0xff).toString(16).padStart(2, '0')}:${((n >> 8) & 0xff).toString(16).padStart(2, '0')}:${(n & 0xff).toString(16).padStart(2, '0')}`;
const forgedReview = (i: number): string =>
  review(
    {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: `ghost-${i}`,
        namespace: 'hostile',
        annotations: {
          'k8s.v1.cni.cncf.io/networks': JSON.stringify(
            Array.from({ length: 1000 }, (_, k) => ({ name: 'sriov-a', mac: mac(i * 1000 + k) })),
          ),
        },
      },
      spec: { containers: [{ name: 'c', image: 'busybox' }] },
    },
    'Pod',
    'pods',
  );

const metric = async (s: Serve, name: string): Promise<number> => {
  const text = (await getText(`${s.healthUrl}/metrics`)).text;
  return text
    .split('\n')
    .filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `))
    .reduce((sum, l) => sum + Number(l.slice(l.lastIndexOf(' ') + 1)), 0);
};

let s: Serve;
let dir: string;
let apiserver: https.Agent;
t.before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'netattach-client-auth-'));
  // The client CA and the apiserver's certificate (clientAuth), made as the e2e suite's openssl does.
  const client = generateCertificates({ service: 'kube-apiserver', namespace: 'kube-system', usage: 'client' });
  writeFileSync(join(dir, 'client-ca.crt'), client.caCert);
  s = await startServe({ extraArgs: ['--client-ca', join(dir, 'client-ca.crt')] });
  // No keep-alive: every review pays its handshake, like each forged attempt.
  apiserver = new https.Agent({ keepAlive: false, cert: client.cert, key: client.key });
});
t.teardown(async () => {
  apiserver?.destroy();
  await s?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

t.test('forged 1,000-MAC reviews without a client certificate never reach the core; the apiserver is served throughout', async (t) => {
  // Reference, same process, same run: the server CPU of a real review over a new connection.
  const warm = await validReviewAnswered(s, apiserver);
  t.ok(warm.ok, `the apiserver's review is answered: ${warm.detail}`);
  const reviewsBefore = await metric(s, 'netattach_admission_reviews_total');
  let cpu = serverCpuMs(s);
  const reference: number[] = [];
  for (let i = 0; i < REFERENCE_REVIEWS; i++) {
    const r = await validReviewAnswered(s, apiserver);
    if (!r.ok) t.fail(`reference review ${i}: ${r.detail}`);
    reference.push(r.ms);
  }
  const cpuPerReview = (serverCpuMs(s) - cpu) / REFERENCE_REVIEWS;
  t.equal(await metric(s, 'netattach_admission_reviews_total'), reviewsBefore + REFERENCE_REVIEWS, 'each reference review counted');

  // The flood, with real reviews from the apiserver alongside.
  const refusedBefore = await metric(s, 'netattach_tls_handshake_failures_total');
  const reviewsBeforeFlood = await metric(s, 'netattach_admission_reviews_total');
  const bodies = Array.from({ length: 8 }, (_, i) => forgedReview(i));
  t.ok(Buffer.byteLength(bodies[0]!) > 40_000, `a forged review is ${Buffer.byteLength(bodies[0]!)} bytes`);
  cpu = serverCpuMs(s);
  let sent = 0;
  let answered = 0;
  const errors = new Map<string, number>();
  let peakRss = 0;
  const flood = Array.from({ length: CONCURRENCY }, async () => {
    while (sent < FORGED) {
      const i = sent++;
      const a = await post(s, i % 2 ? '/mutate' : '/validate', bodies[i % bodies.length]!);
      if (a.status !== 0) answered++;
      const kind = (a.error ?? `HTTP ${a.status}`).replace(/[0-9A-F]{8,}:.*/s, '').slice(0, 60);
      errors.set(kind, (errors.get(kind) ?? 0) + 1);
      if (i % 100 === 0) peakRss = Math.max(peakRss, s.rssMb().rss);
    }
  });
  const alongside: Array<{ ok: boolean; ms: number; detail: string }> = [];
  const served = (async () => {
    while (sent < FORGED) alongside.push(await validReviewAnswered(s, apiserver));
  })();
  await Promise.all([...flood, served]);
  const floodCpu = serverCpuMs(s) - cpu;

  t.equal(answered, 0, `no forged review got an HTTP answer (${[...errors].map(([k, n]) => `${n} x ${k}`).join('; ')})`);
  t.notOk(s.exited(), 'the process is alive');
  t.ok(peakRss < RSS_BOUND_MB, `RSS during the flood ${peakRss.toFixed(0)} MB < ${RSS_BOUND_MB} MB`);
  t.equal(
    await metric(s, 'netattach_admission_reviews_total'),
    reviewsBeforeFlood + alongside.length,
    "only the apiserver's reviews were counted: no forged one reached the core",
  );
  const refused = (await metric(s, 'netattach_tls_handshake_failures_total')) - refusedBefore;
  t.equal(refused, FORGED, 'every forged attempt counted as a refused handshake');
  t.ok(
    alongside.length > 0 && alongside.every((a) => a.ok),
    `${alongside.length} reviews of the apiserver answered correctly during the flood`,
  );
  // What a refusal costs the server, against a real review over a new connection (a handshake and
  // a review). The flood's CPU also pays for the reviews alongside, counted at the reference cost.
  const cpuPerRefusal = (floodCpu - alongside.length * cpuPerReview) / FORGED;
  t.ok(
    cpuPerRefusal <= cpuPerReview * 1.5,
    `server CPU per refused attempt ${cpuPerRefusal.toFixed(2)} ms <= 1.5 x a real review's ${cpuPerReview.toFixed(2)} ms`,
  );
  const sorted = [...reference].sort((a, b) => a - b);
  const during = alongside.map((a) => a.ms).sort((a, b) => a - b);
  t.comment(
    `reference review p50 ${sorted[sorted.length >> 1]!.toFixed(1)} ms, ${cpuPerReview.toFixed(2)} ms of server CPU; during the flood p50 ${during[during.length >> 1]!.toFixed(1)} ms, max ${during[during.length - 1]!.toFixed(1)} ms; ` +
      `${FORGED} refusals in ${floodCpu} ms of server CPU (${cpuPerRefusal.toFixed(2)} ms each, the reviews alongside deducted); peak RSS ${peakRss.toFixed(0)} MB`,
  );
});
