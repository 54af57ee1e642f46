// From a NAD object to the cache entry admission reads. Never throws: whatever cannot be read
// is left out and named in `problems`, so one bad NAD cannot break a list or a watch.
import { renderError, type FieldError } from '../field/index.js';
import { parseClaimTemplate, parseNodeSelector, resourceNamesFromAnnotations } from './annotations.js';
import { analyzeCniConfig } from './cni.js';
import { EMPTY_LIST, EMPTY_SELECTOR, detach, internList, internString, internSummary } from './intern.js';
import { NAD_API_VERSION, NAD_KIND, isObject, metadataOf } from './object.js';
import { CLAIM_TEMPLATE_ANNOTATION, NODE_SELECTOR_ANNOTATION, RESOURCE_NAME_ANNOTATION, type Nad } from './types.js';

export interface NadFromObjectOptions {
  /** Annotation keys read for resource names (AdmissionConfig.resourceNameKeys); the standard one by default. */
  resourceNameKeys?: readonly string[];
  /** Namespace for an object without one (files); `default` like kubectl. */
  defaultNamespace?: string;
}

/** Problems kept per NAD (they are logged and held in the cache); the rest are counted. */
export const MAX_PROBLEMS = 20;

/** Renders errors into `problems`, stopping past MAX_PROBLEMS (counted, not rendered). */
function note(problems: string[], errors: readonly FieldError[]): void {
  for (const e of errors) problems.push(problems.length < MAX_PROBLEMS ? renderError(e) : '');
}

const DEFAULT_KEYS: readonly string[] = [RESOURCE_NAME_ANNOTATION];

export function nadFromObject(obj: unknown, options: NadFromObjectOptions = {}): Nad {
  const problems: string[] = [];
  const source = isObject(obj) ? obj : {};
  if (!isObject(obj)) problems.push('not an object');
  else if ((obj.apiVersion !== undefined && obj.apiVersion !== NAD_API_VERSION) || (obj.kind !== undefined && obj.kind !== NAD_KIND)) {
    problems.push(`not a ${NAD_KIND} (${NAD_API_VERSION}): apiVersion ${String(obj.apiVersion)}, kind ${String(obj.kind)}`);
  }
  const meta = metadataOf(source);
  const nad: Nad = {
    namespace: internString(
      typeof meta.namespace === 'string' && meta.namespace !== '' ? meta.namespace : (options.defaultNamespace ?? 'default'),
    ),
    name: typeof meta.name === 'string' ? detach(meta.name) : '',
    resourceNames: EMPTY_LIST,
    nodeSelector: EMPTY_SELECTOR,
    problems,
  };
  if (nad.name === '') problems.push('metadata.name: Required value');
  if (typeof meta.uid === 'string') nad.uid = detach(meta.uid);
  if (typeof meta.resourceVersion === 'string') nad.resourceVersion = detach(meta.resourceVersion);

  const annotations = isObject(meta.annotations) ? meta.annotations : undefined;
  const resources = resourceNamesFromAnnotations(annotations, options.resourceNameKeys ?? DEFAULT_KEYS);
  nad.resourceNames = internList(resources.value);
  if (resources.draOnly.length > 0) nad.draOnlyResourceNames = internList(resources.draOnly);
  note(problems, resources.errors);
  // Not errors (they work with DRA), but worth saying wherever the NAD's problems are shown.
  note(problems, resources.warnings);

  const selectorText = annotations?.[NODE_SELECTOR_ANNOTATION];
  if (typeof selectorText === 'string') {
    const selector = parseNodeSelector(selectorText);
    if (Object.keys(selector.value).length > 0) nad.nodeSelector = JSON.parse(JSON.stringify(selector.value)) as Record<string, string>;
    note(problems, selector.errors);
  } else if (selectorText !== undefined) {
    problems.push(`metadata.annotations[${NODE_SELECTOR_ANNOTATION}]: must be a string`);
  }

  const claimTemplate = parseClaimTemplate(annotations?.[CLAIM_TEMPLATE_ANNOTATION]);
  if (claimTemplate.value !== undefined) nad.claimTemplate = internString(claimTemplate.value);
  problems.push(...claimTemplate.errors.map(renderError));

  const spec = source.spec;
  const config = isObject(spec) ? spec.config : undefined;
  if (typeof config === 'string') {
    const analysis = analyzeCniConfig(config);
    if (analysis.summary) nad.cni = internSummary(analysis.summary);
    if (analysis.unloadable !== undefined) nad.configUnloadable = detach(analysis.unloadable);
    note(problems, analysis.errors);
  } else if (config !== undefined && config !== null) {
    problems.push('spec.config: must be a string holding JSON');
  }
  if (problems.length > MAX_PROBLEMS) {
    const more = problems.length - MAX_PROBLEMS;
    problems.length = MAX_PROBLEMS;
    problems.push(`and ${more} more problems`);
  }
  if (problems.length === 0) nad.problems = EMPTY_LIST;
  return nad;
}
