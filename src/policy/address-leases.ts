// Address Leases in the API server: what keeps an address unique across replicas. Pure: names,
// holders, the Lease object an address is held by and back, and what an outcome means for the
// request. The I/O is in address-lease-store.ts (over src/kube/leases.ts).
//
// One address held is one coordination.k8s.io/v1 Lease in netattach's namespace, named from the scope
// and the canonical address: two replicas admitting the same address race on one create, and
// the API server (etcd) lets exactly one win.
import { hash } from 'node:crypto';
import { internal } from '../field/index.js';
import type { HeldAddress, AddressKind, Finding } from './types.js';
import { describeHolder } from './rules.js';

/**
 * Bounds on the Leases a request can add (docs/security.md, "Address Leases"). Addresses per pod:
 * MAX_ARBITRATED_ADDRESSES_PER_POD (limits.ts).
 */
export const ADDRESS_LEASE_LIMITS = {
  /**
   * Calls to the API server in flight for Leases, per replica. A burst of real creates (the
   * ReplicaSet controller creates about 20 pods a second; a DPDK pod or a KubeVirt VM holds 1-8
   * addresses, each a create of ~10 ms) keeps 2-4 in flight; 32 leaves ample room, and a forged
   * flood cannot open more connections than that.
   */
  inFlight: 32,
  /** Of those, releases and sweeps at most, so requests always find a slot. */
  background: 8,
  /** Requests' calls waiting for a slot (each waits at most its 1.5 s budget); beyond: unavailable at once. */
  waiting: 512,
  /**
   * Leases whose holder was never seen using the address (pods being created, or never to be),
   * known to this replica. Real pods are seen within seconds of their validating call: 20 creates a
   * second with 8 addresses each for the 35 s window is 5,600 at the most absurd; 4,096 (about
   * 3.5 MB of heap, ~3 MB in etcd) is far above a real burst of that length.
   */
  unconfirmed: 4096,
  /**
   * The same per namespace of the holder: one tenant (a pod creator through the apiserver, whose
   * creates fail after admission) cannot take every slot. 512: 64 VMs of 8 NICs being created in one
   * namespace at the same moment.
   */
  unconfirmedPerNamespace: 512,
} as const;

/** Label on every Lease (the watch's selector). */
// The label and annotation keys keep their names from before the rename ("address-claim"):
// Leases stored by earlier versions must still be found, and upgrades must keep working.
export const LEASE_LABEL = 'netattach.io/address-claim';
export const ANNOTATION = {
  kind: 'netattach.io/address-kind',
  address: 'netattach.io/address',
  scope: 'netattach.io/scope',
  holderKind: 'netattach.io/holder-kind',
  holder: 'netattach.io/holder',
  holderUid: 'netattach.io/holder-uid',
} as const;

/**
 * Who holds a Lease. Today the pod; the one place that decides it is `holderOf`, so that owners
 * that move pods between nodes (KubeVirt VMIs) can hold their pods' addresses as one holder.
 */
export interface LeaseHolder {
  kind: string;
  namespace: string;
  name: string;
  uid?: string;
}

/**
 * What this replica knows of a Lease's holder: `live`, a live pod of the holder uses the address
 * (from the pod watch); `gone`, it did and no longer does (the pod ended); `unconfirmed`, never
 * seen using it: a pod being created (its validating call came moments ago), or one that never
 * will be (a create that failed later, a forged review).
 */
export type HolderState = 'live' | 'gone' | 'unconfirmed';

/** A Lease as stored: what the watch keeps of each Lease. */
export interface StoredLease {
  name: string;
  uid: string;
  resourceVersion: string;
  kind: AddressKind;
  address: string;
  scope: string;
  holder: LeaseHolder;
  /** creationTimestamp, ms since epoch (the API server's clock). */
  created: number;
}

/** An address to hold by a Lease for a request: the HeldAddress with its rule, its holder and its object name. */
export interface WantedLease {
  name: string;
  address: HeldAddress & { unique: NonNullable<HeldAddress['unique']> };
  holder: LeaseHolder;
  /** `cluster` or `network:<ns>/<name>`. */
  scope: string;
}

export type LeaseOutcome =
  | { wanted: WantedLease; result: 'won' }
  /**
   * Another holder has it; `live`: the holder exists (a running pod), else it is being created and
   * its Lease yields to another pod in `yieldsInMs` unless that pod appears.
   */
  | { wanted: WantedLease; result: 'lost'; holder: LeaseHolder; live: boolean; yieldsInMs?: number }
  | { wanted: WantedLease; result: 'unavailable'; reason: string }
  /** `count` addresses past the per-pod bound (`wanted` the first of them): judged against live pods only, not claimed. */
  | { wanted: WantedLease; result: 'not-claimed'; count: number; limit: number };

/**
 * The holder of a pod's Leases: the owner that moves it (a KubeVirt VMI: its migration target
 * holds the same addresses; its key, the owner's uid, as the holder's uid), else the pod itself,
 * by namespace, name and uid. Undefined before the pod has a name and a uid: the apiserver sets
 * both before validating admission, where Leases are made, so a review without them did not come
 * from the apiserver's validating call and takes no Lease (it is still judged against live pods).
 */
export function holderOf(pod: HeldAddress['pod']): LeaseHolder | undefined {
  if (pod.owner) return { kind: pod.owner.kind, namespace: pod.owner.namespace, name: pod.owner.name, uid: pod.owner.key };
  if (!pod.name || !pod.uid) return undefined;
  return { kind: 'Pod', namespace: pod.namespace, name: pod.name, uid: pod.uid };
}

export const holderKey = (h: LeaseHolder): string => `${h.kind} ${h.namespace}/${h.name}`;

/**
 * The same holder name: same kind, namespace and name (a Pod and a VMI of one name are two
 * holders). The uid is compared by the callers, which know whether both are set.
 */
export const sameHolder = (a: LeaseHolder, b: LeaseHolder): boolean =>
  a.kind === b.kind && a.namespace === b.namespace && a.name === b.name;

export const leaseScope = (c: HeldAddress & { unique: NonNullable<HeldAddress['unique']> }): string =>
  c.unique.scope === 'Cluster' ? 'cluster' : c.scope;

/** `mac-<hash>` or `guid-<hash>`: 160 bits of SHA-256 of scope and address, a valid object name of fixed length. */
export function leaseName(kind: AddressKind, scope: string, address: string): string {
  // The one-shot hash: a Hash object per Lease was 1.5 % of the realistic mix's CPU (issue 28).
  const digest = hash('sha256', `${scope}\n${address}`, 'hex').slice(0, 40);
  return `${kind === 'mac' ? 'mac' : 'guid'}-${digest}`;
}

/**
 * The addresses of an admitted pod that need an address Lease: judged by a uniqueAddresses rule whose
 * action is Enforce or Warn (an Audit rule only observes: it makes no write), one per name.
 */
export function wantedLeases(addresses: readonly HeldAddress[]): WantedLease[] {
  const out = new Map<string, WantedLease>();
  for (const c of addresses) {
    if (!c.unique || c.unique.action === 'Audit') continue;
    const holder = holderOf(c.pod);
    if (!holder) continue;
    const address = c as WantedLease['address'];
    const scope = leaseScope(address);
    const name = leaseName(c.kind, scope, c.value);
    if (!out.has(name)) out.set(name, { name, address, holder, scope });
  }
  return [...out.values()];
}

/** The Lease object an address is held by. `pendingSeconds`: how long it may wait for its holder to exist. */
export function leaseObject(w: WantedLease, namespace: string, pendingSeconds: number, now: Date): Record<string, unknown> {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: {
      name: w.name,
      namespace,
      labels: { [LEASE_LABEL]: 'true', 'app.kubernetes.io/managed-by': 'netattach' },
      annotations: {
        [ANNOTATION.kind]: w.address.kind,
        [ANNOTATION.address]: w.address.value,
        [ANNOTATION.scope]: w.scope,
        [ANNOTATION.holderKind]: w.holder.kind,
        [ANNOTATION.holder]: `${w.holder.namespace}/${w.holder.name}`,
        ...(w.holder.uid ? { [ANNOTATION.holderUid]: w.holder.uid } : {}),
      },
    },
    spec: {
      holderIdentity: holderKey(w.holder),
      leaseDurationSeconds: pendingSeconds,
      acquireTime: now.toISOString().replace('Z', '000Z'),
    },
  };
}

/** A Lease read back (list, watch, GET); undefined when it is not a well-formed claim. */
export function parseLease(obj: unknown): StoredLease | undefined {
  const md = (obj as { metadata?: Record<string, unknown> } | null)?.metadata;
  if (!md || typeof md.name !== 'string' || typeof md.uid !== 'string') return undefined;
  const a = (md.annotations ?? {}) as Record<string, unknown>;
  const holder = a[ANNOTATION.holder];
  const kind = a[ANNOTATION.kind];
  if (typeof holder !== 'string' || !holder.includes('/') || (kind !== 'mac' && kind !== 'infiniband-guid')) return undefined;
  const slash = holder.indexOf('/');
  const uid = a[ANNOTATION.holderUid];
  const created = Date.parse(typeof md.creationTimestamp === 'string' ? md.creationTimestamp : '');
  return {
    name: md.name,
    uid: md.uid,
    resourceVersion: typeof md.resourceVersion === 'string' ? md.resourceVersion : '',
    kind,
    address: typeof a[ANNOTATION.address] === 'string' ? (a[ANNOTATION.address] as string) : '',
    scope: typeof a[ANNOTATION.scope] === 'string' ? (a[ANNOTATION.scope] as string) : '',
    holder: {
      kind: typeof a[ANNOTATION.holderKind] === 'string' ? (a[ANNOTATION.holderKind] as string) : 'Pod',
      namespace: holder.slice(0, slash),
      name: holder.slice(slash + 1),
      ...(typeof uid === 'string' ? { uid } : {}),
    },
    created: Number.isNaN(created) ? 0 : created,
  };
}

/**
 * May a Lease be taken over (or swept)? When its holder is gone (the pod was seen with the
 * address and ended), or was never seen and the Lease is older than the confirmation window: a
 * pod being created right now through another replica is not in the pod watch yet, but its Lease
 * is young. The caller makes sure the pod watch is current.
 */
export const leaseIsStale = (c: StoredLease, holder: HolderState, now: number, windowMs: number): boolean =>
  holder === 'gone' || (holder === 'unconfirmed' && now - c.created > windowMs);

/** Milliseconds until an unconfirmed Lease yields (0 when it already may). */
export const yieldsIn = (c: StoredLease, now: number, windowMs: number): number => Math.max(0, c.created + windowMs - now);

/** What an outcome adds to the request's decision: a finding with the rule's action, or nothing for a win. */
export function outcomeFinding(o: LeaseOutcome, requestNamespace: string): { finding: Finding; unavailable: boolean } | undefined {
  if (o.result === 'won') return undefined;
  const u = o.wanted.address.unique;
  const prefix = `policy "${u.policy}" (uniqueAddresses): `;
  if (o.result === 'lost') {
    const network = o.wanted.scope.startsWith('network:') ? o.wanted.scope.slice(8) : '*';
    const owner =
      o.holder.kind === 'Pod'
        ? undefined
        : {
            key: o.holder.uid ?? '',
            label: `${o.holder.kind === 'VirtualMachineInstance' ? 'VM' : o.holder.kind} ${o.holder.namespace}/${o.holder.name}`,
            namespace: o.holder.namespace,
            kind: o.holder.kind,
            name: o.holder.name,
          };
    const who = describeHolder(
      { pod: `${o.holder.namespace}/${o.holder.name}`, network, ...(o.live ? {} : { expires: 0 }), ...(owner ? { owner } : {}) },
      requestNamespace,
    );
    // A holder not seen yet may never come (a create that failed later, a forged review): say when
    // its Lease yields, so a pod denied by it knows a retry will pass.
    const yields =
      !o.live && o.yieldsInMs !== undefined
        ? `; unless that pod appears, its claim yields in ${Math.max(1, Math.ceil(o.yieldsInMs / 1000))} s`
        : '';
    return {
      finding: {
        policy: u.policy,
        rule: 'uniqueAddresses',
        action: u.action,
        error: { path: u.path, type: 'Forbidden', reason: `${prefix}${u.label} is already used by ${who} (scope ${u.scope})${yields}` },
      },
      unavailable: false,
    };
  }
  if (o.result === 'not-claimed') {
    // Never a denial: the pod was judged against live pods; only the arbitration across replicas is missing.
    return {
      finding: {
        policy: u.policy,
        rule: 'uniqueAddresses',
        action: 'Warn',
        error: {
          path: u.path,
          type: 'Too many',
          reason: `${prefix}${o.count} addresses from here on were judged against running pods only, not claimed across replicas (at most ${o.limit} per pod are)`,
        },
      },
      unavailable: false,
    };
  }
  return {
    finding: {
      policy: u.policy,
      rule: 'uniqueAddresses',
      action: u.action,
      error: internal(
        u.path,
        `${prefix}${u.label} could not be claimed in the API server (${o.reason}); ${u.action === 'Enforce' ? 'retry' : 'admitted without the check across replicas'}`,
      ),
    },
    unavailable: u.action === 'Enforce',
  };
}
