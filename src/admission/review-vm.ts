// KubeVirt VMs judged at apply time as the virt-launcher pod KubeVirt will make for them: the
// annotations are rendered from the VM (src/kubevirt/render.ts), judged by the Pod path's own
// checks and policies, and every problem is reported at the VM's own field. Early feedback only:
// the webhook fails open and the launcher pod still passes the Pod webhook, so the VM holds no
// address here, and what the pod would pass is never denied.
import { required, type FieldError } from '../field/index.js';
import { renderLauncher, vmPath, VM_RESOURCES, type RenderedLauncher } from '../kubevirt/index.js';
import { addressFacts, addressKey, type Finding, type SharingOwner } from '../policy/index.js';
import { allow, Verdict } from './decision.js';
import { judgeNetworks } from './judge.js';
import { namespaceOf } from './namespace.js';
import { readPodNetworks, resolvable } from './networks.js';
import { isObject, objectAt, stringAt, POD_LOCATION, type JsonObject } from './object.js';
import type { AdmissionContext, AdmissionRequest, Decision } from './types.js';
import type { Warning } from './warnings.js';

/** The launcher pod KubeVirt would make, as far as netattach reads it: name and annotations. */
export function launcherPod(name: string | undefined, rendered: RenderedLauncher): JsonObject {
  return { metadata: { ...(name ? { name } : {}), annotations: { ...rendered.annotations } }, spec: {} };
}

const sameAnnotations = (a: RenderedLauncher, b: RenderedLauncher): boolean =>
  JSON.stringify(Object.entries(a.annotations).sort()) === JSON.stringify(Object.entries(b.annotations).sort());

/** Whether the VM would run a launcher pod now (a halted VM's conflicts may be gone when it starts). */
function runs(resource: string, object: JsonObject): boolean {
  if (resource !== 'kubevirt.io/virtualmachines') return true;
  const spec = objectAt(object, 'spec');
  const strategy = stringAt(spec, 'runStrategy');
  if (strategy !== undefined) return strategy !== 'Halted' && strategy !== 'Manual';
  return spec?.['running'] === true;
}

export function reviewVm(request: AdmissionRequest, context: AdmissionContext, resource: string): Decision {
  if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return allow();
  const where = VM_RESOURCES.get(resource);
  const object = request.object;
  if (!where) return allow();
  if (!isObject(object)) return new Verdict().addInvalid(required('object', 'the request carries no object')).build();
  if (objectAt(object, 'metadata')?.['deletionTimestamp']) return allow();

  const namespace = namespaceOf(request);
  const bindings = context.kubevirtBindings;
  const rendered = renderLauncher(object, where.keys, namespace, bindings);
  const verdict = new Verdict();
  verdict.warnNote(...rendered.notes);
  if (Object.keys(rendered.annotations).length === 0) return verdict.build();

  const before =
    request.operation === 'UPDATE' && isObject(request.oldObject)
      ? renderLauncher(request.oldObject, where.keys, namespace, bindings)
      : undefined;
  // An edit that leaves the networks alone (start, stop, labels) is not blocked by them.
  const warnOnly = before !== undefined && sameAnnotations(before, rendered);
  const name = stringAt(objectAt(object, 'metadata'), 'name') || request.name || undefined;
  const pod = launcherPod(name, rendered);
  const nets = readPodNetworks(pod, POD_LOCATION, namespace, context.config);
  // The VMI a VM makes has the VM's name; its launcher pods (restarts, migrations) share its addresses.
  const owner: SharingOwner | undefined =
    !where.template && name && context.config.addressSharingOwners.includes('kubevirt.io/VirtualMachineInstance')
      ? {
          key: `kubevirt.io/VirtualMachineInstance/${namespace}/${name}`,
          label: `VM ${namespace}/${name}`,
          namespace,
          kind: 'VirtualMachineInstance',
          name,
          anyUid: true,
        }
      : undefined;
  // A network added to a VM (hotplug) is judged like a new one; what it held before is not.
  const change =
    before && !warnOnly && request.operation === 'UPDATE'
      ? {
          heldBefore: new Set(
            addressFacts(resolvable(readPodNetworks(launcherPod(name, before), POD_LOCATION, namespace, context.config))).map(addressKey),
          ),
        }
      : undefined;
  judgeNetworks(verdict, nets, pod, { ...request, operation: change ? 'UPDATE' : 'CREATE' }, context, {
    template: where.template,
    namespace,
    warnOnly,
    ...(change ? { change } : {}),
    standIn: owner ? { owner } : {},
  });
  const decision = verdict.build();
  return toVm(decision, rendered, runs(resource, object));
}

/**
 * The decision with every path the VM's own. Two kinds of Enforce findings only warn, since the
 * launcher pod could pass them:
 * - requestedFields: it judges who creates the pod, and KubeVirt's controller creates the
 *   launcher pod, not the user applying the VM;
 * - uniqueAddresses of a VM that does not run now: the holder may be gone when it starts.
 */
function toVm(d: Decision, r: RenderedLauncher, running: boolean): Decision {
  const field = (e: FieldError): FieldError => ({ ...e, path: vmPath(e.path, r) });
  const finding = (f: Finding): Finding => ({ ...f, error: field(f.error) });
  const warning = (w: Warning): Warning =>
    'field' in w ? { field: field(w.field) } : { note: { ...w.note, path: vmPath(w.note.path, r) } };
  const soften = (f: Finding): string | undefined =>
    f.rule === 'requestedFields'
      ? "KubeVirt's controller creates the launcher pod; this rule judges it then"
      : !running && f.rule === 'uniqueAddresses'
        ? 'the VM does not run now; its launcher pod is judged when it starts'
        : undefined;
  const v = new Verdict();
  const enforced = new Set(d.findings.filter((f) => f.action === 'Enforce').map((f) => f.error));
  for (const e of d.errors) if (!enforced.has(e)) v.addInvalid(field(e));
  for (const f of d.findings) {
    if (f.action !== 'Enforce') {
      v.findings.push(finding(f));
      continue;
    }
    const why = soften(f);
    const g = finding(f);
    v.addFinding(why ? { ...g, action: 'Warn', error: { ...g.error, reason: `${g.error.reason}; only a warning for a VM: ${why}` } } : g);
  }
  for (const w of d.warnings) v.warnings.push(warning(w));
  for (const a of d.audits) v.audits.push(finding(a));
  return v.build();
}
