// When a run is done: solved (the training loss below a threshold: the element's solved-at, or the
// task's own for the page's "Solved at step N") or converged (the text task's validation loss
// stopped improving). Pure logic over the snapshots, so it is unit-tested.

/** What solved needs of a snapshot. */
export interface SolvedSnapshot {
  step: number;
  loss: number;
  /** The loss is the model's at initialisation (no step trained yet). */
  lossAtInit: boolean;
  /** The run's loss history, if known: history[i] is the loss of step 1 + i * historyStride. */
  history?: ArrayLike<number>;
  historyStride?: number;
}

/** Whether s is below threshold: a loss measured at initialisation or at step 0 is no
 * achievement; NaN never solves. */
export function meets(s: SolvedSnapshot, threshold: number): boolean {
  return !s.lossAtInit && s.step > 0 && s.loss < threshold;
}

/** Each task's own "solved" loss (nats): the element's default solved-at for the tasks a head can
 * solve exactly; none for future (a causal model cannot see its answer), text (no exact
 * answer: it is done when the validation loss stops improving) and markov (its floor is the
 * chain's entropy rate, above 0). */
export const TASK_SOLVED_AT: Record<string, number | null> = { repeat: 0.1, shift: 0.1, copy: 0.1, reverse: 0.1, sort: 0.1, induction: 0.1, future: null, text: null, markov: null, lag: 0.1 };

/** How many validation measurements without a new best (by at least CONVERGED_GAIN of it) mean converged. */
export const CONVERGED_PATIENCE = 5;
export const CONVERGED_GAIN = 0.01;

/** Why a run is done: solved (the loss below the task's threshold) or converged (the validation
 * loss stopped improving), at step. */
export interface DoneDetail {
  kind: 'solved' | 'converged';
  step: number;
}

/** Whether the validation losses (in measurement order) have stopped improving: the last
 * CONVERGED_PATIENCE measurements brought no new best lower by CONVERGED_GAIN of the earlier best. */
export function converged(valLoss: readonly number[]): boolean {
  if (valLoss.length <= CONVERGED_PATIENCE) return false;
  const cut = valLoss.length - CONVERGED_PATIENCE;
  const best = Math.min(...valLoss.slice(0, cut));
  return Number.isFinite(best) && !valLoss.slice(cut).some((v) => v < best * (1 - CONVERGED_GAIN));
}

/** The first step whose loss is below threshold, with that loss, from a history (losses[i] is
 * step 1 + i * stride); null: none. */
export function firstBelowAt(losses: ArrayLike<number>, stride: number, threshold: number): { step: number; loss: number } | null {
  for (let i = 0; i < losses.length; ++i) if (losses[i] < threshold) return { step: 1 + i * stride, loss: losses[i] };
  return null;
}

/** The first step whose loss is below threshold, from a history (losses[i] is step 1 + i * stride); -1: none. */
export function firstBelow(losses: ArrayLike<number>, stride: number, threshold: number): number {
  return firstBelowAt(losses, stride, threshold)?.step ?? -1;
}

/** Watches the page's runs for being done (the training view's note, and its pause): once per run. */
export class DoneWatch {
  #done: DoneDetail | null = null;
  #lastStep = -1;
  #fresh = false;

  /** Whether the latest observe found the run done for the first time: true at one snapshot per
   * run (the one at which the run pauses itself, if it is playing then). */
  get fresh(): boolean {
    return this.#fresh;
  }

  /** The next snapshot of a run, its task's threshold (null: none) and, on text, the validation
   * losses so far; the run's done detail once it is done (the same after), else null. A step back
   * is a new run. */
  observe(s: SolvedSnapshot, threshold: number | null, valLoss?: readonly number[], history?: { losses: ArrayLike<number>; stride: number }): DoneDetail | null {
    if (s.step < this.#lastStep) this.#done = null;
    this.#lastStep = s.step;
    const before = this.#done;
    const below = threshold === null || !history ? -1 : firstBelow(history.losses, history.stride, threshold);
    // The history has every step's loss (thinned when long), so no snapshot can be missed.
    if (!this.#done && below > 0) this.#done = { kind: 'solved', step: below };
    if (!this.#done && threshold !== null && meets(s, threshold)) this.#done = { kind: 'solved', step: s.step };
    if (!this.#done && valLoss && converged(valLoss)) this.#done = { kind: 'converged', step: s.step };
    this.#fresh = before === null && this.#done !== null;
    return this.#done;
  }
}
