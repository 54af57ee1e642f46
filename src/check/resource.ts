// apiVersion + kind -> the resource the apiserver would name in the AdmissionRequest. Only the
// kinds the webhooks are registered for need to be exact (the admission core dispatches on
// group + resource); any other kind gets a lower-case plural and is admitted without an opinion.
import type { GroupVersionKind, GroupVersionResource } from '../admission/index.js';

/** `group/Kind` -> plural resource name, for the kinds the webhooks see. */
const RESOURCES: ReadonlyMap<string, string> = new Map([
  ['/Pod', 'pods'],
  ['/ReplicationController', 'replicationcontrollers'],
  ['/PodTemplate', 'podtemplates'],
  ['apps/Deployment', 'deployments'],
  ['apps/ReplicaSet', 'replicasets'],
  ['apps/StatefulSet', 'statefulsets'],
  ['apps/DaemonSet', 'daemonsets'],
  ['batch/Job', 'jobs'],
  ['batch/CronJob', 'cronjobs'],
  ['k8s.cni.cncf.io/NetworkAttachmentDefinition', 'network-attachment-definitions'],
  // KubeVirt: judged as the virt-launcher pod KubeVirt renders from them (src/kubevirt/render.ts).
  ['kubevirt.io/VirtualMachine', 'virtualmachines'],
  ['kubevirt.io/VirtualMachineInstance', 'virtualmachineinstances'],
  ['kubevirt.io/VirtualMachineInstanceReplicaSet', 'virtualmachineinstancereplicasets'],
  ['pool.kubevirt.io/VirtualMachinePool', 'virtualmachinepools'],
]);

/** Cluster-scoped kinds commonly found next to workloads: shown without a namespace. */
const CLUSTER_SCOPED: ReadonlySet<string> = new Set([
  '/Namespace',
  '/Node',
  '/PersistentVolume',
  'apiextensions.k8s.io/CustomResourceDefinition',
  'admissionregistration.k8s.io/MutatingWebhookConfiguration',
  'admissionregistration.k8s.io/ValidatingWebhookConfiguration',
  'admissionregistration.k8s.io/ValidatingAdmissionPolicy',
  'admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding',
  'rbac.authorization.k8s.io/ClusterRole',
  'rbac.authorization.k8s.io/ClusterRoleBinding',
  'scheduling.k8s.io/PriorityClass',
  'storage.k8s.io/StorageClass',
  'netattach.io/NetworkAttachmentPolicy',
]);

export interface ResourceInfo {
  gvk: GroupVersionKind;
  gvr: GroupVersionResource;
  /** True for the kinds the netattach webhooks are registered for. */
  watched: boolean;
  namespaced: boolean;
}

export function resourceOf(apiVersion: string, kind: string): ResourceInfo {
  const slash = apiVersion.indexOf('/');
  const group = slash < 0 ? '' : apiVersion.slice(0, slash);
  const version = slash < 0 ? apiVersion : apiVersion.slice(slash + 1);
  const known = RESOURCES.get(`${group}/${kind}`);
  const resource = known ?? pluralOf(kind);
  return {
    gvk: { group, version, kind },
    gvr: { group, version, resource },
    watched: known !== undefined,
    namespaced: !CLUSTER_SCOPED.has(`${group}/${kind}`),
  };
}

/** The apiserver's default plural for a kind (as for CRDs without an explicit one). */
function pluralOf(kind: string): string {
  const lower = kind.toLowerCase();
  if (/(s|x|z|ch|sh)$/.test(lower)) return `${lower}es`;
  if (/[^aeiou]y$/.test(lower)) return `${lower.slice(0, -1)}ies`;
  return `${lower}s`;
}
