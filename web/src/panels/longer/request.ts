// The "Longer than trained" panel's requests: the live model at other sequence lengths, and the
// comparison's Trainer (apart from the run) that the "Compare the five position methods" preset
// starts, trains, measures and frees.
import type { LengthEvaluation } from '../../core/attention-core';
import { defineRequest, type ErrorKind, type TrainerConfigMsg } from '../../model/protocol';

/** A model at one sequence length: the core's evaluation, or why it cannot be evaluated there
 * (a learned position table shorter than the length: kind `config`, key maxSeqLen). */
export interface LengthRow {
  length: number;
  evaluation: LengthEvaluation | null;
  problem: { kind: ErrorKind; message: string; key?: string } | null;
}

/** A model at several lengths (the "Longer than trained" panel). */
export interface LengthsReport {
  /** Steps the model was trained for. */
  step: number;
  config: TrainerConfigMsg;
  /** One row per length asked for, in that order. */
  rows: LengthRow[];
}

/** Which lengths, over how many eval batches each. */
export interface LengthsSpec {
  lengths: number[];
  batches: number;
}

/** The live model on its task at other lengths (evaluateAt): loss, accuracy and accuracy per
 * position per length. */
export const lengthsRequest = defineRequest<LengthsSpec, LengthsReport>('lengths', 'input');
/** A second Trainer for config, apart from the run (which plays on); replaces the previous one. */
export const comparisonStartRequest = defineRequest<TrainerConfigMsg, void>('comparisonStart', 'config');
/** n steps (n <= 1000) of that Trainer: its step count and last loss. */
export const comparisonStepRequest = defineRequest<{ n: number }, { step: number; loss: number }>('comparisonStep', 'internal');
/** That Trainer at other lengths, as lengthsRequest measures the run. */
export const comparisonLengthsRequest = defineRequest<LengthsSpec, LengthsReport>('comparisonLengths', 'input');
/** Frees that Trainer (done or cancelled). */
export const comparisonEndRequest = defineRequest<void, void>('comparisonEnd', 'internal');
