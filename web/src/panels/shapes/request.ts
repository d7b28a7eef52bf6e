// The "Shapes" panel's request: the core's report of a model of the settings (modelReport), whose
// FFN width and parameter count the panel shows instead of computing them.
import type { ModelReport, TrainerConfig } from '../../core/attention-core';
import { defineRequest } from '../../model/protocol';

/** What a model of config reports for a batch of its batchSize sequences of seqLen: its state
 * dict, parameter count, activations, a training step's FLOPs and the FFN's width. */
export const modelReportRequest = defineRequest<TrainerConfig, ModelReport>('modelReport', 'config');
