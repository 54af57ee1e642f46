// The plain-HTTP side: liveness, readiness and Prometheus metrics, on a port of its own so that
// probes and scrapes need no certificate and never compete with admission traffic for TLS.
import type { RequestListener, Server } from 'node:http';
import type { Socket } from 'node:net';
import { fastify, LogController } from 'fastify';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { ReadinessCheck, WatchHealth } from './types.js';
// Built-ins from process.getBuiltinModule, not `import x from 'node:x'`: an ES import of a built-in
// reads every export once, and node:http's lazy WebSocket, CloseEvent and MessageEvent then load
// undici (~1.3 MB of heap, held for good; issue 39); node:tls's rootCertificates parses the CA list.
const http = process.getBuiltinModule('node:http');

export interface HealthAppOptions {
  logger: Logger;
  registry: Registry;
  checks: () => Record<string, ReadinessCheck>;
}

export interface Readiness {
  ready: boolean;
  checks: Record<string, { ok: boolean; reason?: string; degraded?: string }>;
  notReady: string[];
  /** Checks that pass while degraded (a lost watch after the first sync): the replica answers from its caches. */
  degraded: string[];
}

export function readiness(checks: Record<string, ReadinessCheck>): Readiness {
  const out: Readiness = { ready: true, checks: {}, notReady: [], degraded: [] };
  for (const [name, check] of Object.entries(checks)) {
    let r: ReturnType<ReadinessCheck>;
    try {
      r = check();
    } catch (err) {
      r = `check failed: ${err instanceof Error ? err.message : String(err)}`;
    }
    if (r === true) out.checks[name] = { ok: true };
    else if (typeof r === 'object') {
      out.checks[name] = { ok: true, degraded: r.degraded };
      out.degraded.push(name);
    } else {
      out.checks[name] = { ok: false, reason: r };
      out.notReady.push(name);
      out.ready = false;
    }
  }
  return out;
}

/**
 * Readiness of a watched cache: not ready until its first sync; afterwards a failing watch only
 * degrades it (the cache still answers): every replica loses its watches together when the API
 * server restarts, and failing readiness then would remove every endpoint at once.
 */
export function watchCheck(what: string, source: WatchHealth, now: () => number = Date.now): ReadinessCheck {
  return () => {
    const failure = source.lastFailure?.();
    if (!source.synced()) return failure ? `${what} has not synced: ${failure.message} (retrying)` : `${what} has not synced yet`;
    const since = source.staleSince?.();
    if (since === undefined) return true;
    const age = Math.max(0, Math.round((now() - since) / 1000));
    return {
      degraded: `${what} failing since ${new Date(since).toISOString()} (stale for ${age} s): ${failure?.message ?? 'reconnecting'}; answering from the cache`,
    };
  };
}

/** `[+]name ok`, `[+]name ok (degraded: why)`, `[-]name failed: why`, then the verdict. */
export function verboseText(r: Readiness): string {
  const lines = Object.entries(r.checks).map(([name, c]) =>
    c.ok ? `[+]${name} ok${c.degraded ? ` (degraded: ${c.degraded})` : ''}` : `[-]${name} failed: ${c.reason ?? 'not ready'}`,
  );
  lines.push(
    r.ready
      ? r.degraded.length
        ? `readyz check passed (degraded: ${r.degraded.join(', ')})`
        : 'readyz check passed'
      : 'readyz check failed',
  );
  return `${lines.join('\n')}\n`;
}

/**
 * Limits of the plain-HTTP port, like the webhook port's: without them, connections that never
 * finish a request line stayed open for minutes and 20,000 of them filled the fd table, and then
 * the kubelet's liveness probe failed on a healthy replica (issue 37).
 */
export interface HealthLimits {
  /** A connection's request line and headers must arrive within this (a probe sends them at once). */
  firstRequestMs: number;
  /** Headers, and the whole request, within this. */
  requestTimeoutMs: number;
  /** Idle time between requests on a kept-alive connection (Prometheus keeps its own). */
  keepAliveTimeoutMs: number;
  /**
   * Connections that have not sent a request yet, at once. One more closes the oldest of them, not
   * the new one: a flood of silent connections cannot keep a probe out, only make itself wait less.
   */
  maxWaiting: number;
  /** All connections at once (an fd each); more are closed on accept. */
  maxConnections: number;
  checkIntervalMs: number;
}

export const HEALTH_LIMITS: HealthLimits = {
  firstRequestMs: 5_000,
  requestTimeoutMs: 10_000,
  keepAliveTimeoutMs: 10_000,
  maxWaiting: 128,
  maxConnections: 512,
  checkIntervalMs: 1_000,
};

function limitedServer(limits: HealthLimits) {
  return (handler: RequestListener): Server => {
    /** Connections without a request yet, oldest first (a Map keeps insertion order). */
    const waiting = new Map<Socket, NodeJS.Timeout>();
    const served = (socket: Socket): void => {
      const timer = waiting.get(socket);
      if (timer === undefined) return;
      clearTimeout(timer);
      waiting.delete(socket);
    };
    const server = http.createServer(
      {
        connectionsCheckingInterval: limits.checkIntervalMs,
        requestTimeout: limits.requestTimeoutMs,
        headersTimeout: limits.requestTimeoutMs,
      },
      (req, res) => {
        served(req.socket);
        handler(req, res);
      },
    );
    server.keepAliveTimeout = limits.keepAliveTimeoutMs;
    server.maxConnections = limits.maxConnections;
    server.on('connection', (socket: Socket) => {
      const timer = setTimeout(() => socket.destroy(), limits.firstRequestMs);
      timer.unref();
      waiting.set(socket, timer);
      socket.once('close', () => served(socket));
      if (waiting.size > limits.maxWaiting) {
        const oldest = waiting.keys().next().value!;
        served(oldest);
        oldest.destroy();
      }
    });
    return server;
  };
}

export function createHealthApp(options: HealthAppOptions & { limits?: Partial<HealthLimits> }) {
  const limits = { ...HEALTH_LIMITS, ...options.limits };
  const app = fastify({
    serverFactory: limitedServer(limits),
    loggerInstance: options.logger,
    logController: new LogController({ disableRequestLogging: true }),
    return503OnClosing: false,
    forceCloseConnections: true,
  });
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (request, reply) => {
    const r = readiness(options.checks());
    const code = r.ready ? 200 : 503;
    // `?verbose`: one line per check, as the kube-apiserver prints its own.
    if ((request.query as Record<string, unknown> | undefined)?.verbose !== undefined)
      return reply.code(code).type('text/plain; charset=utf-8').send(verboseText(r));
    return reply.code(code).send(r);
  });
  app.get('/metrics', async (_request, reply) => {
    const text = await options.registry.metrics();
    return reply.type(options.registry.contentType).send(text);
  });
  return app;
}
export type HealthApp = ReturnType<typeof createHealthApp>;
