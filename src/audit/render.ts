// `netattach audit` output: a table (one row per finding) or JSON (a stable format), and the
// exit code: 1 when a pod or a NAD breaks an Enforce rule (one like it would be denied now).
// Bounded like a PolicyReport: per namespace at most MAX_RESULTS findings and MAX_RESULTS_BYTES of
// them (the worst kept), each message cut to MAX_MESSAGE_BYTES; the rest are counted ("N more"),
// and the summary and the exit code count everything.
import { oneLineSafe } from '../field/index.js';
import { NAD_KIND } from '../nads/index.js';
import { cutMiddleBytes, jsonBytes, keepWithin, MAX_MESSAGE_BYTES } from './bounds.js';
import { launcherVmiOf, RESULT_ORDER } from './report.js';
import type { AuditFinding, NadAudit, PodAudit, ReportResult } from './types.js';

export const AUDIT_JSON_FORMAT_VERSION = 1;

export interface AuditRow {
  namespace: string;
  /** `Pod` or `NetworkAttachmentDefinition`. */
  kind: string;
  name: string;
  /** The pod's name again, on pod rows only (format version 1 had pods only, under `pod`). */
  pod?: string;
  /**
   * A KubeVirt launcher pod's VM: the name of its controller VMI (KubeVirt names the VMI a VM
   * makes after the VM). The table names the row `vm/NAME`; the pod stays in `name` and `pod`.
   */
  vm?: string;
  uid?: string;
  policy: string;
  rule: string;
  action: string;
  result: ReportResult;
  severity: string;
  message: string;
}

const row = (namespace: string, kind: string, name: string, uid: string | undefined, f: AuditFinding, vm?: string): AuditRow => ({
  namespace,
  kind,
  name,
  ...(kind === 'Pod' ? { pod: name } : {}),
  ...(vm ? { vm } : {}),
  ...(uid ? { uid } : {}),
  policy: f.policy,
  rule: f.rule,
  action: f.action,
  result: f.result,
  severity: f.severity,
  message: f.message,
});

/** One row per finding: the pods' first, then the NADs'. */
export function rowsOf(audits: readonly PodAudit[], nads: readonly NadAudit[] = []): AuditRow[] {
  const rows: AuditRow[] = [];
  for (const { pod, findings } of audits) {
    const vm = launcherVmiOf(pod)?.name;
    for (const f of findings) rows.push(row(pod.namespace, 'Pod', pod.name, pod.uid, f, vm));
  }
  for (const { nad, findings } of nads) for (const f of findings) rows.push(row(nad.namespace, NAD_KIND, nad.name, nad.uid, f));
  return rows;
}

/** Findings of a namespace left out of the output. */
export interface OmittedRows {
  namespace: string;
  findings: number;
}

/** The rows printed, in rowsOf's order, and what each namespace left out. */
export function boundedRowsOf(audits: readonly PodAudit[], nads: readonly NadAudit[] = []): { rows: AuditRow[]; omitted: OmittedRows[] } {
  const rows = rowsOf(audits, nads).map((r) => ({ ...r, message: cutMiddleBytes(r.message, MAX_MESSAGE_BYTES) }));
  const byNamespace = new Map<string, number[]>();
  rows.forEach((r, i) => {
    const list = byNamespace.get(r.namespace);
    if (list) list.push(i);
    else byNamespace.set(r.namespace, [i]);
  });
  const keep = new Array<boolean>(rows.length).fill(false);
  const omitted: OmittedRows[] = [];
  for (const [namespace, indexes] of byNamespace) {
    indexes.sort((a, b) => RESULT_ORDER[rows[a]!.result] - RESULT_ORDER[rows[b]!.result] || a - b);
    const within = keepWithin(indexes, (i) => jsonBytes(rows[i]));
    for (const i of within.kept) keep[i] = true;
    if (within.omitted > 0) omitted.push({ namespace, findings: within.omitted });
  }
  return { rows: rows.filter((_, i) => keep[i]), omitted };
}

export function summaryOf(
  audits: readonly PodAudit[],
  nads: readonly NadAudit[] = [],
): Record<ReportResult, number> & { pods: number; nads: number } {
  const s = { pods: audits.length, nads: nads.length, pass: 0, fail: 0, warn: 0, error: 0, skip: 0 };
  for (const a of [...audits, ...nads]) {
    if (a.findings.length === 0) s.pass++;
    for (const f of a.findings) s[f.result]++;
  }
  return s;
}

/** Does any pod or NAD break a rule admission enforces (a NAD error is one: the webhook denies it)? */
export const violatesEnforce = (audits: readonly PodAudit[], nads: readonly NadAudit[] = []): boolean =>
  [...audits, ...nads].some((a) => a.findings.some((f) => f.action === 'Enforce' && f.result === 'fail'));

/** `omitted` (findings left out, by namespace) is there only when some were. */
export function renderAuditJson(audits: readonly PodAudit[], nads: readonly NadAudit[] = []): string {
  const { rows, omitted } = boundedRowsOf(audits, nads);
  return (
    JSON.stringify(
      {
        formatVersion: AUDIT_JSON_FORMAT_VERSION,
        summary: summaryOf(audits, nads),
        findings: rows,
        ...(omitted.length > 0 ? { omitted } : {}),
      },
      null,
      2,
    ) + '\n'
  );
}

/** kubectl's names: `pod/NAME`, `net-attach-def/NAME` (paste into `kubectl get -n NAMESPACE`). */
const resourceOf = (r: AuditRow): string => {
  const own = `${r.kind === 'Pod' ? 'pod' : 'net-attach-def'}/${r.name}`;
  // A launcher pod: its VM first, the pod beside it (a migrating VM has two).
  return r.vm !== undefined ? `vm/${r.vm} (${own})` : own;
};
const plural = (n: number, one: string, many: string): string => `${n} ${n === 1 ? one : many}`;

export function renderAuditTable(audits: readonly PodAudit[], nads: readonly NadAudit[] = []): string {
  const { rows, omitted } = boundedRowsOf(audits, nads);
  const s = summaryOf(audits, nads);
  const more = omitted
    .map((o) => `... and ${plural(o.findings, 'more finding', 'more findings')} in namespace ${o.namespace} (not shown; counted below)\n`)
    .join('');
  const tail = `${more}${plural(s.pods, 'pod', 'pods')} with networks and ${plural(s.nads, 'NAD', 'NADs')} audited: ${s.pass} clean, ${s.fail} fail, ${s.warn} warn, ${s.skip} skip, ${s.error} error\n`;
  if (rows.length === 0) return tail;
  const header = ['NAMESPACE', 'RESOURCE', 'POLICY', 'RULE', 'RESULT', 'ACTION', 'MESSAGE'];
  // One row a line: a line break inside a value from the cluster is shown, not followed.
  const cells = rows.map((r) => [r.namespace, resourceOf(r), r.policy, r.rule, r.result, r.action, r.message].map(oneLineSafe));
  const widths = header.map((h, i) => (i === header.length - 1 ? 0 : Math.max(h.length, ...cells.map((c) => c[i]!.length))));
  const line = (c: string[]): string => c.map((v, i) => (i === c.length - 1 ? v : v.padEnd(widths[i]!))).join('  ');
  return [line(header), ...cells.map(line)].join('\n') + '\n' + tail;
}
