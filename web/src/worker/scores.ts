// The per-head scores the page plots and compares (the core's headScores(): previous-token,
// prefix-matching, K-composition), read once here for the timeline, the ablation measurement and
// the composition figure. A model the core cannot score (its sequences are too short to hold a
// segment twice) gets NaN scores, which the page shows as undefined, never as numbers.
import type { HeadScores, Trainer } from '../core/attention-core';
import { kindOf } from './post';

/** The trainer's head scores; NaN everywhere when the core says this model cannot be scored. */
export function headScoresOf(t: Trainer, L: number, H: number): HeadScores {
  try {
    return t.headScores();
  } catch (e) {
    const kind = kindOf(e, 'internal');
    if (kind !== 'input' && kind !== 'config') throw e;
    return {
      previousToken: new Float32Array(L * H).fill(NaN),
      prefixMatching: new Float32Array(L * H).fill(NaN),
      composition: new Float32Array(Math.max(0, L - 1) * H * H).fill(NaN),
      compositionBaseline: NaN,
      nLayers: L,
      nHeads: H,
    };
  }
}

