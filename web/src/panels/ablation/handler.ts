// The ablation request's measurement: the run's eval loss, accuracy, head statistics and head
// scores without and with the learner's interventions, on the same fixed eval batches. The
// interventions stay set: the session keeps them for every later run.
import type { Trainer } from '../../core/attention-core';
import { noAblation, type Ablation } from '../../model/protocol';
import { handle } from '../../worker/context';
import { headScoresOf } from '../../worker/scores';
import { ablateRequest, type AblationReport, type HeadStats } from './request';

/** Batches the ablation panel's loss and accuracy are measured on. */
export const EVAL_BATCHES = 4;

/** The per-head statistics as the page gets them. */
function headStats(t: Trainer): HeadStats {
  const s = t.attentionStats();
  return { entropy: s.entropy, maxWeight: s.maxWeight, answerMass: s.answerMass };
}

/**
 * Measures trainer (L layers of H heads) intact, then sets `wanted` and measures again; `wanted`
 * stays set. When the core rejects `wanted`, `current` (the interventions in force, or none) is set
 * back and the error thrown.
 */
export function measureAblation(trainer: Trainer, L: number, H: number, wanted: Ablation, current: Ablation | null): Omit<AblationReport, 'step' | 'task'> {
  trainer.setAblation(noAblation(L * H));
  const intact = trainer.evaluate(EVAL_BATCHES);
  const intactStats = headStats(trainer);
  const intactScores = headScoresOf(trainer, L, H);
  try {
    trainer.setAblation(wanted);
  } catch (e) {
    if (current) trainer.setAblation(current);
    throw e;
  }
  const ablation = trainer.ablation();
  return { ablation, intact, ablated: trainer.evaluate(EVAL_BATCHES), intactStats, ablatedStats: headStats(trainer), intactScores, ablatedScores: headScoresOf(trainer, L, H) };
}

/** The worker's answer: the run measured, the interventions kept (what the Generate panel held
 * under the old ones is freed), and the snapshot under them. */
export const handlers = [
  handle(ablateRequest, (ctx, wanted) => {
    const run = ctx.run();
    const measured = measureAblation(run.trainer, run.config.nLayers, run.config.nHeads, wanted, ctx.ablation);
    ctx.setAblation(measured.ablation);
    return { report: { ...measured, step: run.step, task: run.config.task }, snapshot: ctx.snapshot() };
  }),
];
