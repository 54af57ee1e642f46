// Shared helpers for the annotation tests: problems are matched by path (relative to the
// annotation), type and a fragment of the reason, so a test fails on any extra or missing one.
import type { Test } from 'tap';
import type { FieldError } from '../../src/field/index.js';

export const BASE = 'metadata.annotations[k8s.v1.cni.cncf.io/networks]';

/** [path relative to BASE, type, reason fragment (string or regex)] */
export type Expected = [string, FieldError['type'], string | RegExp];

export function expectProblems(t: Test, actual: FieldError[], expected: Expected[], what: string): void {
  const summary = actual.map((e) => `${e.path.slice(BASE.length)} ${e.type}: ${e.reason}`);
  t.equal(actual.length, expected.length, `${what}: count`, { got: summary });
  for (const [path, type, reason] of expected) {
    const hit = actual.find(
      (e) => e.path === BASE + path && e.type === type && (typeof reason === 'string' ? e.reason.includes(reason) : reason.test(e.reason)),
    );
    t.ok(hit, `${what}: ${path} ${type} ${String(reason)}`, { got: summary });
  }
}
