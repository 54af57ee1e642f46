// A paced HTTPS client for latency figures: requests sent at a fixed rate on keep-alive
// connections, each timed in microseconds (autocannon's histogram has 1 ms resolution).
import https from 'node:https';
import { performance } from 'node:perf_hooks';
import { percentile } from './harness.js';

export function post(agent: https.Agent, url: string, body: string): Promise<{ status: number; text: string }> {
  return new Promise((res, rej) => {
    const req = https.request(
      url,
      { method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) } },
      (r) => {
        const chunks: Buffer[] = [];
        r.on('data', (c: Buffer) => chunks.push(c));
        r.on('end', () => res({ status: r.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
      },
    );
    req.on('error', rej);
    req.end(body);
  });
}

/** Sends `rate` requests per second for `seconds`, on keep-alive connections; per-request latency in µs. */
export async function paced(
  agent: https.Agent,
  url: string,
  body: string,
  rate: number,
  seconds: number,
): Promise<{ p50Us: number; p99Us: number; sent: number; failed: number; achieved: number }> {
  const latencies: number[] = [];
  let failed = 0;
  const total = rate * seconds;
  const interval = 1000 / rate;
  const start = performance.now();
  const inflight: Array<Promise<void>> = [];
  for (let i = 0; i < total; i++) {
    const due = start + i * interval;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait - 0.5));
    while (performance.now() < due) await new Promise((r) => setImmediate(r));
    const t0 = performance.now();
    inflight.push(
      post(agent, url, body).then(
        (r) => {
          if (r.status === 200) latencies.push((performance.now() - t0) * 1000);
          else failed++;
        },
        () => void failed++,
      ),
    );
    if (inflight.length > 1000) await Promise.all(inflight.splice(0, 500));
  }
  await Promise.all(inflight);
  const elapsed = (performance.now() - start) / 1000;
  latencies.sort((a, b) => a - b);
  return { p50Us: percentile(latencies, 50), p99Us: percentile(latencies, 99), sent: total, failed, achieved: total / elapsed };
}
