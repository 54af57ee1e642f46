// The data model of a network selection: the spec's own keys (NPWG multi-net spec v1.3,
// §4.1.2.1), so that the normalized output can be written back as an annotation unchanged.

export const NETWORKS_ANNOTATION = 'k8s.v1.cni.cncf.io/networks';
export const DEFAULT_NETWORK_ANNOTATION = 'v1.multus-cni.io/default-network';

export interface PortMapping {
  hostPort: number;
  containerPort: number;
  protocol?: string;
  hostIP?: string;
}

export interface Bandwidth {
  ingressRate?: number;
  ingressBurst?: number;
  egressRate?: number;
  egressBurst?: number;
}

/** One requested attachment, normalized: `namespace` is always filled in. */
export interface NetworkSelection {
  name: string;
  namespace: string;
  interface?: string;
  ips?: string[];
  mac?: string;
  'infiniband-guid'?: string;
  'default-route'?: string[];
  portMappings?: PortMapping[];
  bandwidth?: Bandwidth;
  'cni-args'?: Record<string, unknown>;
  'ipam-claim-reference'?: string;
  deviceID?: string;
  /** Reverse-DNS extension keys (contain a dot), kept as sent. */
  [extension: `${string}.${string}`]: unknown;
}

/** A selection with where it came from, so later stages can point at it in errors. */
export interface ParsedNetwork {
  /** Position in the annotation's list (0-based). */
  index: number;
  /** Field path of this element, e.g. `metadata.annotations[k8s.v1.cni.cncf.io/networks][1]`. */
  path: string;
  selection: NetworkSelection;
}

export type AnnotationFormat = 'empty' | 'simple' | 'json';

export interface ParseResult {
  format: AnnotationFormat;
  /** Every element that parsed well enough to name a network (even if some of its keys were invalid). */
  networks: ParsedNetwork[];
  errors: import('../field/index.js').FieldError[];
  warnings: import('../field/index.js').FieldError[];
}

export interface ParseOptions {
  /** Namespace used for unqualified names: the pod's namespace for `networks`. */
  namespace: string;
  /** Field path of the annotation value; defaults to `metadata.annotations[<annotation>]`. */
  path?: string;
}

export interface DefaultNetworkOptions {
  /** Namespace for an unqualified default network: Multus's own, `kube-system` unless configured. */
  defaultNamespace?: string;
  path?: string;
}
