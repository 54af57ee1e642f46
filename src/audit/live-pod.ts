// A pod object (from the metadata-only watch, a file, or `kubectl get -o yaml`) as a LivePod.
import { DEFAULT_NETWORK_ANNOTATION, NETWORKS_ANNOTATION } from '../annotation/index.js';
import type { LivePod } from './types.js';

type Json = Record<string, unknown>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** Undefined when the object has no namespace or name (nothing to report against). */
export function livePodOf(obj: unknown, defaultNamespace?: string): LivePod | undefined {
  if (!isObject(obj)) return undefined;
  const md = isObject(obj['metadata']) ? obj['metadata'] : {};
  const namespace = str(md['namespace']) ?? defaultNamespace;
  const name = str(md['name']);
  if (!namespace || !name) return undefined;
  const annotations = isObject(md['annotations']) ? md['annotations'] : {};
  const pod: LivePod = { namespace, name };
  const uid = str(md['uid']);
  if (uid) pod.uid = uid;
  const networks = annotations[NETWORKS_ANNOTATION];
  if (typeof networks === 'string') pod.networks = networks;
  const defaultNetwork = annotations[DEFAULT_NETWORK_ANNOTATION];
  if (typeof defaultNetwork === 'string') pod.defaultNetwork = defaultNetwork;
  return pod;
}

/** Pods that finished hold no network (and leave the live-pods watch): not audited. */
export function finished(obj: unknown): boolean {
  if (!isObject(obj) || !isObject(obj['status'])) return false;
  const phase = obj['status']['phase'];
  return phase === 'Succeeded' || phase === 'Failed';
}
