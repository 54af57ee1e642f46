// podNetworkFacts keeps its answers by their inputs (a pod's watch events repeat one text): a
// repeated text gets the same answer, and every input is part of the key. The bounds are the
// documented ones: texts of at most 4,096 characters in all, 1 MiB of estimated size.
import t from 'tap';
// The module itself, not src/policy/index.ts: a mutant's run loads less.
import { POD_FACTS_CACHE_BYTES, podNetworkFacts } from '../../src/policy/pod-source.js';

const text = JSON.stringify([
  { name: 'net-a', mac: '02:00:00:00:00:01' },
  { namespace: 'other', name: 'net-b', interface: 'net2' },
]);
const MAC = '[{"name":"n","mac":"02:00:00:00:00:01"}]';
/** The networks annotation MAC, padded with blanks inside the list to `length` characters. */
const macOf = (length: number): string => MAC.slice(0, -1) + ' '.repeat(length - MAC.length) + ']';
/** The default network `d`, after blanks, `length` characters. */
const defaultOf = (length: number): string => ' '.repeat(length - 1) + 'd';

t.test('a repeated text is answered from the cache, with the same facts', async (t) => {
  const first = podNetworkFacts('team-a', text);
  t.strictSame(first, {
    addresses: [{ kind: 'mac', value: '02:00:00:00:00:01', network: 'team-a/net-a' }],
    nads: ['team-a/net-a', 'other/net-b'],
  });
  t.equal(podNetworkFacts('team-a', text), first, 'the same object: not read again');
  const dflt = podNetworkFacts('team-a', undefined, 'dflt');
  t.equal(podNetworkFacts('team-a', undefined, 'dflt'), dflt, 'a default network alone is kept too');
  const bare = podNetworkFacts('team-a', undefined);
  t.strictSame(bare, { addresses: [], nads: [] });
  t.equal(podNetworkFacts('team-a', undefined), bare, 'and a pod with neither annotation');
});

t.test('the namespace, the default network and its namespace are part of the key', async (t) => {
  t.strictSame(podNetworkFacts('team-b', text).nads, ['team-b/net-a', 'other/net-b']);
  t.strictSame(podNetworkFacts('team-a', text, 'dflt').nads, ['team-a/net-a', 'other/net-b', 'kube-system/dflt']);
  t.strictSame(podNetworkFacts('team-a', text, 'dflt', 'nets').nads, ['team-a/net-a', 'other/net-b', 'nets/dflt']);
  // Length-prefixed parts: moving text between the annotation and the default network is another key.
  t.strictSame(podNetworkFacts('team-a', undefined, 'dflt').nads, ['kube-system/dflt']);
  t.strictSame(podNetworkFacts('team-a', 'dflt', undefined).nads, ['team-a/dflt']);
  // Where a key joined by '|' would meet: the separator inside a part.
  t.strictSame(podNetworkFacts('a|b', 'c').nads, ['a|b/c']);
  t.strictSame(podNetworkFacts('a', 'b|c').nads, ['a/b|c']);
  // An absent annotation and one reading '-' (or empty) are other inputs: other answers, equal as they are.
  const absent = podNetworkFacts('team-a', undefined, undefined, 'nets');
  t.not(podNetworkFacts('team-a', '-', undefined, 'nets'), absent);
  t.not(podNetworkFacts('team-a', '', undefined, 'nets'), absent);
  t.not(podNetworkFacts('team-a', undefined, '-', 'nets'), absent);
  t.equal(podNetworkFacts('team-a', undefined, undefined, 'nets'), absent);
});

t.test('a text past the cached length is read every time, and read right', async (t) => {
  const long = JSON.stringify(Array.from({ length: 200 }, (_, i) => ({ name: `net-${i}`, interface: `net${i}` })));
  t.ok(long.length > 4096);
  const a = podNetworkFacts('team-a', long);
  t.equal(a.nads.length, 200);
  t.not(podNetworkFacts('team-a', long), a, 'not kept');
  t.strictSame(podNetworkFacts('team-a', long), a);
});

t.test('texts of 4,096 characters in all are kept, of 4,097 read every time: either annotation, or both', async (t) => {
  const mac = { addresses: [{ kind: 'mac', value: '02:00:00:00:00:01', network: 'ns/n' }], nads: ['ns/n'] };
  const both = { addresses: mac.addresses, nads: ['ns/n', 'kube-system/d'] };
  const cases: Array<[string, string | undefined, string | undefined, number, object]> = [
    ['the networks annotation', macOf(4096), undefined, 4096, mac],
    ['the networks annotation', macOf(4097), undefined, 4097, mac],
    ['the default network', undefined, defaultOf(4096), 4096, { addresses: [], nads: ['kube-system/d'] }],
    ['the default network', undefined, defaultOf(4097), 4097, { addresses: [], nads: ['kube-system/d'] }],
    ['both, 4,000 and 96', macOf(4000), defaultOf(96), 4096, both],
    ['both, 4,000 and 97', macOf(4000), defaultOf(97), 4097, both],
  ];
  for (const [what, networks, defaultNetwork, total, expected] of cases) {
    const name = `${what}, ${total} in all`;
    t.equal((networks?.length ?? 0) + (defaultNetwork?.length ?? 0), total, `${name}: the length`);
    const first = podNetworkFacts('ns', networks, defaultNetwork);
    t.strictSame(first, expected, `${name}: read right`);
    if (total <= 4096) t.equal(podNetworkFacts('ns', networks, defaultNetwork), first, `${name}: kept`);
    else t.not(podNetworkFacts('ns', networks, defaultNetwork), first, `${name}: read again`);
  }
});

t.test('the cache holds 1 MiB of estimated size, the oldest use leaving first', async (t) => {
  t.equal(POD_FACTS_CACHE_BYTES, 1024 * 1024);
  // An entry is estimated at twice its key's length, 256, and 128 per address and per NAD. The key
  // length-prefixes the four inputs: here '702:<namespace>|40:<MAC>|-|11:kube-system|', 768
  // characters, so with one address and one NAD an entry is 2 * 768 + 256 + 2 * 128 = 2,048: 512
  // entries are exactly 1 MiB.
  const namespaceOf = (i: number): string => String(i).padStart(702, 'n');
  const held = Array.from({ length: 512 }, (_, i) => podNetworkFacts(namespaceOf(i), MAC));
  t.strictSame(held[511], {
    addresses: [{ kind: 'mac', value: '02:00:00:00:00:01', network: `${namespaceOf(511)}/n` }],
    nads: [`${namespaceOf(511)}/n`],
  });
  // Each look-up makes its entry the newest; in the order made, the order stays.
  const stillHeld = (): number => held.filter((facts, i) => podNetworkFacts(namespaceOf(i), MAC) === facts).length;
  t.equal(stillHeld(), 512, '512 entries of 2,048: all held');
  // 1,000 NADs, past the cached length: read, and not kept at the expense of the others.
  t.equal(podNetworkFacts('ns', 'n,'.repeat(2048) + 'n').nads.length, 1000);
  t.equal(stillHeld(), 512, 'a text read every time takes no room');
  podNetworkFacts(namespaceOf(512), MAC);
  t.not(podNetworkFacts(namespaceOf(0), MAC), held[0], 'the 513th: the oldest is gone');
});
