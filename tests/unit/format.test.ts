// The page's number formats (web/src/model/format.ts), shared by every panel: the digits, the sign,
// and a dash for what is not a number.
import { describe, expect, test } from 'vitest';
import { mean, num, pct, signed } from '../../web/src/model/format';

describe('number formats', () => {
  test('num: the digits asked for; a dash for NaN, infinities, null and undefined', () => {
    expect([num(0.12345), num(2, 1), num(1 / 3, 4)]).toEqual(['0.123', '2.0', '0.3333']);
    expect([num(NaN), num(Infinity), num(null), num(undefined)]).toEqual(['—', '—', '—', '—']);
  });

  test('pct and signed: one decimal of a percentage; an explicit sign with a true minus', () => {
    expect([pct(0.5), pct(1 / 64), pct(NaN)]).toEqual(['50.0%', '1.6%', '—']);
    expect([signed(0.25), signed(-0.25), signed(0), signed(-1.5, 1), signed(NaN)]).toEqual(['+0.250', '\u22120.250', '+0.000', '\u22121.5', '—']);
  });

  test('mean: of the values; NaN for none', () => {
    expect(mean(Float32Array.from([1, 2, 3, 6]))).toBe(3);
    expect(mean(new Float32Array(0))).toBeNaN();
  });
});
