// The predictions panel's numbers: at each position of the sample, the model's k most likely next
// tokens with their probabilities, and the task's answer there with the probability the model
// gives it; all from the core (Trainer.predictions).
import type { Trainer } from '../../core/attention-core';
import type { TrainerConfigMsg } from '../../model/protocol';
import { handle } from '../../worker/context';
import { predictionsRequest, type PredictionsReport } from './request';

/** How many tokens the panel lists per position. */
export const TOP_K = 3;

/** The report for the sample ids, on the trainer as it is now (eval mode, the ablation in force). */
export function predictions(trainer: Trainer, config: TrainerConfigMsg, ids: Int32Array, step: number): PredictionsReport {
  const { k, top, probs, answers, answerProbs } = trainer.predictions(ids, TOP_K);
  return { step, task: config.task, ids: ids.slice(), k, top, probs, answers, answerProbs, vocab: trainer.corpus()?.vocab ?? null };
}

/** The worker's answer to the panel's request: the sample as the heatmaps show it, at the run's step. */
export const handlers = [
  handle(predictionsRequest, (ctx) => {
    const run = ctx.run();
    return predictions(run.trainer, run.config, ctx.sample, run.step);
  }),
];
