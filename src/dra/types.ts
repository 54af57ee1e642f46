// What netattach knows of Dynamic Resource Allocation (resource.k8s.io/v1): which DeviceClasses
// serve an extended resource (KEP-5004, `spec.extendedResourceName`) and which
// ResourceClaimTemplates exist. Read by the admission core through `DraView`, synchronously.

export const RESOURCE_API = '/apis/resource.k8s.io/v1';

/** A DeviceClass as far as netattach cares: the extended resource it serves, if any. */
export interface DeviceClassInfo {
  name: string;
  extendedResourceName?: string;
  /** RFC 3339, for "the class created later wins" (the scheduler's rule for a shared name). */
  creationTimestamp?: string;
  /**
   * The `k8s.cni.cncf.io/resourceName` values its selectors require of a device, when they
   * certainly require one (src/dra/selectors.ts); absent when they say nothing netattach is sure of.
   */
  resourceNames?: readonly string[];
}

/** One way a device request may be served: a DeviceClass, and what the request's own selectors require. */
export interface DeviceRequestAlternative {
  deviceClassName: string;
  /** As DeviceClassInfo.resourceNames, from the request's own selectors (ANDed with the class's). */
  resourceNames?: readonly string[];
}

/** The device requests of a ResourceClaimTemplate: each served by one of its alternatives. */
export interface TemplateDevices {
  requests: Array<{ name: string; alternatives: DeviceRequestAlternative[] }>;
}

export type TemplateLookup =
  | { status: 'found' }
  | { status: 'not-found' }
  /** The templates could not be read (watch not synced, API error): not the same as absent. */
  | { status: 'unavailable'; reason: string };

export interface DraView {
  /** DeviceClasses whose `spec.extendedResourceName` is `resource`, the one the scheduler picks first. */
  classesFor(resource: string): readonly DeviceClassInfo[];
  /** Whether ResourceClaimTemplate `namespace/name` exists. */
  template(namespace: string, name: string): TemplateLookup;
  /** Namespaces holding a ResourceClaimTemplate of this name (for NAD warnings and `check`); undefined when unknown. */
  templateNamespaces?(name: string): readonly string[] | undefined;
  /** The DeviceClass of this name; undefined when absent or not read yet. */
  deviceClass?(name: string): DeviceClassInfo | undefined;
  /** The device requests of ResourceClaimTemplate `namespace/name`; undefined when not held (or not read). */
  templateDevices?(namespace: string, name: string): TemplateDevices | undefined;
}

/**
 * The scheduler's pick among classes sharing one extendedResourceName: the one created last, ties
 * broken by the name sorted first (DeviceClassSpec.extendedResourceName's documentation).
 */
export function byScheduler(a: DeviceClassInfo, b: DeviceClassInfo): number {
  const ta = a.creationTimestamp ?? '';
  const tb = b.creationTimestamp ?? '';
  if (ta !== tb) return ta < tb ? 1 : -1;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}
