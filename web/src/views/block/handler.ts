// The worker's side of view 3: one block of the config's model, every stage from the core.
import type { Matrix } from '../../model/protocol';
import { handle } from '../../worker/context';
import { withKind } from '../../worker/post';
import { tiledAttentionRequest, transformerBlockRequest, type BlockStages } from './request';

/** x's two parts under additive positions (sinusoidal, learned): the token embedding's rows, which
 * are the x of the same model with positions none (the token table is the first draw of the seed,
 * so it is the same table), and what the positions add, x minus those rows. */
function inputParts(x: Matrix, tokens: Matrix): Pick<BlockStages, 'xTokens' | 'xPositions'> {
  const positions = Float32Array.from(x.data, (v, k) => v - tokens.data[k]);
  return { xTokens: tokens, xPositions: { rows: x.rows, cols: x.cols, data: positions } };
}

/** The block on the sample's ids (a seed: the task generator's draw; needs no Trainer, except a
 * text sample, which is the run's text). */
export const handlers = [
  handle(transformerBlockRequest, (ctx, input) => {
    const ids = withKind('input', () => ctx.sampleIds(input.sample, input.config));
    const stages = ctx.core.transformerBlock({ config: input.config, ids, ropePair: input.ropePair, ropeHead: input.ropeHead });
    const additive = stages.positions === 'sinusoidal' || stages.positions === 'learned';
    const parts = additive ? inputParts(stages.x, ctx.core.transformerBlock({ config: { ...input.config, positions: 'none' }, ids }).x) : { xTokens: null, xPositions: null };
    return { ...stages, ...parts, ids };
  }),
  handle(tiledAttentionRequest, (ctx, input) => {
    const ids = withKind('input', () => ctx.sampleIds(input.sample, input.config));
    return ctx.core.tiledAttention({ config: input.config, ids, head: input.head, tileSize: input.tileSize });
  }),
];
