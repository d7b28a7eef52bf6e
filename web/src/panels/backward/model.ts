// The backward panel's model: what the row selection can be (the run's heads, the sample's
// positions, the vocabulary), and when the core computes the row again (ui/panel-model.ts): on a
// change of the selection, on pause or a step, about twice a second while training plays and the
// panel is on screen, and once it shows again after a change it skipped.
import type { Controller } from '../../client/controller';
import { PanelModel, type PanelView } from '../../ui/panel-model';
import { rowBackwardRequest, type RowBackwardReport, type RowSelection } from './request';

export type { RowSelection };

/** While training plays, at most one refresh per this many ms (~2 per second). */
const PLAYING_INTERVAL_MS = 500;

/** What the selects can offer: the run's layers and heads per layer, the sample's ids and the
 * vocabulary size. */
export interface RowChoices {
  L: number;
  H: number;
  ids: Int32Array;
  V: number;
}

/** What the view gives and gets besides the row. */
export interface BackwardView extends PanelView<RowBackwardReport> {
  /** The current selection. */
  selection(): RowSelection;
  /** The choices changed (a new run, sample or vocabulary); ready: whether a run exists. */
  choices(c: RowChoices | null, ready: boolean): void;
}

/** The panel's requests and refresh policy; `destroy` stops it. */
export class BackwardModel extends PanelModel<RowBackwardReport> {
  /** Whether the panel is in the viewport (the view's IntersectionObserver keeps it): while
   * training plays, a panel scrolled away waits (each refresh lays out a dozen tables). */
  onScreen = true;
  private choicesKey = '';

  constructor(
    ctl: Controller,
    protected override readonly view: BackwardView,
  ) {
    super(ctl, view, { whilePlaying: PLAYING_INTERVAL_MS });
    this.start();
  }

  protected override visible(): boolean {
    return this.view.visible() && (this.ctl.status !== 'playing' || this.onScreen);
  }

  protected ask(): Promise<RowBackwardReport> {
    return this.ctl.call(rowBackwardRequest, this.view.selection());
  }

  /** New choices for the selects when the run's heads, the sample or the vocabulary change. */
  protected override follow(): void {
    const s = this.ctl.snapshot;
    const V = this.ctl.store.state.vocabSize;
    const key = s ? `${s.L}x${s.H}|${Array.from(s.ids).join(',')}|${V}|${this.ready}` : `none|${this.ready}`;
    if (key === this.choicesKey) return;
    this.choicesKey = key;
    this.view.choices(s ? { L: s.L, H: s.H, ids: s.ids, V } : null, this.ready);
  }
}
