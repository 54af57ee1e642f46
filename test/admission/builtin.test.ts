// The built-in checks against what the chain really does (src/admission/builtin.ts): certain ADD
// failures are errors, what an unknown plugin may do is a warning.
import t from 'tap';
import { parseNetworks } from '../../src/annotation/index.js';
import { builtinChecks } from '../../src/admission/builtin.js';
import { renderError } from '../../src/field/index.js';
import { NO_EXTRA_READERS, parsePluginReads } from '../../src/nads/index.js';
import { inRanges } from '../../src/nads/ranges.js';
import { chain, nadLookup, nadObject } from './fixtures.js';

const nads = nadLookup(
  nadObject('static', { config: chain({ type: 'macvlan', master: 'eth1', ipam: { type: 'static' } }) }),
  nadObject('hl', {
    config: chain({
      type: 'macvlan',
      capabilities: { ips: true },
      ipam: { type: 'host-local', ranges: [[{ subnet: '10.1.0.0/24', rangeStart: '10.1.0.100', rangeEnd: '10.1.0.200' }]] },
    }),
  }),
  nadObject('wb', { config: chain({ type: 'ipvlan', ipam: { type: 'whereabouts', range: '10.2.0.0/24' } }) }),
  nadObject('tuned', { config: chain({ type: 'sriov' }, { type: 'tuning' }) }),
  nadObject('plain', { config: chain({ type: 'sriov' }) }),
  nadObject('vendor', { config: chain({ type: 'vendor-cni' }) }),
  nadObject('ib', { config: chain({ type: 'ib-sriov', capabilities: { infinibandGUID: true } }) }),
  nadObject('macvlan', { config: chain({ type: 'macvlan' }) }),
);

interface Case {
  name: string;
  networks: string;
  errors?: string[];
  findings?: string[];
  warnings?: RegExp[];
}

const A = 'metadata.annotations[k8s.v1.cni.cncf.io/networks]';
const cases: Case[] = [
  { name: 'static: an address with a prefix', networks: '[{"name":"static","ips":["10.0.0.5/24"]}]' },
  {
    name: 'static: a bare address fails the ADD',
    networks: '[{"name":"static","ips":["10.0.0.5/24","10.0.0.6"]}]',
    errors: [
      `${A}[0].ips[1]: Invalid value: "10.0.0.6": default/static's IPAM "static" (spec.config.plugins[0].ipam) needs an address with a /prefix: the ADD would fail`,
    ],
  },
  { name: 'host-local: one address in range', networks: '[{"name":"hl","ips":["10.1.0.150"]}]' },
  {
    name: 'host-local: two addresses fail (IP= holds one), even with the ips capability',
    networks: '[{"name":"hl","ips":["10.1.0.150/24","10.1.0.151/24"]}]',
    errors: [
      `${A}[0].ips: Invalid value: ["10.1.0.150/24","10.1.0.151/24"]: default/hl's IPAM "host-local" (spec.config.plugins[0].ipam) reads one address from IP= in CNI_ARGS, where Multus passes all 2: the ADD would fail`,
    ],
  },
  {
    name: 'host-local: an address outside rangeStart..rangeEnd fails',
    networks: '[{"name":"hl","ips":["10.1.0.50"]}]',
    errors: [
      `${A}[0].ips[0]: Invalid value: "10.1.0.50": outside rangeStart..rangeEnd of 10.1.0.0/24: default/hl's IPAM "host-local" (spec.config.plugins[0].ipam) hands out 10.1.0.100-10.1.0.200 there, and the ADD would fail`,
    ],
  },
  {
    name: 'whereabouts: honoured but not reserved: a warning',
    networks: '[{"name":"wb","ips":["10.2.0.9/24"]}]',
    warnings: [/hands out a requested address without reserving it in its pool/],
  },
  {
    name: 'cni-args mac: a malformed value fails where tuning reads it',
    networks: '[{"name":"tuned","cni-args":{"mac":"zz"}}]',
    errors: [
      `${A}[0].cni-args.mac: Invalid value: "zz": must be a 6-byte Ethernet MAC (02:23:45:67:89:01, 02-23-45-67-89-01 or 0223.4567.8901) or a 20-byte IPoIB address in the same forms (tuning reads cni-args "mac" and would fail the ADD)`,
    ],
  },
  {
    name: 'cni-args mac: malformed but read by no plugin: a warning',
    networks: '[{"name":"plain","cni-args":{"mac":"zz"}}]',
    warnings: [/cni-args\.mac: Invalid value: "zz": .*\(no plugin of default\/plain reads it\)/],
  },
  {
    name: 'cni-args mac: a valid value nobody reads is pointed out',
    networks: '[{"name":"plain","cni-args":{"mac":"02:00:00:00:00:01"}}]',
    warnings: [/cni-args "mac" is read by no plugin of default\/plain \(sriov\), so it is ignored/],
  },
  {
    name: 'cni-args keys match case-insensitively, as Go decodes them',
    networks: '[{"name":"tuned","cni-args":{"MAC":"zz"}}]',
    errors: [
      `${A}[0].cni-args.MAC: Invalid value: "zz": must be a 6-byte Ethernet MAC (02:23:45:67:89:01, 02-23-45-67-89-01 or 0223.4567.8901) or a 20-byte IPoIB address in the same forms (tuning reads cni-args "MAC" and would fail the ADD)`,
    ],
  },
  {
    name: 'cni-args ips through static need a prefix',
    networks: '[{"name":"static","cni-args":{"ips":["10.0.0.7"]}}]',
    errors: [
      `${A}[0].cni-args.ips[0]: Invalid value: "10.0.0.7": default/static's IPAM "static" (spec.config.plugins[0].ipam) needs an address with a /prefix: the ADD would fail`,
    ],
  },
  {
    name: 'ib-sriov decodes args.cni as strings: any other value fails its ADD',
    networks: '[{"name":"ib","cni-args":{"guid":7,"logicNetworkName":"default","mtu":9000}}]',
    errors: [
      `${A}[0].cni-args.guid: Invalid value: 7: must be a string: ib-sriov in default/ib reads args.cni as strings only, and the ADD would fail`,
      `${A}[0].cni-args.mtu: Invalid value: 9000: must be a string: ib-sriov in default/ib reads args.cni as strings only, and the ADD would fail`,
    ],
  },
  {
    name: 'cni-args guid on an unknown plugin: malformed is a warning',
    networks: '[{"name":"vendor","cni-args":{"guid":"00-11"}}]',
    warnings: [/cni-args\.guid: Invalid value: "00-11": .*vendor-cni may read it/],
  },
  {
    name: 'a MAC on macvlan: read through CNI_ARGS, no capability needed',
    networks: '[{"name":"macvlan","mac":"02:00:00:00:00:01"}]',
  },
];

t.test('built-in checks, table-driven', async (t) => {
  for (const c of cases) {
    const parsed = parseNetworks(c.networks, { namespace: 'default' });
    t.same(parsed.errors, [], `${c.name}: the annotation itself is valid`);
    const r = builtinChecks(parsed.networks, nads, NO_EXTRA_READERS);
    t.same(r.errors.map(renderError), c.errors ?? [], `${c.name}: errors`);
    t.same(
      r.findings.map((f) => renderError(f.error)),
      c.findings ?? [],
      `${c.name}: findings`,
    );
    const warnings = [...r.fieldWarnings.map(renderError), ...r.warnings.map((n) => `${n.path}: ${n.text}`)];
    t.equal(warnings.length, c.warnings?.length ?? 0, `${c.name}: warnings ${JSON.stringify(warnings)}`);
    c.warnings?.forEach((w, i) => t.match(warnings[i], w, `${c.name}: warning ${i}`));
  }
});

t.test('an 8-byte MAC fails where a plugin sets the MAC', async (t) => {
  // The parser may let it through (Multus reads it); the chain decides. Built by hand: the
  // annotation parser's own verdict on 8 bytes is tested in test/annotation.
  const net = { index: 0, path: `${A}[0]`, selection: { name: 'macvlan', namespace: 'default', mac: '02:00:00:00:00:00:00:01' } };
  const r = builtinChecks([net], nads, NO_EXTRA_READERS);
  t.same(r.errors.map(renderError), [
    `${A}[0].mac: Invalid value: "02:00:00:00:00:00:00:01": an 8-byte address: macvlan sets the MAC on an Ethernet interface (default/macvlan spec.config.plugins[0]), and the kernel refuses it ("invalid argument"): the ADD would fail (use infiniband-guid for an InfiniBand GUID)`,
  ]);
  const vendor = builtinChecks([{ ...net, selection: { ...net.selection, name: 'vendor' } }], nads, NO_EXTRA_READERS);
  t.same(vendor.errors, [], 'an unknown plugin: only the warning that it may be ignored');
});

t.test('host-local ranges: subnet, rangeStart/rangeEnd, families, prefixes ignored', async (t) => {
  const ranges = [{ subnet: '10.1.0.0/24', rangeStart: '10.1.0.100', rangeEnd: '10.1.0.200' }, { subnet: 'fd00::/64' }];
  t.equal(inRanges('10.1.0.150', ranges), true);
  t.equal(inRanges('10.1.0.150/16', ranges), true, 'host-local ignores the prefix');
  t.equal(inRanges('10.1.0.99', ranges), false);
  t.equal(inRanges('10.1.0.201', ranges), false);
  t.equal(inRanges('fd00::5', ranges), true);
  t.equal(inRanges('fd01::5', ranges), false);
  t.equal(inRanges('10.9.0.1', [{ subnet: 'not-a-cidr' }]), undefined, 'unreadable ranges: unknown, never a denial');
});

// Survivors of the mutation run (docs/mutation.md, part admission-builtin): exact messages,
// paths and rules, written from the rules in src/admission/builtin.ts and docs/admission.md.
const more = nadLookup(
  nadObject('two-vendors', { config: chain({ type: 'vendor-a' }, { type: 'vendor-b' }) }),
  nadObject('vendor-ipam', { config: chain({ type: 'macvlan', ipam: { type: 'vendor-ipam' } }) }),
  nadObject('plain', { config: chain({ type: 'sriov' }) }),
  nadObject('tuned', { config: chain({ type: 'sriov' }, { type: 'tuning' }) }),
  nadObject('vendor', { config: chain({ type: 'vendor-cni' }) }),
  nadObject('node', { config: '' }),
  // Stored before netattach checked NADs (or in a namespace it skips): Multus cannot load them.
  nadObject('broken', { config: '{"cniVersion": "1.0.0", "type": "macvlan",' }),
  nadObject('list', { config: '[{"type": "macvlan"}]' }),
  nadObject('null', { config: 'null' }),
  nadObject('untyped', { config: chain({ master: 'eth1' }) }),
  nadObject('static-wb', {
    config: chain({ type: 'macvlan', ipam: { type: 'static' } }, { type: 'ipvlan', ipam: { type: 'whereabouts', range: '10.2.0.0/24' } }),
  }),
  nadObject('hl', { config: chain({ type: 'macvlan', ipam: { type: 'host-local', ranges: [[{ subnet: '10.1.0.0/24' }]] } }) }),
  nadObject('hl2', {
    config: chain({ type: 'macvlan', ipam: { type: 'host-local', ranges: [[{ subnet: '10.1.0.0/24' }], [{ subnet: '10.3.0.0/24' }]] } }),
  }),
  nadObject('static-tuned', {
    config: chain({ type: 'macvlan', ipam: { type: 'static', addresses: [{ address: '192.0.2.1/24' }] } }, { type: 'tuning' }),
  }),
  nadObject('static-portmap', {
    config: chain(
      { type: 'macvlan', ipam: { type: 'static', addresses: [{ address: '192.0.2.1/24' }] } },
      { type: 'portmap', capabilities: { portMappings: true } },
    ),
  }),
);

interface ExactCase {
  name: string;
  networks: string;
  errors?: string[];
  findings?: Array<{ rule: string; text: string }>;
  fieldWarnings?: string[];
  warnings?: string[];
}

const IPS_ROAD = 'IPs (an IPAM reading IP= from CNI_ARGS, or runtimeConfig "ips" where the capability is declared)';
const exact: ExactCase[] = [
  {
    name: 'ips on an unknown plugin: a warning with the --plugin-reads hint for ips',
    networks: '[{"name":"vendor","ips":["10.0.0.1/24"]}]',
    warnings: [`${A}[0].ips: may be ignored: netattach does not know plugin "vendor-cni"; if it reads it: --plugin-reads vendor-cni=ips`],
  },
  {
    name: 'mac on an unknown plugin: the hint names mac',
    networks: '[{"name":"vendor","mac":"02:00:00:00:00:01"}]',
    warnings: [`${A}[0].mac: may be ignored: netattach does not know plugin "vendor-cni"; if it reads it: --plugin-reads vendor-cni=mac`],
  },
  {
    name: 'two unknown plugins: both named, the hint for the first',
    networks: '[{"name":"two-vendors","ips":["10.0.0.1/24"]}]',
    warnings: [
      `${A}[0].ips: may be ignored: netattach does not know plugin "vendor-a", "vendor-b"; if it reads it: --plugin-reads vendor-a=ips`,
    ],
  },
  {
    // Declaring macvlan would make every macvlan NAD a reader of IPs, with or without an IPAM.
    name: 'a known plugin with an unknown IPAM: the hint names the IPAM type',
    networks: '[{"name":"vendor-ipam","ips":["10.0.0.1"]}]',
    warnings: [
      `${A}[0].ips: may be ignored: netattach does not know plugin "macvlan (IPAM vendor-ipam)"; if it reads it: --plugin-reads vendor-ipam=ips`,
    ],
  },
  {
    name: 'ips where no plugin reads them: a capabilities finding',
    networks: '[{"name":"plain","ips":["10.0.0.1/24"]}]',
    findings: [
      {
        rule: 'capabilities',
        text: `${A}[0].ips: Forbidden: default/plain would ignore it: no plugin of its chain (sriov) reads ${IPS_ROAD}`,
      },
    ],
  },
  {
    name: 'a chain whose only plugin has no type: "no plugin" reads the IPs',
    networks: '[{"name":"untyped","ips":["10.0.0.1/24"]}]',
    findings: [
      {
        rule: 'capabilities',
        text: `${A}[0].ips: Forbidden: default/untyped would ignore it: no plugin of its chain (no plugin) reads ${IPS_ROAD}`,
      },
    ],
  },
  {
    name: 'portMappings on a chain of two plugins, neither declaring it: the chain is listed',
    networks: '[{"name":"tuned","portMappings":[{"hostPort":8080,"containerPort":80,"protocol":"tcp"}]}]',
    findings: [
      {
        rule: 'capabilities',
        text: `${A}[0].portMappings: Forbidden: default/tuned would ignore it: no plugin of its chain (sriov, tuning) reads runtimeConfig "portMappings" (the portmap plugin with the capability declared)`,
      },
    ],
  },
  {
    name: 'portMappings read by portmap next to a static IPAM: no address prediction on them',
    networks: '[{"name":"static-portmap","portMappings":[{"hostPort":8080,"containerPort":80,"protocol":"tcp"}]}]',
  },
  {
    name: 'a MAC on a chain with an IPAM: no address prediction on it',
    networks: '[{"name":"static-tuned","mac":"02:00:00:00:00:01"}]',
  },
  {
    name: 'cni-args mac on a chain with a static IPAM: not taken for an address',
    networks: '[{"name":"static-tuned","cni-args":{"mac":"02:00:00:00:00:01"}}]',
  },
  {
    name: 'cni-args ips: whereabouts does not read args.cni, so its unreserved pool is not mentioned',
    networks: '[{"name":"static-wb","cni-args":{"ips":["10.0.0.7/24"]}}]',
  },
  {
    name: 'cni-args ips: host-local takes several from args.cni (only IP= holds one), one per range set',
    networks: '[{"name":"hl2","cni-args":{"ips":["10.1.0.150","10.3.0.151"]}}]',
  },
  {
    name: 'cni-args ips: two in one range set fail (executed: "failed to allocate all requested IPs")',
    networks: '[{"name":"hl","cni-args":{"ips":["10.1.0.150","10.1.0.151"]}}]',
    errors: [
      `${A}[0].cni-args.ips[1]: Invalid value: "10.1.0.151": default/hl's IPAM "host-local" (spec.config.plugins[0].ipam) takes one requested address per range set, and range set 0 (10.1.0.0/24) also gets 10.1.0.150 (cni-args.ips[0]): the ADD would fail`,
    ],
  },
  {
    name: 'host-local with two ranges: both listed when an address is outside them',
    networks: '[{"name":"hl2","ips":["10.9.0.5"]}]',
    errors: [
      `${A}[0].ips[0]: Invalid value: "10.9.0.5": not in any range of default/hl2's IPAM "host-local" (spec.config.plugins[0].ipam): 10.1.0.0/24, 10.3.0.0/24; the ADD would fail`,
    ],
  },
  {
    name: 'cni-args on a NAD whose config is read on the node: malformed is a warning naming that',
    networks: '[{"name":"node","cni-args":{"mac":"zz"}}]',
    fieldWarnings: [
      `${A}[0].cni-args.mac: Invalid value: "zz": must be a 6-byte Ethernet MAC (02:23:45:67:89:01, 02-23-45-67-89-01 or 0223.4567.8901) or a 20-byte IPoIB address in the same forms (a config read from the node may read it)`,
    ],
  },
  {
    name: 'cni-args ips on a NAD whose config is read on the node: nothing predicted',
    networks: '[{"name":"node","cni-args":{"ips":["10.0.0.7"]}}]',
  },
  {
    name: 'a NAD whose spec.config is not JSON: Multus fails every pod on it ("failed to unmarshal Spec.Config")',
    networks: '[{"name":"broken","mac":"02:00:00:00:00:01"}]',
    errors: [
      `${A}[0]: Invalid value: "default/broken": default/broken has a spec.config Multus cannot load (invalid JSON at line 1, column 43: Expected double-quoted property name): it fails every pod on this network ("failed to unmarshal Spec.Config"); fix the NetworkAttachmentDefinition`,
    ],
  },
  {
    name: 'a NAD whose spec.config is JSON but no object: Go cannot decode it into a map',
    networks: '[{"name":"list"}]',
    errors: [
      `${A}[0]: Invalid value: "default/list": default/list has a spec.config Multus cannot load (not a JSON object but an array): it fails every pod on this network ("failed to unmarshal Spec.Config"); fix the NetworkAttachmentDefinition`,
    ],
  },
  {
    name: 'JSON null decodes without an error into a nil map: not judged',
    networks: '[{"name":"null"}]',
  },
  {
    name: 'cni-args on two unknown plugins: both named',
    networks: '[{"name":"two-vendors","cni-args":{"mac":"zz"}}]',
    fieldWarnings: [
      `${A}[0].cni-args.mac: Invalid value: "zz": must be a 6-byte Ethernet MAC (02:23:45:67:89:01, 02-23-45-67-89-01 or 0223.4567.8901) or a 20-byte IPoIB address in the same forms (vendor-a, vendor-b may read it)`,
    ],
  },
];

t.test('built-in checks, exact findings, errors and warnings', async (t) => {
  for (const c of exact) {
    const parsed = parseNetworks(c.networks, { namespace: 'default' });
    t.same(parsed.errors, [], `${c.name}: the annotation itself is valid`);
    const r = builtinChecks(parsed.networks, more, NO_EXTRA_READERS);
    t.same(r.errors.map(renderError), c.errors ?? [], `${c.name}: errors`);
    t.same(
      r.findings.map((f) => ({ policy: f.policy, rule: f.rule, action: f.action, text: renderError(f.error) })),
      (c.findings ?? []).map((f) => ({ policy: 'builtin', action: 'Enforce', ...f })),
      `${c.name}: findings`,
    );
    t.same(r.fieldWarnings.map(renderError), c.fieldWarnings ?? [], `${c.name}: field warnings`);
    t.same(
      r.warnings.map((n) => `${n.path}: ${n.text}`),
      c.warnings ?? [],
      `${c.name}: warnings`,
    );
    t.same(r.unverified, [], `${c.name}: unverified`);
  }
});

t.test('the hint taken: an unknown IPAM declared by its type reads the IPs, through both doors', async (t) => {
  const parsed = parseNetworks('[{"name":"vendor-ipam","ips":["10.0.0.1"],"cni-args":{"ips":["10.0.0.2"]}}]', { namespace: 'default' });
  const before = builtinChecks(parsed.networks, more, NO_EXTRA_READERS);
  t.equal(before.warnings.length, 1, 'undeclared: the warning with the hint');
  const after = builtinChecks(parsed.networks, more, parsePluginReads(['vendor-ipam=ips']));
  t.same(
    { errors: after.errors, findings: after.findings, fieldWarnings: after.fieldWarnings, warnings: after.warnings },
    { errors: [], findings: [], fieldWarnings: [], warnings: [] },
    'declared: nothing to say',
  );
});

t.test('selections the parser would not produce reach the checks without a crash', async (t) => {
  // A MAC parseHwAddr cannot read, as a hand-built selection: no 8-byte verdict, no throw.
  const net = { index: 0, path: `${A}[0]`, selection: { name: 'static-tuned', namespace: 'default', mac: 'zz' } };
  const r = builtinChecks([net], more, NO_EXTRA_READERS);
  t.same(r.errors, []);
  t.same(r.warnings, []);
});
