import t from 'tap';
import { parseNetworks, serializeSelections } from '../../src/annotation/index.js';
import { expectProblems, type Expected } from './helpers.js';

interface Case {
  /** JSON text of the annotation, or one element (wrapped in [ ] with a name added). */
  value: string;
  /** Expected normalized output (serializeSelections), when checked. */
  want?: unknown[];
  errors?: Expected[];
  warnings?: Expected[];
}

/** An element `{"name":"n", ...extra}` as annotation text. */
const el = (extra: string): string => `[{"name":"n"${extra ? `,${extra}` : ''}}]`;

const cases: Record<string, Case> = {
  // structure
  'empty array: no attachments': { value: '[]', want: [] },
  'bare object (Multus rejects it too)': { value: '{"name":"a"}', errors: [['', 'Invalid value', 'wrap a single object in [ ]']] },
  'null element (Multus crashes)': { value: '[null]', errors: [['[0]', 'Invalid value', 'not null']] },
  'string element': { value: '["net-a"]', errors: [['[0]', 'Invalid value', 'must be a JSON object']] },
  'syntax error: trailing comma': {
    value: '[{"name":"a",}]',
    errors: [['', 'Invalid value', /invalid JSON at offset 13 .*expected a string key/]],
  },
  'syntax error: unterminated': { value: '[{"name":"a"', errors: [['', 'Invalid value', /invalid JSON .*expected ',' or '}'/]] },
  'syntax error: garbage after the array': { value: '[] x', errors: [['', 'Invalid value', 'after the end of the JSON value']] },
  'syntax error: single quotes': { value: "[{'name':'a'}]", errors: [['', 'Invalid value', 'invalid JSON']] },
  // The longest key of the table (20 characters) written in another case is still found.
  'IPAM-CLAIM-REFERENCE: the longest key, in another case': {
    value: el('"IPAM-CLAIM-REFERENCE":"claim-a"'),
    want: [{ name: 'n', namespace: 'pod-ns', 'ipam-claim-reference': 'claim-a' }],
    warnings: [['[0].IPAM-CLAIM-REFERENCE', 'Invalid value', 'matches "ipam-claim-reference" only case-insensitively']],
  },
  // name / namespace
  'name and namespace': { value: '[{"name":"a","namespace":"other"}]', want: [{ name: 'a', namespace: 'other' }] },
  'missing namespace means the pod namespace': { value: '[{"name":"a"}]', want: [{ name: 'a', namespace: 'pod-ns' }] },
  'empty namespace means the pod namespace (spec)': { value: '[{"name":"a","namespace":""}]', want: [{ name: 'a', namespace: 'pod-ns' }] },
  'missing name': { value: '[{"namespace":"x"}]', want: [], errors: [['[0].name', 'Required value', '']] },
  'empty name': { value: '[{"name":""}]', want: [], errors: [['[0].name', 'Required value', 'must not be empty']] },
  'name is not a string': { value: '[{"name":7}]', want: [], errors: [['[0].name', 'Invalid value', 'must be a string']] },
  'dotted name is a valid object name in JSON form': { value: '[{"name":"net.a"}]', want: [{ name: 'net.a', namespace: 'pod-ns' }] },
  'upper-case name': { value: '[{"name":"NetA"}]', errors: [['[0].name', 'Invalid value', 'RFC 1123 subdomain']] },
  'bad namespace': { value: '[{"name":"a","namespace":"a.b"}]', errors: [['[0].namespace', 'Invalid value', 'RFC 1123 label']] },
  'null for an optional key is unset (as Go), with a warning': {
    value: el('"mac":null,"namespace":null'),
    want: [{ name: 'n', namespace: 'pod-ns' }],
    warnings: [
      ['[0].mac', 'Invalid value', 'null, treated as not set'],
      ['[0].namespace', 'Invalid value', 'null, treated as not set'],
    ],
  },
  'null name': { value: '[{"name":null}]', want: [], errors: [['[0].name', 'Invalid value', 'must be a string']] },
  // interface
  interface: { value: el('"interface":"eth1"'), want: [{ name: 'n', namespace: 'pod-ns', interface: 'eth1' }] },
  'interface 16 bytes': { value: el('"interface":"abcdefghijklmnop"'), errors: [['[0].interface', 'Invalid value', '15 bytes']] },
  'interface with /': { value: el('"interface":"a/b"'), errors: [['[0].interface', 'Invalid value', "'/' or ':'"]] },
  'interface ..': { value: el('"interface":".."'), errors: [['[0].interface', 'Invalid value', '"." or ".."']] },
  'empty interface is unset (as in Multus), with a warning': {
    value: el('"interface":""'),
    want: [{ name: 'n', namespace: 'pod-ns' }],
    warnings: [['[0].interface', 'Invalid value', 'treated as not set']],
  },
  'deprecated interfaceRequest is read as interface (Multus), with a warning': {
    value: el('"interfaceRequest":"ib0"'),
    want: [{ name: 'n', namespace: 'pod-ns', interface: 'ib0' }],
    warnings: [['[0].interfaceRequest', 'Invalid value', 'deprecated Multus key']],
  },
  'interface wins over interfaceRequest': {
    value: el('"interfaceRequest":"ib0","interface":"ib1"'),
    want: [{ name: 'n', namespace: 'pod-ns', interface: 'ib1' }],
    warnings: [['[0].interfaceRequest', 'Invalid value', 'ignored because']],
  },
  // ips
  'ips with and without prefix, v4 and v6': {
    value: el('"ips":["10.1.1.5/24","2001:db8::5/64","10.1.1.6","::ffff:10.1.1.7"]'),
    want: [{ name: 'n', namespace: 'pod-ns', ips: ['10.1.1.5/24', '2001:db8::5/64', '10.1.1.6', '::ffff:10.1.1.7'] }],
  },
  'ips: empty list: warning, not set (Multus passes an empty IP= that IPAMs ignore)': {
    value: el('"ips":[]'),
    want: [{ name: 'n', namespace: 'pod-ns' }],
    warnings: [['[0].ips', 'Invalid value', 'requests no address']],
  },
  'ips: IPv4 leading zero (Go rejects)': { value: el('"ips":["10.1.1.05"]'), errors: [['[0].ips[0]', 'Invalid value', 'leading zeros']] },
  'ips: zone (Go rejects)': { value: el('"ips":["fe80::1%eth0"]'), errors: [['[0].ips[0]', 'Invalid value', 'without a zone']] },
  'ips: prefix out of range': {
    value: el('"ips":["10.0.0.1/33","::1/129","10.0.0.1/","10.0.0.1/+24","10.0.0.1/-1","10.0.0.1/0033","10.0.0.1/2 4"]'),
    errors: [
      ['[0].ips[0]', 'Invalid value', 'from 0 to 32'],
      ['[0].ips[1]', 'Invalid value', 'from 0 to 128'],
      ['[0].ips[2]', 'Invalid value', 'from 0 to 32'],
      ['[0].ips[3]', 'Invalid value', 'from 0 to 32'],
      ['[0].ips[4]', 'Invalid value', 'from 0 to 32'],
      ['[0].ips[5]', 'Invalid value', 'from 0 to 32'],
      ['[0].ips[6]', 'Invalid value', 'from 0 to 32'],
    ],
  },
  'ips: leading zeros in the prefix (Go ParseCIDR and the IPAMs accept them)': {
    value: el('"ips":["10.1.1.5/024","10.1.1.6/0024","fd00::5/000064","10.1.1.7/00"]'),
    want: [{ name: 'n', namespace: 'pod-ns', ips: ['10.1.1.5/024', '10.1.1.6/0024', 'fd00::5/000064', '10.1.1.7/00'] }],
  },
  'ips: not an address': {
    value: el('"ips":["hello","1.2.3"]'),
    errors: [
      ['[0].ips[0]', 'Invalid value', 'IPv4 or IPv6'],
      ['[0].ips[1]', 'Invalid value', 'IPv4 or IPv6'],
    ],
  },
  'ips: not a list': { value: el('"ips":"10.0.0.1"'), errors: [['[0].ips', 'Invalid value', 'must be a JSON array']] },
  'ips: not strings': { value: el('"ips":[1]'), errors: [['[0].ips[0]', 'Invalid value', 'must be a string']] },
  'ips: duplicate': { value: el('"ips":["10.0.0.1","10.0.0.1"]'), errors: [['[0].ips[1]', 'Duplicate value', '']] },
  // mac
  'mac colon, hyphen and dot forms (Go accepts all three); kept as sent': {
    value: '[{"name":"a","mac":"02:23:45:67:89:0A"},{"name":"b","mac":"02-23-45-67-89-0B"},{"name":"c","mac":"0223.4567.890c"}]',
    want: [
      { name: 'a', namespace: 'pod-ns', mac: '02:23:45:67:89:0A' },
      { name: 'b', namespace: 'pod-ns', mac: '02-23-45-67-89-0B' },
      { name: 'c', namespace: 'pod-ns', mac: '0223.4567.890c' },
    ],
  },
  'mac too short': { value: el('"mac":"02:00"'), errors: [['[0].mac', 'Invalid value', '6-byte Ethernet MAC']] },
  'mac mixed separators': { value: el('"mac":"02:23-45:67:89:01"'), errors: [['[0].mac', 'Invalid value', '6-byte Ethernet MAC']] },
  'mac bare hex': { value: el('"mac":"022345678901"'), errors: [['[0].mac', 'Invalid value', '6-byte Ethernet MAC']] },
  'mac with spaces': { value: el('"mac":" 02:23:45:67:89:01"'), errors: [['[0].mac', 'Invalid value', '6-byte Ethernet MAC']] },
  // Multus runs the pod; only a plugin that sets the MAC fails, which the NAD chain tells (admission).
  'mac of 8 bytes: spec says no, Multus says yes: warning, kept': {
    value: el('"mac":"02:23:45:67:89:01:02:03"'),
    want: [{ name: 'n', namespace: 'pod-ns', mac: '02:23:45:67:89:01:02:03' }],
    warnings: [['[0].mac', 'Invalid value', /spec allows .*Multus accepts it/]],
  },
  'mac of 20 bytes (IPoIB) with the link-local prefix': {
    value: el('"mac":"00:00:00:00:fe:80:00:00:00:00:00:00:02:00:5e:10:00:00:00:01"'),
    want: [{ name: 'n', namespace: 'pod-ns', mac: '00:00:00:00:fe:80:00:00:00:00:00:00:02:00:5e:10:00:00:00:01' }],
  },
  'mac of 20 bytes with another subnet prefix: warning': {
    value: el('"mac":"00:00:00:00:fe:81:00:00:00:00:00:00:02:00:5e:10:00:00:00:01"'),
    warnings: [['[0].mac', 'Invalid value', 'only the last 8 bytes']],
  },
  'multicast mac: warning (Linux cannot set it)': {
    value: el('"mac":"03:00:00:00:00:01"'),
    warnings: [['[0].mac', 'Invalid value', 'multicast']],
  },
  'broadcast mac: warning': { value: el('"mac":"ff:ff:ff:ff:ff:ff"'), warnings: [['[0].mac', 'Invalid value', 'broadcast']] },
  'all-zero mac: warning': { value: el('"mac":"00:00:00:00:00:00"'), warnings: [['[0].mac', 'Invalid value', 'all-zero']] },
  'mac not a string': { value: el('"mac":2'), errors: [['[0].mac', 'Invalid value', 'must be a string']] },
  // infiniband-guid
  'guid colon form': {
    value: el('"infiniband-guid":"C2:11:22:33:44:55:66:77"'),
    want: [{ name: 'n', namespace: 'pod-ns', 'infiniband-guid': 'C2:11:22:33:44:55:66:77' }],
  },
  'guid hyphen form: Multus accepts, ib-sriov-cni does not': {
    value: el('"infiniband-guid":"c2-11-22-33-44-55-66-77"'),
    errors: [['[0].infiniband-guid', 'Invalid value', 'ib-sriov-cni does not']],
  },
  'guid dot form': {
    value: el('"infiniband-guid":"c211.2233.4455.6677"'),
    errors: [['[0].infiniband-guid', 'Invalid value', 'colon form']],
  },
  'guid of 6 bytes': {
    value: el('"infiniband-guid":"02:23:45:67:89:01"'),
    errors: [['[0].infiniband-guid', 'Invalid value', 'must be 8 bytes, not 6']],
  },
  'guid all-zero': {
    value: el('"infiniband-guid":"00:00:00:00:00:00:00:00"'),
    errors: [['[0].infiniband-guid', 'Invalid value', 'all-zero']],
  },
  'guid all-FF (ib-sriov-cni accepts an explicit one): warning, kept': {
    value: el('"infiniband-guid":"FF:FF:FF:FF:FF:FF:FF:FF"'),
    want: [{ name: 'n', namespace: 'pod-ns', 'infiniband-guid': 'FF:FF:FF:FF:FF:FF:FF:FF' }],
    warnings: [['[0].infiniband-guid', 'Invalid value', 'reset']],
  },
  // default-route
  'default-route v4 and v6': {
    value: el('"default-route":["10.0.0.1","fd00::1"]'),
    want: [{ name: 'n', namespace: 'pod-ns', 'default-route': ['10.0.0.1', 'fd00::1'] }],
  },
  'default-route two IPv4 gateways (Multus rejects)': {
    value: el('"default-route":["10.0.0.1","10.0.0.2"]'),
    errors: [['[0].default-route[1]', 'Invalid value', 'only one IPv4 gateway']],
  },
  'default-route: IPv4 and IPv4-mapped IPv6 are two IPv4 gateways for Multus': {
    value: el('"default-route":["10.0.0.1","::FFFF:0a00:0002"]'),
    errors: [['[0].default-route[1]', 'Invalid value', 'only one IPv4 gateway']],
  },
  'default-route: an IPv6 gateway that only looks mapped is IPv6': {
    value: el('"default-route":["10.0.0.1","::ffff:0:a00:2","1::ffff:a00:2"]'),
    errors: [['[0].default-route[2]', 'Invalid value', 'only one IPv6 gateway']],
  },
  'default-route with a CIDR': {
    value: el('"default-route":["10.0.0.1/24"]'),
    errors: [['[0].default-route[0]', 'Invalid value', 'IPv4 or IPv6 address']],
  },
  'default-route empty: warning': { value: el('"default-route":[]'), warnings: [['[0].default-route', 'Invalid value', 'no gateway']] },
  // portMappings
  portMappings: {
    value: el(
      '"portMappings":[{"hostPort":8080,"containerPort":80,"protocol":"tcp"},{"hostPort":53,"containerPort":53,"protocol":"UDP","hostIP":"10.0.0.1"}]',
    ),
    want: [
      {
        name: 'n',
        namespace: 'pod-ns',
        portMappings: [
          { hostPort: 8080, containerPort: 80, protocol: 'tcp' },
          { hostPort: 53, containerPort: 53, protocol: 'UDP', hostIP: '10.0.0.1' },
        ],
      },
    ],
  },
  'portMappings: 8080.0 and 1e3 are not integers (Go)': {
    value: el('"portMappings":[{"hostPort":8080.0,"containerPort":1e3}]'),
    errors: [
      ['[0].portMappings[0].hostPort', 'Invalid value', 'must be an integer written without'],
      ['[0].portMappings[0].containerPort', 'Invalid value', 'must be an integer written without'],
    ],
  },
  // A non-integer marks its key failed: left out of the selection, and the key's other rules skipped
  // (here bandwidth's "rate without a burst" warning).
  'bandwidth: 1000.0 is not an integer; the key is left out and not judged further': {
    value: el('"bandwidth":{"ingressRate":1000.0}'),
    want: [{ name: 'n', namespace: 'pod-ns' }],
    errors: [['[0].bandwidth.ingressRate', 'Invalid value', 'must be an integer written without']],
  },
  'portMappings: fraction, range, protocol, hostIP': {
    value: el(
      '"portMappings":[{"hostPort":80.5,"containerPort":0,"protocol":"icmp","hostIP":"10.0.0.1/24"},{"hostPort":65536,"containerPort":-1}]',
    ),
    errors: [
      ['[0].portMappings[0].hostPort', 'Invalid value', 'must be an integer written without'],
      ['[0].portMappings[0].containerPort', 'Invalid value', 'between 1 and 65535'],
      ['[0].portMappings[0].protocol', 'Unsupported value', 'TCP'],
      ['[0].portMappings[0].hostIP', 'Invalid value', 'IPv4 or IPv6'],
      ['[0].portMappings[1].hostPort', 'Invalid value', 'between 1 and 65535'],
      ['[0].portMappings[1].containerPort', 'Invalid value', 'between 1 and 65535'],
    ],
  },
  'portMappings: missing ports': {
    value: el('"portMappings":[{}]'),
    errors: [
      ['[0].portMappings[0].hostPort', 'Required value', ''],
      ['[0].portMappings[0].containerPort', 'Required value', ''],
    ],
  },
  'portMappings: port as a string': {
    value: el('"portMappings":[{"hostPort":"80","containerPort":80}]'),
    errors: [['[0].portMappings[0].hostPort', 'Invalid value', 'must be an integer']],
  },
  'portMappings: unknown key warns': {
    value: el('"portMappings":[{"hostPort":80,"containerPort":80,"proto":"tcp"}]'),
    warnings: [['[0].portMappings[0].proto', 'Invalid value', 'unknown key']],
  },
  // bandwidth
  bandwidth: {
    value: el('"bandwidth":{"ingressRate":1000,"ingressBurst":2000,"egressRate":3000,"egressBurst":4000}'),
    want: [{ name: 'n', namespace: 'pod-ns', bandwidth: { ingressRate: 1000, ingressBurst: 2000, egressRate: 3000, egressBurst: 4000 } }],
  },
  'bandwidth: burst needs its rate': {
    value: el('"bandwidth":{"egressBurst":10}'),
    errors: [['[0].bandwidth.egressRate', 'Required value', 'egressBurst needs egressRate']],
  },
  'bandwidth: rate without burst warns (the bandwidth plugin rejects it)': {
    value: el('"bandwidth":{"ingressRate":10}'),
    warnings: [['[0].bandwidth.ingressRate', 'Invalid value', 'without ingressBurst']],
  },
  'bandwidth: negative, not integer': {
    value: el('"bandwidth":{"ingressRate":-1,"ingressBurst":1.5e3}'),
    errors: [
      ['[0].bandwidth.ingressRate', 'Invalid value', 'between 0 and'],
      ['[0].bandwidth.ingressBurst', 'Invalid value', 'must be an integer written without'],
    ],
  },
  'bandwidth: 0 means no limit to the bandwidth plugin': {
    value: el('"bandwidth":{"ingressRate":0,"ingressBurst":0,"egressRate":0,"egressBurst":0}'),
    want: [{ name: 'n', namespace: 'pod-ns', bandwidth: { ingressRate: 0, ingressBurst: 0, egressRate: 0, egressBurst: 0 } }],
  },
  'bandwidth: not an object': { value: el('"bandwidth":[]'), errors: [['[0].bandwidth', 'Invalid value', 'must be a JSON object']] },
  // cni-args, ipam-claim-reference, deviceID, extensions
  'cni-args: any object, numbers as written': {
    value: el('"cni-args":{"mode":"l2","mtu":9000.5,"deep":{"list":[1,"a",null,true]}}'),
    want: [{ name: 'n', namespace: 'pod-ns', 'cni-args': { mode: 'l2', mtu: 9000.5, deep: { list: [1, 'a', null, true] } } }],
  },
  'cni-args: not an object': { value: el('"cni-args":"x=y"'), errors: [['[0].cni-args', 'Invalid value', 'must be a JSON object']] },
  'cni-args: number out of float64 range (Go cannot read it)': {
    value: el('"cni-args":{"a":1e400}'),
    errors: [['[0].cni-args.a', 'Invalid value', 'out of range']],
  },
  'number out of range where Go decodes it (bandwidth, portMappings): error': {
    value: el('"bandwidth":{"ingressRate":1e400,"ingressBurst":1},"portMappings":[{"hostPort":-1e999,"containerPort":80}]'),
    errors: [
      ['[0].bandwidth.ingressRate', 'Invalid value', 'out of range'],
      ['[0].portMappings[0].hostPort', 'Invalid value', 'out of range'],
    ],
  },
  'number out of range under keys Go skips (unknown, dotted): warning; the dotted key is left out': {
    value: el('"vlan":1e400,"example.com/x":{"a":[1e400]},"x.io":1,"ipam-claim-reference":1e999'),
    want: [{ name: 'n', namespace: 'pod-ns', 'x.io': 1 }],
    warnings: [
      ['[0].vlan', 'Invalid value', 'unknown key'],
      ['[0].vlan', 'Invalid value', 'Go (Multus) skips this key'],
      ['[0].example.com/x.a[0]', 'Invalid value', 'Go (Multus) skips this key'],
      ['[0].ipam-claim-reference', 'Invalid value', 'Go (Multus) skips this key'],
      ['[0].ipam-claim-reference', 'Invalid value', 'must be a string'],
    ],
  },
  'ipam-claim-reference': {
    value: el('"ipam-claim-reference":"my-claim"'),
    want: [{ name: 'n', namespace: 'pod-ns', 'ipam-claim-reference': 'my-claim' }],
  },
  // Multus's own selection type has no ipam-claim-reference: it ignores the key.
  'ipam-claim-reference with ips (spec forbids; Multus ignores the claim): warning, both kept': {
    value: el('"ipam-claim-reference":"my-claim","ips":["10.0.0.1"]'),
    want: [{ name: 'n', namespace: 'pod-ns', ips: ['10.0.0.1'], 'ipam-claim-reference': 'my-claim' }],
    warnings: [['[0].ips', 'Invalid value', 'ipam-claim-reference']],
  },
  'ipam-claim-reference invalid name: warning, kept': {
    value: el('"ipam-claim-reference":"My_Claim"'),
    want: [{ name: 'n', namespace: 'pod-ns', 'ipam-claim-reference': 'My_Claim' }],
    warnings: [['[0].ipam-claim-reference', 'Invalid value', /RFC 1123 subdomain.*Multus ignores this key/]],
  },
  'ipam-claim-reference not a string: warning, left out': {
    value: el('"ipam-claim-reference":["a"]'),
    want: [{ name: 'n', namespace: 'pod-ns' }],
    warnings: [['[0].ipam-claim-reference', 'Invalid value', 'must be a string']],
  },
  deviceID: { value: el('"deviceID":"0000:03:00.1"'), want: [{ name: 'n', namespace: 'pod-ns', deviceID: '0000:03:00.1' }] },
  'deviceID not a string': { value: el('"deviceID":3'), errors: [['[0].deviceID', 'Invalid value', 'must be a string']] },
  'reverse-DNS extension keys are kept as sent': {
    value: el('"example.com/vlan":{"id":7},"x.io":1'),
    want: [{ name: 'n', namespace: 'pod-ns', 'example.com/vlan': { id: 7 }, 'x.io': 1 }],
  },
  // keys as Go reads them
  'unknown dot-less key: warning, dropped': {
    value: el('"vlan":7'),
    want: [{ name: 'n', namespace: 'pod-ns' }],
    warnings: [['[0].vlan', 'Invalid value', 'reserved by the spec']],
  },
  'key matched only case-insensitively: honoured (as Multus), warning': {
    value: '[{"Name":"n","MAC":"02:00:00:00:00:01","Default-Route":["10.0.0.1"]}]',
    want: [{ name: 'n', namespace: 'pod-ns', mac: '02:00:00:00:00:01', 'default-route': ['10.0.0.1'] }],
    warnings: [
      ['[0].Name', 'Invalid value', 'only case-insensitively'],
      ['[0].MAC', 'Invalid value', 'only case-insensitively'],
      ['[0].Default-Route', 'Invalid value', 'only case-insensitively'],
    ],
  },
  "Go's Unicode folding: long s and Kelvin sign": {
    value: '[{"name":"n","namespace":"x","de\u212Aice":1,"namespace":"y"}]'.replace('de\u212Aice', 'na\u017Fe'),
    want: [{ name: 'n', namespace: 'y' }],
    warnings: [
      ['[0].na\u017Fe', 'Invalid value', 'unknown key'],
      ['[0].namespace', 'Duplicate value', 'more than once'],
    ],
  },
  'long s folds to s': {
    value: '[{"name":"n","namespace":"x","name\u017Fpace":"y"}]',
    want: [{ name: 'n', namespace: 'y' }],
    warnings: [
      ['[0].name\u017Fpace', 'Invalid value', 'only case-insensitively'],
      ['[0].namespace', 'Duplicate value', 'name the same key'],
    ],
  },
  'dotless i does not fold to i (Go does not either)': {
    value: '[{"name":"n","\u0131nterface":"x"}]',
    warnings: [['[0].\u0131nterface', 'Invalid value', 'unknown key']],
  },
  // Go's decoder: the last value wins, but a repeated map or struct is decoded into the one there.
  'duplicate key: warning, the last one is kept (as Go)': {
    value: '[{"name":"a","name":"b"}]',
    want: [{ name: 'b', namespace: 'pod-ns' }],
    warnings: [['[0].name', 'Duplicate value', 'Multus uses the last value']],
  },
  'duplicate key in different case: warning, the last one is kept': {
    value: '[{"name":"n","mac":"02:00:00:00:00:01","Mac":"02:00:00:00:00:02"}]',
    want: [{ name: 'n', namespace: 'pod-ns', mac: '02:00:00:00:00:02' }],
    warnings: [
      ['[0].Mac', 'Invalid value', 'only case-insensitively'],
      ['[0].mac', 'Duplicate value', 'name the same key'],
    ],
  },
  'duplicate key by case folding, in document order: mac, MAC, mac keeps the third': {
    value: '[{"name":"n","mac":"02:00:00:00:00:01","MAC":"02:00:00:00:00:02","mac":"02:00:00:00:00:03"}]',
    want: [{ name: 'n', namespace: 'pod-ns', mac: '02:00:00:00:00:03' }],
    warnings: [
      ['[0].MAC', 'Invalid value', 'only case-insensitively'],
      ['[0].mac', 'Duplicate value', 'name the same key'],
      ['[0].mac', 'Duplicate value', 'more than once'],
    ],
  },
  'duplicate key nested in cni-args: warning, the last one is kept': {
    value: el('"cni-args":{"a":1,"a":2}'),
    want: [{ name: 'n', namespace: 'pod-ns', 'cni-args': { a: 2 } }],
    warnings: [['[0].cni-args.a', 'Duplicate value', 'more than once']],
  },
  'cni-args twice: merged one level, as Go decodes into the map it has': {
    value: el('"cni-args":{"x":1,"y":{"p":1}},"CNI-Args":{"y":{"q":2},"z":3}'),
    want: [{ name: 'n', namespace: 'pod-ns', 'cni-args': { x: 1, y: { q: 2 }, z: 3 } }],
    warnings: [
      ['[0].CNI-Args', 'Invalid value', 'only case-insensitively'],
      ['[0].cni-args', 'Duplicate value', 'name the same key'],
    ],
  },
  'bandwidth twice: fields merged (a struct); null in between resets': {
    value:
      '[{"name":"a","bandwidth":{"ingressRate":10,"ingressBurst":20},"bandwidth":{"egressRate":30,"egressBurst":40,"IngressRate":11}},{"name":"b","bandwidth":{"ingressRate":10,"ingressBurst":20},"bandwidth":null,"bandwidth":{"egressRate":30,"egressBurst":40}}]',
    want: [
      { name: 'a', namespace: 'pod-ns', bandwidth: { ingressRate: 11, ingressBurst: 20, egressRate: 30, egressBurst: 40 } },
      { name: 'b', namespace: 'pod-ns', bandwidth: { egressRate: 30, egressBurst: 40 } },
    ],
    warnings: [
      ['[0].bandwidth', 'Duplicate value', 'more than once'],
      ['[0].bandwidth.IngressRate', 'Invalid value', 'only case-insensitively'],
      ['[1].bandwidth', 'Duplicate value', 'more than once'],
      ['[1].bandwidth', 'Duplicate value', 'more than once'],
    ],
  },
  'portMappings twice: merged element by element, the later length; ips replaced': {
    value: el(
      '"portMappings":[{"hostPort":80,"containerPort":8080},{"hostPort":81,"containerPort":8081}],"portMappings":[{"hostPort":90}],"ips":["10.0.0.1","10.0.0.2"],"ips":["10.0.0.3"]',
    ),
    want: [{ name: 'n', namespace: 'pod-ns', ips: ['10.0.0.3'], portMappings: [{ hostPort: 90, containerPort: 8080 }] }],
    warnings: [
      ['[0].portMappings', 'Duplicate value', 'more than once'],
      ['[0].ips', 'Duplicate value', 'more than once'],
    ],
  },
  'an earlier value of a repeated key that Go cannot decode fails the annotation': {
    value:
      '[{"name":"a","mac":5,"mac":"02:00:00:00:00:01"},{"name":"b","default-route":["10.0.0.1/24"],"default-route":["10.0.0.1"]},{"name":"c","cni-args":"x","cni-args":{}}]',
    errors: [
      ['[0].mac', 'Invalid value', /earlier value .*must be a JSON string/],
      ['[1].default-route', 'Invalid value', /earlier value .*"10\.0\.0\.1\/24" is not an IP address/],
      ['[2].cni-args', 'Invalid value', /earlier value .*must be a JSON object/],
    ],
    warnings: [
      ['[0].mac', 'Duplicate value', 'more than once'],
      ['[1].default-route', 'Duplicate value', 'more than once'],
      ['[2].cni-args', 'Duplicate value', 'more than once'],
    ],
  },
  '__proto__ is data, not a prototype': {
    value: el('"cni-args":{"__proto__":{"polluted":1}}'),
    want: [{ name: 'n', namespace: 'pod-ns', 'cni-args': JSON.parse('{"__proto__":{"polluted":1}}') }],
  },
  // every problem, across elements
  'errors in one element do not stop the others': {
    value: '[{"name":"a","mac":"x"},{"name":"b","ips":["y"]},{"mac":"02:00:00:00:00:01"}]',
    errors: [
      ['[0].mac', 'Invalid value', '6-byte'],
      ['[1].ips[0]', 'Invalid value', 'IPv4 or IPv6'],
      ['[2].name', 'Required value', ''],
    ],
  },
};

t.test('extended (JSON) form: every key by its rule', async (t) => {
  for (const [name, c] of Object.entries(cases)) {
    const r = parseNetworks(c.value, { namespace: 'pod-ns' });
    if (c.want) t.same(JSON.parse(serializeSelections(r.networks)), c.want, `${name}: selections`);
    expectProblems(t, r.errors, c.errors ?? [], `${name}: errors`);
    expectProblems(t, r.warnings, c.warnings ?? [], `${name}: warnings`);
  }
});

t.test('the message names the field and the value, the way kubectl shows field errors', async (t) => {
  const { renderError } = await import('../../src/field/index.js');
  const r = parseNetworks('[{"name":"a"},{"name":"b","mac":"02:00"}]', { namespace: 'x' });
  t.match(
    renderError(r.errors[0]!),
    /^metadata\.annotations\[k8s\.v1\.cni\.cncf\.io\/networks\]\[1\]\.mac: Invalid value: "02:00": must be /,
  );
});

t.test('a non-integer is shown as the user wrote it, not as the number JSON.parse would give', async (t) => {
  const { errors } = parseNetworks(el('"portMappings":[{"hostPort":8080.0,"containerPort":1e3}]'), { namespace: 'pod-ns' });
  t.same(
    errors.map((e) => e.value),
    ['8080.0', '1e3'],
  );
});

t.test('keys named like Object.prototype members are plain keys (found by the round-trip property)', async (t) => {
  for (const key of ['toString', '__proto__', 'constructor', 'hasOwnProperty']) {
    for (const value of [
      `[{"name":"n","${key}":5e-324}]`,
      `[{"name":"n","${key}":1e400}]`,
      `[{"name":"n","${key}":{"x":1.5}}]`,
      `[{"name":"n","portMappings":[{"hostPort":80,"containerPort":80,"${key}":1.5}]}]`,
      `[{"name":"n","bandwidth":{"ingressRate":10,"${key}":2.5}}]`,
    ]) {
      let result: ReturnType<typeof parseNetworks> | undefined;
      t.doesNotThrow(() => (result = parseNetworks(value, { namespace: 'pod-ns' })), value);
      t.same(
        result?.networks.map((n) => n.selection.name),
        ['n'],
        `${value}: the element is still read`,
      );
      t.ok(result?.warnings.some((w) => w.reason.length > 0) || (result?.errors.length ?? 0) > 0, `${value}: the odd key is reported`);
    }
  }
});
