// Kubernetes resource quantities, as far as extended resources need them: whole numbers,
// optionally with a decimal or binary suffix or an exponent ("2", "1k", "1Ki", "1e3").

const SUFFIX: Readonly<Record<string, number>> = {
  '': 1,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
  m: 1e-3,
};

const QUANTITY = /^\+?(\d+(?:\.\d*)?|\.\d+)(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E|m)?)$/;

/** The numeric value of a quantity, or undefined when it is not a quantity at all. */
export function quantityValue(q: unknown): number | undefined {
  if (typeof q === 'number') return Number.isFinite(q) && q >= 0 ? q : undefined;
  if (typeof q !== 'string') return undefined;
  const m = QUANTITY.exec(q.trim());
  if (!m) return undefined;
  const base = Number(m[1]);
  const value = m[2] ? base * 10 ** Number(m[2].slice(1)) : base * SUFFIX[m[3] ?? '']!;
  return Number.isFinite(value) ? value : undefined;
}

/** Whole-number count of an extended resource, or an explanation of why the value is not one. */
export function extendedCount(q: unknown): { ok: true; count: number } | { ok: false; reason: string } {
  const v = quantityValue(q);
  if (v === undefined) return { ok: false, reason: 'must be a quantity, e.g. "1"' };
  if (!Number.isInteger(v)) return { ok: false, reason: 'extended resources must be whole numbers' };
  return { ok: true, count: v };
}
