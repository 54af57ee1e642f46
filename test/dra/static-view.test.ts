// src/dra/static-view.ts: the DraView over fixed lists that `netattach check` and the tests use
// (issue 30: mutation part `dra-view`).
import t from 'tap';
import { StaticDraView } from '../../src/dra/index.js';

t.test('classes: by name always, by extendedResourceName only when they serve one, in the scheduler order', async (t) => {
  const view = new StaticDraView([
    { name: 'old', extendedResourceName: 'example.com/nic', creationTimestamp: '2026-01-01T00:00:00Z' },
    { name: 'plain' },
    { name: 'empty', extendedResourceName: '' },
    { name: 'new', extendedResourceName: 'example.com/nic', creationTimestamp: '2026-02-01T00:00:00Z' },
  ]);
  view.addClass({ name: 'newest', extendedResourceName: 'example.com/nic', creationTimestamp: '2026-03-01T00:00:00Z' });
  view.addClass({ name: 'other', extendedResourceName: 'example.com/other' });
  t.strictSame(
    view.classesFor('example.com/nic').map((c) => c.name),
    ['newest', 'new', 'old'],
  );
  t.strictSame(
    view.classesFor('example.com/other').map((c) => c.name),
    ['other'],
  );
  t.strictSame(view.classesFor(''), [], 'an empty extendedResourceName serves nothing');
  t.strictSame(view.classesFor('example.com/none'), []);
  t.strictSame(view.deviceClass('plain'), { name: 'plain' });
  t.equal(view.deviceClass('empty')?.name, 'empty');
  t.equal(view.deviceClass('newest')?.creationTimestamp, '2026-03-01T00:00:00Z');
  t.equal(view.deviceClass('absent'), undefined);
  t.strictSame(new StaticDraView().classesFor('example.com/nic'), [], 'no arguments: empty');
});

t.test('templates: by namespace and name; devices only when given', async (t) => {
  const devices = { requests: [{ name: 'nic', alternatives: [{ deviceClassName: 'c' }] }] };
  const view = new StaticDraView(
    [],
    [
      { namespace: 'b', name: 'tpl', devices },
      { namespace: 'a', name: 'tpl' },
    ],
  );
  view.addTemplate('c', 'other');
  view.addTemplate('a', 'tpl');
  t.strictSame(view.template('a', 'tpl'), { status: 'found' });
  t.strictSame(view.template('b', 'tpl'), { status: 'found' });
  t.strictSame(view.template('c', 'tpl'), { status: 'not-found' }, 'another namespace');
  t.strictSame(view.template('a', 'none'), { status: 'not-found' }, 'another name');
  t.strictSame(view.templateNamespaces('tpl'), ['a', 'b'], 'sorted, each once');
  t.strictSame(view.templateNamespaces('other'), ['c']);
  t.strictSame(view.templateNamespaces('none'), []);
  t.equal(view.templateDevices('b', 'tpl'), devices);
  t.equal(view.templateDevices('a', 'tpl'), undefined, 'held without devices');
  t.equal(view.templateDevices('tpl', 'b'), undefined, 'namespace and name not swapped');
  t.strictSame(new StaticDraView().template('a', 'tpl'), { status: 'not-found' });
});
