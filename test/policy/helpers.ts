// Shared builders for policy tests: a PolicyInput from an annotation value, policies from YAML.
import { parseNetworks, NETWORKS_ANNOTATION } from '../../src/annotation/index.js';
import { loadPolicyDocuments, type CompiledPolicy, type PolicyInput, type Finding } from '../../src/policy/index.js';

export const ANNOTATION_PATH = `metadata.annotations[${NETWORKS_ANNOTATION}]`;

export function input(annotation: string, over: Partial<PolicyInput> = {}): PolicyInput {
  const namespace = over.namespace ?? 'team-a';
  const parsed = parseNetworks(annotation, { namespace });
  return {
    operation: 'CREATE',
    namespace,
    namespaceLabels: { 'kubernetes.io/metadata.name': namespace },
    userInfo: { username: 'alice', groups: ['system:authenticated'] },
    pod: { name: 'p1', uid: 'uid-p1' },
    template: false,
    dryRun: false,
    annotationPath: ANNOTATION_PATH,
    networks: parsed.networks,
    nads: () => ({ status: 'not-found' }),
    builtin: [],
    ...over,
  };
}

/** Policies from YAML; fails the test (throws) on any load error. */
export function policies(yaml: string): CompiledPolicy[] {
  const { policies, errors } = loadPolicyDocuments(yaml, 'test');
  if (errors.length) throw new Error(errors.map((e) => e.message).join('\n'));
  return policies;
}

/** A policy document with the given spec (YAML of the spec, indented by the caller as a block). */
export const policyYaml = (name: string, spec: string): string =>
  `apiVersion: netattach.io/v1alpha1\nkind: NetworkAttachmentPolicy\nmetadata:\n  name: ${name}\nspec:\n${spec
    .trim()
    .split('\n')
    .map((l) => '  ' + l)
    .join('\n')}\n`;

export const brief = (f: Finding): string => `${f.policy}/${f.rule}/${f.action}`;
