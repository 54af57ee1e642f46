// Kubernetes quantities as extended resources read them (src/admission/quantity.ts): an optional
// "+", digits with an optional fraction (or a fraction alone), then either an exponent or one
// decimal/binary suffix, and nothing else; surrounding whitespace is ignored, as the apiserver's
// JSON decoding of a Quantity trims it.
import t from 'tap';
import { extendedCount, quantityValue } from '../../src/admission/quantity.js';

t.test('numbers: finite and non-negative, else not a quantity', async (t) => {
  const table: Array<[unknown, number | undefined]> = [
    [0, 0],
    [3, 3],
    [2.5, 2.5],
    [-1, undefined],
    [-0.5, undefined],
    [Number.NaN, undefined],
    [Number.POSITIVE_INFINITY, undefined],
  ];
  for (const [q, want] of table) t.equal(quantityValue(q), want, String(q));
});

t.test('non-strings and non-numbers are not quantities', async (t) => {
  for (const q of [null, undefined, true, {}, ['1']]) t.equal(quantityValue(q), undefined, JSON.stringify(q) ?? 'undefined');
});

t.test('strings: mantissa, fraction, exponent, suffix', async (t) => {
  const table: Array<[string, number | undefined]> = [
    ['2', 2],
    ['+2', 2],
    [' 2 ', 2],
    ['1.5', 1.5],
    ['1.25', 1.25],
    ['1.', 1],
    ['.5', 0.5],
    ['.25', 0.25],
    ['1k', 1000],
    ['1.5k', 1500],
    ['1.25k', 1250],
    ['.25k', 250],
    ['1Ki', 1024],
    ['2Mi', 2 * 2 ** 20],
    ['1E', 1e18],
    ['1500m', 1.5],
    ['1e3', 1000],
    ['1E3', 1000],
    ['1e+3', 1000],
    ['2e-1', 0.2],
    ['1e12', 1e12],
    ['1.5e2', 150],
    // not quantities
    ['', undefined],
    ['a1', undefined],
    ['x1k', undefined],
    ['1x', undefined],
    ['1kx', undefined],
    ['1e', undefined],
    ['1ex', undefined],
    ['1e+', undefined],
    ['1ee3', undefined],
    ['1xe3', undefined],
    ['1e+-3', undefined],
    ['1e3k', undefined],
    ['.', undefined],
    ['.x', undefined],
    ['1.x', undefined],
    ['-1', undefined],
    ['1 k', undefined],
    ['1K', undefined],
    ['1e400', undefined],
  ];
  for (const [q, want] of table) t.equal(quantityValue(q), want, JSON.stringify(q));
});

t.test('extendedCount: whole numbers only', async (t) => {
  const notQuantity = { ok: false, reason: 'must be a quantity, e.g. "1"' };
  const notWhole = { ok: false, reason: 'extended resources must be whole numbers' };
  const table: Array<[unknown, object]> = [
    ['1', { ok: true, count: 1 }],
    [2, { ok: true, count: 2 }],
    ['1e3', { ok: true, count: 1000 }],
    ['1e+3', { ok: true, count: 1000 }],
    ['1e12', { ok: true, count: 1e12 }],
    ['1.5k', { ok: true, count: 1500 }],
    ['.25k', { ok: true, count: 250 }],
    ['2000m', { ok: true, count: 2 }],
    ['1Ki', { ok: true, count: 1024 }],
    // decimal scaling is exact, as Kubernetes' is: 1.005 * 1000 in binary floating point is not 1005
    ['1.005k', { ok: true, count: 1005 }],
    ['1.15e2', { ok: true, count: 115 }],
    ['1.001e3', { ok: true, count: 1001 }],
    ['1.5Ki', { ok: true, count: 1536 }],
    ['1.5', notWhole],
    ['.5', notWhole],
    ['1500m', notWhole],
    ['2e-1', notWhole],
    [-1, notQuantity],
    ['a1', notQuantity],
    ['1x', notQuantity],
    [null, notQuantity],
  ];
  for (const [q, want] of table) t.same(extendedCount(q), want, JSON.stringify(q));
});
