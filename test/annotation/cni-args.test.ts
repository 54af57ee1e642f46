// cni-args is a second door for addresses: Multus merges it into every plugin's args.cni, and
// plugins decode it with Go's encoding/json (keys match case-insensitively). argsAddresses reads
// the mac, guid and ips there, with the same format rules as the top-level keys.
import t from 'tap';
import { ARGS_KEY_FIELD, argsAddresses, type ParsedNetwork } from '../../src/annotation/index.js';

const P = 'metadata.annotations[k8s.v1.cni.cncf.io/networks][0]';
const net = (args: unknown): ParsedNetwork => ({
  index: 0,
  path: P,
  selection: { name: 'n', namespace: 'ns', 'cni-args': args } as ParsedNetwork['selection'],
});
const A = `${P}.cni-args`;
const IPS = 'must be a non-empty list of IP addresses, each with an optional /prefix';

t.test('ARGS_KEY_FIELD names the top-level key each args key stands for', async (t) => {
  t.same(ARGS_KEY_FIELD, { mac: 'mac', guid: 'infiniband-guid', ips: 'ips' });
});

t.test('argsAddresses: valid values with their canonical form, in key order; other keys ignored', async (t) => {
  const found = argsAddresses(
    net({ Mac: '02-23-45-67-89-0A', other: 'x', GUID: 'C2:11:22:33:44:55:66:77', iPs: ['10.0.0.1/24', 'fd00::1'] }),
  );
  t.same(found, [
    { key: 'mac', written: 'Mac', path: `${A}.Mac`, value: '02-23-45-67-89-0A', canonical: '02:23:45:67:89:0a' },
    { key: 'guid', written: 'GUID', path: `${A}.GUID`, value: 'C2:11:22:33:44:55:66:77', canonical: 'c2:11:22:33:44:55:66:77' },
    { key: 'ips', written: 'iPs', path: `${A}.iPs[0]`, value: '10.0.0.1/24' },
    { key: 'ips', written: 'iPs', path: `${A}.iPs[1]`, value: 'fd00::1' },
  ]);
  t.notOk('problem' in found[2]!, 'a valid ip carries no problem key');
});

t.test('argsAddresses: what a plugin cannot read, with why', async (t) => {
  const cases: Array<[string, Record<string, unknown>, unknown[]]> = [
    [
      'an 8-byte mac',
      { mac: 'c2:11:22:33:44:55:66:77' },
      [
        {
          key: 'mac',
          written: 'mac',
          path: `${A}.mac`,
          value: 'c2:11:22:33:44:55:66:77',
          problem: /^an 8-byte address is not a valid mac/,
        },
      ],
    ],
    [
      'a mac that is no address',
      { mac: 'nope' },
      [{ key: 'mac', written: 'mac', path: `${A}.mac`, value: 'nope', problem: /^must be a 6-byte Ethernet MAC/ }],
    ],
    [
      'a guid in hyphen form',
      { guid: 'c2-11-22-33-44-55-66-77' },
      [{ key: 'guid', written: 'guid', path: `${A}.guid`, value: 'c2-11-22-33-44-55-66-77', problem: /^must be in colon form/ }],
    ],
    [
      'the all-zero guid',
      { guid: '00:00:00:00:00:00:00:00' },
      [
        {
          key: 'guid',
          written: 'guid',
          path: `${A}.guid`,
          value: '00:00:00:00:00:00:00:00',
          problem: 'the all-zero GUID is rejected by ib-sriov-cni',
        },
      ],
    ],
    [
      'a 6-byte guid',
      { guid: '02:23:45:67:89:01' },
      [
        {
          key: 'guid',
          written: 'guid',
          path: `${A}.guid`,
          value: '02:23:45:67:89:01',
          problem: 'must be 8 bytes, not 6 (colon form xx:xx:xx:xx:xx:xx:xx:xx)',
        },
      ],
    ],
    ['a mac that is not a string', { mac: 7 }, [{ key: 'mac', written: 'mac', path: `${A}.mac`, value: 7, problem: 'must be a string' }]],
    [
      'a guid that is not a string',
      { GUID: null },
      [{ key: 'guid', written: 'GUID', path: `${A}.GUID`, value: null, problem: 'must be a string' }],
    ],
    ['ips that is not a list', { ips: '10.0.0.1' }, [{ key: 'ips', written: 'ips', path: `${A}.ips`, value: '10.0.0.1', problem: IPS }]],
    ['an empty ips list', { ips: [] }, [{ key: 'ips', written: 'ips', path: `${A}.ips`, value: [], problem: IPS }]],
    [
      'bad entries in ips',
      { ips: ['300.0.0.1', 7, '10.0.0.1/33'] },
      [
        {
          key: 'ips',
          written: 'ips',
          path: `${A}.ips[0]`,
          value: '300.0.0.1',
          problem: 'must be a valid IPv4 or IPv6 address (IPv4 octets without leading zeros)',
        },
        { key: 'ips', written: 'ips', path: `${A}.ips[1]`, value: 7, problem: 'must be a string: an IP address with an optional /prefix' },
        {
          key: 'ips',
          written: 'ips',
          path: `${A}.ips[2]`,
          value: '10.0.0.1/33',
          problem: "the prefix length after '/' must be a decimal number from 0 to 32",
        },
      ],
    ],
  ];
  for (const [name, args, want] of cases) {
    const found = argsAddresses(net(args));
    t.equal(found.length, want.length, `${name}: count`);
    want.forEach((w, i) => t.match(found[i], w, `${name}: [${i}]`));
    t.same(
      found.map((f) => Object.keys(f).sort()),
      want.map((w) => Object.keys(w as object).sort()),
      `${name}: no other keys`,
    );
  }
});

t.test('argsAddresses: none without an args object; memoized per selection', async (t) => {
  for (const args of [undefined, null, 'mac=02:23:45:67:89:01', 7, {}, { other: 1 }]) {
    t.same(argsAddresses(net(args)), [], JSON.stringify(args) ?? 'undefined');
  }
  const n = net({ mac: '02:23:45:67:89:01' });
  const first = argsAddresses(n);
  t.equal(first.length, 1);
  t.equal(argsAddresses(n), first, 'the same list again');
  t.equal(argsAddresses({ ...n }), first, 'for the same selection object');
});
