// The run JSON's "ablation" (web/src/ui/export-model.ts): written with the new keys headsOff and
// headsFrozen; files written before issue 13 (zeroed, frozen) still import.
import { describe, expect, test } from 'vitest';
import { EXPORT_FORMAT, parseRunJson } from '../../web/src/ui/export-model';

const run = (ablation: unknown) =>
  JSON.stringify({
    format: EXPORT_FORMAT,
    config: { vocabSize: 16, dModel: 8, nHeads: 2, seqLen: 4, batchSize: 2, lr: 0.005, seed: 1, attnDropout: 0, outDropout: 0, task: 'repeat' },
    step: 0,
    historyStride: 1,
    lossHistory: [],
    sample: [1, 2],
    ablation,
  });

describe('the run JSON ablation', () => {
  const want = { headsOff: [false, true], headsFrozen: [true, false], scaleScores: false, mask: 'none' };

  test('new keys and old keys read the same', () => {
    expect(parseRunJson(run(want)).ablation).toEqual(want);
    expect(parseRunJson(run({ zeroed: [false, true], frozen: [true, false], scaleScores: false, mask: 'none' })).ablation).toEqual(want);
  });

  test('both names for one list is refused; a bad old-named list names the old key', () => {
    expect(() => parseRunJson(run({ ...want, zeroed: [false, true] }))).toThrow(/both "headsOff" and "zeroed"/);
    expect(() => parseRunJson(run({ headsOff: [false, true], frozen: [true], scaleScores: true, mask: 'causal' }))).toThrow(/"ablation\.frozen" is not a list of 2/);
    expect(() => parseRunJson(run({ headsFrozen: [false, true], scaleScores: true, mask: 'causal' }))).toThrow(/"ablation\.headsOff" is not a list of 2/);
  });
});
