// Builders for serve-with-policy tests: Pod CREATE reviews as the apiserver sends them to each
// webhook, NAD objects, policy documents, and polling.
import type { AdmissionReview } from '../../src/admission/types.js';

export const NETWORKS = 'k8s.v1.cni.cncf.io/networks';

let counter = 0;

/**
 * A Pod CREATE review. The mutating webhook sees no uid (and, for generateName, no name); the
 * validating webhook sees both, as the apiserver fills them in between the two.
 */
export function podCreate(opts: {
  networks?: string;
  namespace?: string;
  name?: string;
  generateName?: string;
  uid?: string;
  dryRun?: boolean;
  interfaceAnnotation?: string;
}): AdmissionReview {
  const namespace = opts.namespace ?? 'default';
  const metadata: Record<string, unknown> = { namespace, annotations: opts.networks !== undefined ? { [NETWORKS]: opts.networks } : {} };
  if (opts.name) metadata.name = opts.name;
  if (opts.generateName) metadata.generateName = opts.generateName;
  if (opts.uid) metadata.uid = opts.uid;
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: `req-${++counter}`,
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      ...(opts.name ? { name: opts.name } : {}),
      namespace,
      operation: 'CREATE',
      userInfo: { username: 'alice', groups: ['system:authenticated'] },
      object: { apiVersion: 'v1', kind: 'Pod', metadata, spec: { containers: [{ name: 'c', image: 'busybox' }] } },
      oldObject: null,
      dryRun: opts.dryRun ?? false,
    },
  };
}

export function nadDelete(namespace: string, name: string): AdmissionReview {
  return {
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: `req-${++counter}`,
      kind: { group: 'k8s.cni.cncf.io', version: 'v1', kind: 'NetworkAttachmentDefinition' },
      resource: { group: 'k8s.cni.cncf.io', version: 'v1', resource: 'network-attachment-definitions' },
      name,
      namespace,
      operation: 'DELETE',
      userInfo: { username: 'alice' },
      object: null,
      oldObject: nadObject(namespace, name),
    },
  };
}

/** A NAD whose CNI config declares the capabilities given. */
export function nadObject(namespace: string, name: string, capabilities: string[] = []): Record<string, unknown> {
  const caps = Object.fromEntries(capabilities.map((c) => [c, true]));
  return {
    apiVersion: 'k8s.cni.cncf.io/v1',
    kind: 'NetworkAttachmentDefinition',
    metadata: { namespace, name },
    spec: { config: JSON.stringify({ cniVersion: '1.0.0', name, type: 'ib-sriov', capabilities: caps }) },
  };
}

export const policyDoc = (name: string, spec: string): string =>
  `apiVersion: netattach.io/v1alpha1\nkind: NetworkAttachmentPolicy\nmetadata:\n  name: ${name}\nspec:\n${spec
    .trim()
    .split('\n')
    .map((l) => `  ${l}`)
    .join('\n')}\n`;

export async function eventually<T>(probe: () => Promise<T>, ok: (v: T) => boolean, what: string, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}; last: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
