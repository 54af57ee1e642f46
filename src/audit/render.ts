// `netattach audit` output: a table (one row per finding) or JSON (a stable format), and the
// exit code: 1 when a pod breaks an Enforce rule (a pod like it would be denied now).
import type { PodAudit, ReportResult } from './types.js';

export const AUDIT_JSON_FORMAT_VERSION = 1;

export interface AuditRow {
  namespace: string;
  pod: string;
  uid?: string;
  policy: string;
  rule: string;
  action: string;
  result: ReportResult;
  severity: string;
  message: string;
}

export function rowsOf(audits: readonly PodAudit[]): AuditRow[] {
  const rows: AuditRow[] = [];
  for (const { pod, findings } of audits) {
    for (const f of findings) {
      rows.push({ namespace: pod.namespace, pod: pod.name, ...(pod.uid ? { uid: pod.uid } : {}), policy: f.policy, rule: f.rule, action: f.action, result: f.result, severity: f.severity, message: f.message });
    }
  }
  return rows;
}

export function summaryOf(audits: readonly PodAudit[]): Record<ReportResult, number> & { pods: number } {
  const s = { pods: audits.length, pass: 0, fail: 0, warn: 0, error: 0, skip: 0 };
  for (const a of audits) {
    if (a.findings.length === 0) s.pass++;
    for (const f of a.findings) s[f.result]++;
  }
  return s;
}

/** Does any pod break a rule admission enforces? */
export const violatesEnforce = (audits: readonly PodAudit[]): boolean =>
  audits.some((a) => a.findings.some((f) => f.action === 'Enforce' && f.result === 'fail'));

export function renderAuditJson(audits: readonly PodAudit[]): string {
  return JSON.stringify({ formatVersion: AUDIT_JSON_FORMAT_VERSION, summary: summaryOf(audits), findings: rowsOf(audits) }, null, 2) + '\n';
}

export function renderAuditTable(audits: readonly PodAudit[]): string {
  const rows = rowsOf(audits);
  const s = summaryOf(audits);
  const tail = `${s.pods} pod${s.pods === 1 ? '' : 's'} with networks audited: ${s.pass} clean, ${s.fail} fail, ${s.warn} warn, ${s.skip} skip, ${s.error} error\n`;
  if (rows.length === 0) return tail;
  const header = ['NAMESPACE', 'POD', 'POLICY', 'RULE', 'RESULT', 'ACTION', 'MESSAGE'];
  const cells = rows.map((r) => [r.namespace, r.pod, r.policy, r.rule, r.result, r.action, r.message]);
  const widths = header.map((h, i) => (i === header.length - 1 ? 0 : Math.max(h.length, ...cells.map((c) => c[i]!.length))));
  const line = (c: string[]): string => c.map((v, i) => (i === c.length - 1 ? v : v.padEnd(widths[i]!))).join('  ');
  return [line(header), ...cells.map(line)].join('\n') + '\n' + tail;
}
