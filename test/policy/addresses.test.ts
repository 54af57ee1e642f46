// The hardware-address facts behind the hardwareAddresses and uniqueAddresses rules, pinned where
// the engine table left mutants alive (docs/mutation.md): which values are special, which
// addresses the MAC prefixes apply to, and the kind of each claim.
import t from 'tap';
import { renderError } from '../../src/field/index.js';
import { PolicyEngine, policySet } from '../../src/policy/index.js';
import { input, policies, policyYaml } from './helpers.js';

const engine = (spec: string): PolicyEngine => new PolicyEngine({ policies: policySet(policies(policyYaml('p', spec))) });
const IPOIB = (guid: string) => `00:00:00:00:fe:80:00:00:00:00:00:00:${guid}`;

t.test('special values need both hex digits of every byte to match', async (t) => {
  // 10:00:00:00:00:00 and a port GUID of 10:00:...: the second digits are all zero, the first are not.
  const annotation = JSON.stringify([
    { name: 'a', mac: '10:00:00:00:00:00' },
    { name: 'b', mac: '1f:ff:ff:ff:ff:ff' },
    { name: 'ib', mac: IPOIB('10:00:00:00:00:00:00:00') },
    { name: 'ib', mac: IPOIB('1f:ff:ff:ff:ff:ff:ff:ff') },
  ]);
  const r = engine('rules:\n  hardwareAddresses: {}').evaluate(input(annotation));
  t.same(
    r.findings.map((f) => renderError(f.error)),
    [
      'metadata.annotations[k8s.v1.cni.cncf.io/networks][1].mac: Forbidden: policy "p" (hardwareAddresses): MAC 1f:ff:ff:ff:ff:ff is a multicast MAC',
    ],
  );
});

t.test('MAC prefixes apply to 6-byte MACs only, not to IPoIB addresses or GUIDs', async (t) => {
  const annotation = JSON.stringify([
    { name: 'ib', mac: IPOIB('00:11:22:33:44:55:66:77'), 'infiniband-guid': '00:11:22:33:44:55:66:78' },
    { name: 'a', mac: '02:bb:00:00:00:01' },
  ]);
  const r = engine('rules:\n  hardwareAddresses:\n    macPrefixes: ["02:aa"]').evaluate(input(annotation));
  t.same(
    r.findings.map((f) => renderError(f.error)),
    [
      'metadata.annotations[k8s.v1.cni.cncf.io/networks][1].mac: Forbidden: policy "p" (hardwareAddresses): MAC 02:bb:00:00:00:01 does not start with an allowed prefix (02:aa)',
    ],
  );
});

t.test('claims: an IPoIB address is claimed as a mac, a GUID as an infiniband-guid, canonical', async (t) => {
  const annotation = JSON.stringify([
    { name: 'ib', mac: IPOIB('00:11:22:33:44:55:66:77').toUpperCase(), 'infiniband-guid': '00:11:22:33:44:55:66:78' },
  ]);
  const r = engine('rules:\n  uniqueAddresses: {mac: Network, infiniband-guid: Cluster}').evaluate(input(annotation));
  t.same(r.findings, []);
  t.same(
    r.addresses.map((c) => [c.kind, c.value, c.scope]),
    [
      ['mac', IPOIB('00:11:22:33:44:55:66:77'), 'network:team-a/ib'],
      ['infiniband-guid', '00:11:22:33:44:55:66:78', 'network:team-a/ib'],
    ],
  );
});

// cni-args is a second door to the same addresses (src/policy/addresses.ts, addressFacts): its
// `mac` and `guid` become the same facts as the top-level keys, and an address given both ways on
// one network is one address, named by the top-level path.
const A = 'metadata.annotations[k8s.v1.cni.cncf.io/networks]';
const prefixRule = 'rules:\n  hardwareAddresses:\n    macPrefixes: ["02:aa"]\n  uniqueAddresses: {mac: Network, infiniband-guid: Network}';
const judged = (annotation: unknown[]) => {
  const r = engine(prefixRule).evaluate(input(JSON.stringify(annotation)));
  return { messages: r.findings.map((f) => renderError(f.error)), claims: r.addresses.map((c) => [c.kind, c.value, c.scope]) };
};
const outsidePrefix = (path: string, mac: string) =>
  `${A}${path}: Forbidden: policy "p" (hardwareAddresses): MAC ${mac} does not start with an allowed prefix (02:aa)`;

t.test('cni-args: a mac is a MAC (kind mac, checked against the prefixes), a guid a GUID', async (t) => {
  const r = judged([{ name: 'a', 'cni-args': { mac: '02:BB:00:00:00:01', guid: '00:11:22:33:44:55:66:77' } }]);
  t.strictSame(r.messages, [outsidePrefix('[0].cni-args.mac', '02:bb:00:00:00:01')]);
  t.strictSame(r.claims, [
    ['mac', '02:bb:00:00:00:01', 'network:team-a/a'],
    ['infiniband-guid', '00:11:22:33:44:55:66:77', 'network:team-a/a'],
  ]);
});

t.test('cni-args: an address also given at the top level of its network is one address, at the top-level path', async (t) => {
  const r = judged([
    {
      name: 'a',
      mac: '02:bb:00:00:00:01',
      'infiniband-guid': '00:11:22:33:44:55:66:77',
      'cni-args': { mac: '02-BB-00-00-00-01', guid: '00:11:22:33:44:55:66:77' },
    },
  ]);
  t.strictSame(r.messages, [outsidePrefix('[0].mac', '02:bb:00:00:00:01')], 'one finding, no twin within the request');
  t.strictSame(r.claims, [
    ['mac', '02:bb:00:00:00:01', 'network:team-a/a'],
    ['infiniband-guid', '00:11:22:33:44:55:66:77', 'network:team-a/a'],
  ]);
});

t.test('cni-args: the same address on another network, or another address on the same one, is another address', async (t) => {
  const otherNetwork = judged([
    { name: 'a', mac: '02:bb:00:00:00:01' },
    { name: 'b', 'cni-args': { mac: '02:bb:00:00:00:01' } },
  ]);
  t.strictSame(otherNetwork.messages, [
    outsidePrefix('[0].mac', '02:bb:00:00:00:01'),
    outsidePrefix('[1].cni-args.mac', '02:bb:00:00:00:01'),
  ]);
  t.strictSame(otherNetwork.claims, [
    ['mac', '02:bb:00:00:00:01', 'network:team-a/a'],
    ['mac', '02:bb:00:00:00:01', 'network:team-a/b'],
  ]);
  const otherAddress = judged([{ name: 'a', mac: '02:aa:00:00:00:01', 'cni-args': { mac: '02:bb:00:00:00:02' } }]);
  t.strictSame(otherAddress.messages, [outsidePrefix('[0].cni-args.mac', '02:bb:00:00:00:02')]);
  t.strictSame(otherAddress.claims, [
    ['mac', '02:aa:00:00:00:01', 'network:team-a/a'],
    ['mac', '02:bb:00:00:00:02', 'network:team-a/a'],
  ]);
});

// The paths a NAD's chain replaces by the other door's value (the admission's MAC checks give
// them as PolicyInput.droppedAddresses): what never reaches a plugin is no address of the pod.
t.test('dropped: a top-level mac or a cni-args address the chain replaces is not an address', async (t) => {
  const annotation = JSON.stringify([{ name: 'a', mac: '02:bb:00:00:00:01', 'cni-args': { mac: '02:aa:00:00:00:02' } }]);
  const claimsOf = (dropped?: string[]) =>
    engine(prefixRule)
      .evaluate(input(annotation, dropped ? { droppedAddresses: new Set(dropped) } : {}))
      .addresses.map((c) => c.value);
  t.strictSame(claimsOf(), ['02:bb:00:00:00:01', '02:aa:00:00:00:02'], 'without drops: both doors count');
  t.strictSame(claimsOf([`${A}[0].mac`]), ['02:aa:00:00:00:02'], 'the top-level mac dropped: only cni-args');
  t.strictSame(claimsOf([`${A}[0].cni-args.mac`]), ['02:bb:00:00:00:01'], 'the cni-args mac dropped: only the top level');
  t.strictSame(claimsOf([`${A}[1].mac`]), ['02:bb:00:00:00:01', '02:aa:00:00:00:02'], "another network's path drops nothing here");
});
