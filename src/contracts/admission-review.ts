// The shared contracts: the admission.k8s.io AdmissionReview wire types, which the core
// (src/admission), policy, the NAD checks and the server all speak. A leaf: it imports nothing
// from src/, so any folder may use it without an import circle (test/layering.test.ts).
export type Operation = 'CREATE' | 'UPDATE' | 'DELETE' | 'CONNECT';

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

export interface GroupVersionResource {
  group: string;
  version: string;
  resource: string;
}

export interface UserInfo {
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

export interface AdmissionRequest {
  uid: string;
  kind: GroupVersionKind;
  resource: GroupVersionResource;
  subResource?: string;
  requestKind?: GroupVersionKind;
  requestResource?: GroupVersionResource;
  name?: string;
  namespace?: string;
  operation: Operation;
  userInfo: UserInfo;
  object?: unknown;
  oldObject?: unknown;
  dryRun?: boolean;
  options?: unknown;
}

export const ADMISSION_V1 = 'admission.k8s.io/v1';
export const ADMISSION_V1BETA1 = 'admission.k8s.io/v1beta1';
export type AdmissionApiVersion = typeof ADMISSION_V1 | typeof ADMISSION_V1BETA1;

export interface AdmissionStatus {
  code?: number;
  reason?: string;
  message?: string;
}

export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  status?: AdmissionStatus;
  patch?: string;
  patchType?: 'JSONPatch';
  warnings?: string[];
  auditAnnotations?: Record<string, string>;
}

export interface AdmissionReview {
  apiVersion: AdmissionApiVersion;
  kind: 'AdmissionReview';
  request?: AdmissionRequest;
  response?: AdmissionResponse;
}

/** RFC 6902 operation, as produced by fast-json-patch's compare(). */
export interface JsonPatchOperation {
  op: 'add' | 'remove' | 'replace' | 'move' | 'copy' | 'test';
  path: string;
  value?: unknown;
  from?: string;
}

export type Endpoint = 'mutate' | 'validate';
