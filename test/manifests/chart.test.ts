// charts/netattach is generated from manifests/ by scripts/chart.ts: the committed chart is the
// generator's output, its values.yaml holds the manifests' settings and passes its schema, and the
// generator refuses the kustomize forms it cannot carry into the chart, naming them. Rendering
// with helm itself (lint, template against `kubectl kustomize`, install, upgrade) is in
// test/e2e/helm.e2e.ts, which needs the helm and kubectl binaries.
import t from 'tap';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { Ajv } from 'ajv';
import YAML from 'yaml';
import { applyPatch, chartDifferences, mergeKeys, renderChart, renderError, renderObject, type ChartError } from '../../scripts/chart.js';
import { BASE, ROOT, find, kustomization, kustomizeObjects, type Obj } from './load.js';

const CHART = join(ROOT, 'charts/netattach');
const schema = JSON.parse(readFileSync(join(ROOT, 'schemas/helm-values.schema.json'), 'utf8')) as Obj;
const values = YAML.parse(readFileSync(join(CHART, 'values.yaml'), 'utf8')) as Obj;
const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);

t.test('the committed chart is what scripts/chart.ts generates from manifests/', async (t) => {
  t.same(renderChart().errors.map(renderError), [], 'the generator carries every kustomize form manifests/ uses');
  t.same(chartDifferences(), [], 'no file differs, is missing or is left over (run: npx tsx scripts/chart.ts)');
  t.equal(
    readFileSync(join(CHART, 'values.schema.json'), 'utf8'),
    readFileSync(join(ROOT, 'schemas/helm-values.schema.json'), 'utf8'),
    'values.schema.json is the schema of schemas/',
  );
});

t.test("values.yaml holds the manifests' own settings", async (t) => {
  const base = kustomizeObjects(BASE);
  const deployment = find(base, 'Deployment', 'netattach');
  const container = deployment.spec.template.spec.containers[0];
  t.equal(values.replicas, deployment.spec.replicas);
  t.same(values.resources, container.resources);
  t.equal(values.image.pullPolicy, container.imagePullPolicy);
  const image = (kustomization(BASE).images as Obj[])[0]!;
  t.same(
    values.image,
    { repository: image.name, tag: image.newTag, pullPolicy: container.imagePullPolicy },
    "the base's images transformer",
  );
  t.equal(values.failurePolicy, find(base, 'MutatingWebhookConfiguration', 'netattach').webhooks[0].failurePolicy);
  t.equal(values.certificates.mode, 'self-signed', 'manifests/kustomization.yaml installs the self-signed overlay');
  t.same(values.networkPolicy.apiserverFrom, [], 'no apiserver address is guessed');
});

t.test('manifests are read as kustomize reads them, YAML 1.1: defaultMode 0440 is octal', async (t) => {
  const deployment = readFileSync(join(CHART, 'templates/base/deployment.yaml'), 'utf8');
  t.match(deployment, /\n {12}defaultMode: 288\n/, '0440 = 288 (YAML 1.2 would read 440, mode 0670)');
});

t.test('values.yaml passes its schema; bad values are refused naming the field', async (t) => {
  t.ok(validate(values), JSON.stringify(validate.errors));
  const cases: Array<[string, Obj, string]> = [
    ['replicas 0', { replicas: 0 }, '/replicas'],
    ['unknown certificate mode', { certificates: { ...values.certificates, mode: 'vault' } }, '/certificates/mode'],
    ['networkPolicy without the apiserver', { networkPolicy: { ...values.networkPolicy, enabled: true } }, '/networkPolicy/apiserverFrom'],
    ['extraArgs not a flag', { extraArgs: ['serve'] }, '/extraArgs/0'],
    ['a misspelt value', { replica: 3 }, ''],
    ['failurePolicy', { failurePolicy: 'fail' }, '/failurePolicy'],
  ];
  for (const [name, change, path] of cases) {
    t.notOk(validate({ ...values, ...change }), name);
    t.ok(
      validate.errors?.some((e) => e.instancePath === path),
      `${name}: an error at ${path || '(root)'}: ${JSON.stringify(validate.errors?.map((e) => e.instancePath))}`,
    );
  }
  t.ok(
    validate({
      ...values,
      networkPolicy: { ...values.networkPolicy, enabled: true, apiserverFrom: [{ ipBlock: { cidr: '10.0.0.10/32' } }] },
    }),
    'networkPolicy with the apiserver',
  );
});

t.test('the generator refuses patches it cannot carry, naming them', async (t) => {
  const items = () => [
    { source: 's', template: 't', cond: '', object: { kind: 'Deployment', metadata: { name: 'd' }, spec: { replicas: 1, args: ['a'] } } },
  ];
  const cases: Array<[string, Obj, string]> = [
    ['replace op', { target: { kind: 'Deployment', name: 'd' }, patch: '- op: replace\n  path: /spec/replicas\n  value: 2' }, 'w.patch[0]'],
    ['add into a map', { target: { kind: 'Deployment', name: 'd' }, patch: '- op: add\n  path: /spec/x\n  value: 2' }, 'w.patch[0]'],
    [
      'append to a non-list',
      { target: { kind: 'Deployment', name: 'd' }, patch: '- op: add\n  path: /spec/replicas/-\n  value: 2' },
      'w.patch[0].path',
    ],
    ['no target', { target: { kind: 'Service', name: 'd' }, patch: '- op: add\n  path: /a/-\n  value: 2' }, 'w.target'],
    ['a strategic patch that replaces', { patch: 'kind: Deployment\nmetadata: {name: d}\nspec: {replicas: 3}' }, 'w.patch.spec.replicas'],
    ['a patch file', { path: 'p.yaml' }, 'w.path'],
  ];
  for (const [name, entry, path] of cases) {
    const errors: ChartError[] = [];
    applyPatch(items(), entry, '.Values.x', 'w', errors);
    t.same(
      errors.map((e) => e.path),
      [path],
      name,
    );
    t.match(renderError(errors[0]!), new RegExp(`^${path.replace(/[.[\]]/g, '\\$&')}: .+: `), `${name}: rendered as a field error`);
  }
  const ok: ChartError[] = [];
  const target = { metadata: { name: 'd', labels: { a: '1' } } } as Obj;
  mergeKeys(target, { metadata: { labels: { a: '1' }, annotations: { b: '2' } } }, '', 'w', ok);
  t.same(ok, []);
  t.same(target.metadata.annotations, { b: '2' }, 'an unconditional patch adds its keys in place');
});

t.test('a conditional patch renders as an if block around exactly its items', async (t) => {
  const errors: ChartError[] = [];
  const item = { source: 's', template: 't', cond: '', object: { kind: 'Deployment', metadata: { name: 'd' }, spec: { args: ['a'] } } };
  applyPatch(
    [item],
    { target: { kind: 'Deployment', name: 'd' }, patch: '- op: add\n  path: /spec/args/-\n  value: --b' },
    '.Values.b',
    'w',
    errors,
  );
  applyPatch([item], { patch: 'kind: Deployment\nmetadata: {name: d, annotations: {x: y}}' }, '.Values.c', 'w', errors);
  t.same(errors, []);
  t.equal(
    renderObject(item.object),
    [
      'kind: Deployment',
      'metadata:',
      '  name: d',
      '  {{- if .Values.c }}',
      '  annotations:',
      '    x: y',
      '  {{- end }}',
      'spec:',
      '  args:',
      '    - a',
      '    {{- if .Values.b }}',
      '    - --b',
      '    {{- end }}',
    ].join('\n'),
  );
});

t.test('an object without holes renders as itself; braces become a string literal', async (t) => {
  const key = fc.string({ minLength: 1, maxLength: 8 }).filter((k) => !/^(COND|HOLE|SPLICE)_/.test(k) && k !== '__proto__');
  const text = fc.string({ maxLength: 20 }).filter((s) => !/\{\{|\}\}|HOLE_|SPLICE_|COND_/.test(s));
  const json = fc.letrec((tie) => ({
    node: fc.oneof(
      { depthSize: 'small' },
      text,
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      fc.array(tie('node'), { maxLength: 4 }),
      fc.dictionary(key, tie('node'), { maxKeys: 4 }),
    ),
  })).node;
  fc.assert(
    fc.property(fc.dictionary(key, json, { minKeys: 1, maxKeys: 5 }), (o) =>
      isDeepStrictEqual(YAML.parse(renderObject(o)), JSON.parse(JSON.stringify(o))),
    ),
    { numRuns: 300 },
  );
  t.equal(renderObject({ summary: 'rule {{ $labels.policy }} "x"' }), 'summary: {{ "rule {{ $labels.policy }} \\"x\\"" | toJson }}');
});

t.test('the NetworkPolicy template fails on empty or null peers; every schema pattern is anchored (issue 37)', async (t) => {
  const text = readFileSync(join(CHART, 'templates/components/networkpolicy/networkpolicy.yaml'), 'utf8');
  for (const v of ['apiserverFrom', 'prometheusFrom']) {
    t.match(
      text,
      new RegExp(
        `from: \\{\\{ or \\(and \\.Values\\.networkPolicy\\.${v} .*\\(fail "networkPolicy\\.${v}: the NetworkPolicy needs at least one peer`,
      ),
      v,
    );
  }
  const patterns: string[] = [];
  const walk = (s: unknown): void => {
    if (Array.isArray(s)) s.forEach(walk);
    else if (s && typeof s === 'object')
      for (const [k, v] of Object.entries(s)) k === 'pattern' && typeof v === 'string' ? patterns.push(v) : walk(v);
  };
  walk(schema);
  t.ok(patterns.length >= 2);
  for (const p of patterns) t.ok(p.startsWith('^') && p.endsWith('$'), `anchored: ${p}`);
  const nodeOptions = new RegExp((schema.properties as Obj).nodeOptions.pattern as string);
  t.ok(nodeOptions.test('--max-old-space-size=192 --max-semi-space-size=1'), 'the default');
  t.notOk(nodeOptions.test('--inspect=0.0.0.0:9229 --max-old-space-size=192'), '--inspect before');
  t.notOk(nodeOptions.test('--max-old-space-size=192 --inspect=0.0.0.0:9229'), '--inspect after');
  t.notOk(nodeOptions.test('--max-old-space-size=192 --require=/tmp/x.js'), '--require');
});
