// The bounded interners (src/nads/intern.ts): one copy of a value while held, never more than
// their size held, for either way of making room.
import t from 'tap';
import { Interner } from '../../src/nads/intern.js';

t.test("'first' keeps the first values for good and hands out fresh ones past its size", async (t) => {
  const i = new Interner<object>(4, 'first');
  const a = i.get('a', () => ({ v: 'a' }));
  for (const k of ['b', 'c', 'd', 'e', 'f']) i.get(k, () => ({ v: k }));
  t.equal(i.size, 4, 'at the cap');
  t.equal(
    i.get('a', () => ({ v: 'other' })),
    a,
    'the first value is kept however long unused',
  );
  t.not(
    i.get('e', () => ({ v: 'e' })),
    i.get('e', () => ({ v: 'e' })),
    'past the cap: not interned',
  );
});

t.test("'recent' keeps the values used lately, at most its size, whatever the churn", async (t) => {
  const i = new Interner<object>(10, 'recent');
  const hot = i.get('hot', () => ({ v: 'hot' }));
  let made = 0;
  for (let n = 0; n < 1000; n++) {
    i.get(`cold-${n}`, () => (made++, { v: n }));
    t.ok(i.size <= 10, `bounded after ${n + 1}`);
    if (n % 3 === 0)
      t.equal(
        i.get('hot', () => ({ v: 'again' })),
        hot,
        'a value used every few lookups stays shared',
      );
  }
  t.equal(made, 1000, 'every new key made once');
  const cold = i.get('cold-0', () => ({ v: 'new' }));
  t.same(cold, { v: 'new' }, 'a value unused for two generations is gone: made again');
  t.equal(
    i.get('cold-0', () => ({ v: 'third' })),
    cold,
    'and shared from then on',
  );
});

t.test('a value found in the older generation moves up and outlives the next turn', async (t) => {
  const i = new Interner<string>(4, 'recent');
  const a = 'a';
  i.get('a', () => a);
  i.get('b', () => 'b'); // young {a, b}: full
  i.get('c', () => 'c'); // old {a, b}, young {c}
  t.equal(
    i.get('a', () => 'A2'),
    a,
    'found in the older generation',
  );
  i.get('d', () => 'd'); // old {c, a}, young {d}
  i.get('e', () => 'e'); // young {d, e}
  i.get('f', () => 'f'); // old {d, e}, young {f}: a, used one generation ago, is gone
  t.equal(
    i.get('a', () => 'A3'),
    'A3',
  );
  t.throws(() => new Interner(1, 'recent'), RangeError, 'a size below 2 is refused');
});

t.test('the default size: 10,000 values kept, the 10,001st handed out fresh', async (t) => {
  const i = new Interner<object>();
  for (let n = 0; n < 10_000; n++) i.get(`k${n}`, () => ({ n }));
  t.equal(i.size, 10_000);
  const first = i.get('k0', () => ({ n: 'again' }));
  t.same(first, { n: 0 }, 'the first values are kept (eviction "first" by default)');
  i.get('k10000', () => ({ n: 10_000 }));
  t.equal(i.size, 10_000, 'not one more');
  t.not(
    i.get('k10000', () => ({ n: 'x' })),
    i.get('k10000', () => ({ n: 'x' })),
  );
});

t.test("'recent' turns a generation at half its size, exactly", async (t) => {
  const i = new Interner<string>(6, 'recent');
  for (const k of ['a', 'b', 'c']) i.get(k, () => k);
  t.equal(i.size, 3, 'three in the young generation');
  i.get('d', () => 'd'); // young full at 3 = 6 >> 1: turns
  t.equal(i.size, 4);
  for (const k of ['e', 'f']) i.get(k, () => k);
  t.equal(i.size, 6, 'old {a, b, c}, young {d, e, f}');
  i.get('g', () => 'g'); // turns again: a, b, c dropped
  t.equal(i.size, 4, 'old {d, e, f}, young {g}');
  let made = 0;
  i.get('a', () => (made++, 'a'));
  t.equal(made, 1, 'a, two generations old, is made again');
  i.get('d', () => (made++, 'd'));
  t.equal(made, 1, 'd, one generation old, is found');
  t.throws(
    () => new Interner(2.5),
    { name: 'RangeError', message: 'interner size 2.5: an integer of at least 2' },
    'a size must be an integer, and the message says which',
  );
  t.doesNotThrow(() => new Interner(2, 'recent'), 'two is enough');
});

t.test('internList: one frozen copy per list, order kept, the caller’s array never shared', async (t) => {
  const { internList, EMPTY_LIST } = await import('../../src/nads/intern.js');
  t.equal(internList([]), EMPTY_LIST, 'the empty list is one constant');
  t.ok(Object.isFrozen(EMPTY_LIST));
  const mine = ['intel.com/sriov_a', 'intel.com/sriov_b'];
  const a = internList(mine);
  t.not(a, mine, 'a copy');
  t.ok(Object.isFrozen(a), 'frozen');
  mine.push('changed');
  t.strictSame(a, ['intel.com/sriov_a', 'intel.com/sriov_b'], 'later changes to the caller’s array do not reach it');
  t.equal(internList(['intel.com/sriov_a', 'intel.com/sriov_b']), a, 'an equal list: the same instance');
  t.not(internList(['intel.com/sriov_b', 'intel.com/sriov_a']), a, 'another order is another list');
});

t.test('internSummary: one frozen summary per cniVersion, plugins and set of capabilities', async (t) => {
  const { internSummary } = await import('../../src/nads/intern.js');
  const plugin = { type: 'macvlan', capabilities: ['mac', 'ips'], path: 'spec.config' };
  const make = (caps: string[], cniVersion?: string) => ({
    pluginTypes: ['macvlan'],
    capabilities: new Set(caps),
    plugins: [{ ...plugin }],
    ...(cniVersion === undefined ? {} : { cniVersion }),
  });
  const a = internSummary(make(['mac', 'ips'], '1.0.0'));
  t.equal(internSummary(make(['ips', 'mac'], '1.0.0')), a, 'capabilities in another order: the same summary');
  t.strictSame([...a.capabilities], ['ips', 'mac'], 'its capabilities, sorted');
  t.strictSame(a.pluginTypes, ['macvlan']);
  t.equal(a.cniVersion, '1.0.0');
  t.strictSame(a.plugins, [plugin], 'its plugins, as given');
  t.ok(
    Object.isFrozen(a) && Object.isFrozen(a.pluginTypes) && Object.isFrozen(a.plugins) && Object.isFrozen(a.plugins[0]),
    'frozen through',
  );
  t.not(internSummary(make(['mac', 'ips'], '0.4.0')), a, 'another cniVersion');
  t.not(internSummary(make(['mac'], '1.0.0')), a, 'other capabilities');
  const bare = internSummary(make(['mac', 'ips']));
  t.not(bare, a, 'no cniVersion is not 1.0.0');
  t.notOk(Object.hasOwn(bare, 'cniVersion'), 'and has no cniVersion key at all');
  const other = make(['mac', 'ips'], '1.0.0');
  other.plugins[0] = { ...plugin, type: 'ipvlan' };
  t.not(internSummary(other), a, 'other plugins');
});

t.test('detach and internString: the same text', async (t) => {
  const { detach, internString } = await import('../../src/nads/intern.js');
  const long = 'a-long-uid-0123456789-abcdef';
  t.equal(detach(long), long);
  t.equal(detach('short'), 'short');
  t.equal(internString('team-a'), 'team-a');
  t.equal(internString(long), long);
});
