import t from 'tap';
import { parseNetworks, serializeSelections, type NetworkSelection } from '../../src/annotation/index.js';

t.test('serializeSelections takes selections or parsed networks, writes spec keys in spec order, then extensions', async (t) => {
  const s = { 'example.com/x': 1, mac: '02:23:45:67:89:01', namespace: 'ns', name: 'a' } as NetworkSelection;
  const want = '[{"name":"a","namespace":"ns","mac":"02:23:45:67:89:01","example.com/x":1}]';
  t.equal(serializeSelections([s]), want, 'a selection');
  t.equal(serializeSelections([{ index: 0, path: 'p', selection: s }]), want, 'a parsed network');
  t.equal(serializeSelections([]), '[]');
  t.equal(serializeSelections([{ name: 'a', namespace: 'ns' }], 1), '[\n {\n  "name": "a",\n  "namespace": "ns"\n }\n]', 'indented');
  const parsed = parseNetworks('[{"interface":"eth1","name":"a","x.y":{"k":[1]}}]', { namespace: 'pod' });
  t.equal(serializeSelections(parsed.networks), '[{"name":"a","namespace":"pod","interface":"eth1","x.y":{"k":[1]}}]');
});
