// The worker's side of view 3: one block of the config's model, every stage from the core.
import { handle } from '../../worker/context';
import { withKind } from '../../worker/post';
import { tiledAttentionRequest, transformerBlockRequest } from './request';

/** The block on the sample's ids (a seed: the task generator's draw; needs no Trainer, except a
 * text sample, which is the run's text). */
export const handlers = [
  handle(transformerBlockRequest, (ctx, input) => {
    const ids = withKind('input', () => ctx.sampleIds(input.sample, input.config));
    const stages = ctx.core.transformerBlock({ config: input.config, ids, ropePair: input.ropePair, ropeHead: input.ropeHead });
    return { ...stages, ids };
  }),
  handle(tiledAttentionRequest, (ctx, input) => {
    const ids = withKind('input', () => ctx.sampleIds(input.sample, input.config));
    return ctx.core.tiledAttention({ config: input.config, ids, head: input.head, tileSize: input.tileSize });
  }),
];
