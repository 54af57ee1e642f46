// The owner of the reservations in `serve`: the periodic sweep drops the expired ones nobody looks
// up again, and logs when a bound was reached since the last round (issue 24, finding 1).
import t from 'tap';
import { wirePolicy } from '../../src/cli/serve-policy.js';
import { captureLogger } from '../server/fixtures.js';
import { eventually } from './policy-helpers.js';
import type { HeldAddress } from '../../src/policy/index.js';

const claims = (name: string, count: number): HeldAddress[] =>
  Array.from({ length: count }, (_, k) => ({
    kind: 'mac',
    value: `02:00:00:00:${(k >> 8).toString(16).padStart(2, '0')}:${(k & 0xff).toString(16).padStart(2, '0')}`,
    scope: 'network:ns/a',
    pod: { namespace: 'ns', name, uid: `u-${name}` },
  }));

t.test('the reservation sweeper drops expired reservations and reports the caps reached', async (t) => {
  const { logger, lines } = captureLogger();
  const wiring = await wirePolicy({ podWatch: false, logger, sweepMs: 20, reservationTtlMs: 50 });
  const sweeper = wiring.deps.background.find((b) => b.name === 'reservation sweeper');
  t.ok(sweeper, 'serve runs a reservation sweeper');
  await sweeper!.start();
  t.teardown(() => sweeper!.stop());
  wiring.index.reserve(claims('big', 74));
  t.equal(wiring.index.stats().reservations, 64);
  // Nobody looks these addresses up again: only the sweeper can drop them.
  await eventually(
    async () => wiring.index.stats().reservations,
    (n) => n === 0,
    'the sweeper to drop the expired reservations',
  );
  const line = await eventually(
    async () => lines.find((l) => l.msg?.toString().startsWith('address reservations reached their bounds')),
    (l) => l !== undefined,
    'the cap log line',
  );
  t.match(line, { level: 40, since: { pod: 10 }, limits: { perPod: 64 } });
  t.notOk('namespace' in (line!.since as object), 'only the caps reached');
  const logged = lines.length;
  await new Promise((r) => setTimeout(r, 100));
  t.equal(lines.length, logged, 'nothing new, nothing logged');
});
