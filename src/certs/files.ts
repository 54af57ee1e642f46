// Writes a certificate set with the file names a Kubernetes TLS Secret mounts (tls.crt, tls.key)
// plus the CA; private keys are readable by the owner only.
import { mkdir, readFile, writeFile, chmod } from 'node:fs/promises';
import { join } from 'node:path';
import type { CertificateSet } from './generate.js';

export const CERT_FILES = { caCert: 'ca.crt', caKey: 'ca.key', cert: 'tls.crt', key: 'tls.key' } as const;

const PRIVATE = 0o600;
const PUBLIC = 0o644;

export async function writeCertificateSet(dir: string, set: CertificateSet): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const written: string[] = [];
  for (const [field, name] of Object.entries(CERT_FILES) as Array<[keyof CertificateSet, string]>) {
    const path = join(dir, name);
    const mode = field === 'caKey' || field === 'key' ? PRIVATE : PUBLIC;
    await writeFile(path, set[field], { mode });
    // writeFile's mode applies only to new files: tighten an existing one too.
    await chmod(path, mode);
    written.push(path);
  }
  return written;
}

/** The CA in `dir` (ca.crt + ca.key) when both exist, to sign a renewed certificate with it. */
export async function readCa(dir: string): Promise<{ cert: string; key: string } | undefined> {
  try {
    const [cert, key] = await Promise.all([readFile(join(dir, CERT_FILES.caCert), 'utf8'), readFile(join(dir, CERT_FILES.caKey), 'utf8')]);
    return { cert, key };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/** base64 of the CA certificate: the `caBundle` of a webhook configuration. */
export const caBundle = (caCertPem: string): string => Buffer.from(caCertPem).toString('base64');
