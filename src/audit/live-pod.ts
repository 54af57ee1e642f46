// A pod object (from the metadata-only watch, a file, or `kubectl get -o yaml`) as a LivePod.
import { LRUCache } from 'lru-cache';
import { DEFAULT_NETWORK_ANNOTATION, NETWORKS_ANNOTATION } from '../annotation/index.js';
import { internString } from '../nads/intern.js';
import type { ControllerReference, LivePod } from './types.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** An object's namespace, name and uid; undefined without a namespace or name (nothing to report against). */
export function identityOf(obj: unknown, defaultNamespace?: string): { namespace: string; name: string; uid?: string; metadata: Json } | undefined {
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
 * (least recently used goes), so churning ReplicaSets cannot grow it.
 */
const SHARED_MAX = 20_000;
const sharedControllers = new LRUCache<string, ControllerReference>({ max: SHARED_MAX });
const sharedAnnotations = new LRUCache<string, string>({ max: SHARED_MAX });
/** Annotations longer than this are kept as they are (a pod's own MACs make it unique anyway). */
const SHARED_ANNOTATION_MAX = 256;

function shared(c: ControllerReference): ControllerReference {
  const key = `${c.apiVersion}\0${c.kind}\0${c.name}\0${c.uid ?? ''}`;
  const hit = sharedControllers.get(key);
  if (hit) return hit;
  const frozen = Object.freeze(c);
  sharedControllers.set(key, frozen);
  return frozen;
}

function sharedAnnotation(value: string): string {
  if (value.length > SHARED_ANNOTATION_MAX) return value;
  const hit = sharedAnnotations.get(value);
  if (hit !== undefined) return hit;
  sharedAnnotations.set(value, value);
  return value;
}

/** Undefined when the object has no namespace or name (nothing to report against). */
export function livePodOf(obj: unknown, defaultNamespace?: string): LivePod | undefined {
  const id = identityOf(obj, defaultNamespace);
  if (!id) return undefined;
  const md = id.metadata;
  const annotations = isObject(md['annotations']) ? md['annotations'] : {};
  const pod: LivePod = { namespace: internString(id.namespace), name: id.name };
  if (id.uid) pod.uid = id.uid;
  const networks = annotations[NETWORKS_ANNOTATION];
  if (typeof networks === 'string') pod.networks = sharedAnnotation(networks);
  const defaultNetwork = annotations[DEFAULT_NETWORK_ANNOTATION];
  if (typeof defaultNetwork === 'string') pod.defaultNetwork = sharedAnnotation(defaultNetwork);
  const controller = controllerOf(md);
  if (controller) pod.controller = shared(controller);
  return pod;
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
export const ownerReferencesOf = (pod: LivePod): Json[] | undefined => (pod.controller ? [{ ...pod.controller, controller: true }] : undefined);

/** Two readings of a pod judged alike (the background audit judges a pod again only when they differ). */
export const sameLivePod = (a: LivePod, b: LivePod): boolean =>
  a.uid === b.uid &&
  a.networks === b.networks &&
  a.defaultNetwork === b.defaultNetwork &&
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
