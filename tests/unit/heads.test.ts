// One head's weights and the heads' average (web/src/model/heads.ts), computed once for the heatmaps and
// the exports.
import { describe, expect, test } from 'vitest';
import { headAverage, headOrAverage, headWeights } from '../../web/src/model/heads';

describe('heads', () => {
  // H = 2, T = 2: head 0 = [1 0; .5 .5], head 1 = [1 0; .25 .75]; the average = [1 0; .375 .625].
  const w = new Float32Array([1, 0, 0.5, 0.5, 1, 0, 0.25, 0.75]);
  test('one head, as a copy', () => {
    const h1 = headWeights(w, 2, 2, 1);
    expect(Array.from(h1)).toEqual([1, 0, 0.25, 0.75]);
    h1[0] = 7;
    expect(w[4]).toBe(1);
  });
  test('the average over heads, rows still summing to 1', () => {
    expect(Array.from(headAverage(w, 2, 2))).toEqual([1, 0, 0.375, 0.625]);
    expect(Array.from(headOrAverage(w, 2, 2, 2))).toEqual([1, 0, 0.375, 0.625]);
    expect(Array.from(headOrAverage(w, 2, 2, 0))).toEqual([1, 0, 0.5, 0.5]);
  });
  test('wrong dimensions throw', () => {
    expect(() => headAverage(w, 3, 2)).toThrow('weights: 8 values for H=3, T=2');
    expect(() => headWeights(w, 2, 2, 2)).toThrow('head 2 is not in [0, 2)');
  });
});
