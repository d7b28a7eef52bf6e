// The "Look inside" panel's numbers: trainer.inspect on the sample, with the task's
// answers and a corrupted input for the patching: the learner's own ids, the sample with one token
// changed at a position the learner picked, or by default the core's inductionCorruption on the
// induction task (the sample with one token of the repeat's first occurrence changed) and, on the
// other tasks, the sample with the token the last answer copies changed. Every number is the core's.
import type { AttentionCore, InspectRequest, Trainer } from '../../core/attention-core';
import type { TrainerConfigMsg } from '../../model/protocol';
import { handle } from '../../worker/context';
import { kindOf, messageOf } from '../../worker/post';
import { inspectRequest, type InspectReport } from './request';

/** The report for the sample ids on the trainer as it is now (eval mode, the ablation in force).
 * corrupted: the learner's corrupted input (the core checks its length and tokens: an `input`
 * error); change: the position whose token to change instead. */
export function inspectSample(core: AttentionCore, trainer: Trainer, config: TrainerConfigMsg, ids: Int32Array, step: number, corrupted?: number[], change?: number): InspectReport {
  const answers = core.taskTargets(config.task, ids, config);
  const V = config.vocabSize;
  const request: InspectRequest = { ids, answers };
  let changed = -1;
  let patchingNote = '';
  if (config.task === 'induction') {
    try {
      const c = core.inductionCorruption(ids, V);
      // The position whose answer the repeat sets, for the default and for the learner's own input.
      request.position = c.position;
      if (corrupted === undefined && change === undefined) {
        request.corrupted = c.ids;
        request.answerClean = c.answerClean;
        request.answerCorrupt = c.answerCorrupt;
        changed = c.changed;
      }
    } catch (e) {
      if (kindOf(e, 'internal') !== 'input') throw e;
      if (corrupted === undefined && change === undefined) patchingNote = `No default corrupted input: ${messageOf(e).replace(/\.$/, '')}, or pick a token to change.`;
    }
  }
  if (corrupted !== undefined) request.corrupted = Int32Array.from(corrupted);
  else if (change !== undefined || (config.task !== 'induction' && ids.length > 0)) {
    changed = change ?? defaultChangePosition(ids, answers);
    request.corrupted = changeTokenAt(ids, changed, V);
  }
  const inspection = trainer.inspect(request);
  return {
    step,
    task: config.task,
    vocabSize: V,
    nLayers: config.nLayers,
    nHeads: config.nHeads,
    ids: ids.slice(),
    corrupted: request.corrupted ? Int32Array.from(request.corrupted) : null,
    changed,
    patchingNote,
    inspection,
  };
}

/** ids with the token at p replaced by the smallest token that is not in ids (the next token mod V
 * when every token is), as the core's inductionCorruption replaces one. */
export function changeTokenAt(ids: Int32Array, p: number, V: number): Int32Array {
  if (!(Number.isInteger(p) && p >= 0 && p < ids.length)) throw new RangeError(`position ${p} is outside the sample (0 to ${ids.length - 1})`);
  const present = new Set(ids);
  let t = 0;
  while (t < V && present.has(t)) ++t;
  const out = ids.slice();
  out[p] = t < V ? t : (ids[p] + 1) % V;
  return out;
}

/** The token to change by default on a task other than induction: at the last position with an
 * answer (the one patching measures), the last earlier token equal to that answer (the token the
 * model must copy), else that position itself; T - 1 when no position has an answer. */
export function defaultChangePosition(ids: Int32Array, answers: Int32Array): number {
  let p = ids.length - 1;
  while (p >= 0 && !(answers[p] >= 0)) --p;
  if (p < 0) return Math.max(0, ids.length - 1);
  for (let j = p; j >= 0; --j) if (ids[j] === answers[p]) return j;
  return p;
}

/** Look inside the live model on the sample (see inspectSample). */
export const handlers = [
  handle(inspectRequest, (ctx, { corrupted, change }) => {
    const run = ctx.run();
    return inspectSample(ctx.core, run.trainer, run.config, ctx.sample, run.step, corrupted, change);
  }),
];
