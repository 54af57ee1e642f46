// Reads the committed incremental results (reports/stryker-incremental/<part>.json) and prints
// what docs/mutation.md reports: the score of each file and part, and the surviving mutants.
//
//   node scripts/mutation-report.mjs                 # markdown table: every file of every part
//   node scripts/mutation-report.mjs --survivors     # each surviving or uncovered mutant, with its line
//   node scripts/mutation-report.mjs --check         # exit 1 unless the ledger accounts for every
//                                                    # survivor of its accounted parts, and names
//                                                    # no mutant that did not survive
//   node scripts/mutation-report.mjs --ledger        # the ledger as markdown
//   node scripts/mutation-report.mjs --write         # writes the parts, the scores and the ledger into docs/mutation.md,
//                                                    # between their markers
//   node scripts/mutation-report.mjs --stale         # the parts whose record was made on other
//                                                    # code than the tree's (to re-run), and those
//                                                    # whose tests changed since
//   NETATTACH_MUTATION_SCOPE=admission node scripts/mutation-report.mjs   # some parts only
//
// The score is Stryker's: killed and timed-out mutants over all mutants that ran or had no
// coverage; mutants that broke the module's loading ("runtime error") are not counted.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { partsOf, SCOPES, UNMUTATED } from '../stryker.parts.mjs';

const DETECTED = new Set(['Killed', 'Timeout']);
const UNDETECTED = new Set(['Survived', 'NoCoverage']);
// The ledger, docs/mutation-ledger.json: { accountedParts: [part...], entries: [{ file, where,
// kind: 'equivalent' | 'killed-by-hand', reason, test?, mutants: [{ line, mutator, replacement }] }] }.
// `line` is the text of the mutant's source line (trimmed), so an entry survives edits that only
// move the line. 'killed-by-hand' is a mutant that a test added after the part's last run kills,
// checked by making the change by hand; the part's next run records it as killed, and --check
// then asks for the entry to go.
const LEDGER = 'docs/mutation-ledger.json';

// Each part's results, parsed once: the tables and the check all read them (several MB each).
const parsed = new Map();
/** The results of one part, or undefined when it has not run yet. */
function results(part) {
  if (!parsed.has(part)) {
    const file = `reports/stryker-incremental/${part}.json`;
    parsed.set(part, existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : undefined);
  }
  return parsed.get(part);
}

/** What identifies a mutant across edits that move it: its file, the text of its line, the change. */
export const mutantKey = (file, lineText, m) => `${file}|${lineText.trim()}|${m.mutatorName}|${m.replacement}`;

function tally(mutants) {
  const t = { mutants: 0, killed: 0, survived: 0, noCoverage: 0 };
  for (const m of mutants) {
    if (DETECTED.has(m.status)) t.killed++;
    else if (m.status === 'Survived') t.survived++;
    else if (m.status === 'NoCoverage') t.noCoverage++;
    else continue;
    t.mutants++;
  }
  return t;
}
const pct = (n, d) => (d ? ((100 * n) / d).toFixed(1) + ' %' : '–');
const score = (t) => pct(t.killed, t.mutants);
const row = (cells) => `| ${cells.join(' | ')} |`;

/** Every surviving or uncovered mutant recorded for the parts, with its key. */
export function survivors(parts) {
  const out = [];
  for (const part of parts) {
    const r = results(part);
    if (!r) continue;
    for (const [file, f] of Object.entries(r.files)) {
      const lines = f.source.split('\n');
      for (const m of f.mutants) {
        if (!UNDETECTED.has(m.status)) continue;
        const lineText = lines[m.location.start.line - 1] ?? '';
        out.push({ part, file, m, lineText, key: mutantKey(file, lineText, m) });
      }
    }
  }
  return out;
}

/** How often the ledger lists each mutant key, over the entries of `kind` (all when omitted). */
function ledgerKeys(ledger, kind) {
  const keys = new Map();
  for (const e of ledger.entries) {
    if (kind && e.kind !== kind) continue;
    for (const m of e.mutants) {
      const key = mutantKey(e.file, m.line, { mutatorName: m.mutator, replacement: m.replacement });
      keys.set(key, (keys.get(key) ?? 0) + 1);
    }
  }
  return keys;
}

export function readLedger() {
  return existsSync(LEDGER) ? JSON.parse(readFileSync(LEDGER, 'utf8')) : { accountedParts: [], entries: [] };
}

/** What is wrong with the ledger against the recorded survivors: one line per problem. */
export function checkLedger(ledger, found) {
  const problems = [];
  const accounted = new Set(ledger.accountedParts);
  const listed = ledgerKeys(ledger);
  for (const e of ledger.entries) {
    if (!['equivalent', 'killed-by-hand'].includes(e.kind)) problems.push(`${e.file} ${e.where}: kind must be equivalent or killed-by-hand, not ${JSON.stringify(e.kind)}`);
    if (!e.reason) problems.push(`${e.file} ${e.where}: no reason`);
    if (e.kind === 'killed-by-hand' && !e.test) problems.push(`${e.file} ${e.where}: killed-by-hand names no test`);
  }
  const survivedKeys = new Map();
  for (const s of found) {
    survivedKeys.set(s.key, (survivedKeys.get(s.key) ?? 0) + 1);
    if (accounted.has(s.part) && !listed.has(s.key)) {
      problems.push(`not accounted for: ${s.file}:${s.m.location.start.line} [${s.m.status}] ${s.m.mutatorName} -> ${JSON.stringify(s.m.replacement)}: ${s.lineText.trim()}`);
    }
  }
  for (const key of listed.keys()) {
    if (!survivedKeys.has(key)) problems.push(`listed but not a recorded survivor (killed since, or the line changed): ${key}`);
  }
  return problems;
}

export function renderLedger(ledger) {
  const parts = ledger.accountedParts.length ? ledger.accountedParts.map((p) => `\`${p}\``).join(', ') : 'none';
  const count = (kind) => ledger.entries.filter((e) => e.kind === kind).reduce((n, e) => n + e.mutants.length, 0);
  const summary = `Accounted parts: ${parts}. Their survivors: ${count('equivalent')} equivalent, ${count('killed-by-hand')} killed by tests added after the run.`;
  const out = [summary, '', '| where | mutant | kind | why |', '| --- | --- | --- | --- |'];
  const cell = (t) => String(t).replaceAll('|', '\\|').replaceAll('\n', ' ');
  for (const e of ledger.entries) {
    const what = e.mutants.map((m) => `\`${cell(m.line)}\`: ${m.mutator} → \`${cell(m.replacement)}\``).join('<br>');
    const why = e.kind === 'killed-by-hand' ? `${cell(e.reason)} (killed by \`${e.test}\`, checked by hand)` : cell(e.reason);
    out.push(`| \`${e.file.replace(/^src\//, '')}\` ${cell(e.where)} | ${what} | ${e.kind} | ${why} |`);
  }
  return out.join('\n') + '\n';
}

/** The score of every file and part, as a markdown table. */
export function renderScores(parts) {
  const out = [row(['part', 'file', 'mutants', 'killed', 'survived', 'no coverage', 'score']), row(['---', '---', '---:', '---:', '---:', '---:', '---:'])];
  const total = { mutants: 0, killed: 0, survived: 0, noCoverage: 0 };
  for (const part of parts) {
    const r = results(part);
    if (!r) {
      out.push(row([`\`${part}\``, 'not run yet', '', '', '', '', '']));
      continue;
    }
    const all = [];
    for (const [file, f] of Object.entries(r.files).sort(([a], [b]) => a.localeCompare(b))) {
      const t = tally(f.mutants);
      all.push(...f.mutants);
      out.push(row([`\`${part}\``, `\`${file}\``, t.mutants, t.killed, t.survived, t.noCoverage, score(t)]));
    }
    const t = tally(all);
    for (const k of Object.keys(total)) total[k] += t[k];
    out.push(row([`**${part}**`, '', t.mutants, t.killed, t.survived, t.noCoverage, `**${score(t)}**`]));
  }
  out.push(row(['**all parts run**', '', total.mutants, total.killed, total.survived, total.noCoverage, `**${score(total)}**`]));
  out.push('', ...renderFolders(parts, readLedger()));
  return out.join('\n') + '\n';
}

/**
 * The score of each source folder as recorded, and counting the survivors the ledger lists as
 * killed by a test added after the run (checked by hand): what the part's next run should record.
 */
function renderFolders(parts, ledger) {
  const folders = new Map();
  const totalsOf = (file) => {
    const name = file.split('/').slice(0, 2).join('/');
    if (!folders.has(name)) folders.set(name, { mutants: 0, killed: 0, byHand: 0 });
    return folders.get(name);
  };
  for (const part of parts) {
    for (const [file, f] of Object.entries(results(part)?.files ?? {})) {
      const t = tally(f.mutants);
      totalsOf(file).mutants += t.mutants;
      totalsOf(file).killed += t.killed;
    }
  }
  // A key the ledger lists n times counts for at most n survivors.
  const byHand = ledgerKeys(ledger, 'killed-by-hand');
  for (const s of survivors(parts)) {
    if (!byHand.get(s.key)) continue;
    byHand.set(s.key, byHand.get(s.key) - 1);
    totalsOf(s.file).byHand++;
  }
  const out = [row(['folder', 'mutants', 'recorded score', 'with the kills checked by hand']), row(['---', '---:', '---:', '---:'])];
  const all = { mutants: 0, killed: 0, byHand: 0 };
  for (const [folder, t] of [...folders].sort(([a], [b]) => a.localeCompare(b))) {
    for (const k of Object.keys(all)) all[k] += t[k];
    out.push(row([`\`${folder}\``, t.mutants, pct(t.killed, t.mutants), pct(t.killed + t.byHand, t.mutants)]));
  }
  out.push(row(['**all**', all.mutants, `**${pct(all.killed, all.mutants)}**`, `**${pct(all.killed + all.byHand, all.mutants)}**`]));
  return out;
}

const DOC = 'docs/mutation.md';
const marker = (name) => [`<!-- ${name}: generated by node scripts/mutation-report.mjs --write -->`, `<!-- ${name} end -->`];

/** The document with `rendered` between the markers of section `name` ('parts', 'scores' or 'ledger'). */
export function withSection(doc, name, rendered) {
  const [begin, end] = marker(name);
  const a = doc.indexOf(begin);
  const b = doc.indexOf(end);
  if (a < 0 || b < a) throw new Error(`${DOC} has no ${name} markers`);
  return doc.slice(0, a + begin.length) + '\n' + rendered + doc.slice(b);
}

/** The parts, what each mutates and with which tests, and the files no part mutates: from stryker.parts.mjs. */
export function renderParts(scopes = SCOPES, unmutated = UNMUTATED) {
  const code = (patterns) => patterns.map((p) => `\`${p}\``).join(', ');
  const out = [row(['part', 'mutated', 'test files']), row(['---', '---', '---'])];
  let previous = '';
  for (const [part, p] of Object.entries(scopes)) {
    const tests = code(p.tests);
    out.push(row([`\`${part}\``, `${code(p.mutate)} (${p.about})`, tests === previous ? 'the same' : tests]));
    previous = tests;
  }
  out.push('', 'Not mutated:', '');
  for (const u of unmutated) out.push(`- ${code(u.files)}: ${u.why}.`);
  return out.join('\n') + '\n';
}

/** docs/mutation.md as it should read: every generated section up to date. */
export const renderedDoc = (doc) =>
  withSection(withSection(withSection(doc, 'parts', renderParts()), 'scores', renderScores(partsOf(''))), 'ledger', renderLedger(readLedger()));

/**
 * The parts whose record is of other code than the tree's: a source file or a test file whose text
 * differs from the text the record was made on (Stryker keeps both), or a part never run. Records
 * are not re-made on every change (a part takes minutes to an hour), so this says which to re-run
 * rather than failing the tests.
 */
export function staleParts(parts, read = (path) => (existsSync(path) ? readFileSync(path, 'utf8') : undefined), recordOf = results) {
  const out = [];
  for (const part of parts) {
    const r = recordOf(part);
    if (!r) {
      out.push({ part, files: [], tests: [], never: true });
      continue;
    }
    const changed = (entries) => Object.entries(entries ?? {}).flatMap(([path, v]) => (v.source !== undefined && read(path) !== v.source ? [path] : []));
    const files = changed(r.files);
    const tests = changed(r.testFiles);
    if (files.length || tests.length) out.push({ part, files, tests, never: false });
  }
  return out;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const args = new Set(process.argv.slice(2));
  const parts = partsOf(process.env.NETATTACH_MUTATION_SCOPE);
  if (args.has('--survivors')) {
    for (const s of survivors(parts)) {
      console.log(`${s.file}:${s.m.location.start.line}:${s.m.location.start.column} [${s.m.status}] ${s.m.mutatorName} -> ${JSON.stringify(s.m.replacement)}`);
      console.log(`    ${s.lineText.trim()}`);
    }
  } else if (args.has('--check')) {
    const problems = checkLedger(readLedger(), survivors(parts));
    for (const p of problems) console.log(p);
    console.log(problems.length ? `${problems.length} problems in ${LEDGER}` : `${LEDGER} accounts for every survivor of its parts`);
    process.exit(problems.length ? 1 : 0);
  } else if (args.has('--stale')) {
    const stale = staleParts(parts);
    const rerun = stale.filter((s) => s.never || s.files.length);
    for (const s of rerun) console.log(`${s.part}: ${s.never ? 'never run' : `code changed: ${s.files.join(', ')}`}`);
    // Tests changed alone: the record is of the tree's code; if the tests only grew, it may count
    // as survivors mutants the new tests kill. (A test file added to a part is not seen here: the
    // record lists only the files it ran.)
    for (const s of stale.filter((s) => !s.never && !s.files.length)) console.log(`${s.part}: tests changed since (${s.tests.join(', ')})`);
    console.log(rerun.length ? `${rerun.length} of ${parts.length} parts to re-run` : `every record is of the tree's code`);
  } else if (args.has('--ledger')) {
    process.stdout.write(renderLedger(readLedger()));
  } else if (args.has('--write')) {
    writeFileSync(DOC, renderedDoc(readFileSync(DOC, 'utf8')));
  } else {
    process.stdout.write(renderScores(parts));
  }
}
