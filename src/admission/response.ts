// The AdmissionReview response, as the apiserver verifies it: same apiVersion and kind, the
// request's uid, `allowed` always present, a patch only from the mutating endpoint.
import { renderError, type FieldError } from '../field/index.js';
import type { AdmissionApiVersion, AdmissionResponse, AdmissionReview, Decision, Endpoint } from './types.js';
import { responseWarnings } from './warnings.js';

const REASONS: Readonly<Record<number, string>> = {
  400: 'BadRequest',
  403: 'Forbidden',
  422: 'Invalid',
  500: 'InternalError',
  503: 'ServiceUnavailable',
};

/** Errors listed in a denial; more are summarized (a 1000-element annotation must not make a 100 KiB message). */
export const MAX_LISTED_ERRORS = 20;

/**
 * All errors in one message, one per line: kubectl prints the message as is, and a line per field
 * reads better than Kubernetes' one-line `[a, b, c]` once there are more than one.
 */
export function denialMessage(errors: readonly FieldError[]): string {
  if (errors.length === 0) return 'denied';
  if (errors.length === 1) return renderError(errors[0]!);
  const listed = errors.slice(0, MAX_LISTED_ERRORS).map((e) => `- ${renderError(e)}`);
  if (errors.length > MAX_LISTED_ERRORS) listed.push(`- and ${errors.length - MAX_LISTED_ERRORS} more`);
  return `${errors.length} errors:\n${listed.join('\n')}`;
}

export function toResponse(apiVersion: AdmissionApiVersion, uid: string, decision: Decision, endpoint: Endpoint): AdmissionReview {
  const response: AdmissionResponse = { uid, allowed: decision.allowed };
  if (!decision.allowed) {
    const code = decision.code ?? 403;
    response.status = { code, reason: REASONS[code] ?? 'Forbidden', message: denialMessage(decision.errors) };
  } else if (endpoint === 'mutate' && decision.patch.length > 0) {
    response.patch = Buffer.from(JSON.stringify(decision.patch)).toString('base64');
    response.patchType = 'JSONPatch';
  }
  const warnings = responseWarnings(decision.warnings);
  if (warnings.length > 0) response.warnings = warnings;
  return { apiVersion, kind: 'AdmissionReview', response };
}
