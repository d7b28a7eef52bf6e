// The predictions panel's arithmetic (panels/predictions/model.ts) against a plain reference: the
// verdicts and the tally. The probabilities and the top k are the core's (Trainer.predictions:
// tests/cpp/test_readouts.cpp, tests/js-api/api.test.mjs).
import { describe, expect, test } from 'vitest';
import type { PredictionsReport } from '../../web/src/panels/predictions/request';
import { tally, verdictAt } from '../../web/src/panels/predictions/model';

describe('verdicts', () => {
  const report = (top: number[], answers: number[]): PredictionsReport => ({
    step: 1, task: 'copy', ids: new Int32Array(answers.length), k: 3, top: Int32Array.from(top), probs: new Float32Array(top.length), answers: Int32Array.from(answers), answerProbs: new Float32Array(answers.length),
  });
  test('right at top 1, wrong otherwise, not counted where the task sets no answer', () => {
    const r = report([4, 5, 6, /**/ 7, 4, 1, /**/ 2, 3, 0], [4, 4, -100]);
    expect([0, 1, 2].map((t) => verdictAt(r, t))).toEqual(['right', 'wrong', 'none']);
    expect(tally(r)).toEqual({ counted: 2, right: 1, inTopK: 2 });
  });
});
