// Two lists that must name the same things (a doc and what it documents): each side's names the
// other lacks, asserted apart, so that a failure says which side is behind.
import type { Test } from 'tap';

export function sameNames(t: Test, want: Iterable<string>, have: Iterable<string>, messages: { missing: string; extra: string }): void {
  const wanted = [...want];
  const had = [...have];
  t.strictSame(
    wanted.filter((n) => !had.includes(n)),
    [],
    messages.missing,
  );
  t.strictSame(
    had.filter((n) => !wanted.includes(n)),
    [],
    messages.extra,
  );
}
