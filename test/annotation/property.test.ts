// Property tests: the parser never throws, finishes in bounded time on inputs up to 256 KiB
// (a generous bound that only catastrophic backtracking or quadratic work would break; speed
// itself is measured by `npm run bench`), and re-parsing its normalized output gives the same
// selections.
import t from 'tap';
import fc from 'fast-check';
import assert from 'node:assert/strict';
import { parseDefaultNetwork, parseNetworks, serializeSelections } from '../../src/annotation/index.js';

const MAX_VALUE = 256 * 1024;
const BOUND_MS = 2000;

// Pieces that drive the parser into each of its branches.
const simpleToken = fc.constantFrom(
  'a',
  'net-a',
  'ns',
  '/',
  '@',
  ',',
  ' ',
  'eth1',
  'net1',
  'Net',
  '.',
  '-',
  '\t',
  'é',
  'lo',
  'x'.repeat(20),
);
const simpleValue = fc.array(simpleToken, { maxLength: 30 }).map((parts) => parts.join(''));

const addressish = fc.oneof(
  fc.constantFrom(
    '02:00:00:00:00:01',
    '03:00:00:00:00:01',
    '02-00-00-00-00-01',
    '0200.0000.0001',
    'c2:11:22:33:44:55:66:77',
    '00:00:00:00:00:00:00:00',
  ),
  fc.constantFrom('10.0.0.1', '10.0.0.1/24', 'fd00::1', 'fd00::1/64', '010.0.0.1', 'fe80::1%eth0', '10.0.0.1/33', ''),
  fc.string({ maxLength: 24 }),
);
const anyJson = fc.jsonValue({ maxDepth: 3 });
const element = fc.record(
  {
    name: fc.oneof(fc.constantFrom('net-a', 'net.b', 'Bad', ''), fc.string({ maxLength: 8 }), anyJson),
    namespace: fc.oneof(fc.constantFrom('ns', '', 'Bad_NS'), anyJson),
    interface: fc.oneof(fc.constantFrom('eth1', 'net1', 'net2', 'eth0', 'lo', '', 'a/b', 'x'.repeat(16)), anyJson),
    interfaceRequest: fc.constantFrom('ib0', ''),
    Mac: addressish,
    mac: fc.oneof(addressish, anyJson),
    'infiniband-guid': addressish,
    ips: fc.oneof(fc.array(addressish, { maxLength: 3 }), anyJson),
    'default-route': fc.array(addressish, { maxLength: 3 }),
    portMappings: fc.array(
      fc.record(
        {
          hostPort: fc.oneof(fc.integer({ min: -1, max: 70000 }), fc.double(), anyJson),
          containerPort: fc.integer({ min: 0, max: 70000 }),
          protocol: fc.constantFrom('tcp', 'UDP', 'icmp'),
          hostIP: addressish,
        },
        { requiredKeys: [] },
      ),
      { maxLength: 2 },
    ),
    bandwidth: fc.record(
      { ingressRate: fc.integer({ min: 0, max: 1e6 }), ingressBurst: fc.integer(), egressRate: fc.double(), egressBurst: anyJson },
      { requiredKeys: [] },
    ),
    'cni-args': fc.oneof(fc.dictionary(fc.string({ maxLength: 6 }), anyJson, { maxKeys: 3 }), anyJson),
    'ipam-claim-reference': fc.constantFrom('claim', '', 'Bad'),
    deviceID: fc.oneof(fc.constantFrom('0000:03:00.1', ''), anyJson),
    'example.com/ext': anyJson,
    unknown: anyJson,
  },
  { requiredKeys: [] },
);
const jsonValue = fc.oneof(
  fc.array(fc.oneof(element, anyJson), { maxLength: 5 }).map((a) => JSON.stringify(a)),
  // The same, with numbers re-written as 8080.0 / 1e3 and a duplicated key, which JSON.stringify cannot produce.
  fc.array(element, { maxLength: 4 }).map((a) =>
    JSON.stringify(a)
      .replace(/:(\d+)([,}])/g, ':$1.0$2')
      .replace('{"name"', '{"name":"dup","name"'),
  ),
  anyJson.map((v) => JSON.stringify(v)),
);
// Any text at all, including the characters that switch to JSON.
const anyText = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 200 }),
  fc.string({ unit: fc.constantFrom('[', ']', '{', '}', '"', ',', ':', '\\', '/', '@', 'a', '1', '.', 'e', '-', ' '), maxLength: 200 }),
);
const anyValue = fc.oneof(simpleValue, jsonValue, anyText);

t.test('never throws, on any input, for both annotations', async (t) => {
  fc.assert(
    fc.property(anyValue, fc.constantFrom('ns', 'Bad NS', ''), (value, namespace) => {
      const r = parseNetworks(value, { namespace });
      const d = parseDefaultNetwork(value, { defaultNamespace: namespace });
      return Array.isArray(r.errors) && Array.isArray(r.warnings) && Array.isArray(d.networks);
    }),
    { numRuns: 3000 },
  );
  t.pass('3000 inputs');
});

// Assertions inside the property go through fast-check (node:assert throws), so a failure is
// shrunk; t.same inside a property records a failure but lets fast-check think the run passed.
// Valid values with every key are generated in roundtrip.test.ts; these are arbitrary ones.
t.test('re-parsing the normalized output gives the same selections', async (t) => {
  t.doesNotThrow(() =>
    fc.assert(
      fc.property(anyValue, (value) => {
        const first = parseNetworks(value, { namespace: 'pod-ns' });
        const again = parseNetworks(serializeSelections(first.networks), { namespace: 'elsewhere' });
        assert.deepEqual(
          again.networks.map((n) => n.selection),
          first.networks.map((n) => n.selection),
        );
        if (first.errors.length === 0) assert.deepEqual(again.errors, [], 'a valid value normalizes to a valid value');
      }),
      { numRuns: 1500 },
    ),
  );
});

/** Repeats a generated fragment up to 256 KiB: the shape that exposes backtracking or quadratic work. */
const bigValue = fc
  .tuple(fc.oneof(simpleValue, jsonValue, anyText), fc.constantFrom('', '[', '[{"name":"a","mac":"', '"'), fc.constantFrom('', ']', '"}]'))
  .filter(([unit]) => unit.length > 0)
  .map(
    ([unit, open, close]) =>
      open +
      unit.repeat(Math.ceil((MAX_VALUE - open.length - close.length) / unit.length)).slice(0, MAX_VALUE - open.length - close.length) +
      close,
  );

t.test(`returns within ${BOUND_MS} ms on any input up to 256 KiB`, async (t) => {
  const crafted = [
    ','.repeat(MAX_VALUE),
    'a'.repeat(MAX_VALUE),
    `[${'{"name":"a","mac":"02:00:00:00:00:01","ips":["10.0.0.1/24"]},'.repeat(4000)}{"name":"z"}]`,
    '['.repeat(MAX_VALUE),
    `["${'\\u0041'.repeat(MAX_VALUE / 6 - 1)}"]`,
    `[{"name":"a","cni-args":{${Array.from({ length: 12000 }, (_, i) => `"k${i}":1.5`).join(',')}}}]`,
    `${'a@'.repeat(MAX_VALUE / 2)}`,
    `[{"name":"${'-'.repeat(MAX_VALUE - 20)}"}]`,
  ];
  for (const value of crafted) {
    const start = performance.now();
    parseNetworks(value, { namespace: 'ns' });
    const ms = performance.now() - start;
    t.ok(ms < BOUND_MS, `${JSON.stringify(value.slice(0, 30))}... (${value.length} chars) in ${ms.toFixed(1)} ms`);
  }
  fc.assert(
    fc.property(bigValue, (value) => {
      const start = performance.now();
      parseNetworks(value, { namespace: 'ns' });
      return value.length <= MAX_VALUE && performance.now() - start < BOUND_MS;
    }),
    { numRuns: 40 },
  );
});
