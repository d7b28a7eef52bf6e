// The element's `step` events, throttled: while training plays the worker reports many times a
// second, and a page listening for `step` should hear about the run, not drown in it. Pure logic
// over timers, so it is unit-tested with fake timers.

/** `step` events come at most this often while training (the last one is never dropped). */
export const STEP_EVENT_MS = 200;

/** Throttles one element's step events: the first one at once, then at most one per interval,
 * each for the latest snapshot, and never the same step twice. */
export class StepEvents<S extends { step: number }> {
  #latest: S | null = null;
  #lastSent = -1;
  #lastTime = -Infinity;
  #timer: ReturnType<typeof setTimeout> | null = null;

  constructor(
    private readonly emit: (s: S) => void,
    private readonly intervalMs = STEP_EVENT_MS,
  ) {}

  /** The run's starting point (the first model, before the element is ready): no event. */
  start(s: S): void {
    this.#latest = s;
    this.#lastSent = s.step;
  }

  /** A new snapshot: its step is announced now, or once the interval since the last event is
   * over, with whatever snapshot is the latest then. */
  push(s: S): void {
    this.#latest = s;
    if (s.step === this.#lastSent || this.#timer !== null) return;
    const wait = this.#lastTime + this.intervalMs - performance.now();
    if (wait <= 0) this.#fire();
    else this.#timer = setTimeout(() => this.#fire(), wait);
  }

  /** Drops a pending event and forgets the run (the element left the page). */
  stop(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    this.#latest = null;
    this.#lastSent = -1;
  }

  #fire(): void {
    this.#timer = null;
    const s = this.#latest;
    if (!s || s.step === this.#lastSent) return;
    this.#lastSent = s.step;
    this.#lastTime = performance.now();
    this.emit(s);
  }
}
