// Issue 24, finding 1, on a real `netattach serve` with the production heap cap (bench/hostile-lib.ts)
// and a uniqueAddresses policy file: forged reviews must not grow the reservations until the heap
// dies, nor slow other reviews down. Before: every address of every forged review was reserved for
// 45 s, and ~445 reviews of 1,000 MACs killed the process ("Ineffective mark-compacts near heap
// limit"); reservations of one address under a Warn rule piled up and every lookup walked them all.
// Time is asserted only as ratios to the same server's cost measured in the same run.
import t from 'tap';
import { RESERVATION_LIMITS } from '../../src/policy/address-index.js';
import { MAX_ARBITRATED_ADDRESSES_PER_POD } from '../../src/policy/limits.js';
import {
  macNads,
  median,
  reservationFlood,
  reservationPolicy,
  startServe,
  validReviewAnswered,
  warnPileUp,
  type Serve,
} from '../../bench/hostile-lib.js';

// The scale: 2,000 forged reviews of 1,000 MACs (~120 MB of requests) over 4 connections.
// Half in one namespace (past its cap), half over nine more.
const REVIEWS = 2_000;
const MACS = 1_000;
const namespace = (n: number): string => (n % 2 === 0 ? 'flood-0' : `flood-${1 + ((n >> 1) % 9)}`);
const WARN_NAMESPACE = 'flood-warn';
t.setTimeout(600_000);

let s: Serve;
t.before(async () => {
  s = await startServe({ policy: reservationPolicy(WARN_NAMESPACE), nads: macNads(MAX_ARBITRATED_ADDRESSES_PER_POD) });
});
t.teardown(() => s?.stop());

t.test(
  `${REVIEWS} forged reviews of ${MACS} MACs: alive under the heap cap, reservations at their bounds, a valid review answered meanwhile`,
  async (t) => {
    const r = await reservationFlood(s, { reviews: REVIEWS, macs: MACS, connections: 4, namespace });
    const idle = median(r.validIdleMs);
    const during = median(r.validDuringMs);
    t.comment(
      `${REVIEWS} reviews in ${r.seconds.toFixed(1)} s; answers ${JSON.stringify(r.answers)}; peak RSS ${r.peakRssMb.toFixed(0)} MB; reservations ${r.reservations}; capped ${JSON.stringify(r.capped)}`,
    );
    t.comment(
      `valid review: idle median ${idle.toFixed(0)} ms; during the flood median ${during.toFixed(0)} ms, max ${Math.max(...r.validDuringMs).toFixed(0)} ms over ${r.validDuringMs.length}`,
    );
    t.notOk(s.exited(), 'the process is alive');
    t.equal(r.answers['200 true'], REVIEWS, 'every forged review answered, none denied for its many addresses');
    t.ok(r.peakRssMb < 250, `peak RSS ${r.peakRssMb.toFixed(0)} MB < 250 MB (heap cap 192 MB)`);
    t.ok(r.reservations <= RESERVATION_LIMITS.total, `${r.reservations} reservations <= ${RESERVATION_LIMITS.total}`);
    t.equal(
      r.unarbitratedPods,
      REVIEWS,
      `each review warned that ${MACS - MAX_ARBITRATED_ADDRESSES_PER_POD} of its addresses were not reserved`,
    );
    t.equal(r.capped.pod, 0, 'the engine hands the index no more than the per-pod bound');
    t.ok(r.capped.namespace > 0, `${r.capped.namespace} evicted at the per-namespace cap`);
    // Whether the total cap is reached depends on the pace (reservations expire after 45 s): it was
    // in a run taking 81 s, not in one taking 148 s. Both sides of it: test/policy/address-index.test.ts.
    t.same(r.validWrong, [], 'every valid review answered correctly');
    t.ok(r.validDuringMs.length >= 3, `${r.validDuringMs.length} valid reviews during the flood`);
    // The reference is the forged reviews' own answer time in the same run: a valid review queues
    // behind the ones in flight on the 4 connections, so its time follows theirs; it must not wait
    // longer than they do, with room for noise (measured 1.4x; the idle time is no reference: it omits that queue, 6-31 ms against
    // 170-410 ms during the flood on this 2-core machine).
    const forged = median(r.forgedMs);
    t.ok(
      during <= 3 * forged,
      `valid review during the flood: median ${during.toFixed(0)} ms <= 3x the forged reviews' median ${forged.toFixed(0)} ms (idle: ${idle.toFixed(0)} ms)`,
    );
    const after = await validReviewAnswered(s);
    t.ok(after.ok, `and after: ${after.detail}`);
  },
);

t.test('a pile-up on one address under a Warn rule: review cost stays flat', async (t) => {
  // 800 pods asking for the same 64 MACs (one per network): 800 reservations of each MAC without
  // the bounds (51,200 in all), each pod's 64 lookups walking them; all admitted with a warning.
  // Server CPU of the first and the last 100 pods.
  const r = await warnPileUp(s, {
    namespace: WARN_NAMESPACE,
    pods: 800,
    networks: MAX_ARBITRATED_ADDRESSES_PER_POD,
    batch: 100,
    connections: 4,
  });
  const early = r.cpuMsPerBatch[0]!;
  const late = r.cpuMsPerBatch.at(-1)!;
  t.comment(`server CPU per 100 pods: ${r.cpuMsPerBatch.join(', ')} ms (10 ms ticks) in ${r.seconds.toFixed(1)} s`);
  t.equal(r.failed + r.denied, 0, 'all answered and admitted (the rule warns)');
  t.ok(r.unwarned <= 1, `each pod but the first is warned of the conflict (${r.warned} warned, ${r.unwarned} not)`);
  t.ok(late <= 2.5 * Math.max(early, 10), `the last 100 pods cost ${late} ms of server CPU, the first 100 ${early} ms (bound 2.5x)`);
  t.notOk(s.exited(), 'alive');
});
