// Public face of the audit: live pods and NADs judged by the admission core, PolicyReports, the
// background loop of `serve` and its report writer.
export type { AuditFinding, AuditedNad, LivePod, NadAudit, PodAudit, ReportResult, ReportSeverity, UnkeptAnnotations } from './types.js';
export { auditPod, findingsOf, hasNetworks, requestFor, type AuditContext } from './judge.js';
export { auditNad, auditedNadOf, requestForNad, NAD_RULE } from './judge-nad.js';
export { auditNadObjects, auditSnapshot, audited, type AuditSnapshot, type NadObjectsSnapshot } from './snapshot.js';
export { livePodOf, finished, ownerReferencesOf } from './live-pod.js';
export { POD_TEXT_CHARS, TEXT_BUDGET_CHARS, UNKEPT_ADDRESSES, type AnnotationBudgetOptions } from './kept-text.js';
export {
  policyReport,
  reportDigest,
  firstSeenOf,
  resultKey,
  MAX_RESULTS,
  MAX_RESULTS_BYTES,
  MANAGED_BY,
  REPORT_API_VERSION,
  REPORT_GROUP,
  REPORT_NAME,
  REPORT_VERSION,
  TRUNCATED_ANNOTATION,
  type PolicyReportObject,
  type ReportOptions,
  type ReportResultObject,
  type ReportSummary,
} from './report.js';
export { capFindings, cutMiddleBytes, keepWithin, MAX_MESSAGE_BYTES, MAX_POD_FINDINGS } from './bounds.js';
export { BackgroundAudit, type BackgroundAuditOptions, type AuditLogger } from './background.js';
export { ReportPublisher, type PublisherOptions } from './publisher.js';
export { Lease, microTime, type LeaseOptions } from './lease.js';
export { registerAuditMetrics, type AuditMetrics } from './metrics.js';
export { loadAuditCluster, type AuditClusterLoad, type AuditClusterSnapshot } from './cluster.js';
export {
  boundedRowsOf,
  renderAuditJson,
  renderAuditTable,
  rowsOf,
  summaryOf,
  violatesEnforce,
  AUDIT_JSON_FORMAT_VERSION,
  type AuditRow,
  type OmittedRows,
} from './render.js';
