// The page's number formats (web/src/model/format.ts), the one module every panel, table, legend
// and axis writes numbers with: the digits, the sign, and a dash for what is not a number.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, test } from 'vitest';
import { cell, count, exact, kb, mean, ms, num, pct, plural, points, prob, sci, sig, signed, tick, wide } from '../../web/src/model/format';

const MINUS = '\u2212';

describe('number formats', () => {
  test('num: the digits asked for; a dash for NaN, infinities, null and undefined', () => {
    expect([num(0.12345), num(2, 1), num(1 / 3, 4)]).toEqual(['0.123', '2.0', '0.3333']);
    expect([num(NaN), num(Infinity), num(null), num(undefined)]).toEqual(['—', '—', '—', '—']);
  });

  test('pct, signed and points: one decimal of a percentage; an explicit sign with a true minus', () => {
    expect([pct(0.5), pct(1 / 64), pct(NaN)]).toEqual(['50.0%', '1.6%', '—']);
    expect([signed(0.25), signed(-0.25), signed(0), signed(-1.5, 1), signed(NaN)]).toEqual(['+0.250', `${MINUS}0.250`, '+0.000', `${MINUS}1.5`, '—']);
    expect([points(0.125), points(-0.5), points(NaN)]).toEqual(['+12.5 pts', `${MINUS}50.0 pts`, '—']);
  });

  test('mean: of the values; NaN for none', () => {
    expect(mean(Float32Array.from([1, 2, 3, 6]))).toBe(3);
    expect(mean(new Float32Array(0))).toBeNaN();
  });

  test('prob: 3 decimals, tiny ones in exponent form', () => {
    expect([prob(0.98765), prob(0.0123), prob(0.00001234), prob(0), prob(NaN)]).toEqual(['0.988', '0.012', '1.2e-5', '0.000', '—']);
  });

  test('sci: short exponents without trailing zeros; 0 stays 0; NaN is a dash', () => {
    expect([sci(1.1920929e-7), sci(1e-5), sci(0), sci(2.5e3), sci(NaN), sci(Infinity), sci(-Infinity)]).toEqual(['1.19e-7', '1e-5', '0', '2.5e3', '—', '∞', `${MINUS}∞`]);
  });

  test('cell: fixed digits with a true minus, infinities, and no negative zero', () => {
    expect([cell(0.25), cell(-0.25), cell(-1e-9), cell(-Infinity), cell(Infinity), cell(1 / 3, 2)]).toEqual(['0.250', `${MINUS}0.250`, '0.000', `${MINUS}∞`, '∞', '0.33']);
  });

  test('wide: exponents for the very large and the very small, NaN by name', () => {
    expect([wide(Math.exp(-100)), wide(1e6), wide(0.5), wide(0), wide(NaN), wide(-Infinity)]).toEqual([`3.72e${MINUS}44`, '1.00e6', '0.500', '0.000', 'NaN', `${MINUS}∞`]);
  });

  test('exact and sig: float32 precision for the legend, significant digits for tooltips', () => {
    expect([exact(Math.fround(0.1)), exact(2.5), exact(NaN), exact(null)]).toEqual(['0.1', '2.5', '—', '—']);
    expect([sig(0.123456), sig(1.23456e-5), sig(NaN)]).toEqual(['0.1235', '0.00001235', '—']);
  });

  test('tick: axis labels stay readable below 0.001 on a log scale, never "0"', () => {
    expect([tick(1), tick(0.5), tick(0.01), tick(0.001), tick(0.0001), tick(0.0005), tick(2e-7)]).toEqual(['1', '0.5', '0.01', '1e-3', '1e-4', '5e-4', '2e-7']);
    for (const v of [1e-3, 1e-4, 1e-5, 1e-6]) expect(tick(v)).not.toBe('0');
  });

  test('count, kb and ms: whole numbers and kilobytes with separators; a decimal under 10 ms', () => {
    expect([count(12345.6), kb(2048), kb(1536 * 1024)]).toEqual(['12,346', '2 KB', '1,536 KB']);
    expect([ms(3.14159), ms(123.6)]).toEqual(['3.1', '124']);
  });
});

test('plural: a count and its noun, singular only for 1 ("1 characters" nowhere)', () => {
  expect([0, 1, 2, 1024].map((n) => plural(n, 'character'))).toEqual(['0 characters', '1 character', '2 characters', '1,024 characters']);
  expect([plural(1, 'target pass', 'target passes'), plural(3, 'target pass', 'target passes'), plural(1, 'K/V head')]).toEqual(['1 target pass', '3 target passes', '1 K/V head']);
});

test('format.ts is the only module that turns a number into digits (no toFixed, toPrecision, toExponential or toLocaleString elsewhere in web/src)', () => {
  const src = path.resolve(import.meta.dirname, '../../web/src');
  const found: string[] = [];
  for (const e of fs.readdirSync(src, { recursive: true, withFileTypes: true })) {
    if (!e.isFile() || !/\.ts$/.test(e.name)) continue;
    const rel = path.relative(src, path.join(e.parentPath, e.name));
    if (rel === path.join('model', 'format.ts')) continue;
    fs.readFileSync(path.join(e.parentPath, e.name), 'utf8').split('\n').forEach((line, i) => {
      if (/\.(toFixed|toPrecision|toExponential|toLocaleString)\(|Intl\.NumberFormat/.test(line)) found.push(`${rel}:${i + 1}: ${line.trim()}`);
    });
  }
  expect(found).toEqual([]);
});
