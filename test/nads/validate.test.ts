import t from 'tap';
import { renderError } from '../../src/field/index.js';
import { validateNadObject } from '../../src/nads/index.js';

interface NadInput {
  name?: unknown;
  generateName?: string;
  annotations?: Record<string, unknown>;
  spec?: unknown;
  deletionTimestamp?: string;
}

function nad(n: NadInput = {}): Record<string, unknown> {
  const metadata: Record<string, unknown> = { namespace: 'default' };
  if (n.name !== undefined) metadata.name = n.name;
  else if (n.generateName === undefined) metadata.name = 'net-a';
  if (n.generateName !== undefined) metadata.generateName = n.generateName;
  if (n.annotations) metadata.annotations = n.annotations;
  if (n.deletionTimestamp) metadata.deletionTimestamp = n.deletionTimestamp;
  return {
    apiVersion: 'k8s.cni.cncf.io/v1',
    kind: 'NetworkAttachmentDefinition',
    metadata,
    ...('spec' in n
      ? { spec: n.spec }
      : { spec: { config: JSON.stringify({ cniVersion: '1.0.0', name: 'net-a', plugins: [{ type: 'macvlan' }] }) } }),
  };
}

const RN = 'metadata.annotations[k8s.v1.cni.cncf.io/resourceName]';
const NS = 'metadata.annotations[k8s.v1.cni.cncf.io/nodeSelector]';

t.test('one case per rule: errors rendered as Kubernetes field errors', async (t) => {
  const cases: Array<{ name: string; obj: unknown; errors: string[] | RegExp[] }> = [
    { name: 'valid NAD', obj: nad(), errors: [] },
    { name: 'empty spec.config stays valid', obj: nad({ spec: { config: '' } }), errors: [] },
    { name: 'missing spec stays valid', obj: nad({ spec: undefined }), errors: [] },
    { name: 'spec without config stays valid', obj: nad({ spec: {} }), errors: [] },
    { name: 'not an object', obj: 'x', errors: [/^<object>: Invalid value: "x": must be a NetworkAttachmentDefinition object$/] },
    {
      name: 'wrong kind',
      obj: { ...nad(), kind: 'Pod' },
      errors: ['kind: Unsupported value: "Pod": supported values: "NetworkAttachmentDefinition"'],
    },
    {
      name: 'wrong apiVersion',
      obj: { ...nad(), apiVersion: 'k8s.cni.cncf.io/v2' },
      errors: ['apiVersion: Unsupported value: "k8s.cni.cncf.io/v2": supported values: "k8s.cni.cncf.io/v1"'],
    },
    {
      name: 'missing name and generateName',
      obj: nad({ name: '' }),
      errors: ['metadata.name: Required value: name or generateName is required'],
    },
    { name: 'generateName without a name yet', obj: nad({ generateName: 'net-' }), errors: [] },
    {
      name: 'name not a label: dots',
      obj: nad({ name: 'net.a' }),
      errors: [
        /^metadata\.name: Invalid value: "net\.a": a lowercase RFC 1123 label must consist of .*: pods could not select this network/,
      ],
    },
    {
      name: 'name too long',
      obj: nad({ name: 'a'.repeat(64) }),
      errors: [
        /^metadata\.name: Invalid value: "a{64}": must be no more than 63 characters$|^metadata\.name: Invalid value: "a{64}": must be no more than 63 characters: pods could not/,
      ],
    },
    {
      name: 'name with a leading dash (accepted by the old controller)',
      obj: nad({ name: '-net' }),
      errors: [/^metadata\.name: Invalid value: "-net"/],
    },
    { name: 'name with a leading zero (refused by the old controller)', obj: nad({ name: '0net' }), errors: [] },
    { name: 'name not a string', obj: nad({ name: 7 }), errors: ['metadata.name: Invalid value: 7: must be a string'] },
    { name: 'spec not an object', obj: nad({ spec: 'x' }), errors: ['spec: Invalid value: "x": must be an object'] },
    {
      name: 'spec.config not a string',
      obj: nad({ spec: { config: { type: 'macvlan' } } }),
      errors: ['spec.config: Invalid value: {"type":"macvlan"}: must be a string holding the CNI configuration as JSON'],
    },
    {
      name: 'spec.config bad JSON',
      obj: nad({ spec: { config: '{"type": "macvlan",}' } }),
      errors: [
        /^spec\.config: Invalid value: "\{\\"type\\": \\"macvlan\\",\}": invalid JSON at line 1, column 20: Expected double-quoted property name$/,
      ],
    },
    {
      name: 'spec.config bad cniVersion',
      obj: nad({ spec: { config: '{"cniVersion":"2.0.0","name":"n","type":"x"}' } }),
      errors: [/^spec\.config\.cniVersion: Unsupported value: "2\.0\.0"/],
    },
    {
      name: 'resourceName valid list',
      obj: nad({ annotations: { 'k8s.v1.cni.cncf.io/resourceName': 'intel.com/a,intel.com/b' } }),
      errors: [],
    },
    // Not extended resource names: they work with DRA (Multus's own e2e: `single-gpu`), so no error (see below).
    { name: 'resourceName not domain-prefixed', obj: nad({ annotations: { 'k8s.v1.cni.cncf.io/resourceName': 'sriov_net' } }), errors: [] },
    {
      name: 'resourceName in kubernetes.io',
      obj: nad({ annotations: { 'k8s.v1.cni.cncf.io/resourceName': 'kubernetes.io/x' } }),
      errors: [],
    },
    {
      name: 'resourceName empty item',
      obj: nad({ annotations: { 'k8s.v1.cni.cncf.io/resourceName': 'intel.com/a,' } }),
      errors: [`${RN}: Invalid value: "intel.com/a,": empty item in the comma-separated list`],
    },
    { name: 'nodeSelector valid', obj: nad({ annotations: { 'k8s.v1.cni.cncf.io/nodeSelector': 'zone=a,sriov' } }), errors: [] },
    {
      name: 'nodeSelector a=b=c',
      obj: nad({ annotations: { 'k8s.v1.cni.cncf.io/nodeSelector': 'a=b=c' } }),
      errors: [`${NS}: Invalid value: "a=b=c": must be 'key=value' or 'key' (more than one '=')`],
    },
    {
      name: 'nodeSelector not a string',
      obj: nad({ annotations: { 'k8s.v1.cni.cncf.io/nodeSelector': 1 } }),
      errors: [`${NS}: Invalid value: 1: must be a string`],
    },
    {
      name: 'several problems are all reported',
      obj: nad({
        name: 'Bad',
        annotations: { 'k8s.v1.cni.cncf.io/resourceName': 'x.io/a,' },
        spec: { config: '{"cniVersion":"9","plugins":[]}' },
      }),
      errors: [
        /^metadata\.name/,
        /^metadata\.annotations\[k8s\.v1\.cni\.cncf\.io\/resourceName\]/,
        /^spec\.config\.cniVersion/,
        /^spec\.config\.plugins: Required value/,
      ],
    },
  ];
  for (const c of cases) {
    const got = validateNadObject(c.obj).errors.map(renderError);
    t.equal(got.length, c.errors.length, `${c.name}: ${got.join(' | ')}`);
    c.errors.forEach((want, i) => (typeof want === 'string' ? t.equal(got[i], want, c.name) : t.match(got[i], want, c.name)));
  }
});

t.test('warnings do not deny', async (t) => {
  const got = validateNadObject(nad({ spec: { config: '{"type":"macvlan"}' } }));
  t.same(got.errors, []);
  // No name is no warning (Multus fills in the NAD's name); a missing cniVersion still warns.
  t.same(
    got.warnings.map((w) => w.path),
    ['spec.config.cniVersion'],
  );
  t.same(
    got.warnings.map((w) => w.type),
    ['Invalid value'],
    'an optional key is never "Required value"',
  );
});

t.test('a path prefix re-roots every field path (lists in `netattach check`)', async (t) => {
  const got = validateNadObject(
    nad({ name: 'A', annotations: { 'k8s.v1.cni.cncf.io/nodeSelector': 'a=b=c' }, spec: { config: '{' } }),
    'items[2]',
  );
  t.same(
    got.errors.map((e) => e.path),
    ['items[2].metadata.name', 'items[2].metadata.annotations[k8s.v1.cni.cncf.io/nodeSelector]', 'items[2].spec.config'],
  );
});

t.test('configured resource-name keys are validated too', async (t) => {
  const obj = nad({ annotations: { 'example.com/resource': 'example.com/b,', 'k8s.v1.cni.cncf.io/resourceName': 'intel.com/a' } });
  t.same(validateNadObject(obj).errors, [], 'extra key ignored by default');
  const got = validateNadObject(obj, { resourceNameKeys: ['k8s.v1.cni.cncf.io/resourceName', 'example.com/resource'] });
  t.equal(got.errors.length, 1);
  t.match(renderError(got.errors[0]!), /^metadata\.annotations\[example\.com\/resource\]: Invalid value: "example\.com\/b,": empty item/);
});

t.test('UPDATE and DELETE', async (t) => {
  t.same(
    validateNadObject(nad({ spec: { config: '{' } }), { operation: 'DELETE' }),
    { errors: [], warnings: [] },
    'DELETE: nothing to check',
  );
  t.same(
    validateNadObject(nad({ spec: { config: '{' } }), 'DELETE'),
    { errors: [], warnings: [] },
    'operation given as the second argument',
  );

  const badName = validateNadObject(nad({ name: 'net.a' }), { operation: 'UPDATE' });
  t.same(badName.errors, [], 'names are immutable: an UPDATE is not denied for its name');
  t.match(badName.warnings.map(renderError), [/^metadata\.name: Invalid value: "net\.a"/]);

  const old = nad({ spec: { config: '{"cniVersion":"0.5.0","name":"n","type":"x"}' } });
  const sameProblem = validateNadObject(
    nad({ annotations: { a: 'b' }, spec: { config: '{"cniVersion":"0.5.0","name":"n","type":"x"}' } }),
    { operation: 'UPDATE', oldObject: old },
  );
  t.same(sameProblem.errors, [], 'an error the stored object already had does not block other edits');
  t.match(sameProblem.warnings.map(renderError), [/cniVersion: Unsupported value: "0\.5\.0".*\(already present before this update\)$/]);

  const newProblem = validateNadObject(nad({ spec: { config: '{"cniVersion":"0.5.0","name":"n","type":"x"}' } }), {
    operation: 'UPDATE',
    oldObject: nad(),
  });
  t.match(newProblem.errors.map(renderError), [/cniVersion: Unsupported value/], 'a new error is still an error');

  const deleting = validateNadObject(nad({ deletionTimestamp: '2024-01-01T00:00:00Z', spec: { config: '{' } }), { operation: 'UPDATE' });
  t.same(deleting, { errors: [], warnings: [] }, 'an object being deleted stays editable (finalizers)');
});

t.test('operations given as a string, and UPDATE against the stored object', async (t) => {
  const bad = nad({ name: 'Net_A' });
  const nameError = 'metadata.name: Invalid value: "Net_A": ';
  t.match(validateNadObject(bad, 'CREATE').errors.map(renderError), [nameError], 'CREATE is an operation, not a path');
  // Exact paths: as a path prefix, 'CREATE' would make `CREATE.metadata.name`, which still contains the message.
  t.same(
    validateNadObject(bad, 'CREATE').errors.map((e) => e.path),
    ['metadata.name'],
    'no path prefix from an operation',
  );
  t.same(validateNadObject(bad, 'UPDATE').errors, [], 'UPDATE: a name problem is a warning');
  t.same(validateNadObject(bad, 'CONNECT'), { errors: [], warnings: [] });
  t.same(validateNadObject(bad, { operation: 'CONNECT' }), { errors: [], warnings: [] });
  const noVersion = nad({ name: 'Net_A', spec: { config: JSON.stringify({ name: 'n', type: 'macvlan' }) } });
  t.same(
    validateNadObject(noVersion, { operation: 'CREATE', oldObject: noVersion }).errors.map((e) =>
      e.reason.endsWith('(already present before this update)'),
    ),
    [false],
    'CREATE ignores an old object',
  );
  const update = validateNadObject(noVersion, { operation: 'UPDATE', oldObject: noVersion, path: 'items[0]' });
  t.same(update.errors, [], 'an old error is no new error, under a path too');
  t.same(
    update.warnings.map((w) => w.path),
    ['items[0].metadata.name', 'items[0].spec.config.cniVersion'],
    'the warnings of the new object are kept',
  );
  t.same(
    validateNadObject(7, { operation: 'UPDATE' }).errors.map(renderError),
    ['<object>: Invalid value: 7: must be a NetworkAttachmentDefinition object'],
    'no old object: nothing to forgive',
  );
  // 'bad' alone is only a warning (a DRA name); an empty item is an error.
  const custom = nad({ annotations: { 'example.com/res': 'intel.com/a,' } });
  t.equal(validateNadObject(custom, { resourceNameKeys: ['example.com/res'] }).errors.length, 1, 'an error on CREATE');
  t.same(
    validateNadObject(custom, { operation: 'UPDATE', oldObject: custom, resourceNameKeys: ['example.com/res'] }).errors,
    [],
    'the old object is read with the same resource-name keys',
  );
});

t.test('what is absent is not wrong; what is on its way out only on UPDATE', async (t) => {
  const plain = nad();
  delete plain.apiVersion;
  delete plain.kind;
  t.same(validateNadObject(plain), { errors: [], warnings: [] });
  t.same(validateNadObject(nad({ spec: null })), { errors: [], warnings: [] });
  t.same(validateNadObject(nad({ spec: { config: null } })), { errors: [], warnings: [] });
  t.same(validateNadObject(nad({ name: 'Net_A', deletionTimestamp: '2026-01-01T00:00:00Z' })).errors.length, 1, 'CREATE checks it anyway');
  t.same(validateNadObject(nad({ generateName: '' })).errors.map(renderError), [
    'metadata.name: Required value: name or generateName is required',
  ]);
  const long = validateNadObject(nad({ name: 'A'.repeat(64) })).errors[0]?.reason;
  t.match(long, /^must be no more than 63 characters; a lowercase RFC 1123 label/);
});

t.test('UPDATE: the stored object is read like the new one (path, default keys), and only when given', async (t) => {
  const already = (e: string) => `${e} (already present before this update)`;
  const version =
    'spec.config.cniVersion: Unsupported value: "0.5.0": unknown CNI version; supported values: "0.1.0", "0.2.0", "0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"';
  const oldVersion = nad({ spec: { config: '{"cniVersion":"0.5.0","name":"n","type":"x"}' } });
  const underPath = validateNadObject(oldVersion, { operation: 'UPDATE', oldObject: oldVersion, path: 'items[0]' });
  t.same(underPath.errors, [], 'an error with a path prefix is matched against the stored object under the same prefix');
  t.same(underPath.warnings.map(renderError), [already(`items[0].${version}`)]);

  // No resourceNameKeys: the stored object is read with the standard key too.
  const oldResource = nad({ annotations: { 'k8s.v1.cni.cncf.io/resourceName': 'intel.com/a,' } });
  const resource = validateNadObject(oldResource, { operation: 'UPDATE', oldObject: oldResource });
  t.same(resource.errors, []);
  t.same(resource.warnings.map(renderError), [already(`${RN}: Invalid value: "intel.com/a,": empty item in the comma-separated list`)]);

  // No stored object: nothing is forgiven, even an error a missing object (undefined) would also have.
  t.same(validateNadObject(undefined, { operation: 'UPDATE' }), {
    errors: [{ path: '<object>', type: 'Invalid value', value: undefined, reason: 'must be a NetworkAttachmentDefinition object' }],
    warnings: [],
  });
});

t.test('a ResourceClaimTemplate annotation that names no template is an error, under the path prefix', async (t) => {
  const bad = nad({ annotations: { 'netattach.io/resourceClaimTemplate': 'Bad_Name' } });
  t.same(
    validateNadObject(bad, 'items[2]').errors.map((e) => [e.path, e.value]),
    [['items[2].metadata.annotations[netattach.io/resourceClaimTemplate]', 'Bad_Name']],
  );
  t.same(validateNadObject(nad({ annotations: { 'netattach.io/resourceClaimTemplate': 'nic' } })).errors, [], 'a good name');
});

t.test('a resourceName that is not an extended resource name is a warning, never a denial (DRA matches it)', async (t) => {
  // Multus's own DRA e2e (v4.2.4 e2e/templates/dra-integration.yml.j2) and a marker string on an ovs NAD.
  for (const value of ['single-gpu', 'ovs-marker', 'kubernetes.io/x']) {
    for (const operation of ['CREATE', 'UPDATE'] as const) {
      const obj = nad({ annotations: { 'k8s.v1.cni.cncf.io/resourceName': value } });
      const got = validateNadObject(obj, { operation, ...(operation === 'UPDATE' ? { oldObject: obj } : {}) });
      t.same(got.errors, [], `${value} on ${operation}: no error`);
      t.match(got.warnings.map(renderError), [
        new RegExp(
          `^${RN.replace(/[.[\]/]/g, '\\$&')}: Invalid value: "${value.replace('.', '\\.')}": not an extended resource name: no device plugin can serve it`,
        ),
      ]);
    }
  }
});
