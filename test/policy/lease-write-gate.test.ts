// The call gate of the address claims (src/policy/lease-write-gate.ts): how many calls run at once,
// who goes first when a slot frees, how many requests may wait, and what a refusal is.
import { getEventListeners } from 'node:events';
import t from 'tap';
import { GateRefused, LeaseWriteGate, type GatePriority } from '../../src/policy/lease-write-gate.js';

const tick = () => new Promise((r) => setImmediate(r));

/** A gate whose calls run until released one by one, in the order they started. */
function harness(limits: ConstructorParameters<typeof LeaseWriteGate>[0]) {
  const gate = new LeaseWriteGate(limits);
  const never = new AbortController().signal;
  const started: string[] = [];
  const running = new Map<string, () => void>();
  const outcomes = new Map<string, unknown>();
  const run = (priority: GatePriority, name: string, signal = never) => {
    const p = gate.run(priority, signal, () => {
      started.push(name);
      return new Promise<string>((resolve) => running.set(name, () => resolve(name)));
    });
    p.then(
      (v) => outcomes.set(name, v),
      (err: unknown) => outcomes.set(name, err),
    );
    return p;
  };
  const finish = async (name: string) => {
    const done = running.get(name);
    if (!done) throw new Error(`${name} is not running`);
    running.delete(name);
    done();
    await tick();
    await tick();
  };
  const drain = async () => {
    while (running.size > 0) await finish([...running.keys()][0]!);
  };
  return { gate, run, started, finish, drain, outcomes };
}

t.test('at most `inFlight` calls run; the next starts when one ends', async (t) => {
  const h = harness({ inFlight: 3, background: 3, waiting: 10 });
  for (const n of ['r1', 'r2', 'r3', 'r4']) void h.run('request', n);
  await tick();
  t.strictSame(h.started, ['r1', 'r2', 'r3']);
  t.strictSame(h.gate.stats(), { inFlight: 3, waiting: 1, peak: 3 });
  await h.finish('r2');
  t.strictSame(h.started, ['r1', 'r2', 'r3', 'r4']);
  t.strictSame(h.gate.stats(), { inFlight: 3, waiting: 0, peak: 3 });
  await h.drain();
  t.strictSame(h.gate.stats(), { inFlight: 0, waiting: 0, peak: 3 });
  t.equal(h.outcomes.get('r4'), 'r4', "the call's value is returned");
});

t.test('at most `waiting` requests wait; the next is refused at once, naming the bounds', async (t) => {
  const h = harness({ inFlight: 2, background: 2, waiting: 3 });
  for (const n of ['r1', 'r2', 'w1', 'w2', 'w3']) void h.run('request', n);
  const refused = await h.run('request', 'x').catch((err: unknown) => err);
  t.ok(refused instanceof GateRefused);
  t.equal((refused as Error).message, '2 claim calls in flight and 3 waiting (the bounds)');
  t.strictSame(h.gate.stats(), { inFlight: 2, waiting: 3, peak: 2 });
  await h.finish('r1');
  t.strictSame(h.started, ['r1', 'r2', 'w1']);
  void h.run('request', 'w4');
  await tick();
  t.equal(h.gate.stats().waiting, 3, 'room again for one');
  await h.drain();
  t.strictSame(h.started, ['r1', 'r2', 'w1', 'w2', 'w3', 'w4'], 'in the order they came');
  t.equal(h.outcomes.has('x'), true);
});

t.test('background calls wait without a bound, and run at most `background` at once', async (t) => {
  const h = harness({ inFlight: 4, background: 2, waiting: 0 });
  for (let i = 1; i <= 5; i++) void h.run('background', `b${i}`);
  await tick();
  t.strictSame(h.started, ['b1', 'b2'], 'two background calls although four slots are free');
  t.strictSame(h.gate.stats(), { inFlight: 2, waiting: 3, peak: 2 });
  void h.run('request', 'r1');
  void h.run('request', 'r2');
  await tick();
  t.strictSame(h.started.slice(2), ['r1', 'r2'], 'requests take the other slots at once');
  const r3 = await h.run('request', 'r3').catch((err: unknown) => err);
  t.ok(r3 instanceof GateRefused, 'no room to wait (waiting: 0)');
  await h.finish('b1');
  t.strictSame(h.started.slice(4), ['b3']);
  await h.drain();
  t.strictSame(h.started.slice(5), ['b4', 'b5']);
  t.equal(h.gate.stats().peak, 4);
});

t.test('while requests wait, background calls keep their guaranteed share (2 unless set), and go first to it', async (t) => {
  // backgroundGuaranteed unset: 2.
  const h = harness({ inFlight: 4, background: 3, waiting: 10 });
  for (const n of ['r1', 'r2', 'r3', 'r4']) void h.run('request', n);
  for (const n of ['b1', 'b2', 'b3']) void h.run('background', n);
  void h.run('request', 'r5');
  await tick();
  t.strictSame(h.started, ['r1', 'r2', 'r3', 'r4']);
  await h.finish('r1');
  t.strictSame(h.started.slice(4), ['b1'], 'a background call first while requests wait');
  await h.finish('r2');
  t.strictSame(h.started.slice(5), ['b2'], 'the second of the guaranteed share');
  await h.finish('r3');
  t.strictSame(h.started.slice(6), ['r5'], 'the share used up: the waiting request');
  await h.finish('r4');
  t.strictSame(h.started.slice(7), ['b3'], 'no request waits: up to `background`');
  t.strictSame(h.gate.stats(), { inFlight: 4, waiting: 0, peak: 4 });
  await h.drain();

  const one = harness({ inFlight: 2, background: 2, backgroundGuaranteed: 1, waiting: 10 });
  void one.run('background', 'b1');
  void one.run('request', 'r1');
  void one.run('request', 'r2');
  void one.run('background', 'b2');
  await tick();
  t.strictSame(one.started, ['b1', 'r1'], 'a background call may not start while a request waits beyond the guaranteed share of 1');
  await one.finish('r1');
  t.strictSame(one.started.slice(2), ['r2'], 'the share is used by b1: the request goes first');
  await one.finish('b1');
  t.strictSame(one.started.slice(3), ['b2']);
  await one.drain();

  const none = harness({ inFlight: 2, background: 2, backgroundGuaranteed: 0, waiting: 10 });
  void none.run('request', 'r1');
  void none.run('request', 'r2');
  void none.run('request', 'r3');
  void none.run('background', 'b1');
  await tick();
  await none.finish('r1');
  t.strictSame(none.started, ['r1', 'r2', 'r3'], 'a share of 0: requests first');
  await none.drain();
  t.strictSame(none.started, ['r1', 'r2', 'r3', 'b1']);
});

t.test('a call that waits past its deadline is refused and leaves the queue; one aborted before asking never runs', async (t) => {
  const h = harness({ inFlight: 1, background: 1, waiting: 5 });
  void h.run('request', 'r1');
  const late = new AbortController();
  const waiting = h.run('request', 'late', late.signal).catch((err: unknown) => err);
  const bgLate = new AbortController();
  const bgWaiting = h.run('background', 'bgLate', bgLate.signal).catch((err: unknown) => err);
  void h.run('request', 'r2');
  await tick();
  t.equal(h.gate.stats().waiting, 3);
  late.abort();
  bgLate.abort();
  const refused = await waiting;
  t.ok(refused instanceof GateRefused);
  t.equal((refused as Error).message, 'no free slot among the 1 claim calls in flight before the deadline');
  t.ok((await bgWaiting) instanceof GateRefused, 'a background call too');
  t.equal(getEventListeners(late.signal, 'abort').length, 0, 'the refused call no longer listens to its signal');
  t.strictSame(h.gate.stats(), { inFlight: 1, waiting: 1, peak: 1 }, 'both left the queue');
  await h.finish('r1');
  t.strictSame(h.started, ['r1', 'r2'], 'the aborted calls never ran');
  // Aborted before asking: the abort's reason, no slot taken, nothing run.
  const gone = new AbortController();
  gone.abort(new Error('gone'));
  const before = await h.gate.run('request', gone.signal, async () => 'ran').catch((err: unknown) => err);
  t.match(before, { message: 'gone' });
  t.notOk(before instanceof GateRefused);
  t.strictSame(h.gate.stats(), { inFlight: 1, waiting: 0, peak: 1 });
  // A woken waiter no longer listens to its signal: a later abort changes nothing.
  const c = new AbortController();
  const woken = h.run('request', 'woken', c.signal);
  t.equal(getEventListeners(c.signal, 'abort').length, 1, 'a waiting call listens to its signal');
  await h.finish('r2');
  t.equal(getEventListeners(c.signal, 'abort').length, 0, 'woken, it no longer does');
  c.abort();
  await h.finish('woken');
  t.equal(await woken, 'woken');
  t.strictSame(h.gate.stats(), { inFlight: 0, waiting: 0, peak: 1 });
});

t.test('a call that throws gives its slot back and its error to the caller', async (t) => {
  const gate = new LeaseWriteGate({ inFlight: 1, background: 1, waiting: 2 });
  const never = new AbortController().signal;
  for (const p of ['request', 'background'] as const) {
    const err = await gate
      .run(p, never, async () => {
        throw new Error(`${p} failed`);
      })
      .catch((e: unknown) => e);
    t.match(err, { message: `${p} failed` });
    t.strictSame(gate.stats(), { inFlight: 0, waiting: 0, peak: 1 });
  }
  // The background count is given back too: a background call may start again.
  t.equal(await gate.run('background', never, async () => 'again'), 'again');
  t.equal(await gate.run('background', never, async () => 'and again'), 'and again');
});
