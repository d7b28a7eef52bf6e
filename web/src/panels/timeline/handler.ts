// The worker's side of the timeline: the run takes the snapshots while it trains (worker/run.ts);
// this request sends the ones the page does not hold yet, as copies (the run keeps its own).
import { entriesAfter, timelineBytes } from '../../model/timeline';
import { handle } from '../../worker/context';
import { timelineRequest } from './request';

/** The kept steps, copies of the snapshots after `since` (-1: all), and the policy's state. */
export const handlers = [
  handle(timelineRequest, (ctx, { since }) => {
    const { timeline: tl } = ctx.run();
    const entries = entriesAfter(tl, since).map((e) => ({
      ...e,
      ids: e.ids.slice(),
      weights: e.weights.slice(),
      entropy: e.entropy.slice(),
      answerMass: e.answerMass.slice(),
      previousToken: e.previousToken.slice(),
      prefixMatching: e.prefixMatching.slice(),
    }));
    return { steps: tl.entries.map((e) => e.step), entries, every: tl.every, capacity: tl.capacity, bytes: timelineBytes(tl.entries) };
  }),
];
