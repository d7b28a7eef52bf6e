// The predictions panel's model: when the core computes the predictions on the sample again: on
// each new snapshot (a step, a reset, a new sample or model), at most twice a second while training
// plays, and once the panel shows again after a change it skipped. One request in flight; the
// latest wins (live-request.ts). Also the verdict of each position, for the view.
import type { Controller } from '../client/controller';
import type { PredictionsReport } from '../model/protocol';
import { LiveRequest } from './live-request';

/** While training plays, at most one refresh per this many ms (~2 per second). */
const PLAYING_INTERVAL_MS = 500;

/** right: the most likely token is the task's answer; wrong: it is not; none: the task sets no
 * answer at this position (not counted). */
export type Verdict = 'right' | 'wrong' | 'none';

/** The verdict at position t of a report. */
export function verdictAt(r: PredictionsReport, t: number): Verdict {
  const answer = r.answers[t];
  if (answer < 0) return 'none';
  return r.top[t * r.k] === answer ? 'right' : 'wrong';
}

/** Counted positions, those right at top 1, and those whose answer is among the top k. */
export function tally(r: PredictionsReport): { counted: number; right: number; inTopK: number } {
  let counted = 0;
  let right = 0;
  let inTopK = 0;
  for (let t = 0; t < r.ids.length; ++t) {
    const answer = r.answers[t];
    if (answer < 0) continue;
    counted++;
    if (r.top[t * r.k] === answer) right++;
    if (r.top.subarray(t * r.k, (t + 1) * r.k).includes(answer)) inTopK++;
  }
  return { counted, right, inTopK };
}

/** What the view gives and gets. */
export interface PredictionsViewHooks {
  /** Whether the panel is out of the page (the other view, or an embedding hid it). */
  hidden(): boolean;
  loading(): void;
  done(r: PredictionsReport): void;
  failed(why: string): void;
}

/** The panel's requests and refresh policy; `destroy` stops it. */
export class PredictionsModel {
  /** Answers rendered so far. */
  refreshes = 0;
  private pending = false;
  private lastSnapshot: unknown = null;
  private lastRefresh = -Infinity;
  private readonly live: LiveRequest<PredictionsReport>;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly ctl: Controller,
    private readonly view: PredictionsViewHooks,
  ) {
    this.live = new LiveRequest(
      () => {
        this.pending = false;
        this.lastRefresh = performance.now();
        view.loading();
        return ctl.predictions();
      },
      {
        done: (r) => {
          this.refreshes++;
          view.done(r);
        },
        failed: (e) => view.failed(e instanceof Error ? e.message : String(e)),
      },
    );
    this.unsubscribe = ctl.subscribe(() => this.onController());
    this.onController();
  }

  /** Asks again (when the panel is on the page; else once it shows again). */
  refresh(): void {
    const ctl = this.ctl;
    if (!ctl.snapshot || ctl.status === 'loading' || ctl.status === 'crashed') return;
    if (this.view.hidden()) {
      this.pending = true;
      return;
    }
    void this.live.request();
  }

  /** The panel shows again: catch up on a change it skipped. */
  shown(): void {
    if (this.pending && !this.view.hidden()) this.refresh();
  }

  destroy(): void {
    this.live.stop();
    this.unsubscribe();
  }

  private onController(): void {
    const s = this.ctl.snapshot;
    if (!s || s === this.lastSnapshot) {
      // Playing stopped without a new snapshot: show the last one's predictions.
      if (this.pending && this.ctl.status !== 'playing') this.refresh();
      return;
    }
    this.lastSnapshot = s;
    if (this.ctl.status === 'playing' && performance.now() - this.lastRefresh < PLAYING_INTERVAL_MS) this.pending = true;
    else this.refresh();
  }
}
