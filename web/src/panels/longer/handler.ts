// The "Longer than trained" measurement: a Trainer on its task at several sequence lengths
// (the core's evaluateAt). A length the model cannot take (a learned position table shorter than
// it: the core's `config` error naming maxSeqLen; a length too long to measure in the browser's
// memory) becomes that row's problem, not a failure of the whole request; any other error goes on.
// The comparison's Trainer lives in the worker between its requests, apart from the run.
import type { Trainer } from '../../core/attention-core';
import { num, plural } from '../../model/format';
import type { TrainerConfigMsg } from '../../model/protocol';
import { handle, stepCount, type Held, type WorkerContext } from '../../worker/context';
import { keyOf, kindOf, messageOf, RequestFailure } from '../../worker/post';
import { comparisonEndRequest, comparisonLengthsRequest, comparisonStartRequest, comparisonStepRequest, lengthsRequest, type LengthRow } from './request';

/** Longest list of lengths one request measures. */
export const MAX_LENGTHS = 8;
/** The most attention weights (batch x heads x layers x N x N floats) one length may need: the
 * eval state holds a few arrays of that size, so this keeps a long length within the browser's
 * memory (2^23 floats, 32 MB each). */
export const MAX_ATTENTION_FLOATS = 2 ** 23;

/** trainer at each of lengths, over `batches` eval batches each. */
export function measureLengths(trainer: Trainer, lengths: number[], batches: number): LengthRow[] {
  if (!Array.isArray(lengths) || lengths.length < 1 || lengths.length > MAX_LENGTHS) {
    throw new RequestFailure('input', `lengths must list 1 to ${MAX_LENGTHS} sequence lengths`);
  }
  const c = trainer.config();
  const perN2 = c.batchSize * c.nHeads * c.nLayers;
  return lengths.map((length) => {
    if (perN2 * length * length > MAX_ATTENTION_FLOATS) {
      const message = `Not measured: at length ${length} the attention weights alone (batch ${c.batchSize} × ${plural(c.nHeads, 'head')} × ${plural(c.nLayers, 'layer')} × ${length}²) would be ${num(perN2 * length * length / 2 ** 20, 0)} M floats, more than the page measures (${MAX_ATTENTION_FLOATS / 2 ** 20} M); lower batch or seq_len.`;
      return { length, evaluation: null, problem: { kind: 'input' as const, message } };
    }
    try {
      return { length, evaluation: trainer.evaluateAt(length, batches), problem: null };
    } catch (e) {
      if (kindOf(e, 'internal') !== 'config' || keyOf(e) !== 'maxSeqLen') throw e;
      return { length, evaluation: null, problem: { kind: 'config', message: messageOf(e), key: 'maxSeqLen' } };
    }
  });
}

/** The comparison's Trainer and its config. */
class Comparison implements Held {
  constructor(
    readonly trainer: Trainer,
    readonly config: TrainerConfigMsg,
  ) {}

  free(): void {
    this.trainer.delete();
  }
}

function comparison(ctx: WorkerContext): Comparison {
  const c = ctx.held<Comparison>('comparison');
  if (!c) throw new RequestFailure('state', 'no comparison trainer: send comparisonStart first');
  return c;
}

/** The run at other lengths, and the comparison's Trainer: made (the previous one freed once the
 * new one exists), stepped, measured, freed. */
export const handlers = [
  handle(lengthsRequest, (ctx, { lengths, batches }) => {
    const run = ctx.run();
    return { step: run.step, config: run.config, rows: measureLengths(run.trainer, lengths, batches) };
  }),
  handle(comparisonStartRequest, (ctx, config) => {
    ctx.hold('comparison', new Comparison(new ctx.core.Trainer(config, ctx.corpus), config));
  }),
  handle(comparisonStepRequest, (ctx, { n }) => {
    const c = comparison(ctx);
    const loss = c.trainer.step(stepCount(n));
    return { step: c.trainer.stepsDone(), loss };
  }),
  handle(comparisonLengthsRequest, (ctx, { lengths, batches }) => {
    const c = comparison(ctx);
    return { step: c.trainer.stepsDone(), config: c.config, rows: measureLengths(c.trainer, lengths, batches) };
  }),
  handle(comparisonEndRequest, (ctx) => ctx.hold('comparison', null)),
];
