// View 2's requests. selfAttention: H heads, every stage, computed by the core. The core makes the
// inputs from its generator (lessonInputs: the embeddings and every head's Wq, Wk, Wv and Wo, the
// numbers `attn demo self-attention` prints for the same sentence and seed); the worker lower-cases
// the words, cuts rows out and passes the mask's cells; every number derived comes from the core
// (addPositions, multiHeadSelfAttention). The sqrt(dk) and stability panels' numbers are the
// core's alone.
import type { AttentionCore, MultiHeadStages } from '../../core/attention-core';
import type { Matrix } from '../../model/protocol';
import { handle } from '../../worker/context';
import { scalingDemoRequest, selfAttentionRequest, softmaxStepsRequest, type SelfAttentionRequest, type SelfAttentionStages, type SentenceAlone } from './request';

/** data as a (rows, cols) matrix; throws if the length does not match. */
function matrix(data: Float32Array, rows: number, cols: number): Matrix {
  if (data.length !== rows * cols) throw new Error(`expected ${rows}x${cols} values, got ${data.length}`);
  return { rows, cols, data };
}

/** Rows [from, to) of m. */
const rowsOf = (m: Matrix, from: number, to: number): Matrix => matrix(m.data.slice(from * m.cols, to * m.cols), to - from, m.cols);

/** The block [from, to) x [from, to) of T*T cells. */
function block(cells: Uint8Array, T: number, from: number, to: number): Uint8Array {
  const n = to - from;
  const out = new Uint8Array(n * n);
  for (let i = 0; i < n; ++i) out.set(cells.subarray((from + i) * T + from, (from + i) * T + to), i * n);
  return out;
}

/** Embeddings, (with positions) X = E + P from the core, every head's stages, concat and Wo. */
export function selfAttentionStages(core: AttentionCore, input: SelfAttentionRequest): SelfAttentionStages {
  const T = input.tokens.length;
  const { dModel: D, dk, dv } = input;
  const H = input.heads ?? 1;
  const split = input.split ?? T;
  if (!Number.isInteger(H) || H < 1 || H > 4) throw new Error(`heads (${H}) must be 1 to 4`);
  if (!Number.isInteger(split) || split < 1 || split > T) throw new Error(`split (${split}) must be in [1, ${T}]`);
  const positions = input.positions ?? false;
  const mask = input.mask ?? new Uint8Array(T * T);
  // One embedding row per lower-cased word: "The" and "the" share it.
  const { E, Wq, Wk, Wv, Wo } = core.lessonInputs({ tokens: input.tokens.map((t) => t.toLowerCase()), dModel: D, dk, dv, heads: H, seed: input.seed });
  const run = (E: Matrix, mask: Uint8Array) => {
    const p = positions ? core.addPositions(E) : null;
    const X = p ? p.X : E;
    return { P: p ? p.positions : null, X, r: core.multiHeadSelfAttention({ X, Wq, Wk, Wv, Wo, mask }) as MultiHeadStages };
  };
  const { P, X, r } = run(E, mask);
  const apart: SentenceAlone[] = [];
  if (split < T) {
    for (const [from, to] of [[0, split], [split, T]]) {
      const alone = run(rowsOf(E, from, to), block(mask, T, from, to)).r;
      apart.push({ tokens: input.tokens.slice(from, to), weights: alone.heads.map((h) => h.weights), output: alone.output });
    }
  }
  return {
    tokens: input.tokens,
    split,
    positions,
    mask,
    E,
    P,
    X,
    heads: r.heads.map((st, h) => ({ ...st, Wq: Wq[h], Wk: Wk[h], Wv: Wv[h] })),
    concat: r.concat,
    Wo,
    projected: r.output,
    apart,
  };
}

/** View 2's requests (none needs a Trainer). */
export const handlers = [
  handle(selfAttentionRequest, (ctx, input) => selfAttentionStages(ctx.core, input)),
  handle(scalingDemoRequest, (ctx, { dk, keys, seed }) => ctx.core.scalingDemo(dk, keys, seed)),
  handle(softmaxStepsRequest, (ctx, { logits }) => {
    const x = Float32Array.from(logits);
    return { logits: x, naive: ctx.core.softmaxSteps(x, false), stable: ctx.core.softmaxSteps(x, true) };
  }),
];
