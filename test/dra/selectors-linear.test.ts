// src/dra/selectors.ts: the time a selector costs, apart from the value tests (selectors.test.ts),
// so that the mutation part dra-selectors leaves out a test that measures CPU time (as
// test/annotation/linear is left out of the annotation parts).
import t from 'tap';
import { requiredResourceNames } from '../../src/dra/index.js';

t.test('reading selectors costs time linear in their text: quotes in a long expression', async (t) => {
  // The regexes that restarted at every quote were quadratic: 36-52 ms for one 10,000-character
  // expression of escaped quotes. An expression over 1,024 characters is no longer read at all, so
  // the test reads the longest that is: quote-filled against plain text of the same length (a
  // restart at each of its 335 quotes would cost hundreds of times the plain scan). Warmed up,
  // then alternated, each the best of five, so a busy moment of the machine hits both.
  const quotes = `device.driver == '${'"\\"'.repeat(335)}`;
  const plain = `device.driver == 'x' && ${'a'.repeat(999)}`;
  t.equal(quotes.length, plain.length);
  t.ok(quotes.length <= 1024, `${quotes.length} characters: under the cap, so read`);
  const cost = (expression: string): number => {
    const list = Array.from({ length: 32 }, () => expression);
    const started = process.hrtime.bigint();
    for (let i = 0; i < 300; i++) requiredResourceNames(list);
    return Number(process.hrtime.bigint() - started) / 1e6;
  };
  cost(quotes);
  cost(plain);
  let [withQuotes, without] = [Infinity, Infinity];
  for (let i = 0; i < 5; i++) {
    withQuotes = Math.min(withQuotes, cost(quotes));
    without = Math.min(without, cost(plain));
  }
  const ratio = withQuotes / without;
  t.ok(
    ratio < 5,
    `${withQuotes.toFixed(1)} ms for 32 x 300 quote-filled expressions, ${ratio.toFixed(1)}x the plain ones (${without.toFixed(1)} ms); bar 5x`,
  );
});
