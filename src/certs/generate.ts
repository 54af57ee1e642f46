// A self-signed CA and a serving certificate signed by it, for the webhook's HTTPS port.
// node-forge builds the certificates; key pairs come from Node's crypto through forge
// (forge uses crypto.generateKeyPairSync when it is available), so RSA 2048 takes milliseconds.
import { randomBytes } from 'node:crypto';
import type forgeTypes from 'node-forge';
import { type Forge, forge as loadForge } from './forge.js';

// From process.getBuiltinModule: an ES import of node:net would read its lazy exports.
const { isIP } = process.getBuiltinModule('node:net');

export interface CertificateRequest {
  /** Service name the apiserver dials (`<service>.<namespace>.svc`). */
  service: string;
  namespace: string;
  /** Extra DNS names and IP addresses for the serving certificate. */
  sans?: readonly string[];
  /** Validity of the serving certificate, in days (default 365). */
  days?: number;
  /** Validity of the CA, in days (default 3650). */
  caDays?: number;
  /** Sign with this CA instead of creating one (renewal keeps the caBundle unchanged). */
  ca?: { cert: string; key: string };
  /** `client` makes a client certificate (clientAuth) for mutual TLS instead of a serving one. */
  usage?: 'server' | 'client';
  /** Clock, for tests. */
  now?: Date;
}

export interface CertificateSet {
  caCert: string;
  caKey: string;
  cert: string;
  key: string;
}

const DAY_MS = 86_400_000;
// Clocks drift: a certificate valid from "now" can be rejected by a peer a few seconds behind.
const BACKDATE_MS = 5 * 60_000;

/** The DNS names a Service is reachable under, then the extra ones, without duplicates. */
export function serviceNames(service: string, namespace: string, extra: readonly string[] = []): string[] {
  const names = [service, `${service}.${namespace}`, `${service}.${namespace}.svc`, `${service}.${namespace}.svc.cluster.local`, ...extra];
  return [...new Set(names.map((n) => n.trim()).filter((n) => n !== ''))];
}

// A random positive 128-bit serial, minimally DER-encoded (Go's x509 parser, i.e. the apiserver,
// rejects a padded or negative one): top bit clear so no 00 pad is needed, next bit set so no
// leading zero byte.
function serialNumber(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0]! & 0x7f) | 0x40;
  return bytes.toString('hex');
}

function validity(cert: forgeTypes.pki.Certificate, now: Date, days: number): void {
  cert.validity.notBefore = new Date(now.getTime() - BACKDATE_MS);
  cert.validity.notAfter = new Date(now.getTime() + days * DAY_MS);
}

/**
 * A common name encoded as UTF8String. node-forge's default is PrintableString, which cannot hold
 * characters such as `@` or `_`; Go's x509 parser (the kube-apiserver's) then refuses the whole
 * caBundle ("invalid PrintableString"), so every webhook call fails.
 */
// @types/node-forge types valueTagClass as an asn1.Class; forge reads it as the value's universal tag.
const commonName = (forge: Forge, value: string): forgeTypes.pki.CertificateField => ({
  name: 'commonName',
  value,
  valueTagClass: forge.asn1.Type.UTF8 as number as forgeTypes.asn1.Class,
});

function checkDays(name: string, days: number): void {
  if (!Number.isInteger(days) || days < 1 || days > 36500)
    throw new RangeError(`${name} must be an integer between 1 and 36500, got ${days}`);
}

export function generateCertificates(request: CertificateRequest): CertificateSet {
  const { service, namespace } = request;
  const days = request.days ?? 365;
  const caDays = request.caDays ?? 3650;
  checkDays('days', days);
  checkDays('caDays', caDays);
  if (!service) throw new RangeError('service must not be empty');
  if (!namespace) throw new RangeError('namespace must not be empty');
  const now = request.now ?? new Date();
  const forge = loadForge();
  const pki = forge.pki;

  let caCert: forgeTypes.pki.Certificate;
  let caKey: forgeTypes.pki.rsa.PrivateKey;
  if (request.ca) {
    caCert = pki.certificateFromPem(request.ca.cert);
    caKey = pki.privateKeyFromPem(request.ca.key);
  } else {
    const caKeys = pki.rsa.generateKeyPair({ bits: 2048 });
    caKey = caKeys.privateKey;
    caCert = pki.createCertificate();
    caCert.publicKey = caKeys.publicKey;
    caCert.serialNumber = serialNumber();
    validity(caCert, now, caDays);
    const caSubject = [commonName(forge, `netattach-ca-${Math.floor(now.getTime() / 1000)}`)];
    caCert.setSubject(caSubject);
    caCert.setIssuer(caSubject);
    caCert.setExtensions([
      { name: 'basicConstraints', cA: true, pathLenConstraint: 0, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
      { name: 'subjectKeyIdentifier' },
    ]);
    caCert.sign(caKey, forge.md.sha256.create());
  }

  const keys = pki.rsa.generateKeyPair({ bits: 2048 });
  const cert = pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = serialNumber();
  validity(cert, now, days);
  const names = serviceNames(service, namespace, request.sans);
  cert.setSubject([commonName(forge, `${service}.${namespace}.svc`)]);
  cert.setIssuer(caCert.subject.attributes);
  cert.setExtensions([
    { name: 'basicConstraints', cA: false, critical: true },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, critical: true },
    request.usage === 'client' ? { name: 'extKeyUsage', clientAuth: true } : { name: 'extKeyUsage', serverAuth: true },
    {
      name: 'subjectAltName',
      // type 2: dNSName, type 7: iPAddress (forge encodes `ip` from its text form).
      altNames: names.map((n) => (isIP(n) ? { type: 7, ip: n } : { type: 2, value: n })),
    },
    { name: 'subjectKeyIdentifier' },
    { name: 'authorityKeyIdentifier', keyIdentifier: caCert.generateSubjectKeyIdentifier().getBytes() },
  ]);
  cert.sign(caKey, forge.md.sha256.create());

  return {
    caCert: pki.certificateToPem(caCert),
    caKey: request.ca ? request.ca.key : pki.privateKeyToPem(caKey),
    cert: pki.certificateToPem(cert),
    key: pki.privateKeyToPem(keys.privateKey),
  };
}
