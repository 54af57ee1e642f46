// Asks the API server, not the pod watch, whether a Lease's holder pod runs with its address:
// before a Lease the watch never confirmed is taken over or swept. A watch lagging more than the
// confirmation window (an overloaded apiserver) would otherwise let a second pod take the address
// of one that runs, and both would run with it. Rare by design: only Leases that look stale cost a GET.
import { getObject, type KubeTransport } from '../kube/index.js';
import { DEFAULT_NETWORK_ANNOTATION, NETWORKS_ANNOTATION } from '../annotation/index.js';
import { podNetworkFacts } from './pod-source.js';
import type { LeaseHolder } from './address-leases.js';
import type { AddressKind } from './types.js';

/** true: the holder runs with the address; false: it does not (gone, ended, another uid or address); undefined: cannot tell. */
export type HolderLookup = (
  holder: LeaseHolder,
  address: { kind: AddressKind; value: string },
  signal: AbortSignal,
) => Promise<boolean | undefined>;

interface PodLike {
  metadata?: { namespace?: string; name?: string; uid?: string; annotations?: Record<string, string> };
  status?: { phase?: string };
}

/**
 * Does this pod, as the API server returned it, run as `holder` with the address? Its addresses are
 * read as the pod watch reads them (podNetworkFacts), so the answer is the one the index will give
 * once the watch catches up. A pod that finished (Succeeded, Failed) holds nothing: the watch drops it.
 */
export function podRunsWith(
  obj: unknown,
  holder: LeaseHolder,
  address: { kind: AddressKind; value: string },
  defaultNetworkNamespace?: string,
): boolean {
  if (holder.kind !== 'Pod' || typeof obj !== 'object' || obj === null) return false;
  const pod = obj as PodLike;
  const md = pod.metadata;
  if (!md || md.namespace !== holder.namespace || md.name !== holder.name) return false;
  if (holder.uid !== undefined && md.uid !== holder.uid) return false;
  const phase = pod.status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') return false;
  const annotations = md.annotations ?? {};
  const facts = podNetworkFacts(
    md.namespace,
    annotations[NETWORKS_ANNOTATION],
    annotations[DEFAULT_NETWORK_ANNOTATION],
    defaultNetworkNamespace,
  );
  return facts.addresses.some((a) => a.kind === address.kind && a.value === address.value);
}

/** The lookup over the API server: one GET of the holder pod, within `timeoutMs`; holders that are not pods (a VMI) are not asked. */
export function apiHolderLookup(
  transport: KubeTransport,
  options: { defaultNetworkNamespace?: string; timeoutMs?: number } = {},
): HolderLookup {
  const timeoutMs = options.timeoutMs ?? 2_000;
  return async (holder, address, signal) => {
    if (holder.kind !== 'Pod') return undefined;
    const path = `/api/v1/namespaces/${encodeURIComponent(holder.namespace)}/pods/${encodeURIComponent(holder.name)}`;
    const got = await getObject(transport, path, { timeoutMs, signal });
    if (got.status === 'not-found') return false;
    if (got.status === 'unavailable') return undefined;
    return podRunsWith(got.object, holder, address, options.defaultNetworkNamespace);
  };
}
