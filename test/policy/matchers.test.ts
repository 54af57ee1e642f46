import t from 'tap';
import fc from 'fast-check';
import { compileGlob, compileNetworkPattern } from '../../src/policy/glob.js';
import { compileSelector } from '../../src/policy/selector.js';
import { StaticNamespaceLabels } from '../../src/policy/index.js';

// Reference: the same wildcard language as an anchored regex (fine for a test's tiny inputs).
const reference = (p: string): RegExp =>
  new RegExp('^' + [...p].map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[.+^${}()|[\]\\/-]/g, '\\$&'))).join('') + '$', 's');

t.test('glob agrees with a regex reference', async (t) => {
  const alphabet = fc.constantFrom('a', 'b', '-', '*', '?');
  fc.assert(
    fc.property(fc.string({ unit: alphabet, maxLength: 8 }), fc.string({ unit: fc.constantFrom('a', 'b', '-'), maxLength: 10 }), (p, s) => {
      return compileGlob(p).matches(s) === reference(p).test(s);
    }),
    { numRuns: 2000 },
  );
  t.pass('2000 cases');
});

t.test('glob is linear-ish on hostile input', async (t) => {
  // Not a timing test: a pathological pattern must simply finish (a backtracking regex would not).
  const p = compileGlob('*a*a*a*a*a*a*a*a*a*a*b');
  t.equal(p.matches('a'.repeat(5000)), false);
});

t.test('network patterns never cross the slash', async (t) => {
  const p = compileNetworkPattern('team-*/sriov-?');
  t.ok(p.matches('team-a', 'sriov-1'));
  t.notOk(p.matches('team-a', 'sriov-12'));
  t.notOk(p.matches('infra', 'sriov-1'));
  t.ok(compileNetworkPattern('*/*').matches('x', 'y'));
});

const cases: Array<[string, Parameters<typeof compileSelector>[0], Record<string, string>, boolean]> = [
  ['empty selects all', {}, {}, true],
  ['absent selects all', undefined, { a: '1' }, true],
  ['matchLabels', { matchLabels: { a: '1' } }, { a: '1', b: '2' }, true],
  ['matchLabels mismatch', { matchLabels: { a: '1' } }, { a: '2' }, false],
  ['In', { matchExpressions: [{ key: 'a', operator: 'In', values: ['1', '2'] }] }, { a: '2' }, true],
  ['In absent', { matchExpressions: [{ key: 'a', operator: 'In', values: ['1'] }] }, {}, false],
  ['NotIn absent holds', { matchExpressions: [{ key: 'a', operator: 'NotIn', values: ['1'] }] }, {}, true],
  ['NotIn present', { matchExpressions: [{ key: 'a', operator: 'NotIn', values: ['1'] }] }, { a: '1' }, false],
  ['Exists', { matchExpressions: [{ key: 'a', operator: 'Exists' }] }, { a: '' }, true],
  ['DoesNotExist', { matchExpressions: [{ key: 'a', operator: 'DoesNotExist' }] }, { a: '' }, false],
  ['all must hold', { matchLabels: { a: '1' }, matchExpressions: [{ key: 'b', operator: 'Exists' }] }, { a: '1' }, false],
  ['no prototype keys', { matchExpressions: [{ key: 'toString', operator: 'Exists' }] }, {}, false],
];
for (const [name, sel, labels, want] of cases) t.test(`selector: ${name}`, async (t) => t.equal(compileSelector(sel)(labels), want));

t.test('static namespace labels', async (t) => {
  const s = new StaticNamespaceLabels({ ci: { gitops: 'true', 'kubernetes.io/metadata.name': 'spoofed' } });
  t.same(s.labels('ci'), { gitops: 'true', 'kubernetes.io/metadata.name': 'ci' });
  t.same(s.labels('x'), { 'kubernetes.io/metadata.name': 'x' });
});

t.test('StaticNamespaceLabels: a namespace named like an Object.prototype member gets only its name label', async (t) => {
  const labels = new StaticNamespaceLabels({ team: { env: 'prod' } });
  for (const ns of ['constructor', 'toString', '__proto__']) t.same(labels.labels(ns), { 'kubernetes.io/metadata.name': ns }, ns);
  t.same(labels.labels('team'), { env: 'prod', 'kubernetes.io/metadata.name': 'team' });
});
