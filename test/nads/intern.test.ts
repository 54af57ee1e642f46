// The bounded interners (src/nads/intern.ts): one copy of a value while held, never more than
// their size held, for either way of making room.
import t from 'tap';
import { Interner } from '../../src/nads/intern.js';

t.test("'first' keeps the first values for good and hands out fresh ones past its size", async (t) => {
  const i = new Interner<object>(4, 'first');
  const a = i.get('a', () => ({ v: 'a' }));
  for (const k of ['b', 'c', 'd', 'e', 'f']) i.get(k, () => ({ v: k }));
  t.equal(i.size, 4, 'at the cap');
  t.equal(i.get('a', () => ({ v: 'other' })), a, 'the first value is kept however long unused');
  t.not(i.get('e', () => ({ v: 'e' })), i.get('e', () => ({ v: 'e' })), 'past the cap: not interned');
});

t.test("'recent' keeps the values used lately, at most its size, whatever the churn", async (t) => {
  const i = new Interner<object>(10, 'recent');
  const hot = i.get('hot', () => ({ v: 'hot' }));
  let made = 0;
  for (let n = 0; n < 1000; n++) {
    i.get(`cold-${n}`, () => (made++, { v: n }));
    t.ok(i.size <= 10, `bounded after ${n + 1}`);
    if (n % 3 === 0) t.equal(i.get('hot', () => ({ v: 'again' })), hot, 'a value used every few lookups stays shared');
  }
  t.equal(made, 1000, 'every new key made once');
  const cold = i.get('cold-0', () => ({ v: 'new' }));
  t.same(cold, { v: 'new' }, 'a value unused for two generations is gone: made again');
  t.equal(i.get('cold-0', () => ({ v: 'third' })), cold, 'and shared from then on');
});

t.test('a value found in the older generation moves up and outlives the next turn', async (t) => {
  const i = new Interner<string>(4, 'recent');
  const a = 'a';
  i.get('a', () => a);
  i.get('b', () => 'b'); // young {a, b}: full
  i.get('c', () => 'c'); // old {a, b}, young {c}
  t.equal(i.get('a', () => 'A2'), a, 'found in the older generation');
  i.get('d', () => 'd'); // old {c, a}, young {d}
  i.get('e', () => 'e'); // young {d, e}
  i.get('f', () => 'f'); // old {d, e}, young {f}: a, used one generation ago, is gone
  t.equal(i.get('a', () => 'A3'), 'A3');
  t.throws(() => new Interner(1, 'recent'), RangeError, 'a size below 2 is refused');
});
