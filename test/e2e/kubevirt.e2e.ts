/**
 * End-to-end: KubeVirt VMs judged at `kubectl apply` (issue 42). KubeVirt's CRDs are stood in by
 * minimal ones written here (preserve-unknown-fields schemas; nothing of KubeVirt's is committed),
 * so the real kube-apiserver sends VMs to kubevirt.netattach.io as it would in a KubeVirt cluster.
 * A VM on a missing NAD is denied at its own field; a valid VM is admitted; and the launcher pod
 * KubeVirt would create for each (the annotations src/kubevirt/render.ts renders, checked against
 * KubeVirt's own test vectors in test/kubevirt) gets the same verdict from pods.netattach.io.
 * A KubeVirt CR registers binding plugins: netattach watches it, and a VM whose plugin's NAD is
 * missing is denied at its binding; one on a plugin KubeVirt does not know only warns.
 */
import t from 'tap';
import { run, startE2e, eventually, type E2e } from './lib/env.js';
import { MAIN } from './lib/netattach.js';
import { nad, namespace, podSpec } from './lib/objects.js';
import { renderLauncher } from '../../src/kubevirt/render.js';
import type { BindingPlugins } from '../../src/kubevirt/bindings.js';

type Obj = Record<string, unknown>;
const NS = 'e2e-kubevirt';
let e: E2e;

function crd(group: string, kind: string, plural: string, versions: string[]): Obj {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { kind, plural, singular: kind.toLowerCase(), listKind: `${kind}List` },
      versions: versions.map((name, i) => ({
        name,
        served: true,
        storage: i === 0,
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      })),
    },
  };
}

const vm = (name: string, networkName: string): Obj => ({
  apiVersion: 'kubevirt.io/v1',
  kind: 'VirtualMachine',
  metadata: { name, namespace: NS },
  spec: {
    runStrategy: 'Always',
    template: {
      spec: {
        domain: {
          devices: {
            interfaces: [
              { name: 'default', masquerade: {} },
              { name: 'blue', bridge: {}, macAddress: '02:00:00:42:00:01' },
            ],
          },
        },
        networks: [
          { name: 'default', pod: {} },
          { name: 'blue', multus: { networkName } },
        ],
      },
    },
  },
});

/** The KubeVirt CR's binding plugin registry (spec.configuration.network.binding). */
const BINDINGS: BindingPlugins = {
  good: { networkAttachmentDefinition: 'binding-net' },
  broken: { networkAttachmentDefinition: `${NS}/absent-binding-net` },
};
const kubevirtCr: Obj = {
  apiVersion: 'kubevirt.io/v1',
  kind: 'KubeVirt',
  metadata: { name: 'kubevirt', namespace: 'kubevirt' },
  spec: { configuration: { network: { binding: { ...BINDINGS, good: { ...BINDINGS.good, sidecarImage: 'example.com/sidecar' } } } } },
  // What virt-operator writes once deployed (no status subresource in the stand-in CRD).
  status: { phase: 'Deployed' },
};

/** A VM on the pod network through a binding plugin, as KubeVirt's passt binding is used. */
const boundVm = (name: string, binding: string): Obj => ({
  apiVersion: 'kubevirt.io/v1',
  kind: 'VirtualMachine',
  metadata: { name, namespace: NS },
  spec: {
    runStrategy: 'Always',
    template: {
      spec: {
        domain: { devices: { interfaces: [{ name: 'default', binding: { name: binding } }] } },
        networks: [{ name: 'default', pod: {} }],
      },
    },
  },
});

/** The virt-launcher pod KubeVirt's virt-controller makes for `v`, as far as admission reads it. */
function launcher(v: Obj, suffix: string, bindings?: BindingPlugins): Obj {
  const name = (v.metadata as Obj).name as string;
  const r = renderLauncher(v, ['spec', 'template', 'spec'], NS, bindings);
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `virt-launcher-${name}-${suffix}`,
      namespace: NS,
      annotations: r.annotations,
      labels: { 'kubevirt.io': 'virt-launcher', 'vm.kubevirt.io/name': name },
      // virt-controller's ownerReference: the VMI, as controller (pkg/virt-controller/services/template.go).
      ownerReferences: [
        {
          apiVersion: 'kubevirt.io/v1',
          kind: 'VirtualMachineInstance',
          name,
          uid: '6f1b1f2e-0000-4000-8000-000000000042',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: podSpec(),
  };
}

t.before(async () => {
  e = await startE2e((m) => t.comment(m));
  await e.applyOk([
    crd('kubevirt.io', 'VirtualMachine', 'virtualmachines', ['v1']),
    crd('kubevirt.io', 'VirtualMachineInstance', 'virtualmachineinstances', ['v1']),
    crd('pool.kubevirt.io', 'VirtualMachinePool', 'virtualmachinepools', ['v1alpha1']),
    crd('kubevirt.io', 'KubeVirt', 'kubevirts', ['v1']),
  ]);
  await e.cluster.kubectlOk([
    'wait',
    '--for=condition=Established',
    '--timeout=60s',
    'crd/virtualmachines.kubevirt.io',
    'crd/virtualmachineinstances.kubevirt.io',
    'crd/virtualmachinepools.pool.kubevirt.io',
    'crd/kubevirts.kubevirt.io',
  ]);
  await e.applyOk([
    namespace(NS),
    namespace('kubevirt'),
    nad({
      namespace: NS,
      name: 'binding-net',
      config: { cniVersion: '1.0.0', name: 'binding', type: 'bridge', bridge: 'br-bd', ipam: {} },
    }),
    nad({ namespace: NS, name: 'blue-net', config: { cniVersion: '1.0.0', name: 'blue', type: 'bridge', bridge: 'br-kv', ipam: {} } }),
  ]);
});

t.teardown(async () => {
  if (e && !t.passing()) process.stderr.write(`\n[e2e] failure: log tails\n${e.tails(80)}\n`);
  await e?.stop();
});

t.test('a VM on a missing NAD is denied at apply, at the VM path; its launcher pod is denied too', async (t) => {
  const bad = vm('vm-missing', 'missing-net');
  const r = await e.apply(bad);
  t.not(r.code, 0, 'kubectl apply fails');
  t.match(r.stderr, 'admission webhook "kubevirt.netattach.io" denied the request');
  t.match(r.stderr, `spec.template.spec.networks[1].multus.networkName: Not found: "${NS}/missing-net"`);
  const p = await e.apply(launcher(bad, 'aaaaa'));
  t.not(p.code, 0, 'the launcher pod KubeVirt would make is denied as well');
  t.match(p.stderr, `Not found: "${NS}/missing-net"`);
});

t.test('a valid VM is admitted, and its launcher pod too', async (t) => {
  const good = vm('vm-good', 'blue-net');
  // netattach's NAD cache catches up with the apply above.
  const r = await eventually('the valid VM admitted', async () => {
    const x = await e.apply(good);
    return x.code === 0 ? x : undefined;
  });
  t.equal(r.code, 0);
  const p = await e.apply(launcher(good, 'bbbbb'));
  t.equal(p.code, 0, `launcher pod admitted: ${p.stderr}`);
  // The same VM applied again (a restart makes a new launcher pod holding its MAC) is still admitted.
  const again = await e.apply({ ...good, metadata: { ...(good.metadata as Obj), labels: { restarted: 'yes' } } });
  t.equal(again.code, 0, again.stderr);
  // kubectl netattach explain vm reads the stored VM from the real apiserver: its own verdict first.
  const explained = await run(process.execPath, [MAIN, 'kubectl', 'explain', 'vm', 'vm-good', '-n', NS], {
    env: { KUBECONFIG: e.cluster.kubeconfigPath },
  });
  t.equal(explained.code, 0, explained.stderr);
  t.match(explained.stdout, /VirtualMachine: vm-good would be allowed at kubectl apply/);
  t.match(explained.stdout, /Name: +virt-launcher-vm-good/);
  t.match(explained.stdout, /blue-net/);
  t.notMatch(explained.stderr, /binding plugins unknown/, 'no binding interface: the registry is not mentioned');
});

t.test('a VM with only the pod network is not sent to netattach', async (t) => {
  const plain = {
    ...vm('vm-plain', 'x'),
    spec: { runStrategy: 'Always', template: { spec: { networks: [{ name: 'default', pod: {} }] } } },
  };
  const r = await e.apply(plain);
  t.equal(r.code, 0, r.stderr);
  t.notMatch(r.stderr, /Warning/);
});

t.test('binding plugins: the KubeVirt CR read from the cluster decides', async (t) => {
  await e.applyOk(kubevirtCr);
  const path = 'spec.template.spec.domain.devices.interfaces[0].binding.name';
  // netattach's KubeVirt watch retries with backoff (up to 60 s) from before the CRD existed.
  const denied = await eventually(
    'the registry read: a missing plugin NAD denied',
    async () => {
      const x = await e.apply(boundVm('vm-broken', 'broken'), ['--dry-run=server']);
      return x.code !== 0 ? x : undefined;
    },
    120_000,
  );
  t.match(denied.stderr, 'admission webhook "kubevirt.netattach.io" denied the request');
  t.match(denied.stderr, `${path}: Not found: "${NS}/absent-binding-net"`);
  const broken = boundVm('vm-broken', 'broken');
  const r = await e.apply(broken);
  t.not(r.code, 0, 'kubectl apply fails');
  const p = await e.apply(launcher(broken, 'ccccc', BINDINGS));
  t.not(p.code, 0, 'the launcher pod KubeVirt would make (with the plugin NAD and its cni-args) is denied too');
  t.match(p.stderr, `Not found: "${NS}/absent-binding-net"`);

  const good = boundVm('vm-bound', 'good');
  const g = await e.apply(good);
  t.equal(g.code, 0, g.stderr);
  t.notMatch(g.stderr, /binding plugin/, 'no note: the plugin and its NAD are known');
  const gp = await e.apply(launcher(good, 'ddddd', BINDINGS));
  t.equal(gp.code, 0, `launcher pod admitted: ${gp.stderr}`);

  const unregistered = await e.apply(boundVm('vm-unregistered', 'nobody'));
  t.equal(unregistered.code, 0, 'a plugin KubeVirt does not know: virt-controller retries, so never denied');
  t.match(unregistered.stderr, /Warning: .*binding\.name: binding plugin "nobody" is not registered/);

  const explained = await run(process.execPath, [MAIN, 'kubectl', 'explain', 'vm', 'vm-bound', '-n', NS], {
    env: { KUBECONFIG: e.cluster.kubeconfigPath },
  });
  t.equal(explained.code, 0, explained.stderr);
  t.match(explained.stdout, /binding-net/, 'explain renders the plugin NAD into the launcher pod');
});
