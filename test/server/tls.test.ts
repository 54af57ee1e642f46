// Certificate rotation without restart (in place and through a Secret-style symlink swap),
// refusal of bad pairs, client-certificate verification and the TLS floor, over real HTTPS.
import t from 'tap';
import https from 'node:https';
import { X509Certificate } from 'node:crypto';
import { copyFileSync, mkdirSync, readFileSync, renameSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateCertificates } from '../../src/certs/index.js';
import { makeCerts, podReview, request } from './fixtures.js';
import { startServer } from './harness.js';

const serialOf = (pem: string): string => new X509Certificate(pem).serialNumber;

async function until(what: string, check: () => boolean | Promise<boolean>, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Sends reviews in a loop on fresh connections (and one kept-alive connection) until stopped. */
function load(
  url: string,
  ca: string[],
): { stop: () => Promise<{ ok: number; failed: string[]; serials: Set<string> }>; ok: () => number; serials: Set<string> } {
  let running = true;
  const failed: string[] = [];
  const serials = new Set<string>();
  let ok = 0;
  const keepAlive = new https.Agent({ keepAlive: true, maxSockets: 1 });
  const loop = async (agent: https.Agent | false) => {
    while (running) {
      try {
        const res = await request(`${url}/validate`, JSON.stringify(podReview()), { ca, agent });
        if (res.status === 200 && res.json.response.allowed === true) ok++;
        else failed.push(`status ${res.status}`);
        if (res.serial) serials.add(res.serial);
      } catch (err) {
        failed.push((err as Error).message);
      }
    }
  };
  const loops = [loop(false), loop(false), loop(false), loop(keepAlive)];
  return {
    ok: () => ok,
    serials,
    stop: async () => {
      running = false;
      await Promise.all(loops);
      keepAlive.destroy();
      return { ok, failed, serials };
    },
  };
}

t.test('rotation through a Secret-style ..data symlink swap, under load, fails no request', async (t) => {
  const dir = t.testdir();
  const v1 = join(dir, '..2024_01');
  const v2 = join(dir, '..2024_02');
  mkdirSync(v1);
  mkdirSync(v2);
  const first = await makeCerts(v1);
  copyFileSync(join(v1, 'ca.crt'), join(v2, 'ca.crt'));
  copyFileSync(join(v1, 'ca.key'), join(v2, 'ca.key'));
  const second = await makeCerts(v2);
  symlinkSync('..2024_01', join(dir, '..data'));
  symlinkSync('..data/tls.crt', join(dir, 'tls.crt'));
  symlinkSync('..data/tls.key', join(dir, 'tls.key'));

  const { url, server } = await startServer(t, {
    options: { tls: { certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key') } },
    ca: first.ca,
  });
  t.equal(server.servingSerial(), serialOf(first.cert));
  const traffic = load(url, [first.ca]);
  // Polled, not slept: traffic is flowing on the first certificate before the swap, and on the
  // second one after it, however slow the machine.
  await until('requests on the first certificate', () => traffic.ok() >= 10, 30_000);
  // What the kubelet does: a new timestamped directory, then an atomic rename of the ..data link.
  symlinkSync('..2024_02', join(dir, '..data_tmp'));
  renameSync(join(dir, '..data_tmp'), join(dir, '..data'));
  await until('the new certificate in service', () => server.servingSerial() === serialOf(second.cert));
  const beforeSwap = traffic.ok();
  await until(
    'requests on the second certificate',
    () => traffic.serials.has(serialOf(second.cert)) && traffic.ok() >= beforeSwap + 10,
    30_000,
  );
  const { ok, failed, serials } = await traffic.stop();
  t.same(failed, [], 'no failed request');
  t.ok(ok > 20, `${ok} requests during the rotation`);
  t.ok(serials.has(serialOf(first.cert)) && serials.has(serialOf(second.cert)), 'both certificates were served');
  const after = await request(`${url}/validate`, JSON.stringify(podReview()), { ca: first.ca });
  t.equal(after.serial, serialOf(second.cert), 'new connections get the new certificate');
  t.match(await server.metrics.registry.getSingleMetricAsString('netattach_tls_reloads_total'), /result="success"\} 1/);
});

t.test('rotation by rewriting the files in place, to a new CA', async (t) => {
  const { url, server, certDir, ca } = await startServer(t);
  const next = generateCertificates({ service: 'netattach', namespace: 'netattach-system', sans: ['127.0.0.1', 'localhost'] });
  const traffic = load(url, [ca, next.caCert]);
  await until('requests on the first certificate', () => traffic.ok() >= 10, 30_000);
  writeFileSync(join(certDir, 'tls.key'), next.key);
  writeFileSync(join(certDir, 'tls.crt'), next.cert);
  await until('the new certificate in service', () => server.servingSerial() === serialOf(next.cert));
  const { failed } = await traffic.stop();
  t.same(failed, []);
  const res = await request(`${url}/validate`, JSON.stringify(podReview()), { ca: next.caCert });
  t.equal(res.serial, serialOf(next.cert));
});

t.test('a bad new pair is refused: the old certificate stays in service', async (t) => {
  const { url, server, certDir, ca, logs } = await startServer(t);
  const before = server.servingSerial();
  const stranger = generateCertificates({ service: 'x', namespace: 'y' });
  const expired = generateCertificates({ service: 'netattach', namespace: 'ns', days: 1, now: new Date(Date.now() - 3 * 86_400_000) });
  const cases: Array<[string, string, string, RegExp]> = [
    [
      'key of another certificate',
      stranger.cert.replace(/x/g, 'x'),
      generateCertificates({ service: 'a', namespace: 'b' }).key,
      /does not match/,
    ],
    ['expired', expired.cert, expired.key, /expired at/],
    ['not PEM', 'hello', 'world', /does not parse/],
  ];
  let failures = 0;
  for (const [name, cert, key, why] of cases) {
    writeFileSync(join(certDir, 'tls.crt'), cert);
    writeFileSync(join(certDir, 'tls.key'), key);
    t.equal(await server.reloadTls(), false, name);
    failures++;
    t.equal(server.servingSerial(), before, `${name}: old certificate kept`);
    t.ok(
      logs.lines.some((l) => l.level === 50 && typeof l.err === 'string' && why.test(l.err)),
      `${name}: logged`,
    );
    const res = await request(`${url}/validate`, JSON.stringify(podReview()), { ca });
    t.equal(res.status, 200, `${name}: still serving`);
    t.equal(res.serial, before);
  }
  t.match(
    await server.metrics.registry.getSingleMetricAsString('netattach_tls_reloads_total'),
    new RegExp(`result="failure"\\} ${failures}`),
  );
  t.notOk(
    logs.raw.some((l) => l.includes('PRIVATE KEY')),
    'no key material in logs',
  );
});

t.test('with a client CA, only clients holding a certificate it signed get through', async (t) => {
  const clientCaDir = join(t.testdir(), 'client-ca');
  const serverCerts = join(t.testdir(), 'server');
  const clientCa = await makeCerts(clientCaDir);
  const client = generateCertificates({
    service: 'kube-apiserver',
    namespace: 'x',
    usage: 'client',
    ca: { cert: clientCa.ca, key: readFileSync(join(clientCaDir, 'ca.key'), 'utf8') },
  });
  const stranger = generateCertificates({ service: 'kube-apiserver', namespace: 'x', usage: 'client' });
  const { ca } = await makeCerts(serverCerts);
  const { url } = await startServer(t, {
    ca,
    options: {
      tls: { certFile: join(serverCerts, 'tls.crt'), keyFile: join(serverCerts, 'tls.key'), clientCaFile: join(clientCaDir, 'ca.crt') },
    },
  });
  const body = JSON.stringify(podReview());
  await t.rejects(request(`${url}/validate`, body, { ca }), 'no client certificate');
  await t.rejects(request(`${url}/validate`, body, { ca, cert: stranger.cert, key: stranger.key }), 'certificate from another CA');
  const res = await request(`${url}/validate`, body, { ca, cert: client.cert, key: client.key });
  t.equal(res.status, 200);
});

t.test('TLS below 1.2 is refused', async (t) => {
  const { url, ca } = await startServer(t);
  const old = new https.Agent({ maxVersion: 'TLSv1.1', minVersion: 'TLSv1', ca });
  await t.rejects(request(`${url}/validate`, JSON.stringify(podReview()), { ca, agent: old }));
  old.destroy();
});
