import t from 'tap';
import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { loadManifests, readInputs, STDIN_NAME } from '../../src/check/index.js';

const noStdin = async (): Promise<string> => {
  throw new Error('stdin must not be read');
};

t.test(
  'directories: recursive, sorted, only .yaml/.yml/.json, dot entries skipped; files named are read whatever their name',
  async (t) => {
    const dir = t.testdir({
      'b.yaml': 'kind: B\n',
      'a.yml': 'kind: A\n',
      'c.JSON': '{"kind": "C"}',
      'notes.txt': 'kind: Ignored\n',
      '.hidden.yaml': 'kind: Hidden\n',
      '.git': { 'x.yaml': 'kind: Git\n' },
      sub: { 'z.yaml': 'kind: Z\n', deeper: { 'y.json': '{"kind": "Y"}' } },
      'manifest.txt': 'kind: Explicit\n',
    });
    const { inputs, errors } = await readInputs([dir, join(dir, 'manifest.txt')], noStdin);
    t.same(errors, []);
    t.same(
      inputs.map((i) => i.file.slice(dir.length + 1)),
      ['a.yml', 'b.yaml', 'c.JSON', 'sub/deeper/y.json', 'sub/z.yaml', 'manifest.txt'],
    );
  },
);

t.test('a missing path is a read error; the other paths are still read', async (t) => {
  const dir = t.testdir({ 'ok.yaml': 'apiVersion: v1\nkind: Pod\n' });
  const r = await loadManifests([join(dir, 'missing.yaml'), join(dir, 'ok.yaml')], noStdin);
  t.same(r.errors, [{ file: join(dir, 'missing.yaml'), message: 'cannot read: no such file or directory' }]);
  t.equal(r.objects.length, 1);
});

t.test('a symlink loop is followed once', async (t) => {
  const dir = t.testdir({ a: { 'x.yaml': 'kind: X\n' } });
  symlinkSync(dir, join(dir, 'a', 'loop'));
  const { inputs, errors } = await readInputs([dir], noStdin);
  t.same(errors, []);
  t.same(
    inputs.map((i) => i.file.slice(dir.length + 1)),
    ['a/x.yaml'],
  );
});

t.test('- reads stdin (a stream), named <stdin>', async (t) => {
  const r = await loadManifests(['-'], Readable.from(['apiVersion: v1\nkind: Pod\n', '---\napiVersion: v1\nkind: Service\n']));
  t.same(
    r.objects.map((o) => [o.file, o.index, (o.object as { kind: string }).kind]),
    [
      [STDIN_NAME, 0, 'Pod'],
      [STDIN_NAME, 1, 'Service'],
    ],
  );
});

t.test('parse errors of one file do not stop the others', async (t) => {
  const dir = t.testdir({ 'a.yaml': 'kind: [\n', 'b.yaml': 'apiVersion: v1\nkind: Pod\n' });
  const r = await loadManifests([dir], noStdin);
  t.equal(r.errors.length, 1);
  t.equal(r.errors[0]!.file, join(dir, 'a.yaml'));
  t.same(
    r.objects.map((o) => o.file),
    [join(dir, 'b.yaml')],
  );
});
