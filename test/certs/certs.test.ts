import t from 'tap';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { generateCertificates, checkKeyPair, checkCaBundle, serviceNames } from '../../src/certs/index.js';
import forge from 'node-forge';

const set = generateCertificates({ service: 'netattach', namespace: 'netattach-system', sans: ['127.0.0.1', 'localhost', '::1'] });

t.test('the serving certificate names the Service the way the apiserver dials it', async (t) => {
  const cert = new X509Certificate(set.cert);
  const sans = cert.subjectAltName ?? '';
  for (const name of [
    'netattach',
    'netattach.netattach-system',
    'netattach.netattach-system.svc',
    'netattach.netattach-system.svc.cluster.local',
    'localhost',
  ]) {
    t.match(sans, new RegExp(`DNS:${name.replace(/\./g, '\\.')}(,|$)`), name);
  }
  t.match(sans, /IP Address:127\.0\.0\.1/);
  t.match(sans, /IP Address:0:0:0:0:0:0:0:1/);
  t.same(cert.keyUsage, ['1.3.6.1.5.5.7.3.1'], 'serverAuth extended key usage only');
  t.equal(cert.ca, false);
  t.equal(createPrivateKey(set.key).asymmetricKeyDetails?.modulusLength, 2048);
});

t.test('serials are positive, 16 bytes, minimally encoded (Go rejects padded ones)', async (t) => {
  for (let i = 0; i < 8; i++) {
    const serial = new X509Certificate(
      generateCertificates({ service: 's', namespace: 'n', ca: { cert: set.caCert, key: set.caKey } }).cert,
    ).serialNumber;
    t.equal(serial.length, 32, serial);
    t.ok(parseInt(serial.slice(0, 2), 16) >= 0x40 && parseInt(serial.slice(0, 2), 16) < 0x80, serial);
  }
});

t.test('a client certificate has the clientAuth usage', async (t) => {
  const client = generateCertificates({ service: 'apiserver', namespace: 'n', usage: 'client', ca: { cert: set.caCert, key: set.caKey } });
  t.same(new X509Certificate(client.cert).keyUsage, ['1.3.6.1.5.5.7.3.2']);
});

t.test('the CA is a CA and signed the serving certificate', async (t) => {
  const ca = new X509Certificate(set.caCert);
  const cert = new X509Certificate(set.cert);
  t.equal(ca.ca, true);
  t.ok(cert.verify(ca.publicKey));
  t.ok(cert.checkIssued(ca));
  t.ok(ca.checkPrivateKey(createPrivateKey(set.caKey)));
});

t.test('validity follows days and caDays, backdated a few minutes for clock skew', async (t) => {
  const now = new Date('2030-01-01T00:00:00Z');
  const s = generateCertificates({ service: 's', namespace: 'n', days: 10, caDays: 20, now });
  const cert = new X509Certificate(s.cert);
  const ca = new X509Certificate(s.caCert);
  t.equal(new Date(cert.validTo).toISOString(), '2030-01-11T00:00:00.000Z');
  t.equal(new Date(ca.validTo).toISOString(), '2030-01-21T00:00:00.000Z');
  t.ok(new Date(cert.validFrom) < now);
});

t.test('signing with an existing CA keeps the CA unchanged', async (t) => {
  const renewed = generateCertificates({ service: 'netattach', namespace: 'ns', ca: { cert: set.caCert, key: set.caKey } });
  t.equal(renewed.caCert, set.caCert);
  t.equal(renewed.caKey, set.caKey);
  t.ok(new X509Certificate(renewed.cert).verify(new X509Certificate(set.caCert).publicKey));
  t.not(new X509Certificate(renewed.cert).serialNumber, new X509Certificate(set.cert).serialNumber);
});

t.test('bad requests are refused with the parameter named', async (t) => {
  const cases: Array<[Parameters<typeof generateCertificates>[0], RegExp]> = [
    [{ service: 's', namespace: 'n', days: 0 }, /days must be an integer/],
    [{ service: 's', namespace: 'n', caDays: 1.5 }, /caDays must be an integer/],
    [{ service: '', namespace: 'n' }, /service must not be empty/],
    [{ service: 's', namespace: '' }, /namespace must not be empty/],
  ];
  for (const [req, want] of cases) t.throws(() => generateCertificates(req), want);
});

t.test('serviceNames lists the four Service forms and drops duplicates', async (t) => {
  t.same(serviceNames('a', 'b', ['a.b.svc', 'x', ' ']), ['a', 'a.b', 'a.b.svc', 'a.b.svc.cluster.local', 'x']);
});

t.test('checkKeyPair accepts a matching, current pair and names what is wrong otherwise', async (t) => {
  const ok = checkKeyPair(set.cert, set.key);
  t.ok(ok.ok);
  if (ok.ok) t.equal(ok.info.serial, new X509Certificate(set.cert).serialNumber);
  const other = generateCertificates({ service: 's', namespace: 'n' });
  const cases: Array<[string, string, Date | undefined, RegExp]> = [
    [set.cert, other.key, undefined, /does not match/],
    ['not a pem', set.key, undefined, /certificate does not parse/],
    [set.cert, 'garbage', undefined, /private key does not parse/],
    [set.cert, set.key, new Date(Date.now() + 400 * 86_400_000), /expired at/],
    [set.cert, set.key, new Date(Date.now() - 86_400_000), /not valid before/],
  ];
  for (const [cert, key, now, want] of cases) {
    const r = checkKeyPair(cert, key, now);
    t.notOk(r.ok);
    if (!r.ok) t.match(r.error, want);
  }
});

t.test('checkCaBundle counts certificates and rejects junk', async (t) => {
  t.same(checkCaBundle(set.caCert + set.cert), { ok: true, count: 2 });
  t.match(checkCaBundle('nothing here'), { ok: false, error: /no PEM certificate/ });
  t.match(checkCaBundle('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----'), { ok: false, error: /does not parse/ });
});

t.test('subject and issuer names are valid for Go: PrintableString values only hold its characters', async (t) => {
  // Go's x509 parser (the kube-apiserver's) refuses a caBundle whose PrintableString holds e.g. '@'.
  const printable = /^[A-Za-z0-9 '()+,\-./:=?]*$/;
  const PRINTABLE_STRING = 19;
  const UTF8_STRING = 12;
  const pems = generateCertificates({ service: 'netattach', namespace: 'netattach-system', sans: ['127.0.0.1'] });
  for (const [label, pem] of [
    ['ca', pems.caCert],
    ['serving', pems.cert],
  ] as const) {
    const cert = forge.pki.certificateFromPem(pem);
    for (const attr of [...cert.subject.attributes, ...cert.issuer.attributes]) {
      const tag = attr.valueTagClass as unknown as number;
      t.ok(
        tag === UTF8_STRING || (tag === PRINTABLE_STRING && printable.test(String(attr.value))),
        `${label} ${attr.name}=${String(attr.value)} (tag ${tag})`,
      );
    }
  }
  t.match(forge.pki.certificateFromPem(pems.caCert).subject.getField('CN').value, /^netattach-ca-\d+$/);
});
