// The Circuits panel's request: the core's per-head scores of the live model.
import type { HeadScores } from '../../core/attention-core';
import { defineRequest } from '../../model/protocol';

/** The core's per-head scores at a step (the composition figure). */
export interface HeadScoresReport {
  scores: HeadScores;
  step: number;
}

/** The core's headScores() under the interventions in force: previous-token, prefix-matching and
 * K-composition with its random baseline. */
export const headScoresRequest = defineRequest<void, HeadScoresReport>('headScores', 'internal');
