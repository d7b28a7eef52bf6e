// The "Shapes" panel's answer: the core's modelReport for the settings (no run needed).
import { handle } from '../../worker/context';
import { modelReportRequest } from './request';

/** The worker's answer: the report of a model of the config asked about. */
export const handlers = [handle(modelReportRequest, (ctx, config) => ctx.core.modelReport(config))];
