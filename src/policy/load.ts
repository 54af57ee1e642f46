// Policy documents from text (a file, stdin for `netattach check`): multi-document YAML or
// JSON, and `kind: List` as `kubectl get -o yaml` prints. Each document stands alone: an
// invalid one is reported and skipped, the others are kept.
import { yaml } from '../yaml/index.js';
import type { FieldError } from '../field/index.js';
import { renderErrors } from '../field/index.js';
import { compilePolicy, type CompiledPolicy } from './compile.js';
import { validatePolicyDocument } from './schema.js';

export interface PolicyLoadError {
  /** Where the document came from: a file path, `cluster`, `stdin`. */
  origin: string;
  /** Position of the document in its source (0-based; items of a List count on). */
  document: number;
  /** metadata.name when the document has one. */
  name?: string;
  errors: FieldError[];
  /** One line for logs and CRD status: `policy "x" (file.yaml#2) is invalid: ...`. */
  message: string;
}

export interface LoadedPolicies {
  policies: CompiledPolicy[];
  errors: PolicyLoadError[];
}

const nameOf = (data: unknown): string | undefined => {
  const md = (data as { metadata?: { name?: unknown } } | null)?.metadata;
  return typeof md?.name === 'string' ? md.name : undefined;
};

export function loadError(origin: string, document: number, name: string | undefined, errors: FieldError[]): PolicyLoadError {
  const who = name ? `policy "${name}"` : 'policy document';
  return { origin, document, name, errors, message: `${who} (${origin}#${document}) is invalid: ${renderErrors(errors)}` };
}

/** Schema validation and compilation of one parsed object. */
export function loadPolicyObject(data: unknown, origin: string, document = 0): { policy?: CompiledPolicy; error?: PolicyLoadError } {
  const { document: doc, errors } = validatePolicyDocument(data);
  if (!doc) return { error: loadError(origin, document, nameOf(data), errors) };
  const compiled = compilePolicy(doc);
  if (!compiled.policy) return { error: loadError(origin, document, doc.metadata.name, compiled.errors) };
  return { policy: compiled.policy };
}

export function loadPolicyDocuments(text: string, origin: string): LoadedPolicies {
  const policies: CompiledPolicy[] = [];
  const errors: PolicyLoadError[] = [];
  const names = new Set<string>();
  let position = 0;
  const take = (data: unknown): void => {
    const n = position++;
    const { policy, error } = loadPolicyObject(data, origin, n);
    if (error) errors.push(error);
    else if (policy && names.has(policy.name)) {
      errors.push(
        loadError(origin, n, policy.name, [
          { path: 'metadata.name', type: 'Duplicate value', value: policy.name, reason: 'defined earlier in the same source' },
        ]),
      );
    } else if (policy) {
      names.add(policy.name);
      policies.push(policy);
    }
  };
  for (const doc of yaml().parseAllDocuments(text)) {
    if (doc.errors.length) {
      errors.push(
        loadError(origin, position++, undefined, [
          { path: '', type: 'Invalid value', value: doc.errors[0]!.message.split('\n')[0], reason: 'not valid YAML or JSON' },
        ]),
      );
      continue;
    }
    const data: unknown = doc.toJS({ maxAliasCount: 100 });
    if (data === null || data === undefined) continue;
    const list = data as { kind?: unknown; items?: unknown };
    if (typeof list.kind === 'string' && list.kind.endsWith('List') && Array.isArray(list.items)) list.items.forEach(take);
    else take(data);
  }
  return { policies, errors };
}
