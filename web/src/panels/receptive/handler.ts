// The Receptive field panel's numbers: the core's measured attribution of each output position to
// each input position of the sample (Trainer.receptiveField), and the settings its bound reads.
import { handle } from '../../worker/context';
import { receptiveRequest, type ReceptiveReport } from './request';

/** The worker's answer: the field of the live model on the sample the heatmaps show. */
export const handlers = [
  handle(receptiveRequest, (ctx): ReceptiveReport => {
    const run = ctx.run();
    const m = run.trainer.receptiveField(ctx.sample);
    const c = run.config;
    return { step: run.step, T: m.rows, nLayers: c.nLayers, objective: c.objective, attention: c.attention, window: c.window, stride: c.stride, field: m.data };
  }),
];
