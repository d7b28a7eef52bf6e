// The "Look inside" panel's request: trainer.inspect on the sample (logit lens, attribution,
// patching, QK/OV circuits).
import type { Inspection } from '../../core/attention-core';
import { defineRequest, type TrainerConfigMsg } from '../../model/protocol';

/** The "Look inside" panel's numbers: trainer.inspect on the sample (the core's, unchanged). */
export interface InspectReport {
  step: number;
  task: TrainerConfigMsg['task'];
  vocabSize: number;
  nLayers: number;
  nHeads: number;
  /** The sample (clean input), T ids. */
  ids: Int32Array;
  /** The corrupted input patched, or null (no patching: see patchingNote). */
  corrupted: Int32Array | null;
  /** The index of the token the default corruption changed (-1: the learner's own input). */
  changed: number;
  /** Why there is no patching (the induction sample has no repeat), else ''. */
  patchingNote: string;
  inspection: Inspection;
}

/** What to patch against: the learner's corrupted ids, or the sample with the token at `change`
 * changed; neither: the task's default. */
export interface InspectSpec {
  corrupted?: number[];
  change?: number;
}

/** Look inside the live model on the sample; a corrupted input that does not fit (its length, its
 * tokens) is the core's `input` error. */
export const inspectRequest = defineRequest<InspectSpec, InspectReport>('inspect', 'input');
