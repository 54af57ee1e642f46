// The plain-HTTP side: liveness, readiness and Prometheus metrics, on a port of its own so that
// probes and scrapes need no certificate and never compete with admission traffic for TLS.
import { fastify, LogController } from 'fastify';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { ReadinessCheck } from './types.js';

export interface HealthAppOptions {
  logger: Logger;
  registry: Registry;
  checks: () => Record<string, ReadinessCheck>;
}

export interface Readiness {
  ready: boolean;
  checks: Record<string, { ok: boolean; reason?: string }>;
  notReady: string[];
}

export function readiness(checks: Record<string, ReadinessCheck>): Readiness {
  const out: Readiness = { ready: true, checks: {}, notReady: [] };
  for (const [name, check] of Object.entries(checks)) {
    let r: true | string;
    try {
      r = check();
    } catch (err) {
      r = `check failed: ${err instanceof Error ? err.message : String(err)}`;
    }
    if (r === true) out.checks[name] = { ok: true };
    else {
      out.checks[name] = { ok: false, reason: r };
      out.notReady.push(name);
      out.ready = false;
    }
  }
  return out;
}

export function createHealthApp(options: HealthAppOptions) {
  const app = fastify({
    loggerInstance: options.logger,
    logController: new LogController({ disableRequestLogging: true }),
    return503OnClosing: false,
    forceCloseConnections: true,
  });
  app.get('/healthz', async () => ({ status: 'ok' }));
  app.get('/readyz', async (_request, reply) => {
    const r = readiness(options.checks());
    return reply.code(r.ready ? 200 : 503).send(r);
  });
  app.get('/metrics', async (_request, reply) => {
    const text = await options.registry.metrics();
    return reply.type(options.registry.contentType).send(text);
  });
  return app;
}
export type HealthApp = ReturnType<typeof createHealthApp>;
