// The string formats, each from the rule it follows (Kubernetes names, Go's unicode.IsSpace, the
// kernel's dev_valid_name, Go's ParseIP/ParseCIDR, the portmap plugin's protocols).
import t from 'tap';
import {
  dns1123LabelProblem,
  dns1123SubdomainProblem,
  goTrimSpace,
  interfaceNameProblem,
  ipOrCidrProblem,
  isGoSpace,
  portProtocolProblem,
} from '../../src/annotation/formats.js';

const LABEL =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character";
const SUBDOMAIN =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character";

t.test('DNS-1123 labels and subdomains: lengths at the limit, and empty labels', async (t) => {
  t.equal(dns1123LabelProblem('a'.repeat(63)), undefined, '63 characters');
  t.equal(dns1123LabelProblem('a'.repeat(64)), 'must be no more than 63 characters');
  const label63 = 'a'.repeat(63);
  const sub253 = `${label63}.${label63}.${label63}.${'a'.repeat(61)}`;
  t.equal(sub253.length, 253);
  t.equal(dns1123SubdomainProblem(sub253), undefined, '253 characters');
  t.equal(dns1123SubdomainProblem(`${sub253}a`), 'must be no more than 253 characters');
  for (const bad of ['', 'a.', '.a', 'a..b', 'A.b']) t.equal(dns1123SubdomainProblem(bad), SUBDOMAIN, JSON.stringify(bad));
  t.equal(dns1123SubdomainProblem('a.b-c.d'), undefined);
  t.equal(dns1123LabelProblem('-a'), LABEL);
});

t.test("isGoSpace is Go's unicode.IsSpace, boundaries included", async (t) => {
  const space = [9, 10, 11, 12, 13, 32, 0x85, 0xa0, 0x1680, 0x2000, 0x2005, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000];
  const not = [0, 1, 8, 14, 31, 33, 0xff, 0x100, 0x167f, 0x1681, 0x1fff, 0x200b, 0x2027, 0x202a, 0x202e, 0x2030, 0x205e, 0x2060, 0xfeff];
  for (const c of space) t.equal(isGoSpace(c), true, `U+${c.toString(16)}`);
  for (const c of not) t.equal(isGoSpace(c), false, `U+${c.toString(16)}`);
  t.equal(goTrimSpace('\u0001a\u0001'), '\u0001a\u0001', 'control characters below TAB are not space');
  t.equal(goTrimSpace('\r a \u2028'), 'a');
});

t.test('interface names as the kernel takes them', async (t) => {
  const cases: Array<[string, string | undefined]> = [
    ['', 'must not be empty'],
    ['abcdefghijklmno', undefined], // 15 bytes, the limit
    ['abcdefghijklmnop', 'must be at most 15 bytes (Linux IFNAMSIZ), got 16'],
    ['a\u0001', 'must not contain whitespace or control characters'],
    ['a\u007f', 'must not contain whitespace or control characters'],
    ['a b', 'must not contain whitespace or control characters'],
    ['a~', undefined],
  ];
  for (const [name, problem] of cases) t.equal(interfaceNameProblem(name), problem, JSON.stringify(name));
});

t.test("ipOrCidrProblem: an address, then a decimal prefix in the family's range", async (t) => {
  const PREFIX4 = "the prefix length after '/' must be a decimal number from 0 to 32";
  const PREFIX6 = "the prefix length after '/' must be a decimal number from 0 to 128";
  const cases: Array<[string, string | undefined]> = [
    ['10.0.0.1/32', undefined],
    ['10.0.0.1/032', undefined],
    ['10.0.0.1/320', PREFIX4],
    ['10.0.0.1/33', PREFIX4],
    ['10.0.0.1/1:', PREFIX4], // ':' is just above '9'
    ['fd00::/1/', PREFIX6], // '/' is just below '0'
    ['fd00::/128', undefined],
    ['fd00::/', PREFIX6],
    ['/24', 'must be a valid IPv4 or IPv6 address (IPv4 octets without leading zeros), optionally followed by /prefix'],
  ];
  for (const [text, problem] of cases) t.equal(ipOrCidrProblem(text), problem, text);
});

t.test('port protocols', async (t) => {
  t.equal(portProtocolProblem('sctp'), undefined);
  t.equal(portProtocolProblem('FTP'), 'supported values: "TCP", "UDP", "SCTP" (any case)');
});
