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
