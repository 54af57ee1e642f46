// The networks a pod (or pod template) asks for: both annotations, parsed, with their field paths.
import { parseDefaultNetwork, parseNetworks } from '../annotation/index.js';
import { DEFAULT_NETWORK_ANNOTATION, NETWORKS_ANNOTATION, type ParsedNetwork } from '../annotation/types.js';
import { key, type FieldError } from '../field/index.js';
import { readAnnotations, type JsonObject, type PodLocation } from './object.js';
import type { AdmissionConfig } from './types.js';

export const NETWORK_ANNOTATIONS = [NETWORKS_ANNOTATION, DEFAULT_NETWORK_ANNOTATION] as const;

export interface PodNetworks {
  /** Secondary networks first, then the default network (if the annotation names one). */
  networks: ParsedNetwork[];
  errors: FieldError[];
  warnings: FieldError[];
  /** Field path of the networks annotation. */
  annotationPath: string;
  /** Raw annotation values as sent (absent keys missing). */
  raw: Map<string, string>;
}

/**
 * The networks whose NAD reference is well-formed: looking up a name the parser already rejected
 * would only add a "not found" to the real error.
 */
export function resolvable(nets: PodNetworks): ParsedNetwork[] {
  if (nets.errors.length === 0) return nets.networks.slice(); // the common case, called per stage
  const bad = new Set(nets.errors.map((e) => e.path));
  return nets.networks.filter((n) => !bad.has(n.path) && !bad.has(`${n.path}.name`) && !bad.has(`${n.path}.namespace`));
}

export const annotationPath = (loc: PodLocation, annotation: string): string =>
  key(`${loc.metadataPath}.annotations`, annotation);

// plan() and review() of one request read the same object: parse its annotations once. Keyed by
// the object's identity (requests are never mutated; mutation works on a copy), and by the
// options the result depends on. Results are shared: callers must not modify them.
const parsed = new WeakMap<JsonObject, { options: string; value: PodNetworks }>();

export function readPodNetworks(
  pod: JsonObject | undefined,
  loc: PodLocation,
  namespace: string,
  config: AdmissionConfig,
): PodNetworks {
  if (pod === undefined) return parsePodNetworks(pod, loc, namespace, config);
  const options = `${loc.metadataPath}\n${namespace}\n${config.defaultNetworkNamespace}`;
  const memo = parsed.get(pod);
  if (memo?.options === options) return memo.value;
  const value = parsePodNetworks(pod, loc, namespace, config);
  parsed.set(pod, { options, value });
  return value;
}

function parsePodNetworks(
  pod: JsonObject | undefined,
  loc: PodLocation,
  namespace: string,
  config: AdmissionConfig,
): PodNetworks {
  const { values, errors } = readAnnotations(pod, loc.metadataPath, NETWORK_ANNOTATIONS);
  const networksPath = annotationPath(loc, NETWORKS_ANNOTATION);
  const out: PodNetworks = { networks: [], errors, warnings: [], annotationPath: networksPath, raw: values };
  const networks = values.get(NETWORKS_ANNOTATION);
  if (networks !== undefined) {
    const r = parseNetworks(networks, { namespace, path: networksPath });
    out.networks.push(...r.networks);
    out.errors.push(...r.errors);
    out.warnings.push(...r.warnings);
  }
  const defaultNetwork = values.get(DEFAULT_NETWORK_ANNOTATION);
  if (defaultNetwork !== undefined) {
    const r = parseDefaultNetwork(defaultNetwork, {
      defaultNamespace: config.defaultNetworkNamespace,
      path: annotationPath(loc, DEFAULT_NETWORK_ANNOTATION),
    });
    out.networks.push(...r.networks);
    out.errors.push(...r.errors);
    out.warnings.push(...r.warnings);
  }
  return out;
}
