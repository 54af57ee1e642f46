// Starts a real server on 127.0.0.1 (ports chosen by the OS) for one test, stopped on teardown.
import type { Test } from 'tap';
import { join } from 'node:path';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { StaticNadSource } from '../../src/nads/static-source.js';
import { createServer, type WebhookServer } from '../../src/server/index.js';
import type { ServerDeps, ServerOptions } from '../../src/server/types.js';
import { DEFAULT_ADMISSION_CONFIG } from '../../src/admission/types.js';
import type { Nad, NadSource } from '../../src/nads/types.js';
import { captureLogger, fakeCore, makeCerts } from './fixtures.js';

export const nad = (namespace: string, name: string): Nad => ({ namespace, name, resourceNames: [], nodeSelector: {}, problems: [] });

export interface Running {
  server: WebhookServer;
  url: string;
  healthUrl: string;
  ca: string;
  certDir: string;
  logs: ReturnType<typeof captureLogger>;
  nads: NadSource;
}

export async function startServer(
  t: Test,
  opts: { options?: Partial<ServerOptions>; deps?: Partial<ServerDeps>; logLevel?: 'debug' | 'info'; ca?: string } = {},
): Promise<Running> {
  // Certificates from `netattach certs` in a directory of their own, unless the test brings its own files.
  const certDir = mkdtempSync(join(tmpdir(), 'netattach-certs-'));
  t.teardown(() => rmSync(certDir, { recursive: true, force: true }));
  const ca = opts.options?.tls ? (opts.ca ?? '') : (await makeCerts(certDir)).ca;
  const logs = captureLogger(opts.logLevel ?? 'info');
  const nads = opts.deps?.nadSource ?? new StaticNadSource([nad('default', 'net-a'), nad('default', 'net-b')]);
  const server = await createServer(
    {
      host: '127.0.0.1',
      port: 0,
      healthPort: 0,
      tls: { certFile: `${certDir}/tls.crt`, keyFile: `${certDir}/tls.key` },
      bodyLimit: 4 * 1024 * 1024,
      admission: DEFAULT_ADMISSION_CONFIG,
      shutdownGraceMs: 2000,
      tlsReloadDebounceMs: 50,
      tlsReloadPollMs: 0,
      ...opts.options,
    },
    { core: fakeCore, logger: logs.logger, ...opts.deps, nadSource: nads },
  );
  const { url, healthUrl } = await server.listen();
  t.teardown(() => server.close());
  return { server, url, healthUrl, ca, certDir, logs, nads };
}
