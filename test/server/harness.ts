// Starts a real server on 127.0.0.1 (ports chosen by the OS) for one test, stopped on teardown.
import type { Test } from 'tap';
import { join } from 'node:path';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { StaticNadSource } from '../../src/nads/static-source.js';
import { createServer, type WebhookServer } from '../../src/server/index.js';
import type { ServerDeps, ServerOptions } from '../../src/server/types.js';
import { DEFAULT_ADMISSION_CONFIG } from '../../src/admission/types.js';
import type { Nad, NadSource } from '../../src/nads/types.js';
import { captureLogger, fakeCore, makeCerts } from './fixtures.js';

export const nad = (namespace: string, name: string): Nad => ({ namespace, name, resourceNames: [], nodeSelector: {}, problems: [] });

// One certificate set per test process, made by `netattach certs` on first use and copied into the
// directory of each server that brings no files of its own: a new CA and key cost about 0.15 s of
// CPU, and a test file starts up to 12 servers. No test of a default server needs its certificate
// to differ from another server's; the tests that rotate or compare certificates make their own.
let template: Promise<string> | undefined;
async function defaultCerts(dir: string): Promise<string> {
  template ??= (async () => {
    const d = mkdtempSync(join(tmpdir(), 'netattach-certs-template-'));
    process.once('exit', () => rmSync(d, { recursive: true, force: true }));
    await makeCerts(d);
    return d;
  })();
  const from = await template;
  for (const f of ['ca.crt', 'ca.key', 'tls.crt', 'tls.key']) copyFileSync(join(from, f), join(dir, f));
  return readFileSync(join(dir, 'ca.crt'), 'utf8');
}

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
  // Certificates from `netattach certs` (defaultCerts) in a directory of their own, unless the test brings its own files.
  const certDir = mkdtempSync(join(tmpdir(), 'netattach-certs-'));
  t.teardown(() => rmSync(certDir, { recursive: true, force: true }));
  const ca = opts.options?.tls ? (opts.ca ?? '') : await defaultCerts(certDir);
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
