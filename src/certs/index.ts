export { generateCertificates, serviceNames } from './generate.js';
export type { CertificateRequest, CertificateSet } from './generate.js';
export { checkKeyPair, checkCaBundle } from './keypair.js';
export type { PairCheck, PairInfo } from './keypair.js';
export { writeCertificateSet, readCa, caBundle, CERT_FILES } from './files.js';
