import t from 'tap';
import { StaticNadSource, nadFromObject } from '../../src/nads/index.js';
import { nadObject } from './helpers.js';

t.test('static source: objects or entries in, lookups out', async (t) => {
  const src = new StaticNadSource([nadObject('default', 'a'), nadFromObject(nadObject('kube-system', 'b'))]);
  await src.start();
  t.equal(src.kind, 'static');
  t.ok(src.synced());
  t.equal(src.size(), 2);
  t.equal(src.get('default', 'a')?.name, 'a');
  t.equal(src.get('kube-system', 'a'), undefined, 'namespaces are distinct');
  t.same((await src.lookup('kube-system', 'b')).status, 'found');
  t.same(await src.lookup('default', 'zzz'), { status: 'not-found' });
  src.put(nadFromObject(nadObject('default', 'c')));
  t.equal(src.size(), 3);
  t.ok(src.remove('default', 'c'));
  t.same(
    src
      .list()
      .map((n) => `${n.namespace}/${n.name}`)
      .sort(),
    ['default/a', 'kube-system/b'],
  );
  await src.stop();
});

t.test('resource-name keys apply to objects given to the static source', async (t) => {
  const obj = nadObject('default', 'a');
  (obj.metadata as Record<string, unknown>).annotations = { 'example.com/res': 'example.com/x' };
  const src = new StaticNadSource([obj], { resourceNameKeys: ['example.com/res'] });
  t.same(src.get('default', 'a')?.resourceNames, ['example.com/x']);
});
