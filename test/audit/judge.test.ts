// The audit judges live pods with the admission core: built-in checks, policies, uniqueness
// among live pods (never a pod against itself), malformed annotations; clean pods have no findings.
import t from 'tap';
import { auditSnapshot, auditPod, findingsOf, requestFor } from '../../src/audit/index.js';
import { DEFAULT_ADMISSION_CONFIG, review } from '../../src/admission/index.js';
import { EMPTY_POLICY_SET, PolicyEngine, policySet } from '../../src/policy/index.js';
import { live, nad, policiesOf, UNIQUE_MACS, ONLY_SRIOV } from './helpers.js';

const config = DEFAULT_ADMISSION_CONFIG;
const nads = [nad('team-a', 'sriov-net'), nad('team-a', 'macvlan', ['ips'])];
const brief = (a: ReturnType<typeof auditSnapshot>) => a.map((x) => ({ pod: x.pod.name, findings: x.findings.map((f) => `${f.policy}/${f.rule}/${f.action}/${f.result}`) }));

t.test('a pod alone with a MAC is not judged against itself', async (t) => {
  const out = auditSnapshot({ pods: [live('team-a', 'p1', '[{"name":"sriov-net","mac":"02:00:00:00:00:01"}]')], nads, policies: policiesOf(UNIQUE_MACS), config });
  t.same(brief(out), [{ pod: 'p1', findings: [] }]);
});

t.test('two live pods sharing a MAC: both are reported, each naming the other', async (t) => {
  const mac = '[{"name":"sriov-net","mac":"02:00:00:00:00:01"}]';
  const out = auditSnapshot({ pods: [live('team-a', 'p1', mac), live('team-a', 'p2', mac), live('team-a', 'p3', '[{"name":"sriov-net","mac":"02:00:00:00:00:02"}]')], nads, policies: policiesOf(UNIQUE_MACS), config });
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
    pods: [live('team-a', 'gone', 'missing-net'), live('team-a', 'nocap', '[{"name":"macvlan","mac":"02:00:00:00:00:09"}]'), live('team-a', 'ok', 'sriov-net')],
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
  t.same(brief(auditSnapshot({ pods, nads, policies: EMPTY_POLICY_SET, config })).flatMap((x) => x.findings), []);
  t.same(brief(auditSnapshot({ pods, nads, policies: policiesOf(ONLY_SRIOV), config })), [
    { pod: 'a', findings: [] },
    { pod: 'b', findings: ['only-sriov/allowedNetworks/Enforce/fail'] },
  ]);
  const warn = policiesOf(ONLY_SRIOV.replace('action: Enforce', 'action: Warn'));
  t.same(auditSnapshot({ pods, nads, policies: warn, config })[1]!.findings.map((f) => [f.result, f.severity]), [['warn', 'medium']]);
  const audit = policiesOf(ONLY_SRIOV.replace('action: Enforce', 'action: Audit'));
  t.same(auditSnapshot({ pods, nads, policies: audit, config })[1]!.findings.map((f) => [f.result, f.severity]), [['fail', 'low']]);
});

t.test('a malformed annotation is a builtin/annotation failure with the parser message', async (t) => {
  const out = auditSnapshot({ pods: [live('team-a', 'bad', '[{"name":"sriov-net","mac":"02:00:00:aa:bb"}]')], nads, policies: EMPTY_POLICY_SET, config });
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
  t.same(out.map((a) => a.pod.name), ['y']);
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
  t.same(brief(auditSnapshot({ pods, nads: nadsBoth, namespaceLabels: exempt, policies: selected, config })).flatMap((x) => x.findings), []);
});

t.test('requestedFields with allowedSubjects cannot be judged without the requester: skip', async (t) => {
  const withSubjects = policiesOf(`apiVersion: netattach.io/v1alpha1
kind: NetworkAttachmentPolicy
metadata: {name: macs}
spec:
  rules:
    requestedFields: {forbidden: [mac], allowedSubjects: {users: [admin]}, action: Enforce}
`);
  const pods = [live('team-a', 'p', '[{"name":"sriov-net","mac":"02:00:00:00:00:05"}]')];
  const out = auditSnapshot({ pods, nads, policies: withSubjects, config });
  t.match(out[0]!.findings, [{ rule: 'requestedFields', result: 'skip', severity: 'info', message: /not judged: the audit does not know who created the pod/ }]);
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
  const decision = review({ ...requestFor(pod), dryRun: false }, { endpoint: 'validate', nads: lookup, namespaceLabels: {}, policy: ctx.policy, config });
  t.equal(decision.allowed, false);
  t.same(auditPod(pod, ctx).map((f) => f.message), findingsOf(decision, set).map((f) => f.message));
  t.match(auditPod(pod, ctx)[0]!.message, /policy "only-sriov" \(allowedNetworks\)/);
});

t.test('an internal error of the core is a result "error", not a violation', async (t) => {
  const f = findingsOf({ allowed: false, code: 500, errors: [{ path: 'request', type: 'Internal error', reason: 'boom' }], warnings: [], audits: [], findings: [], patch: [], claims: [] }, policySet([]));
  t.match(f, [{ result: 'error', rule: 'internal' }]);
});
