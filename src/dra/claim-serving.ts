// What a pod's ResourceClaim can serve, judged from the DRA objects netattach holds: whether a
// claim from a ResourceClaimTemplate can hold a device with a network's resourceName (the
// `k8s.cni.cncf.io/resourceName` attribute Multus matches). A request's alternative serves when its
// DeviceClass has that `extendedResourceName`, or when the class's or the request's CEL selectors
// require the attribute; used for netattach.io/networkClaims and for the pod's own claims.
import type { Nad } from '../nads/index.js';
import type { DeviceRequestAlternative, DraView } from './types.js';

type JsonObject = Record<string, unknown>;

/** Every name Multus may look a network's device up by: the extended resource names, then the DRA-only ones. */
export const deviceNamesOf = (nad: Nad): readonly string[] =>
  nad.draOnlyResourceNames?.length ? [...nad.resourceNames, ...nad.draOnlyResourceNames] : nad.resourceNames;

export type Serves = 'yes' | 'no' | 'unknown';

/** Whether one way of serving a device request can yield a device with one of `resourceNames`. */
function alternativeServes(a: DeviceRequestAlternative, resourceNames: readonly string[], dra: DraView): Serves {
  if (resourceNames.some((r) => dra.classesFor(r).some((c) => c.name === a.deviceClassName))) return 'yes';
  // Class and request selectors are ANDed: either one requiring other resourceNames rules it out.
  const required = [dra.deviceClass?.(a.deviceClassName)?.resourceNames, a.resourceNames].filter(
    (x): x is readonly string[] => x !== undefined,
  );
  if (required.length === 0) return 'unknown';
  return required.every((names) => names.some((n) => resourceNames.includes(n))) ? 'yes' : 'no';
}

/** Whether pod claim `entry` can hold a device with one of `resourceNames`, and why not when unknown. */
export function claimServes(
  entry: JsonObject,
  resourceNames: readonly string[],
  namespace: string,
  dra: DraView | undefined,
): { serves: Serves; why?: string; template?: string; classes?: string[] } {
  const template = entry['resourceClaimTemplateName'];
  if (typeof template !== 'string') {
    return {
      serves: 'unknown',
      why: typeof entry['resourceClaimName'] === 'string' ? 'netattach does not read ResourceClaims' : 'no resourceClaimTemplateName',
    };
  }
  if (!dra?.templateDevices || !dra.deviceClass) return { serves: 'unknown', why: 'netattach does not read templates here' };
  const devices = dra.templateDevices(namespace, template);
  if (!devices) {
    const found = dra.template(namespace, template);
    const why =
      found.status === 'unavailable'
        ? found.reason
        : found.status === 'not-found'
          ? `no ResourceClaimTemplate ${template} in namespace ${namespace}`
          : `the requests of ResourceClaimTemplate ${template} are unknown here`;
    return { serves: 'unknown', why };
  }
  const verdicts = devices.requests.map((r): Serves => {
    const each = r.alternatives.map((a) => alternativeServes(a, resourceNames, dra));
    return each.includes('yes') ? 'yes' : each.length > 0 && each.every((v) => v === 'no') ? 'no' : 'unknown';
  });
  const classes = [...new Set(devices.requests.flatMap((r) => r.alternatives.map((a) => a.deviceClassName)))];
  if (verdicts.includes('yes')) return { serves: 'yes', template, classes };
  if (verdicts.length > 0 && verdicts.every((v) => v === 'no')) return { serves: 'no', template, classes };
  return {
    serves: 'unknown',
    why: `no request of ResourceClaimTemplate ${template} names a DeviceClass known to select it`,
    template,
    classes,
  };
}
