// Pods and the pod templates of workloads.
import { forbidden, required } from '../field/index.js';
import type { ParsedNetwork } from '../annotation/index.js';
import { checkNetworkClaims, checkTemplates, needsDevicePlan, ownClaimsServing, planDevices, type Attachment } from './device-plan.js';
import { allow, Verdict } from './decision.js';
import { judgeNetworks } from './judge.js';
import { mutatePod } from './mutate.js';
import { namespaceOf } from './namespace.js';
import { annotationPath, NETWORK_ANNOTATIONS, readPodNetworks, resolvable } from './networks.js';
import { isObject, objectAt, podAt, POD_LOCATION, type JsonObject, type PodLocation } from './object.js';
import { addedDevices } from './hotplug.js';
import { DEFAULT_NETWORK_ANNOTATION } from '../annotation/index.js';
import { addressFacts, addressKey } from '../policy/index.js';
import type { AdmissionContext, AdmissionRequest, Decision } from './types.js';

/** The network annotations whose raw values differ between the old and the new pod (template). */
function changedAnnotations(oldPod: unknown, newPod: unknown): string[] {
  const annotationsOf = (p: unknown) => objectAt(objectAt(p, 'metadata'), 'annotations');
  const before = annotationsOf(oldPod);
  const after = annotationsOf(newPod);
  return NETWORK_ANNOTATIONS.filter((k) => JSON.stringify(before?.[k]) !== JSON.stringify(after?.[k]));
}

const isCreateOrUpdate = (r: AdmissionRequest) => r.operation === 'CREATE' || r.operation === 'UPDATE';

export function reviewPod(request: AdmissionRequest, context: AdmissionContext): Decision {
  if (!isCreateOrUpdate(request)) return allow();
  const verdict = new Verdict();
  const pod = request.object;
  if (!isObject(pod)) return verdict.addInvalid(required('object', 'the request carries no pod')).build();

  if (request.operation === 'UPDATE' && isObject(request.oldObject)) {
    const changed = changedAnnotations(request.oldObject, pod);
    // Unchanged: judged at creation; judging again could block label or finalizer updates of running pods.
    if (changed.length === 0) return verdict.build();
    return reviewNetworkChange(verdict, request, context, request.oldObject, pod, changed);
  }

  const namespace = namespaceOf(request);
  const nets = readPodNetworks(pod, POD_LOCATION, namespace, context.config);
  judgeNetworks(verdict, nets, pod, request, context, { template: false, namespace, warnOnly: false });
  const networks = resolvable(nets);
  if (request.operation === 'CREATE' && networks.length > 0) {
    // Computed for both endpoints so that /validate denies what /mutate would (conflicts, bad quantities).
    const mutation = mutatePod(pod, networks, context.nads, context.config, { namespace, ...(context.dra ? { view: context.dra } : {}) });
    verdict.addInvalid(...mutation.errors);
    for (const f of mutation.findings) verdict.addFinding(f);
    if (context.endpoint === 'mutate') {
      verdict.warnNote(...mutation.warnings);
      verdict.patch = mutation.patch;
    }
  }
  return verdict.build();
}

/**
 * A change of a pod's network annotations. The multus-dynamic-networks-controller plugs a change
 * of the networks annotation into the running pod (KubeVirt's NIC hotplug), so the new value is
 * judged like a new pod's: syntax, NADs, what the plugins read, policy, and uniqueness for the
 * addresses it adds. Removing networks is fine. A network that needs a device the pod has not
 * requested cannot be added in place. The default network is set up once, when the pod starts.
 * `--immutable-networks` (or a policy's immutableNetworks rule) refuses every change instead.
 */
function reviewNetworkChange(
  verdict: Verdict,
  request: AdmissionRequest,
  context: AdmissionContext,
  oldPod: JsonObject,
  pod: JsonObject,
  changed: string[],
): Decision {
  if (context.config.immutableNetworks) {
    for (const k of changed) {
      verdict.addInvalid(
        forbidden(
          annotationPath(POD_LOCATION, k),
          'may not be changed after the pod is created (netattach runs with --immutable-networks)',
        ),
      );
    }
    return verdict.build();
  }
  if (changed.includes(DEFAULT_NETWORK_ANNOTATION)) {
    verdict.warnNote({
      path: annotationPath(POD_LOCATION, DEFAULT_NETWORK_ANNOTATION),
      text: 'has no effect on a running pod: Multus sets up the default network once, when the pod starts',
    });
  }
  const namespace = namespaceOf(request);
  const before = readPodNetworks(oldPod, POD_LOCATION, namespace, context.config);
  const nets = readPodNetworks(pod, POD_LOCATION, namespace, context.config);
  const heldBefore = new Set(addressFacts(resolvable(before)).map(addressKey));
  judgeNetworks(verdict, nets, pod, request, context, { template: false, namespace, warnOnly: false, change: { heldBefore } });
  // Certain to fail when the controller plugs it (no device was allocated): an object error.
  verdict.addInvalid(...addedDevices(resolvable(before), resolvable(nets), pod, context.nads));
  return verdict.build();
}

export function reviewTemplate(request: AdmissionRequest, context: AdmissionContext, location: PodLocation): Decision {
  if (!isCreateOrUpdate(request)) return allow();
  const verdict = new Verdict();
  const object = request.object;
  if (!isObject(object)) return verdict.addInvalid(required('object', 'the request carries no object')).build();
  // Being deleted: the garbage collector's finalizer updates must go through.
  if (objectAt(object, 'metadata')?.['deletionTimestamp']) return allow();

  const template = podAt(object, location);
  const namespace = namespaceOf(request);
  const nets = readPodNetworks(template, location, namespace, context.config);
  // An edit that leaves the template's networks alone (scaling, image change) is not blocked by
  // them: the new pods are checked one by one anyway. Problems still show as warnings.
  const warnOnly =
    request.operation === 'UPDATE' &&
    isObject(request.oldObject) &&
    changedAnnotations(podAt(request.oldObject, location), template).length === 0;
  judgeNetworks(verdict, nets, template, request, context, { template: true, namespace, warnOnly });
  judgeTemplateDevices(verdict, template, location, resolvable(nets), context, namespace, warnOnly);
  return verdict.build();
}

/** The explicit-claim checks for a workload's template: its pods get the claims when they are created. */
function judgeTemplateDevices(
  verdict: Verdict,
  template: JsonObject | undefined,
  location: PodLocation,
  networks: readonly ParsedNetwork[],
  context: AdmissionContext,
  namespace: string,
  warnOnly: boolean,
): void {
  const attachments: Attachment[] = [];
  for (const net of networks) {
    const lookup = context.nads(net.selection.namespace, net.selection.name);
    if (lookup.status === 'found') attachments.push({ net, nad: lookup.nad });
  }
  if (!needsDevicePlan(template, attachments)) return;
  const plan = planDevices(template, location, attachments, namespace);
  if (warnOnly) verdict.warnField(...plan.errors);
  else verdict.addInvalid(...plan.errors);
  verdict.warnNote(
    ...plan.warnings,
    ...checkTemplates(plan, namespace, context.dra, true).warnings,
    ...checkNetworkClaims(plan, namespace, context.dra, true).warnings,
    // What its pods will get: said at `kubectl apply` of the workload, where someone reads it.
    ...ownClaimsServing(plan, namespace, context.dra).warnings,
  );
}
