// Wildcard patterns (`*` any run of characters, `?` one character) matched by a linear scan
// with single-star backtracking: O(pattern x text) at worst, never exponential, no regex built
// from user input.

export interface Glob {
  readonly source: string;
  matches(text: string): boolean;
}

export function compileGlob(pattern: string): Glob {
  if (!pattern.includes('*') && !pattern.includes('?')) return { source: pattern, matches: (t) => t === pattern };
  if (pattern === '*') return { source: pattern, matches: () => true };
  return { source: pattern, matches: (t) => globMatch(pattern, t) };
}

function globMatch(p: string, t: string): boolean {
  let pi = 0;
  let ti = 0;
  let star = -1;
  let mark = 0;
  while (ti < t.length) {
    if (pi < p.length && (p[pi] === '?' || p[pi] === t[ti])) {
      pi++;
      ti++;
    } else if (pi < p.length && p[pi] === '*') {
      star = pi++;
      mark = ti;
    } else if (star >= 0) {
      pi = star + 1;
      ti = ++mark;
    } else return false;
  }
  while (pi < p.length && p[pi] === '*') pi++;
  return pi === p.length;
}

/** Matches `namespace/name` with one glob per side, so `*` never crosses the `/`. */
export interface NetworkPattern {
  readonly source: string;
  matches(namespace: string, name: string): boolean;
}

export function compileNetworkPattern(pattern: string): NetworkPattern {
  const slash = pattern.indexOf('/');
  const ns = compileGlob(pattern.slice(0, slash));
  const name = compileGlob(pattern.slice(slash + 1));
  return { source: pattern, matches: (n, m) => ns.matches(n) && name.matches(m) };
}

export const anyGlob = (globs: readonly Glob[], text: string): boolean => globs.some((g) => g.matches(text));
