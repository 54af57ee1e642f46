/**
 * Known limits: mismatches the oracle shows that netattach accepts on purpose, each listed with
 * its reason in docs/cni-runtime.md ("Known limits" table, one `id` per row). A corpus case may
 * cite one; the test fails when the cited id is not in the docs, or when the case stops
 * mismatching.
 */

/** Corpus case id -> known limit id. */
export const KNOWN_LIMIT_CASES: Readonly<Record<string, string>> = {};

/** The ids of the "Known limits" table of docs/cni-runtime.md that give a reason. */
export function knownLimits(markdown: string): Set<string> {
  const start = markdown.indexOf('### Known limits');
  if (start < 0) return new Set();
  const ids = new Set<string>();
  for (const line of markdown.slice(start).split('\n').slice(1)) {
    if (line.startsWith('#')) break;
    const cells = line.split('|').map((c) => c.trim());
    const id = /^`([a-z0-9-]+)`$/.exec(cells[1] ?? '')?.[1];
    if (id && (cells[3] ?? '').length > 0) ids.add(id);
  }
  return ids;
}
