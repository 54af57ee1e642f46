import t from 'tap';
import { renderError } from '../../src/field/index.js';
import { review, toResponse, type Decision } from '../../src/admission/index.js';
import type { Finding, PolicyEvaluator } from '../../src/policy/types.js';
import { AddressIndex, PolicyEngine, loadPolicyDocuments, policySet } from '../../src/policy/index.js';
import type { NadLookup } from '../../src/nads/types.js';
import { chain, cniWith, context, DEFAULT_NETWORK, nadLookup, nadObject, NETWORKS, pod, request, warningLines } from './fixtures.js';

const ANN = `metadata.annotations[${NETWORKS}]`;
const nads = nadLookup(
  nadObject('sriov-a', { resourceName: 'intel.com/sriov_a', config: cniWith('ips', 'mac') }),
  nadObject('ipoib', { config: cniWith('infinibandGUID') }),
  nadObject('bare', { config: cniWith() }),
  nadObject('ipvlan', { config: chain({ type: 'ipvlan', master: 'eth1' }) }),
  nadObject('onnode', { config: '' }),
  nadObject('other-ns', { namespace: 'team-b', config: cniWith('ips') }),
  nadObject('calico', { namespace: 'kube-system', config: cniWith() }),
);
const rendered = (d: Decision) => d.errors.map(renderError);

t.test('pods without network annotations are allowed untouched', async (t) => {
  for (const endpoint of ['mutate', 'validate'] as const) {
    const d = review(request(pod()), context(nads, { endpoint }));
    t.same(d, { allowed: true, errors: [], warnings: [], audits: [], findings: [], patch: [], addresses: [] });
  }
});

t.test('validation rules, table-driven', async (t) => {
  const cases: Array<{
    name: string;
    networks?: string;
    defaultNetwork?: string;
    code?: 403 | 422;
    errors?: RegExp[];
    warnings?: RegExp[];
  }> = [
    { name: 'simple form, existing NADs', networks: 'sriov-a, team-b/other-ns@net2' },
    { name: 'empty value means no attachments', networks: '' },
    {
      name: 'parser errors deny with 422',
      networks: 'sriov-a,,Bad',
      code: 422,
      errors: [/\]\[1\]: Invalid value: "": empty list item/, /\]\[2\]\.name: Invalid value: "Bad"/],
    },
    {
      name: 'a missing NAD is named with its namespace',
      networks: 'nope',
      code: 403,
      errors: [new RegExp(`^${escapeRegExp(ANN)}\\[0\\]: Not found: "default/nope": no such NetworkAttachmentDefinition$`)],
    },
    {
      name: "namespace of an unqualified name is the pod's; a qualified one is kept",
      networks: 'other-ns, team-b/sriov-a',
      code: 403,
      errors: [/\[0\]: Not found: "default\/other-ns"/, /\[1\]: Not found: "team-b\/sriov-a"/],
    },
    {
      name: 'mac on a chain of known plugins none of which reads a MAC: denied',
      networks: '[{"name":"ipvlan","mac":"02:00:00:00:00:01"}]',
      code: 403,
      errors: [
        /^metadata\.annotations\[k8s\.v1\.cni\.cncf\.io\/networks\]\[0\]\.mac: Forbidden: default\/ipvlan would ignore it: no plugin of its chain \(ipvlan\) reads a MAC \(MAC= in CNI_ARGS/,
      ],
    },
    {
      name: 'mac on a third-party plugin not declaring the capability: admitted, with a warning naming the plugin',
      networks: '[{"name":"bare","mac":"02:00:00:00:00:01"}]',
      warnings: [/\[0\]\.mac: may be ignored: netattach does not know plugin "vendor-cni"/],
    },
    {
      name: 'keys that travel only as runtimeConfig are denied where no plugin declares the capability; ips only warned (CNI_ARGS)',
      networks:
        '[{"name":"bare","ips":["10.1.0.5/24"],"infiniband-guid":"00:11:22:33:44:55:66:77","portMappings":[{"hostPort":80,"containerPort":80}],"bandwidth":{"ingressRate":1000,"ingressBurst":100}}]',
      code: 403,
      errors: [
        /\.infiniband-guid: Forbidden: .*"infinibandGUID"/,
        /\.portMappings: Forbidden: .*"portMappings"/,
        /\.bandwidth: Forbidden: .*"bandwidth"/,
      ],
      warnings: [/\.ips: may be ignored: netattach does not know plugin "vendor-cni"/],
    },
    {
      name: 'declared capabilities pass',
      networks:
        '[{"name":"sriov-a","mac":"02:00:00:00:00:01","ips":["10.1.0.5/24"]},{"name":"ipoib","infiniband-guid":"00:11:22:33:44:55:66:77"}]',
    },
    {
      name: 'a config read on the node: capabilities unchecked, with a warning',
      networks: '[{"name":"onnode","mac":"02:00:00:00:00:01"}]',
      warnings: [/\[0\]\.mac: "mac" unchecked: default\/onnode has no readable CNI config/],
    },
    {
      name: 'parser errors and rule violations together: 403, object errors listed first',
      networks: '[{"name":"ipvlan","mac":"02:00:00:00:00:01"},{"name":"x","interface":"a/b"}]',
      code: 403,
      errors: [/\[1\]\.interface: Invalid value/, /\[0\]\.mac: Forbidden/, /\[1\]: Not found/],
    },
    { name: "default network resolves in Multus's namespace", defaultNetwork: 'calico' },
    {
      name: 'a missing default network is named',
      defaultNetwork: 'flannel',
      code: 403,
      errors: [/^metadata\.annotations\[v1\.multus-cni\.io\/default-network\]\[0\]: Not found: "kube-system\/flannel"/],
    },
  ];
  for (const c of cases) {
    for (const endpoint of ['mutate', 'validate'] as const) {
      const p = pod({
        ...(c.networks !== undefined ? { networks: c.networks } : {}),
        ...(c.defaultNetwork ? { defaultNetwork: c.defaultNetwork } : {}),
      });
      const d = review(request(p), context(nads, { endpoint }));
      const label = `${c.name} (${endpoint})`;
      t.equal(d.allowed, c.code === undefined, `${label}: allowed`);
      t.equal(d.code, c.code, `${label}: code`);
      const errs = rendered(d);
      t.equal(errs.length, c.errors?.length ?? 0, `${label}: error count ${JSON.stringify(errs)}`);
      (c.errors ?? []).forEach((re, i) => t.match(errs[i], re, `${label}: error ${i}`));
      t.equal(d.warnings.length, c.warnings?.length ?? 0, `${label}: warning count ${JSON.stringify(d.warnings)}`);
      (c.warnings ?? []).forEach((re, i) => t.match(warningLines(d)[i], re, `${label}: warning ${i}`));
    }
  }
});

t.test('an unavailable lookup denies a Pod CREATE with 503 on both endpoints, retryable, policies cannot re-grade it', async (t) => {
  const flaky = (ns: string, name: string): NadLookup =>
    name === 'sriov-a' ? { status: 'unavailable', reason: 'API server unreachable' } : nads(ns, name);
  const lenient: PolicyEvaluator = {
    evaluate: (input) => ({ findings: input.builtin.map((f) => ({ ...f, action: 'Warn', policy: 'gitops' })), addresses: [] }),
  };
  for (const endpoint of ['mutate', 'validate'] as const) {
    for (const policy of [undefined, lenient]) {
      const label = `${endpoint}${policy ? ' (networkExists re-graded to Warn)' : ''}`;
      const d = review(request(pod({ networks: 'sriov-a' })), context(flaky, { endpoint, ...(policy ? { policy } : {}) }));
      t.notOk(d.allowed, label);
      t.equal(d.code, 503, label);
      t.same(
        rendered(d),
        [
          `${ANN}[0]: Internal error: default/sriov-a could not be looked up (API server unreachable); retry: admitted now, the pod would start without the device resources its networks need`,
        ],
        label,
      );
      t.same(d.warnings, [], label);
      t.match(d.findings, [{ policy: 'builtin', rule: 'networkExists', action: 'Enforce' }], label);
      t.same(d.patch, [], label);
      t.same(d.addresses, [], label);
      const wire = toResponse('admission.k8s.io/v1', 'u1', d, endpoint).response!;
      t.match(wire.status, { code: 503, reason: 'ServiceUnavailable' }, label);
      t.match(wire.status!.message, /default\/sriov-a.*API server unreachable.*retry.*device resources/, label);
    }
  }
  // With another error, that error decides the code: a retry alone would not help.
  const both = review(request(pod({ networks: 'sriov-a,nope' })), context(flaky));
  t.equal(both.code, 403);
  t.equal(rendered(both).length, 2);
});

t.test('an unavailable lookup only warns for a Pod UPDATE and for pod templates', async (t) => {
  const unavailable = (): NadLookup => ({ status: 'unavailable', reason: 'API server unreachable' });
  const ann = { [NETWORKS]: 'sriov-a' };
  const deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'd', namespace: 'default' },
    spec: { template: { metadata: { annotations: ann }, spec: { containers: [{ name: 'c', image: 'x' }] } } },
  };
  const create = review(
    request(deployment, {
      kind: { group: 'apps', version: 'v1', kind: 'Deployment' },
      resource: { group: 'apps', version: 'v1', resource: 'deployments' },
    }),
    context(unavailable, { endpoint: 'validate' }),
  );
  t.ok(create.allowed, 'template CREATE');
  t.match(warningLines(create), [/\[0\]: default\/sriov-a could not be checked: API server/]);
  t.match(create.findings, [{ rule: 'networkExists', action: 'Warn' }]);
  const p = pod({ networks: 'sriov-a' });
  const update = review(request(p, { operation: 'UPDATE', oldObject: p }), context(unavailable, { endpoint: 'validate' }));
  t.ok(update.allowed, 'pod UPDATE (networks unchanged, not looked up again)');
});

t.test('policy re-grades built-in findings: Warn warns, Audit only records', async (t) => {
  const regrade = (action: Finding['action']): PolicyEvaluator => ({
    evaluate: (input) => ({ findings: input.builtin.map((f) => ({ ...f, action, policy: 'lenient' })), addresses: [] }),
  });
  const p = pod({ networks: 'nope' });
  const warn = review(request(p), context(nads, { policy: regrade('Warn') }));
  t.ok(warn.allowed);
  t.match(warningLines(warn), [/\[0\]: Not found: "default\/nope"/]);
  t.ok(warningLines(warn).every((w) => w.length <= 256 && !/^warning/i.test(w)));
  const audit = review(request(p), context(nads, { policy: regrade('Audit') }));
  t.ok(audit.allowed);
  t.same(audit.warnings, []);
  t.equal(audit.audits.length, 1);
  t.equal(audit.findings[0]?.policy, 'lenient');
});

t.test('the policy sees the pod, its namespace and the built-in findings; its claims are returned', async (t) => {
  let seen: Parameters<PolicyEvaluator['evaluate']>[0] | undefined;
  const policy: PolicyEvaluator = {
    evaluate: (input) => {
      seen = input;
      return {
        findings: [
          ...input.builtin,
          {
            policy: 'p1',
            rule: 'allowedNetworks',
            action: 'Enforce',
            error: { path: input.networks[0]!.path, type: 'Forbidden', reason: 'not allowed in this namespace' },
          },
        ],
        addresses: [
          { kind: 'mac', value: '02:00:00:00:00:01', scope: 'network:default/sriov-a', pod: { namespace: 'default', name: 'p' } },
        ],
      };
    },
  };
  const p = pod({ networks: '[{"name":"sriov-a","mac":"02:00:00:00:00:01"}]' });
  const denied = review(request(p), { ...context(nads, { policy }), namespaceLabels: { team: 'a' } });
  t.equal(seen?.namespace, 'default');
  t.same(seen?.namespaceLabels, { team: 'a' });
  t.equal(seen?.template, false);
  t.equal(seen?.annotationPath, ANN);
  t.same(seen?.pod, { name: 'p' });
  t.equal(seen?.networks.length, 1);
  t.same(seen?.builtin, []);
  t.notOk(denied.allowed);
  t.equal(denied.code, 403);
  t.same(rendered(denied), [`${ANN}[0]: Forbidden: not allowed in this namespace`]);
  t.same(denied.addresses, [], 'no claims when denied');

  const allowing: PolicyEvaluator = { evaluate: (input) => ({ ...policy.evaluate(input), findings: [] }) };
  const ok = review(request(p), context(nads, { policy: allowing }));
  t.equal(ok.addresses.length, 1);
});

t.test('with the real policy engine, the claims are the addresses the pod asks for', async (t) => {
  // Derived from the pod and the policy (uniqueAddresses: mac per network), not from a mock.
  const { policies, errors } = loadPolicyDocuments(
    'apiVersion: netattach.io/v1alpha1\nkind: NetworkAttachmentPolicy\nmetadata: {name: u}\nspec:\n  rules:\n    uniqueAddresses: {mac: Network}\n',
    'test',
  );
  t.same(errors, []);
  const policy = new PolicyEngine({ policies: policySet(policies), index: new AddressIndex() });
  const p = pod({ networks: '[{"name":"sriov-a","mac":"02-00-00-00-00-0A"},{"name":"sriov-a"}]' });
  const d = review(request(p), context(nads, { policy }));
  t.ok(d.allowed, JSON.stringify(rendered(d)));
  t.match(
    d.addresses,
    [{ kind: 'mac', value: '02:00:00:00:00:0a', scope: 'network:default/sriov-a', pod: { namespace: 'default', name: 'p' } }],
    'the canonical MAC on its network',
  );
  t.equal(d.addresses.length, 1, 'one claim: the second element asks for no address');
});

t.test('pod UPDATE: a changed networks annotation is judged like a new pod (hotplug); anything else is allowed unjudged', async (t) => {
  const before = pod({ networks: 'sriov-a' });
  const cases: Array<{ name: string; after: Record<string, unknown>; errors?: string[]; warnings?: RegExp[]; code?: number }> = [
    { name: 'a network without a device added (bridge hotplug)', after: pod({ networks: 'sriov-a, ipoib' }) },
    { name: 'networks removed (hotunplug)', after: pod() },
    {
      name: 'a second attachment needing a device the pod does not request',
      after: pod({ networks: 'sriov-a, sriov-a' }),
      code: 422,
      errors: [
        `${ANN}[1]: Forbidden: default/sriov-a needs device resource "intel.com/sriov_a" (2 for the pod's networks; its containers request 0), and a running pod's resources cannot grow: create the pod anew with this network (KubeVirt migrates the VM)`,
      ],
    },
    {
      name: 'a device the containers already request is fine',
      after: pod({
        networks: 'sriov-a, sriov-a',
        containers: [{ name: 'app', resources: { requests: { 'intel.com/sriov_a': '2' }, limits: { 'intel.com/sriov_a': '2' } } }],
      }),
    },
    {
      name: 'a missing NAD added',
      after: pod({ networks: 'sriov-a, nope' }),
      code: 403,
      errors: [`${ANN}[1]: Not found: "default/nope": no such NetworkAttachmentDefinition`],
    },
    {
      name: 'a malformed value',
      after: pod({ networks: '[{"name":"sriov-a"},{"name":"ipoib","mac":"zz"}]' }),
      code: 422,
      errors: [
        `${ANN}[1].mac: Invalid value: "zz": must be a 6-byte Ethernet MAC (02:23:45:67:89:01, 02-23-45-67-89-01 or 0223.4567.8901) or a 20-byte IPoIB address in the same forms`,
      ],
    },
    {
      name: 'a MAC the chain would ignore',
      after: pod({ networks: '[{"name":"ipvlan","mac":"02:00:00:00:00:09"}]' }),
      code: 403,
      errors: [
        `${ANN}[0].mac: Forbidden: default/ipvlan would ignore it: no plugin of its chain (ipvlan) reads a MAC (MAC= in CNI_ARGS, or runtimeConfig "mac" where the capability is declared)`,
      ],
    },
    {
      name: 'the default network changed: no effect on a running pod, a warning',
      after: pod({ networks: 'sriov-a', defaultNetwork: 'calico' }),
      warnings: [/^metadata\.annotations\[v1\.multus-cni\.io\/default-network\]: has no effect on a running pod/],
    },
    {
      name: 'labels changed',
      after: { ...pod({ networks: 'sriov-a' }), metadata: { name: 'p', labels: { a: 'b' }, annotations: { [NETWORKS]: 'sriov-a' } } },
    },
  ];
  for (const c of cases) {
    const d = review(request(c.after, { operation: 'UPDATE', oldObject: before }), context(nads, { endpoint: 'validate' }));
    t.equal(d.allowed, !c.errors, `${c.name}: allowed`);
    t.same(rendered(d), c.errors ?? [], `${c.name}: errors`);
    if (c.code) t.equal(d.code, c.code, `${c.name}: code`);
    t.same(d.patch, [], `${c.name}: an update is never mutated`);
    const lines = warningLines(d);
    t.equal(lines.length, c.warnings?.length ?? 0, `${c.name}: warnings ${JSON.stringify(lines)}`);
    c.warnings?.forEach((w, i) => t.match(lines[i], w, `${c.name}: warning ${i}`));
  }
});

t.test('pod UPDATE with --immutable-networks: every change of the network annotations is refused', async (t) => {
  const before = pod({ networks: 'sriov-a' });
  const cases: Array<[string, Record<string, unknown>, string[]]> = [
    ['networks changed', pod({ networks: 'sriov-a, ipoib' }), [NETWORKS]],
    ['networks removed', pod(), [NETWORKS]],
    ['default network added', pod({ networks: 'sriov-a', defaultNetwork: 'calico' }), [DEFAULT_NETWORK]],
    [
      'labels changed',
      { ...pod({ networks: 'sriov-a' }), metadata: { name: 'p', labels: { a: 'b' }, annotations: { [NETWORKS]: 'sriov-a' } } },
      [],
    ],
  ];
  for (const [name, after, changed] of cases) {
    const d = review(
      request(after, { operation: 'UPDATE', oldObject: before }),
      context(nads, { endpoint: 'validate', config: { immutableNetworks: true } }),
    );
    t.equal(d.allowed, changed.length === 0, name);
    t.same(
      rendered(d),
      changed.map(
        (k) =>
          `metadata.annotations[${k}]: Forbidden: may not be changed after the pod is created (netattach runs with --immutable-networks)`,
      ),
      name,
    );
    if (changed.length) t.equal(d.code, 422);
  }
  // A pod admitted before netattach, with a NAD since deleted, can still get its finalizers removed.
  const legacy = pod({ networks: 'nope,,' });
  const d = review(request(legacy, { operation: 'UPDATE', oldObject: legacy }), context(nads));
  t.ok(d.allowed);
});

t.test('DELETE, CONNECT and subresources of pods are allowed without looking', async (t) => {
  const bad = pod({ networks: 'nope' });
  t.ok(review(request(null, { operation: 'DELETE', oldObject: bad }), context(nads)).allowed);
  t.ok(review(request(bad, { operation: 'CONNECT' }), context(nads)).allowed);
  t.ok(review(request(bad, { subResource: 'status', operation: 'UPDATE', oldObject: pod() }), context(nads)).allowed);
  t.ok(review(request(bad, { subResource: 'ephemeralcontainers', operation: 'UPDATE', oldObject: pod() }), context(nads)).allowed);
});

t.test('malformed pods get field errors, not crashes', async (t) => {
  const cases: Array<[string, unknown, RegExp]> = [
    ['no object', null, /^object: Required value/],
    ['metadata not an object', { metadata: 'x', spec: {} }, /^metadata: Invalid value: "x": must be an object$/],
    [
      'annotations a list',
      { metadata: { annotations: ['a'] } },
      /^metadata\.annotations: Invalid value: \["a"\]: must be a map of strings$/,
    ],
    [
      'annotation a number',
      { metadata: { annotations: { [NETWORKS]: 5 } } },
      /^metadata\.annotations\[k8s\.v1\.cni\.cncf\.io\/networks\]: Invalid value: 5: must be a string$/,
    ],
    [
      'no containers',
      { metadata: { annotations: { [NETWORKS]: 'sriov-a' } }, spec: {} },
      /^spec\.containers: Required value: resources for the pod's networks need a container \(intel\.com\/sriov_a\)$/,
    ],
    [
      'containers not objects',
      { metadata: { annotations: { [NETWORKS]: 'sriov-a' } }, spec: { containers: [1] } },
      /^spec\.containers: Invalid value/,
    ],
  ];
  for (const [name, object, want] of cases) {
    for (const endpoint of ['mutate', 'validate'] as const) {
      const d = review(request(object), context(nads, { endpoint }));
      t.notOk(d.allowed, name);
      t.equal(d.code, 422, name);
      t.match(rendered(d)[0], want, `${name} (${endpoint})`);
    }
  }
});

t.test('/mutate denies exactly what /validate denies', async (t) => {
  // Each sample's outcome is written down from the rules (docs/admission.md), not taken from
  // either endpoint: comparing the two endpoints with each other alone would pass if both were wrong.
  // Broken-build recipe: answer object errors with 403 in src/admission/decision.ts (`this.invalid.length > 0 ? 403`).
  const samples: Array<[string, ReturnType<typeof pod>, number | undefined, string[]]> = [
    ['missing NAD', pod({ networks: 'nope' }), 403, [`${ANN}[0]: Not found: "default/nope"`]],
    ['empty items', pod({ networks: 'sriov-a,,' }), 422, [`${ANN}[1]: Invalid value`, `${ANN}[2]: Invalid value`]],
    ['a MAC no plugin of the chain reads', pod({ networks: '[{"name":"ipvlan","mac":"02:00:00:00:00:01"}]' }), 403, [`${ANN}[0].mac: `]],
    [
      'fractional device count',
      pod({ networks: 'sriov-a', containers: [{ name: 'a', resources: { limits: { 'intel.com/sriov_a': '500m' } } }] }),
      422,
      ['spec.containers[0].resources.limits[intel.com/sriov_a]: Invalid value: "500m"'],
    ],
    ['valid', pod({ networks: 'sriov-a' }), undefined, []],
  ];
  for (const [name, p, code, errors] of samples) {
    for (const endpoint of ['mutate', 'validate'] as const) {
      const d = review(request(p), context(nads, { endpoint }));
      t.equal(d.allowed, code === undefined, `${name} (${endpoint}): allowed`);
      t.equal(d.code, code, `${name} (${endpoint}): code`);
      t.equal(d.errors.length, errors.length, `${name} (${endpoint}): ${JSON.stringify(rendered(d))}`);
      errors.forEach((e, i) => t.ok(rendered(d)[i]?.startsWith(e), `${name} (${endpoint}): error ${i} starts with ${e}`));
      if (endpoint === 'validate') {
        t.same(d.patch, [], 'validate never patches');
        t.equal(toResponse('admission.k8s.io/v1', 'u', d, 'validate').response!.patch, undefined);
      }
    }
  }
});

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

t.test('pod UPDATE: annotations missing on either side count as unset, not as a crash', async (t) => {
  const bare = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'default' }, spec: { containers: [{ name: 'app' }] } };
  const added = review(
    request(pod({ networks: 'nope' }), { operation: 'UPDATE', oldObject: bare }),
    context(nads, { endpoint: 'validate' }),
  );
  t.equal(added.code, 403);
  t.same(rendered(added), [`${ANN}[0]: Not found: "default/nope": no such NetworkAttachmentDefinition`]);
  const removed = review(
    request(bare, { operation: 'UPDATE', oldObject: pod({ networks: 'nope' }) }),
    context(nads, { endpoint: 'validate' }),
  );
  t.same(removed, { allowed: true, errors: [], warnings: [], audits: [], findings: [], patch: [], addresses: [] });
});

t.test('the hotplug judgement hands the policy the namespace and the addresses held before', async (t) => {
  let seen: Parameters<PolicyEvaluator['evaluate']>[0] | undefined;
  const policy: PolicyEvaluator = {
    evaluate: (input) => {
      seen = input;
      return { findings: input.builtin, addresses: [] };
    },
  };
  const before = pod({ networks: '[{"name":"sriov-a","mac":"02:00:00:00:00:01"}]' });
  const after = pod({ networks: '[{"name":"sriov-a","mac":"02:00:00:00:00:01"},{"name":"ipoib"}]' });
  const d = review(request(after, { operation: 'UPDATE', oldObject: before }), context(nads, { endpoint: 'validate', policy }));
  t.ok(d.allowed, JSON.stringify(rendered(d)));
  t.equal(seen?.namespace, 'default');
  t.equal(seen?.template, false);
  t.equal(seen?.networks.length, 2);
  t.same([...(seen?.change?.heldBefore ?? ['no change'])], ['mac 02:00:00:00:00:01 default/sriov-a']);
});

t.test('a Pod is mutated only on CREATE, by the networks it selects, whatever oldObject says', async (t) => {
  const p = pod({ networks: 'sriov-a' });
  const created = review(request(p), context(nads));
  t.ok(created.patch.length > 0, 'the device resources are injected');
  // An oldObject on CREATE (not sent by the apiserver) does not turn it into a network change.
  const withOld = review(request(p, { oldObject: p }), context(nads));
  t.same(withOld, created);
  // An UPDATE without an oldObject is judged like a new pod but never patched.
  const update = review(request(p, { operation: 'UPDATE' }), context(nads));
  t.same(update, { allowed: true, errors: [], warnings: [], audits: [], findings: [], patch: [], addresses: [] });
  // No networks: a networkClaims annotation alone plans nothing.
  const claimsOnly = pod({ annotations: { 'netattach.io/networkClaims': 'sriov-a=c' } });
  t.same(review(request(claimsOnly), context(nads)), {
    allowed: true,
    errors: [],
    warnings: [],
    audits: [],
    findings: [],
    patch: [],
    addresses: [],
  });
});

t.test('a bug in a lookup becomes a 500 decision, not a thrown exception', async (t) => {
  const broken = (): NadLookup => {
    throw new TypeError('lookup exploded');
  };
  const d = review(request(pod({ networks: 'sriov-a' })), context(broken));
  t.equal(d.allowed, false);
  t.equal(d.code, 500);
  t.same(rendered(d), ['request: Internal error: netattach failed to review the request (TypeError: lookup exploded)']);
  t.same(d.patch, []);
});

t.test('a Pod request without an object is named as such', async (t) => {
  t.same(rendered(review(request(null), context(nads))), ['object: Required value: the request carries no pod']);
});

t.test('a chart repeating a mistake on every element gets one warning for it, naming the elements', async (t) => {
  // `gateway` is no selection key (default-route is): Multus ignores it, on each element alike.
  const networks = JSON.stringify([
    { name: 'ipvlan', gateway: '10.0.0.1' },
    { name: 'ipvlan', interface: 'b', gateway: '10.0.0.1' },
    { name: 'ipvlan', interface: 'c', gateway: '10.0.0.1' },
  ]);
  for (const endpoint of ['mutate', 'validate'] as const) {
    const d = review(request(pod({ networks })), context(nads, { endpoint }));
    t.equal(d.allowed, true);
    const gateway = warningLines(d).filter((w) => w.includes('.gateway'));
    t.equal(gateway.length, 1, `${endpoint}: one warning for the cause, not three: ${JSON.stringify(gateway)}`);
    t.match(gateway[0], /\[0\]\.gateway \(and \[1\], \[2\]\): Invalid value: "10\.0\.0\.1": unknown key, ignored/);
    const wire = toResponse('admission.k8s.io/v1', 'u', d, endpoint).response!.warnings ?? [];
    t.equal(wire.filter((w) => w.includes('.gateway')).length, 1, 'the response carries the merged one');
  }
});
