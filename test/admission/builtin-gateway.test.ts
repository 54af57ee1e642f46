// default-route against what the chain puts on the interface (src/admission/builtin-gateway.ts),
// as executed on this kernel with containernetworking/plugins v1.10.0 and Multus v4.3.0's
// SetDefaultGW steps over netlink v1.3.1 (docs/cni-runtime.md, "Executed: default-route"):
// an IPv4 gateway no link route of the interface reaches fails ("network is unreachable"), only the
// last gateway's error counts, and the cluster network's default route always stays.
import t from 'tap';
import { parseNetworks } from '../../src/annotation/index.js';
import { builtinChecks } from '../../src/admission/builtin.js';
import { DEFAULT_ROUTE_KEPT } from '../../src/admission/builtin-gateway.js';
import { renderError } from '../../src/field/index.js';
import { NO_EXTRA_READERS } from '../../src/nads/index.js';
import { chain, nadLookup, nadObject } from './fixtures.js';

const macvlan = (ipam: object) => chain({ type: 'macvlan', master: 'eth1', ipam });
const nads = nadLookup(
  nadObject('st', { config: macvlan({ type: 'static', addresses: [{ address: '10.1.0.5/24' }] }) }),
  nadObject('st-empty', { config: macvlan({ type: 'static' }) }),
  // static reads an empty gateway as none (executed: the result has no gateway).
  nadObject('st-empty-gw', { config: macvlan({ type: 'static', addresses: [{ address: '10.1.0.5/24', gateway: '' }] }) }),
  nadObject('st-link-route', {
    config: macvlan({ type: 'static', addresses: [{ address: '10.1.0.5/24' }], routes: [{ dst: '10.7.0.0/24', scope: 253 }] }),
  }),
  nadObject('st-own-args', {
    config: {
      cniVersion: '1.0.0',
      name: 'n',
      type: 'macvlan',
      master: 'eth1',
      ipam: { type: 'static' },
      args: { cni: { ips: ['10.4.0.5/24'] } },
    },
  }),
  nadObject('ptp-gw', {
    config: chain({ type: 'ptp', ipam: { type: 'static', addresses: [{ address: '10.50.0.5/24', gateway: '10.9.9.1' }] } }),
  }),
  nadObject('hl', {
    config: chain({
      type: 'bridge',
      bridge: 'br0',
      ipam: { type: 'host-local', ranges: [[{ subnet: '10.10.0.0/24' }], [{ subnet: 'fd00::/64' }]] },
    }),
  }),
  nadObject('hl6', { config: chain({ type: 'bridge', bridge: 'br0', ipam: { type: 'host-local', subnet: 'fd00::/64' } }) }),
  nadObject('hl-tuning-sbr', {
    config: chain(
      { type: 'bridge', bridge: 'br0', ipam: { type: 'host-local', subnet: '10.10.0.0/24' } },
      { type: 'tuning' },
      { type: 'sbr' },
    ),
  }),
  nadObject('hl-vendor', {
    config: chain({ type: 'bridge', bridge: 'br0', ipam: { type: 'host-local', subnet: '10.10.0.0/24' } }, { type: 'route-override' }),
  }),
  nadObject('hd', {
    config: chain({ type: 'host-device', device: 'eth9', ipam: { type: 'static', addresses: [{ address: '10.1.0.5/24' }] } }),
  }),
  nadObject('dhcp', { config: macvlan({ type: 'dhcp' }) }),
  nadObject('whereabouts', { config: macvlan({ type: 'whereabouts', range: '10.1.0.0/24' }) }),
  nadObject('none', { config: chain({ type: 'macvlan', master: 'eth1' }) }),
  nadObject('node', { config: '' }),
);

const A = 'metadata.annotations[k8s.v1.cni.cncf.io/networks]';
const KEPT = (i: number) => `${A}[${i}].default-route: ${DEFAULT_ROUTE_KEPT}`;
const UNREACHABLE = (i: number, j: number, gw: string, ref: string, has: string) =>
  `${A}[${i}].default-route[${j}]: Invalid value: "${gw}": in no subnet of the interface: default/${ref} gives it ${has}, so the kernel refuses "default via ${gw}" ("network is unreachable"), and Multus fails the ADD ("error setting default gateway: network is unreachable")`;

interface Case {
  name: string;
  networks: string;
  errors?: Array<string | RegExp>;
  warnings?: Array<string | RegExp>;
}

const cases: Case[] = [
  // Executed: macvlan + static 10.1.0.5/24, then Multus's SetDefaultGW.
  {
    name: 'outside the static subnet: "network is unreachable"',
    networks: '[{"name":"st","default-route":["10.2.0.1"]}]',
    errors: [UNREACHABLE(0, 0, '10.2.0.1', 'st', 'at most 10.1.0.5/24')],
    warnings: [KEPT(0)],
  },
  {
    name: 'an empty static gateway is no gateway: the subnet alone is reached',
    networks: '[{"name":"st-empty-gw","default-route":["10.2.0.1"]}]',
    errors: [UNREACHABLE(0, 0, '10.2.0.1', 'st-empty-gw', 'at most 10.1.0.5/24')],
    warnings: [KEPT(0)],
  },
  {
    name: 'inside the static subnet: runs, the cluster default stays ("file exists", ignored)',
    networks: '[{"name":"st","default-route":["10.1.0.1"]}]',
    warnings: [KEPT(0)],
  },
  { name: 'the network address of the subnet is in it', networks: '[{"name":"st","default-route":["10.1.0.0"]}]', warnings: [KEPT(0)] },
  {
    name: 'IP= adds an address: its subnet counts',
    networks: '[{"name":"st","ips":["10.2.0.9/24"],"default-route":["10.2.0.1"]}]',
    warnings: [KEPT(0)],
  },
  {
    name: 'cni-args.ips replace the addresses: their subnet counts (and may be the only one)',
    networks: '[{"name":"st","cni-args":{"ips":["10.2.0.9/24"]},"default-route":["10.2.0.1"]}]',
    warnings: [KEPT(0)],
  },
  { name: "the config's own args.cni.ips", networks: '[{"name":"st-own-args","default-route":["10.4.0.1"]}]', warnings: [KEPT(0)] },
  {
    name: 'static with nothing to assign: no IPv4 address either',
    networks: '[{"name":"st-empty","default-route":["10.2.0.1"]}]',
    errors: [/has no address to assign/, UNREACHABLE(0, 0, '10.2.0.1', 'st-empty', 'no IPv4 address')],
    warnings: [KEPT(0)],
  },
  {
    name: 'a gateway-less route may be a link route (scope 253): not judged',
    networks: '[{"name":"st-link-route","default-route":["10.7.0.1"]}]',
    warnings: [KEPT(0)],
  },
  {
    name: "ptp routes to static's gateway directly (executed): it is reachable",
    networks: '[{"name":"ptp-gw","default-route":["10.9.9.1"]}]',
    warnings: [KEPT(0)],
  },
  {
    name: 'host-local: outside every range',
    networks: '[{"name":"hl","default-route":["10.8.0.1"]}]',
    errors: [UNREACHABLE(0, 0, '10.8.0.1', 'hl', 'at most 10.10.0.0/24')],
    warnings: [KEPT(0)],
  },
  { name: 'host-local: in the range', networks: '[{"name":"hl","default-route":["10.10.0.1"]}]', warnings: [KEPT(0)] },
  {
    name: 'host-local IPv6 only: an IPv4 gateway has no IPv4 address to reach it',
    networks: '[{"name":"hl6","default-route":["10.10.0.1"]}]',
    errors: [UNREACHABLE(0, 0, '10.10.0.1', 'hl6', 'no IPv4 address')],
    warnings: [KEPT(0)],
  },
  {
    name: 'tuning and sbr add no link route',
    networks: '[{"name":"hl-tuning-sbr","default-route":["10.8.0.1"]}]',
    errors: [UNREACHABLE(0, 0, '10.8.0.1', 'hl-tuning-sbr', 'at most 10.10.0.0/24')],
    warnings: [KEPT(0)],
  },
  // Multus keeps the last gateway's error only (executed: IPv4 unreachable, then IPv6: the ADD succeeds).
  {
    name: 'an unreachable IPv4 gateway before an IPv6 one is not installed, and the pod starts',
    networks: '[{"name":"hl","default-route":["10.8.0.1","fd00::1"]}]',
    warnings: [
      KEPT(0),
      /^.*\[0\]\.default-route\[0\]: in no subnet of the interface: .*not installed; Multus keeps only the last gateway's error/,
    ],
  },
  {
    name: 'an unreachable IPv4 gateway after an IPv6 one fails',
    networks: '[{"name":"hl","default-route":["fd00::1","10.8.0.1"]}]',
    errors: [UNREACHABLE(0, 1, '10.8.0.1', 'hl', 'at most 10.10.0.0/24')],
    warnings: [KEPT(0)],
  },
  // Not judged: what reaches the interface is not known for certain.
  {
    name: 'IPv6 gateways are not judged (router advertisements may add prefixes)',
    networks: '[{"name":"hl6","default-route":["fd01::1"]}]',
    warnings: [KEPT(0)],
  },
  { name: '0.0.0.0 makes a device route', networks: '[{"name":"st","default-route":["0.0.0.0"]}]', warnings: [KEPT(0)] },
  {
    name: 'a plugin the table does not know may add routes',
    networks: '[{"name":"hl-vendor","default-route":["10.8.0.1"]}]',
    warnings: [KEPT(0)],
  },
  { name: 'host-device moves a device in', networks: '[{"name":"hd","default-route":["10.2.0.1"]}]', warnings: [KEPT(0)] },
  { name: 'dhcp', networks: '[{"name":"dhcp","default-route":["10.2.0.1"]}]', warnings: [KEPT(0)] },
  { name: 'whereabouts', networks: '[{"name":"whereabouts","default-route":["10.2.0.1"]}]', warnings: [KEPT(0)] },
  {
    name: 'no IPAM at all: no address, so no IPv4 gateway is reachable (executed: oracle dr-noipam)',
    networks: '[{"name":"none","default-route":["10.2.0.1"]}]',
    errors: [UNREACHABLE(0, 0, '10.2.0.1', 'none', 'no IPv4 address')],
    warnings: [KEPT(0)],
  },
  { name: 'a config read on the node', networks: '[{"name":"node","default-route":["10.2.0.1"]}]', warnings: [KEPT(0)] },
  { name: 'no default-route: nothing', networks: '[{"name":"st"}]' },
];

t.test('default-route verdicts by chain', async (t) => {
  for (const c of cases) {
    const parsed = parseNetworks(c.networks, { namespace: 'default' });
    t.same(parsed.errors, [], `${c.name}: the annotation itself is valid`);
    const r = builtinChecks(parsed.networks, nads, NO_EXTRA_READERS, 0);
    const errors = r.errors.map(renderError);
    t.equal(errors.length, c.errors?.length ?? 0, `${c.name}: errors ${JSON.stringify(errors)}`);
    c.errors?.forEach((e, i) =>
      typeof e === 'string' ? t.equal(errors[i], e, `${c.name}: error ${i}`) : t.match(errors[i], e, `${c.name}: error ${i}`),
    );
    const warnings = r.warnings.map((n) => `${n.path}: ${n.text}`);
    t.equal(warnings.length, c.warnings?.length ?? 0, `${c.name}: warnings ${JSON.stringify(warnings)}`);
    c.warnings?.forEach((w, i) =>
      typeof w === 'string' ? t.equal(warnings[i], w, `${c.name}: warning ${i}`) : t.match(warnings[i], w, `${c.name}: warning ${i}`),
    );
    for (const w of warnings) t.notMatch(w, /would fail|fails the ADD/, `${c.name}: a warning never says the pod fails`);
  }
});

t.test("the default network's element replaces the cluster network: no warning about its default route", async (t) => {
  const parsed = parseNetworks('[{"name":"st","default-route":["10.1.0.1"]}]', {
    namespace: 'default',
    path: 'metadata.annotations[v1.multus-cni.io/default-network]',
  });
  const r = builtinChecks(parsed.networks, nads, NO_EXTRA_READERS, 0);
  t.same(r.warnings, []);
  t.same(r.errors, []);
});

// reachableIpv4 on its own: which chains it can tell, and every prefix it gathers.
t.test('reachableIpv4: the chains whose link routes are known, and what they may reach', async (t) => {
  const { reachableIpv4 } = await import('../../src/admission/builtin-gateway.js');
  const { summarizeCniConfig } = await import('../../src/nads/index.js');
  const summary = (...plugins: object[]) => summarizeCniConfig(JSON.stringify(chain(...plugins)))!;
  const net = (selection: object = {}) =>
    ({ index: 0, path: `${A}[0]`, selection: { name: 'n', namespace: 'default', ...selection } }) as Parameters<typeof reachableIpv4>[0];
  const show = (r: ReturnType<typeof reachableIpv4>) => r?.map((c) => `${c.value}/${c.prefix}`);
  // No IPAM: these put no address on the interface, and say so.
  for (const type of ['bridge', 'macvlan', 'ipvlan', 'vlan', 'tap', 'ptp', 'tuning', 'portmap', 'bandwidth', 'firewall', 'sbr'])
    t.strictSame(reachableIpv4(net(), summary({ type })), [], `${type}: routes known`);
  for (const type of ['host-device', 'sriov', 'route-override'])
    t.equal(reachableIpv4(net(), summary({ type })), undefined, `${type}: not known`);
  t.equal(reachableIpv4(net(), { ...summary({ type: 'bridge' }), plugins: [] }), undefined, 'no plugin: nothing to tell');
  // No IPAM runs, so requested addresses land nowhere.
  t.strictSame(reachableIpv4(net({ ips: ['10.2.0.9/24'] }), summary({ type: 'macvlan', master: 'eth1' })), []);
  // An ipam section on a plugin that does not call it: whether anything runs it is not known.
  t.equal(reachableIpv4(net(), summary({ type: 'macvlan', master: 'eth1' }, { type: 'tuning', ipam: { type: 'static' } })), undefined);
  // host-local without ranges is refused by host-local itself: not told here.
  t.equal(reachableIpv4(net(), summary({ type: 'bridge', ipam: { type: 'host-local' } })), undefined);
  // A range's gateway is gathered with its subnet (/32), and every road's address.
  const hl = summary({ type: 'bridge', ipam: { type: 'host-local', ranges: [[{ subnet: '10.10.0.0/24', gateway: '10.20.0.1' }]] } });
  t.strictSame(show(reachableIpv4(net(), hl)), [`${0x0a0a0000n}/24`, `${0x0a140001n}/32`]);
  t.strictSame(
    show(reachableIpv4(net({ 'cni-args': { mac: '02:00:00:00:00:01', ips: ['10.3.0.9/24', 5] } }), hl)),
    [`${0x0a0a0000n}/24`, `${0x0a140001n}/32`, `${0x0a030009n}/24`],
    "cni-args' ips count, its mac and a non-text value do not",
  );
  t.equal(reachableIpv4(net({ 'cni-args': { ips: ['nope'] } }), hl), undefined, 'an unreadable address: its reach is not known');
});

t.test('defaultRouteChecks: what is not a gateway is not judged, and every prefix is named', async (t) => {
  const { defaultRouteChecks, DEFAULT_ROUTE_KEPT: kept } = await import('../../src/admission/builtin-gateway.js');
  const { summarizeCniConfig } = await import('../../src/nads/index.js');
  t.match(kept, /^Multus v4\.3 leaves the cluster network's default route in place \(an upstream bug/);
  const cni = summarizeCniConfig(
    JSON.stringify(
      chain({
        type: 'macvlan',
        master: 'eth1',
        ipam: { type: 'static', addresses: [{ address: '10.1.0.5/24' }, { address: '10.5.0.5/16' }] },
      }),
    ),
  )!;
  const judge = (gateways: unknown[]) => {
    const out = { errors: [] as ReturnType<typeof renderError>[], warnings: [] as unknown[] };
    const raw = { errors: [], warnings: [] } as Parameters<typeof defaultRouteChecks>[3];
    const net = { index: 0, path: `${A}[0]`, selection: { name: 'st', namespace: 'default', 'default-route': gateways } };
    defaultRouteChecks(net as Parameters<typeof defaultRouteChecks>[0], 'default/st', cni, raw);
    out.errors = raw.errors.map(renderError);
    out.warnings = raw.warnings.map((w) => w.text);
    return out;
  };
  // A prefix, a non-text value, an unreadable text, IPv6 and 0.0.0.0: none is an IPv4 gateway to judge.
  t.strictSame(judge(['10.2.0.1/24', 5, 'nope', 'fd00::1', '0.0.0.0']), { errors: [], warnings: [kept] });
  t.strictSame(judge(['10.2.0.1']), {
    errors: [
      `${A}[0].default-route[0]: Invalid value: "10.2.0.1": in no subnet of the interface: default/st gives it at most 10.1.0.5/24, 10.5.0.5/16, so the kernel refuses "default via 10.2.0.1" ("network is unreachable"), and Multus fails the ADD ("error setting default gateway: network is unreachable")`,
    ],
    warnings: [kept],
  });
});
