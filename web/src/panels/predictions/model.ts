// The predictions panel's model: when the core computes the predictions on the sample again (on
// each new snapshot: a step, a reset, a new sample or model; at most twice a second while training
// plays; once the panel shows again after a change it skipped: ui/panel-model.ts), and the verdict
// of each position, for the view.
import type { Controller } from '../../client/controller';
import { PanelModel, type PanelView } from '../../ui/panel-model';
import { predictionsRequest, type PredictionsReport } from './request';

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

/** The panel's requests and refresh policy; `destroy` stops it. */
export class PredictionsModel extends PanelModel<PredictionsReport> {
  constructor(ctl: Controller, view: PanelView<PredictionsReport>) {
    super(ctl, view, { whilePlaying: PLAYING_INTERVAL_MS });
    this.start();
  }

  protected ask(): Promise<PredictionsReport> {
    return this.ctl.call(predictionsRequest);
  }
}
