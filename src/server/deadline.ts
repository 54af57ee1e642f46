// The apiserver sends its remaining patience as `?timeout=10s` (a Go duration). NAD lookups must
// finish well before it, leaving time to review, serialize and send the answer.

const UNIT_MS: Record<string, number> = { h: 3_600_000, m: 60_000, s: 1000, ms: 1, us: 0.001, µs: 0.001, ns: 0.000001 };

/** Parses a Go duration (`10s`, `1m30s`, `500ms`); undefined when it is not one. */
export function parseGoDuration(text: string): number | undefined {
  if (!/^(\d+(\.\d+)?(h|m|s|ms|us|µs|ns))+$/.test(text)) return undefined;
  let total = 0;
  for (const [, num, , unit] of text.matchAll(/(\d+(\.\d+)?)(h|ms|m|s|us|µs|ns)/g)) total += Number(num) * UNIT_MS[unit!]!;
  return total;
}

/** The webhook default (timeoutSeconds 10) when the apiserver sends nothing usable. */
export const DEFAULT_TIMEOUT_MS = 10_000;
/** The largest timeoutSeconds the API allows. */
export const MAX_TIMEOUT_MS = 30_000;

/**
 * Milliseconds the NAD lookups may take: the timeout minus a margin (a fifth of it, at least
 * 100 ms) for the review and the response; never below 50 ms.
 */
export function lookupBudgetMs(timeoutParam: unknown): number {
  const parsed = typeof timeoutParam === 'string' ? parseGoDuration(timeoutParam) : undefined;
  const timeout = Math.min(parsed !== undefined && parsed > 0 ? parsed : DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS);
  return Math.max(50, timeout - Math.max(100, timeout / 5));
}
