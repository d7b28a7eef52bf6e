// The ablation request's measurement: the run's eval loss, accuracy, head statistics and head
// scores without and with the learner's interventions, on the same fixed eval batches.
import type { Trainer } from '../core/attention-core';
import { noAblation, type Ablation, type AblationReport, type HeadStats } from '../model/protocol';
import { headScoresOf } from './scores';

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
