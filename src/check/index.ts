// Public face of `netattach check`: manifests in, the webhook's verdicts out.
export type {
  CheckReport,
  CheckSummary,
  ManifestObject,
  Mutation,
  NetworkPathResult,
  ObjectResult,
  ParsedManifests,
  ReadError,
  ReportedError,
} from './types.js';
export { parseManifests } from './parse.js';
export { resourceOf, type ResourceInfo } from './resource.js';
export { checkManifests, draViewOf, namespaceLabelsOf, EXCLUDED_NAMESPACES, ADMISSION_LABEL, type CheckOptions } from './engine.js';
export { describeMutation } from './mutation.js';
export {
  buildReport,
  describeSkipped,
  exitCodeOf,
  nothingJudged,
  CHECK_JUDGES,
  EXIT_CLEAN,
  EXIT_DENIED,
  EXIT_NOTHING_JUDGED,
  EXIT_READ_ERROR,
} from './report.js';
export { renderText, renderReadError, summaryLine, objectLabel, type TextOptions } from './render-text.js';
export { renderJson, JSON_FORMAT_VERSION } from './render-json.js';
export { loadManifests, readInputs, STDIN_NAME, type InputText } from './files.js';
export { loadFromCluster, within, type ClusterLoad, type ClusterSnapshot } from './cluster.js';
