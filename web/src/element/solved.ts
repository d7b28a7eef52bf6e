// When the element fires `solved`: the first time in a run that the training loss falls below the
// threshold (the solved-at attribute). Pure logic over the snapshots, so it is unit-tested; what
// "below" means is model/done.ts's, shared with the page's "Solved at step N". Like the page, it
// reads the loss history (every step's loss), so a run that pauses itself when solved has fired it
// even if no snapshot's own loss was below.
import { firstBelowAt, meets, type SolvedSnapshot } from '../model/done';

export type { SolvedSnapshot };

/** Detail of the `solved` event. */
export interface SolvedDetail {
  step: number;
  loss: number;
  threshold: number;
}

/** Watches one element's runs for the loss falling below the threshold: once per run, and once
 * more after each change of the threshold (a new goal). */
export class SolvedWatch {
  #threshold: number;
  #fired = false;
  #last: SolvedSnapshot | null = null;

  constructor(threshold: number) {
    this.#threshold = threshold;
  }

  /** A new threshold; the detail of the event to fire if the latest snapshot already meets it. */
  setThreshold(threshold: number): SolvedDetail | null {
    this.#threshold = threshold;
    this.#fired = false;
    return this.#last ? this.#check(this.#last) : null;
  }

  /** The next snapshot (a step back means a new run: configure or reset); the detail of the event
   * to fire when it solves the task for the first time in its run. */
  observe(s: SolvedSnapshot): SolvedDetail | null {
    const prev = this.#last;
    this.#last = s;
    if (prev && s.step < prev.step) this.#fired = false;
    return this.#check(s);
  }

  /** Forgets the latest snapshot (the element left the page). */
  forget(): void {
    this.#last = null;
  }

  #check(s: SolvedSnapshot): SolvedDetail | null {
    if (this.#fired) return null;
    const past = s.history && !s.lossAtInit ? firstBelowAt(s.history, s.historyStride ?? 1, this.#threshold) : null;
    const hit = past && past.step <= s.step ? past : meets(s, this.#threshold) ? { step: s.step, loss: s.loss } : null;
    if (!hit) return null;
    this.#fired = true;
    return { ...hit, threshold: this.#threshold };
  }
}
