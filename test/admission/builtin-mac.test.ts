// The MAC and interface-name classes of the built-in checks (src/admission/builtin-mac.ts,
// builtin-ifnames.ts), each verdict as the reference plugins v1.10.0 behave when executed
// (docs/cni-runtime.md, "Two doors for one MAC"): an address the kernel refuses where a plugin
// sets it is an error, one it shortens or a door that loses is a warning naming what takes effect.
import t from 'tap';
import fc from 'fast-check';
import { parseNetworks } from '../../src/annotation/index.js';
import { builtinChecks } from '../../src/admission/builtin.js';
import { renderError } from '../../src/field/index.js';
import { NO_EXTRA_READERS, parsePluginReads } from '../../src/nads/index.js';
import { chain, nadLookup, nadObject } from './fixtures.js';

const nads = nadLookup(
  nadObject('br', { config: chain({ type: 'bridge', bridge: 'br0' }) }),
  nadObject('brcap', { config: chain({ type: 'bridge', bridge: 'br0', capabilities: { mac: true } }) }),
  nadObject('mv', { config: chain({ type: 'macvlan', master: 'eth1' }) }),
  nadObject('tap', { config: chain({ type: 'tap' }) }),
  nadObject('sriov', { config: chain({ type: 'sriov' }) }),
  nadObject('ptp-tuning', { config: chain({ type: 'ptp', ipam: { type: 'host-local', subnet: '10.9.0.0/24' } }, { type: 'tuning' }) }),
  nadObject('mv-tuning', { config: chain({ type: 'macvlan', master: 'eth1' }, { type: 'tuning' }) }),
  nadObject('ptp', { config: chain({ type: 'ptp', ipam: { type: 'host-local', subnet: '10.9.0.0/24' } }) }),
  nadObject('vendor', { config: chain({ type: 'vendor-cni' }) }),
  nadObject('br-vendor', { config: chain({ type: 'bridge', bridge: 'br0' }, { type: 'vendor-meta' }) }),
  nadObject('ipoib', { config: chain({ type: 'ipoib', master: 'ib0' }) }),
  nadObject('tuning-mv', { config: chain({ type: 'tuning' }, { type: 'macvlan', master: 'eth1' }) }),
  nadObject('tuning-br', { config: chain({ type: 'tuning' }, { type: 'bridge', bridge: 'br0' }) }),
  nadObject('vendors', { config: chain({ type: 'vendor-a' }, { type: 'vendor-b' }) }),
  // Both a top-level type and plugins: Multus runs the top-level config alone (LoadDelegateNetConf).
  nadObject('br-over-ipvlan', {
    config: { cniVersion: '1.0.0', name: 'n', type: 'bridge', bridge: 'br0', plugins: [{ type: 'ipvlan', master: 'eth1' }] },
  }),
  nadObject('ipvlan-over-br', {
    config: { cniVersion: '1.0.0', name: 'n', type: 'ipvlan', master: 'eth1', plugins: [{ type: 'bridge', bridge: 'br0' }] },
  }),
);

const A = 'metadata.annotations[k8s.v1.cni.cncf.io/networks]';
const IPOIB = '00:00:00:48:fe:80:00:00:00:00:00:00:02:11:22:33:44:55:66:77';

interface Case {
  name: string;
  networks: string;
  errors?: Array<string | RegExp>;
  findings?: RegExp[];
  warnings?: RegExp[];
  dropped?: string[];
  /** Absent: stated as 0 (the manifests' value); present as undefined: not stated. */
  multusDefaultNetworks?: number | undefined;
  extra?: string[];
}

/** A warning's whole text, as a pattern (the table matches warnings by pattern). */
const exactly = (text: string) => new RegExp(`^${text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`);
const M1 = '02:00:00:00:00:01';
const M2 = '02:00:00:00:00:02';
const IPOIB2 = '00:00:00:49:fe:80:00:00:00:00:00:00:02:11:22:33:44:55:66:77';
const TWO_DOORS = (who: string) =>
  `the top-level "mac" and cni-args "mac" ask for different MACs; which one ${who} sets cannot be told, so both are judged`;

const cases: Case[] = [
  // Class 1: what the kernel refuses, where a plugin sets it.
  {
    name: 'a multicast MAC on bridge (executed: "failed to make veth pair: cannot assign requested address")',
    networks: '[{"name":"br","mac":"03:00:00:00:00:01"}]',
    errors: [
      `${A}[0].mac: Invalid value: "03:00:00:00:00:01": a multicast MAC (lowest bit of the first octet set): bridge sets the MAC on an Ethernet interface (default/br spec.config.plugins[0]), and the kernel refuses it ("cannot assign requested address"): the ADD would fail`,
    ],
  },
  {
    name: 'the broadcast MAC on macvlan (executed)',
    networks: '[{"name":"mv","mac":"FF:FF:FF:FF:FF:FF"}]',
    errors: [
      `${A}[0].mac: Invalid value: "FF:FF:FF:FF:FF:FF": the broadcast MAC: macvlan sets the MAC on an Ethernet interface (default/mv spec.config.plugins[0]), and the kernel refuses it ("cannot assign requested address"): the ADD would fail`,
    ],
  },
  {
    name: 'the all-zero MAC on tap (executed)',
    networks: '[{"name":"tap","mac":"00-00-00-00-00-00"}]',
    errors: [
      `${A}[0].mac: Invalid value: "00-00-00-00-00-00": the all-zero MAC: tap sets the MAC on an Ethernet interface (default/tap spec.config.plugins[0]), and the kernel refuses it ("cannot assign requested address"): the ADD would fail`,
    ],
  },
  {
    name: 'a multicast MAC on sriov (read: the VF MAC goes through the kernel and the PF driver)',
    networks: '[{"name":"sriov","mac":"01:00:5e:00:00:01"}]',
    errors: [
      `${A}[0].mac: Invalid value: "01:00:5e:00:00:01": a multicast MAC (lowest bit of the first octet set): sriov sets the MAC on an Ethernet interface (default/sriov spec.config.plugins[0]), and the kernel refuses it ("cannot assign requested address"): the ADD would fail`,
    ],
  },
  {
    name: 'a multicast cni-args mac where tuning sets it (executed)',
    networks: '[{"name":"ptp-tuning","cni-args":{"mac":"03:00:00:00:00:01"}}]',
    errors: [
      `${A}[0].cni-args.mac: Invalid value: "03:00:00:00:00:01": a multicast MAC (lowest bit of the first octet set): tuning sets the MAC on an Ethernet interface (default/ptp-tuning spec.config.plugins[1]), and the kernel refuses it ("cannot assign requested address"): the ADD would fail`,
    ],
  },
  {
    name: 'a multicast MAC an unknown plugin may read: no error (the annotation warns)',
    networks: '[{"name":"vendor","mac":"03:00:00:00:00:01"}]',
    warnings: [/may be ignored: netattach does not know plugin "vendor-cni"/],
  },
  {
    name: 'a multicast MAC no plugin reads: the capabilities finding, no error',
    networks: '[{"name":"ptp","mac":"03:00:00:00:00:01"}]',
    findings: [/default\/ptp would ignore it/],
  },
  {
    name: 'a multicast MAC --plugin-reads declares read: not certain, no error',
    networks: '[{"name":"vendor","mac":"03:00:00:00:00:01"}]',
    extra: ['vendor-cni=mac'],
  },
  // Class 2: the length of an Ethernet address.
  {
    name: 'a 20-byte IPoIB address on bridge (executed: "invalid argument")',
    networks: `[{"name":"br","mac":"${IPOIB}"}]`,
    errors: [
      `${A}[0].mac: Invalid value: "${IPOIB}": a 20-byte address: bridge sets the MAC on an Ethernet interface (default/br spec.config.plugins[0]), and the kernel refuses it ("invalid argument"): the ADD would fail (an IPoIB address is for an ipoib or ib-sriov network)`,
    ],
  },
  {
    name: 'a 20-byte IPoIB address on macvlan (executed)',
    networks: `[{"name":"mv","mac":"${IPOIB}"}]`,
    errors: [/^.*\[0\]\.mac: Invalid value: ".*": a 20-byte address: macvlan sets the MAC .*"invalid argument"/],
  },
  {
    name: 'a 20-byte address where tuning sets it: the kernel takes its first 6 bytes (executed), a warning',
    networks: `[{"name":"ptp-tuning","mac":"${IPOIB}"}]`,
    warnings: [
      /\[0\]\.mac: a 20-byte address: tuning sets the MAC on an Ethernet interface \(default\/ptp-tuning spec\.config\.plugins\[1\]\) and takes only its first 6 bytes: the interface gets 00:00:00:48:fe:80/,
    ],
  },
  {
    name: 'an 8-byte address where tuning sets it: a warning, not a false denial (executed: the pod runs with 02:00:00:00:00:00)',
    networks: '[{"name":"ptp-tuning","mac":"02:00:00:00:00:00:00:01"}]',
    warnings: [/an 8-byte address: tuning .* takes only its first 6 bytes: the interface gets 02:00:00:00:00:00 \(use infiniband-guid/],
  },
  {
    name: 'an 8-byte address whose first 6 bytes are multicast, where tuning sets it: an error',
    networks: '[{"name":"ptp-tuning","mac":"03:00:00:00:00:00:00:01"}]',
    errors: [
      /an 8-byte address: tuning sets the MAC .* which takes its first 6 bytes, 03:00:00:00:00:00, a multicast MAC .* the ADD would fail/,
    ],
  },
  {
    name: 'macvlan then tuning: macvlan fails first on the length, no word on tuning',
    networks: '[{"name":"mv-tuning","mac":"02:00:00:00:00:00:00:01"}]',
    errors: [/an 8-byte address: macvlan sets the MAC .*"invalid argument"/],
  },
  {
    name: 'a 20-byte address on an ipoib network: valid (ipoib does not set it; the capabilities rule judges)',
    networks: `[{"name":"ipoib","mac":"${IPOIB}"}]`,
    findings: [/would ignore it/],
  },
  // Class 4: two doors that disagree.
  {
    name: 'bridge without the mac capability: cni-args wins over MAC= (executed)',
    networks: '[{"name":"br","mac":"02:00:00:00:00:0a","cni-args":{"mac":"02:00:00:00:00:0b"}}]',
    warnings: [
      /^.*\[0\]\.mac: dropped: the interface gets 02:00:00:00:00:0b \(cni-args "mac"\), set last by bridge in default\/br: it reads args\.cni "mac" after MAC= \(runtimeConfig "mac" would win/,
    ],
    dropped: [`${A}[0].mac`],
  },
  {
    name: 'bridge with the mac capability: runtimeConfig wins over cni-args (executed)',
    networks: '[{"name":"brcap","mac":"02:00:00:00:00:0a","cni-args":{"MAC":"02:00:00:00:00:0b"}}]',
    warnings: [
      /\[0\]\.cni-args\.MAC: dropped: the interface gets 02:00:00:00:00:0a \(the top-level "mac"\), set last by bridge in default\/brcap: it reads runtimeConfig "mac"/,
    ],
    dropped: [`${A}[0].cni-args.MAC`],
  },
  {
    name: 'macvlan then tuning: tuning sets cni-args last (executed)',
    networks: '[{"name":"mv-tuning","mac":"02:00:00:00:00:0a","cni-args":{"mac":"02:00:00:00:00:0b"}}]',
    warnings: [
      /\[0\]\.mac: dropped: the interface gets 02:00:00:00:00:0b \(cni-args "mac"\), set last by tuning in default\/mv-tuning: it reads args\.cni "mac" last/,
    ],
    dropped: [`${A}[0].mac`],
  },
  {
    name: 'an 8-byte top-level mac that bridge drops for a valid cni-args mac: the pod runs (executed), no error',
    networks: '[{"name":"br","mac":"02:00:00:00:00:00:00:01","cni-args":{"mac":"02:00:00:00:00:0b"}}]',
    warnings: [/\[0\]\.mac: dropped: the interface gets 02:00:00:00:00:0b/],
    dropped: [`${A}[0].mac`],
  },
  {
    name: 'a multicast top-level mac that bridge drops: no error',
    networks: '[{"name":"br","mac":"03:00:00:00:00:01","cni-args":{"mac":"02:00:00:00:00:0b"}}]',
    warnings: [/\[0\]\.mac: dropped/],
    dropped: [`${A}[0].mac`],
  },
  {
    name: 'macvlan reads no cni-args: the unread value is dropped, reported once as unread',
    networks: '[{"name":"mv","mac":"02:00:00:00:00:0a","cni-args":{"mac":"02:00:00:00:00:0b"}}]',
    warnings: [/cni-args "mac" is read by no plugin of default\/mv/],
    dropped: [`${A}[0].cni-args.mac`],
  },
  {
    name: 'an unknown plugin after bridge: which one wins cannot be told, both judged',
    networks: '[{"name":"br-vendor","mac":"02:00:00:00:00:0a","cni-args":{"mac":"02:00:00:00:00:0b"}}]',
    warnings: [
      /\[0\]\.mac: the top-level "mac" and cni-args "mac" ask for different MACs; which one plugin "vendor-meta", which netattach does not know, sets cannot be told, so both are judged/,
      /\[0\]\.cni-args\.mac: .* both are judged/,
    ],
  },
  {
    name: 'the same MAC through both doors, spelled differently: nothing to say',
    networks: '[{"name":"br","mac":"02:00:00:00:00:0A","cni-args":{"mac":"02-00-00-00-00-0a"}}]',
  },
  // Class 3: an explicit netN that Multus gives another element.
  {
    name: 'interface net2 on element [0], element [1] unnamed: macvlan creates net2 first, Multus fails element [1]',
    networks: '[{"name":"mv","interface":"net2"},{"name":"ptp"}]',
    errors: [
      `${A}[0].interface: Invalid value: "net2": Multus names element [1] "net2" too (it sets no interface): element [0] runs first and macvlan in default/mv creates "net2", so Multus fails element [1]'s ADD ("interface name net2 already exists"); name every interface, or none`,
    ],
  },
  {
    name: 'element [0] unnamed gets net1, created by bridge before element [1] asks for it',
    networks: '[{"name":"br"},{"name":"vendor","interface":"net1"}]',
    errors: [
      /\[1\]\.interface: Invalid value: "net1": Multus names element \[0\] "net1" too .* element \[0\] runs first and bridge in default\/br creates "net1", so Multus fails element \[1\]'s ADD/,
    ],
  },
  {
    name: "the first element's plugin is unknown (a KubeVirt binding creates none): no error",
    networks: '[{"name":"vendor"},{"name":"mv","interface":"net1"}]',
  },
  {
    name: 'defaultNetworks shift the numbers: element [1] is net3, no collision',
    networks: '[{"name":"mv","interface":"net2"},{"name":"ptp"}]',
    multusDefaultNetworks: 1,
  },
  {
    name: 'defaultNetworks shift the numbers: element [1] is net3',
    networks: '[{"name":"mv","interface":"net3"},{"name":"ptp"}]',
    multusDefaultNetworks: 1,
    errors: [/\[0\]\.interface: Invalid value: "net3": Multus names element \[1\] "net3" too/],
  },
  {
    name: 'the count not stated: the collision is read with no defaultNetworks, and only warned (with one, element [1] is net3 and the pod works)',
    networks: '[{"name":"mv","interface":"net2"},{"name":"ptp"}]',
    multusDefaultNetworks: undefined,
    warnings: [
      /\[0\]\.interface: "net2": Multus names element \[1\] "net2" too .*macvlan in default\/mv creates "net2" when Multus's config has no defaultNetworks .*--multus-default-networks/,
    ],
  },
  // The simple form names interfaces with '@': Multus numbers its elements the same way.
  {
    name: 'simple form: mv@net2 then ptp, which Multus names net2 too',
    networks: 'mv@net2,ptp',
    errors: [
      `${A}[0].interface: Invalid value: "net2": Multus names element [1] "net2" too (it sets no interface): element [0] runs first and macvlan in default/mv creates "net2", so Multus fails element [1]'s ADD ("interface name net2 already exists"); name every interface, or none`,
    ],
  },
  {
    name: 'simple form: ptp (net1) then mv@net1',
    networks: 'ptp, default/mv@net1',
    errors: [/\[1\]\.interface: Invalid value: "net1": Multus names element \[0\] "net1" too .* ptp in default\/ptp creates "net1"/],
  },
  { name: 'simple form: defaultNetworks shift the numbers', networks: 'mv@net2,ptp', multusDefaultNetworks: 1 },
  {
    name: 'every interface named: no automatic name to collide with',
    networks: '[{"name":"mv","interface":"net2"},{"name":"ptp","interface":"net1"}]',
  },
  // A config with both `type` and `plugins`: Multus runs the top-level config alone, never the list.
  {
    name: 'type bridge with a plugins list of ipvlan: bridge runs and sets the MAC (no false denial)',
    networks: '[{"name":"br-over-ipvlan","mac":"02:00:00:00:00:01"}]',
  },
  {
    name: 'type ipvlan with a plugins list of bridge: ipvlan runs alone and ignores the MAC',
    networks: '[{"name":"ipvlan-over-br","mac":"02:00:00:00:00:01"}]',
    findings: [
      /^metadata\.annotations\[k8s\.v1\.cni\.cncf\.io\/networks\]\[0\]\.mac: Forbidden: default\/ipvlan-over-br would ignore it: no plugin of its chain \(ipvlan\) reads a MAC/,
    ],
  },
  // Two doors, one value kept: the message says which and why, as each loader reads them (executed).
  {
    name: 'two doors on bridge without the capability: cni-args wins',
    networks: `[{"name":"br","mac":"${M1}","cni-args":{"mac":"${M2}"}}]`,
    warnings: [
      exactly(
        `${A}[0].mac: dropped: the interface gets ${M2} (cni-args "mac"), set last by bridge in default/br: it reads args.cni "mac" after MAC= (runtimeConfig "mac" would win, but its config does not declare the capability)`,
      ),
    ],
    dropped: [`${A}[0].mac`],
  },
  {
    name: 'two doors on bridge declaring the capability: the top-level mac wins',
    networks: `[{"name":"brcap","mac":"${M1}","cni-args":{"mac":"${M2}"}}]`,
    warnings: [
      exactly(
        `${A}[0].cni-args.mac: dropped: the interface gets ${M1} (the top-level "mac"), set last by bridge in default/brcap: it reads runtimeConfig "mac" (the declared capability) after args.cni`,
      ),
    ],
    dropped: [`${A}[0].cni-args.mac`],
  },
  {
    name: 'tuning last: cni-args wins',
    networks: `[{"name":"mv-tuning","mac":"${M1}","cni-args":{"mac":"${M2}"}}]`,
    warnings: [
      exactly(
        `${A}[0].mac: dropped: the interface gets ${M2} (cni-args "mac"), set last by tuning in default/mv-tuning: it reads args.cni "mac" last, after MAC= and runtimeConfig`,
      ),
    ],
    dropped: [`${A}[0].mac`],
  },
  {
    name: 'a kept 20-byte MAC that tuning sets: the interface gets its first 6 bytes, and the dropped warning says so',
    networks: `[{"name":"mv-tuning","mac":"${M1}","cni-args":{"mac":"${IPOIB2}"}}]`,
    warnings: [
      exactly(
        `${A}[0].cni-args.mac: a 20-byte address: tuning sets the MAC on an Ethernet interface (default/mv-tuning spec.config.plugins[1]) and takes only its first 6 bytes: the interface gets 00:00:00:49:fe:80 (an IPoIB address is for an ipoib or ib-sriov network)`,
      ),
      exactly(
        `${A}[0].mac: dropped: the interface gets 00:00:00:49:fe:80 (cni-args "mac"), set last by tuning in default/mv-tuning: it reads args.cni "mac" last, after MAC= and runtimeConfig`,
      ),
    ],
    dropped: [`${A}[0].mac`],
  },
  {
    name: 'the kept MAC named as written (a 6-byte one in another spelling)',
    networks: `[{"name":"mv-tuning","mac":"${M1}","cni-args":{"mac":"02-00-00-00-00-0B"}}]`,
    warnings: [
      exactly(
        `${A}[0].mac: dropped: the interface gets 02-00-00-00-00-0B (cni-args "mac"), set last by tuning in default/mv-tuning: it reads args.cni "mac" last, after MAC= and runtimeConfig`,
      ),
    ],
    dropped: [`${A}[0].mac`],
  },
  {
    // The ADD fails: what the interface would get is no matter (and a "dropped" word would contradict the error).
    name: 'a kept 20-byte MAC where the last setter creates the interface: the error alone',
    networks: `[{"name":"br","mac":"${M1}","cni-args":{"mac":"${IPOIB}"}}]`,
    errors: [/^.*\[0\]\.cni-args\.mac: Invalid value: ".*": a 20-byte address: bridge sets the MAC .*"invalid argument"/],
    dropped: [`${A}[0].mac`],
  },
  {
    name: 'macvlan last, after tuning: the top-level mac wins',
    networks: `[{"name":"tuning-mv","mac":"${M1}","cni-args":{"mac":"${M2}"}}]`,
    warnings: [
      exactly(
        `${A}[0].cni-args.mac: dropped: the interface gets ${M1} (the top-level "mac"), set last by macvlan in default/tuning-mv: it does not read args.cni "mac"`,
      ),
    ],
    dropped: [`${A}[0].cni-args.mac`],
  },
  {
    name: 'one MAC in two spellings through both doors: nothing to say',
    networks: `[{"name":"br","mac":"${M1}","cni-args":{"mac":"02-00-00-00-00-01"}}]`,
  },
  {
    name: 'cni-args mac and MAC, one MAC in two spellings, beside another top-level mac: cni-args wins',
    networks: `[{"name":"br","mac":"${M1}","cni-args":{"mac":"${M2}","MAC":"02-00-00-00-00-02"}}]`,
    warnings: [
      exactly(
        `${A}[0].mac: dropped: the interface gets ${M2} (cni-args "mac"), set last by bridge in default/br: it reads args.cni "mac" after MAC= (runtimeConfig "mac" would win, but its config does not declare the capability)`,
      ),
    ],
    dropped: [`${A}[0].mac`],
  },
  {
    name: 'cni-args mac and MAC that disagree, beside a top-level mac: which one Go keeps is not judged',
    networks: `[{"name":"br","mac":"${M1}","cni-args":{"mac":"${M2}","MAC":"02:00:00:00:00:03"}}]`,
    warnings: [
      exactly(`${A}[0].mac: ${TWO_DOORS('the chain')}`),
      exactly(`${A}[0].cni-args.mac: ${TWO_DOORS('the chain')}`),
      exactly(`${A}[0].cni-args.MAC: ${TWO_DOORS('the chain')}`),
    ],
  },
  {
    name: 'cni-args mac and MAC that disagree, no top-level mac: one door, nothing said here',
    networks: `[{"name":"br","cni-args":{"mac":"${M2}","MAC":"02:00:00:00:00:03"}}]`,
  },
  {
    name: 'two doors on a chain that sets no MAC: reported as unread only',
    networks: `[{"name":"ptp","mac":"${M1}","cni-args":{"mac":"${M2}"}}]`,
    findings: [/default\/ptp would ignore it/],
    warnings: [/cni-args "mac" is read by no plugin of default\/ptp/],
  },
  {
    name: 'two doors on two plugins netattach does not know',
    networks: `[{"name":"vendors","mac":"${M1}","cni-args":{"mac":"${M2}"}}]`,
    warnings: [
      /may be ignored: netattach does not know plugin "vendor-a", "vendor-b"/,
      exactly(`${A}[0].mac: ${TWO_DOORS('plugin "vendor-a", "vendor-b", which netattach does not know,')}`),
      exactly(`${A}[0].cni-args.mac: ${TWO_DOORS('plugin "vendor-a", "vendor-b", which netattach does not know,')}`),
    ],
  },
  {
    name: 'cni-args ips beside a top-level mac: no second MAC door',
    networks: `[{"name":"br","mac":"${M1}","cni-args":{"ips":["10.1.0.5"]}}]`,
    warnings: [/cni-args "ips" is read by no plugin of default\/br/],
  },
  {
    name: 'an 8-byte cni-args mac: the one error where it is read, not judged again as set',
    networks: '[{"name":"br","cni-args":{"mac":"02:00:00:00:00:00:00:01"}}]',
    errors: [/^.*\[0\]\.cni-args\.mac: Invalid value: "02:00:00:00:00:00:00:01": an 8-byte address is not a valid mac/],
  },
  {
    name: 'a malformed cni-args mac: the one error where it is read',
    networks: '[{"name":"br","cni-args":{"mac":"zz"}}]',
    errors: [/^.*\[0\]\.cni-args\.mac: Invalid value: "zz": must be a 6-byte Ethernet MAC/],
  },
  {
    name: 'two plugins set one multicast MAC: one error, naming the first',
    networks: '[{"name":"mv-tuning","mac":"03:00:00:00:00:01"}]',
    errors: [/^.*\[0\]\.mac: Invalid value: "03:00:00:00:00:01": a multicast MAC .*: macvlan sets the MAC .*plugins\[0\]\)/],
  },
  {
    name: 'tuning shortens an IPoIB address, then bridge fails on it: the error alone',
    networks: `[{"name":"tuning-br","mac":"${IPOIB}"}]`,
    errors: [
      /^.*\[0\]\.mac: Invalid value: ".*": a 20-byte address: bridge sets the MAC .*plugins\[1\]\), and the kernel refuses it \("invalid argument"\)/,
    ],
  },
  {
    // The macvlan error fails the ADD, so nothing is "dropped" for an interface that is never made.
    name: "an error on one door keeps the other door's warning, and says nothing of a dropped MAC",
    networks: `[{"name":"mv-tuning","mac":"${IPOIB}","cni-args":{"mac":"${IPOIB2}"}}]`,
    errors: [/^.*\[0\]\.mac: Invalid value: ".*": a 20-byte address: macvlan sets the MAC/],
    warnings: [
      exactly(
        `${A}[0].cni-args.mac: a 20-byte address: tuning sets the MAC on an Ethernet interface (default/mv-tuning spec.config.plugins[1]) and takes only its first 6 bytes: the interface gets 00:00:00:49:fe:80 (an IPoIB address is for an ipoib or ib-sriov network)`,
      ),
    ],
    dropped: [`${A}[0].mac`],
  },
];

t.test('MAC and interface-name verdicts by chain', async (t) => {
  for (const c of cases) {
    const parsed = parseNetworks(c.networks, { namespace: 'default' });
    t.same(parsed.errors, [], `${c.name}: the annotation itself is valid`);
    const extra = c.extra ? parsePluginReads(c.extra) : NO_EXTRA_READERS;
    const r = builtinChecks(parsed.networks, nads, extra, 'multusDefaultNetworks' in c ? c.multusDefaultNetworks : 0);
    const errors = r.errors.map(renderError);
    t.equal(errors.length, c.errors?.length ?? 0, `${c.name}: errors ${JSON.stringify(errors)}`);
    c.errors?.forEach((e, i) =>
      typeof e === 'string' ? t.equal(errors[i], e, `${c.name}: error ${i}`) : t.match(errors[i], e, `${c.name}: error ${i}`),
    );
    const findings = r.findings.map((f) => renderError(f.error));
    t.equal(findings.length, c.findings?.length ?? 0, `${c.name}: findings ${JSON.stringify(findings)}`);
    c.findings?.forEach((f, i) => t.match(findings[i], f, `${c.name}: finding ${i}`));
    const warnings = [...r.fieldWarnings.map(renderError), ...r.warnings.map((n) => `${n.path}: ${n.text}`)];
    t.equal(warnings.length, c.warnings?.length ?? 0, `${c.name}: warnings ${JSON.stringify(warnings)}`);
    c.warnings?.forEach((w, i) => t.match(warnings[i], w, `${c.name}: warning ${i}`));
    for (const w of warnings) t.notMatch(w, /will fail|would fail/, `${c.name}: a warning never says the pod fails`);
    t.same(r.dropped, c.dropped ?? [], `${c.name}: dropped`);
  }
});

t.test(
  'any MAC through either door: an error exactly where the plugin that keeps it cannot set it; warnings never say the pod fails',
  async (t) => {
    const octet = fc.integer({ min: 0, max: 255 });
    const mac = fc
      .oneof(
        fc.array(octet, { minLength: 6, maxLength: 6 }),
        fc.constantFrom([0, 0, 0, 0, 0, 0], [255, 255, 255, 255, 255, 255]),
        fc.array(octet, { minLength: 20, maxLength: 20 }),
      )
      .map((b) => b.map((x) => x.toString(16).padStart(2, '0')).join(':'));
    const nadName = fc.constantFrom('br', 'brcap', 'mv', 'tap', 'ptp-tuning', 'mv-tuning', 'vendor', 'br-vendor');
    fc.assert(
      fc.property(nadName, fc.option(mac, { nil: undefined }), fc.option(mac, { nil: undefined }), (name, top, args) => {
        const sel: Record<string, unknown> = { name };
        if (top !== undefined) sel['mac'] = top;
        if (args !== undefined) sel['cni-args'] = { mac: args };
        const parsed = parseNetworks(JSON.stringify([sel]), { namespace: 'default' });
        const r = builtinChecks(parsed.networks, nads, NO_EXTRA_READERS);
        // The value each chain's MAC setters keep (executed facts, docs/cni-runtime.md).
        const setters: Record<string, Array<['top' | 'args', 'create' | 'set']>> = {
          br: [[args !== undefined ? 'args' : 'top', 'create']],
          brcap: [[top !== undefined ? 'top' : 'args', 'create']],
          mv: [['top', 'create']],
          tap: [['top', 'create']],
          'ptp-tuning': [[args !== undefined ? 'args' : 'top', 'set']],
          'mv-tuning': [
            ['top', 'create'],
            [args !== undefined ? 'args' : 'top', 'set'],
          ],
          vendor: [],
          'br-vendor': [[args !== undefined ? 'args' : 'top', 'create']],
        };
        const fails = setters[name]!.some(([door, how]) => {
          const v = door === 'top' ? top : args;
          if (v === undefined) return false;
          const b = v.split(':').map((x) => parseInt(x, 16));
          if (b.length !== 6 && how === 'create') return true;
          const head = b.slice(0, 6);
          return head.every((x) => x === 0) || (head[0]! & 1) === 1;
        });
        const notes = [...r.fieldWarnings.map(renderError), ...r.warnings.map((n) => n.text)];
        return r.errors.length > 0 === fails && notes.every((w) => !/will fail|would fail/.test(w));
      }),
      { numRuns: 500 },
    );
    t.pass('held');
  },
);

t.test('parseMultusDefaultNetworks: a whole number of up to three digits, or not given', async (t) => {
  const { parseMultusDefaultNetworks } = await import('../../src/admission/index.js');
  t.equal(parseMultusDefaultNetworks(undefined), undefined);
  for (const [text, n] of [
    ['0', 0],
    ['7', 7],
    ['12', 12],
    ['123', 123],
  ] as const)
    t.equal(parseMultusDefaultNetworks(text), n, text);
  for (const text of ['', '1234', 'x', '-1', '1.5', ' 1', 'a12', '12a']) {
    t.throws(
      () => parseMultusDefaultNetworks(text),
      new RangeError(
        `--multus-default-networks: invalid value ${JSON.stringify(text)}: a whole number, the length of defaultNetworks in Multus's config`,
      ),
      JSON.stringify(text),
    );
  }
});

t.test('an explicit netN past the annotation, or naming itself, collides with nothing', async (t) => {
  for (const networks of ['[{"name":"br","interface":"net9"},{"name":"br"}]', '[{"name":"br","interface":"net1"},{"name":"br"}]']) {
    const parsed = parseNetworks(networks, { namespace: 'default' });
    const r = builtinChecks(parsed.networks, nads, NO_EXTRA_READERS, 0);
    t.strictSame(r.errors, [], networks);
  }
});
