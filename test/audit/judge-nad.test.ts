// The audit judges NAD objects with the admission core: the NAD CREATE (dry run) the webhook
// would get now, its errors as `builtin/nadValid` findings with the webhook's own messages.
import t from 'tap';
import { auditNad, auditNadObjects, auditedNadOf, requestForNad, NAD_RULE, type AuditedNad } from '../../src/audit/index.js';
import { DEFAULT_ADMISSION_CONFIG, review, type AdmissionConfig } from '../../src/admission/index.js';
import { renderError } from '../../src/field/index.js';
import { NO_POLICY } from '../../src/policy/index.js';
import { nad as nadObject, cni } from '../check/helpers.js';

const config = DEFAULT_ADMISSION_CONFIG;
const ref = (o: Record<string, unknown>): AuditedNad => {
  const md = o['metadata'] as { name: string; namespace?: string };
  return { namespace: md.namespace ?? 'team-a', name: md.name };
};
const CUSTOM_KEYS: AdmissionConfig = { ...config, resourceNameKeys: ['k8s.v1.cni.cncf.io/resourceName', 'example.com/resource'] };

const cases: Array<{ name: string; object: Record<string, unknown>; config?: AdmissionConfig; want: RegExp[] }> = [
  {
    name: 'a valid NAD: no finding',
    object: nadObject('sriov-net', { namespace: 'team-a', resourceName: 'intel.com/sriov', config: cni(['mac']) }),
    want: [],
  },
  {
    name: 'an empty config (read from the node): no finding',
    object: { ...nadObject('node-conf', { namespace: 'team-a' }), spec: {} },
    want: [],
  },
  {
    name: 'config that is not JSON',
    object: nadObject('bad-json', { namespace: 'team-a', config: '{"cniVersion":"1.0.0",' }),
    want: [/^spec\.config: Invalid value: .*invalid JSON/],
  },
  {
    name: 'config without a plugin type',
    object: nadObject('no-type', { namespace: 'team-a', config: '{"cniVersion":"1.0.0","name":"x"}' }),
    want: [/^spec\.config\.type: Required value/],
  },
  {
    name: 'a name pods cannot select (not a DNS-1123 label)',
    object: nadObject('v1.2', { namespace: 'team-a' }),
    want: [/^metadata\.name: Invalid value: "v1\.2": .*pods could not select this network/],
  },
  // Not an extended resource name, but one Multus matches to a DRA-claimed device: a warning only.
  {
    name: 'a resourceName without a domain: no finding (it works with DRA)',
    object: nadObject('legacy', { namespace: 'team-a', resourceName: 'sriov_netdevice' }),
    want: [],
  },
  {
    name: 'a resourceName list with an empty item (stored before netattach)',
    object: nadObject('legacy', { namespace: 'team-a', resourceName: 'intel.com/sriov_netdevice,' }),
    want: [/^metadata\.annotations\[k8s\.v1\.cni\.cncf\.io\/resourceName\]: Invalid value: "intel\.com\/sriov_netdevice,": empty item/],
  },
  {
    name: 'a resourceName key added later (resourceNameKeys) makes a stored NAD invalid',
    object: nadObject('other-key', { namespace: 'team-a', annotations: { 'example.com/resource': 'example.com/b,' } }),
    config: CUSTOM_KEYS,
    want: [/^metadata\.annotations\[example\.com\/resource\]: Invalid value: "example\.com\/b,"/],
  },
  {
    name: 'the same NAD with the default keys: no finding',
    object: nadObject('other-key', { namespace: 'team-a', annotations: { 'example.com/resource': 'example.com/b,' } }),
    want: [],
  },
  {
    name: 'a malformed nodeSelector annotation',
    object: nadObject('sel', { namespace: 'team-a', annotations: { 'k8s.v1.cni.cncf.io/nodeSelector': 'a=b=c' } }),
    want: [/^metadata\.annotations\[k8s\.v1\.cni\.cncf\.io\/nodeSelector\]/],
  },
  {
    name: "several errors: one finding each, in the webhook's order",
    object: nadObject('two', { namespace: 'team-a', resourceName: 'intel.com/a,', config: '{"cniVersion":"1.0.0","name":"x"}' }),
    want: [/^metadata\.annotations\[k8s\.v1\.cni\.cncf\.io\/resourceName\]/, /^spec\.config\.type: Required value/],
  },
];

for (const c of cases) {
  t.test(c.name, async (t) => {
    const findings = auditNad(c.object, ref(c.object), c.config ?? config);
    t.equal(findings.length, c.want.length, findings.map((f) => f.message).join('\n'));
    c.want.forEach((re, i) =>
      t.match(findings[i], { policy: 'builtin', rule: NAD_RULE, action: 'Enforce', result: 'fail', severity: 'high', message: re }),
    );
    // The webhook's answer to the same NAD created now (a real CREATE, not a dry run).
    const decision = review(
      { ...requestForNad(c.object, ref(c.object)), dryRun: false },
      { endpoint: 'validate', nads: () => ({ status: 'not-found' }), policy: NO_POLICY, config: c.config ?? config },
    );
    t.equal(decision.allowed, c.want.length === 0, 'the webhook denies exactly what the audit reports');
    t.same(
      findings.map((f) => f.message),
      decision.errors.map(renderError),
      "the webhook's messages",
    );
  });
}

t.test('not an object, or without a name: nothing to judge or to report against', async (t) => {
  t.same(auditNad('nope', { namespace: 'a', name: 'b' }, config), []);
  t.strictSame(auditNad(null, { namespace: 'a', name: 'b' }, config), [], 'null is no object either');
  t.same(auditNadObjects({ objects: ['nope', { metadata: { namespace: 'a' } }, null], config }), []);
});

t.test('auditNadObjects: every NAD the NAD webhook sees, clean ones with no findings; excluded namespaces are not audited', async (t) => {
  const bad = '{"cniVersion":"1.0.0","name":"x"}';
  const objects = [
    nadObject('ok', { namespace: 'team-a' }),
    nadObject('bad', { namespace: 'team-a', config: bad }),
    nadObject('bad', { namespace: 'kube-system', config: bad }),
    nadObject('bad', { namespace: 'netattach-system', config: bad }),
    nadObject('bad', { namespace: 'off', config: bad }),
    nadObject('no-namespace', { config: bad }),
  ];
  const labels: Record<string, Record<string, string>> = { off: { 'netattach.io/admission': 'disabled' } };
  const audits = auditNadObjects({ objects, namespaceLabels: (ns) => labels[ns], config, defaultNamespace: 'default' });
  t.same(
    audits.map((a) => `${a.nad.namespace}/${a.nad.name}:${a.findings.map((f) => f.rule).join(',')}`),
    ['team-a/ok:', 'team-a/bad:nadValid', 'default/no-namespace:nadValid'],
  );
});

t.test('requestForNad: the dry-run NAD CREATE, field by field', async (t) => {
  const object = nadObject('sriov-net', { namespace: 'team-a' });
  const gvk = { group: 'k8s.cni.cncf.io', version: 'v1', kind: 'NetworkAttachmentDefinition' };
  const gvr = { group: 'k8s.cni.cncf.io', version: 'v1', resource: 'network-attachment-definitions' };
  t.strictSame(requestForNad(object, { namespace: 'team-a', name: 'sriov-net', uid: 'u1' }), {
    uid: 'netattach-audit-u1',
    kind: gvk,
    resource: gvr,
    requestKind: gvk,
    requestResource: gvr,
    name: 'sriov-net',
    namespace: 'team-a',
    operation: 'CREATE',
    userInfo: {},
    dryRun: true,
    object,
  });
  t.equal(
    requestForNad(object, { namespace: 'team-a', name: 'sriov-net' }).uid,
    'netattach-audit-team-a/sriov-net',
    'without a uid: namespace/name',
  );
});

t.test('auditedNadOf: namespace, name and the uid when there is one', async (t) => {
  t.strictSame(auditedNadOf({ metadata: { namespace: 'a', name: 'n', uid: 'u' } }), { namespace: 'a', name: 'n', uid: 'u' });
  t.strictSame(auditedNadOf({ metadata: { name: 'n' } }, 'files'), { namespace: 'files', name: 'n' });
  t.equal(auditedNadOf({ metadata: { name: 'n' } }), undefined);
});

t.test('an array is no NAD object: nothing to judge', async (t) => {
  t.strictSame(auditNad([nadObject('x', { namespace: 'a', config: '{' })], { namespace: 'a', name: 'x' }, config), []);
});

t.test('a NAD the core fails on is a result "error" (builtin/internal), not a violation', async (t) => {
  // The core's net under a bug: an object whose spec throws when read makes review() answer 500.
  const object = {
    ...nadObject('x', { namespace: 'a' }),
    get spec(): never {
      throw new Error('boom');
    },
  };
  const findings = auditNad(object, { namespace: 'a', name: 'x' }, config);
  t.strictSame(
    findings.map(({ message: _m, ...rest }) => rest),
    [{ policy: 'builtin', rule: 'internal', action: 'Enforce', result: 'error', severity: 'info' }],
  );
  t.match(findings[0]!.message, /^request: Internal error: netattach failed to review the request \(Error: boom\)/);
});
