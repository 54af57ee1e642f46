import { isObject, stringAt } from './object.js';
import type { AdmissionRequest } from './types.js';

/**
 * The namespace that unqualified network names resolve in: the request's (the apiserver fills it
 * for every namespaced object, generateName pods and workloads' pod templates alike), else the
 * object's own, else `default`.
 */
export function namespaceOf(request: AdmissionRequest): string {
  if (request.namespace) return request.namespace;
  const meta = isObject(request.object) ? request.object['metadata'] : undefined;
  return stringAt(meta, 'namespace') || 'default';
}
