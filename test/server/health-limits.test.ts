// The plain-HTTP port's limits (issue 37): silent connections are closed after a bound, the
// oldest silent one gives way to a new one past the cap, and a probe still answers in a flood.
import t, { type Test } from 'tap';
import net from 'node:net';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { createHealthApp, type HEALTH_LIMITS } from '../../src/server/health-app.js';

async function start(t: Test, limits: Partial<typeof HEALTH_LIMITS>) {
  const app = createHealthApp({ logger: pino({ level: 'silent' }), registry: new Registry(), checks: () => ({}), limits });
  await app.listen({ host: '127.0.0.1', port: 0 });
  t.teardown(() => app.close());
  return (app.server.address() as net.AddressInfo).port;
}

/** A connection that sends nothing; resolves its close time (ms after open) when the server closes it. */
function silent(port: number): { closed: Promise<number>; socket: net.Socket } {
  const opened = Date.now();
  const socket = net.connect(port, '127.0.0.1');
  socket.on('error', () => undefined);
  return { socket, closed: new Promise((r) => socket.once('close', () => r(Date.now() - opened))) };
}

function probe(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, '127.0.0.1', () => s.write('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'));
    let text = '';
    s.on('data', (d) => (text += d.toString()));
    s.on('end', () => resolve(text.split('\r\n')[0]!));
    s.on('error', reject);
  });
}

t.test('a connection that never sends a request is closed after firstRequestMs', async (t) => {
  const port = await start(t, { firstRequestMs: 200, checkIntervalMs: 50 });
  const { closed } = silent(port);
  const ms = await closed;
  t.ok(ms >= 150 && ms < 5_000, `closed after ${ms} ms`);
});

t.test('past maxWaiting silent connections the oldest is closed, and a probe answers', async (t) => {
  const port = await start(t, { maxWaiting: 8, firstRequestMs: 60_000 });
  const flood = Array.from({ length: 40 }, () => silent(port));
  await new Promise((r) => setTimeout(r, 200));
  t.equal(await probe(port), 'HTTP/1.1 200 OK', 'the probe answers among 40 silent connections');
  // 40 silent + 1 probe through a cap of 8: the first 32 or more were closed by the server.
  const settled = await Promise.race([
    Promise.all(flood.slice(0, 32).map((f) => f.closed)),
    new Promise((r) => setTimeout(() => r('timeout'), 5_000)),
  ]);
  t.not(settled, 'timeout', 'the 32 oldest silent connections were closed');
  for (const f of flood) f.socket.destroy();
});
