// The worker's side of the Circuits panel: the run's head scores now (worker/scores.ts reads them
// for the timeline and the ablation too).
import { handle } from '../../worker/context';
import { headScoresOf } from '../../worker/scores';
import { headScoresRequest } from './request';

/** The core's per-head scores at the run's step (NaN scores when the core cannot score the model). */
export const handlers = [
  handle(headScoresRequest, (ctx) => {
    const run = ctx.run();
    return { scores: headScoresOf(run.trainer, run.config.nLayers, run.config.nHeads), step: run.step };
  }),
];
