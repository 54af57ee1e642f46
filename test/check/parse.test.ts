import t from 'tap';
import fc from 'fast-check';
import { stringify } from 'yaml';
import { parseManifests } from '../../src/check/index.js';

t.test('multi-document YAML: objects in order with document index and start line; empty documents skipped', async (t) => {
  const text = [
    '# leading comment',
    'apiVersion: v1',
    'kind: Pod',
    'metadata: {name: a}',
    '---',
    '# only a comment',
    '---',
    'apiVersion: v1',
    'kind: Pod',
    'metadata: {name: b}',
    '---',
    '',
  ].join('\n');
  const r = parseManifests(text, 'f.yaml');
  t.same(r.errors, []);
  t.same(
    r.objects.map((o) => [o.file, o.index, o.item, o.line, (o.object as { metadata: { name: string } }).metadata.name]),
    [
      ['f.yaml', 0, undefined, 2, 'a'],
      ['f.yaml', 2, undefined, 8, 'b'],
    ],
  );
});

t.test('JSON, and List documents flattened with item positions', async (t) => {
  const json =
    '{\n\t"apiVersion": "v1",\n\t"kind": "List",\n\t"items": [\n\t\t{"kind": "Pod", "apiVersion": "v1"},\n\t\t{"kind": "Service", "apiVersion": "v1"}\n\t]\n}\n';
  const r = parseManifests(json, 'l.json');
  t.same(r.errors, []);
  t.same(
    r.objects.map((o) => [o.index, o.item, o.line, (o.object as { kind: string }).kind]),
    [
      [0, 0, 5, 'Pod'],
      [0, 1, 6, 'Service'],
    ],
  );
  const podList = parseManifests('kind: PodList\napiVersion: v1\nitems:\n- kind: Pod\n  apiVersion: v1\n', 'p.yaml');
  t.same(
    podList.objects.map((o) => [o.item, o.line]),
    [[0, 4]],
    '*List kinds too',
  );
});

t.test('non-object documents are kept (the engine reports them), nothing is dropped silently', async (t) => {
  const r = parseManifests('just text\n---\n- 1\n- 2\n---\n42\n', 'odd.yaml');
  t.same(
    r.objects.map((o) => o.object),
    ['just text', [1, 2], 42],
  );
});

t.test('syntax errors: file, line and column, and no objects from that file', async (t) => {
  const cases: Array<[string, string, { line?: number; column?: number; message: RegExp }]> = [
    ['unclosed flow sequence', 'kind: Pod\n---\na: [1, 2\nb: c\n', { line: 4, column: 1, message: /Flow sequence/ }],
    ['duplicate key', 'kind: Pod\nkind: Service\n', { line: 2, column: 1, message: /Map keys must be unique/ }],
    ['bad JSON', '{"kind": "Pod" "x": 1}', { line: 1, column: 16, message: /Unexpected/ }],
    ['tab indentation', 'a:\n\tb: 1\n', { line: 2, message: /tab/i }],
    ['unknown alias', 'a: *nowhere\n', { line: 1, message: /alias/i }],
  ];
  for (const [name, text, expected] of cases) {
    const r = parseManifests(text, 'bad.yaml');
    t.same(r.objects, [], name);
    t.equal(r.errors.length >= 1, true, name);
    t.match(r.errors[0], { file: 'bad.yaml', ...expected }, name);
    t.notMatch(r.errors[0]!.message, /at line \d+/, `${name}: the position is not repeated in the message`);
  }
});

t.test('an alias bomb is refused, not expanded', async (t) => {
  const bomb = [
    'a: &a [x, x, x, x, x, x, x, x, x, x]',
    'b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]',
    'c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]',
    'd: [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]',
  ].join('\n');
  const r = parseManifests(bomb, 'bomb.yaml');
  t.same(r.objects, []);
  t.match(r.errors[0]!.message, /alias/i);
});

t.test('property: objects written as a YAML stream (or JSON) come back in order, equal', async (t) => {
  const key = fc.string({ minLength: 1, maxLength: 8 });
  const value = fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null));
  const object = fc.dictionary(key, fc.oneof(value, fc.dictionary(key, value, { maxKeys: 3 }), fc.array(value, { maxLength: 3 })), {
    minKeys: 1,
    maxKeys: 5,
  });
  fc.assert(
    fc.property(fc.array(object, { minLength: 1, maxLength: 5 }), (objects) => {
      const yamlText = objects.map((o) => stringify(o)).join('---\n');
      const fromYaml = parseManifests(yamlText, 'p.yaml');
      const fromJson = objects.map((o) => parseManifests(JSON.stringify(o, null, 2), 'p.json').objects[0]?.object);
      return (
        fromYaml.errors.length === 0 &&
        JSON.stringify(fromYaml.objects.map((o) => o.object)) === JSON.stringify(objects) &&
        JSON.stringify(fromJson) === JSON.stringify(objects)
      );
    }),
    { numRuns: 200 },
  );
  t.pass('round trip holds');
});

t.test('property: arbitrary text never throws; every result is an object or an error with the file name', async (t) => {
  fc.assert(
    fc.property(fc.string({ maxLength: 200 }), (text) => {
      const r = parseManifests(text, 'x');
      return r.errors.every((e) => e.file === 'x' && e.message.length > 0) && (r.errors.length === 0 || r.objects.length === 0);
    }),
    { numRuns: 500 },
  );
  t.pass('total');
});
