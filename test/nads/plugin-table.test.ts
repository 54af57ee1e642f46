import t from 'tap';
import { interfaceCreatorOf } from '../../src/nads/index.js';
import type { CniSummary } from '../../src/nads/types.js';

// The chain check and the interface-name check read one list: a creator for one is a creator for the other.
t.test('dummy and bond create the interface for the interface-name check too', async (t) => {
  for (const type of ['dummy', 'bond', 'ipoib', 'accelerated-bridge', 'macvlan']) {
    const cni = { plugins: [{ type: 'tuning' }, { type }] } as unknown as CniSummary;
    t.equal(interfaceCreatorOf(cni)?.type, type, type);
  }
  t.equal(interfaceCreatorOf({ plugins: [{ type: 'tuning' }, { type: 'x-cni' }] } as unknown as CniSummary), undefined, 'unknown: not a creator');
});
