// Rendering of every value kind and error type, pinned exactly (killing the mutants that
// test/field/errors.test.ts let survive; docs/mutation.md).
import t from 'tap';
import { internal, invalid, notFound, renderError, renderValue, tooMany } from '../../src/field/index.js';

t.test('the remaining constructors and their rendering', async (t) => {
  t.same(tooMany('x.ips', 9, 8), { path: 'x.ips', type: 'Too many', value: 9, reason: 'must have at most 8 items' });
  t.equal(renderError(tooMany('x.ips', 9, 8)), 'x.ips: Too many: must have at most 8 items', 'Too many omits the value');
  t.same(notFound('x[0]', 'ns/a'), { path: 'x[0]', type: 'Not found', value: 'ns/a', reason: '' });
  t.equal(
    renderError(notFound('x[0]', 'ns/a', 'no such NetworkAttachmentDefinition')),
    'x[0]: Not found: "ns/a": no such NetworkAttachmentDefinition',
  );
  t.same(internal('x', 'boom'), { path: 'x', type: 'Internal error', reason: 'boom' });
  t.equal(renderError(internal('x', 'boom')), 'x: Internal error: boom', 'Internal error omits the value');
});

t.test('values render like apimachinery: strings quoted, numbers and booleans bare, others as JSON', async (t) => {
  const cases: Array<[unknown, string]> = [
    ['a"b', '"a\\"b"'],
    [8080, '8080'],
    [NaN, 'NaN'],
    [Infinity, 'Infinity'],
    [true, 'true'],
    [10n, '10'],
    [null, 'null'],
    [undefined, '<nil>'],
    [[1, 'a'], '[1,"a"]'],
    [{ a: { b: null } }, '{"a":{"b":null}}'],
  ];
  for (const [value, want] of cases) t.equal(renderValue(value), want, String(typeof value));
  const circular: Record<string, unknown> = {};
  circular['self'] = circular;
  t.equal(renderValue(circular), '[object Object]', 'what JSON cannot write is rendered with String()');
  t.equal(renderValue(Symbol('s')), 'Symbol(s)', 'JSON.stringify gives undefined: String()');
  t.equal(renderError(invalid('x', undefined, 'r')), 'x: Invalid value: <nil>: r');
});

t.test('values are cut above 96 characters, not at 96', async (t) => {
  const exactly = 'a'.repeat(94); // 96 characters with the quotes
  t.equal(renderValue(exactly), `"${exactly}"`);
  const over = 'a'.repeat(95);
  t.equal(renderValue(over), `"${over.slice(0, 95)}...(97 chars)`);
});
