// The identity of what a review is about, checked before anything is kept. kube-apiserver calls
// mutating webhooks before it validates the object, so a Pod CREATE can carry a 1.8 MB name that
// the apiserver refuses only later; by then a reservation, an address Lease or an interned namespace would
// hold it (issue 37). Kubernetes refuses these values anyway, so denying them here denies no pod
// that could run, and the denial names the field and the limit.
import { dns1123LabelProblem, dns1123SubdomainProblem } from '../annotation/index.js';
import { invalid, tooLong, type FieldError } from '../field/index.js';
import { isObject } from './object.js';
import type { AdmissionRequest } from './types.js';

/** Object names (a DNS-1123 subdomain: pods, workloads, NADs, VMs). */
export const MAX_NAME_BYTES = 253;
/** Namespaces (a DNS-1123 label). */
export const MAX_NAMESPACE_BYTES = 63;
/**
 * Object uids. The apiserver writes a 36-character UUID over whatever a create carries; a longer
 * one is a forged or hand-made review, and would be copied into every Lease netattach writes.
 */
export const MAX_OBJECT_UID_BYTES = 128;

/** What is wrong with the request's and its object's name, generateName, namespace and uid. */
export function identityErrors(request: AdmissionRequest): FieldError[] {
  const errors: FieldError[] = [];
  const check = (path: string, value: unknown, max: number, shape?: (text: string) => string | undefined): void => {
    if (typeof value !== 'string' || value === '') return;
    if (value.length > max) errors.push(tooLong(path, `string(${value.length} chars)`, max));
    else {
      const problem = shape?.(value);
      if (problem) errors.push(invalid(path, value, problem));
    }
  };
  check('request.name', request.name, MAX_NAME_BYTES);
  check('request.namespace', request.namespace, MAX_NAMESPACE_BYTES, dns1123LabelProblem);
  const metadata = isObject(request.object) ? request.object['metadata'] : undefined;
  if (isObject(metadata)) {
    check('metadata.name', metadata['name'], MAX_NAME_BYTES, dns1123SubdomainProblem);
    // generateName is a prefix: Kubernetes checks it as its maskTrailingDash leaves it (the last
    // two characters replaced by "a" when it ends with '-').
    check('metadata.generateName', metadata['generateName'], MAX_NAME_BYTES, (p) =>
      dns1123SubdomainProblem(p.length > 1 && p.endsWith('-') ? `${p.slice(0, -2)}a` : p),
    );
    check('metadata.namespace', metadata['namespace'], MAX_NAMESPACE_BYTES, dns1123LabelProblem);
    check('metadata.uid', metadata['uid'], MAX_OBJECT_UID_BYTES);
  }
  return errors;
}
