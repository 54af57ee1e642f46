// What is kept of a KubeVirt object's binding plugin registry, and which registry KubeVirt uses
// (src/kubevirt/bindings.ts): table-driven, each bound on both sides.
import t from 'tap';
import {
  BINDING_LIMITS,
  chooseRegistry,
  kubeVirtSummary,
  registryFromManifests,
  type KubeVirtSummary,
} from '../../src/kubevirt/bindings.js';

const kubevirt = (binding: unknown, o: { name?: string; namespace?: string; phase?: string; deleting?: boolean } = {}) => ({
  apiVersion: 'kubevirt.io/v1',
  kind: 'KubeVirt',
  metadata: {
    name: o.name ?? 'kubevirt',
    namespace: o.namespace ?? 'kubevirt',
    ...(o.deleting ? { deletionTimestamp: '2026-12-05T00:00:00Z' } : {}),
  },
  spec: { configuration: { network: { binding } } },
  ...(o.phase === undefined ? { status: { phase: 'Deployed' } } : o.phase === '' ? {} : { status: { phase: o.phase } }),
});
const plugins = (n: number, nad = (i: number) => `ns/nad-${i}`) =>
  Object.fromEntries(Array.from({ length: n }, (_, i) => [`p${i}`, { networkAttachmentDefinition: nad(i), sidecarImage: 'x' }]));

t.test('one KubeVirt object: what is kept', async (t) => {
  const cases: Array<{ name: string; object: unknown; plugins?: Record<string, unknown>; problem?: RegExp; deployed?: boolean }> = [
    {
      name: 'the fields virt-controller reads, nothing else',
      object: kubevirt({ passt: { networkAttachmentDefinition: 'default/netbindingpasst', sidecarImage: 'quay.io/x', migration: {} } }),
      plugins: { passt: { networkAttachmentDefinition: 'default/netbindingpasst' } },
    },
    {
      name: 'a plugin without a NAD',
      object: kubevirt({ managedtap: { domainAttachmentType: 'managedTap' } }),
      plugins: { managedtap: {} },
    },
    { name: 'no network configuration: an empty registry', object: { ...kubevirt(undefined), spec: {} }, plugins: {} },
    { name: 'binding: null', object: kubevirt(null), plugins: {} },
    { name: 'binding not a map', object: kubevirt(['x']), problem: /not a map/ },
    {
      name: `${BINDING_LIMITS.pluginsPerObject} plugins: kept`,
      object: kubevirt(plugins(BINDING_LIMITS.pluginsPerObject)),
      plugins: Object.fromEntries(
        Object.entries(plugins(BINDING_LIMITS.pluginsPerObject)).map(([k, v]) => [
          k,
          { networkAttachmentDefinition: v.networkAttachmentDefinition },
        ]),
      ),
    },
    {
      name: `${BINDING_LIMITS.pluginsPerObject + 1} plugins: unknown`,
      object: kubevirt(plugins(BINDING_LIMITS.pluginsPerObject + 1)),
      problem: /more than 64/,
    },
    {
      name: 'a plugin name at the bound',
      object: kubevirt({ ['n'.repeat(BINDING_LIMITS.pluginName)]: {} }),
      plugins: { ['n'.repeat(BINDING_LIMITS.pluginName)]: {} },
    },
    {
      name: 'a plugin name past the bound',
      object: kubevirt({ ['n'.repeat(BINDING_LIMITS.pluginName + 1)]: {} }),
      problem: /name of 254 characters/,
    },
    {
      name: 'a NAD reference at the bound',
      object: kubevirt(plugins(1, () => 'x'.repeat(BINDING_LIMITS.nadReference))),
      plugins: { p0: { networkAttachmentDefinition: 'x'.repeat(BINDING_LIMITS.nadReference) } },
    },
    {
      name: 'a NAD reference past the bound',
      object: kubevirt(plugins(1, () => 'x'.repeat(BINDING_LIMITS.nadReference + 1))),
      problem: /318 characters/,
    },
    { name: 'a NAD reference not a string', object: kubevirt({ p: { networkAttachmentDefinition: 7 } }), problem: /not a string/ },
    { name: 'no status.phase: not deployed', object: kubevirt({}, { phase: '' }), plugins: {}, deployed: false },
    { name: 'being deleted: not deployed', object: kubevirt({}, { deleting: true }), plugins: {}, deployed: false },
  ];
  for (const c of cases) {
    const s = kubeVirtSummary(c.object);
    t.ok(s, c.name);
    if (c.plugins) t.same({ ...s!.plugins }, c.plugins, c.name);
    else t.match(s!.problem, c.problem!, c.name);
    t.equal(s!.deployed, c.deployed ?? true, `${c.name}: deployed`);
  }
  t.equal(kubeVirtSummary({ kind: 'KubeVirt', metadata: {} }), undefined, 'no name: not kept');
  t.equal(kubeVirtSummary(null), undefined);
  const proto = kubeVirtSummary(
    JSON.parse(
      '{"metadata":{"name":"k"},"status":{"phase":"Deployed"},"spec":{"configuration":{"network":{"binding":{"__proto__":{"networkAttachmentDefinition":"p"}}}}}}',
    ),
  );
  t.ok(Object.hasOwn(proto!.plugins!, '__proto__'), 'a plugin called __proto__ is kept as a plugin');
  t.equal(Object.getPrototypeOf(proto!.plugins), Object.prototype, 'and does not become the prototype');
});

t.test('which registry KubeVirt uses', async (t) => {
  const s = (
    name: string,
    p: Record<string, { networkAttachmentDefinition?: string }> | undefined,
    deployed = true,
    namespace = 'kubevirt',
  ): KubeVirtSummary => ({
    namespace,
    name,
    deployed,
    ...(p ? { plugins: p } : { problem: 'too big' }),
  });
  const a = { passt: { networkAttachmentDefinition: 'x' } };
  const cases: Array<{ name: string; objects: KubeVirtSummary[]; overflow?: number; known: boolean; reason?: RegExp; from?: string }> = [
    { name: 'none', objects: [], known: false, reason: /no deployed KubeVirt/ },
    { name: 'one deployed', objects: [s('kubevirt', a)], known: true, from: 'kubevirt/kubevirt' },
    { name: 'one deployed, one not yet', objects: [s('kubevirt', a), s('other', {}, false)], known: true, from: 'kubevirt/kubevirt' },
    { name: 'only undeployed ones', objects: [s('other', a, false)], known: false, reason: /no deployed/ },
    {
      name: 'two deployed, same registry',
      objects: [s('a', a), s('b', { ...a }, true, 'other')],
      known: true,
      from: 'kubevirt/a, other/b',
    },
    {
      name: 'two deployed, different registries',
      objects: [s('a', a), s('b', {}, true, 'other')],
      known: false,
      reason: /2 deployed KubeVirt objects with different/,
    },
    { name: 'the deployed one past its bounds', objects: [s('kubevirt', undefined)], known: false, reason: /kubevirt\/kubevirt: too big/ },
    {
      name: 'an undeployed one past its bounds does not matter',
      objects: [s('kubevirt', a), s('x', undefined, false)],
      known: true,
      from: 'kubevirt/kubevirt',
    },
    { name: 'objects not kept', objects: [s('kubevirt', a)], overflow: 16, known: false, reason: /more than 16 KubeVirt objects/ },
  ];
  for (const c of cases) {
    const r = chooseRegistry(c.objects, c.overflow);
    t.equal(r.known, c.known, c.name);
    if (r.known) t.equal(r.from, c.from, `${c.name}: from`);
    else t.match(r.reason, c.reason!, `${c.name}: reason`);
  }
});

t.test('netattach check: the registry of the KubeVirt objects among the manifests', async (t) => {
  t.equal(registryFromManifests([{ kind: 'Pod', apiVersion: 'v1' }], 'default'), undefined, 'none among them: not known');
  const manifest = { ...kubevirt({ passt: { networkAttachmentDefinition: 'x' } }, { phase: '' }) };
  const r = registryFromManifests([manifest], 'default');
  t.ok(r?.known, 'a manifest is what will be deployed: no status needed');
  t.same(r?.known ? { ...r.plugins } : undefined, { passt: { networkAttachmentDefinition: 'x' } });
  const many = Array.from({ length: BINDING_LIMITS.objects + 1 }, (_, i) => kubevirt({}, { name: `k${i}` }));
  t.equal(registryFromManifests(many.slice(0, BINDING_LIMITS.objects), 'default')?.known, true, `${BINDING_LIMITS.objects} objects: read`);
  const over = registryFromManifests(many, 'default');
  t.equal(over?.known, false, `${BINDING_LIMITS.objects + 1}: unknown`);
});
