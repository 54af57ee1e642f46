// The AdmissionReview response, as the apiserver verifies it: same apiVersion and kind, the
// request's uid, `allowed` always present, a patch only from the mutating endpoint.
import { cutBytes, renderError, type FieldError } from '../field/index.js';
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
 * Bytes of a denial message. The apiserver puts it in the Status the user reads (and in audit
 * logs); 20 real errors are under 8 KiB. Each error is already cut (path, value, reason), so the
 * budget only bites when the request holds long text: errors that do not fit are counted in
 * "and N more" like those beyond MAX_LISTED_ERRORS.
 */
export const MAX_DENIAL_BYTES = 16 * 1024;

const more = (n: number): string => `\n- and ${n} more`;

/**
 * All errors in one message, one per line: kubectl prints the message as is, and a line per field
 * reads better than Kubernetes' one-line `[a, b, c]` once there are more than one.
 */
export function denialMessage(errors: readonly FieldError[]): string {
  if (errors.length === 0) return 'denied';
  if (errors.length === 1) return cutBytes(renderError(errors[0]!), MAX_DENIAL_BYTES);
  let message = `${errors.length} errors:`;
  let bytes = message.length;
  let listed = 0;
  for (const e of errors) {
    if (listed === MAX_LISTED_ERRORS) break;
    const line = `\n- ${renderError(e)}`;
    const left = errors.length - listed - 1;
    // Room is kept for the summary line while errors are left to summarize.
    const size = Buffer.byteLength(line);
    if (bytes + size + (left > 0 ? more(left).length : 0) > MAX_DENIAL_BYTES) break;
    message += line;
    bytes += size;
    listed++;
  }
  return listed < errors.length ? message + more(errors.length - listed) : message;
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
