// The "Longer than trained" measurement: a Trainer on its task at several sequence lengths
// (the core's evaluateAt). A length the model cannot take (a learned position table shorter than
// it: the core's `config` error naming maxSeqLen; a length too long to measure in the browser's
// memory) becomes that row's problem, not a failure of the whole request; any other error goes on.
import type { Trainer } from '../core/attention-core';
import { num } from '../model/format';
import type { LengthRow } from '../model/protocol';
import { keyOf, kindOf, messageOf, RequestFailure } from './post';

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
      const message = `Not measured: at length ${length} the attention weights alone (batch ${c.batchSize} × ${c.nHeads} heads × ${c.nLayers} layers × ${length}²) would be ${num(perN2 * length * length / 2 ** 20, 0)} M floats, more than the page measures (${MAX_ATTENTION_FLOATS / 2 ** 20} M); lower batch or seq_len.`;
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
