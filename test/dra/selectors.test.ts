// src/dra/selectors.ts: what a CEL selector certainly requires of the resourceName attribute, and
// the device requests of a ResourceClaimTemplate (issue 24, finding 7: the networkClaims check).
import t from 'tap';
import { requiredResourceNames, templateDevices } from '../../src/dra/index.js';
import { celExpressions } from '../../src/dra/selectors.js';

const ATTR = 'device.attributes["k8s.cni.cncf.io"].resourceName';

t.test('requiredResourceNames: only a conjunction with an equality is certain', async (t) => {
  const cases: Array<[string, string[], string[] | undefined]> = [
    ['the docs example', [`device.driver == "sriov.dra.example.com" && ${ATTR} == "example.com/sriov_a"`], ['example.com/sriov_a']],
    [
      "the e2e suite's class (`in` before the read)",
      [`device.driver == "d" && "resourceName" in device.attributes["k8s.cni.cncf.io"] && ${ATTR} == "example.com/c"`],
      ['example.com/c'],
    ],
    [
      'literal first, index form, single quotes',
      [`'example.com/a' == device.attributes['k8s.cni.cncf.io']['resourceName']`],
      ['example.com/a'],
    ],
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
  for (const bad of [undefined, null, {}, { spec: { spec: { devices: { requests: 'x' } } } }])
    t.same(templateDevices(bad), { requests: [] });
});

// Issue 30: the documented caps and each decision of the reader, pinned one by one (mutation part
// `dra-selectors`).
t.test('the caps: an expression of 1,024 characters is read, 1,025 not; 32 expressions read, the 33rd not', async (t) => {
  const base = `${ATTR} == "example.com/a"`;
  const pad = (n: number): string => `${' '.repeat(n - base.length)}${base}`;
  t.equal(pad(1024).length, 1024);
  t.same(requiredResourceNames([pad(1024)]), ['example.com/a'], '1,024 characters: read');
  t.same(requiredResourceNames([pad(1025)]), undefined, '1,025 characters: not read');
  const filler = Array.from({ length: 31 }, () => 'device.driver == "x"');
  t.same(requiredResourceNames([...filler, base]), ['example.com/a'], 'the 32nd expression is read');
  t.same(requiredResourceNames([...filler, 'device.driver == "y"', base]), undefined, 'the 33rd is not');
});

t.test('requiredResourceNames: each form, and each way out', async (t) => {
  const cases: Array<[string, string[], string[] | undefined]> = [
    ['spaces around every token', [`device.attributes[ "k8s.cni.cncf.io" ] . resourceName  ==  "example.com/a" `], ['example.com/a']],
    [
      'index form, double quotes, spaces',
      [`device.attributes[ 'k8s.cni.cncf.io' ][ "resourceName" ] == 'example.com/a'`],
      ['example.com/a'],
    ],
    ['literal first, dot form, spaces', [` "example.com/a"  ==  ${ATTR} `], ['example.com/a']],
    ['an empty literal is a requirement of ""', [`${ATTR} == ""`], ['']],
    [
      'two requirements in one expression, in order',
      [`${ATTR} == "example.com/b" && ${ATTR} == "example.com/a"`],
      ['example.com/b', 'example.com/a'],
    ],
    ['the same requirement twice: once', [`${ATTR} == "example.com/a"`, `"example.com/a" == ${ATTR}`], ['example.com/a']],
    ['&& inside a literal does not split', [`device.driver == "a&&b" && ${ATTR} == "example.com/a"`], ['example.com/a']],
    ['a quote of the other kind inside a literal', [`device.driver == "it's" && ${ATTR} == "example.com/a"`], ['example.com/a']],
    ['&& inside a single-quoted literal', [`device.driver == 'a && ${ATTR} == "example.com/a"'`], undefined],
    ['a single & does not split', [`true & ${ATTR} == "example.com/a"`], undefined],
    ['&&& leaves an & in the next conjunct', [`device.driver == "x" &&& ${ATTR} == "example.com/a"`], undefined],
    ['more before the attribute', [`foo ${ATTR} == "example.com/a"`], undefined],
    ['literal first, compared again', [`"example.com/a" == ${ATTR} == false`], undefined],
    ['literal first, more before it', [`x == "example.com/a" == ${ATTR}`], undefined],
    ['quotes not matched', [`${ATTR} == "example.com/a'`], undefined],
    ['another domain', [`device.attributes["k8sXcni.cncf.io"].resourceName == "example.com/a"`], undefined],
    ['another attribute name', [`device.attributes["k8s.cni.cncf.io"].resourceNames == "example.com/a"`], undefined],
    ['another object', [`device.capacity["k8s.cni.cncf.io"].resourceName == "example.com/a"`], undefined],
    ['not an equality', [`${ATTR} != "example.com/a"`], undefined],
    ['a conditional in another conjunct', [`${ATTR} == "example.com/a" && (device.driver == "x" ? true : false)`], undefined],
    ['a negation elsewhere', [`${ATTR} == "example.com/a" && !device.attributes["x"].y`], undefined],
    ['a comment after it', [`${ATTR} == "example.com/a" // note`], undefined],
    ['a triple single-quoted literal', [`${ATTR} == '''example.com/a'''`], undefined],
    ['triple single quotes inside a double-quoted literal', [`${ATTR} == "a'''b"`], undefined],
    ['triple double quotes inside a single-quoted literal', [`${ATTR} == 'a"""b'`], undefined],
    ['a raw string, upper case', [`${ATTR} == R"example.com/a"`], undefined],
    ['a bytes literal', [`${ATTR} == b'example.com/a'`], undefined],
    ['a bytes literal, upper case', [`${ATTR} == B"example.com/a"`], undefined],
    ['r ending a word is no raw prefix', [`device.driver == "a" && ${ATTR} == "example.com/a"`], ['example.com/a']],
    [
      'an unread expression does not hide the others',
      [`${ATTR} == "example.com/a" || true`, `${ATTR} == "example.com/b"`],
      ['example.com/b'],
    ],
  ];
  for (const [name, expressions, want] of cases) t.same(requiredResourceNames(expressions), want, name);
});

t.test('celExpressions: the expressions of a selectors list, nothing else', async (t) => {
  t.same(celExpressions(undefined), []);
  t.same(celExpressions({ cel: { expression: 'a' } }), [], 'not a list');
  t.same(
    celExpressions([
      { cel: { expression: 'a' } },
      null,
      'b',
      [],
      { cel: null },
      { cel: 'c' },
      { cel: ['d'] },
      { cel: { expression: 4 } },
      { other: { expression: 'e' } },
      { cel: { expression: '' } },
      { cel: { expression: 'f' } },
    ]),
    ['a', '', 'f'],
  );
  t.same(
    celExpressions([Object.assign([], { cel: { expression: 'a' } }), { cel: Object.assign([], { expression: 'b' }) }]),
    [],
    'arrays holding the keys are no objects',
  );
});

t.test('templateDevices: every level must be an object; names, alternatives and their order', async (t) => {
  const sel = (rn: string) => [{ cel: { expression: `${ATTR} == "${rn}"` } }];
  const template = (requests: unknown) => ({ spec: { spec: { devices: { requests } } } });
  t.same(
    templateDevices(
      template([
        {
          name: 'both',
          exactly: { deviceClassName: 'one', selectors: sel('example.com/a') },
          firstAvailable: [{ deviceClassName: 'two', selectors: sel('example.com/b') }, { deviceClassName: 'three' }],
        },
        { name: 7, exactly: { deviceClassName: 'x' } },
        {
          name: 'arrays',
          exactly: Object.assign([], { deviceClassName: 'x' }),
          firstAvailable: [Object.assign([], { deviceClassName: 'y' })],
        },
        { name: 'not a list', firstAvailable: { deviceClassName: 'z' } },
        { name: 'class not a string', exactly: { deviceClassName: 5 } },
        null,
        [],
      ]),
    ),
    {
      requests: [
        {
          name: 'both',
          alternatives: [
            { deviceClassName: 'one', resourceNames: ['example.com/a'] },
            { deviceClassName: 'two', resourceNames: ['example.com/b'] },
            { deviceClassName: 'three' },
          ],
        },
        { name: '', alternatives: [{ deviceClassName: 'x' }] },
        { name: 'arrays', alternatives: [] },
        { name: 'not a list', alternatives: [] },
        { name: 'class not a string', alternatives: [] },
      ],
    },
  );
  const inner = { devices: { requests: [{ name: 'r', exactly: { deviceClassName: 'c' } }] } };
  t.same(templateDevices({ spec: { spec: inner } }).requests.length, 1, 'the well-formed one is read');
  for (const bad of [
    Object.assign([], { spec: { spec: inner } }),
    { spec: Object.assign([], { spec: inner }) },
    { spec: { spec: Object.assign([], inner) } },
    { spec: { spec: { devices: Object.assign([], inner.devices) } } },
    { spec: { spec: { devices: { requests: { 0: inner.devices.requests[0] } } } } },
    { spec: inner },
  ])
    t.same(templateDevices(bad), { requests: [] });
});

// Found by the part's first run (2 December): a literal is one token wherever it stands, so
// nothing inside it splits the expression or makes it unread, and a raw string anywhere makes
// the whole expression unread (UNREAD), not only in the equality.
t.test('requiredResourceNames: literals are tokens, in either quote; a raw string anywhere says nothing', async (t) => {
  const cases: Array<[string, string[], string[] | undefined]> = [
    ['a single-quoted literal holding && and a whole equality', [`device.driver == 'a && ${ATTR} == "example.com/a" && b'`], undefined],
    ['a double-quoted literal holding && and a whole equality', [`device.driver == "a && ${ATTR} == 'example.com/a' && b"`], undefined],
    ['|| inside a single-quoted literal does not count', [`device.driver == 'a||b' && ${ATTR} == "example.com/a"`], ['example.com/a']],
    [
      '? inside a single-quoted literal of one character does not count',
      [`device.driver == '?' && ${ATTR} == "example.com/a"`],
      ['example.com/a'],
    ],
    ['a raw string in another conjunct', [`device.driver == r"x" && ${ATTR} == "example.com/a"`], undefined],
    ['a bytes literal in another conjunct', [`device.attributes["x"].y == b'x' && ${ATTR} == "example.com/a"`], undefined],
  ];
  for (const [name, expressions, want] of cases) t.same(requiredResourceNames(expressions), want, name);
});

t.test('what is kept of a template is bounded, whatever its size (issue 37)', async (t) => {
  const expression = (v: string) => `device.attributes["k8s.cni.cncf.io"].resourceName == "${v}"`;
  const request = (i: number) => ({
    name: `r${i}`.padEnd(100, 'x'),
    firstAvailable: Array.from({ length: 12 }, (_, j) => ({
      deviceClassName: `class-${j}`,
      selectors: Array.from({ length: 32 }, (_, k) => ({ cel: { expression: expression(`v${k}`.padEnd(900, 'y')) } })),
    })),
  });
  const huge = { spec: { spec: { devices: { requests: Array.from({ length: 40 }, (_, i) => request(i)) } } } };
  t.ok(JSON.stringify(huge).length > 1_000_000, 'a template of over 1 MB');
  const kept = templateDevices(huge);
  t.equal(kept.requests.length, 32, '32 requests');
  t.ok(
    kept.requests.every((r) => r.name.length === 63 && r.alternatives.length === 8),
    'names cut to 63, 8 alternatives each',
  );
  const names = kept.requests[0]!.alternatives[0]!.resourceNames!;
  t.equal(names.length, 2, 'two distinct literals: already unsatisfiable, more add nothing');
  t.ok(
    names.every((n) => n.length === 65 && n.endsWith('\u0000')),
    'each cut at 64 characters and marked',
  );
  t.ok(JSON.stringify(kept).length < 60_000, `kept ${JSON.stringify(kept).length} characters`);
  // A short literal is kept as it is.
  const plain = templateDevices({
    spec: {
      spec: {
        devices: {
          requests: [
            { name: 'nic', exactly: { deviceClassName: 'c', selectors: [{ cel: { expression: expression('intel.com/sriov') } }] } },
          ],
        },
      },
    },
  });
  t.same(plain.requests[0]!.alternatives[0]!.resourceNames, ['intel.com/sriov']);
  // The bounds at their edges: a class name of 253 characters (a DNS subdomain's most) is kept, one
  // of 254 drops its alternative; a literal of 64 characters is kept whole, one of 65 is cut.
  const one = (deviceClassName: string, literal: string) =>
    templateDevices({
      spec: {
        spec: {
          devices: { requests: [{ name: 'nic', exactly: { deviceClassName, selectors: [{ cel: { expression: expression(literal) } }] } }] },
        },
      },
    }).requests[0]?.alternatives;
  t.same(one('c'.repeat(253), 'x'), [{ deviceClassName: 'c'.repeat(253), resourceNames: ['x'] }], 'a class name of 253: kept');
  t.same(one('c'.repeat(254), 'x'), [], 'a class name of 254: not a class name');
  t.same(one('c', 'l'.repeat(64)), [{ deviceClassName: 'c', resourceNames: ['l'.repeat(64)] }], 'a literal of 64: whole');
  t.same(
    one('c', 'l'.repeat(65)),
    [{ deviceClassName: 'c', resourceNames: [`${'l'.repeat(64)}\u0000`] }],
    'a literal of 65: cut and marked',
  );
});
