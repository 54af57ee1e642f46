// src/dra/selectors.ts: what a CEL selector certainly requires of the resourceName attribute, and
// the device requests of a ResourceClaimTemplate (issue 24, finding 7: the networkClaims check).
import t from 'tap';
import { requiredResourceNames, templateDevices } from '../../src/dra/index.js';

const ATTR = 'device.attributes["k8s.cni.cncf.io"].resourceName';

t.test('requiredResourceNames: only a conjunction with an equality is certain', async (t) => {
  const cases: Array<[string, string[], string[] | undefined]> = [
    ['the docs example', [`device.driver == "sriov.dra.example.com" && ${ATTR} == "example.com/sriov_a"`], ['example.com/sriov_a']],
    ['the e2e suite\'s class (`in` before the read)', [`device.driver == "d" && "resourceName" in device.attributes["k8s.cni.cncf.io"] && ${ATTR} == "example.com/c"`], ['example.com/c']],
    ['literal first, index form, single quotes', [`'example.com/a' == device.attributes['k8s.cni.cncf.io']['resourceName']`], ['example.com/a']],
    ['two selectors (ANDed)', ['device.driver == "x"', `${ATTR} == "example.com/b"`], ['example.com/b']],
    ['a disjunction says nothing', [`${ATTR} == "example.com/a" || ${ATTR} == "example.com/b"`], undefined],
    ['a negation says nothing', [`!(${ATTR} == "example.com/a")`], undefined],
    ['a conditional says nothing', [`device.driver == "x" ? ${ATTR} == "example.com/a" : true`], undefined],
    ['!= is not a negation of the whole', [`device.driver != "x" && ${ATTR} == "example.com/a"`], ['example.com/a']],
    ['operators inside literals do not count', [`device.driver == "a||b" && ${ATTR} == "example.com/a"`], ['example.com/a']],
    ['another attribute', ['device.attributes["gpu.example.com"].model == "x"'], undefined],
    ['no selectors', [], undefined],
    ['a huge expression is not read', [`${ATTR} == "example.com/a" && ${'true && '.repeat(2000)}true`], undefined],
    // Forms whose literal is not the text between two quotes, or whose conjunct holds more than
    // the equality: each read as a requirement would deny a pod that works (review of issue 24).
    ['a triple-quoted literal', [`${ATTR} == """example.com/a"""`], undefined],
    ['an escape in the literal', [`${ATTR} == "example.com\\u005fa"`], undefined],
    ['an equality compared again', [`${ATTR} == "example.com/a" == false`], undefined],
    ['an equality inside a list', [`[${ATTR} == "example.com/a", true].exists(x, x)`], undefined],
    ['an equality in a comment', [`device.driver == "x" // && ${ATTR} == "example.com/a"`], undefined],
    ['an equality in parentheses is not read (conservative)', [`(${ATTR} == "example.com/a")`], undefined],
    ['a raw string', [`${ATTR} == r"example.com/a"`], undefined],
  ];
  for (const [name, expressions, want] of cases) t.same(requiredResourceNames(expressions), want, name);
});

t.test('templateDevices: exactly and firstAvailable requests, with their own selectors', async (t) => {
  const template = {
    spec: {
      spec: {
        devices: {
          requests: [
            { name: 'gpu', exactly: { deviceClassName: 'gpu' } },
            { name: 'nic', exactly: { deviceClassName: 'nics', selectors: [{ cel: { expression: `${ATTR} == "example.com/a"` } }] } },
            { name: 'any', firstAvailable: [{ name: 'fast', deviceClassName: 'fast-nic' }, { name: 'slow', deviceClassName: '' }, 'junk'] },
            'junk',
          ],
        },
      },
    },
  };
  t.same(templateDevices(template), {
    requests: [
      { name: 'gpu', alternatives: [{ deviceClassName: 'gpu' }] },
      { name: 'nic', alternatives: [{ deviceClassName: 'nics', resourceNames: ['example.com/a'] }] },
      { name: 'any', alternatives: [{ deviceClassName: 'fast-nic' }] },
    ],
  });
  for (const bad of [undefined, null, {}, { spec: { spec: { devices: { requests: 'x' } } } }]) t.same(templateDevices(bad), { requests: [] });
});

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
  t.ok(ratio < 5, `${withQuotes.toFixed(1)} ms for 32 x 300 quote-filled expressions, ${ratio.toFixed(1)}x the plain ones (${without.toFixed(1)} ms); bar 5x`);
});
