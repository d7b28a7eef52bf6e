// The lifecycle every panel's model shares: when it asks the worker again. A panel measures when it
// is shown and something it depends on has changed since its last answer (by default the
// snapshot: a step, a pause, a new sample, a new run, an ablation), and when the learner changes
// its own inputs (refresh). While training plays it asks never (the pause brings the latest) or at
// most once per interval, as the panel says; while it is hidden it asks nothing and catches up
// when shown. One request is in flight at a time and an answer to a question asked again meanwhile
// is dropped (LiveRequest); destroy() cancels what is pending. No DOM here: the view answers
// visible() and shows what done() and failed() hand it.
import type { Controller } from '../client/controller';
import { LiveRequest } from './live-request';

/** What a panel model needs of its view. */
export interface PanelView<T> {
  /** Whether the panel is on the page now (hidden: it asks nothing, and catches up once shown). */
  visible(): boolean;
  /** A request goes out. */
  loading?(): void;
  /** The answer to the latest request. */
  done(answer: T): void;
  /** The latest request failed: the sentence why. */
  failed(why: string): void;
}

/** How a panel model asks. */
export interface PanelPolicy {
  /** While training plays: 'never' (a pause brings the latest), or at most once per this many ms. */
  whilePlaying: 'never' | number;
  /** Whether a change of dependsOn() asks by itself (default true); false: only refresh() asks
   * (a panel that measures on demand). */
  auto?: boolean;
}

/** The text of a failure. */
export const messageOf = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/** See the file comment. A subclass says what it asks (ask), what its answer depends on
 * (dependsOn) and what it does on each change (follow), and calls start() at the end of its
 * constructor. */
export abstract class PanelModel<T> {
  /** Answers handed to the view so far. */
  refreshes = 0;
  /** Something the answer depends on changed since the last request went out (a panel that asks
   * only on demand starts with nothing to ask). */
  #stale: boolean;
  /** The refresh() of the learner's own change: asks at once, even within the interval. */
  #urgent = false;
  #seen: unknown = undefined;
  #lastAsk = -Infinity;
  #timer: ReturnType<typeof setTimeout> | null = null;
  #destroyed = false;
  readonly #live: LiveRequest<T>;
  readonly #unsubscribe: () => void;

  constructor(
    protected readonly ctl: Controller,
    protected readonly view: PanelView<T>,
    protected readonly policy: PanelPolicy,
  ) {
    this.#stale = policy.auto ?? true;
    this.#live = new LiveRequest(
      () => {
        this.#lastAsk = performance.now();
        view.loading?.();
        return this.ask();
      },
      {
        done: (a) => {
          this.refreshes++;
          if (this.answered(a)) view.done(a);
        },
        failed: (e) => view.failed(messageOf(e)),
      },
    );
    this.#unsubscribe = ctl.subscribe(() => this.#update());
  }

  /** The request: what the panel asks the worker (through ctl.call). */
  protected abstract ask(): Promise<T>;

  /** What the answer depends on, compared with !== to the last value seen: by default the
   * snapshot, so a step, a pause, a new sample, a new run or an ablation asks again. */
  protected dependsOn(): unknown {
    return this.ctl.snapshot;
  }

  /** Whether the panel may ask now (default: the view's visible()). */
  protected visible(): boolean {
    return this.view.visible();
  }

  /** Called on each change of the controller, before the model decides whether to ask (it may
   * ask itself, with askNow). */
  protected follow(): void {}

  /** An answer arrived; returns whether the view should show it (false: the model asked again). */
  protected answered(_answer: T): boolean {
    return true;
  }

  /** Starts following the controller (the subclass's constructor ends with it). */
  protected start(): void {
    this.#update();
  }

  /** Whether a run exists to ask about. */
  get ready(): boolean {
    return this.ctl.ready;
  }

  /** Whether a request is in flight. */
  get busy(): boolean {
    return this.#live.busy;
  }

  /** The learner changed the panel's own inputs: ask at once (when shown; while training plays,
   * unless the panel never asks then). */
  refresh(): void {
    this.#stale = true;
    this.#urgent = true;
    this.#update();
  }

  /** The panel shows again (or scrolled into view): catch up on what it skipped. */
  shown(): void {
    this.#update();
  }

  /** Asks now, shown or not, playing or not (a request that also changes the run: the ablation);
   * the answer covers what the panel depends on now. */
  protected askNow(): Promise<void> {
    this.#seen = this.dependsOn();
    this.#stale = false;
    this.#urgent = false;
    this.#clearTimer();
    return this.#live.request();
  }

  /** No more requests, timers or answers. */
  destroy(): void {
    this.#destroyed = true;
    this.#live.stop();
    this.#clearTimer();
    this.#unsubscribe();
  }

  #clearTimer(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
  }

  #update(): void {
    if (this.#destroyed) return;
    this.follow();
    const dep = this.dependsOn();
    if (dep !== this.#seen) {
      this.#seen = dep;
      if (this.policy.auto ?? true) this.#stale = true;
    }
    if (!this.#stale || !this.ready || !this.visible()) return;
    if (this.ctl.status === 'playing' && !this.#urgent) {
      const every = this.policy.whilePlaying;
      if (every === 'never') return;
      const wait = this.#lastAsk + every - performance.now();
      if (wait > 0) {
        // Asked less than an interval ago: once more when the interval is over.
        this.#timer ??= setTimeout(() => {
          this.#timer = null;
          this.#update();
        }, wait);
        return;
      }
    }
    if (this.ctl.status === 'playing' && this.policy.whilePlaying === 'never') return;
    void this.askNow();
  }
}
