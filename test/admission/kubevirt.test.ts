import t from 'tap';
import { renderError } from '../../src/field/index.js';
import { plan, review, type AdmissionRequest, type Decision } from '../../src/admission/index.js';
import { AddressIndex, PolicyEngine, loadPolicyDocuments, policySet } from '../../src/policy/index.js';
import { launcherPod } from '../../src/admission/review-vm.js';
import { renderLauncher } from '../../src/kubevirt/render.js';
import { context, nadLookup, nadObject, request } from './fixtures.js';

const nads = nadLookup(nadObject('blue-net', { namespace: 'apps' }), nadObject('red-net', { namespace: 'apps' }));
const S = 'spec.template.spec';

type Net = { name: string; nad: string; mac?: string };
const vm = (name: string, nets: Net[], runStrategy = 'Always') => ({
  apiVersion: 'kubevirt.io/v1',
  kind: 'VirtualMachine',
  metadata: { name, namespace: 'apps' },
  spec: {
    runStrategy,
    template: {
      spec: {
        domain: {
          devices: {
            interfaces: [
              { name: 'default', masquerade: {} },
              ...nets.map((n) => ({ name: n.name, bridge: {}, ...(n.mac ? { macAddress: n.mac } : {}) })),
            ],
          },
        },
        networks: [{ name: 'default', pod: {} }, ...nets.map((n) => ({ name: n.name, multus: { networkName: n.nad } }))],
      },
    },
  },
});
const VM_RESOURCE = { group: 'kubevirt.io', version: 'v1', resource: 'virtualmachines' };
const VM_KIND = { group: 'kubevirt.io', version: 'v1', kind: 'VirtualMachine' };
const vmRequest = (object: object, opts: { operation?: 'CREATE' | 'UPDATE'; oldObject?: object } = {}): AdmissionRequest =>
  request(object, { namespace: 'apps', resource: VM_RESOURCE, kind: VM_KIND, ...opts });

const uniquePolicy = () => {
  const { policies, errors } = loadPolicyDocuments(
    'apiVersion: netattach.io/v1alpha1\nkind: NetworkAttachmentPolicy\nmetadata: {name: u}\nspec:\n  rules:\n    uniqueAddresses: {mac: Cluster}\n',
    'test',
  );
  if (errors.length) throw new Error(JSON.stringify(errors));
  const index = new AddressIndex();
  return { index, policy: new PolicyEngine({ policies: policySet(policies), index }) };
};
const errs = (d: Decision) => d.errors.map(renderError);

t.test('VM problems are reported at the VM paths', async (t) => {
  const cases: Array<{ name: string; nets: Net[]; allowed: boolean; paths: string[] }> = [
    { name: 'valid', nets: [{ name: 'blue', nad: 'blue-net', mac: '02:00:00:00:00:01' }], allowed: true, paths: [] },
    {
      name: 'missing NAD (second network)',
      nets: [
        { name: 'blue', nad: 'blue-net' },
        { name: 'red', nad: 'missing' },
      ],
      allowed: false,
      paths: [`${S}.networks[2].multus.networkName`],
    },
    {
      name: 'bad MAC',
      nets: [{ name: 'blue', nad: 'blue-net', mac: '02:00:00:aa:bb' }],
      allowed: false,
      paths: [`${S}.domain.devices.interfaces[1].macAddress`],
    },
    {
      name: 'NAD of another namespace, missing',
      nets: [{ name: 'blue', nad: 'other/blue-net' }],
      allowed: false,
      paths: [`${S}.networks[1].multus.networkName`],
    },
  ];
  for (const c of cases) {
    const d = review(vmRequest(vm('vm1', c.nets)), context(nads, { endpoint: 'validate' }));
    t.equal(d.allowed, c.allowed, `${c.name}: ${JSON.stringify(errs(d))}`);
    t.same(
      d.errors.map((e) => e.path),
      c.paths,
      c.name,
    );
    t.same(d.addresses, [], `${c.name}: a VM holds no address`);
    t.same(d.patch, [], `${c.name}: a VM is never patched`);
  }
});

t.test('a VM gets the verdict its launcher pod gets', async (t) => {
  for (const nets of [
    [{ name: 'blue', nad: 'blue-net' }],
    [{ name: 'blue', nad: 'missing' }],
    [{ name: 'blue', nad: 'blue-net', mac: 'zz' }],
  ] as Net[][]) {
    const object = vm('vm1', nets);
    const vmDecision = review(vmRequest(object), context(nads, { endpoint: 'validate' }));
    const rendered = renderLauncher(object, ['spec', 'template', 'spec'], 'apps');
    const pod = { ...launcherPod('virt-launcher-vm1-abcde', rendered), spec: { containers: [{ name: 'compute' }] } };
    const podDecision = review(request(pod, { namespace: 'apps' }), context(nads, { endpoint: 'validate' }));
    t.equal(vmDecision.allowed, podDecision.allowed, JSON.stringify(nets));
    t.equal(vmDecision.errors.length, podDecision.errors.length);
    t.same(
      vmDecision.errors.map((e) => e.reason),
      podDecision.errors.map((e) => e.reason),
      'same reasons, other paths',
    );
  }
});

t.test("uniqueness: another VM's live MAC conflicts; the same VM's launcher pods do not", async (t) => {
  const { index, policy } = uniquePolicy();
  const M = '02:00:00:00:00:0a';
  const owner = (name: string, uid: string) => ({
    key: uid,
    label: `VM apps/${name}`,
    namespace: 'apps',
    kind: 'VirtualMachineInstance',
    name,
  });
  index.setPod({ namespace: 'apps', name: 'virt-launcher-vm1-x', uid: 'p1', owner: owner('vm1', 'vmi-uid-1') }, [
    { kind: 'mac', value: M, network: 'apps/blue-net' },
  ]);
  const ctx = context(nads, { endpoint: 'validate', policy });
  const same = review(vmRequest(vm('vm1', [{ name: 'blue', nad: 'blue-net', mac: M }])), ctx);
  t.ok(same.allowed, `the VM itself (restart, migration): ${JSON.stringify(errs(same))}`);
  const other = review(vmRequest(vm('vm2', [{ name: 'blue', nad: 'blue-net', mac: M.toUpperCase() }])), ctx);
  t.notOk(other.allowed);
  t.equal(other.errors[0]?.path, `${S}.domain.devices.interfaces[1].macAddress`);
  t.match(other.errors[0]?.reason, /VM apps\/vm1/);
  const halted = review(vmRequest(vm('vm2', [{ name: 'blue', nad: 'blue-net', mac: M }], 'Halted')), ctx);
  t.ok(halted.allowed, 'a halted VM is not denied for a conflict that may be gone when it starts');
  t.match(
    halted.warnings.map((w) => ('field' in w ? w.field.path : w.note.path)),
    [`${S}.domain.devices.interfaces[1].macAddress`],
  );
  t.same(index.stats().reservations, 0, 'judging VMs reserved nothing');

  // Hotplug: vm2 without the MAC is fine; adding an interface with vm1's MAC is judged like a new VM.
  const before = vm('vm2', [{ name: 'blue', nad: 'blue-net' }]);
  const after = vm('vm2', [
    { name: 'blue', nad: 'blue-net' },
    { name: 'red', nad: 'red-net', mac: M },
  ]);
  const hot = review(vmRequest(after, { operation: 'UPDATE', oldObject: before }), ctx);
  t.notOk(hot.allowed, 'hotplug with a held MAC is denied');
  t.equal(hot.errors[0]?.path, `${S}.domain.devices.interfaces[2].macAddress`);
  const unchanged = review(vmRequest(after, { operation: 'UPDATE', oldObject: after }), ctx);
  t.ok(unchanged.allowed, 'an update that leaves the networks alone is not blocked (warns)');
  t.ok(unchanged.warnings.length > 0);
});

t.test('other kinds: VMI, pool, replicaset paths; no multus network: allowed unjudged; plan names the NADs', async (t) => {
  const inner = vm('x', [{ name: 'blue', nad: 'missing' }]).spec.template;
  const kinds = [
    {
      resource: { group: 'kubevirt.io', version: 'v1', resource: 'virtualmachineinstances' },
      object: { metadata: { name: 'i' }, spec: inner.spec },
      base: 'spec',
    },
    {
      resource: { group: 'pool.kubevirt.io', version: 'v1alpha1', resource: 'virtualmachinepools' },
      object: { metadata: { name: 'p' }, spec: { virtualMachineTemplate: { spec: { template: inner } } } },
      base: 'spec.virtualMachineTemplate.spec.template.spec',
    },
    {
      resource: { group: 'kubevirt.io', version: 'v1', resource: 'virtualmachineinstancereplicasets' },
      object: { metadata: { name: 'r' }, spec: { template: inner } },
      base: S,
    },
  ];
  for (const k of kinds) {
    const r = request(k.object, { namespace: 'apps', resource: k.resource });
    const d = review(r, context(nads, { endpoint: 'validate' }));
    t.same(
      d.errors.map((e) => e.path),
      [`${k.base}.networks[1].multus.networkName`],
      k.resource.resource,
    );
    t.same(plan(r, context(nads).config).nadRefs, [{ namespace: 'apps', name: 'missing' }]);
  }
  const plain = review(
    vmRequest({ metadata: { name: 'v' }, spec: { template: { spec: { networks: [{ name: 'default', pod: {} }] } } } }),
    context(nads),
  );
  t.ok(plain.allowed);
  t.same(plain.warnings, []);
});

t.test("requestedFields only warns on a VM: KubeVirt's controller, not the user, creates the launcher pod", async (t) => {
  const { policies, errors } = loadPolicyDocuments(
    'apiVersion: netattach.io/v1alpha1\nkind: NetworkAttachmentPolicy\nmetadata: {name: nomac}\nspec:\n  rules:\n    requestedFields: {forbidden: [mac]}\n',
    'test',
  );
  t.same(errors, []);
  const policy = new PolicyEngine({ policies: policySet(policies), index: new AddressIndex() });
  const object = vm('vm1', [{ name: 'blue', nad: 'blue-net', mac: '02:00:00:00:00:01' }]);
  const d = review(vmRequest(object), context(nads, { endpoint: 'validate', policy }));
  t.ok(d.allowed, JSON.stringify(errs(d)));
  const w = d.warnings.find((x) => 'field' in x && x.field.path === `${S}.domain.devices.interfaces[1].macAddress`);
  t.ok(w, 'warned at the VM field');
  t.match(w && 'field' in w ? w.field.reason : '', /may not set mac.*only a warning for a VM/);
  // The same MAC on a pod the user creates is denied: the rule is real.
  const pod = { ...launcherPod('p', renderLauncher(object, ['spec', 'template', 'spec'], 'apps')), spec: { containers: [{ name: 'c' }] } };
  t.notOk(review(request(pod, { namespace: 'apps' }), context(nads, { endpoint: 'validate', policy })).allowed);
});

t.test('binding plugins: the registry decides, table-driven', async (t) => {
  // A VM whose pod network uses a binding plugin (KubeVirt's passt plugin is registered this way).
  const bound = {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachine',
    metadata: { name: 'vm-b', namespace: 'apps' },
    spec: {
      runStrategy: 'Always',
      template: {
        spec: {
          domain: { devices: { interfaces: [{ name: 'default', binding: { name: 'passt' } }] } },
          networks: [{ name: 'default', pod: {} }],
        },
      },
    },
  };
  const withNad = nadLookup(nadObject('netbindingpasst', { namespace: 'apps' }));
  const path = `${S}.domain.devices.interfaces[0].binding.name`;
  const cases: Array<{
    name: string;
    bindings?: Record<string, { networkAttachmentDefinition?: string }>;
    nads: typeof nads;
    allowed: boolean;
    errors: string[];
    warning?: RegExp;
    planned: Array<{ namespace: string; name: string }>;
  }> = [
    { name: 'registry unknown: noted, never denied', nads, allowed: true, errors: [], warning: /not known here/, planned: [] },
    {
      name: 'registered, its NAD missing: denied at the binding',
      bindings: { passt: { networkAttachmentDefinition: 'netbindingpasst' } },
      nads,
      allowed: false,
      errors: [`${path}: Not found: "apps/netbindingpasst": no such NetworkAttachmentDefinition`],
      planned: [{ namespace: 'apps', name: 'netbindingpasst' }],
    },
    {
      name: 'registered, its NAD present: admitted',
      bindings: { passt: { networkAttachmentDefinition: 'netbindingpasst' } },
      nads: withNad,
      allowed: true,
      errors: [],
      planned: [{ namespace: 'apps', name: 'netbindingpasst' }],
    },
    {
      name: 'registered with a namespaced NAD: that namespace',
      bindings: { passt: { networkAttachmentDefinition: 'kubevirt/netbindingpasst' } },
      nads: withNad,
      allowed: false,
      errors: [`${path}: Not found: "kubevirt/netbindingpasst": no such NetworkAttachmentDefinition`],
      planned: [{ namespace: 'kubevirt', name: 'netbindingpasst' }],
    },
    {
      name: 'not registered in a known registry: a warning, not a denial (virt-controller retries)',
      bindings: { other: {} },
      nads,
      allowed: true,
      errors: [],
      warning: /"passt" is not registered/,
      planned: [],
    },
  ];
  for (const c of cases) {
    const ctx = { ...context(c.nads, { endpoint: 'validate' }), ...(c.bindings ? { kubevirtBindings: c.bindings } : {}) };
    const r = vmRequest(bound);
    const d = review(r, ctx);
    t.equal(d.allowed, c.allowed, c.name);
    t.same(errs(d), c.errors, `${c.name}: errors`);
    const texts = d.warnings.map((w) => ('field' in w ? renderError(w.field) : `${w.note.path}: ${w.note.text}`));
    if (c.warning) t.match(texts.join('\n'), c.warning, `${c.name}: warning`);
    if (c.warning)
      t.ok(
        texts.some((x) => x.startsWith(path)),
        `${c.name}: at the binding's path`,
      );
    t.same(plan(r, ctx.config, c.bindings).nadRefs, c.planned, `${c.name}: the NADs planned`);
  }
});

// reviewVm's own decisions, exactly: which operations and objects it judges, when a VM "runs"
// (only then is a conflict certain), what an edit judges again, and how findings of every action
// reach the VM's paths.
t.test('reviewVm: operations, objects, running, edits and actions', async (t) => {
  const { reviewVm } = await import('../../src/admission/review-vm.js');
  const M = '02:00:00:00:00:0b';
  const MAC_PATH = `${S}.domain.devices.interfaces[1].macAddress`;
  const policyWith = (rules: string) => {
    const { policies, errors } = loadPolicyDocuments(
      `apiVersion: netattach.io/v1alpha1\nkind: NetworkAttachmentPolicy\nmetadata: {name: p}\nspec:\n  rules:\n${rules}`,
      'test',
    );
    if (errors.length) throw new Error(JSON.stringify(errors));
    const index = new AddressIndex();
    index.setPod(
      {
        namespace: 'apps',
        name: 'virt-launcher-vm1-x',
        uid: 'p1',
        owner: { key: 'vmi-uid-1', label: 'VM apps/vm1', namespace: 'apps', kind: 'VirtualMachineInstance', name: 'vm1' },
      },
      [{ kind: 'mac', value: M, network: 'apps/blue-net' }],
    );
    return new PolicyEngine({ policies: policySet(policies), index });
  };
  const policy = policyWith('    uniqueAddresses: {mac: Cluster}\n');
  const ctx = context(nads, { endpoint: 'validate', policy });
  const held = (name: string) => vm(name, [{ name: 'blue', nad: 'blue-net', mac: M }]);

  // When a VM runs: runStrategy first, else spec.running; a VMI always runs.
  const withRun = (spec: Record<string, unknown>) => {
    const o = held('vm2') as { spec: Record<string, unknown> };
    delete o.spec['runStrategy'];
    Object.assign(o.spec, spec);
    return o;
  };
  for (const [what, object, denied] of [
    ['runStrategy Manual', withRun({ runStrategy: 'Manual' }), false],
    ['runStrategy RerunOnFailure', withRun({ runStrategy: 'RerunOnFailure' }), true],
    ['running: true', withRun({ running: true }), true],
    ['running: false', withRun({ running: false }), false],
    ['neither', withRun({}), false],
  ] as const) {
    const d = review(vmRequest(object), ctx);
    t.equal(d.allowed, !denied, `${what}: ${JSON.stringify(errs(d))}`);
  }
  const vmi = { metadata: { name: 'vm2', namespace: 'apps' }, spec: held('vm2').spec.template.spec };
  const vmiDecision = review(
    request(vmi, { namespace: 'apps', resource: { group: 'kubevirt.io', version: 'v1', resource: 'virtualmachineinstances' } }),
    ctx,
  );
  t.same(
    vmiDecision.errors.map((e) => e.path),
    ['spec.domain.devices.interfaces[1].macAddress'],
    'a VMI runs: its conflict is denied',
  );
  // A halted VM only softens the uniqueness rule: a missing network is still denied.
  const halted = vm('vm3', [{ name: 'blue', nad: 'missing' }], 'Halted');
  t.same(
    review(vmRequest(halted), ctx).errors.map((e) => e.path),
    [`${S}.networks[1].multus.networkName`],
  );

  // Warnings of both kinds (a field, a note) at the VM's paths.
  const shape = (d: Decision) => d.warnings.map((w) => ('field' in w ? ['field', w.field.path] : ['note', w.note.path]));
  t.same(shape(review(vmRequest(withRun({ runStrategy: 'Halted' })), ctx)), [['field', MAC_PATH]]);
  const vendorNads = nadLookup(
    nadObject('vend', { namespace: 'apps', config: { cniVersion: '1.0.0', name: 'v', plugins: [{ type: 'vendor-cni' }] } }),
  );
  t.same(
    shape(
      review(
        vmRequest(vm('vm4', [{ name: 'blue', nad: 'vend', mac: '02:00:00:00:00:0d' }])),
        context(vendorNads, { endpoint: 'validate' }),
      ),
    ),
    [['note', MAC_PATH]],
  );
  // An object without metadata is judged, not thrown on.
  const bare = { spec: held('vm2').spec };
  t.equal(reviewVm(vmRequest(bare), context(nads, { endpoint: 'validate' }), 'kubevirt.io/virtualmachines').allowed, true);

  // What is not judged.
  t.ok(reviewVm({ ...vmRequest(held('vm2')), operation: 'DELETE', object: null }, ctx, 'kubevirt.io/virtualmachines').allowed, 'DELETE');
  t.ok(reviewVm(vmRequest(held('vm2')), ctx, 'kubevirt.io/virtualmachinesnapshots').allowed, 'a resource that makes no pod');
  const gone = held('vm2') as { metadata: Record<string, unknown> };
  gone.metadata['deletionTimestamp'] = '2026-12-05T00:00:00Z';
  t.same(review(vmRequest(gone), ctx).errors, [], 'a VM being deleted');
  t.same(reviewVm({ ...vmRequest(held('vm2')), object: 'x' as never }, ctx, 'kubevirt.io/virtualmachines').errors.map(renderError), [
    'object: Required value: the request carries no object',
  ]);

  // An UPDATE without an old object, and a CREATE that carries one, are judged whole.
  t.equal(review(vmRequest(held('vm2'), { operation: 'UPDATE', oldObject: null as never }), ctx).allowed, false);
  t.equal(review(vmRequest(held('vm2'), { operation: 'CREATE', oldObject: held('vm2') }), ctx).allowed, false);
  // An edit judges only what it adds: a conflict the VM already had is not judged again.
  const grown = vm('vm2', [
    { name: 'blue', nad: 'blue-net', mac: M },
    { name: 'red', nad: 'red-net', mac: '02:00:00:00:00:0c' },
  ]);
  const edit = review(vmRequest(grown, { operation: 'UPDATE', oldObject: held('vm2') }), ctx);
  t.ok(edit.allowed, `the old conflict is not judged again: ${JSON.stringify(errs(edit))}`);

  // The VM's own launcher pods share its addresses only where the operator lets VMIs share.
  const noSharing = context(nads, { endpoint: 'validate', policy, config: { addressSharingOwners: [] } });
  t.same(
    review(vmRequest(held('vm1')), noSharing).errors.map((e) => e.path),
    [MAC_PATH],
    'without VMI sharing, its own running pod holds the MAC',
  );

  // Warn and Audit findings reach the VM's paths too; an Audit one is in the audit log as well.
  for (const action of ['Warn', 'Audit'] as const) {
    const d = review(
      vmRequest(held('vm2')),
      context(nads, { endpoint: 'validate', policy: policyWith(`    uniqueAddresses: {mac: Cluster, action: ${action}}\n`) }),
    );
    t.ok(d.allowed, action);
    t.same(
      d.findings.map((f) => [f.action, f.error.path]),
      [[action, MAC_PATH]],
      `${action}: the finding`,
    );
    t.same(
      d.audits.map((f) => [f.action, f.error.path]),
      action === 'Audit' ? [[action, MAC_PATH]] : [],
      `${action}: the audit log`,
    );
  }
});
