// Puts the pieces together: the HTTPS admission app, the health/metrics app, certificate reload,
// the NAD source's lifecycle, readiness, and a bounded graceful shutdown.
import type { AddressInfo } from 'node:net';
import { NO_POLICY, type AddressReservations } from '../policy/index.js';
import { createMetrics, type ServerMetrics } from './metrics.js';
import { heapCheck } from './heap.js';
import { createAdmissionApp, type Drain } from './admission-app.js';
import { createHealthApp, readiness, watchCheck, type Readiness } from './health-app.js';
import { loadTlsMaterial, secureContextOptions, TlsReloader } from './tls.js';
import type { AdmissionCore, ReadinessCheck, ServerDeps, ServerOptions } from './types.js';
import type { PipelineDeps } from './pipeline.js';

const TLS_ERROR_LOG_INTERVAL_MS = 60_000;

/**
 * Calls `log` at most once per interval; the call gets how many events were not logged since the
 * last line.
 */
export function rateLimitedLog(intervalMs: number, now: () => number = Date.now): (log: (suppressed: number) => void) => void {
  let last = -Infinity;
  let suppressed = 0;
  return (log) => {
    const t = now();
    if (t - last < intervalMs) {
      suppressed++;
      return;
    }
    last = t;
    log(suppressed);
    suppressed = 0;
  };
}

/** Used when no policy asks for unique addresses: there is nothing to keep. */
const NO_RESERVATIONS: AddressReservations = { reserve: () => {} };

export interface WebhookServer {
  /** Binds both ports and starts the NAD source and certificate watching; resolves once listening. */
  listen(): Promise<{ url: string; healthUrl: string; port: number; healthPort: number }>;
  /** Drains in-flight requests (bounded by shutdownGraceMs), then stops everything. */
  close(): Promise<{ drained: boolean }>;
  readiness(): Readiness;
  metrics: ServerMetrics;
  /** Re-reads the certificate files now (also done on file events and by polling). */
  reloadTls(): Promise<boolean>;
  /** Serial of the certificate in service. */
  servingSerial(): string;
}

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

async function defaultCore(): Promise<AdmissionCore> {
  return import('../admission/index.js');
}

export async function createServer(options: ServerOptions, deps: ServerDeps): Promise<WebhookServer> {
  const { logger, nadSource } = deps;
  const loaded = await loadTlsMaterial(options.tls);
  if (!loaded.ok) throw new Error(`TLS certificate: ${loaded.error}`);
  const core = deps.core ?? (await defaultCore());
  const metrics = createMetrics(() => nadSource, deps.registry, { nads: nadSource, ...deps.watches });
  const pipeline: PipelineDeps = {
    core,
    nadSource,
    policy: deps.policy ?? NO_POLICY,
    reservations: deps.reservations ?? NO_RESERVATIONS,
    ...(deps.addressLeases ? { addressLeases: deps.addressLeases } : {}),
    config: options.admission,
    namespaceLabels: deps.namespaceLabels,
    podsUsingNad: deps.podsUsingNad,
    ...(deps.dra ? { dra: deps.dra } : {}),
    ...(deps.kubevirtBindings ? { kubevirtBindings: deps.kubevirtBindings } : {}),
    logger,
    metrics,
    enforcement: options.enforcement ?? 'enforce',
  };
  const tlsFailures = rateLimitedLog(TLS_ERROR_LOG_INTERVAL_MS);
  const drain: Drain = { draining: false, lastRequestAt: 0 };
  const app = createAdmissionApp({
    drain,
    tls: loaded.material,
    requireClientCert: options.tls.clientCaFile !== undefined,
    bodyLimit: options.bodyLimit,
    ...(options.limits ? { limits: options.limits } : {}),
    // Failed handshakes (no or a wrong client certificate, no shared cipher, scanners): counted,
    // and logged at most once a minute with how many were not logged.
    onTlsError: (err, socket) => {
      metrics.tlsHandshakeFailures.inc();
      tlsFailures((suppressed) =>
        logger.warn(
          { err: err.message.slice(0, 300), code: err.code, remote: socket.remoteAddress, notLogged: suppressed },
          'TLS handshake failed',
        ),
      );
    },
    logger,
    pipeline,
  });
  const reloader = new TlsReloader({
    files: options.tls,
    initial: loaded.material,
    apply: (m) => app.server.setSecureContext(secureContextOptions(m)),
    logger,
    metrics,
    debounceMs: options.tlsReloadDebounceMs,
    pollMs: options.tlsReloadPollMs,
  });

  let listening = false;
  let closing = false;
  let nadError: string | undefined;
  const nadsCheck = watchCheck(`NAD source (${nadSource.kind})`, nadSource);
  const heapReadiness = heapCheck();
  const checks = (): Record<string, ReadinessCheck> => ({
    listening: () => listening || 'the HTTPS port is not listening yet',
    shutdown: () => !closing || 'shutting down',
    certificates: () => {
      const { notAfter } = reloader.material.info;
      return Date.now() < notAfter.getTime() || `the serving certificate expired at ${notAfter.toISOString()}`;
    },
    nads: () => (nadSource.synced() || !nadError ? nadsCheck() : `NAD source (${nadSource.kind}) failed: ${nadError}`),
    heap: heapReadiness,
    ...deps.readiness,
  });
  const health = createHealthApp({ logger, registry: metrics.registry, checks });

  return {
    metrics,
    readiness: () => readiness(checks()),
    reloadTls: () => reloader.reload(),
    servingSerial: () => reloader.material.info.serial,

    async listen() {
      await app.listen({
        host: options.host,
        port: options.port,
        listenTextResolver: (a) => `admission webhook (HTTPS) listening at ${a.replace(/^http:/, 'https:')}`,
      });
      try {
        await health.listen({
          host: options.host,
          port: options.healthPort,
          listenTextResolver: (a) => `health and metrics (HTTP) listening at ${a}`,
        });
      } catch (err) {
        await app.close();
        throw err;
      }
      reloader.start();
      listening = true;
      nadSource.start().then(
        () => logger.info({ source: nadSource.kind, nads: nadSource.size() }, 'NAD source synced'),
        (err: unknown) => {
          nadError = message(err);
          logger.error({ source: nadSource.kind, err: nadError }, 'NAD source failed to start');
        },
      );
      for (const task of deps.background ?? []) {
        // Not awaited: readiness checks report a task that has not synced (or keeps failing).
        Promise.resolve()
          .then(() => task.start())
          .catch((err: unknown) => logger.error({ task: task.name, err: message(err) }, 'background task failed to start'));
      }
      const port = (app.server.address() as AddressInfo).port;
      const healthPort = (health.server.address() as AddressInfo).port;
      const host = options.host.includes(':') ? `[${options.host}]` : options.host;
      return { url: `https://${host}:${port}`, healthUrl: `http://${host}:${healthPort}`, port, healthPort };
    },

    async close() {
      closing = true;
      let drained = true;
      const started = Date.now();
      const grace = setTimeout(() => {
        drained = false;
        logger.warn({ graceMs: options.shutdownGraceMs }, 'grace period over; closing the remaining connections');
        app.server.closeAllConnections();
      }, options.shutdownGraceMs);
      // Closing an idle kept-alive connection races with the API server sending its next review on
      // it: that POST then ends in EOF, is not retried, and failurePolicy Fail fails the pod create
      // (seen in test/e2e/upgrade.e2e.ts). So first every answer ends its connection, and the
      // server closes idle ones (app.close()) only once no request has come for drainQuietMs:
      // those the API server no longer picks from its pool.
      drain.draining = true;
      const quietMs = options.drainQuietMs ?? 0;
      const quietBound = started + options.shutdownGraceMs / 2;
      for (
        let wait = drain.lastRequestAt + quietMs - Date.now();
        wait > 0 && Date.now() < quietBound;
        wait = drain.lastRequestAt + quietMs - Date.now()
      ) {
        await new Promise((r) => setTimeout(r, Math.min(wait, quietBound - Date.now())));
      }
      try {
        await app.close();
      } finally {
        clearTimeout(grace);
        reloader.stop();
      }
      await nadSource.stop().catch((err: unknown) => logger.warn({ err: message(err) }, 'NAD source did not stop cleanly'));
      await Promise.all(
        (deps.background ?? []).map((task) =>
          Promise.resolve()
            .then(() => task.stop())
            .catch((err: unknown) => logger.warn({ task: task.name, err: message(err) }, 'background task did not stop cleanly')),
        ),
      );
      await health.close();
      listening = false;
      return { drained };
    },
  };
}
