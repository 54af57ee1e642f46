// `kubectl netattach explain vm NAME`: the launcher pod KubeVirt renders from the VM, explained.
import t from 'tap';
import { explainExitCode, explainPod } from '../../src/explain/index.js';
import { launcherPodObject } from '../../src/kubevirt/render.js';
import { nadFromObject } from '../../src/nads/index.js';

const NS = 'vms';
const blue = nadFromObject({
  apiVersion: 'k8s.cni.cncf.io/v1',
  kind: 'NetworkAttachmentDefinition',
  metadata: { name: 'blue-net', namespace: NS },
  spec: { config: JSON.stringify({ cniVersion: '1.0.0', name: 'b', type: 'bridge', ipam: {} }) },
});
const vm = (networkName: string) => ({
  apiVersion: 'kubevirt.io/v1',
  kind: 'VirtualMachine',
  metadata: { name: 'db-1', namespace: NS },
  spec: {
    template: {
      spec: { domain: { devices: { interfaces: [{ name: 'blue', bridge: {} }] } }, networks: [{ name: 'blue', multus: { networkName } }] },
    },
  },
});

t.test('the launcher pod of a VM: its name, its owner, its networks, and the verdict', async (t) => {
  for (const [networkName, exit] of [
    ['blue-net', 0],
    ['missing', 1],
  ] as const) {
    const pod = launcherPodObject(vm(networkName), ['spec', 'template', 'spec'], NS);
    t.match(pod, {
      metadata: { name: 'virt-launcher-db-1', ownerReferences: [{ kind: 'VirtualMachineInstance', name: 'db-1', controller: true }] },
    });
    const x = explainPod({ pod, source: 'cluster', defaultNamespace: NS, nads: [blue] });
    t.equal(explainExitCode(x), exit, networkName);
    t.match(JSON.stringify(x), networkName, "the explanation names the VM network's NAD");
  }
});

t.test('a VMI keeps its uid on the owner reference (its launcher pods share addresses by it)', async (t) => {
  const vmi = {
    apiVersion: 'kubevirt.io/v1',
    kind: 'VirtualMachineInstance',
    metadata: { name: 'db-1', uid: 'u-1' },
    spec: vm('blue-net').spec.template.spec,
  };
  const pod = launcherPodObject(vmi, ['spec'], NS);
  t.match(pod, { metadata: { ownerReferences: [{ uid: 'u-1' }] } });
});

// Issue 42: explain vm also says what `kubectl apply` of the VM itself gets, at the VM's paths.
t.test('explain vm: the VM webhook verdict at the VM paths, beside the launcher pod', async (t) => {
  const { renderExplanation } = await import('../../src/explain/index.js');
  const object = vm('missing');
  const pod = launcherPodObject(object, ['spec', 'template', 'spec'], NS);
  const x = explainPod({ pod, source: 'cluster', defaultNamespace: NS, nads: [blue], vm: object });
  t.equal(x.vm?.kind, 'VirtualMachine');
  t.equal(x.vm?.name, 'db-1');
  t.equal(x.vm?.verdict, 'denied');
  t.equal(x.vm?.errors[0]?.path, 'spec.template.spec.networks[0].multus.networkName', 'the error at the VM path');
  t.match(x.admission.errors[0]?.path ?? '', /^metadata\.annotations\[k8s\.v1\.cni\.cncf\.io\/networks\]/, "the pod's at the pod path");
  const text = renderExplanation(x);
  t.match(text, /VirtualMachine: db-1 would be denied at kubectl apply \(1 error\)/);
  t.match(text, /error: spec\.template\.spec\.networks\[0\]\.multus\.networkName: Not found/);
  const ok = explainPod({
    pod: launcherPodObject(vm('blue-net'), ['spec', 'template', 'spec'], NS),
    source: 'cluster',
    defaultNamespace: NS,
    nads: [blue],
    vm: vm('blue-net'),
  });
  t.equal(ok.vm?.verdict, 'allowed');
  const plain = explainPod({ pod, source: 'cluster', defaultNamespace: NS, nads: [blue] });
  t.notOk('vm' in plain, 'a pod explained for itself has no vm section');
});
