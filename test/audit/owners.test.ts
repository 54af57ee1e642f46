// The audit reads a pod's controller ownerReference as admission does: the pods of one KubeVirt
// VMI (a live migration's source and target) hold their MACs as one holder, in `netattach audit`
// (auditSnapshot) and in serve's background audit (the pod watch's index) alike. Issue 25.
import t from 'tap';
import { auditSnapshot, BackgroundAudit, livePodOf, requestFor, type LivePod } from '../../src/audit/index.js';
import { DEFAULT_ADMISSION_CONFIG, review } from '../../src/admission/index.js';
import { AddressIndex, PolicyEngine } from '../../src/policy/index.js';
import { indexPod } from '../../src/policy/pod-source.js';
import type { KubeObject } from '../../src/kube/index.js';
import { nad, policiesOf, UNIQUE_MACS } from './helpers.js';

const config = DEFAULT_ADMISSION_CONFIG;
const nads = [nad('vms', 'sriov-net')];
const MAC = '[{"name":"sriov-net","mac":"02:00:00:00:00:01"}]';
const VMI = (name: string, uid: string) => ({
  apiVersion: 'kubevirt.io/v1',
  kind: 'VirtualMachineInstance',
  name,
  uid,
  controller: true,
  blockOwnerDeletion: true,
});

/** A virt-launcher pod as the metadata-only watch (or `kubectl get -o yaml`) gives it. */
const launcher = (name: string, owner: Record<string, unknown> | undefined, networks = MAC): KubeObject =>
  ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: 'vms',
      uid: `uid-${name}`,
      annotations: { 'k8s.v1.cni.cncf.io/networks': networks },
      ...(owner ? { ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'not-the-controller', uid: 'cm' }, owner] } : {}),
    },
  }) as KubeObject;

const pods = (...objects: KubeObject[]): LivePod[] => objects.map((o) => livePodOf(o)!);
const results = (audits: ReturnType<typeof auditSnapshot>) =>
  audits.map((a) => `${a.pod.name}: ${a.findings.map((f) => `${f.rule}/${f.result}`).join(', ') || 'clean'}`);

t.test('livePodOf keeps the controller ownerReference, and the dry-run CREATE carries it', async (t) => {
  const pod = livePodOf(launcher('virt-launcher-vm1-src', VMI('vm1', 'vmi-1')))!;
  t.same(pod.controller, { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', name: 'vm1', uid: 'vmi-1' });
  const meta = (requestFor(pod).object as { metadata: { ownerReferences?: unknown } }).metadata;
  t.same(meta.ownerReferences, [
    { apiVersion: 'kubevirt.io/v1', kind: 'VirtualMachineInstance', name: 'vm1', uid: 'vmi-1', controller: true },
  ]);
  t.equal(livePodOf(launcher('plain', undefined))!.controller, undefined);
  const malformed = launcher('bad', { ...VMI('vm1', 'vmi-1'), name: 7 });
  t.equal(livePodOf(malformed)!.controller, undefined, 'a malformed controller reference gives no owner, as in admission');
});

t.test('netattach audit: the two pods of one VMI in a live migration hold the MAC as one', async (t) => {
  const out = auditSnapshot({
    pods: pods(launcher('virt-launcher-vm1-src', VMI('vm1', 'vmi-1')), launcher('virt-launcher-vm1-dst', VMI('vm1', 'vmi-1'))),
    nads,
    policies: policiesOf(UNIQUE_MACS),
    config,
  });
  t.same(results(out), ['virt-launcher-vm1-src: clean', 'virt-launcher-vm1-dst: clean']);
});

t.test('netattach audit: two VMIs, or pods without such an owner, still conflict, naming the VM', async (t) => {
  const out = auditSnapshot({
    pods: pods(
      launcher('virt-launcher-vm1-src', VMI('vm1', 'vmi-1')),
      launcher('virt-launcher-vm2-src', VMI('vm2', 'vmi-2')),
      launcher('plain', undefined),
    ),
    nads,
    policies: policiesOf(UNIQUE_MACS),
    config,
  });
  t.same(results(out), [
    'virt-launcher-vm1-src: uniqueAddresses/fail',
    'virt-launcher-vm2-src: uniqueAddresses/fail',
    'plain: uniqueAddresses/fail',
  ]);
  t.match(out[2]!.findings[0]!.message, /already used by VM vms\/vm1/);
});

t.test('--address-sharing-owner is honoured: without the VMI kind the migration pods conflict', async (t) => {
  const out = auditSnapshot({
    pods: pods(launcher('virt-launcher-vm1-src', VMI('vm1', 'vmi-1')), launcher('virt-launcher-vm1-dst', VMI('vm1', 'vmi-1'))),
    nads,
    policies: policiesOf(UNIQUE_MACS),
    config: { ...config, addressSharingOwners: ['example.com/Mover'] },
  });
  t.same(results(out), ['virt-launcher-vm1-src: uniqueAddresses/fail', 'virt-launcher-vm1-dst: uniqueAddresses/fail']);
});

t.test("the background audit (serve's pod watch index) judges the migration pods as admission does", async (t) => {
  const index = new AddressIndex();
  const policies = policiesOf(UNIQUE_MACS);
  const engine = new PolicyEngine({ index, policies });
  const audit = new BackgroundAudit({
    nads: { get: (ns, name) => nads.find((n) => n.namespace === ns && n.name === name), list: () => nads, synced: () => true },
    namespaceLabels: (ns) => ({ 'kubernetes.io/metadata.name': ns }),
    engine,
    index,
    config,
    podsUsingNad: () => [],
    ready: () => true,
  });
  const objects = [launcher('virt-launcher-vm1-src', VMI('vm1', 'vmi-1')), launcher('virt-launcher-vm1-dst', VMI('vm1', 'vmi-1'))];
  audit.resync();
  for (const o of objects) {
    indexPod(index, o); // what PodAddressSource does before telling its observer
    audit.upsert(o);
  }
  audit.resynced();
  audit.drain();
  t.same(
    audit.namespaceAudits('vms').map((a) => `${a.pod.name}: ${a.findings.length}`),
    ['virt-launcher-vm1-dst: 0', 'virt-launcher-vm1-src: 0'],
  );
  // Admission itself: a third pod of that VMI is admitted, another VM's is denied.
  const third = livePodOf(launcher('virt-launcher-vm1-third', VMI('vm1', 'vmi-1')))!;
  const other = livePodOf(launcher('virt-launcher-vm2', VMI('vm2', 'vmi-2')))!;
  const ctx = {
    endpoint: 'validate' as const,
    nads: () => ({ status: 'found' as const, nad: nads[0]! }),
    namespaceLabels: {},
    policy: engine,
    config,
  };
  t.equal(review(requestFor(third), ctx).allowed, true);
  t.equal(review(requestFor(other), ctx).allowed, false);
});
