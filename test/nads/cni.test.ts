import t from 'tap';
import fc from 'fast-check';
import { renderError } from '../../src/field/index.js';
import { analyzeCniConfig, summarizeCniConfig } from '../../src/nads/index.js';
import { jsonSyntaxReason } from '../../src/nads/cni.js';
import { jsonErrorOffset, withoutLineAndColumn } from '../../src/nads/json-position.js';

const j = (v: unknown): string => JSON.stringify(v);

t.test('summary: plugin types in order, union of capabilities declared true, cniVersion', async (t) => {
  const cases: Array<{
    name: string;
    config: string;
    want: { cniVersion?: string; pluginTypes: string[]; capabilities: string[] } | undefined;
  }> = [
    { name: 'empty config (read from the node)', config: '', want: undefined },
    { name: 'not JSON', config: '{', want: undefined },
    { name: 'not an object', config: '[]', want: undefined },
    { name: 'neither type nor plugins', config: j({ cniVersion: '1.0.0', name: 'x' }), want: undefined },
    {
      name: 'single config',
      config: j({ cniVersion: '0.3.1', name: 'n', type: 'ib-sriov', capabilities: { infinibandGUID: true, ips: false } }),
      want: { cniVersion: '0.3.1', pluginTypes: ['ib-sriov'], capabilities: ['infinibandGUID'] },
    },
    {
      name: 'conflist',
      config: j({
        cniVersion: '1.0.0',
        name: 'n',
        plugins: [
          { type: 'macvlan', capabilities: { ips: true } },
          { type: 'tuning', capabilities: { mac: true } },
          { type: 'portmap', capabilities: { portMappings: true } },
        ],
      }),
      want: { cniVersion: '1.0.0', pluginTypes: ['macvlan', 'tuning', 'portmap'], capabilities: ['ips', 'mac', 'portMappings'] },
    },
    {
      name: 'unknown capability keys are kept (a plugin may define its own)',
      config: j({ name: 'n', type: 'x', capabilities: { 'io.kubernetes.cri.pod-annotations': true } }),
      want: { pluginTypes: ['x'], capabilities: ['io.kubernetes.cri.pod-annotations'] },
    },
    {
      name: 'both type and plugins: the chain is the top-level config alone, as Multus runs it',
      config: j({
        cniVersion: '1.0.0',
        name: 'n',
        type: 'ipvlan',
        capabilities: { ips: true },
        plugins: [{ type: 'bridge', capabilities: { mac: true } }],
      }),
      want: { cniVersion: '1.0.0', pluginTypes: ['ipvlan'], capabilities: ['ips'] },
    },
    {
      name: 'conflist with a broken plugin keeps the readable ones',
      config: j({ cniVersion: '1.0.0', name: 'n', plugins: [{ type: 'sriov' }, 7, { type: 'tuning', capabilities: { mac: 'yes' } }] }),
      want: { cniVersion: '1.0.0', pluginTypes: ['sriov', 'tuning'], capabilities: [] },
    },
  ];
  for (const c of cases) {
    const s = summarizeCniConfig(c.config);
    if (c.want === undefined) t.equal(s, undefined, c.name);
    else
      t.same(
        s && { ...(s.cniVersion ? { cniVersion: s.cniVersion } : {}), pluginTypes: s.pluginTypes, capabilities: [...s.capabilities] },
        c.want,
        c.name,
      );
  }
});

t.test('config rules: errors and warnings, with paths into spec.config', async (t) => {
  const P = 'spec.config';
  const cases: Array<{ name: string; config: unknown; errors?: RegExp[]; warnings?: RegExp[] }> = [
    { name: 'valid conflist', config: { cniVersion: '1.0.0', name: 'n', plugins: [{ type: 'macvlan' }, { type: 'tuning' }] } },
    { name: 'valid single config', config: { cniVersion: '0.3.1', name: 'n', type: 'sriov' } },
    { name: 'not an object', config: '"just a string"', errors: [/^spec\.config: Invalid value: .*: must be a JSON object/] },
    {
      name: 'no type, no plugins',
      config: { cniVersion: '1.0.0', name: 'n' },
      errors: [/^spec\.config\.type: Required value: a CNI network configuration needs 'type' \(or 'plugins'/],
    },
    {
      name: 'type not a string',
      config: { cniVersion: '1.0.0', name: 'n', type: 3 },
      errors: [/^spec\.config\.type: Invalid value: 3: must be a string$/],
    },
    {
      name: 'type is a path',
      config: { cniVersion: '1.0.0', name: 'n', type: '/opt/cni/bin/macvlan' },
      errors: [/spec\.config\.type: Invalid value: "\/opt\/cni\/bin\/macvlan": must be a plugin binary name, not a path/],
    },
    {
      name: 'plugins not a list',
      config: { cniVersion: '1.0.0', name: 'n', plugins: {} },
      errors: [/^spec\.config\.plugins: Invalid value: \{\}: must be a list of plugin configuration objects$/],
    },
    {
      name: 'plugins empty',
      config: { cniVersion: '1.0.0', name: 'n', plugins: [] },
      errors: [/^spec\.config\.plugins: Required value: a configuration list needs at least one plugin$/],
    },
    {
      name: 'plugin not an object',
      config: { cniVersion: '1.0.0', name: 'n', plugins: ['macvlan'] },
      errors: [/^spec\.config\.plugins\[0\]: Invalid value: "macvlan": must be a plugin configuration object$/],
    },
    {
      name: 'plugin without type',
      config: { cniVersion: '1.0.0', name: 'n', plugins: [{ type: 'macvlan' }, { mtu: 1500 }] },
      errors: [/^spec\.config\.plugins\[1\]\.type: Required value/],
    },
    {
      name: 'unknown cniVersion',
      config: { cniVersion: '0.5.0', name: 'n', type: 'x' },
      errors: [
        /^spec\.config\.cniVersion: Unsupported value: "0\.5\.0": unknown CNI version; supported values: "0\.1\.0", "0\.2\.0", "0\.3\.0", "0\.3\.1", "0\.4\.0", "1\.0\.0", "1\.1\.0"$/,
      ],
    },
    {
      name: 'cniVersion not a string',
      config: { cniVersion: 1, name: 'n', type: 'x' },
      errors: [/^spec\.config\.cniVersion: Invalid value: 1: must be a string$/],
    },
    // An optional key is never "Required value": that type says the object is refused without it.
    {
      name: 'missing cniVersion',
      config: { name: 'n', type: 'x' },
      warnings: [/^spec\.config\.cniVersion: Invalid value: "": no cniVersion: libcni assumes 0\.1\.0/],
    },
    // Multus fills in the NAD's name (GetCNIConfigFromSpec): a working NAD, nothing to say (it was a warning).
    { name: 'missing name (Multus fills it in): no warning', config: { cniVersion: '1.0.0', plugins: [{ type: 'x' }] } },
    { name: 'missing name on a single config: no warning', config: { cniVersion: '1.0.0', type: 'x' } },
    {
      name: 'name not a string',
      config: { cniVersion: '1.0.0', name: 5, type: 'x' },
      errors: [/^spec\.config\.name: Invalid value: 5: must be a string$/],
    },
    {
      name: 'name with a space',
      config: { cniVersion: '1.0.0', name: 'my net', type: 'x' },
      errors: [/^spec\.config\.name: Invalid value: "my net": must start with a letter or digit/],
    },
    {
      name: 'capabilities not an object',
      config: { cniVersion: '1.0.0', name: 'n', type: 'x', capabilities: ['mac'] },
      errors: [/^spec\.config\.capabilities: Invalid value: \["mac"\]: must be an object mapping capability names to true or false$/],
    },
    {
      name: 'capability not a boolean',
      config: { cniVersion: '1.0.0', name: 'n', plugins: [{ type: 'tuning', capabilities: { mac: 'true' } }] },
      errors: [/^spec\.config\.plugins\[0\]\.capabilities\.mac: Invalid value: "true": must be true or false$/],
    },
    // Multus's LoadDelegateNetConf runs a list only when `type` is empty: the top-level config runs
    // alone and `plugins` is what is ignored (the old warning said the opposite).
    {
      name: 'both type and plugins: the top-level config runs, plugins is ignored',
      config: { cniVersion: '1.0.0', name: 'n', type: 'macvlan', plugins: [{ type: 'macvlan' }] },
      warnings: [
        /^spec\.config\.plugins: Invalid value: .*: ignored: with a top-level 'type' Multus runs that plugin alone; remove 'type' to run the list$/,
      ],
    },
    {
      name: 'both: plugins ignored, so its faults are no error',
      config: { cniVersion: '1.0.0', name: 'n', type: 'macvlan', plugins: [] },
      warnings: [/^spec\.config\.plugins: Invalid value: \[\]: ignored/],
    },
    {
      name: 'both, type not a string: Multus cannot decode it',
      config: { cniVersion: '1.0.0', name: 'n', type: 3, plugins: [{ type: 'macvlan' }] },
      errors: [/^spec\.config\.type: Invalid value: 3: must be a string$/],
      warnings: [/^spec\.config\.plugins: Invalid value: .*: ignored/],
    },
    { name: 'an empty type with plugins is a list', config: { cniVersion: '1.0.0', name: 'n', type: '', plugins: [{ type: 'macvlan' }] } },
    {
      name: 'a null type with plugins is a list',
      config: { cniVersion: '1.0.0', name: 'n', type: null, plugins: [{ mtu: 1 }] },
      errors: [/^spec\.config\.plugins\[0\]\.type: Required value/],
    },
    {
      name: 'chaining with cniVersion 0.2.0',
      config: { cniVersion: '0.2.0', name: 'n', plugins: [{ type: 'macvlan' }, { type: 'tuning' }] },
      warnings: [/^spec\.config\.cniVersion: Invalid value: "0\.2\.0": plugin chaining needs cniVersion 0\.3\.0 or later$/],
    },
    {
      name: 'tuning twice',
      config: { cniVersion: '1.0.0', name: 'n', plugins: [{ type: 'macvlan' }, { type: 'tuning' }, { type: 'tuning' }] },
      warnings: [/^spec\.config\.plugins\[2\]\.type: Invalid value: "tuning": also at plugins\[1\]/],
    },
    {
      name: 'two interface plugins',
      config: { cniVersion: '1.0.0', name: 'n', plugins: [{ type: 'macvlan' }, { type: 'ipvlan' }] },
      warnings: [/^spec\.config\.plugins\[1\]\.type: Invalid value: "ipvlan": plugins\[0\] \(macvlan\) already creates the interface/],
    },
    {
      name: 'an unknown plugin twice is left alone',
      config: { cniVersion: '1.0.0', name: 'n', plugins: [{ type: 'macvlan' }, { type: 'my-meta' }, { type: 'my-meta' }] },
    },
  ];
  for (const c of cases) {
    const text = typeof c.config === 'string' ? c.config : j(c.config);
    const got = analyzeCniConfig(text, P);
    const errors = got.errors.map(renderError);
    const warnings = got.warnings.map(renderError);
    t.equal(errors.length, (c.errors ?? []).length, `${c.name}: errors ${errors.join(' | ')}`);
    (c.errors ?? []).forEach((re, i) => t.match(errors[i], re, c.name));
    t.equal(warnings.length, (c.warnings ?? []).length, `${c.name}: warnings ${warnings.join(' | ')}`);
    (c.warnings ?? []).forEach((re, i) => t.match(warnings[i], re, c.name));
  }
});

t.test('JSON syntax errors name line and column', async (t) => {
  const cases: Array<[string, RegExp]> = [
    ['{\n  "cniVersion": "0.3.0"malFormattedJSON\n}', /invalid JSON at line 2, column 24: Expected ',' or '}' after property value$/],
    ['{"type": m}', /invalid JSON at line 1, column 10: Unexpected token 'm'$/],
    ['{"type": "x",}', /invalid JSON at line 1, column 14: Expected double-quoted property name$/],
    ['{"type": "x"', /invalid JSON at line 1, column 13: /],
    ['  ', /invalid JSON at line 1, column 3: unexpected end of input$/],
  ];
  for (const [text, re] of cases) {
    const got = analyzeCniConfig(text);
    t.equal(got.errors.length, 1, JSON.stringify(text));
    t.equal(got.errors[0]?.path, 'spec.config');
    t.match(got.errors[0]?.reason, re, JSON.stringify(text));
    t.equal(got.summary, undefined);
  }
});

t.test('property: the scanner finds an error exactly when JSON.parse fails', async (t) => {
  const accepts = (s: string): boolean => {
    try {
      JSON.parse(s);
      return true;
    } catch {
      return false;
    }
  };
  const mutated = fc
    .tuple(fc.json(), fc.nat(), fc.constantFrom('', ',', '}', ']', '"', ':', 'x', '\\', '\n', '{', '[', '-', '0', 'tru'))
    .map(([s, at, ins]) => {
      const i = at % (s.length + 1);
      return s.slice(0, i) + ins + s.slice(i);
    });
  fc.assert(
    fc.property(fc.oneof(fc.json(), mutated), (s) => (jsonErrorOffset(s) === undefined) === accepts(s)),
    { numRuns: 3000 },
  );
  t.pass('scanner agrees with JSON.parse');
});

t.test('deep nesting does not crash the scanner', async (t) => {
  const deep = '['.repeat(200_000);
  const got = analyzeCniConfig(deep);
  t.equal(got.errors.length, 1);
  t.match(got.errors[0]?.reason, /^JSON nested deeper than 64 levels: not a CNI configuration/);
});

t.test('a config too deep or with too many objects is refused before JSON.parse, in milliseconds', async (t) => {
  // 2,000,000 nested arrays: JSON.parse took over a second and hundreds of MB (issue 15, finding 2).
  const cases: Array<[string, string, RegExp]> = [
    ['2,000,000 levels', `${'['.repeat(2_000_000)}${']'.repeat(2_000_000)}`, /nested deeper than 64 levels/],
    ['1,000,000 empty objects', `{"type":"x","p":[${'{},'.repeat(1_000_000)}{}]}`, /more than 50000 objects and arrays/],
  ];
  for (const [name, text, reason] of cases) {
    const started = process.hrtime.bigint();
    const got = analyzeCniConfig(text);
    const ms = Number(process.hrtime.bigint() - started) / 1e6;
    t.match(got.errors[0]?.reason, reason, name);
    // Generous for a loaded machine; the scan itself takes a few ms (JSON.parse of the first took over 600 ms).
    t.ok(ms < 1000, `${name}: ${ms.toFixed(1)} ms`);
  }
  t.same(
    analyzeCniConfig(JSON.stringify({ cniVersion: '1.0.0', name: 'n', plugins: [{ type: 'a', x: [[[[[[[[[[1]]]]]]]]]] }] })).errors,
    [],
    'a realistic nesting passes',
  );
});

t.test('summary of each plugin: type, capabilities, path and the IPAM admission predicts (host-local ranges)', async (t) => {
  const one = (plugin: object) => analyzeCniConfig(j({ cniVersion: '1.0.0', name: 'n', plugins: [plugin] })).summary?.plugins;
  const P = 'spec.config.plugins[0]';
  t.same(
    one({
      type: 'macvlan',
      ipam: {
        type: 'host-local',
        ranges: [
          [{ subnet: '10.1.0.0/24', rangeStart: '10.1.0.10', rangeEnd: '10.1.0.20' }, { subnet: '' }, { subnet: 7 }, 'x'],
          'not a set',
          [{ subnet: 'fd00::/64', rangeStart: '' }],
        ],
        subnet: '10.9.0.0/16',
      },
    }),
    [
      {
        type: 'macvlan',
        capabilities: [],
        path: P,
        ipam: {
          type: 'host-local',
          ranges: [
            { subnet: '10.9.0.0/16', set: 0 },
            { subnet: '10.1.0.0/24', set: 1, rangeStart: '10.1.0.10', rangeEnd: '10.1.0.20' },
            { subnet: 'fd00::/64', set: 3 },
          ],
        },
      },
    ],
    'the legacy subnet first (host-local makes it range set 0), then ranges in order, numbered by set; unreadable ones skipped',
  );
  t.same(one({ type: 'macvlan', ipam: { type: 'host-local' } }), [
    { type: 'macvlan', capabilities: [], path: P, ipam: { type: 'host-local', ranges: [] } },
  ]);
  t.same(
    one({ type: 'macvlan', ipam: { type: 'static', subnet: '10.0.0.0/8' } }),
    [{ type: 'macvlan', capabilities: [], path: P, ipam: { type: 'static' } }],
    'ranges only for host-local',
  );
  for (const ipam of [{ type: '' }, {}, 'host-local', null]) {
    const plugins = one({ type: 'macvlan', capabilities: { mac: true }, ipam });
    t.same(plugins, [{ type: 'macvlan', capabilities: ['mac'], path: P }], `no IPAM for ${JSON.stringify(ipam)}`);
    t.same(Object.keys(plugins![0]!), ['type', 'capabilities', 'path'], 'and no ipam key');
  }
  const single = analyzeCniConfig(j({ name: 'n', type: 'sriov', capabilities: 'x', ipam: { type: 'dhcp' } }));
  t.same(single.summary?.plugins, [{ type: 'sriov', capabilities: [], path: 'spec.config', ipam: { type: 'dhcp' } }]);
  t.same(Object.keys(single.summary!), ['pluginTypes', 'capabilities', 'plugins'], 'no cniVersion key without a cniVersion');
  const untyped = analyzeCniConfig(
    j({ cniVersion: '1.0.0', name: 'n', plugins: [{ capabilities: { ips: true } }, { type: 'macvlan' }] }),
  ).summary;
  t.same(
    [untyped?.pluginTypes, untyped?.plugins.map((p) => p.type), [...(untyped?.capabilities ?? [])]],
    [['macvlan'], ['macvlan'], ['ips']],
    'a plugin without a type is no plugin, its capabilities still count',
  );
});

t.test('null is not an object, at the top or as a plugin', async (t) => {
  t.same(analyzeCniConfig('null').errors.map(renderError), [
    'spec.config: Invalid value: "null": must be a JSON object: a CNI network configuration or configuration list',
  ]);
  t.same(analyzeCniConfig(j({ cniVersion: '1.0.0', name: 'n', plugins: [null] })).errors.map(renderError), [
    'spec.config.plugins[0]: Invalid value: null: must be a plugin configuration object',
  ]);
});

t.test('empty name, cniVersion and type', async (t) => {
  const r = analyzeCniConfig(j({ name: '', cniVersion: '', type: '' }));
  t.same(r.errors.map(renderError), ['spec.config.type: Required value: the name of the CNI plugin binary to run']);
  t.same(r.warnings.map(renderError), [
    'spec.config.cniVersion: Invalid value: "": no cniVersion: libcni assumes 0.1.0; set one of 0.1.0, 0.2.0, 0.3.0, 0.3.1, 0.4.0, 1.0.0, 1.1.0',
  ]);
});

t.test('chaining needs cniVersion 0.3.0 or later', async (t) => {
  const warn = (cniVersion: string | undefined, n: number) =>
    analyzeCniConfig(
      j({
        ...(cniVersion === undefined ? {} : { cniVersion }),
        name: 'n',
        plugins: Array.from({ length: n }, (_, i) => ({ type: i ? 'tuning' : 'macvlan' })),
      }),
    )
      .warnings.map(renderError)
      .filter((w) => w.includes('chaining'));
  const W = (v: string) => [`spec.config.cniVersion: Invalid value: "${v}": plugin chaining needs cniVersion 0.3.0 or later`];
  t.same(warn('0.1.0', 2), W('0.1.0'));
  t.same(warn('0.2.0', 2), W('0.2.0'));
  t.same(warn('0.1.0', 1), [], 'one plugin is no chain');
  t.same(warn('0.3.0', 2), []);
  t.same(warn(undefined, 2), [], 'no version: its own warning');
});

t.test('repeated and second interface plugins in a chain', async (t) => {
  const warnings = (...types: string[]) =>
    analyzeCniConfig(j({ cniVersion: '1.0.0', name: 'n', plugins: types.map((type) => ({ type })) })).warnings.map(renderError);
  const also = (i: number, type: string, at = 0) =>
    `spec.config.plugins[${i}].type: Invalid value: "${type}": also at plugins[${at}]: both instances get the same runtimeConfig and act on the same interface`;
  const second = (i: number, type: string, first: string, at = 0) =>
    `spec.config.plugins[${i}].type: Invalid value: "${type}": plugins[${at}] (${first}) already creates the interface: a chain creates one`;
  const creators = [
    'bridge',
    'ipvlan',
    'macvlan',
    'ptp',
    'host-device',
    'vlan',
    'tap',
    'dummy',
    'sriov',
    'ib-sriov',
    'ovs',
    'bond',
    'ipoib',
    'accelerated-bridge',
  ];
  for (const type of creators) {
    t.same(warnings(type, type), [also(1, type)], `${type} twice`);
    t.same(
      warnings(type === 'macvlan' ? 'ipvlan' : 'macvlan', type),
      [second(1, type, type === 'macvlan' ? 'ipvlan' : 'macvlan')],
      `${type} after another creator`,
    );
  }
  for (const type of ['tuning', 'portmap', 'bandwidth', 'firewall', 'sbr', 'rdma', 'vrf'])
    t.same(warnings('macvlan', type, type), [also(2, type, 1)], `${type} twice`);
  t.same(warnings('x-cni', 'x-cni', 'static'), [], 'unknown plugins may repeat');
  t.same(warnings('tuning', 'tuning', 'tuning'), [also(1, 'tuning'), also(2, 'tuning')], 'each repeat points at the first');
  t.same(warnings('tuning', 'macvlan'), [], 'a plugin that creates no interface does not count');
  t.same(warnings('macvlan', 'tuning', 'ipvlan'), [second(2, 'ipvlan', 'macvlan')], 'the first creator is named');
});

t.test('jsonErrorOffset: where the text stops being JSON', async (t) => {
  const cases: Array<[string, number | undefined]> = [
    ['[\t1\r]', undefined],
    ['1E5', undefined],
    ['1e5', undefined],
    ['"\\u0041"', undefined],
    ['trux', 3],
    ['01', 1],
    ['"\\u00zz"', 5],
    // A \u escape needs exactly four hex digits: the fourth is checked too, and the end of the text is no digit.
    ['"\\u004z"', 6],
    ['"\\u0', 4],
    ['{"a" 1}', 5],
    // Whitespace before the closing brace is JSON; two members need a comma between them.
    ['{"a": 1 }x', 9],
    ['{"a":1"b":2}', 6],
  ];
  for (const [text, offset] of cases) t.equal(jsonErrorOffset(text), offset, JSON.stringify(text));
  t.equal(jsonErrorOffset('['.repeat(200_000)), undefined, 'nesting beyond the stack: no position, no crash');
});

t.test("withoutLineAndColumn: V8 14's line and column cut, whatever their digits", async (t) => {
  for (const [message, want] of [
    ['Unexpected token in JSON at position 5 (line 1 column 6)', 'Unexpected token in JSON at position 5'],
    ['Unexpected token in JSON at position 190 (line 12 column 3)', 'Unexpected token in JSON at position 190'],
    ['Unexpected end of JSON input', 'Unexpected end of JSON input'],
  ] as const)
    t.equal(withoutLineAndColumn(message), want, message);
});

t.test("an unexpected token in a longer config: the reason names the token, not V8's excerpt of the text", async (t) => {
  // Past 20 characters V8 quotes only an excerpt, with "..." on the cut sides; line and column
  // replace it as they replace the whole text of a short config.
  const multiline = '{\n  "cniVersion": "1.0.0",\n  "name": "net1",\n  "master": eth0,\n  "type": "macvlan"\n}';
  const cases: Array<[string, string]> = [
    ['{"type": m}', "invalid JSON at line 1, column 10: Unexpected token 'm'"],
    ['{"type": m, "name": "long-enough-name"}', "invalid JSON at line 1, column 10: Unexpected token 'm'"],
    ['{"name": "long-enough-name", "type": m}', "invalid JSON at line 1, column 38: Unexpected token 'm'"],
    ['{"type": "x", "a": [1,]}', "invalid JSON at line 1, column 23: Unexpected token ']'"],
    [multiline, "invalid JSON at line 4, column 13: Unexpected token 'e'"],
    // A one-digit position ("... in JSON at position 5") is cut from the message too.
    ['{"a" 1}', "invalid JSON at line 1, column 6: Expected ':' after property name"],
    // Text after the value: V8 says "after JSON at position 30", a zero-based offset beside the
    // one-based column.
    ['{"type":"macvlan","name":"n"} x', 'invalid JSON at line 1, column 31: Unexpected non-whitespace character'],
  ];
  for (const [text, reason] of cases) t.equal(analyzeCniConfig(text).errors[0]?.reason, reason, JSON.stringify(text));
});

t.test('jsonSyntaxReason without a position: nesting too deep for the scanner', async (t) => {
  // analyzeCniConfig refuses such a text before parsing; called directly, the reason has no line.
  const text = '['.repeat(200_000);
  let error: unknown;
  try {
    JSON.parse(text);
  } catch (e) {
    error = e;
  }
  t.equal(jsonSyntaxReason(text, error), 'invalid JSON: unexpected end of input');
});

t.test('host-local ranges: unreadable sets and ranges are skipped, absent bounds leave no key', async (t) => {
  const ranges = (ipam: object) =>
    analyzeCniConfig(j({ cniVersion: '1.0.0', name: 'n', type: 'macvlan', ipam: { type: 'host-local', ...ipam } })).summary?.plugins[0]
      ?.ipam?.ranges;
  // A flat list of ranges (a common slip: host-local wants a list of range sets) and null items.
  t.same(ranges({ ranges: [{ subnet: '10.3.0.0/24' }, 7, null, [null, 7, { subnet: '10.2.0.0/24' }]] }), [
    { subnet: '10.2.0.0/24', set: 3 },
  ]);
  const got = ranges({
    ranges: [
      [
        { subnet: '10.1.0.0/24', rangeStart: '10.1.0.10', rangeEnd: '10.1.0.20' },
        { subnet: 'fd00::/64', rangeStart: '', rangeEnd: '' },
        { subnet: 'fd01::/64' },
      ],
    ],
  });
  t.same(
    got?.map((r) => Object.keys(r)),
    [
      ['subnet', 'set', 'rangeStart', 'rangeEnd'],
      ['subnet', 'set'],
      ['subnet', 'set'],
    ],
    'an empty or missing bound is no key',
  );
});

t.test('unloadable: what Multus cannot decode as a JSON object fails every pod on the NAD', async (t) => {
  t.match(analyzeCniConfig('{"type": "macvlan",').unloadable, /^invalid JSON at line 1, column \d+/);
  t.equal(
    analyzeCniConfig('  ').unloadable,
    'invalid JSON at line 1, column 3: unexpected end of input',
    'blank but not empty: Multus decodes it',
  );
  t.equal(analyzeCniConfig('[]').unloadable, 'not a JSON object but an array');
  t.equal(analyzeCniConfig('"macvlan"').unloadable, 'not a JSON object but a string');
  t.equal(analyzeCniConfig('null').unloadable, undefined, 'null decodes into a nil map without an error');
  t.equal(analyzeCniConfig('').unloadable, undefined, 'empty: read on the node');
  t.equal(analyzeCniConfig('{"cniVersion": "1.0.0"}').unloadable, undefined, 'loadable, if otherwise broken');
});

t.test('static: addresses, routes, gateways and own args.cni ips as written; unreadable items skipped', async (t) => {
  const ipamOf = (plugin: object) =>
    analyzeCniConfig(j({ cniVersion: '1.0.0', name: 'n', plugins: [{ type: 'macvlan', ...plugin }] })).summary?.plugins[0]?.ipam;
  t.same(
    ipamOf({
      ipam: {
        type: 'static',
        addresses: [
          { address: '10.0.0.5/24', gateway: '10.0.0.1' },
          { address: '10.0.0.6/24' },
          { address: '10.0.0.7/24', gateway: '' },
          { address: 7, gateway: 8 },
          { gateway: '10.0.0.254' },
          '10.0.0.8/24',
          null,
        ],
        routes: [
          { dst: '0.0.0.0/0', gw: '10.0.0.1' },
          { dst: '10.8.0.0/16' },
          { dst: '10.9.0.0/16', gw: '' },
          { dst: '10.7.0.0/24', table: 100 },
          { dst: '10.6.0.0/24', scope: 253 },
          { gw: '10.0.0.1' },
          { dst: '', gw: '10.0.0.1' },
          { dst: 5 },
          '10.5.0.0/16',
          null,
        ],
      },
      args: { cni: { ips: ['10.0.0.9/24', 7, null, '10.0.0.10/24'] } },
    }),
    {
      type: 'static',
      addresses: ['10.0.0.5/24', '10.0.0.6/24', '10.0.0.7/24'],
      routes: [{ dst: '0.0.0.0/0', gw: '10.0.0.1' }, { dst: '10.8.0.0/16' }, { dst: '10.9.0.0/16' }],
      gateways: ['10.0.0.1', '10.0.0.254'],
      gatewaylessAddresses: ['10.0.0.6/24', '10.0.0.7/24'],
      gatewaylessRoutes: ['10.8.0.0/16', '10.9.0.0/16', '10.7.0.0/24', '10.6.0.0/24'],
      ownArgsIps: ['10.0.0.9/24', '10.0.0.10/24'],
    },
    'a route into another table or scope is no route of the main table, but a link route still',
  );
  const none = { type: 'static' };
  for (const [what, plugin] of [
    ['no lists', { ipam: { type: 'static' } }],
    [
      'lists that are not lists',
      { ipam: { type: 'static', addresses: 'x', routes: { dst: '10.0.0.0/8' } }, args: { cni: { ips: '10.0.0.9' } } },
    ],
    ['empty lists', { ipam: { type: 'static', addresses: [], routes: [] }, args: { cni: { ips: [] } } }],
    ['nothing readable', { ipam: { type: 'static', addresses: [{}, 3], routes: [{ gw: '10.0.0.1' }] }, args: { cni: { ips: [1] } } }],
    ['args.cni not an object', { ipam: { type: 'static' }, args: { cni: ['10.0.0.9'] } }],
    ['args not an object', { ipam: { type: 'static' }, args: 'cni' }],
  ] as const)
    t.same(ipamOf(plugin), none, `${what}: no key`);
  t.same(
    ipamOf({ ipam: { type: 'dhcp' }, args: { cni: { ips: ['10.0.0.9/24'] } } }),
    { type: 'dhcp', ownArgsIps: ['10.0.0.9/24'] },
    'own args.cni ips whatever the IPAM',
  );
});

t.test("host-local: a range's gateway kept, an empty one left out", async (t) => {
  const ranges = analyzeCniConfig(
    j({
      cniVersion: '1.0.0',
      name: 'n',
      type: 'macvlan',
      ipam: {
        type: 'host-local',
        ranges: [
          [
            { subnet: '10.1.0.0/24', gateway: '10.1.0.1' },
            { subnet: '10.2.0.0/24', gateway: '' },
          ],
        ],
      },
    }),
  ).summary?.plugins[0]?.ipam?.ranges;
  t.same(ranges, [
    { subnet: '10.1.0.0/24', set: 0, gateway: '10.1.0.1' },
    { subnet: '10.2.0.0/24', set: 0 },
  ]);
  t.same(
    ranges?.map((r) => Object.keys(r)),
    [
      ['subnet', 'set', 'gateway'],
      ['subnet', 'set'],
    ],
  );
});

t.test("a plugin that refuses requested IPs says why in its summary (OVN-Kubernetes' layer3)", async (t) => {
  const plugin = (extra: object) =>
    analyzeCniConfig(j({ cniVersion: '1.0.0', name: 'n', type: 'ovn-k8s-cni-overlay', ...extra })).summary?.plugins[0];
  t.match(plugin({ topology: 'layer3' })?.refusesIps, /layer3/);
  t.notOk('refusesIps' in plugin({ topology: 'layer2' })!, 'layer2 without subnets: no key');
});

t.test('IPAM routes and gateways that may make a default-route gateway reachable', async (t) => {
  const ipam = (i: object) =>
    analyzeCniConfig(JSON.stringify({ cniVersion: '1.0.0', name: 'n', type: 'ptp', ipam: i })).summary?.plugins[0]?.ipam;
  t.same(
    ipam({
      type: 'static',
      addresses: [{ address: '10.0.0.5/24', gateway: '10.9.9.1' }],
      routes: [
        { dst: '10.7.0.0/24', scope: 253 },
        { dst: '0.0.0.0/0', gw: '10.9.9.1' },
      ],
    }),
    {
      type: 'static',
      addresses: ['10.0.0.5/24'],
      routes: [{ dst: '0.0.0.0/0', gw: '10.9.9.1' }],
      gateways: ['10.9.9.1'],
      gatewaylessRoutes: ['10.7.0.0/24'],
    },
  );
  t.same(ipam({ type: 'host-local', subnet: '10.0.0.0/24', routes: [{ dst: '10.8.0.0/16' }] }), {
    type: 'host-local',
    ranges: [{ subnet: '10.0.0.0/24', set: 0 }],
    gatewaylessRoutes: ['10.8.0.0/16'],
  });
  t.same(ipam({ type: 'dhcp', routes: [{ dst: '10.8.0.0/16' }] }), { type: 'dhcp' }, 'only for the IPAMs whose addresses are known');
});
