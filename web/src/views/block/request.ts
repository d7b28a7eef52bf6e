// The requests of view 3 ("The transformer block, step by step"), whose page code is view.ts here.
import type { TiledAttentionTrace, TransformerBlockStages } from '../../core/attention-core';
import { defineRequest, type Matrix, type SampleSpec, type TrainerConfigMsg } from '../../model/protocol';

/** Inputs of view 3: the config's model (one layer of it, at its seeded init) run on the sample
 * (ids, or a draw of the task's generator); ropePair and ropeHead pick the RoPE pair drawn. */
export interface BlockRequest {
  config: TrainerConfigMsg;
  sample: SampleSpec;
  ropePair?: number;
  ropeHead?: number;
}

/** Every stage of the block (the core's transformerBlock) and the token ids it ran on; under
 * additive positions (sinusoidal, learned) also x's two parts, x = xTokens + xPositions (T, D):
 * the token embedding's rows and what the positions add (null otherwise). */
export interface BlockStages extends TransformerBlockStages {
  ids: Int32Array;
  xTokens: Matrix | null;
  xPositions: Matrix | null;
}

/** One block of the config's model at its seeded init on the sample, every stage (the core's
 * transformerBlock; the run is untouched). */
export const transformerBlockRequest = defineRequest<BlockRequest, BlockStages>('transformerBlock', 'config');

/** Inputs of view 3's tiled step: the block's config and sample, one query head and the keys per tile. */
export interface TiledRequest {
  config: TrainerConfigMsg;
  sample: SampleSpec;
  head: number;
  tileSize: number;
}

/** One head of the block computed tile by tile (the core's tiledAttention). */
export type TiledStep = TiledAttentionTrace;

/** One head of view 3's block, tile by tile: every row's running max and sum after each tile, and
 * the rows against the plain softmax (the core's tiledAttention). */
export const tiledAttentionRequest = defineRequest<TiledRequest, TiledStep>('tiledAttention', 'input');
