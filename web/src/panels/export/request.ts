// The Export / import panel's request: the weights as a safetensors file. (The import is the run's
// own request, importRun: it makes a new run.)
import { defineRequest, type Snapshot } from '../../model/protocol';

/** The weights as a safetensors file (trainer.exportWeights()) and the snapshot they belong to. */
export const exportWeightsRequest = defineRequest<void, { bytes: Uint8Array; snapshot: Snapshot }>('exportWeights', 'internal');
