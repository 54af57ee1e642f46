import t from 'tap';
import { canonicalGuid, canonicalMac } from '../../src/annotation/index.js';
import { guidFormatProblem, guidWarning, macFormatProblem, macProblem, macWarning, parseHwAddr } from '../../src/annotation/hwaddr.js';

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
    '',
    '02:23:45:67:89',
    '02:23:45:67:89:01:',
    '02:23-45:67:89:01',
    '022345678901',
    '2:23:45:67:89:01',
    ' 02:23:45:67:89:01',
    '02:23:45:67:89:01 ',
    '02:23:45:67:89:0g',
    '0223.4567.890',
    '02:23:45:67:89:01:02',
    '0223:4567:8901',
    '02.23.45.67.89.01',
    '\u0010\u0010:00:00:00:00:00',
    // a bad first digit of a byte; '@' and '`' are 'a'-1 once case-folded, not hex
    'g2:23:45:67:89:01',
    '02:23:45:67:89:0@',
    '02-23-45-67-89-0`',
    '0@23.4567.8901',
    // dot form: a bad digit in a later group, a wrong separator later on, 5 groups (10 bytes)
    '0223.4567.89g1',
    '0223.4567:8901',
    '0223.4567.8901.2345.6789',
  ];
  for (const text of bad) t.equal(parseHwAddr(text), undefined, `${JSON.stringify(text)} is rejected`);
});

t.test('canonicalMac: lower-case colon form of a 6- or 20-byte address, else undefined', async (t) => {
  t.equal(canonicalMac('02-23-45-67-89-0A'), '02:23:45:67:89:0a');
  t.equal(canonicalMac('0223.4567.890A'), '02:23:45:67:89:0a');
  t.equal(canonicalMac('02:23:45:67:89:0A'), '02:23:45:67:89:0a');
  t.equal(
    canonicalMac('00:00:00:00:FE:80:00:00:00:00:00:00:02:00:5E:10:00:00:00:01'),
    '00:00:00:00:fe:80:00:00:00:00:00:00:02:00:5e:10:00:00:00:01',
  );
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

const MAC_FORMS =
  '6-byte Ethernet MAC (02:23:45:67:89:01, 02-23-45-67-89-01 or 0223.4567.8901) or a 20-byte IPoIB address in the same forms';
const EIGHT_BYTE_MAC =
  'an 8-byte address is not a valid mac (the spec allows 6-byte Ethernet or 20-byte IPoIB addresses; Multus accepts it): use infiniband-guid for an InfiniBand GUID';

t.test('macProblem (args.cni mac: set on a link) and macFormatProblem (the annotation: what net.ParseMAC reads)', async (t) => {
  const cases: Array<[string, string | undefined, string | undefined]> = [
    // text, macProblem, macFormatProblem
    ['02:23:45:67:89:01', undefined, undefined],
    ['0223.4567.8901', undefined, undefined],
    ['00:00:00:00:fe:80:00:00:00:00:00:00:02:00:5e:10:00:00:00:01', undefined, undefined],
    ['c2:11:22:33:44:55:66:77', EIGHT_BYTE_MAC, undefined],
    ['nope', `must be a ${MAC_FORMS}`, `must be a ${MAC_FORMS}`],
  ];
  for (const [text, problem, format] of cases) {
    t.equal(macProblem(text), problem, `macProblem ${text}`);
    t.equal(macFormatProblem(text), format, `macFormatProblem ${text}`);
  }
});

t.test('guidFormatProblem: 8 bytes, colon form, not all-zero', async (t) => {
  const cases: Array<[string, string | undefined]> = [
    ['c2:11:22:33:44:55:66:77', undefined],
    ['FF:FF:FF:FF:FF:FF:FF:FF', undefined],
    ['nope', 'must be an 8-byte GUID in colon form xx:xx:xx:xx:xx:xx:xx:xx'],
    ['02:23:45:67:89:01', 'must be 8 bytes, not 6 (colon form xx:xx:xx:xx:xx:xx:xx:xx)'],
    [
      'c2-11-22-33-44-55-66-77',
      'must be in colon form xx:xx:xx:xx:xx:xx:xx:xx (Multus accepts the hyphen and dot forms, but ib-sriov-cni does not)',
    ],
    ['00:00:00:00:00:00:00:00', 'the all-zero GUID is rejected by ib-sriov-cni'],
    // Only all-zero is rejected: zero bytes elsewhere are fine.
    ['00:00:00:00:00:00:00:01', undefined],
    ['c2:00:22:33:44:55:66:00', undefined],
  ];
  for (const [text, problem] of cases) t.equal(guidFormatProblem(text), problem, text);
  t.equal(guidWarning('c2:11:22:33:44:55:66:77'), undefined);
  t.match(guidWarning('FF:ff:FF:ff:FF:ff:FF:ff'), /^ff:ff:ff:ff:ff:ff:ff:ff is the value ib-sriov-cni writes to reset a VF's GUID/);
});

t.test('macWarning: what Linux cannot set, or the subnet manager sets; nothing for what is not an address', async (t) => {
  const cases: Array<[string, string | undefined]> = [
    ['02:23:45:67:89:01', undefined],
    // Some zero or ff bytes, not all: an ordinary address.
    ['02:ff:45:67:89:ff', undefined],
    ['02:00:00:00:00:00', undefined],
    ['nope', undefined],
    ['c2:11:22:33:44:55:66:77', EIGHT_BYTE_MAC],
    // Only the NAD's chain tells whether a plugin sets it: a warning that never says the pod fails.
    [
      '00:00:00:00:00:00',
      'the all-zero MAC: the kernel refuses it as the address of an Ethernet interface, so only a network whose plugins do not set the MAC can take it',
    ],
    [
      'ff:ff:ff:ff:ff:ff',
      'the broadcast MAC: the kernel refuses it as the address of an Ethernet interface, so only a network whose plugins do not set the MAC can take it',
    ],
    [
      '03:23:45:67:89:01',
      'a multicast MAC (lowest bit of the first octet set): the kernel refuses it as the address of an Ethernet interface, so only a network whose plugins do not set the MAC can take it',
    ],
    ['00:00:00:00:fe:80:00:00:00:00:00:00:02:00:5e:10:00:00:00:01', undefined],
    [
      '00:00:00:00:fe:80:00:00:00:00:00:01:02:00:5e:10:00:00:00:01',
      'in a 20-byte IPoIB address only the last 8 bytes (the port GUID) can be chosen; bytes 0-11 are set by the HCA and the subnet manager',
    ],
  ];
  for (const [text, warning] of cases) t.equal(macWarning(text), warning, text);
});

t.test('canonicalGuid of what is not a string is undefined, not a crash', async (t) => {
  t.equal(canonicalGuid(42 as unknown as string), undefined);
  t.equal(canonicalGuid(undefined as unknown as string), undefined);
});
