// Builders for the audit tests: live pods, NADs and policies.
import { nadFromObject, type Nad } from '../../src/nads/index.js';
import { loadPolicyDocuments, policySet, type PolicySet } from '../../src/policy/index.js';
import { nad as nadObject, cni } from '../check/helpers.js';
import { BackgroundAudit, type AnnotationBudgetOptions, type LivePod } from '../../src/audit/index.js';
import { DEFAULT_ADMISSION_CONFIG } from '../../src/admission/index.js';
import { AddressIndex, EMPTY_POLICY_SET, PolicyEngine } from '../../src/policy/index.js';

export { cni };

export const live = (namespace: string, name: string, networks?: string, uid = `uid-${name}`): LivePod => ({
  namespace,
  name,
  uid,
  ...(networks !== undefined ? { networks } : {}),
});

/**
 * A NAD whose chain reads what `caps` names: sriov (which reads a MAC from CNI_ARGS) when `mac` is
 * among them, else ipvlan (which reads none); IPs through the static IPAM either way (with an address of
 * its own: ipvlan fails the ADD on a static IPAM with nothing to assign).
 */
export const nad = (namespace: string, name: string, caps: string[] = ['mac', 'ips'], resourceName?: string): Nad => {
  const config = JSON.stringify({
    cniVersion: '1.0.0',
    name: 'net',
    type: caps.includes('mac') ? 'sriov' : 'ipvlan',
    capabilities: Object.fromEntries(caps.map((c) => [c, true])),
    ipam: { type: 'static', addresses: [{ address: '192.0.2.1/24' }] },
  });
  return nadFromObject(nadObject(name, { namespace, config, ...(resourceName ? { resourceName } : {}) }));
};

export function policiesOf(yaml: string): PolicySet {
  const { policies, errors } = loadPolicyDocuments(yaml, 'test');
  if (errors.length) throw new Error(errors.map((e) => e.message).join('\n'));
  return policySet(policies);
}

export const UNIQUE_MACS = `apiVersion: netattach.io/v1alpha1
kind: NetworkAttachmentPolicy
metadata: {name: unique-macs}
spec:
  rules:
    uniqueAddresses: {mac: Network, action: Enforce}
`;

export const ONLY_SRIOV = `apiVersion: netattach.io/v1alpha1
kind: NetworkAttachmentPolicy
metadata: {name: only-sriov}
spec:
  rules:
    allowedNetworks: {networks: ["*/sriov-net"], action: Enforce}
`;

/**
 * Issue 24's hostile annotation (findings 2 and 3): a 200 KB key under `cni-args` holding 100
 * numbers Go cannot read, so the key is in the path of 100 field errors (before messages were
 * cut, 20 MB of findings per pod; five such pods made a 100 MB PolicyReport).
 */
export const hostileNetworks = (keyLength = 200_000, errors = 100): string =>
  `[{"name":"net","cni-args":{"${'k'.repeat(keyLength)}":[${Array.from({ length: errors }, () => '1e400').join(',')}]}}]`;

/** The longest legal pod name (253) and a long namespace (63): the largest real results. */
export const longName = (i: number): string => `${'p'.repeat(240)}-${String(i).padStart(12, '0')}`;
export const LONG_NAMESPACE = 'n'.repeat(63);

/** A background audit (no NADs, no policies) that has judged these pods. */
/** `texts`: the audit's bounds on annotation texts (a test of what judging a 200 KB text gives lifts them). */
export function auditWith(pods: Array<{ ns: string; name: string; networks: string }>, texts?: AnnotationBudgetOptions): BackgroundAudit {
  const audit = new BackgroundAudit({
    ...(texts ? { texts } : {}),
    nads: { get: () => undefined, list: () => [], synced: () => true },
    namespaceLabels: () => ({}),
    engine: new PolicyEngine({ index: new AddressIndex(), policies: EMPTY_POLICY_SET }),
    config: DEFAULT_ADMISSION_CONFIG,
    podsUsingNad: () => [],
    ready: () => true,
  });
  for (const p of pods)
    audit.upsert({
      metadata: { namespace: p.ns, name: p.name, uid: `u-${p.name}`, annotations: { ['k8s.v1.cni.cncf.io/networks']: p.networks } },
    });
  audit.drain();
  return audit;
}
