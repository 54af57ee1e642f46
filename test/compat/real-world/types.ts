// The shape of a real-world case: objects reconstructed from a public repository at a named
// release or commit (only the fields that matter to admission and to the ADD), with the verdict a
// real cluster gives them (Multus v4.3.0 and the plugins' releases, docs/cni-runtime.md), never
// the one netattach happens to give.

export const NETWORKS = 'k8s.v1.cni.cncf.io/networks';
export const DEFAULT_NETWORK = 'v1.multus-cni.io/default-network';
export const RESOURCE_NAME = 'k8s.v1.cni.cncf.io/resourceName';

export interface RealVerdict {
  /** Whether the pod runs: its ADD succeeds (true) or certainly fails (false). */
  allowed: boolean;
  /** For a pod that certainly fails: what the denial must name (one pattern an error, in order). */
  errors?: RegExp[];
  /**
   * The warnings a pod whose ADD succeeds deserves, each a real risk; one pattern a cause. The
   * test holds netattach to exactly these: an unlisted warning is noise.
   */
  warnings?: RegExp[];
  /**
   * Device-plugin resources the mutation must add to a container, by container: each is one the
   * source's set-up advertises. Absent: nothing may be added.
   */
  injects?: Record<string, Record<string, string>>;
  /** The pod's nodeSelector after the mutation, where the NADs ask for one (`k8s.v1.cni.cncf.io/nodeSelector`). Absent: unchanged. */
  nodeSelector?: Record<string, string>;
}

export interface RealWorldCase {
  name: string;
  /** `owner/repo@tag path` (or `@commit` where the repository has no release). */
  source: string;
  /** NADs (and DRA objects) first, then the one workload: a Pod, Deployment, StatefulSet or DaemonSet. */
  objects: Record<string, unknown>[];
  verdict: RealVerdict;
  /**
   * NADs whose creation the NAD webhook rightly refuses (a config Multus cannot load fails every pod
   * on it); every other NAD of the case must be admitted: it works.
   */
  deniedNads?: string[];
  /** Extended resources the source's set-up advertises (its device plugin's pools). */
  advertised?: string[];
  /** Why a real cluster gives this verdict. */
  reason: string;
  /**
   * netattach disagrees with the real verdict today: what it says and why it is wrong. The test
   * asserts that it still disagrees, so the mark goes when netattach is fixed.
   */
  knownDisagreement?: string;
}

export interface NadOptions {
  namespace?: string;
  resourceName?: string;
}

/** A NAD as its maker writes it; `config` is the CNI config (an object, or stored text as is). */
export function nad(name: string, config: object | string, o: NadOptions = {}): Record<string, unknown> {
  return {
    apiVersion: 'k8s.cni.cncf.io/v1',
    kind: 'NetworkAttachmentDefinition',
    metadata: {
      name,
      ...(o.namespace ? { namespace: o.namespace } : {}),
      ...(o.resourceName ? { annotations: { [RESOURCE_NAME]: o.resourceName } } : {}),
    },
    spec: { config: typeof config === 'string' ? config : JSON.stringify(config) },
  };
}

/** A NAD without `spec.config`: Multus reads the config from a file on the node. */
export function nadOnNode(name: string, namespace?: string): Record<string, unknown> {
  return {
    apiVersion: 'k8s.cni.cncf.io/v1',
    kind: 'NetworkAttachmentDefinition',
    metadata: { name, ...(namespace ? { namespace } : {}) },
  };
}

export interface Container {
  name: string;
  /** requests = limits, as the sources write them. */
  resources?: Record<string, string>;
  /** Only limits (the apiserver copies them to requests). */
  limits?: Record<string, string>;
  claims?: string[];
}

export interface PodOptions {
  namespace?: string;
  networks?: string;
  defaultNetwork?: string;
  /** Other annotations the source sets (spiderpool's IPPools, ...). */
  annotations?: Record<string, string>;
  containers?: Container[];
  nodeSelector?: Record<string, string>;
  resourceClaims?: Array<Record<string, unknown>>;
}

function annotationsOf(o: PodOptions): Record<string, string> {
  return {
    ...(o.networks !== undefined ? { [NETWORKS]: o.networks } : {}),
    ...(o.defaultNetwork !== undefined ? { [DEFAULT_NETWORK]: o.defaultNetwork } : {}),
    ...o.annotations,
  };
}

function specOf(o: PodOptions): Record<string, unknown> {
  const containers = (o.containers ?? [{ name: 'app' }]).map((c) => ({
    name: c.name,
    image: 'registry.example/app:1',
    ...(c.resources || c.limits || c.claims
      ? {
          resources: {
            ...(c.resources ? { requests: { ...c.resources }, limits: { ...c.resources } } : {}),
            ...(c.limits ? { limits: { ...c.limits } } : {}),
            ...(c.claims ? { claims: c.claims.map((name) => ({ name })) } : {}),
          },
        }
      : {}),
  }));
  return {
    containers,
    ...(o.nodeSelector ? { nodeSelector: o.nodeSelector } : {}),
    ...(o.resourceClaims ? { resourceClaims: o.resourceClaims } : {}),
  };
}

export function pod(name: string, o: PodOptions): Record<string, unknown> {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, ...(o.namespace ? { namespace: o.namespace } : {}), annotations: annotationsOf(o) },
    spec: specOf(o),
  };
}

/** A Deployment, StatefulSet or DaemonSet whose pod template carries the annotations. */
export function workload(kind: 'Deployment' | 'StatefulSet' | 'DaemonSet', name: string, o: PodOptions): Record<string, unknown> {
  const labels = { app: name };
  return {
    apiVersion: 'apps/v1',
    kind,
    metadata: { name, ...(o.namespace ? { namespace: o.namespace } : {}) },
    spec: {
      selector: { matchLabels: labels },
      ...(kind === 'StatefulSet' ? { serviceName: name } : {}),
      template: { metadata: { labels, annotations: annotationsOf(o) }, spec: specOf(o) },
    },
  };
}

/** The virt-launcher pod KubeVirt v1.9 renders for a VM (pkg/network/multus/annotation.go, services/template.go). */
export function launcher(vm: string, networks: string, o: { namespace?: string; resources?: Record<string, string> } = {}) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `virt-launcher-${vm}-abcde`,
      ...(o.namespace ? { namespace: o.namespace } : {}),
      labels: {
        'kubevirt.io': 'virt-launcher',
        'kubevirt.io/created-by': '7c4f1c52-0000-4000-8000-0000000000c1',
        'vm.kubevirt.io/name': vm,
      },
      annotations: { [NETWORKS]: networks, 'kubevirt.io/domain': vm, 'kubectl.kubernetes.io/default-container': 'compute' },
      ownerReferences: [
        {
          apiVersion: 'kubevirt.io/v1',
          kind: 'VirtualMachineInstance',
          name: vm,
          uid: '7c4f1c52-0000-4000-8000-0000000000c1',
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      containers: [
        {
          name: 'compute',
          image: 'quay.io/kubevirt/virt-launcher:v1.9.0',
          ...(o.resources ? { resources: { requests: o.resources, limits: o.resources } } : {}),
        },
      ],
    },
  };
}
