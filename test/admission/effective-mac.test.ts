// A top-level `mac` and a `cni-args.mac` that disagree: the chain keeps one (executed with the
// reference plugins v1.10.0, docs/cni-runtime.md), so the policy rules and the uniqueness index
// judge and claim that one; where the chain cannot tell, both. And the annotation's own warnings
// give way to the built-in errors that decide them.
import t from 'tap';
import { renderError } from '../../src/field/index.js';
import { review, type Decision } from '../../src/admission/index.js';
import { AddressIndex, PolicyEngine, policySet } from '../../src/policy/index.js';
import { policies, policyYaml } from '../policy/helpers.js';
import { chain, context, nadLookup, nadObject, pod, request, warningLines } from './fixtures.js';

const nads = nadLookup(
  nadObject('br', { config: chain({ type: 'bridge', bridge: 'br0' }) }),
  nadObject('brcap', { config: chain({ type: 'bridge', bridge: 'br0', capabilities: { mac: true } }) }),
  nadObject('br-vendor', { config: chain({ type: 'bridge', bridge: 'br0' }, { type: 'vendor-meta' }) }),
  nadObject('mv', { config: chain({ type: 'macvlan', master: 'eth1' }) }),
  nadObject('ptp', { config: chain({ type: 'ptp', ipam: { type: 'host-local', subnet: '10.9.0.0/24' } }) }),
);

const A = 'metadata.annotations[k8s.v1.cni.cncf.io/networks]';
const TOP = '02:aa:00:00:00:01';
const ARGS = '02:bb:00:00:00:01';
const both = (name: string) => JSON.stringify([{ name, mac: TOP, 'cni-args': { mac: ARGS } }]);

/** Reviews a pod; `held`: MACs running pods hold on `network`. */
function judge(networks: string, spec: string, held: string[] = [], network = 'default/br'): Decision {
  const index = new AddressIndex();
  held.forEach((mac, i) => index.setPod({ namespace: 'default', name: `old${i}`, uid: `u${i}` }, [{ kind: 'mac', value: mac, network }]));
  const policy = new PolicyEngine({ policies: policySet(policies(policyYaml('p', spec))), index });
  return review(request(pod({ networks })), context(nads, { endpoint: 'validate', policy }));
}

const rendered = (d: Decision): string[] => d.errors.map(renderError);

t.test('hardwareAddresses judges the MAC the interface gets', async (t) => {
  const prefixes = 'rules:\n  hardwareAddresses:\n    macPrefixes: ["02:bb"]';
  // bridge without the capability keeps cni-args: the top-level 02:aa is dropped, not judged.
  const kept = judge(both('br'), prefixes);
  t.equal(kept.allowed, true, `bridge sets cni-args' ${ARGS}: ${JSON.stringify(rendered(kept))}`);
  t.match(warningLines(kept).join('\n'), `${A}[0].mac: dropped: the interface gets ${ARGS}`);
  // bridge with the capability keeps the top level: 02:aa is what the interface gets, and is judged.
  const capped = judge(both('brcap'), prefixes);
  t.equal(capped.allowed, false);
  t.same(rendered(capped), [
    `${A}[0].mac: Forbidden: policy "p" (hardwareAddresses): MAC ${TOP} does not start with an allowed prefix (02:bb)`,
  ]);
  // An unknown plugin after bridge: which one wins cannot be told, both are judged.
  const unsure = judge(both('br-vendor'), prefixes);
  t.equal(unsure.allowed, false, 'neither door bypasses the rule when the chain cannot tell');
  t.same(rendered(unsure), [
    `${A}[0].mac: Forbidden: policy "p" (hardwareAddresses): MAC ${TOP} does not start with an allowed prefix (02:bb)`,
  ]);
});

t.test('uniqueAddresses and the claims follow the MAC the interface gets', async (t) => {
  const unique = 'rules:\n  uniqueAddresses: {mac: Network}';
  const dropHeld = judge(both('br'), unique, [TOP]);
  t.equal(dropHeld.allowed, true, 'the dropped top-level MAC conflicts with nobody');
  t.same(
    dropHeld.addresses.map((c) => c.value),
    [ARGS],
    'only the MAC that takes effect is claimed',
  );
  const keptHeld = judge(both('br'), unique, [ARGS]);
  t.equal(keptHeld.allowed, false);
  t.match(rendered(keptHeld), [
    `${A}[0].cni-args.mac: Forbidden: policy "p" (uniqueAddresses): MAC ${ARGS} is already used by pod default/old0`,
  ]);
  const unsure = judge(both('br-vendor'), unique, [TOP], 'default/br-vendor');
  t.equal(unsure.allowed, false, 'unsure: the top-level MAC is judged too');
  t.same(
    judge(both('br-vendor'), unique)
      .addresses.map((c) => c.value)
      .sort(),
    [TOP, ARGS],
    'unsure: both are claimed',
  );
});

t.test('requestedFields still sees both doors: setting a forbidden field is the offence, whichever wins', async (t) => {
  const d = judge(both('br'), 'rules:\n  requestedFields: {forbidden: [mac]}');
  t.same(
    rendered(d).map((r) => r.split(': Forbidden')[0]),
    [`${A}[0].mac`, `${A}[0].cni-args.mac`],
  );
});

t.test("the annotation's warning gives way to the built-in error that decides it", async (t) => {
  const multicast = review(request(pod({ networks: '[{"name":"br","mac":"03:00:00:00:00:01"}]' })), context(nads));
  t.equal(multicast.allowed, false);
  t.match(rendered(multicast), [
    /\[0\]\.mac: Invalid value: "03:00:00:00:00:01": a multicast MAC .* bridge sets the MAC .* the ADD would fail/,
  ]);
  t.same(
    warningLines(multicast).filter((w) => w.includes('[0].mac')),
    [],
    'no "multicast" warning beside the error',
  );
  const unread = review(request(pod({ networks: '[{"name":"ptp","mac":"03:00:00:00:00:01"}]' })), context(nads));
  t.match(
    warningLines(unread).join('\n'),
    /\[0\]\.mac: Invalid value: "03:00:00.*: a multicast MAC/,
    "no plugin sets it: the annotation's warning stays",
  );
  for (const w of warningLines(unread)) t.notMatch(w, /will fail|would fail/, 'and it never says the pod fails');
  const collide = review(
    request(pod({ networks: '[{"name":"mv","interface":"net2"},{"name":"ptp"}]' })),
    context(nads, { config: { multusDefaultNetworks: 0 } }),
  );
  t.equal(collide.allowed, false, "Multus's defaultNetworks count stated (0, as the manifests do): denied");
  t.match(rendered(collide), [/\[0\]\.interface: Invalid value: "net2": Multus names element \[1\] "net2" too/]);
  t.same(
    warningLines(collide).filter((w) => w.includes('may collide')),
    [],
    'no "may collide" beside the certain failure',
  );
  const unstated = review(request(pod({ networks: '[{"name":"mv","interface":"net2"},{"name":"ptp"}]' })), context(nads));
  t.equal(unstated.allowed, true, 'the count not stated: with one defaultNetwork the pod works, so it is not denied');
  t.match(
    warningLines(unstated),
    [/\[0\]\.interface: "net2": Multus names element \[1\] "net2" too .*when Multus's config has no defaultNetworks/],
    'one warning, which names the chain',
  );
  const unknown = review(
    request(pod({ networks: '[{"name":"unknown-nad-is-missing","interface":"net2"},{"name":"ptp"}]' })),
    context(nads),
  );
  t.match(warningLines(unknown).join('\n'), /may collide with net2/, 'no chain known: the annotation-only warning stays');
});
