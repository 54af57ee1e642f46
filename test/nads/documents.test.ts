import t from 'tap';
import { nadObjectsFromText } from '../../src/nads/index.js';

const NAD = (name: string): string => `apiVersion: k8s.cni.cncf.io/v1\nkind: NetworkAttachmentDefinition\nmetadata:\n  name: ${name}\n`;

t.test('manifest files: multi-document YAML, JSON, Lists; non-NADs skipped', async (t) => {
  const cases: Array<{ name: string; text: string; json?: boolean; nads?: string[]; skipped?: number; error?: RegExp }> = [
    { name: 'one YAML document', text: NAD('a'), nads: ['a'], skipped: 0 },
    {
      name: 'several documents and a ConfigMap',
      text: `${NAD('a')}---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n---\n${NAD('b')}`,
      nads: ['a', 'b'],
      skipped: 1,
    },
    { name: 'empty documents', text: `---\n---\n${NAD('a')}---\n`, nads: ['a'], skipped: 0 },
    {
      name: 'a List',
      text: `apiVersion: v1\nkind: List\nitems:\n- apiVersion: k8s.cni.cncf.io/v1\n  kind: NetworkAttachmentDefinition\n  metadata: {name: x}\n- apiVersion: v1\n  kind: Pod\n  metadata: {name: p}\n`,
      nads: ['x'],
      skipped: 1,
    },
    {
      name: 'a typed list',
      text: `apiVersion: k8s.cni.cncf.io/v1\nkind: NetworkAttachmentDefinitionList\nitems:\n- apiVersion: k8s.cni.cncf.io/v1\n  kind: NetworkAttachmentDefinition\n  metadata: {name: y}\n`,
      nads: ['y'],
      skipped: 0,
    },
    {
      name: 'JSON',
      json: true,
      text: JSON.stringify({ apiVersion: 'k8s.cni.cncf.io/v1', kind: 'NetworkAttachmentDefinition', metadata: { name: 'j' } }),
      nads: ['j'],
      skipped: 0,
    },
    { name: 'bad JSON', json: true, text: '{"apiVersion": x}', error: /^Unexpected token 'x'$/ },
    { name: 'bad YAML', text: `${NAD('a')}---\nkind: [\n`, error: /at line \d+, column \d+/ },
    { name: 'unresolved alias', text: 'a: *nope\n', error: /./ },
    {
      name: 'alias bomb',
      text: `a: &a [x,x,x,x,x,x,x,x,x,x]\nb: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]\nd: [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]\n`,
      error: /./,
    },
  ];
  for (const c of cases) {
    const got = nadObjectsFromText(c.text, c.json ?? false);
    if (c.error) {
      t.equal(got.ok, false, c.name);
      if (!got.ok) t.match(got.error, c.error, c.name);
    } else if (t.ok(got.ok, c.name) && got.ok) {
      t.same(
        got.nads.map((n) => (n.metadata as { name: string }).name),
        c.nads,
        c.name,
      );
      t.equal(got.skipped, c.skipped, `${c.name}: skipped`);
    }
  }
});

t.test('errors never echo the file content', async (t) => {
  // Past 20 characters V8 quotes an excerpt of the text, with "..." on its cut sides, after an
  // unexpected token: on one line or over several, it is cut like the whole short text.
  const cases: Array<[string, string]> = [
    ['{"token": "s3cr3t" x}', "Expected ',' or '}' after property value in JSON at position 19"],
    ['{"t": s3cr3t}', "Unexpected token 's'"],
    ['{"kind": "Secret", "token": s3cr3t}', "Unexpected token 's'"],
    ['{\n  "kind": "Secret",\n  "token": s3cr3t\n}', "Unexpected token 's'"],
    ['{"token": s3cr3t, "kind": "Secret", "x": 1}', "Unexpected token 's'"],
  ];
  for (const [text, error] of cases) t.same(nadObjectsFromText(text, true), { ok: false, error }, JSON.stringify(text));
});
