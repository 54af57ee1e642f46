// docs/nri-differences.json is the table of deliberate differences from network-resources-injector:
// the NRI oracle e2e test fails on any difference not in it, and the migration guide shows it.
import t from 'tap';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { TABLE_BEGIN, TABLE_END, explain, loadDifferences, renderDifferences } from '../e2e/lib/nri-differences.js';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../..');
const table = loadDifferences();

t.test('every entry is complete, its id unique, its paths valid patterns', async (t) => {
  const ids = table.differences.map((d) => d.id);
  t.same([...new Set(ids)], ids, 'unique ids');
  for (const d of table.differences) {
    for (const k of ['id', 'case', 'nri', 'netattach', 'reason'] as const) t.ok(d[k].trim().length > 0, `${d.id}: ${k}`);
    t.ok(d.paths.length > 0, `${d.id}: paths`);
    for (const p of d.paths) t.doesNotThrow(() => new RegExp(p), `${d.id}: ${p}`);
  }
});

t.test('docs/migrating-from-nri.md shows exactly this table', async (t) => {
  const md = readFileSync(path.join(root, 'docs/migrating-from-nri.md'), 'utf8');
  const begin = md.indexOf(TABLE_BEGIN);
  const end = md.indexOf(TABLE_END);
  t.ok(begin >= 0 && end > begin, 'markers present');
  t.equal(
    md.slice(begin + TABLE_BEGIN.length, end).trim(),
    renderDifferences(table),
    'regenerate with: npx tsx test/e2e/lib/nri-differences.ts',
  );
});

t.test('explain: a delta is explained only by a listed difference whose path matches', async (t) => {
  const deltas = [
    { op: 'replace', path: '/outcome', value: 'denied' },
    { op: 'remove', path: '/pod' },
    { op: 'add', path: '/pod/spec/containers/1/resources', value: {} },
  ];
  t.same(explain(deltas, ['node-selector-conflict'], table), { unexplained: [deltas[2]], unused: [] });
  t.same(explain(deltas, ['node-selector-conflict', 'default-container'], table), { unexplained: [], unused: [] });
  t.same(
    explain([], ['default-container'], table),
    { unexplained: [], unused: ['default-container'] },
    'a listed difference that does not show',
  );
  t.throws(() => explain([], ['no-such-id'], table), /not in nri-differences\.json: no-such-id/);
});
