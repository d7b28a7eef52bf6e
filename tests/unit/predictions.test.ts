// The predictions panel's arithmetic (panels/predictions/handler.ts and model.ts) against a
// plain reference: softmax, the top k with ties, the verdicts and the tally.
import { describe, expect, test } from 'vitest';
import type { PredictionsReport } from '../../web/src/panels/predictions/request';
import { softmaxTopK } from '../../web/src/panels/predictions/handler';
import { tally, verdictAt } from '../../web/src/panels/predictions/model';

describe('softmaxTopK', () => {
  test('probabilities of a softmax, most likely first, ties to the smaller id', () => {
    const logits = Float32Array.from([1, 3, 2, 3, /* row 2 */ 0, 0, 0, 0, /* row 3 */ 1000, -1000, 999, 0]);
    const { k, top, probs, rows } = softmaxTopK(logits, 3, 4, 3);
    expect(k).toBe(3);
    // Row 3: ids 1 and 3 both underflow to 0, a tie: the smaller id first.
    expect(Array.from(top)).toEqual([1, 3, 2, 0, 1, 2, 0, 2, 1]);
    const z = Math.exp(1) + 2 * Math.exp(3) + Math.exp(2);
    expect(probs[0]).toBeCloseTo(Math.exp(3) / z, 15);
    expect(probs[2]).toBeCloseTo(Math.exp(2) / z, 15);
    expect(Array.from(probs.subarray(3, 6))).toEqual([0.25, 0.25, 0.25]);
    // No overflow: the maximum is subtracted.
    expect(probs[6]).toBeCloseTo(1 / (1 + Math.exp(-1)), 12);
    for (let t = 0; t < 3; ++t) expect(rows.subarray(t * 4, t * 4 + 4).reduce((a, b) => a + b, 0)).toBeCloseTo(1, 14);
  });

  test('k is capped at V', () => {
    const { k, top } = softmaxTopK(Float32Array.from([0.5, 1]), 1, 2, 3);
    expect([k, Array.from(top)]).toEqual([2, [1, 0]]);
  });
});

describe('verdicts', () => {
  const report = (top: number[], answers: number[]): PredictionsReport => ({
    step: 1, task: 'copy', ids: new Int32Array(answers.length), k: 3, top: Int32Array.from(top), probs: new Float64Array(top.length), answers: Int32Array.from(answers), answerProbs: new Float64Array(answers.length),
  });
  test('right at top 1, wrong otherwise, not counted where the task sets no answer', () => {
    const r = report([4, 5, 6, /**/ 7, 4, 1, /**/ 2, 3, 0], [4, 4, -100]);
    expect([0, 1, 2].map((t) => verdictAt(r, t))).toEqual(['right', 'wrong', 'none']);
    expect(tally(r)).toEqual({ counted: 2, right: 1, inTopK: 2 });
  });
});
