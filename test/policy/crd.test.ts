import t from 'tap';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { renderPolicyCrd, policyCrd, loadPolicyDocuments } from '../../src/policy/index.js';

const root = join(import.meta.dirname, '..', '..');

t.test('the manifest is the one generated from the schema', async (t) => {
  const manifest = readFileSync(join(root, 'manifests/base/crd-networkattachmentpolicy.yaml'), 'utf8');
  t.equal(manifest, renderPolicyCrd(), 'regenerate: npm run gen');
});

type Node = Record<string, unknown>;
const schema = (): Node => {
  const crd = policyCrd() as { spec: { versions: Array<{ schema: { openAPIV3Schema: Node }; subresources: unknown }> } };
  return crd.spec.versions[0]!.schema.openAPIV3Schema;
};

t.test('the CRD schema is structural', async (t) => {
  const problems: string[] = [];
  const walk = (n: Node, path: string): void => {
    if (typeof n.type !== 'string' && n['x-kubernetes-preserve-unknown-fields'] !== true && n['x-kubernetes-int-or-string'] !== true)
      problems.push(`${path}: no type`);
    for (const k of ['$ref', '$schema', '$id', 'definitions', 'patternProperties', 'const', 'examples', 'title'])
      if (k in n) problems.push(`${path}: ${k}`);
    if (n.properties && n.additionalProperties !== undefined) problems.push(`${path}: properties and additionalProperties`);
    if (n.uniqueItems === true) problems.push(`${path}: uniqueItems`);
    for (const [k, v] of Object.entries((n.properties as Record<string, Node>) ?? {})) walk(v, `${path}.${k}`);
    if (n.items) walk(n.items as Node, `${path}[]`);
    if (typeof n.additionalProperties === 'object') walk(n.additionalProperties as Node, `${path}{}`);
  };
  walk(schema(), '');
  t.same(problems, []);
  t.same((schema().properties as Node).metadata, { type: 'object' });
});

t.test('status subresource declared', async (t) => {
  const crd = policyCrd() as {
    spec: { scope: string; versions: Array<{ subresources: unknown; additionalPrinterColumns: Array<{ name: string }> }> };
  };
  t.same(crd.spec.versions[0]!.subresources, { status: {} });
  t.equal(crd.spec.scope, 'Cluster');
  t.same(
    crd.spec.versions[0]!.additionalPrinterColumns.map((c) => c.name),
    ['Action', 'Accepted', 'Reason', 'Message', 'Age'],
  );
});

t.test('every example is valid for ajv and for the CRD schema', async (t) => {
  const dir = join(root, 'examples/policies');
  const files = readdirSync(dir).filter((f) => f.endsWith('.yaml'));
  t.ok(files.length >= 4);
  const crdValidate = new Ajv({ strict: false }).compile(schema());
  for (const f of files) {
    const text = readFileSync(join(dir, f), 'utf8');
    const { policies, errors } = loadPolicyDocuments(text, f);
    t.same(errors, [], f);
    t.ok(policies.length >= 1, f);
    t.ok(crdValidate(parse(text)), `${f} against the CRD schema`);
  }
});

// The field reference in docs/policy.md, generated from the schema: test/scripts/gen.test.ts.
