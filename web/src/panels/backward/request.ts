// The backward panel's request: one query row of one head, forward and backward, on the sample.
import type { RowBackward } from '../../core/attention-core';
import { defineRequest } from '../../model/protocol';

/** One query row of one head (the core's rowBackward), with what it was computed for. */
export interface RowBackwardReport {
  ids: Int32Array;
  /** The global head index l * H + h. */
  head: number;
  query: number;
  target: number;
  /** task: the task's answer at this position; next: the next sample token (the task has no
   * answer here); last: the position's own token (last position, no answer); chosen: given. */
  targetSource: 'task' | 'next' | 'last' | 'chosen';
  row: RowBackward;
}

/** The row asked for: a head (global index l * H + h), a query position and a target (undefined:
 * the default, chooseTarget's). */
export interface RowSelection {
  head: number;
  query: number;
  target?: number;
}

/** One query row of one head, forward and backward, on the sample; a bad head or position is an
 * `input` error. */
export const rowBackwardRequest = defineRequest<RowSelection, RowBackwardReport>('rowBackward', 'input');
