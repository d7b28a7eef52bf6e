// The "Look inside" panel's numbers: trainer.inspect on the sample, with the task's
// answers and a corrupted input for the patching: the learner's own ids, the sample with one token
// changed at a position the learner picked, or by default the core's inductionCorruption on the
// induction task (the sample with one token of the repeat's first occurrence changed) and, on the
// other tasks, the sample with the token the last answer copies changed. Every number is the core's.
import type { AttentionCore, InspectRequest, Trainer } from '../core/attention-core';
import { changeTokenAt, defaultChangePosition } from '../model/inspect';
import type { InspectReport, TrainerConfigMsg } from '../model/protocol';
import { kindOf, messageOf } from './post';

/** The report for the sample ids on the trainer as it is now (eval mode, the ablation in force).
 * corrupted: the learner's corrupted input (the core checks its length and tokens: an `input`
 * error); change: the position whose token to change instead. */
export function inspectSample(core: AttentionCore, trainer: Trainer, config: TrainerConfigMsg, ids: Int32Array, step: number, corrupted?: number[], change?: number): InspectReport {
  const answers = core.taskTargets(config.task, ids);
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
