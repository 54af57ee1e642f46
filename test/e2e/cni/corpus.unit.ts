// The corpus's simple-form cases: the annotation text must be the selections the oracle runs
// (Multus reads both forms into the same selections), so netattach judges what is executed.
import t from 'tap';
import { parseNetworks } from '../../../src/annotation/index.js';
import { CHAINS } from './chains.js';
import { CORPUS } from './corpus.js';

t.test('each case written in the simple form parses to its selections', async (t) => {
  const simple = CORPUS.filter((c) => c.annotation !== undefined);
  t.ok(simple.length > 0, 'the corpus has simple-form cases');
  for (const c of simple) {
    const parsed = parseNetworks(c.annotation!, { namespace: 'default' });
    t.equal(parsed.format, 'simple', `${c.id}: the simple form`);
    t.same(parsed.errors, [], `${c.id}: valid`);
    t.same(
      parsed.networks.map((n) => ({ name: n.selection.name, ...(n.selection.interface ? { interface: n.selection.interface } : {}) })),
      c.selections.map((s) => ({ name: s.name, ...(s.interface ? { interface: s.interface } : {}) })),
      `${c.id}: the same selections`,
    );
  }
});

t.test('every corpus case names chains the oracle has', async (t) => {
  for (const c of CORPUS) for (const s of c.selections) t.ok(CHAINS.has(s.name), `${c.id}: ${s.name}`);
});
