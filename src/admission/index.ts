// Public face of the admission core: pure functions from an AdmissionReview to a decision and back.
export { decodeReview, MAX_UID_BYTES, type DecodeResult } from './decode.js';
export { identityErrors, MAX_NAME_BYTES, MAX_NAMESPACE_BYTES, MAX_OBJECT_UID_BYTES } from './identity.js';
export { plan, type NadRef } from './plan.js';
export { review } from './review.js';
export { toResponse, denialMessage, MAX_LISTED_ERRORS, MAX_DENIAL_BYTES } from './response.js';
export {
  limitWarnings,
  renderWarning,
  responseWarnings,
  shortWarning,
  warningText,
  MAX_WARNING_LENGTH,
  MAX_WARNING_LONG,
  MAX_WARNINGS_TOTAL,
  MAX_WARNINGS,
  type Note,
  type Warning,
} from './warnings.js';
export { DEFAULT_CONTAINER_ANNOTATION } from './inject-resources.js';
export { observed, ENFORCEMENT_MODES, OBSERVE_NOTE, type Enforcement } from './observe.js';
export * from './types.js';
export { parseMultusDefaultNetworks } from './builtin-ifnames.js';
export { REQUEST_KEYS } from './builtin.js';
