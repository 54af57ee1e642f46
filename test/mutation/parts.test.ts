// The mutation parts (stryker.parts.mjs) against the tree: every file a part names exists (a
// renamed test file would otherwise drop out of a part's brace pattern without a word), and every
// source file is mutated by a part or listed, with a reason, as not mutated.
import { existsSync, readdirSync } from 'node:fs';
import { matchesGlob } from 'node:path';
import t from 'tap';
// @ts-expect-error: a plain .mjs script, without types
import { GROUPS, SCOPES, UNMUTATED } from '../../stryker.parts.mjs';

interface Part {
  about: string;
  mutate: string[];
  tests: string[];
}
const parts = Object.entries(SCOPES as Record<string, Part>);
const unmutated = UNMUTATED as Array<{ files: string[]; why: string }>;

/** A brace pattern's alternatives, expanded: `a/{b,c}.ts` is `a/b.ts` and `a/c.ts`. */
function expand(pattern: string): string[] {
  const m = /\{([^{}]*)\}/.exec(pattern);
  if (!m) return [pattern];
  return m[1]!.split(',').flatMap((alt) => expand(pattern.slice(0, m.index) + alt + pattern.slice(m.index + m[0].length)));
}

const sources = readdirSync('src', { recursive: true, encoding: 'utf8' })
  .filter((f) => f.endsWith('.ts'))
  .map((f) => `src/${f}`)
  .sort();

t.test('every file a part names exists', async (t) => {
  const missing = parts.flatMap(([part, p]) =>
    [...p.mutate, ...p.tests].flatMap(expand).flatMap((f) => (f.includes('*') || existsSync(f) ? [] : [`${part}: ${f}`])),
  );
  t.same(missing, []);
});

t.test('every part says what it holds, and every group names parts', async (t) => {
  for (const [part, p] of parts) t.ok(typeof p.about === 'string' && p.about.length > 0, `${part} has an about`);
  for (const [group, names] of Object.entries(GROUPS as Record<string, string[]>))
    for (const name of names) t.ok(name in SCOPES, `${group}: ${name} is a part`);
});

t.test('every source file is mutated by one part or listed as not mutated', async (t) => {
  const mutatedBy = new Map<string, string[]>();
  for (const [part, p] of parts)
    for (const f of sources)
      if (p.mutate.flatMap(expand).some((g) => matchesGlob(f, g))) mutatedBy.set(f, [...(mutatedBy.get(f) ?? []), part]);
  const listed = (f: string) => unmutated.some((u) => u.files.some((g) => matchesGlob(f, g)));
  t.same(
    sources.filter((f) => !mutatedBy.has(f) && !listed(f)),
    [],
    'a source file in no part: add it to a part, or to UNMUTATED with the reason',
  );
  t.same(
    sources.filter((f) => mutatedBy.has(f) && listed(f)),
    [],
    'mutated and listed as not mutated',
  );
  t.same(
    [...mutatedBy].filter(([, by]) => by.length > 1),
    [],
    'a file mutated by two parts: their records would disagree',
  );
  for (const u of unmutated) {
    t.ok(u.why.length > 0, 'a reason');
    for (const g of u.files)
      t.ok(
        sources.some((f) => matchesGlob(f, g)),
        `${g} names a source file`,
      );
  }
});
