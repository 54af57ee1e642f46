/**
 * The table of deliberate differences from network-resources-injector (docs/nri-differences.json),
 * shared by the oracle test (which fails on a difference not in it) and the migration guide
 * (which shows it; test/docs/nri-differences.test.ts keeps the two equal).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

export interface Difference {
  id: string;
  case: string;
  nri: string;
  netattach: string;
  reason: string;
  /** Patterns of the JSON pointers (into `{outcome, pod}`) where the two results differ. */
  paths: string[];
}

export interface DifferenceTable {
  peer: string;
  differences: Difference[];
}

export const DIFFERENCES_FILE = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../../../docs/nri-differences.json');
export const TABLE_BEGIN = '<!-- nri-differences: generated from docs/nri-differences.json -->';
export const TABLE_END = '<!-- /nri-differences -->';

export function loadDifferences(file = DIFFERENCES_FILE): DifferenceTable {
  return JSON.parse(readFileSync(file, 'utf8')) as DifferenceTable;
}

const cell = (s: string): string => s.replace(/\|/g, '\\|');

/** The Markdown table the migration guide shows between TABLE_BEGIN and TABLE_END. */
export function renderDifferences(table: DifferenceTable): string {
  return [
    `| case | ${table.peer} | netattach | why |`,
    '|---|---|---|---|',
    ...table.differences.map((d) => `| ${cell(d.case)} | ${cell(d.nri)} | ${cell(d.netattach)} | ${cell(d.reason)} |`),
  ].join('\n');
}

/** One place where the two results differ: a JSON Patch operation from NRI's result to netattach's. */
export interface Delta {
  op: string;
  path: string;
  value?: unknown;
}

/**
 * Splits the deltas of one case into those explained by the listed differences and those that are
 * not, and names the listed differences that explain none of them (stale for this case).
 */
export function explain(
  deltas: readonly Delta[],
  listed: readonly string[],
  table: DifferenceTable,
): { unexplained: Delta[]; unused: string[] } {
  const byId = new Map(table.differences.map((d) => [d.id, d]));
  const missing = listed.filter((id) => !byId.has(id));
  if (missing.length > 0) throw new Error(`not in ${path.basename(DIFFERENCES_FILE)}: ${missing.join(', ')}`);
  const patterns = listed.map((id) => ({ id, res: byId.get(id)!.paths.map((p) => new RegExp(p)) }));
  const used = new Set<string>();
  const unexplained: Delta[] = [];
  for (const d of deltas) {
    const hit = patterns.filter((p) => p.res.some((re) => re.test(d.path)));
    for (const h of hit) used.add(h.id);
    if (hit.length === 0) unexplained.push(d);
  }
  return { unexplained, unused: listed.filter((id) => !used.has(id)) };
}

// `npx tsx test/e2e/lib/nri-differences.ts` prints the table for docs/migrating-from-nri.md.
if (process.argv[1] && path.resolve(process.argv[1]) === new URL(import.meta.url).pathname) {
  process.stdout.write(`${TABLE_BEGIN}\n${renderDifferences(loadDifferences())}\n${TABLE_END}\n`);
}
