// The request of view 3 ("The transformer block, step by step"), whose view is ui/block-view.ts.
import type { TransformerBlockStages } from '../../core/attention-core';
import { defineRequest, type SampleSpec, type TrainerConfigMsg } from '../../model/protocol';

/** Inputs of view 3: the config's model (one layer of it, at its seeded init) run on the sample
 * (ids, or a draw of the task's generator); ropePair and ropeHead pick the RoPE pair drawn. */
export interface BlockRequest {
  config: TrainerConfigMsg;
  sample: SampleSpec;
  ropePair?: number;
  ropeHead?: number;
}

/** Every stage of the block (the core's transformerBlock) and the token ids it ran on. */
export interface BlockStages extends TransformerBlockStages {
  ids: Int32Array;
}

/** One block of the config's model at its seeded init on the sample, every stage (the core's
 * transformerBlock; the run is untouched). */
export const transformerBlockRequest = defineRequest<BlockRequest, BlockStages>('transformerBlock', 'config');
