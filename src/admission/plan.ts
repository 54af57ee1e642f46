// Which NADs a request refers to, so that the shell can resolve them before the (synchronous) review.
import { identityErrors } from './identity.js';
import { isObject, podAt, POD_LOCATION } from './object.js';
import { renderLauncher, VM_RESOURCES, type BindingPlugins } from '../kubevirt/index.js';
import { launcherPod } from './review-vm.js';
import { readPodNetworks, resolvable } from './networks.js';
import { targetOf } from './target.js';
import { namespaceOf } from './namespace.js';
import type { AdmissionConfig, AdmissionRequest } from './types.js';

export interface NadRef {
  namespace: string;
  name: string;
}

/** `bindings`: KubeVirt's binding plugin registry when known (a VM's plugin NADs are read too), as the review will get it. */
export function plan(request: AdmissionRequest, config: AdmissionConfig, bindings?: BindingPlugins): { nadRefs: NadRef[] } {
  try {
    const target = targetOf(request);
    if (target.kind !== 'pod' && target.kind !== 'template' && target.kind !== 'vm') return { nadRefs: [] };
    if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return { nadRefs: [] };
    if (!isObject(request.object)) return { nadRefs: [] };
    // review() denies it: no NAD is looked up for it, and nothing of it is kept.
    if (identityErrors(request).length > 0) return { nadRefs: [] };
    // A pod update is judged only on whether the annotations changed, which needs no NAD.
    if (target.kind === 'pod' && request.operation === 'UPDATE' && isObject(request.oldObject)) return { nadRefs: [] };
    const namespace = namespaceOf(request);
    const nets =
      target.kind === 'vm'
        ? readPodNetworks(
            launcherPod(undefined, renderLauncher(request.object, VM_RESOURCES.get(target.resource)!.keys, namespace, bindings)),
            POD_LOCATION,
            namespace,
            config,
          )
        : readPodNetworks(podAt(request.object, target.location), target.location, namespace, config);
    const seen = new Map<string, NadRef>();
    for (const { selection } of resolvable(nets)) {
      seen.set(`${selection.namespace}/${selection.name}`, { namespace: selection.namespace, name: selection.name });
    }
    return { nadRefs: [...seen.values()] };
  } catch {
    // plan is an optimisation: review() reports whatever went wrong as a field error.
    return { nadRefs: [] };
  }
}
