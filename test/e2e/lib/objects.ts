/** Builders of the objects the e2e suite sends to the apiserver (JSON is valid YAML for kubectl). */
export const NETWORKS = 'k8s.v1.cni.cncf.io/networks';
export const RESOURCE_NAME = 'k8s.v1.cni.cncf.io/resourceName';
export const NODE_SELECTOR = 'k8s.v1.cni.cncf.io/nodeSelector';
export const IMAGE = 'registry.k8s.io/pause:3.10';

type Obj = Record<string, unknown>;

export function namespace(name: string, labels: Record<string, string> = {}): Obj {
  return { apiVersion: 'v1', kind: 'Namespace', metadata: { name, labels } };
}

export interface NadSpec {
  namespace: string;
  name: string;
  /** CNI config object, or a raw string (e.g. broken JSON). */
  config: Obj | string;
  annotations?: Record<string, string>;
}

export function nad(s: NadSpec): Obj {
  return {
    apiVersion: 'k8s.cni.cncf.io/v1',
    kind: 'NetworkAttachmentDefinition',
    metadata: { name: s.name, namespace: s.namespace, ...(s.annotations ? { annotations: s.annotations } : {}) },
    spec: { config: typeof s.config === 'string' ? s.config : JSON.stringify(s.config) },
  };
}

/** SR-IOV VF with tuning (capability mac), like examples/nads/sriov.yaml. */
export function sriovConfig(name: string): Obj {
  return {
    cniVersion: '0.3.1',
    name,
    plugins: [
      { type: 'sriov', vlan: 100, ipam: { type: 'host-local', subnet: '10.56.217.0/24' } },
      { type: 'tuning', capabilities: { mac: true } },
    ],
  };
}

/** macvlan without any capability: mac/ips requests are refused. */
export function macvlanConfig(name: string): Obj {
  return { cniVersion: '0.3.1', name, type: 'macvlan', master: 'eth1', mode: 'bridge', ipam: { type: 'dhcp' } };
}

/** InfiniBand SR-IOV with a pod-chosen GUID. */
export function ibConfig(name: string): Obj {
  return { cniVersion: '0.3.1', name, type: 'ib-sriov', pkey: '0x6611', capabilities: { infinibandGUID: true } };
}

export function podSpec(): Obj {
  return { containers: [{ name: 'app', image: IMAGE }] };
}

export function pod(ns: string, name: string, networks?: string | Obj[], extra: { labels?: Record<string, string> } = {}): Obj {
  const annotations =
    networks === undefined ? undefined : { [NETWORKS]: typeof networks === 'string' ? networks : JSON.stringify(networks) };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: ns, ...(annotations ? { annotations } : {}), ...(extra.labels ? { labels: extra.labels } : {}) },
    spec: podSpec(),
  };
}

/** Meets the restricted Pod Security Standard (netattach-system enforces it). */
export function restricted(p: Obj): Obj {
  const spec = p.spec as { securityContext?: Obj; containers: Obj[] };
  spec.securityContext = { runAsNonRoot: true, runAsUser: 65532, seccompProfile: { type: 'RuntimeDefault' } };
  for (const c of spec.containers) c.securityContext = { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } };
  return p;
}

function template(networks: string | Obj[], labels: Record<string, string>): Obj {
  return {
    metadata: { labels, annotations: { [NETWORKS]: typeof networks === 'string' ? networks : JSON.stringify(networks) } },
    spec: podSpec(),
  };
}

export function deployment(ns: string, name: string, networks: string | Obj[]): Obj {
  const labels = { app: name };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: ns },
    spec: { replicas: 1, selector: { matchLabels: labels }, template: template(networks, labels) },
  };
}

export function cronJob(ns: string, name: string, networks: string | Obj[]): Obj {
  const t = template(networks, { app: name });
  (t.spec as Obj).restartPolicy = 'Never';
  return {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: { name, namespace: ns },
    spec: { schedule: '0 3 * * *', jobTemplate: { spec: { template: t } } },
  };
}

export function policy(name: string, spec: Obj): Obj {
  return { apiVersion: 'netattach.io/v1alpha1', kind: 'NetworkAttachmentPolicy', metadata: { name }, spec };
}

/** Nearest-rank percentile of a non-empty list. */
export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(sorted.length, rank) - 1]!;
}
