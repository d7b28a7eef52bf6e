// The Receptive field panel's model: when the core measures the field again (on each new snapshot
// while shown; never while training plays), and what the measurement says: how far from each output
// its nonzero attributions reach, against the bound L·(W − 1) of a sliding window.
import type { Controller } from '../../client/controller';
import { PanelModel, type PanelView } from '../../ui/panel-model';
import { receptiveRequest, type ReceptiveReport } from './request';

/** The bound on how far one output may reach: L·(W − 1) positions for a window (each side under
 * mlm); null when nothing bounds it (full attention, and the strided pattern's far keys). */
export function reachBound(r: Pick<ReceptiveReport, 'attention' | 'nLayers' | 'window'>): number | null {
  return r.attention === 'window' ? r.nLayers * (r.window - 1) : null;
}

/** What the measurement shows: the farthest distance of a nonzero attribution from its output
 * (over every row, back and, under mlm, forward), and how many cells lie beyond the bound, split
 * into those exactly 0 and those not (the bound holds when that is 0). */
export function reach(r: ReceptiveReport): { farthest: number; beyondZero: number; beyondNonzero: number } {
  const bound = reachBound(r);
  let farthest = 0;
  let beyondZero = 0;
  let beyondNonzero = 0;
  for (let i = 0; i < r.T; ++i)
    for (let j = 0; j < r.T; ++j) {
      const v = r.field[i * r.T + j];
      const d = Math.abs(i - j);
      if (v !== 0) farthest = Math.max(farthest, d);
      if (bound !== null && d > bound) {
        if (v === 0) beyondZero++;
        else beyondNonzero++;
      }
    }
  return { farthest, beyondZero, beyondNonzero };
}

/** The panel's requests and refresh policy; `destroy` stops it. */
export class ReceptiveModel extends PanelModel<ReceptiveReport> {
  constructor(ctl: Controller, view: PanelView<ReceptiveReport>) {
    super(ctl, view, { whilePlaying: 'never' });
    this.start();
  }

  protected ask(): Promise<ReceptiveReport> {
    return this.ctl.call(receptiveRequest);
  }
}
