// The training tasks the core knows, each with the attention pattern that solves it (the text
// under the task control).
import type { TrainerConfigMsg } from '../model/protocol';

/** Training tasks the core knows. */
export type TaskName = TrainerConfigMsg['task'];

/** Each task, with the attention pattern that solves it (shown under the task control). */
export const TASKS: Record<TaskName, string> = {
  repeat:
    'Every sequence is one token repeated. Any key the causal mask lets a query see holds the answer, so any spread of attention over the past works; the heads only have to carry the token through.',
  shift:
    'Random tokens; the target is the token before the current one. A head that puts its weight one position back (a diagonal just below the main one) solves it.',
  copy:
    'The second half repeats the first. Queries in the second half attend exactly half a sequence back: a stripe parallel to the diagonal. Targets in the first half are unpredictable and left out of the loss.',
  reverse:
    'The second half is the first half reversed. Each query in the second half attends to its mirror position in the first half: an anti-diagonal. The first half is left out of the loss.',
  sort:
    'The second half is the first half sorted (distinct tokens). The head must find, among the first half, the smallest token larger than the current one: attention by content, not position. Needs vocab >= (seq_len + 1) / 2.',
  future:
    'Random tokens; the target is the next token, which a causal model cannot see, so the loss stays near ln(vocab) and the accuracy at chance (1/vocab). It exists for the broken-mask switch of the Ablation panel: once the mask leaks, a head attends one position ahead and copies the answer, and the accuracy jumps to 100% without learning anything usable.',
  induction:
    'Random tokens, in which a short run of distinct tokens appears twice at random places. Inside the second copy the next token is the one that followed the current token in the first copy; only those positions count. ' +
    'To find it, a query must look for the key whose previous token equals its own token. One layer cannot do that: each key holds only its own token and position, never its neighbour. ' +
    'Two layers with the residual stream can: a head in layer 1 attends one position back and writes "the token before me was X" into each position, and a head in layer 2 uses that as its key (an induction head). ' +
    'Watch the loss sit on a plateau, then drop within a few hundred steps (the phase change), the timeline\'s previous-token and prefix-matching scores split the heads into the two roles, and the composition scores between them rise above the random baseline.',
  text:
    'A small GPT on real text: every character is a token, and each position predicts the next character from the ones before it. The vocabulary is the text\'s own characters, so the vocab setting follows the text. ' +
    'The first 90% of the text trains and the last 10% validates. A model that only counted characters would score the dashed unigram line; going below it means the heads use the context.',
  markov:
    'Symbols of a random Markov chain: the next symbol depends only on the last few (the markov order), with fixed random probabilities. The vocabulary is the chain\'s symbols, so the vocab setting follows the markov symbols. ' +
    'No model can beat the chain\'s entropy rate, which the core computes exactly: the loss floor is known, so you can watch how close a model of each size gets to it.',
  lag:
    'Random tokens; the target is the token k positions back (the lag), and the first k positions are left out. One head that puts its weight exactly k positions back solves it at any k; a recurrent net has to carry each token through k steps of its state.',
};

/** The text under the task control for a task under an objective: the masked objective changes
 * what each position is asked, so its text says so (the text task gets its own). */
export function taskText(task: TaskName, objective: TrainerConfigMsg['objective']): string {
  if (objective !== 'mlm') return TASKS[task] ?? '';
  if (task === 'text')
    return (
      'A masked language model on real text, as BERT trains: in every sequence some characters (the mask rate) are hidden, and the model guesses each hidden one from the characters on both sides; only the hidden positions count in the loss. ' +
      'The first 90% of the text trains and the last 10% validates; the dashed line is the loss of a guess that only knows how often each character occurs.'
    );
  return `${TASKS[task] ?? ''} Under the masked objective some positions are hidden instead, and each is guessed from the tokens on both sides; only the hidden positions count in the loss.`;
}
