export type { FieldError, FieldErrorType } from './errors.js';
export {
  required,
  invalid,
  unsupported,
  duplicate,
  forbidden,
  tooLong,
  tooMany,
  notFound,
  internal,
  renderValue,
  renderError,
  renderErrors,
} from './errors.js';
export { child, index, key } from './path.js';
export { MAX_RENDERED_PATH, MAX_RENDERED_REASON } from './errors.js';
export { MAX_RENDERED_TEXT, cutText, cutBytes, headOf, terminalSafe, oneLineSafe } from './text.js';
