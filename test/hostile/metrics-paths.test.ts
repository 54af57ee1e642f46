// Issue 15, finding 1, on a real `serve` with the production heap cap: every refused request
// recorded its path as a metric label, so ~11,000 requests with unique 8 KB paths crashed the
// process ("Reached heap limit") and /metrics reached 81 MB. Label values now come from a fixed set.
import t from 'tap';
import { startServe, uniquePaths, validReviewAnswered } from '../../bench/hostile-lib.js';

t.setTimeout(300_000);

t.test('finding 1: 6,000 unique attacker paths leave /metrics under 1 MB', async (t) => {
  const s = await startServe();
  t.teardown(() => s.stop());
  const r = await uniquePaths(s, 6000);
  t.equal(r.refused, 6000, 'every one refused');
  t.ok(r.metricsBytes < 1024 * 1024, `/metrics is ${r.metricsBytes} bytes`);
  t.notOk(s.exited(), 'alive');
  const valid = await validReviewAnswered(s);
  t.ok(valid.ok, `a valid review is answered correctly (${valid.detail})`);
  t.ok(s.rssMb().rss < 250, `RSS ${s.rssMb().rss.toFixed(0)} MB < 250 MB`);
});
