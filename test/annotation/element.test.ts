// One element of the extended form, as Go's decoder (and so Multus) reads it: repeated keys,
// deprecated keys, what is left out of the selection, and the exact problems. Each row gives
// the element's extra keys, the selection wanted (undefined: none) and every error and warning
// as [path below the element, type, value, reason].
import t from 'tap';
import { parseNetworks } from '../../src/annotation/index.js';
import { BASE } from './helpers.js';

type P = [string, string, unknown, string];
interface Row {
  json: string;
  selection?: Record<string, unknown>;
  errors?: P[];
  warnings?: P[];
}

const E = `${BASE}[0]`;
const DUP = 'key appears more than once in this object; Multus uses the last value (objects merge, as Go decodes them): write it once';
const EARLIER = ": Go's decoder reads every value and fails the whole annotation (Multus fails the pod)";
const NOT_IP = 'must be a valid IPv4 or IPv6 address (IPv4 octets without leading zeros)';
const BW_RANGE = 'must be between 0 and 9007199254740991';
const UNKNOWN_NESTED = 'unknown key, ignored (Multus ignores unknown keys)';
const OUT_OF_RANGE = 'number out of range: Go (Multus) cannot read it';
const n = (extra: Record<string, unknown> = {}) => ({ name: 'n', namespace: 'pod', ...extra });
const gw = (earlier: string): Row => ({
  json: `[{"name":"n","default-route":${earlier},"default-route":["10.0.0.2"]}]`,
  selection: n({ 'default-route': ['10.0.0.2'] }),
  warnings: [['.default-route', 'Duplicate value', 'default-route', DUP]],
});

const rows: Record<string, Row> = {
  // Unknown keys in portMappings items and bandwidth are not extensions, dotted or not.
  'a dotted key in a port mapping is unknown': {
    json: '[{"name":"n","portMappings":[{"hostPort":80,"containerPort":80,"x.y":1}]}]',
    selection: n({ portMappings: [{ hostPort: 80, containerPort: 80 }] }),
    warnings: [['.portMappings[0].x.y', 'Invalid value', 1, UNKNOWN_NESTED]],
  },
  'a dotted key in bandwidth is unknown': {
    json: '[{"name":"n","bandwidth":{"ingressRate":1,"ingressBurst":2,"a.b":3}}]',
    selection: n({ bandwidth: { ingressRate: 1, ingressBurst: 2 } }),
    warnings: [['.bandwidth.a.b', 'Invalid value', 3, UNKNOWN_NESTED]],
  },
  // Repeated keys: Go decodes a struct or map into the one it has (keys merge), a slice of
  // struct pointers element by element, anything else replaces; an earlier value is decoded too.
  'repeated bandwidth merges, the earlier one read as Go reads it (case folded, unknown keys dropped) and quietly': {
    json: '[{"name":"n","bandwidth":{"foo":1,"INGRESSRATE":1},"bandwidth":{"ingressBurst":2}}]',
    selection: n({ bandwidth: { ingressRate: 1, ingressBurst: 2 } }),
    warnings: [['.bandwidth', 'Duplicate value', 'bandwidth', DUP]],
  },
  'repeated portMappings merge item by item, the later length wins': {
    json: '[{"name":"n","portMappings":[{"HOSTPORT":80,"containerPort":80}],"portMappings":[{"containerPort":81},{"hostPort":90,"containerPort":90}]}]',
    selection: n({
      portMappings: [
        { hostPort: 80, containerPort: 81 },
        { hostPort: 90, containerPort: 90 },
      ],
    }),
    warnings: [['.portMappings', 'Duplicate value', 'portMappings', DUP]],
  },
  'cni-args repeated as an array: the array is what fails, as written': {
    json: '[{"name":"n","cni-args":{"0":{"a":1}},"cni-args":[{"b":2}]}]',
    selection: n(),
    errors: [['.cni-args', 'Invalid value', [{ b: 2 }], 'must be a JSON object']],
    warnings: [['.cni-args', 'Duplicate value', 'cni-args', DUP]],
  },
  'an earlier null is "leave it unset" for Go: no error': {
    json: '[{"name":"n","mac":null,"mac":"02:23:45:67:89:01"}]',
    selection: n({ mac: '02:23:45:67:89:01' }),
    warnings: [['.mac', 'Duplicate value', 'mac', DUP]],
  },
  'an earlier ipam-claim-reference of any type: Multus does not decode the key': {
    json: '[{"name":"n","ipam-claim-reference":1,"ipam-claim-reference":"c"}]',
    selection: n({ 'ipam-claim-reference': 'c' }),
    warnings: [['.ipam-claim-reference', 'Duplicate value', 'ipam-claim-reference', DUP]],
  },
  'an earlier default-route with a null gateway decodes': gw('[null]'),
  'an earlier default-route with an empty gateway decodes': gw('[""]'),
  'an earlier default-route with a valid gateway decodes': gw('["10.0.0.1"]'),
  'an earlier default-route with a gateway that is no IP fails': {
    ...gw('["nope"]'),
    errors: [['.default-route', 'Invalid value', ['nope'], `an earlier value of this repeated key "nope" is not an IP address${EARLIER}`]],
  },
  'an earlier default-route with a number fails': {
    ...gw('[7]'),
    errors: [['.default-route', 'Invalid value', [7], `an earlier value of this repeated key 7 is not an IP address${EARLIER}`]],
  },
  'the first of three values is decoded too': {
    json: '[{"name":"n","mac":1,"mac":"02:23:45:67:89:01","mac":"02:23:45:67:89:02"}]',
    selection: n({ mac: '02:23:45:67:89:02' }),
    errors: [['.mac', 'Invalid value', 1, `an earlier value of this repeated key must be a JSON string${EARLIER}`]],
    warnings: [
      ['.mac', 'Duplicate value', 'mac', DUP],
      ['.mac', 'Duplicate value', 'mac', DUP],
    ],
  },
  'every value wrong: one error, and the key is left out of the selection': {
    json: '[{"name":"n","mac":1,"mac":2}]',
    selection: n(),
    errors: [['.mac', 'Invalid value', 1, `an earlier value of this repeated key must be a JSON string${EARLIER}`]],
    warnings: [['.mac', 'Duplicate value', 'mac', DUP]],
  },
  'a repeated key ending in null is not set': {
    json: '[{"name":"n","bandwidth":{"ingressRate":1,"ingressBurst":1},"bandwidth":null}]',
    selection: n(),
    warnings: [
      ['.bandwidth', 'Invalid value', null, 'null, treated as not set (as Multus does)'],
      ['.bandwidth', 'Duplicate value', 'bandwidth', DUP],
    ],
  },
  'a duplicate written in another case is reported under the spec key': {
    json: '[{"name":"n","Mac":"02:23:45:67:89:01","Mac":"02:23:45:67:89:02"}]',
    selection: n({ mac: '02:23:45:67:89:02' }),
    warnings: [
      [
        '.Mac',
        'Invalid value',
        '02:23:45:67:89:01',
        'key matches "mac" only case-insensitively; Multus (Go\'s encoding/json) honours it, and so do we: write "mac"',
      ],
      [
        '.Mac',
        'Invalid value',
        '02:23:45:67:89:02',
        'key matches "mac" only case-insensitively; Multus (Go\'s encoding/json) honours it, and so do we: write "mac"',
      ],
      ['.mac', 'Duplicate value', 'Mac', DUP],
    ],
  },
  'a duplicate inside bandwidth is reported at its own path': {
    json: '[{"name":"n","bandwidth":{"ingressRate":1,"ingressRate":2,"ingressBurst":3}}]',
    selection: n({ bandwidth: { ingressRate: 2, ingressBurst: 3 } }),
    warnings: [['.bandwidth.ingressRate', 'Duplicate value', 'ingressRate', DUP]],
  },
  'a duplicate nested key that folds to a selection key keeps its own spelling': {
    json: '[{"name":"n","cni-args":{"Name":1,"Name":2}}]',
    selection: n({ 'cni-args': { Name: 2 } }),
    warnings: [['.cni-args.Name', 'Duplicate value', 'Name', DUP]],
  },
  // Numbers Go cannot read.
  'out of range under the deprecated interfaceRequest, which Multus decodes': {
    json: '[{"name":"n","interfaceRequest":1e400}]',
    selection: n(),
    errors: [
      ['.interfaceRequest', 'Invalid value', '1e400', OUT_OF_RANGE],
      ['.interface', 'Invalid value', Infinity, 'must be a string'],
    ],
    warnings: [
      [
        '.interfaceRequest',
        'Invalid value',
        Infinity,
        'deprecated Multus key: Multus still reads it as "interface", and so do we; write "interface"',
      ],
    ],
  },
  'out of range under a key written in another case: the spec path, and an error': {
    json: '[{"name":"n","Bandwidth":{"ingressRate":1e400,"ingressBurst":1}}]',
    selection: n(),
    errors: [['.bandwidth.ingressRate', 'Invalid value', '1e400', OUT_OF_RANGE]],
    warnings: [
      [
        '.Bandwidth',
        'Invalid value',
        { ingressRate: Infinity, ingressBurst: 1 },
        'key matches "bandwidth" only case-insensitively; Multus (Go\'s encoding/json) honours it, and so do we: write "bandwidth"',
      ],
    ],
  },
  'a fraction in protocol or hostIP is not an integer problem: they are strings': {
    json: '[{"name":"n","portMappings":[{"hostPort":80,"containerPort":80,"protocol":1.5,"hostIP":2.5}]}]',
    selection: n(),
    errors: [
      ['.portMappings[0].protocol', 'Invalid value', 1.5, 'must be a string'],
      ['.portMappings[0].hostIP', 'Invalid value', 2.5, 'must be a string'],
    ],
  },
  "a fraction nested below an integer field is that field's type problem": {
    json: '[{"name":"n","bandwidth":{"ingressRate":{"ingressRate":1.5}}}]',
    selection: n(),
    errors: [['.bandwidth.ingressRate', 'Invalid value', { ingressRate: 1.5 }, 'must be an integer']],
  },
  // The empty key: unknown (dropped with a warning), and a number out of range under it is a
  // warning (Go skips the key) that marks "" as a bad key. No spec key is "", so the warnings on
  // the valid keys beside it stay: the 8-byte mac, the all-FF GUID, the empty gateway list.
  'a number out of range under the empty key: the warnings of the other keys stay': {
    json: '[{"name":"n","mac":"02:00:00:00:00:00:00:01","infiniband-guid":"ff:ff:ff:ff:ff:ff:ff:ff","default-route":[],"":1e400}]',
    selection: n({ mac: '02:00:00:00:00:00:00:01', 'infiniband-guid': 'ff:ff:ff:ff:ff:ff:ff:ff', 'default-route': [] }),
    warnings: [
      [
        '.',
        'Invalid value',
        Infinity,
        'unknown key, ignored: keys without a dot are reserved by the spec (Multus ignores unknown keys; extensions use reverse-DNS keys such as example.com/key)',
      ],
      ['.', 'Invalid value', '1e400', 'number out of range: Go (Multus) skips this key, so the pod runs; left out of the selection'],
      [
        '.infiniband-guid',
        'Invalid value',
        'ff:ff:ff:ff:ff:ff:ff:ff',
        "ff:ff:ff:ff:ff:ff:ff:ff is the value ib-sriov-cni writes to reset a VF's GUID: as an explicit request ib-sriov-cni accepts it, but every VF given it has the same GUID",
      ],
      [
        '.mac',
        'Invalid value',
        '02:00:00:00:00:00:00:01',
        'an 8-byte address is not a valid mac (the spec allows 6-byte Ethernet or 20-byte IPoIB addresses; Multus accepts it): use infiniband-guid for an InfiniBand GUID',
      ],
      ['.default-route', 'Invalid value', [], 'empty: names no gateway'],
    ],
  },
  // interfaceRequest, the deprecated spelling of interface.
  'interfaceRequest with an empty interface: read as the interface': {
    json: '[{"name":"n","interface":"","interfaceRequest":"eth1"}]',
    selection: n({ interface: 'eth1' }),
    warnings: [
      [
        '.interfaceRequest',
        'Invalid value',
        'eth1',
        'deprecated Multus key: Multus still reads it as "interface", and so do we; write "interface"',
      ],
    ],
  },
  'interfaceRequest with an interface: ignored': {
    json: '[{"name":"n","interface":"eth2","interfaceRequest":"eth1"}]',
    selection: n({ interface: 'eth2' }),
    warnings: [['.interfaceRequest', 'Invalid value', 'eth1', 'deprecated Multus key, ignored because "interface" is also set']],
  },
  'an empty interfaceRequest sets nothing': {
    json: '[{"name":"n","interfaceRequest":""}]',
    selection: n(),
    warnings: [
      [
        '.interfaceRequest',
        'Invalid value',
        '',
        'deprecated Multus key: Multus still reads it as "interface", and so do we; write "interface"',
      ],
    ],
  },
  'an empty mac is not set': {
    json: '[{"name":"n","mac":""}]',
    selection: n(),
    warnings: [['.mac', 'Invalid value', '', 'empty, treated as not set (as Multus does)']],
  },
  // Keys with invalid values are left out of the selection, whatever the error's depth.
  'invalid keys at every depth are left out': {
    json: '[{"name":"n","mac":"nope","portMappings":[{"hostPort":0,"containerPort":1}],"bandwidth":{"ingressRate":-1,"ingressBurst":1},"interface":"eth1"}]',
    selection: n({ interface: 'eth1' }),
    errors: [
      [
        '.mac',
        'Invalid value',
        'nope',
        'must be a 6-byte Ethernet MAC (02:23:45:67:89:01, 02-23-45-67-89-01 or 0223.4567.8901) or a 20-byte IPoIB address in the same forms',
      ],
      ['.portMappings[0].hostPort', 'Invalid value', 0, 'must be between 1 and 65535'],
      ['.bandwidth.ingressRate', 'Invalid value', -1, BW_RANGE],
    ],
  },
  'invalid ips are not also duplicates': {
    json: '[{"name":"n","ips":["nope","nope"]}]',
    selection: n(),
    errors: [
      ['.ips[0]', 'Invalid value', 'nope', NOT_IP],
      ['.ips[1]', 'Invalid value', 'nope', NOT_IP],
    ],
  },
  'an invalid gateway list is not also checked for families': {
    json: '[{"name":"n","default-route":["nope","10.0.0.1","10.0.0.2"]}]',
    selection: n(),
    errors: [['.default-route[0]', 'Invalid value', 'nope', NOT_IP]],
  },
  'two IPv4 gateways: the list is left out': {
    json: '[{"name":"n","default-route":["10.0.0.1","10.0.0.2"]}]',
    selection: n(),
    errors: [
      [
        '.default-route[1]',
        'Invalid value',
        '10.0.0.2',
        'only one IPv4 gateway is allowed (default-route[0] is one already; Multus counts an IPv4-mapped IPv6 address as IPv4)',
      ],
    ],
  },
  'an invalid bandwidth is not also checked for bursts and rates': {
    json: '[{"name":"n","bandwidth":{"egressRate":-1,"ingressBurst":5}}]',
    selection: n(),
    errors: [['.bandwidth.egressRate', 'Invalid value', -1, BW_RANGE]],
  },
  'an invalid rate without a burst: only the range error': {
    json: '[{"name":"n","bandwidth":{"ingressRate":-1}}]',
    selection: n(),
    errors: [['.bandwidth.ingressRate', 'Invalid value', -1, BW_RANGE]],
  },
  'a burst without a rate: bandwidth left out': {
    json: '[{"name":"n","bandwidth":{"ingressBurst":5}}]',
    selection: n(),
    errors: [['.bandwidth.ingressRate', 'Required value', undefined, 'ingressBurst needs ingressRate']],
  },
  'a rate without a burst: a warning with the rate': {
    json: '[{"name":"n","bandwidth":{"ingressRate":5}}]',
    selection: n({ bandwidth: { ingressRate: 5 } }),
    warnings: [
      ['.bandwidth.ingressRate', 'Invalid value', 5, 'set without ingressBurst: the CNI bandwidth plugin rejects a rate without a burst'],
    ],
  },
  'ips with a claim: a warning on the ips': {
    json: '[{"name":"n","ipam-claim-reference":"c","ips":["10.0.0.1/24"]}]',
    selection: n({ ips: ['10.0.0.1/24'], 'ipam-claim-reference': 'c' }),
    warnings: [
      [
        '.ips',
        'Invalid value',
        ['10.0.0.1/24'],
        'set together with ipam-claim-reference, which the spec forbids (v1.3): Multus ignores the claim and passes the ips; a CNI that reads the claim decides',
      ],
    ],
  },
  'invalid ips with a claim: only the ips error': {
    json: '[{"name":"n","ipam-claim-reference":"c","ips":["nope"]}]',
    selection: n({ 'ipam-claim-reference': 'c' }),
    errors: [['.ips[0]', 'Invalid value', 'nope', NOT_IP]],
  },
  // Elements that are not objects.
  'a string element': { json: '["x"]', errors: [['', 'Invalid value', 'x', 'must be a JSON object such as {"name": "my-network"}']] },
  'a null element': {
    json: '[null]',
    errors: [['', 'Invalid value', null, 'must be a JSON object, not null (Multus crashes on null elements)']],
  },
};

const tuples = (list: Array<{ path: string; type: string; value?: unknown; reason: string }>, base: string): P[] =>
  list.map((e) => [e.path.startsWith(base) ? e.path.slice(base.length) : e.path, e.type, e.value, e.reason]);

t.test('elements: selection, errors and warnings, exactly', async (t) => {
  for (const [name, row] of Object.entries(rows)) {
    const r = parseNetworks(row.json, { namespace: 'pod' });
    t.same(
      r.networks.map((x) => x.selection),
      row.selection ? [row.selection] : [],
      `${name}: selection`,
    );
    t.same(tuples(r.errors, E), row.errors ?? [], `${name}: errors`);
    t.same(tuples(r.warnings, E), row.warnings ?? [], `${name}: warnings`);
  }
});

t.test('a selection holds only the keys set: none is present as undefined', async (t) => {
  for (const [name, row] of Object.entries(rows)) {
    const r = parseNetworks(row.json, { namespace: 'pod' });
    t.same(
      r.networks.map((x) => Object.keys(x.selection)),
      row.selection ? [Object.keys(row.selection)] : [],
      name,
    );
  }
});

t.test('an invalid interface takes no part in the rules across elements', async (t) => {
  const r = parseNetworks('[{"name":"a","interface":"a/b"},{"name":"b","interface":"a/b"}]', { namespace: 'pod' });
  t.same(tuples(r.errors, BASE), [
    ['[0].interface', 'Invalid value', 'a/b', "must not contain '/' or ':'"],
    ['[1].interface', 'Invalid value', 'a/b', "must not contain '/' or ':'"],
  ]);
});
