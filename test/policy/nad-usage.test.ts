import t from 'tap';
import { NadUsage, podNetworkFacts } from '../../src/policy/index.js';

t.test('which pods use a NAD: set, replace, remove, resync', async (t) => {
  const u = new NadUsage();
  u.setPod('ns', 'p1', ['ns/a', 'ns/a', 'kube-system/b']);
  u.setPod('ns', 'p2', ['ns/a']);
  u.setPod('other', 'q', ['ns/a']);
  t.same(u.podsUsing('ns', 'a'), ['ns/p1', 'ns/p2', 'other/q'], 'sorted, each pod once');
  t.same(u.podsUsing('kube-system', 'b'), ['ns/p1']);
  t.same(u.podsUsing('ns', 'none'), []);
  u.setPod('ns', 'p1', ['ns/c']);
  t.same(u.podsUsing('ns', 'a'), ['ns/p2', 'other/q'], 'a changed annotation moves the pod');
  t.same(u.podsUsing('kube-system', 'b'), []);
  u.setPod('ns', 'p2', []);
  u.removePod('other', 'q');
  t.same(u.podsUsing('ns', 'a'), []);
  t.same(u.stats(), { pods: 1, nads: 1 }, 'nothing kept for pods without networks or for unused NADs');

  u.setPod('ns', 'keep', ['ns/a']);
  u.beginResync();
  u.setPod('ns', 'keep', ['ns/a']);
  u.endResync();
  t.same(u.podsUsing('ns', 'a'), ['ns/keep']);
  t.same(u.podsUsing('ns', 'c'), [], 'pods not listed again are gone');
});

t.test('a pod set again with the same NADs (its MODIFIED events) changes nothing; other NADs or another order replace them', async (t) => {
  const u = new NadUsage();
  u.setPod('ns', 'p', ['ns/a', 'ns/b']);
  u.setPod('ns', 'p', ['ns/a', 'ns/b', 'ns/a']);
  t.same([u.podsUsing('ns', 'a'), u.podsUsing('ns', 'b'), u.stats()], [['ns/p'], ['ns/p'], { pods: 1, nads: 2 }]);
  u.setPod('ns', 'p', ['ns/b', 'ns/a']);
  t.same([u.podsUsing('ns', 'a'), u.podsUsing('ns', 'b'), u.stats()], [['ns/p'], ['ns/p'], { pods: 1, nads: 2 }]);
  u.setPod('ns', 'p', ['ns/b']);
  t.same([u.podsUsing('ns', 'a'), u.podsUsing('ns', 'b'), u.stats()], [[], ['ns/p'], { pods: 1, nads: 1 }]);
  u.setPod('ns', 'p', ['ns/b']);
  u.setPod('ns', 'p', ['ns/c']);
  t.same([u.podsUsing('ns', 'b'), u.podsUsing('ns', 'c'), u.stats()], [[], ['ns/p'], { pods: 1, nads: 1 }]);
});

t.test('the networks annotation read once: NADs (qualified) and canonical addresses', async (t) => {
  const facts = podNetworkFacts('ns', '[{"name":"a","mac":"02-00-00-00-00-01"},{"name":"b","namespace":"x"}]');
  t.same(facts.nads, ['ns/a', 'x/b']);
  t.same(facts.addresses, [{ kind: 'mac', value: '02:00:00:00:00:01', network: 'ns/a' }]);
  t.same(podNetworkFacts('ns', 'a@eth1, other/b').nads, ['ns/a', 'other/b']);
  t.same(podNetworkFacts('ns', undefined), { addresses: [], nads: [] });
});

t.test('the default-network annotation counts too, resolved as the admission core resolves it', async (t) => {
  const cases: Array<[string, string | undefined, string | undefined, string | undefined, string[], Array<{ kind: string; value: string; network: string }>]> = [
    ['unqualified: Multus namespace', 'a', 'calico', undefined, ['ns/a', 'kube-system/calico'], []],
    ['unqualified: configured namespace', undefined, 'calico', 'multus', ['multus/calico'], []],
    ['qualified', undefined, 'net/ovn', 'multus', ['net/ovn'], []],
    ['JSON with a MAC', 'a', '[{"name":"sriov-default","mac":"02-00-00-00-00-0A"}]', undefined, ['ns/a', 'kube-system/sriov-default'], [{ kind: 'mac', value: '02:00:00:00:00:0a', network: 'kube-system/sriov-default' }]],
    ['empty: no override', 'a', '', undefined, ['ns/a'], []],
  ];
  for (const [name, networks, defaultNetwork, defaultNamespace, nads, addresses] of cases) {
    const facts = podNetworkFacts('ns', networks, defaultNetwork, defaultNamespace);
    t.same(facts.nads, nads, name);
    t.same(facts.addresses, addresses, `${name}: addresses`);
  }
});
