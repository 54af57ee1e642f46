// JSON output, version 1 (docs/check.md). Keys are written in a fixed order and optional keys
// are left out rather than null, so the output diffs cleanly and scripts can rely on it.
import type { CheckReport, ObjectResult, ReadError, ReportedError } from './types.js';

export const JSON_FORMAT_VERSION = 1;

const error = (e: ReportedError): Record<string, unknown> => ({
  path: e.path,
  type: e.type,
  ...('value' in e && e.value !== undefined ? { value: e.value } : {}),
  reason: e.reason,
  ...(e.rule !== undefined ? { rule: e.rule } : {}),
  ...(e.policy !== undefined ? { policy: e.policy } : {}),
});

const result = (r: ObjectResult): Record<string, unknown> => ({
  file: r.file,
  index: r.index,
  ...(r.item !== undefined ? { item: r.item } : {}),
  ...(r.line !== undefined ? { line: r.line } : {}),
  ...(r.apiVersion !== undefined ? { apiVersion: r.apiVersion } : {}),
  ...(r.kind !== undefined ? { kind: r.kind } : {}),
  ...(r.namespace !== undefined ? { namespace: r.namespace } : {}),
  ...(r.name !== undefined ? { name: r.name } : {}),
  allowed: r.allowed,
  ...(r.skipped !== undefined ? { skipped: r.skipped } : {}),
  errors: r.errors.map(error),
  warnings: r.warnings,
  audits: r.audits.map(error),
  ...(r.mutation
    ? {
        mutation: {
          patch: r.mutation.patch,
          resources: r.mutation.resources,
          ...(r.mutation.nodeSelector ? { nodeSelector: r.mutation.nodeSelector } : {}),
        },
      }
    : {}),
});

const readError = (e: ReadError): Record<string, unknown> => ({
  file: e.file,
  ...(e.line !== undefined ? { line: e.line } : {}),
  ...(e.column !== undefined ? { column: e.column } : {}),
  message: e.message,
});

export function renderJson(report: CheckReport): string {
  const s = report.summary;
  const doc = {
    version: JSON_FORMAT_VERSION,
    results: report.results.map(result),
    readErrors: report.readErrors.map(readError),
    ...(report.networks
      ? {
          networks: report.networks.map((n) => ({
            namespace: n.namespace,
            name: n.name,
            path: n.path,
            summary: n.summary,
            problems: n.problems,
          })),
        }
      : {}),
    summary: { objects: s.objects, denied: s.denied, errors: s.errors, warnings: s.warnings, skipped: s.skipped, readErrors: s.readErrors },
  };
  return `${JSON.stringify(doc, null, 2)}\n`;
}
