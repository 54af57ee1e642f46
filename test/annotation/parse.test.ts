// The parser around the elements: format detection, limits on what is listed, messages that
// point into the text, the default-network annotation, and the rules across elements.
import t from 'tap';
import { gatewayConflicts, MAX_PROBLEMS, parseDefaultNetwork, parseNetworks } from '../../src/annotation/index.js';
import { checkAcross } from '../../src/annotation/cross.js';
import type { FieldError } from '../../src/field/index.js';
import { BASE } from './helpers.js';

const DEFAULT_BASE = 'metadata.annotations[v1.multus-cni.io/default-network]';
const opts = { namespace: 'pod' };
const brief = (list: FieldError[]) => list.map((e) => [e.path, e.type, e.value, e.reason]);
const repeat = (n: number, f: (i: number) => string): string => Array.from({ length: n }, (_, i) => f(i)).join(',');

t.test('past MAX_PROBLEMS, one more entry counts the rest', async (t) => {
  t.equal(MAX_PROBLEMS, 100);
  const unknown = parseNetworks(`[{"name":"n",${repeat(105, (i) => `"k${i}":1`)}}]`, opts);
  t.equal(unknown.warnings.length, 101, 'unknown keys: 100 listed and the count');
  t.same(unknown.warnings[100], { path: BASE, type: 'Too many', value: 5, reason: '5 more warnings not listed (only the first 100 are)' });
  t.same(unknown.errors, []);

  // Notes of one kind under one key beyond 100 are counted, not built: duplicates are warnings,
  // numbers out of range errors under a key Go decodes and warnings under one it skips.
  const dups = parseNetworks(`[{"name":"n",${repeat(103, () => '"a.b":1')}}]`, opts);
  t.equal(dups.warnings.length, 101);
  t.same(dups.warnings[100], { path: BASE, type: 'Too many', value: 2, reason: '2 more warnings not listed (only the first 100 are)' });

  const decoded = parseNetworks(`[{"name":"n","ips":[${repeat(102, () => '1e400')}]}]`, opts);
  t.equal(decoded.errors.length, 101);
  t.same(decoded.errors[99], {
    path: `${BASE}[0].ips[99]`,
    type: 'Invalid value',
    value: '1e400',
    reason: 'number out of range: Go (Multus) cannot read it',
  });
  // 2 counted out-of-range notes, and the type errors of ips[100] and ips[101] that did not fit.
  t.same(decoded.errors[100], { path: BASE, type: 'Too many', value: 4, reason: '4 more errors not listed (only the first 100 are)' });
  t.same(decoded.warnings, []);

  const skipped = parseNetworks(`[{"name":"n","x.y":[${repeat(102, () => '1e400')}]}]`, opts);
  t.same(skipped.errors, []);
  t.equal(skipped.warnings.length, 101);
  t.same(skipped.warnings[100], { path: BASE, type: 'Too many', value: 2, reason: '2 more warnings not listed (only the first 100 are)' });
  t.same(
    skipped.networks.map((x) => x.selection),
    [{ name: 'n', namespace: 'pod' }],
    'the unreadable extension is left out',
  );

  // Fractions are a problem only in integer fields, so they are never counted.
  const fractions = parseNetworks(`[{"name":"n","x.y":[${repeat(102, () => '1.5')}]}]`, opts);
  t.same([fractions.errors, fractions.warnings], [[], []]);
});

t.test('the whole value: not a string, blank, a leading comma, not a list', async (t) => {
  const notText = parseNetworks(7 as unknown as string, opts);
  t.equal(notText.format, 'json');
  t.same(brief(notText.errors), [[BASE, 'Invalid value', 7, 'must be a string']]);
  t.same(brief(parseNetworks(' ', opts).errors), [
    [
      BASE,
      'Invalid value',
      ' ',
      'blank: Multus reads it as one network with an empty name, and the pod fails to start (remove the annotation, or set it to "", for no attachments)',
    ],
  ]);
  const comma = parseNetworks(',a', opts);
  t.same(brief(comma.errors), [
    [
      `${BASE}[0]`,
      'Invalid value',
      '',
      'empty list item (look for a doubled or trailing comma); Multus would accept it and the pod would then fail to start',
    ],
  ]);
  t.same(
    comma.networks.map((x) => [x.index, x.selection.name]),
    [[1, 'a']],
  );
  t.same(brief(parseNetworks('"x"', opts).errors), [[BASE, 'Invalid value', '"x"', 'must be a JSON array of objects']]);
});

t.test('at most MAX_ELEMENTS elements', async (t) => {
  t.same(
    parseNetworks(
      repeat(1000, () => 'a'),
      opts,
    ).errors,
    [],
    '1000 is the limit',
  );
  const over = parseNetworks(
    repeat(1001, () => 'a'),
    opts,
  );
  t.same(
    over.errors.map((e) => [e.path, e.type, e.value]),
    [[BASE, 'Too many', 1001]],
  );
});

t.test('a syntax error quotes ten characters either side of it', async (t) => {
  t.same(brief(parseNetworks('[{"name":"a",}]', opts).errors), [
    [
      BASE,
      'Invalid value',
      '[{"name":"a",}]',
      'invalid JSON at offset 13 (near "name\\":\\"a\\",}]"): unexpected character "}", expected a string key',
    ],
  ]);
  const long = '[{"name":"abcdefghijklmnop",x,"zzzzzzzzzzzzzzz":1}]';
  t.same(
    parseNetworks(long, opts).errors[0]?.reason,
    'invalid JSON at offset 28 (near "ijklmnop\\",x,\\"zzzzzzz"): unexpected character "x", expected a string key',
  );
});

t.test('the default-network annotation', async (t) => {
  t.same(
    brief(parseDefaultNetwork('{"name":"a"}').errors),
    [
      [
        DEFAULT_BASE,
        'Invalid value',
        '{"name":"a"}',
        'must be a JSON array of objects: wrap a single object in [ ] (Multus rejects a bare object too)',
      ],
    ],
    'unreadable: no count to complain about',
  );
  t.same(parseDefaultNetwork('a').warnings, [], 'no interface: nothing to say');
  t.same(brief(parseDefaultNetwork('[{"name":"a","interface":"lo"}]').errors), [
    [`${DEFAULT_BASE}[0].interface`, 'Invalid value', 'lo', 'collides with lo, the loopback interface'],
  ]);
  t.same(parseDefaultNetwork('[{"name":"a","interface":"eth0"}]').errors, [], 'eth0 is its own');
});

t.test('checkAcross: eth0 is reserved unless told it is the default network', async (t) => {
  const errors: FieldError[] = [];
  const out = { error: (e: FieldError) => errors.push(e), warning: () => undefined };
  checkAcross(
    {
      count: 1,
      interfaces: new Map([[0, 'eth0']]),
      networks: [{ index: 0, path: 'p[0]', selection: { name: 'a', namespace: 'n', interface: 'eth0' } }],
    },
    out,
  );
  t.same(brief(errors), [['p[0].interface', 'Invalid value', 'eth0', 'collides with eth0, the interface of the cluster default network']]);
});

t.test('across elements: default-route, host ports, GUIDs, addresses', async (t) => {
  t.same(brief(parseNetworks('[{"name":"a","default-route":["10.0.0.1"]},{"name":"b","default-route":["fd00::1"]}]', opts).warnings), [
    [
      `${BASE}[1].default-route`,
      'Invalid value',
      ['fd00::1'],
      'element [0] sets default-route too: the spec allows it on one element; Multus accepts at most one IPv4 and one IPv6 gateway in total, as here',
    ],
  ]);
  const port = (ip: string) => `{"hostPort":80,"containerPort":80,"hostIP":"${ip}"}`;
  t.same(
    parseNetworks(`[{"name":"a","portMappings":[${port('10.0.0.1')}]},{"name":"b","portMappings":[${port('10.0.0.2')}]}]`, opts).warnings,
    [],
    'other host IPs',
  );
  t.same(
    brief(
      parseNetworks(`[{"name":"a","portMappings":[${port('10.0.0.1')}]},{"name":"b","portMappings":[${port('10.0.0.1')}]}]`, opts).warnings,
    ),
    [
      [
        `${BASE}[1].portMappings[0].hostPort`,
        'Duplicate value',
        80,
        `${BASE}[0].portMappings[0].hostPort already maps this host port and protocol; the first mapping wins`,
      ],
    ],
  );
  // One element mapping a host port twice: the same one portmap chain, the first rule wins. The
  // warning does not depend on whether the annotation has other elements.
  const twice = `{"name":"a","portMappings":[${port('10.0.0.1')},{"hostPort":80,"containerPort":81,"protocol":"tcp","hostIP":"10.0.0.1"}]}`;
  const twiceWarning = [
    `${BASE}[0].portMappings[1].hostPort`,
    'Duplicate value',
    80,
    `${BASE}[0].portMappings[0].hostPort already maps this host port and protocol; the first mapping wins`,
  ];
  t.same(brief(parseNetworks(`[${twice}]`, opts).warnings), [twiceWarning], 'twice in the only element');
  t.same(brief(parseNetworks(`[${twice},{"name":"b"}]`, opts).warnings), [twiceWarning], 'twice in one of two elements');
  t.same(
    brief(
      parseNetworks(
        '[{"name":"a","infiniband-guid":"C2:11:22:33:44:55:66:77"},{"name":"b","infiniband-guid":"c2:11:22:33:44:55:66:77"}]',
        opts,
      ).warnings,
    ),
    [[`${BASE}[1].infiniband-guid`, 'Duplicate value', 'c2:11:22:33:44:55:66:77', 'element [0] requests the same address']],
  );
  t.same(
    parseNetworks('[{"name":"a","ips":["10.0.0.1/24","10.0.0.1/32"]},{"name":"b"}]', opts).warnings,
    [],
    'one element repeating its own address is not two elements',
  );
});

t.test("gatewayConflicts: only against the default network's gateways", async (t) => {
  const v6 = parseNetworks('[{"name":"a","default-route":["fd00::2"]},{"name":"b","default-route":["fd00::3"]}]', opts).networks;
  t.same(
    gatewayConflicts(v6, parseDefaultNetwork('[{"name":"d","default-route":["10.0.0.1"]}]').networks),
    [],
    "another family; the pod's own clash is not this function's",
  );
  t.same(brief(gatewayConflicts(v6.slice(0, 1), parseDefaultNetwork('[{"name":"d","default-route":["fd00::1"]}]').networks)), [
    [
      `${BASE}[0].default-route[0]`,
      'Invalid value',
      'fd00::2',
      `Multus allows one IPv6 default-route gateway in total, over both annotations ("multus does not support ECMP for default-route"): ${DEFAULT_BASE}[0].default-route[0] is one already`,
    ],
  ]);
});

t.test('netN names: only net<position+1> in decimal, without leading zeros', async (t) => {
  // Each would be element [0]'s automatic name if read as a number; element [0] names no interface.
  for (const name of ['net', 'net01', 'net1e0', 'net1.0', 'net1x', 'net0']) t.same(parseNetworks(`b,a@${name}`, opts).warnings, [], name);
  t.same(
    parseNetworks('b,a@net1', opts).warnings.map((w) => w.path),
    [`${BASE}[1].interface`],
    "net1 is element [0]'s",
  );
  const ten = parseNetworks('a@net10,b@net9,c,d,e,f,g,h,i,j', opts);
  t.same(
    ten.warnings.map((w) => [w.path, w.reason.slice(0, 62)]),
    [
      [`${BASE}[0].interface`, 'may collide with net10, the name Multus gives element [9], whi'],
      [`${BASE}[1].interface`, 'may collide with net9, the name Multus gives element [8], whic'],
    ],
  );
});
