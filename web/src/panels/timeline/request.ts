// The timeline panel's request: the attention snapshots the run kept (model/timeline.ts's policy).
import { defineRequest } from '../../model/protocol';
import type { TimelineEntry } from '../../model/timeline';

/** The timeline: which steps are kept, the new entries, and the policy (model/timeline.ts). */
export interface Timeline {
  /** Every kept step, ascending (entries the page holds for other steps were thinned out). */
  steps: number[];
  /** The kept entries with step > since (all of them when since is -1). */
  entries: TimelineEntry[];
  /** A snapshot is taken every `every` steps; it doubles when the timeline is full. */
  every: number;
  capacity: number;
  /** Bytes the kept entries hold in the worker. */
  bytes: number;
}

/** Every kept step, and copies of the snapshots after step `since` (-1: all). */
export const timelineRequest = defineRequest<{ since: number }, Timeline>('timeline', 'internal');
