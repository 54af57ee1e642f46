// PolicyReport objects (wgpolicyk8s.io/v1alpha2, the Policy WG format that Policy Reporter and
// other tools read): one per namespace, named `netattach`, one result per finding. Pure: the
// writer (publisher.ts) decides when to write, and compares `reportDigest`s so that an unchanged
// report is never written again.
import { NAD_API_VERSION, NAD_KIND } from '../nads/index.js';
import { cutMiddleBytes, jsonBytes, keepWithin, MAX_MESSAGE_BYTES, MAX_RESULTS, MAX_RESULTS_BYTES } from './bounds.js';
import type { AuditFinding, ControllerReference, NadAudit, PodAudit, ReportResult } from './types.js';

export { MAX_RESULTS, MAX_RESULTS_BYTES };

export const REPORT_GROUP = 'wgpolicyk8s.io';
export const REPORT_VERSION = 'v1alpha2';
export const REPORT_API_VERSION = `${REPORT_GROUP}/${REPORT_VERSION}`;
export const REPORT_NAME = 'netattach';
export const MANAGED_BY = { 'app.kubernetes.io/managed-by': 'netattach' } as const;
export const REPORT_SOURCE = 'netattach';
/**
 * How many results a report left out (beyond MAX_RESULTS or MAX_RESULTS_BYTES, the least severe
 * ones); the summary still counts every finding.
 */
export const TRUNCATED_ANNOTATION = 'netattach.io/results-omitted';

export interface ReportSummary {
  pass: number;
  fail: number;
  warn: number;
  error: number;
  skip: number;
}

export interface ReportResultObject {
  source: string;
  policy: string;
  rule: string;
  category: string;
  result: ReportResult;
  severity: string;
  scored: boolean;
  message: string;
  resources: Array<{ apiVersion: string; kind: string; namespace: string; name: string; uid?: string }>;
  properties: Record<string, string>;
  timestamp: { seconds: number; nanos: number };
}

export interface PolicyReportObject {
  apiVersion: typeof REPORT_API_VERSION;
  kind: 'PolicyReport';
  metadata: { name: string; namespace: string; labels: Record<string, string>; annotations?: Record<string, string> };
  scope: { apiVersion: string; kind: string; name: string };
  summary: ReportSummary;
  results: ReportResultObject[];
}

/** Worst first: the order of a report's results, and which findings bounds keep. */
export const RESULT_ORDER: Readonly<Record<ReportResult, number>> = { fail: 0, error: 1, warn: 2, skip: 3, pass: 4 };
const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Identity of a result across runs (its first-seen time is kept while it stays). `subject` is
 * the pod's name, or `NetworkAttachmentDefinition/<name>` for a NAD (see subjectOf).
 */
export const resultKey = (subject: string, f: Pick<AuditFinding, 'policy' | 'rule' | 'message'>): string =>
  `${subject}\u0000${f.policy}\u0000${f.rule}\u0000${f.message}`;

/** A result's subject in resultKey: pods by name (as before NADs were reported), other kinds prefixed. */
const subjectOf = (kind: string | undefined, name: string): string => (kind === undefined || kind === 'Pod' ? name : `${kind}/${name}`);

/** What a result names: a pod or a NAD. */
interface Subject {
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
  uid?: string;
}

export interface ReportOptions {
  /** Seconds since the epoch, for results not seen before. */
  now: number;
  /** When a result was first reported (from the previous report), by `resultKey`. */
  firstSeen?: (key: string) => number | undefined;
}

/**
 * A KubeVirt launcher pod's VMI: its controller, which KubeVirt names after the VM that made it.
 * Undefined for any other pod.
 */
export function launcherVmiOf(pod: PodAudit['pod']): ControllerReference | undefined {
  const c = pod.controller;
  return c && c.kind === 'VirtualMachineInstance' && c.apiVersion.startsWith('kubevirt.io/') ? c : undefined;
}

/**
 * The report of one namespace. `audits`: every audited pod of the namespace with networks;
 * `nads`: every NAD of the namespace (clean ones of both count as `pass`). Results are sorted
 * (worst first, then kind, name, policy, rule, message), so the same findings always give the
 * same object.
 */
export function policyReport(
  namespace: string,
  audits: readonly PodAudit[],
  options: ReportOptions,
  nads: readonly NadAudit[] = [],
): PolicyReportObject {
  const summary: ReportSummary = { pass: 0, fail: 0, warn: 0, error: 0, skip: 0 };
  // `vm`: a launcher pod's VMI, reported beside the pod so that a VM's findings are found by the VM.
  const rows: Array<{ subject: Subject; vm?: Subject; finding: AuditFinding }> = [];
  const add = (subject: Subject, findings: readonly AuditFinding[], vm?: Subject): void => {
    if (findings.length === 0) summary.pass++;
    for (const finding of findings) {
      summary[finding.result]++;
      rows.push({ subject, finding, ...(vm ? { vm } : {}) });
    }
  };
  for (const { pod, findings } of audits) {
    const vmi = launcherVmiOf(pod);
    add(
      { apiVersion: 'v1', kind: 'Pod', namespace: pod.namespace, name: pod.name, ...(pod.uid ? { uid: pod.uid } : {}) },
      findings,
      vmi && {
        apiVersion: vmi.apiVersion,
        kind: vmi.kind,
        namespace: pod.namespace,
        name: vmi.name,
        ...(vmi.uid ? { uid: vmi.uid } : {}),
      },
    );
  }
  for (const { nad, findings } of nads)
    add(
      { apiVersion: NAD_API_VERSION, kind: NAD_KIND, namespace: nad.namespace, name: nad.name, ...(nad.uid ? { uid: nad.uid } : {}) },
      findings,
    );
  rows.sort(
    (a, b) =>
      RESULT_ORDER[a.finding.result] - RESULT_ORDER[b.finding.result] ||
      // Pods first (as before NADs were reported), then NADs.
      cmp(a.subject.kind === 'Pod' ? '' : a.subject.kind, b.subject.kind === 'Pod' ? '' : b.subject.kind) ||
      cmp(a.subject.name, b.subject.name) ||
      cmp(a.finding.policy, b.finding.policy) ||
      cmp(a.finding.rule, b.finding.rule) ||
      cmp(a.finding.message, b.finding.message),
  );
  const resultOf = ({ subject, vm, finding }: (typeof rows)[number]): ReportResultObject => {
    // Cut here too: the report must stay bounded whoever built the findings.
    const message = cutMiddleBytes(finding.message, MAX_MESSAGE_BYTES);
    const seen = options.firstSeen?.(resultKey(subjectOf(subject.kind, subject.name), { ...finding, message })) ?? options.now;
    return {
      source: REPORT_SOURCE,
      policy: finding.policy,
      rule: finding.rule,
      category: 'Secondary networks',
      result: finding.result,
      severity: finding.severity,
      scored: true,
      message,
      resources: vm ? [subject, vm] : [subject],
      properties: vm ? { action: finding.action, vm: vm.name } : { action: finding.action },
      timestamp: { seconds: seen, nanos: 0 },
    };
  };
  // Only the results considered are built and measured (a namespace can have 100,000 findings).
  const { kept, omitted } = keepWithin(rows, (row) => jsonBytes(resultOf(row)), MAX_RESULTS, MAX_RESULTS_BYTES);
  const results = kept.map(resultOf);
  return {
    apiVersion: REPORT_API_VERSION,
    kind: 'PolicyReport',
    metadata: {
      name: REPORT_NAME,
      namespace,
      labels: { ...MANAGED_BY },
      ...(omitted > 0 ? { annotations: { [TRUNCATED_ANNOTATION]: String(omitted) } } : {}),
    },
    scope: { apiVersion: 'v1', kind: 'Namespace', name: namespace },
    summary,
    results,
  };
}

/** What a write would change: everything but the first-seen timestamps. */
export function reportDigest(report: Pick<PolicyReportObject, 'summary' | 'results' | 'metadata'>): string {
  return JSON.stringify({
    summary: report.summary,
    omitted: report.metadata.annotations?.[TRUNCATED_ANNOTATION] ?? '0',
    results: report.results.map(({ timestamp: _t, ...rest }) => rest),
  });
}

/** First-seen times of an existing report's results, by `resultKey`. */
export function firstSeenOf(report: { results?: readonly Partial<ReportResultObject>[] } | undefined): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of report?.results ?? []) {
    const name = r.resources?.[0]?.name;
    if (!name || r.policy === undefined || r.rule === undefined || r.message === undefined) continue;
    const subject = subjectOf(r.resources?.[0]?.kind, name);
    if (typeof r.timestamp?.seconds === 'number')
      out.set(resultKey(subject, { policy: r.policy, rule: r.rule, message: r.message }), r.timestamp.seconds);
  }
  return out;
}
