// "Check yourself": a few questions about things the learner can try on the page, each with its
// answer folded away until asked for (a <details>, so it works with the keyboard and without
// script). The texts are ours.
import { h } from './dom';

/** One question and its answer. */
export interface Question {
  q: string;
  a: string;
}

/** The questions of the training view. */
export const TRAIN_QUESTIONS: readonly Question[] = [
  {
    q: 'Before you press Play, compare the loss with the dashed chance line. Why are they so close?',
    a: 'A fresh model spreads its guess almost evenly over the V tokens, and the cross-entropy of an even guess over V choices is ln V, the chance line.',
  },
  {
    q: 'Train the shift task. Which pattern appears in the head that solves it?',
    a: 'A line just below the diagonal: each query puts its weight on the token one position back, which is the answer of shift.',
  },
  {
    q: 'In the Ablation panel, switch every head off. Where does the accuracy go, and why?',
    a: 'Down to about chance. This model has no path around the attention layer, so with every head silenced the LM head sees no token at all.',
  },
  {
    q: 'Set d_model to 32 and heads to 8. What does the shape contract say each head works with?',
    a: 'Dh = D / H = 4 numbers per token: more heads do not cost more, they split the same width into narrower views.',
  },
];

/** The questions of the lesson view. */
export const LESSON_QUESTIONS: readonly Question[] = [
  {
    q: 'Set the mask to causal and go to the weights. Which row has a single non-zero weight, and why is it exactly 1?',
    a: 'The first row: its query may only see the first key, and a softmax over one score gives that score all of the weight.',
  },
  {
    q: 'Use a sentence with a word twice, such as "the cat saw the dog", with no mask and positions off. Compare the two rows of "the" in the weights, then turn positions on.',
    a: 'Without positions they are the same: X holds one embedding per word, so both get the same query and read the sentence the same way. Positions add a different code to each row of X, and the two rows part.',
  },
  {
    q: 'Set dk to 16 and compare an entry of the scores with the same entry of the scaled scores. What is the ratio?',
    a: 'Exactly 4, that is √16: scaling divides every score by √dk, which keeps the softmax from falling onto a single key when the vectors get longer.',
  },
  {
    q: 'In the mask stage, mask every cell of one row. What do that row\'s weights and head outputs become?',
    a: 'All 0. No key is left to share the weight, so instead of dividing 0 by 0 (NaN) the core gives the row weights 0, and a blend of nothing is a row of zeros.',
  },
];

/** A "Check yourself" section with the questions. */
export function checkYourself(questions: readonly Question[]): HTMLElement {
  return h(
    'section',
    { class: 'panel check-yourself', 'aria-label': 'Check yourself' },
    h('h2', { text: 'Check yourself' }),
    h(
      'ol',
      {},
      ...questions.map((x) => h('li', {}, h('details', {}, h('summary', { text: x.q }), h('p', { class: 'answer', text: x.a })))),
    ),
  );
}
