// Kubernetes resource quantities, as far as extended resources need them: whole numbers,
// optionally with a decimal or binary suffix or an exponent ("2", "1k", "1Ki", "1e3").

// Decimal suffixes as powers of ten, applied to the digits as written (`Number("1.005e3")`), so
// that "1.005k" is exactly 1005 as in Kubernetes, not 1.005 * 1000 = 1004.9999999999999.
const DECIMAL: Readonly<Record<string, number>> = { '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18, m: -3 };
// Binary suffixes: scaling by a power of two is exact.
const BINARY: Readonly<Record<string, number>> = {
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

const QUANTITY = /^\+?(\d+(?:\.\d*)?|\.\d+)(?:([eE][+-]?\d+)|(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E|m)?)$/;

/** The numeric value of a quantity, or undefined when it is not a quantity at all. */
export function quantityValue(q: unknown): number | undefined {
  if (typeof q === 'number') return Number.isFinite(q) && q >= 0 ? q : undefined;
  if (typeof q !== 'string') return undefined;
  const m = QUANTITY.exec(q.trim());
  if (!m) return undefined;
  const exponent = m[2] ? Number(m[2].slice(1)) : DECIMAL[m[3] ?? ''];
  const value = exponent !== undefined ? Number(`${m[1]}e${exponent}`) : Number(m[1]) * BINARY[m[3]!]!;
  return Number.isFinite(value) ? value : undefined;
}

/** Whole-number count of an extended resource, or an explanation of why the value is not one. */
export function extendedCount(q: unknown): { ok: true; count: number } | { ok: false; reason: string } {
  const v = quantityValue(q);
  if (v === undefined) return { ok: false, reason: 'must be a quantity, e.g. "1"' };
  if (!Number.isInteger(v)) return { ok: false, reason: 'extended resources must be whole numbers' };
  return { ok: true, count: v };
}
