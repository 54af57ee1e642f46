// NetworkAttachmentDefinitions: validated on CREATE/UPDATE by src/nads; on DELETE a warning when
// pods still use the NAD (they keep running; new ones that name it will be denied).
import { required } from '../field/index.js';
import { devicePathOf } from '../dra/index.js';
import { nadFromObject, validateNadObject } from '../nads/index.js';
import { allow, Verdict } from './decision.js';
import { isObject, objectAt, stringAt } from './object.js';
import type { AdmissionContext, AdmissionRequest, Decision } from './types.js';

const SHOWN_PODS = 3;

export function reviewNad(request: AdmissionRequest, context: AdmissionContext): Decision {
  const verdict = new Verdict();
  if (request.operation === 'DELETE') return warnIfUsed(request, context, verdict).build();
  if (request.operation !== 'CREATE' && request.operation !== 'UPDATE') return allow();
  if (!isObject(request.object)) return verdict.addInvalid(required('object', 'the request carries no object')).build();
  const result = validateNadObject(request.object, {
    operation: request.operation,
    resourceNameKeys: context.config.resourceNameKeys,
    ...(request.operation === 'UPDATE' && request.oldObject !== undefined && request.oldObject !== null
      ? { oldObject: request.oldObject }
      : {}),
  });
  verdict.addInvalid(...result.errors).warnField(...result.warnings);
  if (result.errors.length === 0) warnDevicePath(request.object, context, verdict);
  return verdict.build();
}

const NO_DRA = { classesFor: () => [], templateNamespaces: () => undefined };

/** What is missing or ambiguous in the way the network's device is served (docs/dra.md). */
function warnDevicePath(object: unknown, context: AdmissionContext, verdict: Verdict): void {
  const nad = nadFromObject(object, { resourceNameKeys: context.config.resourceNameKeys });
  if (nad.resourceNames.length === 0 && nad.claimTemplate === undefined) return;
  // Without a path: kubectl shows one line of 120 characters, the message is what counts.
  for (const text of devicePathOf(nad, context.dra ?? NO_DRA).problems) verdict.warnNote({ path: '', text });
}

function warnIfUsed(request: AdmissionRequest, context: AdmissionContext, verdict: Verdict): Verdict {
  if (!context.podsUsingNad) return verdict;
  const meta = objectAt(request.oldObject, 'metadata');
  const namespace = request.namespace || stringAt(meta, 'namespace');
  const name = request.name || stringAt(meta, 'name');
  if (!namespace || !name) return verdict;
  const pods = context.podsUsingNad(namespace, name);
  if (pods.length === 0) return verdict;
  const shown = pods.slice(0, SHOWN_PODS).join(', ');
  const more = pods.length > SHOWN_PODS ? ` and ${pods.length - SHOWN_PODS} more` : '';
  verdict.warnNote({
    path: '',
    text: `${namespace}/${name} is still used by ${pods.length} pod${pods.length === 1 ? '' : 's'} (${shown}${more}); new pods naming it will fail`,
  });
  return verdict;
}
