// Text output: one block per object worth a look (`FILE:LINE: Kind/namespace/name` then one
// indented line per problem, errors rendered as Kubernetes field errors), then a summary line.
import { oneLineSafe, renderError } from '../field/index.js';
import type { CheckReport, Mutation, ObjectResult, ReadError } from './types.js';

export interface TextOptions {
  /** Also list clean objects, audit findings and objects skipped for their namespace. */
  verbose?: boolean;
}

export function objectLabel(r: ObjectResult): string {
  if (!r.kind) return `document ${r.index}${r.item !== undefined ? ` item ${r.item}` : ''}`;
  const name = r.name ?? '<no name>';
  return r.namespace !== undefined ? `${r.kind}/${r.namespace}/${name}` : `${r.kind}/${name}`;
}

const where = (file: string, line?: number, column?: number): string =>
  `${file}${line !== undefined ? `:${line}` : ''}${line !== undefined && column !== undefined ? `:${column}` : ''}`;

export const renderReadError = (e: ReadError): string => `${where(e.file, e.line, e.column)}: error: ${e.message}\n`;

export function renderText(report: CheckReport, options: TextOptions = {}): string {
  const out: string[] = [];
  for (const r of report.results) {
    const lines = linesOf(r, options);
    if (lines.length === 0 && !options.verbose) continue;
    out.push(`${where(r.file, r.line)}: ${objectLabel(r)}\n`);
    // One finding a line: a line break inside a value is shown, not followed.
    out.push(...(lines.length > 0 ? lines : ['  ok']).map((l) => `${oneLineSafe(l)}\n`));
  }
  if (report.networks && report.networks.length > 0) {
    out.push('networks (how each device is served):\n');
    for (const n of report.networks) {
      out.push(`  ${n.namespace}/${n.name}: ${n.summary}\n`);
      for (const p of n.problems) out.push(`    missing: ${p}\n`);
    }
  }
  out.push(`${summaryLine(report)}\n`);
  return out.join('');
}

function linesOf(r: ObjectResult, options: TextOptions): string[] {
  const lines: string[] = [];
  // Something that is not an object is always worth saying; a namespace the webhooks ignore only when asked.
  if (r.skipped !== undefined && (options.verbose || !r.kind || !r.apiVersion)) lines.push(`  skipped: ${r.skipped}`);
  for (const e of r.errors) lines.push(`  error: ${renderError(e)}`);
  for (const w of r.warnings) lines.push(`  warning: ${w}`);
  if (options.verbose)
    for (const a of r.audits) lines.push(`  audit: ${renderError(a)}${a.policy ? ` (policy ${a.policy}, rule ${a.rule})` : ''}`);
  if (r.mutation) lines.push(...mutationLines(r.mutation));
  return lines;
}

function mutationLines(m: Mutation): string[] {
  const pairs = (map: Record<string, string>): string =>
    Object.entries(map)
      .map(([k, v]) => `${k}=${v}`)
      .join(', ');
  const lines: string[] = [];
  for (const [container, res] of Object.entries(m.resources)) {
    const parts = [res.requests && `requests ${pairs(res.requests)}`, res.limits && `limits ${pairs(res.limits)}`].filter(Boolean);
    lines.push(`  mutate: container ${container}: ${parts.join('; ') || 'no resources'}`);
  }
  if (m.nodeSelector) lines.push(`  mutate: nodeSelector ${pairs(m.nodeSelector)}`);
  lines.push(`  patch: ${JSON.stringify(m.patch)}`);
  return lines;
}

export function summaryLine(report: CheckReport): string {
  const s = report.summary;
  const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;
  const parts = [`${plural(s.objects, 'object')} checked`, `${s.denied} denied`, plural(s.errors, 'error'), plural(s.warnings, 'warning')];
  if (s.skipped > 0) parts.push(`${s.skipped} skipped`);
  if (s.readErrors > 0) parts.push(`${plural(s.readErrors, 'unreadable input')} (results incomplete)`);
  return parts.join(', ');
}
