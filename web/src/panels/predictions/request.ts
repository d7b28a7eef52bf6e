// The predictions panel's request: at each position of the sample, the model's k most likely next
// tokens with their probabilities, and the task's answer there.
import { defineRequest, type TrainerConfigMsg } from '../../model/protocol';

/** The model's k most likely next tokens at each position of the sample (the predictions panel). */
export interface PredictionsReport {
  /** The step the model was at. */
  step: number;
  task: TrainerConfigMsg['task'];
  /** The sample (T ids). */
  ids: Int32Array;
  k: number;
  /** (T, k) row-major: the k most likely tokens at each position, most likely first. */
  top: Int32Array;
  /** (T, k): their probabilities, the core's (eval mode, the ablation in force). */
  probs: Float32Array;
  /** The task's answer at each position (the core's taskTargets); -100 where it sets none. */
  answers: Int32Array;
  /** The probability the model gives the answer (NaN where there is none). */
  answerProbs: Float32Array;
  /** Task text: the corpus's characters (token id i is the i-th); null for the other tasks. */
  vocab: string | null;
}

/** The model's top 3 next tokens at each position of the sample, and the task's answers. */
export const predictionsRequest = defineRequest<void, PredictionsReport>('predictions', 'internal');
