// judgeNetworks (src/admission/judge.ts), called directly: which problems deny and with which code,
// which only warn, and exactly what the policy is given.
import t from 'tap';
import { judgeNetworks, type JudgeOptions } from '../../src/admission/judge.js';
import { Verdict } from '../../src/admission/decision.js';
import { readPodNetworks } from '../../src/admission/networks.js';
import { POD_LOCATION } from '../../src/admission/object.js';
import { review, type AdmissionConfig, type Decision, type Operation } from '../../src/admission/index.js';
import type { NadLookup } from '../../src/nads/types.js';
import type { HeldAddress, Finding, PolicyEvaluator, PolicyInput } from '../../src/policy/types.js';
import { chain, context, nadLookup, nadObject, NETWORKS, pod, request } from './fixtures.js';

const A = `metadata.annotations[${NETWORKS}]`;
const found = nadLookup(
  nadObject('a'),
  nadObject('static', {
    config: chain({ type: 'macvlan', master: 'eth1', ipam: { type: 'static', addresses: [{ address: '192.0.2.1/24' }] } }),
  }),
  nadObject('vendor', { config: chain({ type: 'vendor-cni' }) }),
);
/** `down` cannot be read now (the API server did not answer); the rest as `found`. */
const nads = (ns: string, name: string): NadLookup => (name === 'down' ? { status: 'unavailable', reason: 'not synced' } : found(ns, name));

const CLAIM: HeldAddress = { kind: 'mac', value: '02:00:00:00:00:01', scope: 'network:default/a', pod: { namespace: 'default' } };

/** A policy that records what it was given and answers `answer` (default: the built-in findings). */
function spy(answer?: (input: PolicyInput) => Finding[]): { policy: PolicyEvaluator; inputs: PolicyInput[] } {
  const inputs: PolicyInput[] = [];
  return {
    inputs,
    policy: {
      evaluate: (input) => {
        inputs.push(input);
        return { findings: answer ? answer(input) : input.builtin, addresses: [CLAIM] };
      },
    },
  };
}

interface Run {
  object?: Record<string, unknown>;
  networks?: string;
  operation?: Operation;
  opts?: Partial<JudgeOptions>;
  policy?: PolicyEvaluator;
  config?: Partial<AdmissionConfig>;
  namespaceLabels?: Record<string, string>;
  dryRun?: boolean;
  name?: string;
}

function judge(run: Run): { d: Decision; v: Verdict; inputs: PolicyInput[] } {
  const s = spy();
  const object = run.object ?? pod(run.networks === undefined ? {} : { networks: run.networks });
  const nets = readPodNetworks(object, POD_LOCATION, 'default', { ...context(nads).config, ...(run.config ?? {}) });
  const req = {
    ...request(object, { operation: run.operation ?? 'CREATE' }),
    ...(run.dryRun === undefined ? {} : { dryRun: run.dryRun }),
    ...(run.name ? { name: run.name } : {}),
  };
  const ctx = {
    ...context(nads, { policy: run.policy ?? s.policy, ...(run.config ? { config: run.config } : {}) }),
    ...(run.namespaceLabels ? { namespaceLabels: run.namespaceLabels } : {}),
  };
  const v = new Verdict();
  judgeNetworks(v, nets, object, req, ctx, { template: false, namespace: 'default', warnOnly: false, ...(run.opts ?? {}) });
  return { d: v.build(), v, inputs: s.inputs };
}

const fields = (d: Decision) => d.warnings.flatMap((w) => ('field' in w ? [w.field] : []));
const notes = (d: Decision) => d.warnings.flatMap((w) => ('note' in w ? [w.note] : []));

t.test('parser errors deny as object errors (422), or only warn when the change leaves the networks alone', async (t) => {
  const bad = {
    path: `${A}[1]`,
    type: 'Invalid value',
    value: '',
    reason: 'empty list item (look for a doubled or trailing comma); Multus would accept it and the pod would then fail to start',
  };
  const denied = judge({ networks: 'a,,a' });
  t.equal(denied.d.allowed, false);
  t.equal(denied.d.code, 422);
  t.same(denied.d.errors, [bad]);
  t.same(denied.d.warnings, []);
  const warned = judge({ networks: 'a,,a', opts: { warnOnly: true } });
  t.equal(warned.d.allowed, true);
  t.same(denied.d.errors.length, 1);
  t.same(warned.d.errors, []);
  t.same(warned.d.warnings, [{ field: bad }]);
  // Parser warnings are warnings either way.
  const w = judge({ networks: '[{"name":"a","default-route":[]}]' });
  t.equal(w.d.allowed, true);
  t.same(w.d.warnings, [{ field: { path: `${A}[0].default-route`, type: 'Invalid value', value: [], reason: 'empty: names no gateway' } }]);
});

t.test('no network annotation: nothing for the policy to judge; an empty one is still judged', async (t) => {
  const none = judge({});
  t.equal(none.inputs.length, 0, 'no annotation: the policy is not asked');
  t.same(none.d.addresses, [], 'and claims nothing');
  for (const value of ['', '[]']) {
    const empty = judge({ networks: value });
    t.equal(empty.inputs.length, 1, `${JSON.stringify(value)}: the policy is asked`);
    t.same(empty.inputs[0]!.networks, []);
    t.same(empty.d.addresses, [CLAIM]);
  }
  // Malformed metadata: an error, and no policy call.
  const garbage = judge({ object: { metadata: { annotations: 7 } } });
  t.equal(garbage.d.allowed, false);
  t.equal(garbage.inputs.length, 0);
});

t.test('certain ADD failures found by the built-in checks are object errors; what may fail only warns', async (t) => {
  const bare = {
    path: `${A}[0].ips[0]`,
    type: 'Invalid value',
    value: '10.0.0.6',
    reason: `default/static's IPAM "static" (spec.config.plugins[0].ipam) needs an address with a /prefix: the ADD would fail`,
  };
  const denied = judge({ networks: '[{"name":"static","ips":["10.0.0.6"]}]' });
  t.equal(denied.d.code, 422);
  t.same(denied.d.errors, [bare]);
  const warned = judge({ networks: '[{"name":"static","ips":["10.0.0.6"]}]', opts: { warnOnly: true } });
  t.equal(warned.d.allowed, true);
  t.same(fields(warned.d), [bare]);

  // A malformed cni-args MAC that an unknown plugin may read: a field warning, never an error.
  const maybe = judge({ networks: '[{"name":"vendor","cni-args":{"mac":"zz"}}]' });
  t.equal(maybe.d.allowed, true);
  t.equal(fields(maybe.d).length, 1);
  t.match(fields(maybe.d)[0], { path: `${A}[0].cni-args.mac`, type: 'Invalid value', value: 'zz', reason: /vendor-cni may read it\)$/ });
  // A note (not a field error): a key no plugin reads.
  const ignored = judge({ networks: '[{"name":"static","cni-args":{"mac":"02:00:00:00:00:01"}}]' });
  t.equal(ignored.d.allowed, true);
  t.same(fields(ignored.d), []);
  t.equal(notes(ignored.d).length, 1);
  t.match(notes(ignored.d)[0], { path: `${A}[0].cni-args.mac`, text: /is read by no plugin of default\/static/ });
});

t.test('a NAD that cannot be read: a pod CREATE is denied, retryable (503); otherwise a note', async (t) => {
  const path = `${A}[0]`;
  const create = judge({ networks: 'down' });
  t.equal(create.d.allowed, false);
  t.equal(create.d.code, 503);
  t.same(create.d.errors, [
    {
      path,
      type: 'Internal error',
      reason:
        'default/down could not be looked up (not synced); retry: admitted now, the pod would start without the device resources its networks need',
    },
  ]);
  t.same(create.d.findings, [{ policy: 'builtin', rule: 'networkExists', action: 'Enforce', error: create.d.errors[0] }]);
  t.same(create.d.warnings, []);
  // Not something the policy can re-grade: it is not among the built-in findings it is given.
  t.same(create.inputs[0]!.builtin, []);

  const original = {
    policy: 'builtin',
    rule: 'networkExists',
    action: 'Warn',
    error: { path, type: 'Internal error', reason: 'default/down could not be checked: not synced' },
  };
  const cases: Array<[string, Run]> = [
    ['a pod update', { networks: 'down', operation: 'UPDATE' }],
    ['a template', { networks: 'down', opts: { template: true } }],
    ['a template update', { networks: 'down', operation: 'UPDATE', opts: { template: true } }],
  ];
  for (const [name, run] of cases) {
    const { d } = judge(run);
    t.equal(d.allowed, true, name);
    t.same(d.errors, [], name);
    t.same(d.findings, [original], `${name}: recorded as a finding`);
    t.same(d.warnings, [{ note: { path, text: 'default/down could not be checked: not synced' } }], `${name}: worded as a note`);
  }
});

t.test('what the policy is given', async (t) => {
  const object = pod({ networks: 'a, nope' });
  (object['metadata'] as Record<string, unknown>)['generateName'] = 'p-';
  (object['metadata'] as Record<string, unknown>)['uid'] = 'u-1';
  const { inputs } = judge({ object, namespaceLabels: { team: 'a' }, dryRun: true });
  t.equal(inputs.length, 1);
  const input = inputs[0]!;
  t.equal(input.operation, 'CREATE');
  t.equal(input.namespace, 'default');
  t.same(input.namespaceLabels, { team: 'a' });
  t.same(input.userInfo, { username: 'alice', groups: ['system:authenticated'] });
  t.strictSame(input.pod, { name: 'p', generateName: 'p-', uid: 'u-1' });
  t.equal(input.template, false);
  t.equal(input.dryRun, true);
  t.equal(input.annotationPath, A);
  t.same(
    input.networks.map((n) => n.selection.name),
    ['a', 'nope'],
  );
  t.equal(input.nads, nads);
  t.same(input.builtin, [
    {
      policy: 'builtin',
      rule: 'networkExists',
      action: 'Enforce',
      error: { path: `${A}[1]`, type: 'Not found', value: 'default/nope', reason: 'no such NetworkAttachmentDefinition' },
    },
  ]);
  t.notOk('change' in input, 'no change: no key');

  const plain = judge({ networks: 'a', operation: 'UPDATE' }).inputs[0]!;
  t.equal(plain.operation, 'UPDATE');
  t.same(plain.namespaceLabels, {}, 'no labels known: none');
  t.equal(plain.dryRun, false);
  t.strictSame(plain.pod, { name: 'p' }, 'absent fields are absent, not undefined');
  const heldBefore = new Set(['mac 02:00:00:00:00:01 default/a']);
  t.equal(judge({ networks: 'a', operation: 'UPDATE', opts: { change: { heldBefore } } }).inputs[0]!.change?.heldBefore, heldBefore);
  // The network names the parser rejected are not given to the policy.
  t.same(
    judge({ networks: 'a, Bad' }).inputs[0]!.networks.map((n) => n.selection.name),
    ['a'],
  );
  // dryRun must be exactly true.
  t.equal(judge({ networks: 'a', dryRun: false }).inputs[0]!.dryRun, false);
});

t.test("the pod as the policy sees it: its name, or the request's; a template has neither", async (t) => {
  const unnamed = pod({ networks: 'a' });
  delete (unnamed['metadata'] as Record<string, unknown>)['name'];
  t.strictSame(judge({ object: unnamed, name: 'from-request' }).inputs[0]!.pod, { name: 'from-request' });
  t.strictSame(judge({ object: unnamed }).inputs[0]!.pod, {}, 'no name anywhere: none');
  t.strictSame(judge({ networks: 'a', name: 'from-request' }).inputs[0]!.pod, { name: 'p' }, "the object's name first");
  t.strictSame(
    judge({ object: unnamed, name: 'from-request', opts: { template: true } }).inputs[0]!.pod,
    {},
    "a template: not the request's name",
  );
  const empty = pod({ networks: 'a', name: '' });
  t.strictSame(judge({ object: empty }).inputs[0]!.pod, {}, 'an empty name is none');
  const template = judge({ networks: 'a', opts: { template: true } });
  t.equal(template.inputs[0]!.template, true);
  t.strictSame(template.inputs[0]!.pod, { name: 'p' });
});

t.test('the controller that shares addresses between its pods is given to the policy, not for templates', async (t) => {
  const vmPod = pod({ networks: 'a' });
  (vmPod['metadata'] as Record<string, unknown>)['ownerReferences'] = [
    { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', name: 'vm1', uid: 'vmi-uid', controller: true },
  ];
  const owner = { key: 'vmi-uid', label: 'VM default/vm1', namespace: 'default', kind: 'VirtualMachineInstance', name: 'vm1' };
  t.strictSame(judge({ object: vmPod }).inputs[0]!.pod, { name: 'p', owner });
  t.strictSame(judge({ object: vmPod, opts: { template: true } }).inputs[0]!.pod, { name: 'p' }, 'a template: no owner');
  t.strictSame(
    judge({ object: vmPod, config: { addressSharingOwners: [] } }).inputs[0]!.pod,
    { name: 'p' },
    'no sharing owner configured: none',
  );
});

t.test("the policy's findings: Enforce denies, or only warns when the networks are left alone; claims for pods only", async (t) => {
  const error = { path: `${A}[0]`, type: 'Forbidden' as const, reason: 'not allowed in this namespace' };
  const answer = (): Finding[] => [
    { policy: 'p1', rule: 'allowedNetworks', action: 'Enforce', error },
    { policy: 'p1', rule: 'other', action: 'Warn', error: { ...error, reason: 'warned' } },
    { policy: 'p1', rule: 'audited', action: 'Audit', error: { ...error, reason: 'audited' } },
  ];
  const s = spy(answer);
  const denied = judge({ networks: 'a', policy: s.policy });
  t.equal(denied.d.allowed, false);
  t.equal(denied.d.code, 403);
  t.same(denied.d.errors, [error]);
  t.same(
    denied.d.findings.map((f) => `${f.rule}:${f.action}`),
    ['allowedNetworks:Enforce', 'other:Warn', 'audited:Audit'],
  );
  t.same(
    denied.d.audits.map((f) => f.rule),
    ['audited'],
  );

  const warned = judge({ networks: 'a', policy: s.policy, opts: { warnOnly: true } });
  t.equal(warned.d.allowed, true);
  t.same(
    warned.d.findings.map((f) => `${f.rule}:${f.action}`),
    ['allowedNetworks:Warn', 'other:Warn', 'audited:Audit'],
  );
  t.same(
    fields(warned.d).map((e) => e.reason),
    ['not allowed in this namespace', 'warned'],
  );
  t.same(warned.v.addresses, [CLAIM], 'a pod: the claims are kept');

  const template = judge({ networks: 'a', opts: { template: true } });
  t.same(template.v.addresses, [], 'a template claims nothing');
  t.same(judge({ networks: 'a' }).v.addresses, [CLAIM]);
});

t.test("no pod object to read (a template that is missing): the request's name for a pod, none for a template", async (t) => {
  const nets = readPodNetworks(pod({ networks: 'a' }), POD_LOCATION, 'default', context(nads).config);
  for (const template of [false, true]) {
    const s = spy();
    const v = new Verdict();
    judgeNetworks(v, nets, undefined, { ...request(undefined), name: 'from-request' }, context(nads, { policy: s.policy }), {
      template,
      namespace: 'default',
      warnOnly: false,
    });
    t.strictSame(s.inputs[0]!.pod, template ? {} : { name: 'from-request' }, `template: ${template}`);
    t.equal(v.build().allowed, true);
  }
});

t.test("a certain failure on one element keeps the annotation's warning on another", async (t) => {
  const lookup = nadLookup(nadObject('br', { config: chain({ type: 'bridge', bridge: 'br0' }) }));
  const d = review(
    request(pod({ networks: '[{"name":"br","mac":"03:00:00:00:00:01"},{"name":"br","gatewayz":1}]' })),
    context(lookup, { endpoint: 'validate' }),
  );
  t.same(
    d.errors.map((e) => e.path),
    [`metadata.annotations[${NETWORKS}][0].mac`],
  );
  t.same(
    d.warnings.map((w) => ('field' in w ? w.field.path : w.note.path)),
    [`metadata.annotations[${NETWORKS}][1].gatewayz`],
    "the multicast MAC's own annotation warning gives way to the error; the other element's stays",
  );
});
