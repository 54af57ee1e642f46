// A change of a running pod's networks annotation: KubeVirt's NIC hotplug, which the
// multus-dynamic-networks-controller plugs in place. The new value gets the full checks (in
// review-pod.ts); what this adds is the one thing a change cannot do in place: a running pod's
// resources cannot grow, so a network whose NAD needs a device the pod has not requested cannot
// be added (KubeVirt migrates the VM to a new pod for SR-IOV instead).
import type { ParsedNetwork } from '../annotation/index.js';
import { forbidden, type FieldError } from '../field/index.js';
import type { NadLookup } from '../nads/index.js';
import { amountIn } from './inject-resources.js';
import { isObject, type JsonObject } from './object.js';

function neededBy(networks: readonly ParsedNetwork[], nads: (ns: string, name: string) => NadLookup): Map<string, ParsedNetwork[]> {
  const out = new Map<string, ParsedNetwork[]>();
  for (const net of networks) {
    const lookup = nads(net.selection.namespace, net.selection.name);
    if (lookup.status !== 'found') continue;
    for (const r of lookup.nad.resourceNames) {
      const list = out.get(r);
      if (list) list.push(net);
      else out.set(r, [net]);
    }
  }
  return out;
}

/** Errors for the device resources that the new networks need beyond what the pod's containers request. */
export function addedDevices(
  before: readonly ParsedNetwork[],
  after: readonly ParsedNetwork[],
  pod: JsonObject,
  nads: (ns: string, name: string) => NadLookup,
): FieldError[] {
  const errors: FieldError[] = [];
  const old = neededBy(before, nads);
  const spec = pod['spec'];
  const containers = isObject(spec) && Array.isArray(spec['containers']) ? spec['containers'].filter(isObject) : [];
  for (const [resource, users] of neededBy(after, nads)) {
    const had = old.get(resource)?.length ?? 0;
    if (users.length <= had) continue;
    const requested = containers.reduce((sum, c) => sum + amountIn(c, resource), 0);
    if (users.length <= requested) continue;
    // Name the elements the change added: those beyond the old count of their network.
    const oldCount = new Map<string, number>();
    for (const n of old.get(resource) ?? [])
      oldCount.set(`${n.selection.namespace}/${n.selection.name}`, (oldCount.get(`${n.selection.namespace}/${n.selection.name}`) ?? 0) + 1);
    for (const n of users) {
      const ref = `${n.selection.namespace}/${n.selection.name}`;
      const left = oldCount.get(ref) ?? 0;
      if (left > 0) {
        oldCount.set(ref, left - 1);
        continue;
      }
      errors.push(
        forbidden(
          n.path,
          `${ref} needs device resource "${resource}" (${users.length} for the pod's networks; its containers request ${requested}), and a running pod's resources cannot grow: create the pod anew with this network (KubeVirt migrates the VM)`,
        ),
      );
      break;
    }
  }
  return errors;
}
