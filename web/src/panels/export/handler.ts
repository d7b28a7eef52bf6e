// The worker's side of the Export / import panel: the run's weights, as the core writes them.
import { handle } from '../../worker/context';
import { exportWeightsRequest } from './request';

/** The weights as a safetensors file, and the snapshot they belong to. */
export const handlers = [handle(exportWeightsRequest, (ctx) => ({ bytes: ctx.run().trainer.exportWeights(), snapshot: ctx.snapshot() }))];
