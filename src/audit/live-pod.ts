// A pod object (from the metadata-only watch, a file, or `kubectl get -o yaml`) as a LivePod.
import { DEFAULT_NETWORK_ANNOTATION, NETWORKS_ANNOTATION } from '../annotation/index.js';
import { Interner, internString } from '../nads/index.js';
import type { ControllerReference, LivePod, UnkeptAnnotations } from './types.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** An object's namespace, name and uid; undefined without a namespace or name (nothing to report against). */
export function identityOf(
  obj: unknown,
  defaultNamespace?: string,
): { namespace: string; name: string; uid?: string; metadata: Json } | undefined {
  if (!isObject(obj)) return undefined;
  const metadata = isObject(obj['metadata']) ? obj['metadata'] : {};
  const namespace = str(metadata['namespace']) ?? defaultNamespace;
  const name = str(metadata['name']);
  if (!namespace || !name) return undefined;
  const uid = str(metadata['uid']);
  return uid ? { namespace, name, uid, metadata } : { namespace, name, metadata };
}

/**
 * One copy of what many live pods carry alike: the replicas of one workload share their
 * controller reference and, unless they carry addresses, their networks annotation. The background
 * audit holds one LivePod per live pod, so this is most of its memory at 150,000 pods. Bounded
 * (the values not used for a generation go, intern.ts), so churning ReplicaSets cannot grow it.
 */
const SHARED_MAX = 20_000;
const sharedControllers = new Interner<ControllerReference>(SHARED_MAX, 'recent');
const sharedAnnotations = new Interner<string>(SHARED_MAX, 'recent');
/** Annotations longer than this are kept as they are (a pod's own MACs make it unique anyway). */
const SHARED_ANNOTATION_MAX = 256;
/**
 * A selection naming the pod's own MAC, GUID or IPs (JSON form) makes its text the pod's alone:
 * sharing it would only fill the table and push out the texts replicas do share.
 */
const OWN_VALUES = /"(?:mac|infiniband-guid|ips|cni-args)"/;

function shared(c: ControllerReference): ControllerReference {
  return sharedControllers.get(`${c.apiVersion}\0${c.kind}\0${c.name}\0${c.uid ?? ''}`, () => Object.freeze(c));
}

/** Whether a text is one replicas share (kept once in the interner), not the pod's own. */
export const sharedText = (value: string): boolean => value.length <= SHARED_ANNOTATION_MAX && !OWN_VALUES.test(value);

export function sharedAnnotation(value: string): string {
  if (!sharedText(value)) return value;
  return sharedAnnotations.get(value, () => value);
}

/** How many controllers and annotations are shared now (tests: the bound). */
export const sharedSizes = (): { controllers: number; annotations: number } => ({
  controllers: sharedControllers.size,
  annotations: sharedAnnotations.size,
});

/** Undefined when the object has no namespace or name (nothing to report against). */
export function livePodOf(obj: unknown, defaultNamespace?: string): LivePod | undefined {
  const id = identityOf(obj, defaultNamespace);
  if (!id) return undefined;
  const md = id.metadata;
  const annotations = isObject(md['annotations']) ? md['annotations'] : {};
  const n = annotations[NETWORKS_ANNOTATION];
  const d = annotations[DEFAULT_NETWORK_ANNOTATION];
  const c = controllerOf(md);
  return shaped(
    internString(id.namespace),
    id.name,
    id.uid,
    typeof n === 'string' ? sharedAnnotation(n) : undefined,
    typeof d === 'string' ? sharedAnnotation(d) : undefined,
    c ? shared(c) : undefined,
  );
}

/**
 * The LivePod with only the fields present, built as one literal for the usual shapes: V8 keeps
 * a literal's properties in the object, while each one added later goes to a separate property
 * array (40 B more per pod, one live pod in three of the heap's objects at 150,000 pods).
 */
function shaped(
  namespace: string,
  name: string,
  uid?: string,
  networks?: string,
  defaultNetwork?: string,
  controller?: ControllerReference,
): LivePod {
  if (uid !== undefined && networks !== undefined && defaultNetwork === undefined) {
    return controller ? { namespace, name, uid, networks, controller } : { namespace, name, uid, networks };
  }
  const pod: LivePod = { namespace, name };
  if (uid !== undefined) pod.uid = uid;
  if (networks !== undefined) pod.networks = networks;
  if (defaultNetwork !== undefined) pod.defaultNetwork = defaultNetwork;
  if (controller) pod.controller = controller;
  return pod;
}

/** `pod` with other annotation texts (the audit's compacted ones), or with none and what stands for them. */
export function withAnnotations(
  pod: LivePod,
  networks: string | undefined,
  defaultNetwork: string | undefined,
  unkept?: UnkeptAnnotations,
): LivePod {
  const out = shaped(pod.namespace, pod.name, pod.uid, networks, defaultNetwork, pod.controller);
  if (unkept) out.unkept = unkept;
  return out;
}

/**
 * The first ownerReference marked `controller`, as admission reads it (sharingOwnerOf stops at the
 * first one too; the apiserver allows only one). Kept only when well formed: a malformed one gives
 * no owner there either.
 */
export function controllerOf(metadata: Json): ControllerReference | undefined {
  const refs = metadata['ownerReferences'];
  if (!Array.isArray(refs)) return undefined;
  const ref = refs.find((r): r is Json => isObject(r) && r['controller'] === true);
  if (!ref) return undefined;
  const { apiVersion, kind, name, uid } = ref;
  if (typeof apiVersion !== 'string' || typeof kind !== 'string' || typeof name !== 'string' || name === '') return undefined;
  return typeof uid === 'string' && uid !== '' ? { apiVersion, kind, name, uid } : { apiVersion, kind, name };
}

/** The pod's metadata.ownerReferences as admission would see them (the controller only, the one read). */
export const ownerReferencesOf = (pod: LivePod): Json[] | undefined =>
  pod.controller ? [{ ...pod.controller, controller: true }] : undefined;

/**
 * Two readings of a pod judged alike (the background audit judges a pod again only when they differ);
 * texts not kept are compared by their fingerprints.
 */
export const sameLivePod = (a: LivePod, b: LivePod): boolean =>
  a.uid === b.uid &&
  a.networks === b.networks &&
  a.defaultNetwork === b.defaultNetwork &&
  a.unkept?.fingerprint === b.unkept?.fingerprint &&
  a.unkept?.bound === b.unkept?.bound &&
  a.controller?.apiVersion === b.controller?.apiVersion &&
  a.controller?.kind === b.controller?.kind &&
  a.controller?.name === b.controller?.name &&
  a.controller?.uid === b.controller?.uid;

/** Pods that finished hold no network (and leave the live-pods watch): not audited. */
export function finished(obj: unknown): boolean {
  if (!isObject(obj) || !isObject(obj['status'])) return false;
  const phase = obj['status']['phase'];
  return phase === 'Succeeded' || phase === 'Failed';
}
