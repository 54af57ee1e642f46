import t from 'tap';
import { renderErrors } from '../../src/field/index.js';
import { loadPolicyDocuments } from '../../src/policy/index.js';
import { policyYaml } from './helpers.js';

t.test('multi-document YAML: valid ones kept, invalid ones reported with the field', async (t) => {
  const text = [
    policyYaml('good', 'rules:\n  maxAttachments: {max: 2}'),
    policyYaml('bad-action', 'rules:\n  maxAttachments: {max: 2, action: Deny}'),
    policyYaml('unknown-field', 'rules:\n  maxAttachment: {max: 2}'),
    policyYaml('bad-selector', 'namespaceSelector:\n  matchExpressions: [{key: a, operator: In}, {key: b, operator: Exists, values: [x]}]'),
    policyYaml(
      'bad-range',
      'rules:\n  hardwareAddresses:\n    guidRanges: [{from: "00:00:00:00:00:00:00:09", to: "00:00:00:00:00:00:00:01"}]',
    ),
    policyYaml('bad-prefix', 'rules:\n  hardwareAddresses: {macPrefixes: ["02:0"]}'),
    policyYaml('good', 'rules: {}'),
  ].join('---\n');
  const { policies, errors } = loadPolicyDocuments(text, 'policies.yaml');
  t.same(
    policies.map((p) => p.name),
    ['good'],
  );
  const byName = Object.fromEntries(errors.map((e) => [e.name, renderErrors(e.errors)]));
  t.match(
    byName['bad-action'],
    'spec.rules.maxAttachments.action: Unsupported value: "Deny": supported values: "Enforce", "Warn", "Audit"',
  );
  t.match(byName['unknown-field'], 'spec.rules.maxAttachment: Forbidden: unknown field');
  t.match(
    byName['bad-selector'],
    'spec.namespaceSelector.matchExpressions[0].values: Required value: must be specified when operator is In',
  );
  t.match(
    byName['bad-selector'],
    'spec.namespaceSelector.matchExpressions[1].values: Forbidden: may not be specified when operator is Exists',
  );
  t.match(
    byName['bad-range'],
    'spec.rules.hardwareAddresses.guidRanges[0].to: Invalid value: "00:00:00:00:00:00:00:01": must not be below from',
  );
  t.match(byName['bad-prefix'], 'spec.rules.hardwareAddresses.macPrefixes[0]: Invalid value: "02:0"');
  t.match(byName['good'], 'metadata.name: Duplicate value');
  t.match(errors[0]!.message, /^policy "bad-action" \(policies.yaml#1\) is invalid: /);
});

t.test('JSON, kind List, empty documents', async (t) => {
  const one = JSON.parse(
    JSON.stringify({ apiVersion: 'netattach.io/v1alpha1', kind: 'NetworkAttachmentPolicy', metadata: { name: 'j' }, spec: {} }),
  );
  t.same(
    loadPolicyDocuments(JSON.stringify(one), 'x').policies.map((p) => p.name),
    ['j'],
  );
  const list = { apiVersion: 'v1', kind: 'List', items: [one, { ...one, metadata: { name: 'k' } }] };
  t.same(
    loadPolicyDocuments(JSON.stringify(list), 'x').policies.map((p) => p.name),
    ['j', 'k'],
  );
  t.same(loadPolicyDocuments('---\n---\n', 'x'), { policies: [], errors: [] });
});

t.test('broken YAML is an error without a name, never a throw', async (t) => {
  const { policies, errors } = loadPolicyDocuments('a: [\n', 'f.yaml');
  t.same(policies, []);
  t.equal(errors.length, 1);
  t.equal(errors[0]!.name, undefined);
  t.match(errors[0]!.message, 'not valid YAML or JSON');
});

t.test('wrong kind, missing spec, bad name', async (t) => {
  const { errors } = loadPolicyDocuments('apiVersion: v1\nkind: ConfigMap\nmetadata: {name: Bad_Name}\n', 'f');
  const text = renderErrors(errors[0]!.errors);
  t.match(text, 'apiVersion: Unsupported value: "v1"');
  t.match(text, 'kind: Unsupported value: "ConfigMap"');
  t.match(text, 'spec: Required value');
  t.match(text, 'metadata.name: Invalid value: "Bad_Name"');
});
