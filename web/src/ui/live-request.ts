// "One request in flight, redo the latest": the panels that ask the worker for something that
// changes while the learner acts or the model trains (ablation, timeline, backward) must never
// queue a request per change, nor show an answer to a question that was asked again meanwhile.

/** What a LiveRequest does with its answers. */
export interface LiveRequestHandlers<T> {
  /** The answer of the latest run (never called for a run that was asked again meanwhile). */
  done(answer: T): void;
  /** The latest run failed. */
  failed(error: unknown): void;
}

/**
 * Runs `run` at most once at a time. A request made while a run is in flight marks it stale: when
 * it ends, its answer is dropped and `run` goes again, once, with whatever inputs it reads then.
 */
export class LiveRequest<T> {
  #inFlight: Promise<void> | null = null;
  #again = false;
  #stopped = false;
  /** Runs started (for tests and the panels' data attributes). */
  runs = 0;

  constructor(
    private readonly run: () => Promise<T>,
    private readonly handlers: LiveRequestHandlers<T>,
  ) {}

  /** Whether a run is in flight. */
  get busy(): boolean {
    return this.#inFlight !== null;
  }

  /** Asks for a fresh answer. Resolves once the answer that covers this request was handled. */
  request(): Promise<void> {
    if (this.#stopped) return Promise.resolve();
    if (this.#inFlight) {
      this.#again = true;
      return this.#inFlight;
    }
    this.#inFlight = this.#loop().finally(() => (this.#inFlight = null));
    return this.#inFlight;
  }

  /** No more runs and no more callbacks (the panel is gone). */
  stop(): void {
    this.#stopped = true;
  }

  async #loop(): Promise<void> {
    do {
      this.#again = false;
      this.runs++;
      let answer: T;
      try {
        answer = await this.run();
      } catch (e) {
        if (this.#stopped) return;
        if (!this.#again) this.handlers.failed(e);
        continue;
      }
      if (this.#stopped) return;
      if (!this.#again) this.handlers.done(answer);
    } while (this.#again && !this.#stopped);
  }
}
