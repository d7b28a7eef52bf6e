// The run JSON (web/src/panels/export/model.ts): its "ablation" (headsOff, headsFrozen, scaleScores,
// mask), and the config keys added since the format's first files (older files, without them,
// import as the legacy model).
import { describe, expect, test } from 'vitest';
import { EXPORT_FORMAT, parseRunJson } from '../../web/src/panels/export/model';

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

  test('read as written', () => {
    expect(parseRunJson(run(want)).ablation).toEqual(want);
  });

  test('a missing or bad list is refused naming it', () => {
    expect(() => parseRunJson(run({ headsOff: [false, true], headsFrozen: [true], scaleScores: true, mask: 'causal' }))).toThrow(/"ablation\.headsFrozen" is not a list of 2/);
    expect(() => parseRunJson(run({ headsFrozen: [false, true], scaleScores: true, mask: 'causal' }))).toThrow(/"ablation\.headsOff" is not a list of 2/);
    // Names that never shipped are not read.
    expect(() => parseRunJson(run({ zeroed: [false, true], frozen: [true, false], scaleScores: false, mask: 'none' }))).toThrow(/"ablation\.headsOff" is not a list of 2/);
  });
});

describe('the run JSON config: the block', () => {
  const base = { vocabSize: 16, dModel: 8, nHeads: 2, seqLen: 4, batchSize: 2, lr: 0.005, seed: 1, attnDropout: 0, outDropout: 0, task: 'repeat', nLayers: 1, residual: true };
  const json = (config: object) => JSON.stringify({ format: EXPORT_FORMAT, config, step: 0, historyStride: 1, lossHistory: [], sample: [1, 2], ablation: undefined });
  const block = { kvHeads: 1, positions: 'alibi', maxSeqLen: 8, norm: 'layernorm', normPosition: 'post', ffn: 'gelu', ffnMult: 3 };

  test('the seven keys are read; a file from before them is the legacy model; the first keys are required', () => {
    expect(parseRunJson(json({ ...base, ...block })).config).toMatchObject(block);
    expect(parseRunJson(json(base)).config).toMatchObject({ kvHeads: 0, positions: 'sinusoidal', maxSeqLen: 0, norm: 'none', normPosition: 'pre', ffn: 'none', ffnMult: 4 });
    const { lr: _lr, ...noLr } = base;
    expect(() => parseRunJson(json(noLr))).toThrow(/lr is missing, not a number/);
  });

  test('a bad value is refused naming the key', () => {
    expect(() => parseRunJson(json({ ...base, ...block, positions: 'sine' }))).toThrow(/positions "sine" is not one of sinusoidal, learned, rope, alibi, none/);
    expect(() => parseRunJson(json({ ...base, ...block, ffnMult: 9 }))).toThrow(/FFN width \(× d_model\): 9 is above the maximum 8/);
    expect(() => parseRunJson(json({ ...base, ...block, kvHeads: '1' }))).toThrow(/kvHeads is "1", not a number/);
    // The rules across keys, as the core's.
    expect(() => parseRunJson(json({ ...base, ...block, kvHeads: 3, nHeads: 2 }))).toThrow(/kvHeads \(3\) does not divide nHeads \(2\)/);
    expect(() => parseRunJson(json({ ...base, ...block, maxSeqLen: 3 }))).toThrow(/maxSeqLen \(3\) is under seqLen \(4\)/);
    expect(() => parseRunJson(json({ ...base, ...block, residual: false }))).toThrow(/norm \(layernorm\) and ffn \(gelu\) need residual true/);
  });
});
