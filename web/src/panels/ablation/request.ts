// The Ablation panel's request: set the interventions and measure the run without and with them.
import type { Evaluation, HeadScores } from '../../core/attention-core';
import { defineRequest, type Ablation, type Snapshot, type TrainerConfigMsg } from '../../model/protocol';

/** Per-head statistics over a fixed eval batch (see the core's attentionStats). */
export interface HeadStats {
  entropy: Float32Array;
  maxWeight: Float32Array;
  answerMass: Float32Array;
}

/** What the ablation panel shows: the run measured without and with the interventions. */
export interface AblationReport {
  ablation: Ablation;
  intact: Evaluation;
  ablated: Evaluation;
  intactStats: HeadStats;
  ablatedStats: HeadStats;
  /** The per-head scores (headScores()) without and with the interventions. */
  intactScores: HeadScores;
  ablatedScores: HeadScores;
  /** The step the measurement was taken at. */
  step: number;
  task: TrainerConfigMsg['task'];
}

/** Sets the interventions (one flag per head of every layer; kept across reset, configure and
 * import) and measures eval loss, accuracy, head statistics and scores without and with them; the
 * snapshot shows the heatmaps under them. One that does not fit the head count: an `input` error. */
export const ablateRequest = defineRequest<Ablation, { report: AblationReport; snapshot: Snapshot }>('ablate', 'input');
