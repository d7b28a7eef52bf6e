// The play loop's pacing: chunks of steps sized to take about CHUNK_MS (so a pause or a step waits
// at most that long), the training speed over the last second, and when a progress event is due.

/** How long one training chunk should take (ms). */
export const CHUNK_MS = 15;
/** Progress events while playing come at most this often by default (ms). */
export const DEFAULT_INTERVAL_MS = 50;

/** Pacing state of one session's play loop; times in ms from the session's clock. */
export class Pace {
  /** Steps the next chunk runs. */
  stepsPerChunk = 1;
  /** Progress events come at most every intervalMs. */
  intervalMs = DEFAULT_INTERVAL_MS;
  /** (time, steps done) after each chunk of the last second. */
  #rate: Array<[number, number]> = [];
  #lastPost = 0;

  /** The progress interval a play request asks for (default 50 ms), kept within [16, 1000]. */
  setInterval(intervalMs: number | undefined): void {
    this.intervalMs = Math.max(16, Math.min(1000, intervalMs ?? DEFAULT_INTERVAL_MS));
  }

  /** Play starts: a new speed measurement, and the first chunk posts progress. */
  start(): void {
    this.#rate = [];
    this.#lastPost = 0;
  }

  /** A new Trainer: its step count starts over, so does the speed measurement. */
  clearRate(): void {
    this.#rate = [];
  }

  /** A chunk ran from t0 to t1; `done` is the Trainer's step count after it. Sizes the next chunk
   * at CHUNK_MS, growing at most 2x at a time, within [1, maxSteps]. */
  chunkDone(t0: number, t1: number, done: number, maxSteps: number): void {
    const perStep = Math.max((t1 - t0) / this.stepsPerChunk, 1e-3);
    this.stepsPerChunk = Math.max(1, Math.min(maxSteps, Math.round(CHUNK_MS / perStep), this.stepsPerChunk * 2));
    this.#rate.push([t1, done]);
    while (this.#rate.length > 2 && t1 - this.#rate[0][0] > 1000) this.#rate.shift();
  }

  /** Steps per second over the last second (0 before two chunks). */
  stepsPerSec(): number {
    if (this.#rate.length < 2) return 0;
    const [t0, s0] = this.#rate[0];
    const [t1, s1] = this.#rate[this.#rate.length - 1];
    return t1 > t0 ? ((s1 - s0) * 1000) / (t1 - t0) : 0;
  }

  /** Whether a progress event is due at time t (and, if so, that it is being posted now). */
  progressDue(t: number): boolean {
    if (t - this.#lastPost < this.intervalMs) return false;
    this.#lastPost = t;
    return true;
  }
}
