// podNetworkFacts keeps its answers by their inputs (a pod's watch events repeat one text): a
// repeated text gets the same answer, and every input is part of the key.
import t from 'tap';
import { podNetworkFacts } from '../../src/policy/index.js';

const text = JSON.stringify([{ name: 'net-a', mac: '02:00:00:00:00:01' }, { namespace: 'other', name: 'net-b', interface: 'net2' }]);

t.test('a repeated text is answered from the cache, with the same facts', async (t) => {
  const first = podNetworkFacts('team-a', text);
  t.strictSame(first, {
    addresses: [{ kind: 'mac', value: '02:00:00:00:00:01', network: 'team-a/net-a' }],
    nads: ['team-a/net-a', 'other/net-b'],
  });
  t.equal(podNetworkFacts('team-a', text), first, 'the same object: not read again');
});

t.test('the namespace, the default network and its namespace are part of the key', async (t) => {
  t.strictSame(podNetworkFacts('team-b', text).nads, ['team-b/net-a', 'other/net-b']);
  t.strictSame(podNetworkFacts('team-a', text, 'dflt').nads, ['team-a/net-a', 'other/net-b', 'kube-system/dflt']);
  t.strictSame(podNetworkFacts('team-a', text, 'dflt', 'nets').nads, ['team-a/net-a', 'other/net-b', 'nets/dflt']);
  // Length-prefixed parts: moving text between the annotation and the default network is another key.
  t.strictSame(podNetworkFacts('team-a', undefined, 'dflt').nads, ['kube-system/dflt']);
  t.strictSame(podNetworkFacts('team-a', 'dflt', undefined).nads, ['team-a/dflt']);
});

t.test('a text past the cached length is read every time, and read right', async (t) => {
  const long = JSON.stringify(Array.from({ length: 200 }, (_, i) => ({ name: `net-${i}`, interface: `net${i}` })));
  t.ok(long.length > 4096);
  const a = podNetworkFacts('team-a', long);
  t.equal(a.nads.length, 200);
  t.not(podNetworkFacts('team-a', long), a, 'not kept');
  t.strictSame(podNetworkFacts('team-a', long), a);
});
