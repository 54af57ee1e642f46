// `npm run bench`: runs every bench section (`*.bench.js` beside this file, or `*.bench.ts` when
// run from source with tsx) one after the other and prints a table per section.
//   node dist/bench/main.js [SECTION...] [--json]
import { readdirSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { formatTable, type BenchResult, type BenchSection } from './harness.js';

const self = fileURLToPath(import.meta.url);
const dir = dirname(self);
const suffix = `.bench${extname(self)}`; // .bench.js when compiled, .bench.ts under tsx

export async function main(argv: string[]): Promise<number> {
  const json = argv.includes('--json');
  const wanted = argv.filter((a) => !a.startsWith('--'));
  const files = readdirSync(dir)
    .filter((f) => f.endsWith(suffix))
    .sort();
  const sections = files.map((f) => ({ file: f, name: basename(f, suffix) })).filter((s) => wanted.length === 0 || wanted.includes(s.name));
  if (sections.length === 0) {
    process.stderr.write(`bench: no section matches ${wanted.join(', ')} (have: ${files.map((f) => basename(f, suffix)).join(', ')})\n`);
    return 2;
  }
  const report: Record<string, { results: BenchResult[]; lines: string[] }> = {};
  for (const s of sections) {
    const mod = (await import(pathToFileURL(join(dir, s.file)).href)) as Partial<BenchSection>;
    if (typeof mod.run !== 'function') {
      process.stderr.write(`bench: ${s.file} exports no run()\n`);
      continue;
    }
    const lines: string[] = [];
    const log = (line: string): void => {
      lines.push(line);
      if (!json) process.stdout.write(`${line}\n`);
    };
    if (!json) process.stdout.write(`\n# ${mod.name ?? s.name}\n`);
    const results = (await mod.run(log)) ?? [];
    report[mod.name ?? s.name] = { results, lines };
    if (!json && results.length > 0) process.stdout.write(`${formatTable(mod.name ?? s.name, results)}\n`);
  }
  if (json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
  return 0;
}

process.exitCode = await main(process.argv.slice(2));
