// Server limits against hostile clients (issue 15), in process over real HTTPS with shortened
// timeouts. test/hostile/ replays the same attacks on a real `serve` process with the production
// limits and heap cap. The budget for answers a client does not read, seconds of waiting, is in
// test/heavy/server/limits.test.ts (npm run test:heavy).
import t from 'tap';
import tls from 'node:tls';
import https from 'node:https';
import { connect, getHttp, hostPort, podReview, request } from './fixtures.js';
import { startServer } from './harness.js';
import { internalError } from '../../src/admission/decision.js';
import { fakeCore } from './fixtures.js';
import { rateLimitedLog } from '../../src/server/server.js';

const closed = (s: tls.TLSSocket): Promise<void> => new Promise((resolve) => (s.destroyed ? resolve() : s.once('close', () => resolve())));

/** Sends headers announcing `length` bytes and `sent` of them, then waits. */
async function slowBody(url: string, ca: string, length: number, sent: number): Promise<tls.TLSSocket> {
  const s = await connect(url, ca);
  s.on('error', () => {});
  s.write(`POST /validate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`);
  s.write(Buffer.alloc(sent, 0x20));
  return s;
}

t.test('a refused request is counted under its route or "other", never under the raw path', async (t) => {
  const { url, ca, healthUrl } = await startServer(t);
  const agent = new https.Agent({ keepAlive: true, maxSockets: 4 });
  t.teardown(() => agent.destroy());
  await Promise.all(Array.from({ length: 200 }, (_, i) => request(`${url}/x${i}-${'a'.repeat(2000)}`, '{', { ca, agent })));
  await request(`${url}/validate`, '{', { ca, agent });
  const m = await getHttp(`${healthUrl}/metrics`);
  const series = m.text.split('\n').filter((l) => l.startsWith('netattach_admission_bad_requests_total{'));
  // On main: one series per path (201 lines, the 2 KB paths in them).
  t.same(series.sort(), [
    'netattach_admission_bad_requests_total{endpoint="/validate",status="400"} 1',
    'netattach_admission_bad_requests_total{endpoint="other",status="400"} 200',
  ]);
});

t.test('bodies nested too deep or holding too many arrays are refused before JSON.parse; real ones pass', async (t) => {
  const { url, ca } = await startServer(t);
  const deep = `${'['.repeat(1_000_000)}${']'.repeat(1_000_000)}`;
  const flat = `[${'[],'.repeat(1_000_000)}[]]`;
  for (const [name, body, reason] of [
    ['2,000,000 nested brackets', deep, /nested deeper than 128 levels/],
    ['1,000,000 empty arrays', flat, /more than 524288 objects and arrays/],
  ] as const) {
    const res = await request(`${url}/validate`, body, { ca });
    t.equal(res.status, 400, name);
    t.match(res.json, { code: 'NETATTACH_BODY_SHAPE', error: reason }, name);
  }
  // Brackets inside strings (escaped quotes included) are not structure.
  const review = podReview({ annotations: { note: `\\"${'['.repeat(200_000)}`, other: '{{{{' } });
  const ok = await request(`${url}/validate`, JSON.stringify(review), { ca });
  t.equal(ok.status, 200, ok.text.slice(0, 200));
  t.equal(ok.json.response.allowed, true);
});

t.test('the body limit admits the largest legal AdmissionReview: two ~1.5 MiB objects', async (t) => {
  const { url, ca } = await startServer(t);
  const review = podReview({ padding: 1_500_000 });
  review.request!.oldObject = review.request!.object;
  review.request!.operation = 'UPDATE';
  const body = JSON.stringify(review);
  t.ok(body.length > 3_000_000);
  const res = await request(`${url}/validate`, body, { ca });
  t.equal(res.status, 200);
});

t.test('past the in-flight budget the oldest unfinished bodies are cut; whole bodies are still answered', async (t) => {
  const { url, ca, healthUrl } = await startServer(t, { options: { limits: { inflightBytes: 1024 * 1024 } } });
  const slow = [];
  for (let i = 0; i < 4; i++) {
    slow.push(await slowBody(url, ca, 2 * 1024 * 1024, 400 * 1024));
    await new Promise((r) => setTimeout(r, 100)); // arrival order = age
  }
  // 4 x 400 KiB > 1 MiB: the first two are cut, the newest wait.
  await closed(slow[0]!);
  await closed(slow[1]!);
  t.notOk(slow[3]!.destroyed, 'the newest waits');
  const ok = await request(`${url}/validate`, JSON.stringify(podReview({ padding: 600 * 1024 })), { ca });
  t.equal(ok.status, 200, 'a whole body arriving at once makes room for itself');
  for (const s of slow) s.destroy();
  t.match(
    (await getHttp(`${healthUrl}/metrics`)).text,
    /netattach_admission_bad_requests_total\{endpoint="\/validate",status="503"\} [1-9]/,
  );
});

t.test('slow, silent and idle connections are closed by the limits; a keep-alive connection survives', async (t) => {
  const limits = { firstRequestMs: 600, headersTimeoutMs: 600, requestTimeoutMs: 1000, checkIntervalMs: 200, keepAliveTimeoutMs: 5000 };
  const { url, ca } = await startServer(t, { options: { limits } });
  const started = Date.now();
  const body = await slowBody(url, ca, 4 * 1024 * 1024, 1024);
  const silent = await connect(url, ca);
  silent.on('error', () => {});
  const headers = await connect(url, ca);
  headers.on('error', () => {});
  headers.write('POST /validate HTTP/1.1\r\nHost: localhost\r\n');
  await Promise.all([closed(body), closed(silent), closed(headers)]);
  // Bounds are the limits plus the check interval, with slack for a loaded machine.
  t.ok(Date.now() - started < 10_000, `closed after ${Date.now() - started} ms`);
  // A keep-alive connection idle longer than the header and first-request timeouts still serves.
  const agent = new https.Agent({ keepAlive: true, maxSockets: 1 });
  t.teardown(() => agent.destroy());
  const first = await request(`${url}/validate`, JSON.stringify(podReview()), { ca, agent });
  await new Promise((r) => setTimeout(r, 1500));
  const second = await request(`${url}/validate`, JSON.stringify(podReview()), { ca, agent });
  t.equal(first.status, 200);
  t.equal(second.status, 200);
});

t.test('connections beyond maxConnections are closed on accept', async (t) => {
  const { url, ca } = await startServer(t, { options: { limits: { maxConnections: 3 } } });
  const held = await Promise.all([connect(url, ca), connect(url, ca), connect(url, ca)]);
  await t.rejects(
    new Promise((resolve, reject) => {
      const s = tls.connect({ ...hostPort(url), ca, servername: 'localhost' }, () => resolve(s));
      s.once('error', reject);
      s.once('close', () => reject(new Error('closed')));
    }),
  );
  for (const s of held) s.destroy();
});

t.test('TLS 1.2 offers only ECDHE with AEAD; weak suites and old versions are refused', async (t) => {
  const { url, ca, logs, healthUrl } = await startServer(t);
  const v12 = { maxVersion: 'TLSv1.2' as const };
  for (const cipher of ['ECDHE-RSA-AES128-GCM-SHA256', 'ECDHE-RSA-AES256-GCM-SHA384', 'ECDHE-RSA-CHACHA20-POLY1305']) {
    const s = await connect(url, ca, { ...v12, ciphers: cipher });
    t.equal(s.getCipher().standardName !== undefined && s.getCipher().name, cipher, `${cipher} accepted`);
    s.destroy();
  }
  const tls13 = await connect(url, ca);
  t.equal(tls13.getProtocol(), 'TLSv1.3', 'TLS 1.3 with its defaults');
  tls13.destroy();
  // Node's defaults before: static RSA key exchange, CBC with SHA-1, CCM8, ARIA.
  for (const cipher of [
    'AES128-SHA',
    'AES256-GCM-SHA384',
    'ECDHE-RSA-AES128-SHA',
    'ECDHE-RSA-AES256-SHA384',
    'DHE-RSA-AES128-GCM-SHA256',
  ]) {
    await t.rejects(connect(url, ca, { ...v12, ciphers: cipher }), `${cipher} refused`);
  }
  await t.rejects(connect(url, ca, { maxVersion: 'TLSv1.1', minVersion: 'TLSv1', ciphers: 'DEFAULT@SECLEVEL=0' }), 'TLS 1.1 refused');
  // Failed handshakes are counted, and logged once (the rest are counted in the next line).
  await new Promise((r) => setTimeout(r, 100));
  const lines = logs.lines.filter((l) => l.msg === 'TLS handshake failed');
  t.equal(lines.length, 1, 'logged once, not per handshake');
  t.match((await getHttp(`${healthUrl}/metrics`)).text, /netattach_tls_handshake_failures_total [6-9]/);
});

t.test('rateLimitedLog logs once per interval and says how many it did not log', async (t) => {
  let now = 0;
  const lines: number[] = [];
  const log = rateLimitedLog(1000, () => now);
  for (const at of [0, 10, 20, 999, 1000, 1500, 2600]) {
    now = at;
    log((n) => lines.push(n));
  }
  t.same(lines, [0, 3, 1]);
});

t.test('an internal error the core caught itself is logged with the uid and counted', async (t) => {
  const { url, ca, logs, server } = await startServer(t, {
    deps: { core: { ...fakeCore, review: () => internalError(new RangeError('Maximum call stack size exceeded')) } },
  });
  const review = podReview();
  const res = await request(`${url}/validate`, JSON.stringify(review), { ca });
  t.match(res.json.response, { allowed: false, status: { code: 500 } });
  // On main: neither logged nor counted (finding 5).
  t.ok(logs.lines.some((l) => l.level === 50 && l.uid === review.request!.uid && /Maximum call stack/.test(String(l.err))));
  t.match(await server.metrics.registry.getSingleMetricAsString('netattach_admission_denials_total'), /reason="internal"\} 1/);
});

/** Sends raw HTTP on a new TLS connection; resolves with the first response's status line and when the server closes the connection. */
async function rawRequest(
  url: string,
  ca: string,
  head: string,
): Promise<{ status: Promise<string>; closed: Promise<void>; socket: tls.TLSSocket }> {
  const s = await connect(url, ca);
  s.on('error', () => {});
  let text = '';
  const status = new Promise<string>((resolve) =>
    s.on('data', (d: Buffer) => (text += String(d)) && /\r\n/.test(text) && resolve(text.split('\r\n')[0]!)),
  );
  s.write(head);
  return { status, closed: closed(s), socket: s };
}

t.test(
  'a body over the limit gets one 413 and the connection is closed, on the fast path and through fastify (issue 24, finding 7)',
  async (t) => {
    // A long request timeout: on main the fast path kept the connection until it, reading the body at the client's pace.
    const requestTimeoutMs = 20_000;
    const { url, ca } = await startServer(t, { options: { limits: { requestTimeoutMs, checkIntervalMs: 500 } } });
    const over = 4 * 1024 * 1024 + 1;
    const heads: Array<[string, string]> = [
      [
        'fast path (Content-Length)',
        `POST /validate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: ${over}\r\n\r\n`,
      ],
      [
        'fastify (a charset in the content type)',
        `POST /validate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${over}\r\n\r\n`,
      ],
    ];
    for (const [name, head] of heads) {
      const started = Date.now();
      const r = await rawRequest(url, ca, head);
      t.equal(await r.status, 'HTTP/1.1 413 Payload Too Large', `${name}: 413`);
      // The body is never sent: the connection must close on its own, long before the request timeout.
      const outcome = await Promise.race([
        r.closed.then(() => 'closed'),
        new Promise((res) => setTimeout(() => res('still open'), requestTimeoutMs / 4)),
      ]);
      t.equal(outcome, 'closed', `${name}: closed after ${Date.now() - started} ms without the body being sent`);
      r.socket.destroy();
    }
  },
);
