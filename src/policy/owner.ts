// Owners that move their pods: KubeVirt runs a VM in a virt-launcher pod and, for a live
// migration, starts a target pod (and sometimes a "doppelganger") while the source still runs,
// all carrying the VM's MACs. Pods whose controller ownerReference is such an owner hold their
// addresses as one holder. Owners whose pods are replicas (ReplicaSet, StatefulSet) are not
// listed: two of their pods with one MAC still conflict.

/** `group/Kind` of owners whose pods share addresses; `--address-sharing-owner` replaces it. */
export const DEFAULT_SHARING_OWNERS: readonly string[] = ['kubevirt.io/VirtualMachineInstance'];

/** The owner a pod's addresses belong to: compared by `key`, named by `label` in messages. */
export interface SharingOwner {
  /** The owner's uid, or `group/Kind/namespace/name` when the reference carries none. */
  key: string;
  /** e.g. `VM team-a/vm1`. */
  label: string;
  /** Namespace of the owner (the pod's), for messages that must not name other namespaces' objects. */
  namespace: string;
  /** The owner's kind and name (an address Lease in the API server is held by the owner). */
  kind: string;
  name: string;
  /**
   * The owner as named before it exists (a VM judged at apply time: its VMI, of the VM's name, has
   * no uid yet): the pods of any owner of this kind, namespace and name are its own.
   */
  anyUid?: boolean;
}

/** Whether `holder` (a pod's or reservation's owner) is `self`. */
export function sameOwner(self: SharingOwner | undefined, holder: SharingOwner | undefined): boolean {
  if (!self || !holder) return false;
  if (self.key === holder.key) return true;
  return self.anyUid === true && holder.kind === self.kind && holder.name === self.name && holder.namespace === self.namespace;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The controller ownerReference of `metadata`, when its `group/Kind` is one of `owners`. */
export function sharingOwnerOf(metadata: unknown, owners: readonly string[], namespace: string): SharingOwner | undefined {
  if (owners.length === 0 || !isObject(metadata) || !Array.isArray(metadata.ownerReferences)) return undefined;
  for (const ref of metadata.ownerReferences) {
    if (!isObject(ref) || ref.controller !== true) continue;
    const { apiVersion, kind, name, uid } = ref;
    if (typeof apiVersion !== 'string' || typeof kind !== 'string' || typeof name !== 'string' || name === '') return undefined;
    // The apiserver does not bound an ownerReference's name or uid; the holder keeps both, so an
    // owner past the bounds of a name (253) or a uid (128) shares nothing: its pods hold their own.
    if (name.length > 253 || (typeof uid === 'string' && uid.length > 128) || apiVersion.length > 253 || kind.length > 63) return undefined;
    const slash = apiVersion.indexOf('/');
    const group = slash < 0 ? '' : apiVersion.slice(0, slash);
    const groupKind = `${group}/${kind}`;
    if (!owners.includes(groupKind)) return undefined;
    const label = `${groupKind === 'kubevirt.io/VirtualMachineInstance' ? 'VM' : kind} ${namespace}/${name}`;
    return { key: typeof uid === 'string' && uid !== '' ? uid : `${groupKind}/${namespace}/${name}`, label, namespace, kind, name };
  }
  return undefined;
}

/** Parses `group/Kind` entries of `--address-sharing-owner`; throws a RangeError naming a bad one. */
export function parseSharingOwners(entries: readonly string[]): string[] {
  for (const e of entries) {
    if (!/^[a-z0-9.-]*\/[A-Z][A-Za-z0-9]*$/.test(e)) {
      throw new RangeError(
        `--address-sharing-owner: invalid value ${JSON.stringify(e)}: expected group/Kind, e.g. kubevirt.io/VirtualMachineInstance`,
      );
    }
  }
  return [...new Set(entries)];
}
