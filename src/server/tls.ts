// Serving certificate material: read and checked from files, then kept current by watching the
// files and their directories (a Secret volume swaps its `..data` symlink atomically, which only
// the directory sees). A bad new pair never replaces a good one.
import { readFile } from 'node:fs/promises';
import { watch, type FSWatcher } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { createHash } from 'node:crypto';
import type { SecureContextOptions } from 'node:tls';
import type { Logger } from 'pino';
import { checkCaBundle, checkKeyPair, type PairInfo } from '../certs/index.js';
import type { TlsFiles } from './types.js';
import type { ServerMetrics } from './metrics.js';

export interface TlsMaterial {
  cert: Buffer;
  key: Buffer;
  clientCa?: Buffer;
  info: PairInfo;
  /** Digest of the three files, to skip reloads that change nothing. */
  digest: string;
}

export const MIN_TLS_VERSION = 'TLSv1.2';
/**
 * TLS 1.2 suites: ECDHE key exchange (forward secrecy) with AEAD ciphers only. Node's default list
 * also offers static-RSA key exchange, CBC with SHA-1, CCM8 and ARIA. TLS 1.3 suites are not in
 * this list, so Node keeps its TLS 1.3 defaults (all AEAD). Go's TLS client (the apiserver)
 * offers all of these.
 */
export const TLS12_CIPHERS = [
  'ECDHE-ECDSA-AES128-GCM-SHA256',
  'ECDHE-RSA-AES128-GCM-SHA256',
  'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-RSA-AES256-GCM-SHA384',
  'ECDHE-ECDSA-CHACHA20-POLY1305',
  'ECDHE-RSA-CHACHA20-POLY1305',
].join(':');

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

export async function loadTlsMaterial(
  files: TlsFiles,
  now = new Date(),
): Promise<{ ok: true; material: TlsMaterial } | { ok: false; error: string }> {
  let cert: Buffer, key: Buffer, clientCa: Buffer | undefined;
  try {
    [cert, key, clientCa] = await Promise.all([
      readFile(files.certFile),
      readFile(files.keyFile),
      files.clientCaFile ? readFile(files.clientCaFile) : Promise.resolve(undefined),
    ]);
  } catch (err) {
    return { ok: false, error: `cannot read: ${message(err)}` };
  }
  const pair = checkKeyPair(cert, key, now);
  if (!pair.ok) return { ok: false, error: `${files.certFile} / ${files.keyFile}: ${pair.error}` };
  if (clientCa) {
    const ca = checkCaBundle(clientCa);
    if (!ca.ok) return { ok: false, error: `${files.clientCaFile}: ${ca.error}` };
  }
  const digest = createHash('sha256')
    .update(cert)
    .update('\0')
    .update(key)
    .update('\0')
    .update(clientCa ?? '')
    .digest('hex');
  return { ok: true, material: { cert, key, clientCa, info: pair.info, digest } };
}

/** Options for tls.createSecureContext / server.setSecureContext (the whole context is replaced). */
export function secureContextOptions(m: TlsMaterial): SecureContextOptions {
  return { cert: m.cert, key: m.key, ca: m.clientCa, minVersion: MIN_TLS_VERSION, ciphers: TLS12_CIPHERS };
}

export interface TlsReloaderOptions {
  files: TlsFiles;
  initial: TlsMaterial;
  /** Puts new material in service (server.setSecureContext). */
  apply: (material: TlsMaterial) => void;
  logger: Logger;
  metrics: ServerMetrics;
  debounceMs?: number;
  pollMs?: number;
}

export class TlsReloader {
  private current: TlsMaterial;
  private readonly watchers: FSWatcher[] = [];
  private debounce: NodeJS.Timeout | undefined;
  private poll: NodeJS.Timeout | undefined;
  private lastFailedDigest: string | undefined;
  private running: Promise<boolean> | undefined;
  private rerun = false;
  private stopped = false;

  constructor(private readonly options: TlsReloaderOptions) {
    this.current = options.initial;
    options.metrics.tlsExpiry.set(options.initial.info.notAfter.getTime() / 1000);
  }

  get material(): TlsMaterial {
    return this.current;
  }

  start(): void {
    const { files } = this.options;
    const paths = [files.certFile, files.keyFile, files.clientCaFile].filter((p): p is string => !!p).map((p) => resolve(p));
    // Directories see symlink swaps and rename-into-place; the files themselves see in-place writes.
    for (const target of new Set([...paths.map(dirname), ...paths])) {
      try {
        const w = watch(target, { persistent: false }, () => this.schedule());
        w.on('error', (err) => this.options.logger.warn({ target, err: message(err) }, 'certificate watch failed; relying on polling'));
        this.watchers.push(w);
      } catch (err) {
        this.options.logger.warn({ target, err: message(err) }, 'cannot watch; relying on polling');
      }
    }
    const pollMs = this.options.pollMs ?? 60_000;
    if (pollMs > 0) {
      this.poll = setInterval(() => void this.reload(), pollMs);
      this.poll.unref();
    }
  }

  stop(): void {
    this.stopped = true;
    for (const w of this.watchers.splice(0)) w.close();
    clearTimeout(this.debounce);
    clearInterval(this.poll);
  }

  private schedule(): void {
    if (this.stopped) return;
    clearTimeout(this.debounce);
    this.debounce = setTimeout(() => void this.reload(), this.options.debounceMs ?? 250);
    this.debounce.unref();
  }

  /** Re-reads the files; true when new material went into service. Concurrent calls share one run. */
  reload(): Promise<boolean> {
    if (this.running) {
      // The files may have changed after this run read them: read them again afterwards.
      this.rerun = true;
      return this.running;
    }
    this.running = this.reloadOnce().finally(() => {
      this.running = undefined;
      if (this.rerun) {
        this.rerun = false;
        this.schedule();
      }
    });
    return this.running;
  }

  private async reloadOnce(): Promise<boolean> {
    const { logger, metrics, files } = this.options;
    const loaded = await loadTlsMaterial(files);
    if (!loaded.ok) {
      // Files read mid-rotation, or a bad pair: keep serving the old one. Log each new problem once.
      const key = `error:${loaded.error}`;
      if (this.lastFailedDigest !== key) {
        this.lastFailedDigest = key;
        metrics.tlsReloads.inc({ result: 'failure' });
        logger.error(
          { err: loaded.error, serving: this.current.info.serial },
          'certificate reload failed; keeping the certificate in service',
        );
      }
      return false;
    }
    this.lastFailedDigest = undefined;
    if (loaded.material.digest === this.current.digest) return false;
    try {
      this.options.apply(loaded.material);
    } catch (err) {
      metrics.tlsReloads.inc({ result: 'failure' });
      logger.error(
        { err: message(err), serving: this.current.info.serial },
        'certificate rejected by TLS; keeping the certificate in service',
      );
      return false;
    }
    const previous = this.current.info.serial;
    this.current = loaded.material;
    metrics.tlsReloads.inc({ result: 'success' });
    metrics.tlsExpiry.set(loaded.material.info.notAfter.getTime() / 1000);
    logger.info(
      { previous, serial: loaded.material.info.serial, notAfter: loaded.material.info.notAfter.toISOString() },
      'certificate reloaded',
    );
    return true;
  }
}
