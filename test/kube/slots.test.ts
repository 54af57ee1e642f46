// RequestSlots: the gate on cache-miss GETs (src/kube/slots.ts).
import t from 'tap';
import { RequestSlots } from '../../src/kube/slots.js';

const busy = (ms: number): void => {
  const end = performance.now() + ms;
  while (performance.now() < end);
};

t.test('slots at once up to the cap, then waiting up to its cap, then full', async (t) => {
  const slots = new RequestSlots(2, 1);
  t.equal(slots.acquire(100), 'ok');
  t.equal(slots.acquire(100), 'ok');
  const waiting = slots.acquire(100);
  t.type(waiting, Promise);
  t.equal(slots.acquire(100), 'full', 'one waiting is the cap');
  t.same(slots.load(), { running: 2, waiting: 1 });
  slots.release();
  t.equal(await waiting, 'ok', 'the released slot goes to the waiting lookup');
  t.same(slots.load(), { running: 2, waiting: 0 });
  slots.release();
  slots.release();
  t.same(slots.load(), { running: 0, waiting: 0 });
});

t.test('a wait runs out: timeout, and the slot is not taken', async (t) => {
  const slots = new RequestSlots(1, 4);
  t.equal(slots.acquire(10), 'ok');
  t.equal(await slots.acquire(10), 'timeout');
  t.same(slots.load(), { running: 1, waiting: 0 });
});

t.test('a slot freed after a waiter deadline passed, before its timer ran: timeout, not a GET nobody awaits', async (t) => {
  // What a loaded event loop does: the expired timers run one after another, and a slot freed by
  // the first (a lookup giving up) would reach a waiter whose own deadline already passed.
  const slots = new RequestSlots(1, 4);
  t.equal(slots.acquire(1000), 'ok');
  const late = slots.acquire(20);
  const live = slots.acquire(5000);
  busy(40);
  slots.release();
  t.equal(await late, 'timeout', 'the waiter past its deadline is not handed the slot');
  t.equal(await live, 'ok', 'the next waiter still in time gets it');
  t.same(slots.load(), { running: 1, waiting: 0 });
  slots.release();
  t.same(slots.load(), { running: 0, waiting: 0 });
});

t.test('a slot freed just before a waiter deadline: timeout, not a GET with no time to be answered', async (t) => {
  // The lookups in flight time out on the same millisecond as the waiters: the slot the first
  // frees reaches a waiter with a fraction of a millisecond left (a CI run of 5 December).
  const slots = new RequestSlots(1, 4, 10);
  t.equal(slots.acquire(1000), 'ok');
  const almost = slots.acquire(30);
  const live = slots.acquire(5000);
  busy(25);
  slots.release();
  t.equal(await almost, 'timeout', 'less than minLeftMs left: not handed the slot');
  t.equal(await live, 'ok', 'the next waiter with time left gets it');
  slots.release();
  t.same(slots.load(), { running: 0, waiting: 0 });
});
