// Metrics of the background audit and of the report writer, in the server's registry.
import { Counter, Gauge, type Registry } from 'prom-client';
import type { AuditFinding } from './types.js';

/** What the gauges read of the background audit. */
export interface WatchedAudit {
  pending(): number;
  podCount(): number;
  notKept(): number;
}

export interface AuditMetrics {
  watch(audit: WatchedAudit): void;
  /** A finding set of one pod or NAD replaced another. */
  replaced(before: readonly AuditFinding[], after: readonly AuditFinding[]): void;
  judged(pods: number, seconds: number): void;
  passDone(unixSeconds: number): void;
  reportWrite(result: 'created-or-updated' | 'unchanged' | 'failed'): void;
  /** Namespaces whose last report write failed (retried with a growing delay). */
  failingNamespaces(n: number): void;
  leader(isLeader: boolean): void;
  crd(present: boolean): void;
}

export function registerAuditMetrics(registry: Registry): AuditMetrics {
  const registers = [registry];
  const counts = new Map<string, { labels: Record<string, string>; n: number }>();
  let audit: WatchedAudit | undefined;
  new Gauge({
    name: 'netattach_audit_findings',
    help: 'Findings about live pods and NADs now, by policy (builtin for the built-in checks), rule (nadValid for NADs), action and report result',
    labelNames: ['policy', 'rule', 'action', 'result'] as const,
    registers,
    collect() {
      this.reset();
      for (const { labels, n } of counts.values()) if (n > 0) this.set(labels, n);
    },
  });
  new Gauge({
    name: 'netattach_audit_pods',
    help: "Live pods with networks known to the audit (audited), those of them whose annotations are over the audit's bounds and not judged (not-kept), and the pods and NADs waiting to be judged (pending)",
    labelNames: ['state'] as const,
    registers,
    collect() {
      if (!audit) return;
      this.set({ state: 'audited' }, audit.podCount());
      this.set({ state: 'pending' }, audit.pending());
      this.set({ state: 'not-kept' }, audit.notKept());
    },
  });
  const judged = new Counter({
    name: 'netattach_audit_judgements_total',
    help: 'Live pods and NADs judged by the background audit',
    registers,
  });
  const seconds = new Counter({
    name: 'netattach_audit_cpu_seconds_total',
    help: 'Time spent judging live pods and NADs (wall time of the audit slices)',
    registers,
  });
  const pass = new Gauge({
    name: 'netattach_audit_last_complete_timestamp_seconds',
    help: 'When the audit queue was last empty (every live pod judged against what is in force)',
    registers,
  });
  const writes = new Counter({
    name: 'netattach_audit_report_writes_total',
    help: 'PolicyReport writes by result (unchanged: compared and skipped)',
    labelNames: ['result'] as const,
    registers,
  });
  const failing = new Gauge({
    name: 'netattach_audit_report_namespaces_failing',
    help: 'Namespaces whose last PolicyReport write failed (each retried with a growing delay; the others are written meanwhile)',
    registers,
  });
  const leader = new Gauge({
    name: 'netattach_audit_leader',
    help: '1 when this replica holds the audit Lease and writes the PolicyReports',
    registers,
  });
  const crd = new Gauge({
    name: 'netattach_audit_policyreport_crd_present',
    help: '1 when the PolicyReport CRD (wgpolicyk8s.io/v1alpha2) is installed',
    registers,
  });
  const bump = (f: AuditFinding, by: number): void => {
    const labels = { policy: f.policy, rule: f.rule, action: f.action, result: f.result };
    const k = JSON.stringify(labels);
    const cur = counts.get(k) ?? { labels, n: 0 };
    cur.n += by;
    counts.set(k, cur);
  };
  return {
    watch: (a) => void (audit = a),
    replaced(before, after) {
      for (const f of before) bump(f, -1);
      for (const f of after) bump(f, 1);
    },
    judged(pods, s) {
      judged.inc(pods);
      seconds.inc(s);
    },
    passDone: (t) => pass.set(t),
    reportWrite: (result) => writes.inc({ result }),
    failingNamespaces: (n) => failing.set(n),
    leader: (is) => leader.set(is ? 1 : 0),
    crd: (present) => crd.set(present ? 1 : 0),
  };
}
