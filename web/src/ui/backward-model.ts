// The backward panel's model: what the row selection can be (the run's heads, the sample's
// positions, the vocabulary), and when the core computes the row again: on a change of the
// selection, on pause or a step, about twice a second while training plays and the panel is on
// screen, and once it shows again after a change it skipped. One request in flight; the latest wins.
import type { Controller } from '../client/controller';
import type { RowBackwardReport } from '../model/protocol';
import { LiveRequest } from './live-request';

/** While training plays, at most one refresh per this many ms (~2 per second). */
const PLAYING_INTERVAL_MS = 500;

/** The row asked for: a head, a query position and a target (undefined: the task's answer). */
export interface RowSelection {
  head: number;
  query: number;
  target?: number;
}

/** What the selects can offer: the run's layers and heads per layer, the sample's ids and the
 * vocabulary size. */
export interface RowChoices {
  L: number;
  H: number;
  ids: Int32Array;
  V: number;
}

/** What the view gives and gets. */
export interface BackwardViewHooks {
  /** The current selection. */
  selection(): RowSelection;
  /** Whether the panel is out of the page (the other view, or an embedding took it out). */
  hidden(): boolean;
  /** The choices changed (a new run, sample or vocabulary); ready: whether a run exists. */
  choices(c: RowChoices | null, ready: boolean): void;
  /** A request goes out. */
  loading(): void;
  done(r: RowBackwardReport): void;
  failed(why: string): void;
}

/** The panel's requests and refresh policy; `destroy` stops it. */
export class BackwardModel {
  /** Answers rendered so far. */
  refreshes = 0;
  /** Whether the panel is in the viewport (the view's IntersectionObserver keeps it). */
  onScreen = true;
  private pendingHidden = false;
  private lastSnapshot: unknown = null;
  private lastStatus: Controller['status'];
  private lastRefresh = 0;
  private choicesKey = '';
  private readonly live: LiveRequest<RowBackwardReport>;
  private readonly unsubscribe: () => void;

  constructor(
    private readonly ctl: Controller,
    private readonly view: BackwardViewHooks,
  ) {
    this.lastStatus = ctl.status;
    this.live = new LiveRequest(
      () => {
        this.pendingHidden = false;
        this.lastRefresh = performance.now();
        const { head, query, target } = view.selection();
        view.loading();
        return ctl.rowBackward(head, query, target);
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

  /** Whether a run exists to ask about. */
  get ready(): boolean {
    return !!this.ctl.snapshot && this.ctl.status !== 'loading' && this.ctl.status !== 'crashed';
  }

  /** Computes the selected row again (when the panel is on the page; else once it shows again). */
  refresh(): void {
    if (!this.ready) return;
    if (this.view.hidden()) {
      this.pendingHidden = true;
      return;
    }
    void this.live.request();
  }

  /** The panel shows again (or scrolled into view): catch up on a change it skipped. */
  shown(): void {
    if (this.pendingHidden && !this.view.hidden()) this.refresh();
  }

  destroy(): void {
    this.live.stop();
    this.unsubscribe();
  }

  private onController(): void {
    const ctl = this.ctl;
    const s = ctl.snapshot;
    const V = ctl.store.state.vocabSize;
    const key = s ? `${s.L}x${s.H}|${Array.from(s.ids).join(',')}|${V}|${this.ready}` : `none|${this.ready}`;
    if (key !== this.choicesKey) {
      this.choicesKey = key;
      this.view.choices(s ? { L: s.L, H: s.H, ids: s.ids, V } : null, this.ready);
    }
    const status = ctl.status;
    const wasPlaying = this.lastStatus === 'playing';
    this.lastStatus = status;
    if (!s || s === this.lastSnapshot) return;
    this.lastSnapshot = s;
    if (status === 'playing') {
      // Off screen or hidden, the panel waits: each refresh costs a layout of a dozen tables.
      if (this.view.hidden() || !this.onScreen) this.pendingHidden = true;
      else if (performance.now() - this.lastRefresh >= PLAYING_INTERVAL_MS) this.refresh();
    } else if (status === 'paused' || status === 'invalid' || wasPlaying) {
      this.refresh();
    }
  }
}
