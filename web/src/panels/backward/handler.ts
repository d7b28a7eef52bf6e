// The worker's side of the backward panel: the core's rowBackward on the sample, for the row
// asked for, with the target the learner chose or the default one.
import { handle } from '../../worker/context';
import { rowBackwardRequest, type RowBackwardReport } from './request';

/** The default target of the one-row backward at query: the task's answer there (answers: the
 * task's targets, -100 where it has none), else the next token, else the token itself. */
export function chooseTarget(answers: Int32Array, ids: Int32Array, query: number): Pick<RowBackwardReport, 'target' | 'targetSource'> {
  const answer = answers[query];
  if (answer !== undefined && answer >= 0) return { target: answer, targetSource: 'task' };
  if (query + 1 < ids.length) return { target: ids[query + 1], targetSource: 'next' };
  return { target: ids[query] ?? 0, targetSource: 'last' };
}

/** One query row of one head (global index), forward and backward, on the sample; the target is
 * the one given, else the default one (chooseTarget). */
export const handlers = [
  handle(rowBackwardRequest, (ctx, { head, query, target: chosen }) => {
    const run = ctx.run();
    const ids = ctx.sample;
    const { target, targetSource } = chosen !== undefined ? { target: chosen, targetSource: 'chosen' as const } : chooseTarget(ctx.core.taskTargets(run.config.task, ids, run.config), ids, query);
    return { ids: ids.slice(), head, query, target, targetSource, row: run.trainer.rowBackward(ids, head, query, target) };
  }),
];
