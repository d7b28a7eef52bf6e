// What the text panels' handlers (Generate, Speculative decoding) share: the run's vocabulary, and
// a prompt turned into its ids, each bad input one sentence.
import type { AttentionCore, Trainer } from '../core/attention-core';
import { RequestFailure } from './post';

/** The longest prompt, in characters. */
export const MAX_PROMPT_CHARS = 1000;

/** The run's vocabulary (its corpus's characters), or the sentence that `what` (generation,
 * speculative decoding) needs task text. */
export function vocabOf(trainer: Trainer, what = 'Generation'): string {
  const corpus = trainer.corpus();
  if (!corpus) throw new RequestFailure('input', `${what} needs the text task: this model was trained on token ids, not characters.`);
  return corpus.vocab;
}

/** The prompt's ids in vocab: one sentence for an empty or too long prompt, and the core's
 * (naming the character) for one outside the vocabulary. */
export function promptIds(core: AttentionCore, vocab: string, prompt: string): Int32Array {
  if (typeof prompt !== 'string' || prompt.length === 0) throw new RequestFailure('input', 'The prompt is empty: give at least one character to start from.');
  const n = [...prompt].length;
  if (n > MAX_PROMPT_CHARS) throw new RequestFailure('input', `The prompt has ${n} characters; at most ${MAX_PROMPT_CHARS} are taken.`);
  return core.encodeText(vocab, prompt);
}
