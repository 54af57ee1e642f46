// Feeds the address index from a metadata-only list/watch of pods: only namespace, name, uid
// and the networks annotation are read, and only the addresses are kept. Pods that finished
// (Succeeded, Failed) leave the watch through its field selector, which the apiserver reports
// as DELETED, so their addresses are released although metadata carries no phase.
import type { KubeConfig } from '@kubernetes/client-node';
import { canonicalGuid, canonicalMac, parseNetworks } from '../annotation/index.js';
import { NETWORKS_ANNOTATION } from '../annotation/types.js';
import type { AddressIndex, PodAddress } from './address-index.js';
import type { PolicyLogger } from './log.js';
import { kubeTransport, METADATA_ACCEPT, METADATA_WATCH_ACCEPT, type KubeTransport } from './kube/transport.js';
import { ListWatch, type KubeObject } from './kube/list-watch.js';

export const LIVE_PODS_FIELD_SELECTOR = 'status.phase!=Succeeded,status.phase!=Failed';

/** The addresses a pod's networks annotation requests, canonical, with their networks. */
export function podAddresses(namespace: string, annotation: string | undefined): PodAddress[] {
  if (!annotation) return [];
  const out: PodAddress[] = [];
  for (const n of parseNetworks(annotation, { namespace }).networks) {
    const network = `${n.selection.namespace}/${n.selection.name}`;
    const mac = typeof n.selection.mac === 'string' ? canonicalMac(n.selection.mac) : undefined;
    if (mac) out.push({ kind: 'mac', value: mac, network });
    const g = n.selection['infiniband-guid'];
    const guid = typeof g === 'string' ? canonicalGuid(g) : undefined;
    if (guid) out.push({ kind: 'infiniband-guid', value: guid, network });
  }
  return out;
}

export function indexPod(index: AddressIndex, obj: KubeObject): void {
  const md = obj.metadata;
  if (!md?.namespace || !md.name) return;
  const addresses = podAddresses(md.namespace, md.annotations?.[NETWORKS_ANNOTATION]);
  index.setPod(md.uid ? { namespace: md.namespace, name: md.name, uid: md.uid } : { namespace: md.namespace, name: md.name }, addresses);
}

export class PodAddressSource {
  private readonly listWatch: ListWatch;

  constructor(
    kc: KubeConfig | undefined,
    index: AddressIndex,
    options: { transport?: KubeTransport; logger?: PolicyLogger; pageSize?: number; backoffMs?: number } = {},
  ) {
    const transport = options.transport ?? (kc ? kubeTransport(kc) : undefined);
    if (!transport) throw new Error('PodAddressSource needs a KubeConfig or a transport');
    this.listWatch = new ListWatch({
      transport,
      path: '/api/v1/pods',
      listAccept: METADATA_ACCEPT,
      watchAccept: METADATA_WATCH_ACCEPT,
      fieldSelector: LIVE_PODS_FIELD_SELECTOR,
      pageSize: options.pageSize,
      backoffMs: options.backoffMs,
      onError: (err) => options.logger?.warn({ err: String(err) }, 'pod watch failed; retrying'),
      handler: {
        resync: () => index.beginResync(),
        upsert: (o) => indexPod(index, o),
        remove: (o) => void (o.metadata?.namespace && o.metadata.name && index.removePod(o.metadata.namespace, o.metadata.name)),
        resynced: () => index.endResync(),
      },
    });
  }

  /** Resolves after the first full list: before that, uniqueness cannot be judged. */
  start(): Promise<void> {
    return this.listWatch.start();
  }

  stop(): Promise<void> {
    return this.listWatch.stop();
  }

  synced(): boolean {
    return this.listWatch.synced();
  }
}
