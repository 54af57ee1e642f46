// Checks a certificate/key pair before it is put in service: both parse, they belong together,
// and the certificate is valid now. Uses node:crypto (the same parser TLS will use).
import { X509Certificate, createPrivateKey } from 'node:crypto';

export interface PairInfo {
  /** Hex serial of the (leaf) certificate, upper case as X509Certificate prints it. */
  serial: string;
  subject: string;
  subjectAltName?: string;
  notBefore: Date;
  notAfter: Date;
}

export type PairCheck = { ok: true; info: PairInfo } | { ok: false; error: string };

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** First certificate of a PEM bundle (the leaf; intermediates may follow). */
function leaf(certPem: string | Buffer): X509Certificate {
  return new X509Certificate(certPem);
}

export function checkKeyPair(certPem: string | Buffer, keyPem: string | Buffer, now: Date = new Date()): PairCheck {
  let cert: X509Certificate;
  try {
    cert = leaf(certPem);
  } catch (err) {
    return { ok: false, error: `certificate does not parse: ${message(err)}` };
  }
  let matches: boolean;
  try {
    matches = cert.checkPrivateKey(createPrivateKey(keyPem));
  } catch (err) {
    return { ok: false, error: `private key does not parse: ${message(err)}` };
  }
  if (!matches) return { ok: false, error: 'private key does not match the certificate' };
  const notBefore = new Date(cert.validFrom);
  const notAfter = new Date(cert.validTo);
  if (now.getTime() > notAfter.getTime()) return { ok: false, error: `certificate expired at ${notAfter.toISOString()}` };
  if (now.getTime() < notBefore.getTime()) return { ok: false, error: `certificate is not valid before ${notBefore.toISOString()}` };
  return {
    ok: true,
    info: { serial: cert.serialNumber, subject: cert.subject, subjectAltName: cert.subjectAltName, notBefore, notAfter },
  };
}

/** Parses a PEM bundle of CA certificates; an error message names what is wrong. */
export function checkCaBundle(pem: string | Buffer): { ok: true; count: number } | { ok: false; error: string } {
  const blocks = String(pem).match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) return { ok: false, error: 'no PEM certificate found' };
  for (const [i, block] of blocks.entries()) {
    try {
      new X509Certificate(block);
    } catch (err) {
      return { ok: false, error: `certificate ${i + 1} does not parse: ${message(err)}` };
    }
  }
  return { ok: true, count: blocks.length };
}
