// The "Fill in the blanks" panel's request: a text of the corpus's characters with some positions
// blanked, filled by the masked language model (both sides) and, when the tab has one, by a causal
// model trained on the same text (the left side only).
import { defineRequest } from '../../model/protocol';

/** The text, and the positions (indices of its characters) to blank. */
export interface FillInput {
  text: string;
  blanks: number[];
}

/** One guess: a character of the vocabulary and the probability the model gives it. */
export interface FillGuess {
  char: string;
  prob: number;
}

/** One blank: where it is, the character it hides, and a model's 5 most likely characters there,
 * most likely first (empty: the model could not guess, `why` says so). */
export interface FilledBlank {
  position: number;
  truth: string;
  top: FillGuess[];
  why?: string;
}

/** The causal model of the same text the tab trained before (its guesses from the left). */
export interface CausalFill {
  /** The steps it was trained for. */
  step: number;
  blanks: FilledBlank[];
}

/** The panel's answer. */
export interface FillReport {
  step: number;
  objective: 'causal' | 'mlm';
  /** The run's task (the panel works on text). */
  task: string;
  /** The longest text the model takes (its seqLen). */
  seqLen: number;
  /** The text asked about, its blanks (ascending positions), and the character that marked them. */
  text: string;
  blank: string;
  /** The masked language model's guesses (empty for a causal run). */
  blanks: FilledBlank[];
  /** A causal model of the same text: the run itself (objective causal), or the one the tab
   * trained before; null when there is none. */
  causal: CausalFill | null;
}

/** Fills the blanks with the run's model and, when there is one, a causal model of the same text. */
export const fillRequest = defineRequest<FillInput, FillReport>('fill', 'input');
