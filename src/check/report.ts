// The report of a run: results in input order, read errors, counts, and the exit code they mean.
import { resourceOf } from './resource.js';
import type { CheckReport, CheckSummary, NetworkPathResult, ObjectResult, ReadError } from './types.js';

export const EXIT_CLEAN = 0;
export const EXIT_DENIED = 1;
export const EXIT_READ_ERROR = 2;

export function buildReport(results: ObjectResult[], readErrors: ReadError[], networks?: NetworkPathResult[]): CheckReport {
  const summary: CheckSummary = {
    objects: results.length,
    denied: results.filter((r) => !r.allowed).length,
    errors: results.reduce((n, r) => n + r.errors.length, 0),
    warnings: results.reduce((n, r) => n + r.warnings.length, 0),
    skipped: results.filter((r) => r.skipped !== undefined).length,
    readErrors: readErrors.length,
  };
  return { results, readErrors, summary, ...(networks ? { networks } : {}) };
}

/** Also 2: the inputs held nothing to judge (an empty stream, only other kinds): a pipeline that failed upstream. */
export const EXIT_NOTHING_JUDGED = EXIT_READ_ERROR;

/** What the webhooks judge, for the message when nothing among the inputs is one of them. */
export const CHECK_JUDGES =
  'check judges Pods, workloads (Deployment, ReplicaSet, StatefulSet, DaemonSet, Job, CronJob, ReplicationController, PodTemplate), KubeVirt VMs and NetworkAttachmentDefinitions, outside the namespaces the webhooks leave out';

/** `3 objects skipped (2 ConfigMap, 1 Service)`, or that there were none; kinds by count, then name. */
export function describeSkipped(kinds: ReadonlyMap<string, number>): string {
  const total = [...kinds.values()].reduce((a, b) => a + b, 0);
  if (total === 0) return 'the input holds no objects';
  const parts = [...kinds].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map(([k, n]) => `${n} ${k}`);
  return `${total} object${total === 1 ? '' : 's'} skipped (${parts.join(', ')})`;
}

/**
 * Undefined when some object was judged by a webhook; else the message saying what was skipped:
 * kinds no netattach webhook sees, and kinds it sees in namespaces it leaves out.
 */
export function nothingJudged(results: readonly ObjectResult[]): string | undefined {
  const skipped = new Map<string, number>();
  const count = (k: string): void => void skipped.set(k, (skipped.get(k) ?? 0) + 1);
  for (const r of results) {
    if (!r.kind || !r.apiVersion) count('not a Kubernetes object');
    else if (!resourceOf(r.apiVersion, r.kind).watched) count(r.kind);
    else if (r.skipped !== undefined) count(`${r.kind} in an excluded namespace`);
    else return undefined;
  }
  return `nothing to judge: ${describeSkipped(skipped)}; ${CHECK_JUDGES}`;
}

/**
 * 2 when an input could not be read (the check is incomplete) or nothing in the inputs could be
 * judged, else 1 when anything would be denied.
 */
export function exitCodeOf(report: CheckReport): number {
  if (report.readErrors.length > 0) return EXIT_READ_ERROR;
  if (nothingJudged(report.results) !== undefined) return EXIT_NOTHING_JUDGED;
  return report.summary.denied > 0 ? EXIT_DENIED : EXIT_CLEAN;
}
