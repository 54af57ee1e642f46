/**
 * netattach's verdict on a pod, from the same pure engine `serve` runs (src/admission `review`,
 * the validating endpoint) with the NADs in a static source, as `netattach check` reads them.
 */
import { DEFAULT_ADMISSION_CONFIG, review, warningText, type AdmissionRequest } from '../../../src/admission/index.js';
import { renderError } from '../../../src/field/index.js';
import { StaticNadSource } from '../../../src/nads/index.js';
import { NO_POLICY } from '../../../src/policy/types.js';
import type { ChainConfig } from './chains.js';
import type { Selection, Verdict } from './model.js';

// As the manifests run serve: cni-invoke runs Multus's delegate calls with no defaultNetworks,
// and the manifests state that count (--multus-default-networks=0), which makes a net<N>
// collision an error rather than a warning.
const ORACLE_CONFIG = { ...DEFAULT_ADMISSION_CONFIG, multusDefaultNetworks: 0 };

export const NAMESPACE = 'default';

export function nadObject(name: string, config: ChainConfig): Record<string, unknown> {
  return {
    apiVersion: 'k8s.cni.cncf.io/v1',
    kind: 'NetworkAttachmentDefinition',
    metadata: { name, namespace: NAMESPACE },
    spec: { config: typeof config === 'string' ? config : JSON.stringify(config) },
  };
}

/**
 * A verdict function over a fixed set of NADs (name -> CNI config). The pod's annotation is the
 * selections as JSON, or `annotation` when the case writes them another way (the simple form).
 */
export function verdictOver(configs: ReadonlyMap<string, ChainConfig>): (selections: readonly Selection[], annotation?: string) => Verdict {
  const source = new StaticNadSource([...configs].map(([name, config]) => nadObject(name, config)));
  const nads = (ns: string, name: string) => {
    const nad = source.get(ns, name);
    return nad ? ({ status: 'found', nad } as const) : ({ status: 'not-found' } as const);
  };
  return (selections, annotation) => {
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: 'oracle',
        namespace: NAMESPACE,
        annotations: { 'k8s.v1.cni.cncf.io/networks': annotation ?? JSON.stringify(selections) },
      },
      spec: { containers: [{ name: 'app', image: 'busybox' }] },
    };
    const request: AdmissionRequest = {
      uid: 'oracle',
      kind: { group: '', version: 'v1', kind: 'Pod' },
      resource: { group: '', version: 'v1', resource: 'pods' },
      namespace: NAMESPACE,
      operation: 'CREATE',
      userInfo: { username: 'oracle' },
      object: pod,
      oldObject: null,
    };
    const d = review(request, { endpoint: 'validate', nads, policy: NO_POLICY, config: ORACLE_CONFIG });
    return { allowed: d.allowed, errors: d.errors.map(renderError), warnings: d.warnings.map(warningText) };
  };
}
