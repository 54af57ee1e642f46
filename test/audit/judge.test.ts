// The audit judges live pods with the admission core: built-in checks, policies, uniqueness
// among live pods (never a pod against itself), malformed annotations; clean pods have no findings.
import t from 'tap';
import { auditSnapshot, auditPod, findingsOf, hasNetworks, requestFor } from '../../src/audit/index.js';
import { notJudgedFinding } from '../../src/audit/kept-text.js';
import { DEFAULT_ADMISSION_CONFIG, review } from '../../src/admission/index.js';
import { EMPTY_POLICY_SET, PolicyEngine, policySet } from '../../src/policy/index.js';
import { live, nad, policiesOf, UNIQUE_MACS, ONLY_SRIOV } from './helpers.js';

const config = DEFAULT_ADMISSION_CONFIG;
const nads = [nad('team-a', 'sriov-net'), nad('team-a', 'macvlan', ['ips'])];
const brief = (a: ReturnType<typeof auditSnapshot>) =>
  a.map((x) => ({ pod: x.pod.name, findings: x.findings.map((f) => `${f.policy}/${f.rule}/${f.action}/${f.result}`) }));

t.test('a pod alone with a MAC is not judged against itself', async (t) => {
  const out = auditSnapshot({
    pods: [live('team-a', 'p1', '[{"name":"sriov-net","mac":"02:00:00:00:00:01"}]')],
    nads,
    policies: policiesOf(UNIQUE_MACS),
    config,
  });
  t.same(brief(out), [{ pod: 'p1', findings: [] }]);
});

t.test('two live pods sharing a MAC: both are reported, each naming the other', async (t) => {
  const mac = '[{"name":"sriov-net","mac":"02:00:00:00:00:01"}]';
  const out = auditSnapshot({
    pods: [live('team-a', 'p1', mac), live('team-a', 'p2', mac), live('team-a', 'p3', '[{"name":"sriov-net","mac":"02:00:00:00:00:02"}]')],
    nads,
    policies: policiesOf(UNIQUE_MACS),
    config,
  });
  t.same(brief(out), [
    { pod: 'p1', findings: ['unique-macs/uniqueAddresses/Enforce/fail'] },
    { pod: 'p2', findings: ['unique-macs/uniqueAddresses/Enforce/fail'] },
    { pod: 'p3', findings: [] },
  ]);
  t.match(out[0]!.findings[0]!.message, /already used by pod team-a\/p2 \(running\)/);
  t.match(out[1]!.findings[0]!.message, /already used by pod team-a\/p1 \(running\)/);
});

t.test('built-in checks: a missing NAD and an undeclared capability', async (t) => {
  const out = auditSnapshot({
    pods: [
      live('team-a', 'gone', 'missing-net'),
      live('team-a', 'nocap', '[{"name":"macvlan","mac":"02:00:00:00:00:09"}]'),
      live('team-a', 'ok', 'sriov-net'),
    ],
    nads,
    policies: EMPTY_POLICY_SET,
    config,
  });
  t.same(brief(out), [
    { pod: 'gone', findings: ['builtin/networkExists/Enforce/fail'] },
    { pod: 'nocap', findings: ['builtin/capabilities/Enforce/fail'] },
    { pod: 'ok', findings: [] },
  ]);
  t.match(out[0]!.findings[0]!.message, /Not found: "team-a\/missing-net": no such NetworkAttachmentDefinition/);
});

t.test('a policy added later judges the pods already running; Warn and Audit actions map to warn and fail', async (t) => {
  const pods = [live('team-a', 'a', 'sriov-net'), live('team-a', 'b', 'macvlan')];
  t.same(
    brief(auditSnapshot({ pods, nads, policies: EMPTY_POLICY_SET, config })).flatMap((x) => x.findings),
    [],
  );
  t.same(brief(auditSnapshot({ pods, nads, policies: policiesOf(ONLY_SRIOV), config })), [
    { pod: 'a', findings: [] },
    { pod: 'b', findings: ['only-sriov/allowedNetworks/Enforce/fail'] },
  ]);
  const warn = policiesOf(ONLY_SRIOV.replace('action: Enforce', 'action: Warn'));
  t.same(
    auditSnapshot({ pods, nads, policies: warn, config })[1]!.findings.map((f) => [f.result, f.severity]),
    [['warn', 'medium']],
  );
  const audit = policiesOf(ONLY_SRIOV.replace('action: Enforce', 'action: Audit'));
  t.same(
    auditSnapshot({ pods, nads, policies: audit, config })[1]!.findings.map((f) => [f.result, f.severity]),
    [['fail', 'low']],
  );
});

t.test('a malformed annotation is a builtin/annotation failure with the parser message', async (t) => {
  const out = auditSnapshot({
    pods: [live('team-a', 'bad', '[{"name":"sriov-net","mac":"02:00:00:aa:bb"}]')],
    nads,
    policies: EMPTY_POLICY_SET,
    config,
  });
  t.equal(out[0]!.findings.length, 1);
  t.match(out[0]!.findings[0]!, { policy: 'builtin', rule: 'annotation', action: 'Enforce', result: 'fail' });
  t.match(out[0]!.findings[0]!.message, /\.mac: Invalid value: "02:00:00:aa:bb"/);
});

t.test('pods without networks, in excluded namespaces or namespaces with admission disabled are not audited', async (t) => {
  const out = auditSnapshot({
    pods: [live('team-a', 'plain'), live('kube-system', 'sys', 'missing'), live('off', 'x', 'missing'), live('team-a', 'y', 'missing')],
    nads,
    namespaceLabels: (ns) => (ns === 'off' ? { 'netattach.io/admission': 'disabled' } : undefined),
    policies: EMPTY_POLICY_SET,
    config,
  });
  t.same(
    out.map((a) => a.pod.name),
    ['y'],
  );
});

t.test('namespace labels select policies; an exempt namespace yields no finding (the exemption is not reported)', async (t) => {
  const selected = policiesOf(ONLY_SRIOV.replace('rules:', 'namespaceSelector: {matchLabels: {tier: prod}}\n  rules:'));
  const pods = [live('prod', 'p', 'prod/macvlan'), live('dev', 'd', 'dev/macvlan')];
  const labels = (ns: string): Record<string, string> => (ns === 'prod' ? { tier: 'prod' } : {});
  const nadsBoth = [nad('prod', 'macvlan', ['ips']), nad('dev', 'macvlan', ['ips'])];
  t.same(brief(auditSnapshot({ pods, nads: nadsBoth, namespaceLabels: labels, policies: selected, config })), [
    { pod: 'p', findings: ['only-sriov/allowedNetworks/Enforce/fail'] },
    { pod: 'd', findings: [] },
  ]);
  const exempt = (ns: string) => ({ ...labels(ns), 'netattach.io/exempt': 'true' });
  t.same(
    brief(auditSnapshot({ pods, nads: nadsBoth, namespaceLabels: exempt, policies: selected, config })).flatMap((x) => x.findings),
    [],
  );
});

/** MACs may be requested by the user admin only: the audit cannot tell who created a pod. */
const MACS_FOR_ADMIN_ONLY = `apiVersion: netattach.io/v1alpha1
kind: NetworkAttachmentPolicy
metadata: {name: macs}
spec:
  rules:
    requestedFields: {forbidden: [mac], allowedSubjects: {users: [admin]}, action: Enforce}
`;

t.test('requestedFields with allowedSubjects cannot be judged without the requester: skip', async (t) => {
  const withSubjects = policiesOf(MACS_FOR_ADMIN_ONLY);
  const pods = [live('team-a', 'p', '[{"name":"sriov-net","mac":"02:00:00:00:00:05"}]')];
  const out = auditSnapshot({ pods, nads, policies: withSubjects, config });
  t.match(out[0]!.findings, [
    { rule: 'requestedFields', result: 'skip', severity: 'info', message: /not judged: the audit does not know who created the pod/ },
  ]);
  const forAll = policiesOf(`apiVersion: netattach.io/v1alpha1
kind: NetworkAttachmentPolicy
metadata: {name: macs}
spec:
  rules:
    requestedFields: {forbidden: [mac], action: Enforce}
`);
  t.match(auditSnapshot({ pods, nads, policies: forAll, config })[0]!.findings, [{ rule: 'requestedFields', result: 'fail' }]);
});

t.test('the message is the admission message: the same pod created now is denied with it', async (t) => {
  const pod = live('team-a', 'b', 'macvlan');
  const set = policiesOf(ONLY_SRIOV);
  const lookup = (ns: string, name: string) => {
    const n = nads.find((x) => x.namespace === ns && x.name === name);
    return n ? ({ status: 'found', nad: n } as const) : ({ status: 'not-found' } as const);
  };
  const ctx = { nads: lookup, namespaceLabels: () => ({}), policy: new PolicyEngine({ policies: set }), policies: set, config };
  const decision = review(
    { ...requestFor(pod), dryRun: false },
    { endpoint: 'validate', nads: lookup, namespaceLabels: {}, policy: ctx.policy, config },
  );
  t.equal(decision.allowed, false);
  t.same(
    auditPod(pod, ctx).map((f) => f.message),
    findingsOf(decision, set).map((f) => f.message),
  );
  t.match(auditPod(pod, ctx)[0]!.message, /policy "only-sriov" \(allowedNetworks\)/);
});

t.test('an internal error of the core is a result "error", not a violation', async (t) => {
  const f = findingsOf(
    {
      allowed: false,
      code: 500,
      errors: [{ path: 'request', type: 'Internal error', reason: 'boom' }],
      warnings: [],
      audits: [],
      findings: [],
      patch: [],
      addresses: [],
    },
    policySet([]),
  );
  t.match(f, [{ result: 'error', rule: 'internal' }]);
});

// The request the audit asks the core about is the one the apiserver would send for the pod
// created now (src/audit/judge.ts): a dry-run Pod CREATE from nobody, the pod's own annotations
// and controller, a placeholder container. Written out whole, so that each field is pinned.
t.test('requestFor: the dry-run Pod CREATE of the live pod, field by field', async (t) => {
  const controller = { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', name: 'vm1', uid: 'vmi-1' };
  const pod = { namespace: 'team-a', name: 'p', uid: 'uid-p', networks: 'sriov-net', controller };
  const gvk = { group: '', version: 'v1', kind: 'Pod' };
  const gvr = { group: '', version: 'v1', resource: 'pods' };
  t.strictSame(requestFor(pod), {
    uid: 'netattach-audit-uid-p',
    kind: gvk,
    resource: gvr,
    requestKind: gvk,
    requestResource: gvr,
    name: 'p',
    namespace: 'team-a',
    operation: 'CREATE',
    userInfo: {},
    dryRun: true,
    object: {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: 'p',
        namespace: 'team-a',
        uid: 'uid-p',
        annotations: { 'k8s.v1.cni.cncf.io/networks': 'sriov-net' },
        ownerReferences: [{ ...controller, controller: true }],
      },
      spec: { containers: [{ name: 'netattach-audit' }] },
    },
  });
  // Without a uid or a controller, with the default network only: neither key is written, and the
  // request's uid names the pod (namespace/name).
  const bare = requestFor({ namespace: 'team-a', name: 'q', defaultNetwork: 'team-a/macvlan' });
  t.equal(bare.uid, 'netattach-audit-team-a/q');
  t.strictSame(bare.object, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'q', namespace: 'team-a', annotations: { 'v1.multus-cni.io/default-network': 'team-a/macvlan' } },
    spec: { containers: [{ name: 'netattach-audit' }] },
  });
  t.strictSame(
    Object.keys((bare.object as { metadata: { annotations: object } }).metadata.annotations),
    ['v1.multus-cni.io/default-network'],
    'no networks key set to undefined',
  );
  t.strictSame(
    Object.keys((requestFor(pod).object as { metadata: { annotations: object } }).metadata.annotations),
    ['k8s.v1.cni.cncf.io/networks'],
    'no default-network key set to undefined',
  );
});

/** A context with no policies and no NADs that records every lookup the audit makes. */
function recordingContext() {
  const asked: string[] = [];
  const set = EMPTY_POLICY_SET;
  const ctx = {
    nads: (ns: string, name: string) => (asked.push(`nad ${ns}/${name}`), { status: 'not-found' } as const),
    namespaceLabels: (ns: string) => (asked.push(`labels ${ns}`), {}),
    policy: new PolicyEngine({ policies: set }),
    policies: set,
    config,
  };
  return { asked, ctx };
}

t.test('auditPod: a pod without networks is not judged (the webhooks never see it): nothing is looked up', async (t) => {
  const { asked, ctx } = recordingContext();
  t.strictSame(auditPod(live('team-a', 'plain'), ctx), []);
  t.strictSame(asked, []);
  // The same context judges a pod with networks (the lookups above are the ones made).
  t.match(auditPod(live('team-a', 'q', 'missing'), ctx), [{ rule: 'networkExists' }]);
  t.ok(asked.includes('labels team-a') && asked.includes('nad team-a/missing'), asked.join(', '));
});

t.test('auditPod: a pod whose annotations were not kept gets the not-judged finding, and nothing is looked up', async (t) => {
  const { asked, ctx } = recordingContext();
  for (const bound of ['pod', 'total'] as const) {
    const unkept = { bound, limit: 4096, chars: 9000, fingerprint: 'f' };
    // The texts were dropped: the pod holds only what stands for them.
    const pod = { namespace: 'team-a', name: `big-${bound}`, uid: 'u', unkept };
    t.ok(hasNetworks(pod), `${bound}: a pod with texts not kept has networks`);
    t.strictSame(auditPod(pod, ctx), [notJudgedFinding(unkept)], bound);
  }
  t.strictSame(asked, [], 'no NAD or namespace asked for');
});

t.test('each finding written out whole: Enforce is fail/high, the internal error builtin/internal error/info', async (t) => {
  const out = auditSnapshot({ pods: [live('team-a', 'b', 'macvlan')], nads, policies: policiesOf(ONLY_SRIOV), config });
  t.strictSame(
    out[0]!.findings.map(({ message: _m, ...rest }) => rest),
    [{ policy: 'only-sriov', rule: 'allowedNetworks', action: 'Enforce', result: 'fail', severity: 'high' }],
  );
  const internal = findingsOf(
    {
      allowed: false,
      code: 500,
      errors: [{ path: 'request', type: 'Internal error', reason: 'boom' }],
      warnings: [],
      audits: [],
      findings: [],
      patch: [],
      addresses: [],
    },
    policySet([]),
  );
  t.strictSame(internal, [
    { policy: 'builtin', rule: 'internal', action: 'Enforce', result: 'error', severity: 'info', message: 'request: Internal error: boom' },
  ]);
});

t.test('requestedFields: allowed groups alone, or service accounts alone, also make the rule depend on the requester', async (t) => {
  const pods = [live('team-a', 'p', '[{"name":"sriov-net","mac":"02:00:00:00:00:05"}]')];
  for (const subjects of ['{groups: [netadmins]}', '{serviceAccounts: [team-a/deployer]}']) {
    const set = policiesOf(`apiVersion: netattach.io/v1alpha1
kind: NetworkAttachmentPolicy
metadata: {name: macs}
spec:
  rules:
    requestedFields: {forbidden: [mac], allowedSubjects: ${subjects}, action: Enforce}
`);
    t.match(
      auditSnapshot({ pods, nads, policies: set, config })[0]!.findings,
      [{ rule: 'requestedFields', result: 'skip', severity: 'info' }],
      subjects,
    );
  }
});

t.test('a malformed annotation, written out whole: builtin/annotation, Enforce, fail, high', async (t) => {
  const out = auditSnapshot({
    pods: [live('team-a', 'bad', '[{"name":"sriov-net","mac":"02:00:00:aa:bb"}]')],
    nads,
    policies: EMPTY_POLICY_SET,
    config,
  });
  t.strictSame(
    out[0]!.findings.map(({ message: _m, ...rest }) => rest),
    [{ policy: 'builtin', rule: 'annotation', action: 'Enforce', result: 'fail', severity: 'high' }],
  );
});

t.test('only the requestedFields rule is skipped: another rule of the same policy is judged', async (t) => {
  const set = policiesOf(`apiVersion: netattach.io/v1alpha1
kind: NetworkAttachmentPolicy
metadata: {name: both}
spec:
  rules:
    requestedFields: {forbidden: [mac], allowedSubjects: {users: [admin]}, action: Enforce}
    allowedNetworks: {networks: ["*/sriov-net"], action: Enforce}
`);
  const out = auditSnapshot({ pods: [live('team-a', 'p', '[{"name":"macvlan"}]')], nads, policies: set, config });
  t.strictSame(
    out[0]!.findings.map((f) => `${f.policy}/${f.rule}/${f.result}`),
    ['both/allowedNetworks/fail'],
  );
});

t.test("a skipped finding's message, with its note, stays within the 1,024 bytes of a message", async (t) => {
  const set = policiesOf(MACS_FOR_ADMIN_ONLY);
  const error = { path: '[0].mac', type: 'Forbidden' as const, reason: 'r'.repeat(5000) };
  const decision = {
    allowed: false,
    code: 403 as const,
    errors: [error],
    warnings: [],
    audits: [],
    findings: [{ policy: 'macs', rule: 'requestedFields', action: 'Enforce' as const, error }],
    patch: [],
    addresses: [],
  };
  const [f] = findingsOf(decision, set);
  t.equal(f!.result, 'skip');
  t.ok(f!.message.endsWith(' (not judged: the audit does not know who created the pod, and the rule allows some subjects)'));
  t.ok(Buffer.byteLength(f!.message) <= 1024 && Buffer.byteLength(f!.message) > 1000, `${Buffer.byteLength(f!.message)} bytes`);
});
