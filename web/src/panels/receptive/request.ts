// The Receptive field panel's request: how much the output at each position of the sample depends
// on the input at each other position, measured by the core (Trainer.receptiveField).
import { defineRequest } from '../../model/protocol';

/** The measured receptive field of the run's model on the sample. */
export interface ReceptiveReport {
  step: number;
  /** The sample's length. */
  T: number;
  /** The settings the bound depends on. */
  nLayers: number;
  objective: 'causal' | 'mlm';
  attention: 'full' | 'window' | 'strided';
  window: number;
  stride: number;
  /** (T,T) row-major: row i, column j, the norm of the gradient of the output at i (along a fixed
   * direction of the logits) with respect to the input at j; exactly 0 where i cannot depend on j. */
  field: Float32Array;
}

/** The receptive field of the run's model on the sample. */
export const receptiveRequest = defineRequest<void, ReceptiveReport>('receptiveField', 'internal');
