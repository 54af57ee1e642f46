import t from 'tap';
import { canonicalGuid, canonicalMac } from '../../src/annotation/index.js';
import { parseHwAddr } from '../../src/annotation/hwaddr.js';

t.test('parseHwAddr reads the forms Go net.ParseMAC reads, and nothing else', async (t) => {
  const ok: Array<[string, number, string]> = [
    ['02:23:45:67:89:01', 6, 'colon'],
    ['02-23-45-67-89-01', 6, 'hyphen'],
    ['0223.4567.8901', 6, 'dot'],
    ['0A:0b:0C:0d:0E:0f', 6, 'colon'],
    ['00:00:00:00:fe:80:00:00:00:00:00:00:02:00:5e:10:00:00:00:01', 20, 'colon'],
    ['0000.0000.fe80.0000.0000.0000.0200.5e10.0000.0001', 20, 'dot'],
    ['c2:11:22:33:44:55:66:77', 8, 'colon'],
    ['c211.2233.4455.6677', 8, 'dot'],
  ];
  for (const [text, n, form] of ok) {
    const a = parseHwAddr(text);
    t.equal(a?.bytes.length, n, `${text} has ${n} bytes`);
    t.equal(a?.form, form, `${text} is ${form} form`);
  }
  const bad = [
    '', '02:23:45:67:89', '02:23:45:67:89:01:', '02:23-45:67:89:01', '022345678901', '2:23:45:67:89:01',
    ' 02:23:45:67:89:01', '02:23:45:67:89:01 ', '02:23:45:67:89:0g', '0223.4567.890', '02:23:45:67:89:01:02',
    '0223:4567:8901', '02.23.45.67.89.01', '\u0010\u0010:00:00:00:00:00',
  ];
  for (const text of bad) t.equal(parseHwAddr(text), undefined, `${JSON.stringify(text)} is rejected`);
});

t.test('canonicalMac: lower-case colon form of a 6- or 20-byte address, else undefined', async (t) => {
  t.equal(canonicalMac('02-23-45-67-89-0A'), '02:23:45:67:89:0a');
  t.equal(canonicalMac('0223.4567.890A'), '02:23:45:67:89:0a');
  t.equal(canonicalMac('02:23:45:67:89:0A'), '02:23:45:67:89:0a');
  t.equal(canonicalMac('00:00:00:00:FE:80:00:00:00:00:00:00:02:00:5E:10:00:00:00:01'), '00:00:00:00:fe:80:00:00:00:00:00:00:02:00:5e:10:00:00:00:01');
  t.equal(canonicalMac('c2:11:22:33:44:55:66:77'), undefined, '8 bytes is a GUID, not a mac');
  t.equal(canonicalMac('02:00'), undefined);
  t.equal(canonicalMac(42 as unknown as string), undefined);
});

t.test('canonicalGuid: colon form only, not all-zero; all-FF (a warning in the annotation) included', async (t) => {
  t.equal(canonicalGuid('C2:11:22:33:44:55:66:77'), 'c2:11:22:33:44:55:66:77');
  t.equal(canonicalGuid('c2-11-22-33-44-55-66-77'), undefined);
  t.equal(canonicalGuid('c211.2233.4455.6677'), undefined);
  t.equal(canonicalGuid('00:00:00:00:00:00:00:00'), undefined);
  t.equal(canonicalGuid('FF:FF:FF:FF:FF:FF:FF:FF'), 'ff:ff:ff:ff:ff:ff:ff:ff', 'all-FF passes the parser, so policies must see it');
  t.equal(canonicalGuid('02:23:45:67:89:01'), undefined);
});
