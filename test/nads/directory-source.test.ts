import t, { type Test } from 'tap';
import { mkdir, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { DirectoryNadSource, type NadSourceEvent } from '../../src/nads/index.js';
import { eventually, nadObject, recordingLogger } from './helpers.js';

const yamlOf = (...objs: unknown[]): string => objs.map((o) => stringify(o)).join('---\n');

async function setup(
  t: Test,
): Promise<{ dir: string; src: DirectoryNadSource; log: ReturnType<typeof recordingLogger>; events: NadSourceEvent[] }> {
  const dir = t.testdir({});
  const log = recordingLogger();
  const events: NadSourceEvent[] = [];
  const src = new DirectoryNadSource(dir, { logger: log, debounceMs: 20, resyncIntervalMs: 0, onEvent: (e) => events.push(e) });
  t.teardown(() => src.stop());
  return { dir, src, log, events };
}

t.test('first scan: YAML, multi-document, JSON, Lists; other kinds and files ignored', async (t) => {
  const { dir, src } = await setup(t);
  await writeFile(
    join(dir, 'a.yaml'),
    yamlOf(nadObject('default', 'a'), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' } }, nadObject('kube-system', 'b')),
  );
  await writeFile(join(dir, 'c.json'), JSON.stringify(nadObject('default', 'c')));
  await writeFile(join(dir, 'list.yml'), yamlOf({ apiVersion: 'v1', kind: 'List', items: [nadObject('default', 'd')] }));
  await writeFile(join(dir, 'notes.txt'), 'apiVersion: k8s.cni.cncf.io/v1');
  await writeFile(join(dir, '.hidden.yaml'), yamlOf(nadObject('default', 'hidden')));
  t.equal(src.synced(), false);
  t.same(await src.lookup('default', 'a'), { status: 'unavailable', reason: `NAD directory ${dir} not read yet` });
  await src.start();
  t.ok(src.synced());
  t.same(
    src
      .list()
      .map((n) => `${n.namespace}/${n.name}`)
      .sort(),
    ['default/a', 'default/c', 'default/d', 'kube-system/b'],
  );
  t.equal((await src.lookup('default', 'a')).status, 'found');
  t.same(await src.lookup('default', 'missing'), { status: 'not-found' });
});

t.test('watching: add, replace, remove, and a bad file keeps its last good content', async (t) => {
  const { dir, src, log, events } = await setup(t);
  await writeFile(join(dir, 'a.yaml'), yamlOf(nadObject('default', 'a')));
  await src.start();
  t.equal(src.size(), 1);

  await writeFile(join(dir, 'b.yaml'), yamlOf(nadObject('default', 'b')));
  await eventually(() => src.get('default', 'b') !== undefined, 'b added');

  // Replaced atomically (write + rename), as editors and kubectl cp do.
  await writeFile(join(dir, '.tmp'), yamlOf(nadObject('default', 'b', { resourceName: 'intel.com/x' })));
  await rename(join(dir, '.tmp'), join(dir, 'b.yaml'));
  await eventually(() => src.get('default', 'b')?.resourceNames[0] === 'intel.com/x', 'b replaced');

  await writeFile(join(dir, 'a.yaml'), 'kind: [\n');
  await writeFile(join(dir, 'c.yaml'), yamlOf(nadObject('default', 'c')));
  await eventually(() => src.get('default', 'c') !== undefined, 'c added next to the broken a.yaml');
  t.ok(src.get('default', 'a'), 'a.yaml unparseable: its NADs from before are kept');
  const warn = log.lines.find((l) => l.level === 'warn' && l.message.includes('cannot parse'));
  t.ok(warn, 'the bad file is logged');
  t.equal(warn?.fields.file, join(dir, 'a.yaml'), 'with its name');
  t.notMatch(JSON.stringify(log.lines), /kind: \[/, 'but not its content');

  await rm(join(dir, 'a.yaml'));
  await eventually(() => src.get('default', 'a') === undefined, 'a removed with its file');
  t.ok(events.some((e) => e.type === 'add'));
  t.ok(events.some((e) => e.type === 'update'));
  t.ok(events.some((e) => e.type === 'delete'));
  t.ok(events.some((e) => e.type === 'error' && e.outcome === 'read'));
});

t.test('a file never parsed successfully is ignored; others kept', async (t) => {
  const { dir, src, log } = await setup(t);
  await writeFile(join(dir, 'bad.json'), '{"apiVersion": ');
  await writeFile(join(dir, 'good.yaml'), yamlOf(nadObject('default', 'g')));
  await src.start();
  t.equal(src.size(), 1);
  t.ok(log.lines.some((l) => l.fields.file === join(dir, 'bad.json')));
});

t.test('ConfigMap volume layout: files are symlinks through ..data', async (t) => {
  const { dir, src } = await setup(t);
  await mkdir(join(dir, '..v1'));
  await writeFile(join(dir, '..v1', 'nads.yaml'), yamlOf(nadObject('default', 'v1')));
  await symlink('..v1', join(dir, '..data'));
  await symlink(join('..data', 'nads.yaml'), join(dir, 'nads.yaml'));
  await src.start();
  t.ok(src.get('default', 'v1'));

  // The kubelet swaps ..data atomically to a new version directory.
  await mkdir(join(dir, '..v2'));
  await writeFile(join(dir, '..v2', 'nads.yaml'), yamlOf(nadObject('default', 'v2')));
  await symlink('..v2', join(dir, '..data_tmp'));
  await rename(join(dir, '..data_tmp'), join(dir, '..data'));
  await eventually(() => src.get('default', 'v2') !== undefined && src.get('default', 'v1') === undefined, 'new ConfigMap version');
});

t.test('the same NAD in two files: the later file (by name) wins, with a warning', async (t) => {
  const { dir, src, log } = await setup(t);
  await writeFile(join(dir, '1.yaml'), yamlOf(nadObject('default', 'x', { resourceName: 'intel.com/one' })));
  await writeFile(join(dir, '2.yaml'), yamlOf(nadObject('default', 'x', { resourceName: 'intel.com/two' })));
  await src.start();
  t.same(src.get('default', 'x')?.resourceNames, ['intel.com/two']);
  t.ok(log.lines.some((l) => l.message.includes('two files')));
});

t.test('a missing directory is a start-up error; losing it later keeps the cache', async (t) => {
  const missing = new DirectoryNadSource(join(t.testdir({}), 'nope'));
  await t.rejects(missing.start(), /NAD directory .*nope: ENOENT/);

  const parent = t.testdir({ nads: { 'a.yaml': yamlOf(nadObject('default', 'a')) } });
  const log = recordingLogger();
  const src = new DirectoryNadSource(join(parent, 'nads'), { logger: log, debounceMs: 20, resyncIntervalMs: 0 });
  t.teardown(() => src.stop());
  await src.start();
  await rm(join(parent, 'nads'), { recursive: true });
  await src.rescan();
  t.ok(src.get('default', 'a'), 'NADs kept when the directory disappears');
  t.ok(log.lines.some((l) => l.level === 'error'));
});
