// Recognising a NetworkAttachmentDefinition among arbitrary Kubernetes objects.

export const NAD_GROUP = 'k8s.cni.cncf.io';
export const NAD_VERSION = 'v1';
export const NAD_API_VERSION = `${NAD_GROUP}/${NAD_VERSION}`;
export const NAD_KIND = 'NetworkAttachmentDefinition';
export const NAD_PLURAL = 'network-attachment-definitions';

export type JsonObject = Record<string, unknown>;

export const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** True for an object with NAD apiVersion and kind. */
export function isNadObject(obj: unknown): obj is JsonObject {
  return isObject(obj) && obj.apiVersion === NAD_API_VERSION && obj.kind === NAD_KIND;
}

/** `metadata` as an object (empty when absent or malformed). */
export const metadataOf = (obj: JsonObject): JsonObject => (isObject(obj.metadata) ? obj.metadata : {});
