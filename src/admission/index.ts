// Public face of the admission core: pure functions from an AdmissionReview to a decision and back.
export { decodeReview, type DecodeResult } from './decode.js';
export { plan, type NadRef } from './plan.js';
export { review } from './review.js';
export { toResponse, denialMessage, MAX_LISTED_ERRORS } from './response.js';
export { limitWarnings, renderWarning, responseWarnings, shortWarning, warningText, MAX_WARNING_LENGTH, MAX_WARNINGS_TOTAL, type Note, type Warning } from './warnings.js';
export { DEFAULT_CONTAINER_ANNOTATION } from './inject-resources.js';
export { observed, ENFORCEMENT_MODES, OBSERVE_NOTE, type Enforcement } from './observe.js';
export * from './types.js';
