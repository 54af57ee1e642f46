// Validation of a NetworkAttachmentDefinition on CREATE and UPDATE (the nads.netattach.io
// webhook and `netattach check`). Pure: the object in, field errors and warnings out.
import { child, invalid, key, renderError, required, unsupported, type FieldError } from '../field/index.js';
import type { Operation } from '../contracts/index.js';
import { parseClaimTemplate, parseNodeSelector, resourceNamesFromAnnotations } from './annotations.js';
import { analyzeCniConfig } from './cni.js';
import { dns1123Label } from './names.js';
import { NAD_API_VERSION, NAD_KIND, isObject, metadataOf } from './object.js';
import { CLAIM_TEMPLATE_ANNOTATION, NODE_SELECTOR_ANNOTATION, RESOURCE_NAME_ANNOTATION } from './types.js';

export interface NadValidation {
  errors: FieldError[];
  warnings: FieldError[];
}

export interface ValidateNadOptions {
  /** Prefix of every field path (e.g. `items[3]` when checking a List); none by default. */
  path?: string;
  /** CREATE (default) or UPDATE; DELETE and CONNECT have nothing to validate. */
  operation?: Operation;
  /**
   * The stored object on UPDATE: errors it already had are reported as warnings, so that an
   * object admitted before netattach (or before a stricter rule) can still be edited.
   */
  oldObject?: unknown;
  /** Annotation keys read for resource names (AdmissionConfig.resourceNameKeys). */
  resourceNameKeys?: readonly string[];
}

const OPERATIONS: ReadonlySet<string> = new Set(['CREATE', 'UPDATE', 'DELETE', 'CONNECT']);

/**
 * Validates a NAD object. The second argument is either options or, for brevity, the path
 * prefix; an admission operation name (`'UPDATE'`) is accepted there too.
 */
export function validateNadObject(obj: unknown, pathOrOptions: string | ValidateNadOptions = {}): NadValidation {
  const options: ValidateNadOptions =
    typeof pathOrOptions === 'string'
      ? OPERATIONS.has(pathOrOptions)
        ? { operation: pathOrOptions as Operation }
        : { path: pathOrOptions }
      : pathOrOptions;
  const operation = options.operation ?? 'CREATE';
  if (operation === 'DELETE' || operation === 'CONNECT') return { errors: [], warnings: [] };

  const result = check(obj, options.path ?? '', options.resourceNameKeys ?? [RESOURCE_NAME_ANNOTATION], operation);
  if (operation !== 'UPDATE' || options.oldObject === undefined) return result;

  const before = new Set(
    check(options.oldObject, options.path ?? '', options.resourceNameKeys ?? [RESOURCE_NAME_ANNOTATION], 'CREATE').errors.map(renderError),
  );
  const errors: FieldError[] = [];
  const warnings = [...result.warnings];
  for (const e of result.errors) {
    if (before.has(renderError(e))) warnings.push({ ...e, reason: `${e.reason} (already present before this update)` });
    else errors.push(e);
  }
  return { errors, warnings };
}

function check(obj: unknown, base: string, resourceNameKeys: readonly string[], operation: Operation): NadValidation {
  const errors: FieldError[] = [];
  const warnings: FieldError[] = [];
  if (!isObject(obj)) {
    errors.push(invalid(base || '<object>', obj, `must be a ${NAD_KIND} object`));
    return { errors, warnings };
  }
  if (obj.apiVersion !== undefined && obj.apiVersion !== NAD_API_VERSION) {
    errors.push(unsupported(child(base, 'apiVersion'), obj.apiVersion, [NAD_API_VERSION]));
  }
  if (obj.kind !== undefined && obj.kind !== NAD_KIND) errors.push(unsupported(child(base, 'kind'), obj.kind, [NAD_KIND]));

  const meta = metadataOf(obj);
  // An object on its way out (finalizers being removed) must stay editable whatever it holds.
  if (operation === 'UPDATE' && meta.deletionTimestamp) return { errors, warnings };

  checkName(meta, child(base, 'metadata'), operation, errors, warnings);
  checkAnnotations(meta, child(base, 'metadata.annotations'), resourceNameKeys, errors, warnings);

  const specPath = child(base, 'spec');
  const spec = obj.spec;
  if (spec !== undefined && spec !== null) {
    if (!isObject(spec)) errors.push(invalid(specPath, spec, 'must be an object'));
    else if (spec.config !== undefined && spec.config !== null) {
      const configPath = child(specPath, 'config');
      if (typeof spec.config !== 'string')
        errors.push(invalid(configPath, spec.config, 'must be a string holding the CNI configuration as JSON'));
      else {
        const analysis = analyzeCniConfig(spec.config, configPath);
        // Loops, not push(...list): a config with 100,000 plugins has as many errors.
        for (const e of analysis.errors) errors.push(e);
        for (const w of analysis.warnings) warnings.push(w);
      }
    }
  }
  return { errors, warnings };
}

function checkName(
  meta: Record<string, unknown>,
  metaPath: string,
  operation: Operation,
  errors: FieldError[],
  warnings: FieldError[],
): void {
  const namePath = child(metaPath, 'name');
  const name = meta.name;
  if (name === undefined || name === '') {
    // A mutating webhook sees generateName objects before the apiserver names them.
    if (typeof meta.generateName !== 'string' || meta.generateName === '')
      errors.push(required(namePath, 'name or generateName is required'));
    return;
  }
  if (typeof name !== 'string') {
    errors.push(invalid(namePath, name, 'must be a string'));
    return;
  }
  const reasons = dns1123Label(name);
  if (reasons.length === 0) return;
  // Kubernetes accepts any DNS subdomain here, but pods select networks by `[namespace/]name`,
  // where the name must be a DNS-1123 label: a NAD named otherwise can never be attached.
  const problem = invalid(namePath, name, `${reasons.join('; ')}: pods could not select this network in k8s.v1.cni.cncf.io/networks`);
  // Names are immutable: denying an UPDATE for its name would lock the object forever.
  (operation === 'UPDATE' ? warnings : errors).push(problem);
}

function checkAnnotations(
  meta: Record<string, unknown>,
  annotationsPath: string,
  resourceNameKeys: readonly string[],
  errors: FieldError[],
  warnings: FieldError[],
): void {
  if (!isObject(meta.annotations)) return;
  const annotations = meta.annotations;
  // Errors carry `metadata.annotations[...]` paths; re-root them under this object's path.
  const reroot = (e: FieldError): FieldError => ({ ...e, path: e.path.replace(/^metadata\.annotations/, annotationsPath) });
  const resources = resourceNamesFromAnnotations(annotations, resourceNameKeys);
  for (const e of resources.errors) errors.push(reroot(e));
  // A name outside the extended-resource syntax works with DRA (Multus's own e2e uses one): a warning.
  for (const w of resources.warnings) warnings.push(reroot(w));
  for (const e of parseClaimTemplate(annotations[CLAIM_TEMPLATE_ANNOTATION]).errors) errors.push(reroot(e));
  const selector = annotations[NODE_SELECTOR_ANNOTATION];
  if (selector === undefined) return;
  if (typeof selector !== 'string') errors.push(invalid(key(annotationsPath, NODE_SELECTOR_ANNOTATION), selector, 'must be a string'));
  else for (const e of parseNodeSelector(selector).errors) errors.push(reroot(e));
}
