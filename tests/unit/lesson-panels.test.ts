// The lesson panels' pure parts: the diverging palette (centred, monotone, readable text) and the
// logits setting's parser and cleaner.
import { describe, expect, test } from 'vitest';
import { relativeLuminance } from '../../web/src/draw/colormap';
import { DIVERGING_STOPS, divergingColours, divergingRgb, symmetricScale } from '../../web/src/draw/diverging';
import { cleanLogits, DEFAULT_LOGITS, parseLogits } from '../../web/src/settings/logits';

const contrast = (a: number, b: number) => (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
const lum = (rgb: readonly number[]) => relativeLuminance(rgb[0], rgb[1], rgb[2]);

describe('diverging palette', () => {
  test('the stops at -1, 0, 1; clamped outside; NaN is the centre', () => {
    expect(divergingRgb(-1)).toEqual([...DIVERGING_STOPS[0]]);
    expect(divergingRgb(0)).toEqual([...DIVERGING_STOPS[2]]);
    expect(divergingRgb(1)).toEqual([...DIVERGING_STOPS[4]]);
    expect(divergingRgb(-7)).toEqual(divergingRgb(-1));
    expect(divergingRgb(7)).toEqual(divergingRgb(1));
    expect(divergingRgb(NaN)).toEqual(divergingRgb(0));
    // Linear between stops: halfway from 0 to 0.5.
    const mid = divergingRgb(0.25);
    for (let c = 0; c < 3; ++c) expect(mid[c]).toBe(Math.round((DIVERGING_STOPS[2][c] + DIVERGING_STOPS[3][c]) / 2));
  });

  test('lightness falls with |t| on both sides (sign and size read in greyscale); blue below, orange above', () => {
    for (let i = 1; i <= 100; ++i) {
      const t = i / 100;
      const prev = (i - 1) / 100;
      expect(lum(divergingRgb(t))).toBeLessThanOrEqual(lum(divergingRgb(prev)) + 1e-12);
      expect(lum(divergingRgb(-t))).toBeLessThanOrEqual(lum(divergingRgb(-prev)) + 1e-12);
      const [r, , b] = divergingRgb(t);
      const [rn, , bn] = divergingRgb(-t);
      expect(r).toBeGreaterThan(b);
      expect(bn).toBeGreaterThan(rn);
    }
  });

  test('the text colour reads at WCAG AA (4.5:1) on every colour of the ramp', () => {
    for (let i = -1000; i <= 1000; ++i) {
      const { background, color } = divergingColours(i / 1000, 1);
      const bg = lum(background.match(/\d+/g)!.map(Number));
      expect(contrast(bg, color === '#000' ? 0 : 1)).toBeGreaterThanOrEqual(4.5);
    }
  });

  test('symmetricScale: the largest finite |value|, 1 for none', () => {
    expect(symmetricScale([1, -3, 2, -Infinity, NaN])).toBe(3);
    expect(symmetricScale([0, 0])).toBe(1);
    expect(symmetricScale([-Infinity])).toBe(1);
    expect(divergingColours(-3, 3).background).toBe(`rgb(${DIVERGING_STOPS[0].join(', ')})`);
  });
});

describe('logits setting', () => {
  test('parses spaces, commas and typographic minus; keeps valid lists as they are', () => {
    expect(parseLogits('100, 200 300')).toEqual({ logits: [100, 200, 300], problems: [] });
    expect(parseLogits('−2.5;1e2')).toEqual({ logits: [-2.5, 100], problems: [] });
    expect(cleanLogits('1 2 3')).toEqual({ value: '1 2 3' });
  });

  test('clamps to ±1000, drops junk, keeps at most 8, and says so in one sentence', () => {
    expect(cleanLogits('5000 abc -2000')).toEqual({ value: '1000 -1000', why: '5000 is outside ±1000; using 1000; "abc" is not a number; -2000 is outside ±1000; using -1000' });
    expect(cleanLogits('1 2 3 4 5 6 7 8 9 10')).toEqual({ value: '1 2 3 4 5 6 7 8', why: 'more than 8 logits; keeping the first 8' });
    expect(cleanLogits('  ')).toEqual({ value: DEFAULT_LOGITS, why: `no numbers; using ${DEFAULT_LOGITS}` });
    expect(cleanLogits('Infinity NaN')).toEqual({ value: DEFAULT_LOGITS, why: `no numbers; using ${DEFAULT_LOGITS}` });
  });
});
