// The loss chart's derived lines: the smoothed curve, the demo's epoch means.
import { expect, test } from 'vitest';
import { ema, epochMeans } from '../../web/src/draw/loss-series';

test('ema: starts at the first value, follows a constant exactly, smooths a step', () => {
  expect(Array.from(ema([2, 2, 2], 0.9))).toEqual([2, 2, 2]);
  const s = ema([0, 1, 1, 1], 0.5);
  expect(s[0]).toBe(0);
  // Bias-corrected: y_1 = (0.5*0.5*0 + 0.5*1) / (1 - 0.25) = 2/3.
  expect(s[1]).toBeCloseTo(2 / 3, 12);
  expect(s[3]).toBeGreaterThan(s[2]);
  expect(s[3]).toBeLessThan(1);
  expect(Array.from(ema([NaN, 4], 0.9))).toEqual([NaN, 4]);
});

test('epochMeans: exact means of every step with stride 1, and of the kept points when thinned', () => {
  const losses = Array.from({ length: 360 }, (_, i) => i);
  expect(epochMeans(losses, 1, 120)).toEqual([59.5, 179.5, 299.5]);
  // Stride 2: points at steps 1, 3, 5, ...: indices 0..59 are epoch 0.
  expect(epochMeans(Array.from({ length: 180 }, (_, i) => i), 2, 120)).toEqual([29.5, 89.5, 149.5]);
  expect(epochMeans([], 1, 120)).toEqual([]);
});
