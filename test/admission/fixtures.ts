// Builders shared by the admission tests: NAD objects, pods, requests and contexts.
import fastJsonPatch from 'fast-json-patch';
import { StaticNadSource } from '../../src/nads/index.js';
import type { NadLookup } from '../../src/nads/types.js';
import { NO_POLICY, type PolicyEvaluator } from '../../src/policy/types.js';
import {
  DEFAULT_ADMISSION_CONFIG,
  shortWarning,
  type AdmissionConfig,
  type Decision,
  type AdmissionContext,
  type AdmissionRequest,
  type Endpoint,
  type JsonPatchOperation,
  type Operation,
} from '../../src/admission/index.js';

export const NETWORKS = 'k8s.v1.cni.cncf.io/networks';
export const DEFAULT_NETWORK = 'v1.multus-cni.io/default-network';

export interface NadSpec {
  namespace?: string;
  resourceName?: string;
  nodeSelector?: string;
  /** CNI config; '' for "read on the node"; default: a plugin with every capability but bandwidth. */
  config?: string | object;
  annotations?: Record<string, string>;
}

/**
 * A chain whose only plugin is a third-party one declaring `caps`: it reads exactly what it
 * declares (runtimeConfig), and netattach cannot tell what it reads of CNI_ARGS.
 */
export const cniWith = (...caps: string[]) => ({
  cniVersion: '1.0.0',
  name: 'net',
  plugins: [{ type: 'vendor-cni', capabilities: Object.fromEntries(caps.map((c) => [c, true])) }],
});

/** A chain of plugins the table knows, e.g. chain({ type: 'ipvlan', ipam: { type: 'static' } }). */
export const chain = (...plugins: object[]) => ({ cniVersion: '1.0.0', name: 'net', plugins });

export function nadObject(name: string, spec: NadSpec = {}): Record<string, unknown> {
  const annotations: Record<string, string> = { ...(spec.annotations ?? {}) };
  if (spec.resourceName !== undefined) annotations['k8s.v1.cni.cncf.io/resourceName'] = spec.resourceName;
  if (spec.nodeSelector !== undefined) annotations['k8s.v1.cni.cncf.io/nodeSelector'] = spec.nodeSelector;
  const config = spec.config ?? cniWith('ips', 'mac', 'infinibandGUID', 'portMappings');
  return {
    apiVersion: 'k8s.cni.cncf.io/v1',
    kind: 'NetworkAttachmentDefinition',
    metadata: { name, namespace: spec.namespace ?? 'default', annotations },
    spec: { config: typeof config === 'string' ? config : JSON.stringify(config) },
  };
}

/** A synchronous lookup over NAD objects, as the server hands the core after resolving them. */
export function nadLookup(...objects: object[]): (ns: string, name: string) => NadLookup {
  const source = new StaticNadSource(objects);
  return (ns, name) => {
    const nad = source.get(ns, name);
    return nad ? { status: 'found', nad } : { status: 'not-found' };
  };
}

export interface PodSpec {
  name?: string;
  namespace?: string;
  networks?: string;
  defaultNetwork?: string;
  annotations?: Record<string, unknown>;
  containers?: unknown;
  nodeSelector?: Record<string, string>;
  volumes?: unknown[];
}

export function pod(spec: PodSpec = {}): Record<string, unknown> {
  const annotations: Record<string, unknown> = { ...(spec.annotations ?? {}) };
  if (spec.networks !== undefined) annotations[NETWORKS] = spec.networks;
  if (spec.defaultNetwork !== undefined) annotations[DEFAULT_NETWORK] = spec.defaultNetwork;
  const podSpec: Record<string, unknown> = { containers: spec.containers ?? [{ name: 'app', image: 'busybox' }] };
  if (spec.nodeSelector) podSpec['nodeSelector'] = spec.nodeSelector;
  if (spec.volumes) podSpec['volumes'] = spec.volumes;
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: spec.name ?? 'p', namespace: spec.namespace ?? 'default', annotations },
    spec: podSpec,
  };
}

export const POD_RESOURCE = { group: '', version: 'v1', resource: 'pods' };
export const POD_KIND = { group: '', version: 'v1', kind: 'Pod' };

export function request(
  object: unknown,
  opts: {
    operation?: Operation;
    oldObject?: unknown;
    namespace?: string;
    resource?: AdmissionRequest['resource'];
    kind?: AdmissionRequest['kind'];
    subResource?: string;
  } = {},
): AdmissionRequest {
  return {
    uid: 'uid-1',
    kind: opts.kind ?? POD_KIND,
    resource: opts.resource ?? POD_RESOURCE,
    ...(opts.subResource ? { subResource: opts.subResource } : {}),
    namespace: opts.namespace ?? 'default',
    operation: opts.operation ?? 'CREATE',
    userInfo: { username: 'alice', groups: ['system:authenticated'] },
    object,
    oldObject: opts.oldObject ?? null,
  };
}

export function context(
  nads: (ns: string, name: string) => NadLookup,
  opts: {
    endpoint?: Endpoint;
    config?: Partial<AdmissionConfig>;
    policy?: PolicyEvaluator;
    podsUsingNad?: AdmissionContext['podsUsingNad'];
  } = {},
): AdmissionContext {
  return {
    endpoint: opts.endpoint ?? 'mutate',
    nads,
    policy: opts.policy ?? NO_POLICY,
    config: { ...DEFAULT_ADMISSION_CONFIG, ...(opts.config ?? {}) },
    ...(opts.podsUsingNad ? { podsUsingNad: opts.podsUsingNad } : {}),
  };
}

/** Applies a patch the way the apiserver does (validating every operation) and returns the result. */
export function applied(object: unknown, patch: readonly JsonPatchOperation[]): Record<string, unknown> {
  const copy = structuredClone(object);
  return fastJsonPatch.applyPatch(copy, patch as fastJsonPatch.Operation[], true, false).newDocument as Record<string, unknown>;
}

/** A decision's warnings as the response carries them: one line each, cut to kubectl's width. */
export const warningLines = (d: Decision): string[] => d.warnings.map((w) => shortWarning(w));
