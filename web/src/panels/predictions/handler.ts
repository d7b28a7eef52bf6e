// The predictions panel's numbers: at each position of the sample, the model's k most likely next
// tokens with their probabilities (a softmax of the core's logits), and the task's answer there
// (the core's taskTargets) with the probability the model gives it.
import type { AttentionCore, Trainer } from '../../core/attention-core';
import type { TrainerConfigMsg } from '../../model/protocol';
import { handle } from '../../worker/context';
import { predictionsRequest, type PredictionsReport } from './request';

/** How many tokens the panel lists per position. */
export const TOP_K = 3;

/**
 * Softmax of each row of logits (T rows of V), in double with the maximum subtracted; returns the
 * k most likely tokens of each row, most likely first (ties: the smaller id first), and their
 * probabilities, both (T, k) row-major (k is capped at V).
 */
export function softmaxTopK(logits: Float32Array, T: number, V: number, k: number): { k: number; top: Int32Array; probs: Float64Array; rows: Float64Array } {
  const kk = Math.min(k, V);
  const top = new Int32Array(T * kk);
  const probs = new Float64Array(T * kk);
  const rows = new Float64Array(T * V);
  for (let t = 0; t < T; ++t) {
    let max = -Infinity;
    for (let v = 0; v < V; ++v) max = Math.max(max, logits[t * V + v]);
    let sum = 0;
    for (let v = 0; v < V; ++v) sum += rows[t * V + v] = Math.exp(logits[t * V + v] - max);
    for (let v = 0; v < V; ++v) rows[t * V + v] /= sum;
    // k passes over the row: k is 3, V at most a few hundred.
    for (let j = 0; j < kk; ++j) {
      let best = -1;
      for (let v = 0; v < V; ++v) {
        const p = rows[t * V + v];
        if ((best < 0 || p > rows[t * V + best]) && !top.subarray(t * kk, t * kk + j).includes(v)) best = v;
      }
      top[t * kk + j] = best;
      probs[t * kk + j] = rows[t * V + best];
    }
  }
  return { k: kk, top, probs, rows };
}

/** The report for the sample ids, on the trainer as it is now (eval mode, the ablation in force). */
export function predictions(core: AttentionCore, trainer: Trainer, config: TrainerConfigMsg, ids: Int32Array, step: number): PredictionsReport {
  const att = trainer.attention(ids);
  const T = ids.length;
  const V = att.vocabSize;
  const { k, top, probs, rows } = softmaxTopK(att.logits, T, V, TOP_K);
  const answers = core.taskTargets(config.task, ids);
  const answerProbs = Float64Array.from(answers, (a, t) => (a >= 0 && a < V ? rows[t * V + a] : NaN));
  return { step, task: config.task, ids: ids.slice(), k, top, probs, answers, answerProbs, vocab: trainer.corpus()?.vocab ?? null };
}

/** The worker's answer to the panel's request: the sample as the heatmaps show it, at the run's step. */
export const handlers = [
  handle(predictionsRequest, (ctx) => {
    const run = ctx.run();
    return predictions(ctx.core, run.trainer, run.config, ctx.sample, run.step);
  }),
];
