// View 2's request: one head, every stage, computed by the core from the seeded inputs.
import type { AttentionCore } from '../core/attention-core';
import type { Matrix, SelfAttentionRequest, SelfAttentionStages } from '../protocol';
import { seededInputs } from '../seeded';

/** data as a (rows, cols) matrix; throws if the length does not match. */
function matrix(data: Float32Array, rows: number, cols: number): Matrix {
  if (data.length !== rows * cols) throw new Error(`expected ${rows}x${cols} values, got ${data.length}`);
  return { rows, cols, data };
}

/** X, Wq, Wk, Wv from the seed and the tokens, then every stage the core computes from them. */
export function selfAttentionStages(core: AttentionCore, input: SelfAttentionRequest): SelfAttentionStages {
  const T = input.tokens.length;
  const { dModel: D, dk, dv } = input;
  const { X, Wq, Wk, Wv } = seededInputs(input.tokens, D, dk, dv, input.seed);
  const r = core.selfAttention({
    X: { rows: T, cols: D, data: X },
    Wq: { rows: D, cols: dk, data: Wq },
    Wk: { rows: D, cols: dk, data: Wk },
    Wv: { rows: D, cols: dv, data: Wv },
    causal: input.causal,
  });
  return {
    tokens: input.tokens,
    causal: input.causal,
    X: matrix(X, T, D),
    Wq: matrix(Wq, D, dk),
    Wk: matrix(Wk, D, dk),
    Wv: matrix(Wv, D, dv),
    Q: matrix(r.Q.data, T, dk),
    K: matrix(r.K.data, T, dk),
    V: matrix(r.V.data, T, dv),
    scores: matrix(r.scores.data, T, T),
    scaledScores: matrix(r.scaledScores.data, T, T),
    maskedScores: matrix(r.maskedScores.data, T, T),
    weights: matrix(r.weights.data, T, T),
    output: matrix(r.output.data, T, dv),
  };
}
