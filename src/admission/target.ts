// What a request is about: a Pod, a workload's pod template, a NetworkAttachmentDefinition,
// or something netattach has no opinion on. Decided from the resource (group + plural), which
// the apiserver fills in for every request, not from the object the client wrote.
import type { AdmissionRequest } from './types.js';
import { POD_LOCATION, type PodLocation } from './object.js';
import { VM_RESOURCES } from '../kubevirt/index.js';

export type Target =
  | { kind: 'pod'; location: PodLocation }
  | { kind: 'template'; location: PodLocation; resource: string }
  | { kind: 'nad' }
  | { kind: 'vm'; resource: string }
  | { kind: 'other' };

const at = (...keys: string[]): PodLocation => {
  const base = keys.join('.');
  return { keys, metadataPath: `${base}.metadata`, specPath: `${base}.spec` };
};

const SPEC_TEMPLATE = at('spec', 'template');

/** `group/resource` -> where the pod template lives. */
const TEMPLATES: ReadonlyMap<string, PodLocation> = new Map([
  ['apps/deployments', SPEC_TEMPLATE],
  ['apps/replicasets', SPEC_TEMPLATE],
  ['apps/statefulsets', SPEC_TEMPLATE],
  ['apps/daemonsets', SPEC_TEMPLATE],
  ['batch/jobs', SPEC_TEMPLATE],
  ['batch/cronjobs', at('spec', 'jobTemplate', 'spec', 'template')],
  ['/replicationcontrollers', SPEC_TEMPLATE],
  ['/podtemplates', at('template')],
]);

export const NAD_GROUP = 'k8s.cni.cncf.io';
export const NAD_RESOURCE = 'network-attachment-definitions';

export function targetOf(request: AdmissionRequest): Target {
  // Subresources (status, scale, binding, eviction, exec, ephemeralcontainers...) never carry
  // a change to the networks annotation.
  if (request.subResource) return { kind: 'other' };
  const group = request.resource.group ?? '';
  const { resource } = request.resource;
  if (group === '' && resource === 'pods') return { kind: 'pod', location: POD_LOCATION };
  if (group === NAD_GROUP && resource === NAD_RESOURCE) return { kind: 'nad' };
  const location = TEMPLATES.get(`${group}/${resource}`);
  if (location) return { kind: 'template', location, resource };
  // KubeVirt VMs: judged as the launcher pod KubeVirt renders from them.
  if (VM_RESOURCES.has(`${group}/${resource}`)) return { kind: 'vm', resource: `${group}/${resource}` };
  return { kind: 'other' };
}
