// The report of a run: results in input order, read errors, counts, and the exit code they mean.
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

/** 2 when an input could not be read (the check is incomplete), else 1 when anything would be denied. */
export function exitCodeOf(report: CheckReport): number {
  if (report.readErrors.length > 0) return EXIT_READ_ERROR;
  return report.summary.denied > 0 ? EXIT_DENIED : EXIT_CLEAN;
}
