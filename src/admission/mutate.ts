// Pod mutation: the mutators write into a copy-on-write draft of the pod, which is then diffed
// against the original into a JSON Patch (fast-json-patch `compare`), so the patch is minimal,
// escapes keys and always applies. Only the objects a mutator writes into are copied (the spec,
// the containers it changes, their resources maps); everything else is shared with the original,
// and `compare` skips a shared subtree at once (`obj === mirror`). So a review costs the same for
// a pod with 10 env vars or 1,000, and a pod that needs nothing costs next to nothing.
import fastJsonPatch from 'fast-json-patch';
import type { ParsedNetwork } from '../annotation/index.js';
import type { FieldError } from '../field/index.js';
import { runsWithoutDevice, type Nad, type NadLookup } from '../nads/index.js';
import type { DraView } from '../dra/index.js';
import type { Finding } from '../policy/index.js';
import {
  addTemplateClaims,
  checkNetworkClaims,
  checkTemplates,
  needsDevicePlan,
  ownClaimsServing,
  planDevices,
  type Attachment,
} from './device-plan.js';
import { injectResources } from './inject-resources.js';
import { mergeNodeSelector } from './node-selector.js';
import { isObject, POD_LOCATION, type JsonObject } from './object.js';
import { addPodNetInfo } from './podnetinfo.js';
import { PodDraft } from './draft.js';
import type { AdmissionConfig, JsonPatchOperation } from './types.js';
import type { Note } from './warnings.js';

export interface MutationResult {
  patch: JsonPatchOperation[];
  errors: FieldError[];
  warnings: Note[];
  /** Rules the pod breaks (a ResourceClaimTemplate its networks need is missing). */
  findings: Finding[];
}

/** The pod's namespace and what netattach knows of DRA there, for the explicit-claim path. */
export interface DraInput {
  namespace: string;
  view?: DraView;
}

/** Resource name -> count for the whole pod: one of each of the NAD's resources per selection. */
export function neededResources(attachments: ReadonlyArray<{ nad: Nad }>): Map<string, number> {
  const needed = new Map<string, number>();
  for (const { nad } of attachments) for (const r of nad.resourceNames) needed.set(r, (needed.get(r) ?? 0) + 1);
  return needed;
}

/**
 * Networks whose resourceName is not an extended resource name (DRA only: nothing is requested for
 * it), on a pod without resource claims: no device plugin nor DRA claim can give Multus the device.
 * Only a warning: Multus then runs the plugin without a device ID, which a plugin may not need.
 */
export function draOnlyWithoutClaims(pod: JsonObject, attachments: ReadonlyArray<{ net: ParsedNetwork; nad: Nad }>): Note[] {
  const spec = pod['spec'];
  const claims = isObject(spec) ? spec['resourceClaims'] : undefined;
  if (Array.isArray(claims) && claims.length > 0) return [];
  const out: Note[] = [];
  for (const { net, nad } of attachments) {
    const names = nad.draOnlyResourceNames;
    if (!names?.length) continue;
    // A chain the table knows to run without a device (ovs on a bridge, where the resourceName is a marker) loses nothing.
    if (nad.cni && runsWithoutDevice(nad.cni.pluginTypes) === 'yes') continue;
    out.push({
      path: net.path,
      text: `${nad.namespace}/${nad.name}: resourceName ${names.join(', ')} is no extended resource name, so nothing is requested for it, and the pod has no resourceClaims: Multus will find no device for it`,
    });
  }
  return out;
}

export function mutatePod(
  pod: JsonObject,
  networks: readonly ParsedNetwork[],
  nads: (namespace: string, name: string) => NadLookup,
  config: AdmissionConfig,
  dra: DraInput = { namespace: '' },
): MutationResult {
  const attachments: Attachment[] = [];
  for (const net of networks) {
    const lookup = nads(net.selection.namespace, net.selection.name);
    if (lookup.status === 'found') attachments.push({ net, nad: lookup.nad });
  }
  const draft = new PodDraft(pod);
  // Pods without DRA networks (no template on their NADs, no own claims) skip this entirely.
  const plan = needsDevicePlan(pod, attachments) ? planDevices(pod, POD_LOCATION, attachments, dra.namespace) : undefined;
  const needed = neededResources(plan ? plan.extended : attachments);
  // Resources the pod's own claims serve (Multus's DRA how-to) are not injected.
  const own = plan ? ownClaimsServing(plan, dra.namespace, dra.view) : undefined;
  for (const r of own?.served ?? []) needed.delete(r);
  const injected = injectResources(draft, needed);
  const errors = [...injected.errors, ...mergeNodeSelector(draft, attachments)];
  const warnings = [...injected.warnings, ...draOnlyWithoutClaims(pod, plan ? plan.extended : attachments), ...(own?.warnings ?? [])];
  const findings: Finding[] = [];
  if (plan) {
    errors.push(...plan.errors);
    warnings.push(...plan.warnings);
    const templates = checkTemplates(plan, dra.namespace, dra.view, false);
    findings.push(...templates.findings);
    warnings.push(...templates.warnings);
    const claimed = checkNetworkClaims(plan, dra.namespace, dra.view, false);
    errors.push(...claimed.errors);
    warnings.push(...claimed.warnings);
    if (errors.length === 0) {
      const added = addTemplateClaims(draft, plan);
      errors.push(...added.errors);
      warnings.push(...added.warnings);
    }
  }
  if ((config.podNetInfo.enabled || config.podNetInfo.hugepages) && needed.size > 0)
    warnings.push(...addPodNetInfo(draft, config.podNetInfo));
  const patch =
    errors.length > 0 || findings.length > 0 || !draft.changed ? [] : (fastJsonPatch.compare(pod, draft.pod) as JsonPatchOperation[]);
  return { patch, errors, warnings, findings };
}
