// What the audit keeps and writes is bounded by bytes, whatever the pods hold: a finding's message
// (an annotation's keys reach it through field paths), the results of one PolicyReport and the
// findings `netattach audit` prints per namespace. The summaries still count everything.
import type { AuditFinding, ReportSeverity } from './types.js';

/**
 * Longest finding message, in UTF-8 bytes. An Event's note is capped at 1 KiB by the API for the
 * same reason; a real message with the longest pod name (253) and namespace (63) is ~450 bytes.
 */
export const MAX_MESSAGE_BYTES = 1024;

/**
 * Results kept in one report (and findings printed per namespace by `netattach audit`): the
 * summary counts every finding; the rest are counted as omitted. 1,000 typical results are
 * ~450 KB.
 */
export const MAX_RESULTS = 1000;

/**
 * Serialized results of one report (and printed findings per namespace), in bytes: a third of
 * etcd's 1.5 MiB object limit, leaving room for metadata and managedFields. 1,000 results with
 * the longest names (~1.3 KB each) were 1.27 MB before this bound; now about 400 of them fit.
 */
export const MAX_RESULTS_BYTES = 512 * 1024;

/**
 * Findings the background audit keeps per live pod; past it the first 31 and one `moreFindings`
 * entry counting the rest. A 16 KiB annotation (the audit's per-pod text bound) can select 1,000
 * networks: with their NAD deleted, 1,000 findings, ~220 KB a pod. A real pod has a handful.
 */
export const MAX_POD_FINDINGS = 32;

const SEVERITY_ORDER: readonly ReportSeverity[] = ['critical', 'high', 'medium', 'low', 'info'];

/**
 * At most `max` findings: as they are, or the first `max - 1` and one more standing for the rest,
 * graded as the worst of them (so a pod is never reported better than it is).
 */
export function capFindings(findings: AuditFinding[], max = MAX_POD_FINDINGS): AuditFinding[] {
  if (findings.length <= max) return findings;
  const rest = findings.slice(max - 1);
  let worst = rest[0]!;
  for (const f of rest) if (SEVERITY_ORDER.indexOf(f.severity) < SEVERITY_ORDER.indexOf(worst.severity)) worst = f;
  return [
    ...findings.slice(0, max - 1),
    {
      policy: 'builtin',
      rule: 'moreFindings',
      action: worst.action,
      result: worst.result,
      severity: worst.severity,
      message: `metadata.annotations: Too many: ${rest.length}: more findings about this pod, not kept by the background audit (it keeps ${max - 1} and this count; the worst of them: ${worst.policy}/${worst.rule}); \`netattach audit\` lists every one`,
    },
  ];
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const isContinuation = (byte: number | undefined): boolean => byte !== undefined && (byte & 0xc0) === 0x80;

/**
 * `text` in at most `maxBytes` UTF-8 bytes: its start and end kept, the middle replaced by
 * `...(N bytes cut)...`. The start of a message names the field, its end the type, value and
 * reason, so both are worth more than a long key in between. Never splits a character.
 */
export function cutMiddleBytes(text: string, maxBytes: number): string {
  // A UTF-16 unit is at most 3 UTF-8 bytes: short texts need no counting.
  if (text.length * 3 <= maxBytes) return text;
  const total = Buffer.byteLength(text, 'utf8');
  if (total <= maxBytes) return text;
  const marker = (cut: number): string => `...(${cut} bytes cut)...`;
  // The marker's length depends on the count, which is at most the whole length.
  const room = Math.max(0, maxBytes - marker(total).length);
  // Only the ends are encoded (a unit is at least one byte): a 200 KB key costs no 200 KB copy.
  const start = encoder.encode(text.slice(0, room));
  const end = encoder.encode(text.slice(-room || text.length));
  let head = Math.floor(room / 2);
  while (head > 0 && isContinuation(start[head])) head--;
  let tail = end.length - (room - head);
  while (tail < end.length && isContinuation(end[tail])) tail++;
  const kept = head + (end.length - tail);
  return `${decoder.decode(start.subarray(0, head))}${marker(total - kept)}${decoder.decode(end.subarray(tail))}`;
}

/** UTF-8 bytes of a value as JSON (what it adds to a serialized report or output). */
export const jsonBytes = (value: unknown): number => encoder.encode(JSON.stringify(value)).length;

/** Items counted against both bounds as they come; once one does not fit, nothing more does. */
export class ResultBudget {
  private count = 0;
  private bytes = 0;
  private full = false;

  constructor(
    private readonly maxCount = MAX_RESULTS,
    private readonly maxBytes = MAX_RESULTS_BYTES,
  ) {}

  /** Takes an item of `bytes` if it fits (one byte more per item: the comma between items). */
  take(bytes: number): boolean {
    if (this.full || this.count >= this.maxCount || this.bytes + bytes + 1 > this.maxBytes) return !(this.full = true);
    this.count++;
    this.bytes += bytes + 1;
    return true;
  }
}

/**
 * The first items that fit both bounds, in order (one that does not fit ends the list, so what
 * is kept is always a prefix: the worst findings, sorted first, are the ones kept), and how many
 * were left out. `size` is called only for items considered.
 */
export function keepWithin<T>(
  items: readonly T[],
  size: (item: T) => number,
  maxCount = MAX_RESULTS,
  maxBytes = MAX_RESULTS_BYTES,
): { kept: T[]; omitted: number } {
  const budget = new ResultBudget(maxCount, maxBytes);
  const kept: T[] = [];
  for (const item of items) {
    if (!budget.take(size(item))) break;
    kept.push(item);
  }
  return { kept, omitted: items.length - kept.length };
}
