// Builders for the check tests: manifests as objects, wrapped as parsed inputs.
import type { ManifestObject } from '../../src/check/index.js';

export const NETWORKS = 'k8s.v1.cni.cncf.io/networks';

export const inputs = (...objects: unknown[]): ManifestObject[] => objects.map((object, index) => ({ file: 'in.yaml', index, object }));

export const cni = (caps: string[] = ['mac', 'ips']): string =>
  JSON.stringify({
    cniVersion: '1.0.0',
    name: 'net',
    type: 'sriov',
    capabilities: Object.fromEntries(caps.map((c) => [c, true])),
    ipam: { type: 'static' },
  });

export function nad(
  name: string,
  opts: { namespace?: string; resourceName?: string; config?: string; annotations?: Record<string, string> } = {},
): Record<string, unknown> {
  const annotations: Record<string, string> = { ...opts.annotations };
  if (opts.resourceName !== undefined) annotations['k8s.v1.cni.cncf.io/resourceName'] = opts.resourceName;
  return {
    apiVersion: 'k8s.cni.cncf.io/v1',
    kind: 'NetworkAttachmentDefinition',
    metadata: { name, ...(opts.namespace ? { namespace: opts.namespace } : {}), annotations },
    spec: { config: opts.config ?? cni() },
  };
}

export function podTemplate(networks: string | undefined): Record<string, unknown> {
  return {
    metadata: networks === undefined ? {} : { annotations: { [NETWORKS]: networks } },
    spec: { containers: [{ name: 'app', image: 'busybox' }] },
  };
}

export function pod(name: string, networks: string | undefined, namespace?: string): Record<string, unknown> {
  const t = podTemplate(networks);
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, ...(namespace ? { namespace } : {}), ...(t['metadata'] as object) },
    spec: t['spec'],
  };
}

export const namespace = (name: string, labels: Record<string, string> = {}) => ({
  apiVersion: 'v1',
  kind: 'Namespace',
  metadata: { name, labels },
});

/** Every workload kind with a pod template, built around `template`, and where the template sits. */
export function workloads(template: Record<string, unknown>): Array<{ kind: string; object: Record<string, unknown>; at: string }> {
  const meta = { name: 'w', namespace: 'default' };
  const selector = { matchLabels: { app: 'w' } };
  return [
    {
      kind: 'Deployment',
      object: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: meta, spec: { selector, template } },
      at: 'spec.template',
    },
    {
      kind: 'ReplicaSet',
      object: { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: meta, spec: { selector, template } },
      at: 'spec.template',
    },
    {
      kind: 'StatefulSet',
      object: { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: meta, spec: { selector, serviceName: 'w', template } },
      at: 'spec.template',
    },
    {
      kind: 'DaemonSet',
      object: { apiVersion: 'apps/v1', kind: 'DaemonSet', metadata: meta, spec: { selector, template } },
      at: 'spec.template',
    },
    { kind: 'Job', object: { apiVersion: 'batch/v1', kind: 'Job', metadata: meta, spec: { template } }, at: 'spec.template' },
    {
      kind: 'CronJob',
      object: {
        apiVersion: 'batch/v1',
        kind: 'CronJob',
        metadata: meta,
        spec: { schedule: '@daily', jobTemplate: { spec: { template } } },
      },
      at: 'spec.jobTemplate.spec.template',
    },
    {
      kind: 'ReplicationController',
      object: { apiVersion: 'v1', kind: 'ReplicationController', metadata: meta, spec: { selector: { app: 'w' }, template } },
      at: 'spec.template',
    },
    { kind: 'PodTemplate', object: { apiVersion: 'v1', kind: 'PodTemplate', metadata: meta, template }, at: 'template' },
    {
      kind: 'Pod',
      object: { apiVersion: 'v1', kind: 'Pod', metadata: { ...meta, ...(template['metadata'] as object) }, spec: template['spec'] },
      at: '',
    },
  ];
}
