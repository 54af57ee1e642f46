// Which way a network's device reaches its pods (pure): an explicit DRA claim from a
// ResourceClaimTemplate, an extended resource served by a DeviceClass (KEP-5004), or an extended
// resource of a device plugin. Said by `netattach check --cluster`, NAD warnings and the docs.
import type { Nad } from '../nads/index.js';
import type { DeviceClassInfo, DraView } from './types.js';

export type DevicePath = 'none' | 'claim-template' | 'dra-extended-resource' | 'device-plugin' | 'mixed';

export interface NetworkDevicePath {
  path: DevicePath;
  /** For each resource name of the NAD: the DeviceClasses serving it (scheduler's pick first). */
  resources: Array<{ name: string; classes: readonly DeviceClassInfo[] }>;
  /** What is missing or ambiguous, in words. */
  problems: string[];
  /** One line for people. */
  summary: string;
}

export function devicePathOf(nad: Nad, view: Pick<DraView, 'classesFor' | 'templateNamespaces'>): NetworkDevicePath {
  const resources = nad.resourceNames.map((name) => ({ name, classes: view.classesFor(name) }));
  const problems: string[] = [];
  for (const r of resources) {
    if (r.classes.length > 1) {
      problems.push(
        `DeviceClasses ${r.classes.map((c) => c.name).join(', ')} share extendedResourceName ${r.name}; the scheduler picks ${r.classes[0]!.name}`,
      );
    }
  }
  if (nad.claimTemplate) {
    // A DRA-only name (not an extended resource name) is still what Multus finds the device by.
    if (resources.length === 0 && !nad.draOnlyResourceNames?.length) {
      problems.push('no resourceName: Multus finds the claimed device by k8s.v1.cni.cncf.io/resourceName');
    }
    const namespaces = view.templateNamespaces?.(nad.claimTemplate);
    if (namespaces && namespaces.length === 0) {
      problems.push(`no namespace has ResourceClaimTemplate ${nad.claimTemplate} yet: pods using this network will be denied`);
    }
    const where = namespaces && namespaces.length > 0 ? ` (present in ${namespaces.join(', ')})` : '';
    return {
      path: 'claim-template',
      resources,
      problems,
      summary: `explicit DRA claims from ResourceClaimTemplate ${nad.claimTemplate} in the pod's namespace${where}`,
    };
  }
  if (resources.length === 0) {
    const draOnly = nad.draOnlyResourceNames ?? [];
    const summary =
      draOnly.length > 0 ? `no extended resource; ${draOnly.join(', ')} only from a DRA claim of the pod` : 'no device (no resourceName)';
    return { path: 'none', resources, problems, summary };
  }
  const served = resources.filter((r) => r.classes.length > 0);
  const describe = (r: { name: string; classes: readonly DeviceClassInfo[] }): string =>
    r.classes.length > 0 ? `${r.name} via DeviceClass ${r.classes[0]!.name} (DRA)` : `${r.name} via a device plugin`;
  const path: DevicePath = served.length === 0 ? 'device-plugin' : served.length === resources.length ? 'dra-extended-resource' : 'mixed';
  return { path, resources, problems, summary: `extended resources: ${resources.map(describe).join(', ')}` };
}
