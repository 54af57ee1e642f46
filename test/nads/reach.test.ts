import t from 'tap';
import {
  argsReachOf,
  IPAM_FACTS,
  ipamsOf,
  NO_EXTRA_READERS,
  parsePluginReads,
  reachOf,
  summarizeCniConfig,
  type ArgsCniKey,
  type Reach,
  type Requested,
} from '../../src/nads/index.js';

const chain = (...plugins: object[]) => {
  const s = summarizeCniConfig(JSON.stringify({ cniVersion: '1.0.0', name: 'n', plugins }));
  if (!s) throw new Error('unreadable chain');
  return s;
};
// Exhaustive: anything but the three answers (say `{}`) shows as itself, never as "ignored".
const brief = (r: Reach): string => {
  switch (r.status) {
    case 'read':
      return `read by ${r.by}`;
    case 'unknown':
      return `unknown: ${r.types.join(', ')}`;
    case 'ignored':
      return Object.keys(r).length === 1 ? 'ignored' : `not an answer: ${JSON.stringify(r)}`;
    default:
      return `not an answer: ${JSON.stringify(r)}`;
  }
};

// Each row: what reaches a reader, from docs/cni-runtime.md (CNI_ARGS to every plugin, runtimeConfig
// only with a declared capability, IPs through the IPAM a plugin calls).
const topLevel: Array<[string, object[], Requested, string]> = [
  ['sriov reads MAC= without a capability (SR-IOV operator NADs)', [{ type: 'sriov' }], 'mac', 'read by sriov'],
  ['ovs reads MAC= only', [{ type: 'ovs' }], 'mac', 'read by ovs'],
  ["macvtap reads MAC= (KubeVirt's macvtap-cni)", [{ type: 'macvtap', mtu: 1500 }], 'mac', 'read by macvtap'],
  ['macvtap calls no IPAM: no IP', [{ type: 'macvtap', ipam: { type: 'static' } }], 'ips', 'ignored'],
  ['tuning in a chain reads it', [{ type: 'ipvlan' }, { type: 'tuning' }], 'mac', 'read by tuning'],
  [
    'ipvlan reads no MAC by any road, even with the capability declared',
    [{ type: 'ipvlan', capabilities: { mac: true } }],
    'mac',
    'ignored',
  ],
  ['an unknown plugin may read MAC=', [{ type: 'vendor-cni' }], 'mac', 'unknown: vendor-cni'],
  [
    'an unknown plugin declaring the capability reads it',
    [{ type: 'vendor-cni', capabilities: { mac: true } }],
    'mac',
    'read by vendor-cni',
  ],
  ['ips through static', [{ type: 'macvlan', ipam: { type: 'static' } }], 'ips', 'read by macvlan'],
  [
    'ips through whereabouts (CNI_ARGS, no capability)',
    [{ type: 'ipvlan', ipam: { type: 'whereabouts', range: '10.0.0.0/24' } }],
    'ips',
    'read by ipvlan',
  ],
  ['dhcp reads no requested IP', [{ type: 'macvlan', ipam: { type: 'dhcp' } }], 'ips', 'ignored'],
  [
    'dhcp reads none even where the plugin declares the ips capability (it reads no runtimeConfig ips)',
    [{ type: 'macvlan', capabilities: { ips: true }, ipam: { type: 'dhcp' } }],
    'ips',
    'ignored',
  ],
  [
    'an IPAM takes IPs, never a MAC: ipvlan with static still reads no MAC',
    [{ type: 'ipvlan', ipam: { type: 'static' } }],
    'mac',
    'ignored',
  ],
  ['nor port mappings', [{ type: 'macvlan', ipam: { type: 'static' } }], 'portMappings', 'ignored'],
  [
    'an unknown plugin is named alone, with or without an ipam section',
    [{ type: 'vendor-cni', ipam: { type: 'static' } }],
    'mac',
    'unknown: vendor-cni',
  ],
  [
    'every plugin that might read it is named, in chain order',
    [{ type: 'vendor-a' }, { type: 'macvlan', ipam: { type: 'my-ipam' } }, { type: 'vendor-b', ipam: { type: 'my-ipam' } }],
    'ips',
    'unknown: vendor-a, macvlan (IPAM my-ipam), vendor-b',
  ],
  ['no IPAM: no IP', [{ type: 'sriov' }], 'ips', 'ignored'],
  ['an unknown IPAM', [{ type: 'macvlan', ipam: { type: 'my-ipam' } }], 'ips', 'unknown: macvlan (IPAM my-ipam)'],
  [
    'an unknown IPAM under a plugin declaring ips: the declaration is the claim that its IPAM reads them',
    [{ type: 'macvlan', capabilities: { ips: true }, ipam: { type: 'my-ipam', pool: 'pool1' } }],
    'ips',
    'read by macvlan',
  ],
  ['tuning calls no IPAM, whatever its config says', [{ type: 'tuning', ipam: { type: 'static' } }], 'ips', 'ignored'],
  [
    'GUID: ib-sriov with the capability',
    [{ type: 'ib-sriov', capabilities: { infinibandGUID: true } }],
    'infinibandGUID',
    'read by ib-sriov',
  ],
  ['GUID: ib-sriov without it (runtimeConfig only, capability-gated)', [{ type: 'ib-sriov' }], 'infinibandGUID', 'ignored'],
  ['GUID: an unknown plugin without the capability never receives it', [{ type: 'vendor-cni' }], 'infinibandGUID', 'ignored'],
  ['GUID: sriov declaring it does not read it', [{ type: 'sriov', capabilities: { infinibandGUID: true } }], 'infinibandGUID', 'ignored'],
  [
    'portMappings: portmap with the capability',
    [{ type: 'macvlan' }, { type: 'portmap', capabilities: { portMappings: true } }],
    'portMappings',
    'read by portmap',
  ],
  ['portMappings: portmap without it', [{ type: 'macvlan' }, { type: 'portmap' }], 'portMappings', 'ignored'],
  [
    'bandwidth: the bandwidth plugin with the capability',
    [{ type: 'bridge' }, { type: 'bandwidth', capabilities: { bandwidth: true } }],
    'bandwidth',
    'read by bandwidth',
  ],
];

t.test('top-level keys: read, ignored or unknown, by what the chain really reads', async (t) => {
  for (const [name, plugins, key, want] of topLevel) t.equal(brief(reachOf(chain(...plugins), key, NO_EXTRA_READERS)), want, name);
});

const args: Array<[string, object[], ArgsCniKey, string]> = [
  ['tuning reads args.cni.mac', [{ type: 'sriov' }, { type: 'tuning' }], 'mac', 'read by tuning'],
  ['bridge reads args.cni.mac', [{ type: 'bridge' }], 'mac', 'read by bridge'],
  ['sriov does not', [{ type: 'sriov' }], 'mac', 'ignored'],
  ['ib-sriov reads args.cni.guid, capability or not', [{ type: 'ib-sriov' }], 'guid', 'read by ib-sriov'],
  ['host-local reads args.cni.ips', [{ type: 'macvlan', ipam: { type: 'host-local', subnet: '10.0.0.0/24' } }], 'ips', 'read by macvlan'],
  ['whereabouts does not', [{ type: 'macvlan', ipam: { type: 'whereabouts' } }], 'ips', 'ignored'],
  [
    'an IPAM the table does not know may read args.cni.ips',
    [{ type: 'macvlan', ipam: { type: 'my-ipam' } }],
    'ips',
    'unknown: macvlan (IPAM my-ipam)',
  ],
  [
    'host-local reads args.cni.ips only: sriov calling it reads no args.cni.mac',
    [{ type: 'sriov', ipam: { type: 'host-local', subnet: '10.0.0.0/24' } }],
    'mac',
    'ignored',
  ],
  ['nor args.cni.guid', [{ type: 'sriov', ipam: { type: 'host-local', subnet: '10.0.0.0/24' } }], 'guid', 'ignored'],
  [
    'tuning calls no IPAM: the static section in its config reads no args.cni.ips',
    [{ type: 'tuning', ipam: { type: 'static' } }],
    'ips',
    'ignored',
  ],
  ['sriov without an IPAM: nothing reads args.cni.ips', [{ type: 'sriov' }], 'ips', 'ignored'],
  ['an unknown plugin may', [{ type: 'vendor-cni' }], 'guid', 'unknown: vendor-cni'],
];

t.test('cni-args keys: the second door', async (t) => {
  for (const [name, plugins, key, want] of args) t.equal(brief(argsReachOf(chain(...plugins), key, NO_EXTRA_READERS)), want, name);
});

t.test(
  '--plugin-reads adds readers for MAC and IPs (CNI_ARGS, args.cni) and GUIDs (args.cni), not for capability-gated keys',
  async (t) => {
    const extra = parsePluginReads(['vendor-cni=mac,guid']);
    t.equal(brief(reachOf(chain({ type: 'vendor-cni' }), 'mac', extra)), 'read by vendor-cni');
    t.equal(
      brief(reachOf(chain({ type: 'vendor-cni' }), 'infinibandGUID', extra)),
      'ignored',
      'a GUID reaches runtimeConfig only with the capability',
    );
    t.equal(brief(argsReachOf(chain({ type: 'vendor-cni' }), 'guid', extra)), 'read by vendor-cni');
    t.equal(brief(reachOf(chain({ type: 'vendor-cni' }), 'ips', extra)), 'unknown: vendor-cni');
    t.throws(() => parsePluginReads(['=mac']), /invalid value "=mac"/);
    t.throws(() => parsePluginReads(['a/b=mac']), /invalid value "a\/b=mac"/);
  },
);

t.test('the summary keeps each plugin with its capabilities, IPAM type and host-local ranges', async (t) => {
  const s = chain(
    {
      type: 'macvlan',
      capabilities: { ips: true },
      ipam: {
        type: 'host-local',
        ranges: [[{ subnet: '10.1.0.0/24', rangeStart: '10.1.0.10', rangeEnd: '10.1.0.20' }], [{ subnet: 'fd00::/64' }]],
      },
    },
    { type: 'tuning', capabilities: { mac: true } },
  );
  t.same(s.plugins, [
    {
      type: 'macvlan',
      capabilities: ['ips'],
      path: 'spec.config.plugins[0]',
      ipam: {
        type: 'host-local',
        ranges: [
          { subnet: '10.1.0.0/24', set: 0, rangeStart: '10.1.0.10', rangeEnd: '10.1.0.20' },
          { subnet: 'fd00::/64', set: 1 },
        ],
      },
    },
    { type: 'tuning', capabilities: ['mac'], path: 'spec.config.plugins[1]' },
  ]);
  const legacy = chain({ type: 'bridge', ipam: { type: 'host-local', subnet: '192.168.1.0/24' } });
  t.same(legacy.plugins[0]!.ipam, { type: 'host-local', ranges: [{ subnet: '192.168.1.0/24', set: 0 }] });
});

const thrown = (f: () => unknown): unknown => {
  try {
    f();
  } catch (e) {
    return e;
  }
  return undefined;
};
const readers = (extra: ReturnType<typeof parsePluginReads>): Array<[string, string[]]> =>
  [...extra].map(([type, keys]) => [type, [...keys]]);

t.test('--plugin-reads: an IP reader counts for ips, through CNI_ARGS and args.cni', async (t) => {
  const extra = parsePluginReads(['vendor-cni=ips']);
  t.equal(brief(reachOf(chain({ type: 'vendor-cni' }), 'ips', extra)), 'read by vendor-cni');
  t.equal(brief(argsReachOf(chain({ type: 'vendor-cni' }), 'ips', extra)), 'read by vendor-cni');
  t.equal(brief(reachOf(chain({ type: 'vendor-cni' }), 'mac', extra)), 'unknown: vendor-cni', 'an IP reader is not a MAC reader');
  t.equal(
    brief(reachOf(chain({ type: 'ipvlan' }), 'ips', parsePluginReads(['ipvlan=ips']))),
    'read by ipvlan',
    'an entry for a known type adds to its facts',
  );
});

t.test('--plugin-reads: an in-house IPAM is named by its own type, under a known plugin that delegates', async (t) => {
  const extra = parsePluginReads(['my-ipam=ips']);
  const macvlan = chain({ type: 'macvlan', ipam: { type: 'my-ipam' } });
  t.equal(brief(reachOf(macvlan, 'ips', extra)), 'read by macvlan', 'IP= through macvlan to its IPAM');
  t.equal(brief(argsReachOf(macvlan, 'ips', extra)), 'read by macvlan', 'args.cni ips through macvlan to its IPAM');
  t.equal(brief(reachOf(macvlan, 'ips', NO_EXTRA_READERS)), 'unknown: macvlan (IPAM my-ipam)', 'undeclared: unknown');
  t.equal(brief(reachOf(macvlan, 'ips', parsePluginReads(['my-ipam=mac']))), 'unknown: macvlan (IPAM my-ipam)', 'a MAC entry reads no IPs');
  t.equal(
    brief(reachOf(chain({ type: 'tuning', ipam: { type: 'my-ipam' } }), 'ips', extra)),
    'ignored',
    'a plugin that calls no IPAM does not reach it',
  );
  t.equal(
    brief(reachOf(chain({ type: 'macvlan' }), 'ips', parsePluginReads(['macvlan=ips']))),
    'read by macvlan',
    'the plugin type instead would count for every macvlan NAD, even one without an IPAM',
  );
  // An entry for an IPAM the table knows adds to its facts, as one for a known plugin does.
  const dhcp = chain({ type: 'macvlan', ipam: { type: 'dhcp' } });
  t.equal(brief(reachOf(dhcp, 'ips', NO_EXTRA_READERS)), 'ignored', 'dhcp reads no requested IPs');
  t.equal(brief(reachOf(dhcp, 'ips', parsePluginReads(['dhcp=ips']))), 'read by macvlan', 'an entry for dhcp: IP=');
  t.equal(brief(argsReachOf(dhcp, 'ips', parsePluginReads(['dhcp=ips']))), 'read by macvlan', 'an entry for dhcp: args.cni');
});

t.test('unknown: the type to declare is the first unknown plugin, or the IPAM of a known one', async (t) => {
  const cases: Array<[string, object[], string]> = [
    ['an unknown plugin', [{ type: 'vendor-a', ipam: { type: 'my-ipam' } }], 'vendor-a'],
    ['an unknown IPAM of a known plugin', [{ type: 'macvlan', ipam: { type: 'my-ipam' } }, { type: 'vendor-b' }], 'my-ipam'],
    ['the first of several', [{ type: 'vendor-a' }, { type: 'macvlan', ipam: { type: 'my-ipam' } }], 'vendor-a'],
  ];
  for (const [name, plugins, declare] of cases) {
    for (const [door, r] of [
      ['top level', reachOf(chain(...plugins), 'ips', NO_EXTRA_READERS)],
      ['cni-args', argsReachOf(chain(...plugins), 'ips', NO_EXTRA_READERS)],
    ] as const) {
      t.equal(r.status === 'unknown' ? r.declare : `not unknown: ${brief(r)}`, declare, `${name} (${door})`);
    }
  }
});

t.test('--plugin-reads: type and keys are trimmed, empty keys dropped, repeated types merged', async (t) => {
  t.same(readers(parsePluginReads([' acme-cni = mac , ips ,', 'acme-cni=guid', 'other=ips'])), [
    ['acme-cni', ['mac', 'ips', 'guid']],
    ['other', ['ips']],
  ]);
});

t.test('--plugin-reads: the exact errors, as RangeErrors', async (t) => {
  const cases: Array<[string, string]> = [
    ['acme-cni=', '--plugin-reads: invalid value "acme-cni=": expected TYPE=KEY[,KEY...], e.g. my-cni=mac,ips'],
    ['acme-cni= , ', '--plugin-reads: invalid value "acme-cni= , ": expected TYPE=KEY[,KEY...], e.g. my-cni=mac,ips'],
    ['acme-cni', '--plugin-reads: invalid value "acme-cni": expected TYPE=KEY[,KEY...], e.g. my-cni=mac,ips'],
    [
      'acme-cni=mac,infinibandGUID',
      '--plugin-reads: unsupported key "infinibandGUID" in "acme-cni=mac,infinibandGUID": one of mac, ips, guid',
    ],
    ['acme-cni=portMappings', '--plugin-reads: unsupported key "portMappings" in "acme-cni=portMappings": one of mac, ips, guid'],
  ];
  for (const [entry, message] of cases) {
    const e = thrown(() => parsePluginReads(['good=mac', entry]));
    t.type(e, RangeError, entry);
    t.equal((e as Error).message, message, entry);
  }
});

// reach.ts memoizes: summaries are interned and the extra readers fixed at start-up, so each answer
// is computed once per chain, key and extra readers (the admission hot path asks for every request).
// The answer is the same object each time; different keys, roads and extra readers never share one.
t.test('answers are computed once per chain, key, road and extra readers', async (t) => {
  const c = chain({ type: 'sriov' }, { type: 'ib-sriov' }, { type: 'vendor-cni' });
  const extra = parsePluginReads(['vendor-cni=mac']);
  const mac = reachOf(c, 'mac', NO_EXTRA_READERS);
  t.equal(reachOf(c, 'mac', NO_EXTRA_READERS), mac, 'the same object, not computed again');
  t.equal(brief(mac), 'read by sriov');
  const argsGuid = argsReachOf(c, 'guid', NO_EXTRA_READERS);
  t.equal(argsReachOf(c, 'guid', NO_EXTRA_READERS), argsGuid);
  t.equal(brief(argsGuid), 'read by ib-sriov');
  t.equal(
    brief(argsReachOf(c, 'mac', NO_EXTRA_READERS)),
    'unknown: vendor-cni',
    'args.cni.mac is not args.cni.guid, nor the top-level mac',
  );
  t.equal(brief(argsReachOf(c, 'mac', extra)), 'read by vendor-cni', 'other extra readers, another answer');
  t.equal(brief(reachOf(c, 'infinibandGUID', NO_EXTRA_READERS)), 'ignored', 'the top-level GUID is not args.cni.guid');
});

t.test('ipamsOf: the IPAM each known plugin that calls one is given, in chain order, with its facts', async (t) => {
  const c = chain(
    { type: 'macvlan', ipam: { type: 'host-local', subnet: '10.0.0.0/24' } },
    { type: 'tuning', ipam: { type: 'static' } }, // tuning calls no IPAM
    { type: 'vendor-cni', ipam: { type: 'static' } }, // not known to call it
    { type: 'sriov' }, // calls an IPAM, has none
    { type: 'ipvlan', ipam: { type: 'my-ipam' } }, // an IPAM the table does not know
  );
  const uses = ipamsOf(c);
  t.same(uses, [
    { plugin: c.plugins[0], type: 'host-local', facts: IPAM_FACTS.get('host-local') },
    { plugin: c.plugins[4], type: 'my-ipam', facts: undefined },
  ]);
  t.equal(uses.length, 2);
  t.equal(uses[0]!.plugin, c.plugins[0], 'the plugin itself');
  t.equal(uses[0]!.facts, IPAM_FACTS.get('host-local'));
  t.ok(uses[1] && 'facts' in uses[1] && uses[1].facts === undefined, 'facts undefined for an unknown IPAM');
  t.equal(ipamsOf(c), uses, 'computed once per chain: the same array');
  t.same(ipamsOf(chain({ type: 'sriov' }, { type: 'tuning', ipam: { type: 'static' } })), [], 'none');
  t.same(
    ipamsOf(chain({ type: 'bridge', ipam: { type: 'dhcp' } })).map((u) => [u.type, u.facts?.ipFromCniArgs]),
    [['dhcp', 'no']],
  );
});
