// Feeds the address index (and, optionally, the NAD usage index) from a metadata-only list/watch
// of pods: only namespace, name, uid and the two network annotations (networks, default-network)
// are read, and only the addresses and NAD keys are kept. Pods that finished (Succeeded, Failed) leave the watch
// through its field selector, which the apiserver reports as DELETED, so their addresses are
// released although metadata carries no phase.
import { LRUCache } from 'lru-cache';
import {
  DEFAULT_MULTUS_NAMESPACE,
  parseDefaultNetwork,
  parseNetworks,
  DEFAULT_NETWORK_ANNOTATION,
  NETWORKS_ANNOTATION,
  type ParsedNetwork,
} from '../annotation/index.js';
import { addressFacts } from './addresses.js';
import { DEFAULT_SHARING_OWNERS, sharingOwnerOf } from './owner.js';
import type { AddressIndex, PodAddress } from './address-index.js';
import type { SharingOwner } from './owner.js';
import type { NadUsage } from './nad-usage.js';
import type { PolicyLogger } from './log.js';
import {
  ListWatch,
  METADATA_ACCEPT,
  METADATA_WATCH_ACCEPT,
  transportFor,
  WatchedCache,
  type KubeObject,
  type KubeTransport,
  type KubeCredentials,
  type ListWatchHandler,
} from '../kube/index.js';

export const LIVE_PODS_FIELD_SELECTOR = 'status.phase!=Succeeded,status.phase!=Failed';

/** What the index keeps of a pod's network annotations: its addresses and the NADs (`ns/name`) it uses. */
export interface PodNetworkFacts {
  readonly addresses: readonly PodAddress[];
  readonly nads: readonly string[];
}

/**
 * Answers of podNetworkFacts by their inputs. A starting pod comes as an ADDED event and then
 * several MODIFIED ones (scheduled, containers started, ready: the metadata watch sends every
 * change) between other pods' events, each read by the index and by the background audit; the
 * annotation is the same text every time. Bounded by entries and by the estimated bytes held
 * (`factsSize`); entries are shared: read-only. 1 MiB (about 2,000 entries of one address) spans
 * the events of the pods started in the last seconds; 2 MiB held ~6 B more per pod at 150,000.
 */
export const POD_FACTS_CACHE_BYTES = 1024 * 1024;
const factsSize = (facts: PodNetworkFacts, key: string): number =>
  2 * key.length + 256 + 128 * (facts.addresses.length + facts.nads.length);
const factsCache = new LRUCache<string, PodNetworkFacts>({ max: 4096, maxSize: POD_FACTS_CACHE_BYTES, sizeCalculation: factsSize });
/** Texts longer than this are read every time (a real annotation is a few hundred bytes). */
const MAX_CACHED_TEXT = 4096;
/** A key no two different inputs share: every part length-prefixed. */
const factsKey = (parts: ReadonlyArray<string | undefined>): string => {
  let out = '';
  for (const p of parts) out += p === undefined ? '-|' : `${p.length}:${p}|`;
  return out;
};

/**
 * Reads a pod's network annotations once for both indexes: the networks annotation and the
 * default-network one, whose unqualified name resolves in `defaultNetworkNamespace` (as the
 * admission core reads it, so a reservation and the pod it becomes hold the same addresses).
 */
export function podNetworkFacts(
  namespace: string,
  annotation: string | undefined,
  defaultNetwork?: string,
  defaultNetworkNamespace = DEFAULT_MULTUS_NAMESPACE,
): PodNetworkFacts {
  const cacheable = (annotation?.length ?? 0) + (defaultNetwork?.length ?? 0) <= MAX_CACHED_TEXT;
  const key = cacheable ? factsKey([namespace, annotation, defaultNetwork, defaultNetworkNamespace]) : '';
  const cached = cacheable ? factsCache.get(key) : undefined;
  if (cached) return cached;
  const selected: ParsedNetwork[] = [];
  if (annotation) selected.push(...parseNetworks(annotation, { namespace }).networks);
  if (defaultNetwork) selected.push(...parseDefaultNetwork(defaultNetwork, { defaultNamespace: defaultNetworkNamespace }).networks);
  // Arrays of their exact length (map, not push: a pushed one keeps room for 16 more, 136 B per
  // cached entry).
  const nads = selected.map((n) => `${n.selection.namespace}/${n.selection.name}`);
  // The same reading as admission's (top level and cni-args), so a reservation and the pod it
  // becomes hold the same addresses.
  const addresses: PodAddress[] = addressFacts(selected).map((a) => ({ kind: a.kind, value: a.value, network: a.network }));
  const facts: PodNetworkFacts = { addresses, nads };
  if (cacheable) factsCache.set(key, facts);
  return facts;
}

/** A pod as the index keeps it: what its address Leases are confirmed and released by. */
export interface IndexedPod {
  namespace: string;
  name: string;
  uid?: string;
  owner?: SharingOwner;
}

/** Indexes a pod's addresses; the pod as indexed (undefined without a namespace and name). */
export function indexPod(
  index: AddressIndex,
  obj: KubeObject,
  usage?: NadUsage,
  defaultNetworkNamespace?: string,
  sharingOwners: readonly string[] = DEFAULT_SHARING_OWNERS,
): IndexedPod | undefined {
  const md = obj.metadata;
  if (!md?.namespace || !md.name) return undefined;
  const facts = podNetworkFacts(
    md.namespace,
    md.annotations?.[NETWORKS_ANNOTATION],
    md.annotations?.[DEFAULT_NETWORK_ANNOTATION],
    defaultNetworkNamespace,
  );
  const ref: IndexedPod = { namespace: md.namespace, name: md.name };
  if (md.uid) ref.uid = md.uid;
  const owner = facts.addresses.length ? sharingOwnerOf(md, sharingOwners, md.namespace) : undefined;
  if (owner) ref.owner = owner;
  index.setPod(ref, facts.addresses);
  usage?.setPod(md.namespace, md.name, facts.nads);
  return ref;
}

function unindexPod(index: AddressIndex, obj: KubeObject, usage?: NadUsage): void {
  const md = obj.metadata;
  if (!md?.namespace || !md.name) return;
  index.removePod(md.namespace, md.name);
  usage?.removePod(md.namespace, md.name);
}

/** start() resolves after the first full list: before that, uniqueness cannot be judged. */
export class PodAddressSource extends WatchedCache {
  protected readonly listWatch: ListWatch;

  constructor(
    kc: KubeCredentials | undefined,
    index: AddressIndex,
    options: {
      transport?: KubeTransport;
      logger?: PolicyLogger;
      pageSize?: number;
      backoffMs?: number;
      /** Also keep which NADs each pod uses (warnings on NAD DELETE). */
      usage?: NadUsage;
      /** Where an unqualified default-network name resolves (`--default-network-namespace`). */
      defaultNetworkNamespace?: string;
      /** `group/Kind` of owners whose pods share addresses (`--address-sharing-owner`). */
      sharingOwners?: readonly string[];
      /** A pod ended (its DELETED event): e.g. release its address Leases. */
      onRemove?: (pod: { namespace: string; name: string; uid?: string }) => void;
      /** A pod was indexed (added or changed, after the index): e.g. confirm its address Leases. */
      onIndexed?: (pod: IndexedPod) => void;
      /** Also told of every event, after the indexes (the background audit: one watch serves both). */
      observer?: ListWatchHandler;
    } = {},
  ) {
    super();
    this.listWatch = new ListWatch({
      transport: transportFor('PodAddressSource', kc, options.transport),
      path: '/api/v1/pods',
      listAccept: METADATA_ACCEPT,
      watchAccept: METADATA_WATCH_ACCEPT,
      fieldSelector: LIVE_PODS_FIELD_SELECTOR,
      pageSize: options.pageSize,
      backoffMs: options.backoffMs,
      onError: (err) => options.logger?.warn({ err: String(err) }, 'pod watch failed; retrying'),
      handler: {
        resync: () => (index.beginResync(), options.usage?.beginResync(), options.observer?.resync()),
        upsert: (o) => {
          const pod = indexPod(index, o, options.usage, options.defaultNetworkNamespace, options.sharingOwners);
          if (pod) options.onIndexed?.(pod);
          options.observer?.upsert(o);
        },
        remove: (o) => {
          unindexPod(index, o, options.usage);
          const md = o.metadata;
          if (options.onRemove && md?.namespace && md.name)
            options.onRemove({ namespace: md.namespace, name: md.name, ...(md.uid ? { uid: md.uid } : {}) });
          options.observer?.remove(o);
        },
        resynced: () => (index.endResync(), options.usage?.endResync(), options.observer?.resynced()),
      },
    });
  }
}
