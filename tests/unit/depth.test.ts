// Depth and induction heads on the web side, under node, with small synthetic data whose answers are worked out by
// hand: heads across layers (model/layers.ts), the preset link and its attributes (settings/presets.ts), the
// composition figure's helpers, the ablation's induction sentence, the phase-change sentence, and
// the exports and the run JSON of a deeper model.
import { describe, expect, test } from 'vitest';
import { stateFromAttributes } from '../../web/src/element/attributes';
import { argmaxHead, averageLabel, globalHead, headFileName, headLabel, kvGroupLabel, layerWeights, splitHead } from '../../web/src/model/layers';
import { INDUCTION_PRESET, presetAttributes, presetHash, presetState } from '../../web/src/settings/presets';
import type { HeadScores } from '../../web/src/core/attention-core';
import type { Snapshot } from '../../web/src/model/protocol';
import type { AblationReport } from '../../web/src/panels/ablation/request';
import { DEFAULTS } from '../../web/src/settings/settings';
import { stateFromHash } from '../../web/src/settings/state';
import { explainAblation, explainInduction, inductionHead } from '../../web/src/panels/ablation/model';
import { compositionMatrix, explainScores, strongestPair } from '../../web/src/panels/circuits/model';
import { phaseChangeText } from '../../web/src/ui/depth-view';
import { attentionCsv, EXPORT_FORMAT, exportFigures, parseRunJson } from '../../web/src/panels/export/model';

describe('heads across layers', () => {
  test('global head g = l * H + h, both ways', () => {
    expect(splitHead(5, 2)).toEqual({ layer: 2, head: 1 });
    expect(globalHead(2, 1, 2)).toBe(5);
    for (let g = 0; g < 12; ++g) {
      const { layer, head } = splitHead(g, 3);
      expect(globalHead(layer, head, 3)).toBe(g);
    }
  });

  test('labels: "layer l · head h" with layers, "Head h" with one (as the page always said)', () => {
    expect(headLabel(3, 2, 2)).toBe('layer 2 · head 2');
    expect(headLabel(0, 2, 2)).toBe('layer 1 · head 1');
    expect(headLabel(3, 4, 1)).toBe('Head 4');
    expect(headFileName(2, 2, 2)).toBe('layer-2-head-1');
    expect(headFileName(2, 4, 1)).toBe('head-3');
    expect(averageLabel(1, 2)).toBe("Average of layer 2's heads");
    expect(averageLabel(0, 1)).toBe('Average of heads');
  });

  test('grouped-query attention: head h shares K/V head floor(h / (H / kvHeads)), in every layer', () => {
    // H 4, 2 K/V heads: heads 1-2 share K/V 1, heads 3-4 share K/V 2; layer 2 (g 4..7) the same.
    expect([0, 1, 2, 3, 4, 7].map((g) => kvGroupLabel(g, 4, 2))).toEqual([
      'K/V 1, shared by heads 1–2',
      'K/V 1, shared by heads 1–2',
      'K/V 2, shared by heads 3–4',
      'K/V 2, shared by heads 3–4',
      'K/V 1, shared by heads 1–2',
      'K/V 2, shared by heads 3–4',
    ]);
    expect(kvGroupLabel(2, 4, 1)).toBe('K/V shared by all 4 heads');
    // Without grouping (kvHeads H, or 0 for "= H") there is nothing to say.
    expect(kvGroupLabel(1, 4, 4)).toBe('');
    expect(kvGroupLabel(1, 4, 0)).toBe('');
  });

  test("a layer's block of (L,H,T,T) weights, and shapes that do not fit are refused", () => {
    // L 2, H 2, T 1: one weight per head, 10 * global index.
    const w = Float32Array.from([0, 10, 20, 30]);
    expect(Array.from(layerWeights(w, 2, 2, 1, 1))).toEqual([20, 30]);
    expect(() => layerWeights(w, 2, 2, 2, 0)).toThrow(/4 values for L=2, H=2, T=2/);
    expect(() => layerWeights(w, 2, 2, 1, 2)).toThrow(/layer 2 is not in \[0, 2\)/);
  });

  test('the best head, from a layer on; NaN never wins', () => {
    const s = Float32Array.from([0.9, 0.1, NaN, 0.4]);
    expect(argmaxHead(s, 2)).toBe(0);
    expect(argmaxHead(s, 2, 1)).toBe(3);
    expect(argmaxHead(Float32Array.from([NaN, NaN]), 2)).toBe(-1);
  });
});

describe('the preset "watch an induction head form"', () => {
  test('its link opens exactly its settings, with nothing to correct, the rest the defaults', () => {
    expect(presetHash(INDUCTION_PRESET)).toBe(
      'view=train&vocab-size=32&d-model=32&heads=2&seq-len=32&batch=32&lr=0.005&seed=0&task=induction&layers=2&residual=1&emb-init-std=0.5' +
        '&sample=3+17+5+12+20+8+29+16+22+1+26+10+14+5+12+20+8+29+16+31+9',
    );
    const { state, corrections } = stateFromHash(`#${presetHash(INDUCTION_PRESET)}`);
    expect(corrections).toEqual([]);
    expect(state).toEqual({ ...DEFAULTS, ...INDUCTION_PRESET.settings });
    expect(presetState(INDUCTION_PRESET)).toEqual(state);
  });

  test('its attributes give the element the same state', () => {
    const attrs = presetAttributes(INDUCTION_PRESET);
    expect(attrs).toMatchObject({ layers: '2', residual: '1', task: 'induction', heads: '2', 'vocab-size': '32', 'emb-init-std': '0.5' });
    const { state, problems } = stateFromAttributes(DEFAULTS, (name) => attrs[name] ?? null);
    expect(problems).toEqual([]);
    expect(state).toEqual(presetState(INDUCTION_PRESET));
    // residual as an HTML boolean attribute (present, no value) is on.
    expect(stateFromAttributes(DEFAULTS, (name) => (name === 'residual' ? '' : null)).state.residual).toBe(true);
  });

  test('the sample holds a run of distinct tokens twice, within vocab and seq_len', () => {
    const ids = INDUCTION_PRESET.settings.sample!.split(' ').map(Number);
    expect(ids.length).toBeLessThanOrEqual(INDUCTION_PRESET.settings.seqLen!);
    expect(Math.max(...ids)).toBeLessThan(INDUCTION_PRESET.settings.vocabSize!);
    const run = [5, 12, 20, 8, 29, 16];
    expect(new Set(run).size).toBe(run.length);
    expect(ids.slice(2, 8)).toEqual(run);
    expect(ids.slice(13, 19)).toEqual(run);
  });
});

/** Scores of 2 layers of 2 heads: layer 1 head 2 looks back, layer 2 head 1 matches prefixes, and
 * the pair (1·2 → 2·1) composes most. */
const SCORES: HeadScores = {
  previousToken: Float32Array.from([0.1, 0.92, 0.05, 0.2]),
  prefixMatching: Float32Array.from([0.3, 0.02, 0.81, 0.1]),
  // (l*H + h1)*H + h2: 1·1→2·1, 1·1→2·2, 1·2→2·1, 1·2→2·2.
  composition: Float32Array.from([0.12, 0.1, 0.45, 0.15]),
  compositionBaseline: 0.15,
  nLayers: 2,
  nHeads: 2,
};

describe('the composition figure', () => {
  test('the (H,H) matrix of a layer pair, writers down, readers across', () => {
    expect(compositionMatrix(SCORES, 0)).toEqual({ data: Float32Array.from([0.12, 0.1, 0.45, 0.15]), rows: 2, cols: 2 });
    expect(() => compositionMatrix(SCORES, 1)).toThrow(/no next layer/);
    expect(() => compositionMatrix({ ...SCORES, composition: new Float32Array(3) }, 0)).toThrow(/3 values/);
  });

  test('the strongest pair, in global indices, and the sentences naming the heads', () => {
    const p = strongestPair(SCORES, 0);
    expect(p.from).toBe(1);
    expect(p.to).toBe(2);
    expect(p.score).toBeCloseTo(0.45, 6);
    expect(explainScores(SCORES)).toEqual([
      'Most previous-token-like: layer 1 · head 2 (score 0.920: the mean weight its queries put one position back).',
      'Most prefix-matching in a later layer: layer 2 · head 1 (score 0.810: at a repeated token, the mean weight on the token after its first occurrence).',
      // 0.45 / 0.15 = 3.0
      'Strongest composition from layer 1 to layer 2: layer 1 · head 2 → layer 2 · head 1, 0.450, 3.0× the random baseline 0.150.',
    ]);
  });

  test('one layer: nothing to compose, said; unscorable: said', () => {
    const one: HeadScores = { ...SCORES, nLayers: 1, previousToken: Float32Array.from([0.9, 0.1]), prefixMatching: Float32Array.from([0.2, 0.4]), composition: new Float32Array(0) };
    const text = explainScores(one);
    expect(text[1]).toBe('Most prefix-matching: Head 2 (score 0.400: at a repeated token, the mean weight on the token after its first occurrence).');
    expect(text[2]).toMatch(/^With one layer there is nothing to compose/);
    const none: HeadScores = { ...one, previousToken: Float32Array.from([NaN, NaN]), prefixMatching: Float32Array.from([NaN, NaN]), compositionBaseline: NaN };
    expect(explainScores(none)).toEqual(['This model cannot be scored: its sequences are too short to hold a run of tokens twice. Raise seq_len.']);
  });
});

describe('the ablation of the previous-token head', () => {
  /** The previous-token head (global 1) off: the induction head's score and the accuracy fall. */
  const report: AblationReport = {
    ablation: { headsOff: [false, true, false, false], headsFrozen: [false, false, false, false], scaleScores: true, mask: 'causal' },
    intact: { loss: 0.3, accuracy: 0.93 },
    ablated: { loss: 3.1, accuracy: 0.08 },
    intactStats: { entropy: new Float32Array(4), maxWeight: new Float32Array(4), answerMass: new Float32Array(4) },
    ablatedStats: { entropy: new Float32Array(4), maxWeight: new Float32Array(4), answerMass: new Float32Array(4) },
    intactScores: SCORES,
    ablatedScores: { ...SCORES, prefixMatching: Float32Array.from([0.3, 0.02, 0.04, 0.1]) },
    step: 900,
    task: 'induction',
  };

  test('the induction head is the most prefix-matching head after layer 1', () => {
    expect(inductionHead(report)).toBe(2);
  });

  test('the sentences give the numbers before and after, and name the heads by layer', () => {
    expect(explainInduction(report)).toBe(
      "Induction: layer 2 · head 1's prefix-matching score goes from 0.810 to 0.040, the accuracy from 93.0% to 8.0%. " +
        'Layer 1 · head 2 is the most previous-token-like head (score 0.920); without it no key knows its previous token. ' +
        'The circuit is broken: the induction head no longer finds the token after the earlier occurrence, and the copy fails.',
    );
    const text = explainAblation(report, 32);
    expect(text[0]).toMatch(/^Layer 1 · head 2 is switched off: its output is zero/);
    expect(text[0]).toMatch(/loss goes from 0\.300 to 3\.100/);
    expect(text[1]).toBe(explainInduction(report));
  });

  test('one layer keeps the old wording', () => {
    const one = { ...report, ablation: { ...report.ablation, headsOff: [true, false, true, false] }, intactScores: { ...SCORES, nLayers: 1, nHeads: 4 }, ablatedScores: { ...SCORES, nLayers: 1, nHeads: 4 }, task: 'copy' as const };
    expect(explainAblation(one, 32)[0]).toMatch(/^Heads 1, 3 are switched off/);
  });
});

describe('the phase change under the loss chart', () => {
  test('found: its step; not yet, on induction: what to expect; one layer: why it will not come', () => {
    expect(phaseChangeText({ phaseChange: 540, step: 900, L: 2 }, 'induction')).toMatch(/^Phase change at step 540 \(the dashed line\)/);
    expect(phaseChangeText({ phaseChange: -1, step: 200, L: 2 }, 'induction')).toMatch(/^No phase change yet \(step 200\)/);
    expect(phaseChangeText({ phaseChange: -1, step: 200, L: 1 }, 'induction')).toMatch(/^One layer cannot solve this task/);
    expect(phaseChangeText({ phaseChange: -1, step: 200, L: 1 }, 'copy')).toBe('');
  });
});

describe('exports of a deeper model', () => {
  // L 2, H 2, T 2: head g's weights are [[1, 0], [g/10, 1 - g/10]].
  const weights = Float32Array.from([0, 1, 2, 3].flatMap((g) => [1, 0, g / 10, 1 - g / 10]));
  const snap = { L: 2, H: 2, T: 2, ids: Int32Array.from([7, 9]), weights, mask: 'causal' } as unknown as Snapshot;

  test('pictures: per layer each head, then its average', () => {
    const figs = exportFigures(snap);
    expect(figs.map((f) => f.name)).toEqual(['layer-1-head-1', 'layer-1-head-2', 'layer-1-average', 'layer-2-head-1', 'layer-2-head-2', 'layer-2-average']);
    expect(figs[4].title).toBe('layer 2 · head 2');
    expect(Array.from(figs[4].values)).toEqual(Array.from(Float32Array.from([1, 0, 0.3, 0.7])));
    // Layer 2's average: heads 2 and 3, (0.2 + 0.3) / 2 = 0.25 on cell (1, 0).
    expect(figs[5].values[2]).toBeCloseTo(0.25, 6);
    expect(exportFigures({ ...snap, L: 1, H: 4 } as Snapshot).map((f) => f.name)).toEqual(['head-1', 'head-2', 'head-3', 'head-4', 'average']);
  });

  test('CSV: one row per (global head, query, key)', () => {
    const lines = attentionCsv(snap).trim().split('\n');
    expect(lines).toHaveLength(1 + 4 * 4);
    expect(lines[1 + 3 * 4 + 2]).toBe(`3,1,0,9,7,${Math.fround(0.3)}`);
  });

  test('the run JSON: layers and residual read and checked; a file from before them is the one-layer model', () => {
    const base = { vocabSize: 16, dModel: 8, nHeads: 2, seqLen: 4, batchSize: 2, lr: 0.005, seed: 1, attnDropout: 0, outDropout: 0, task: 'induction' };
    const json = (config: object, ablation?: object) => JSON.stringify({ format: EXPORT_FORMAT, config, step: 0, historyStride: 1, lossHistory: [], sample: [1, 2], ablation });
    const flags = (n: number) => new Array<boolean>(n).fill(false);
    const deep = parseRunJson(json({ ...base, nLayers: 2, residual: true }, { headsOff: [false, true, false, false], headsFrozen: flags(4), scaleScores: true, mask: 'causal' }));
    expect(deep.config).toMatchObject({ nLayers: 2, residual: true });
    expect(deep.ablation.headsOff).toEqual([false, true, false, false]);
    expect(parseRunJson(json(base)).config).toMatchObject({ nLayers: 1, residual: false });
    expect(() => parseRunJson(json({ ...base, nLayers: 2, residual: 'yes' }))).toThrow(/residual is "yes", not true or false/);
    expect(() => parseRunJson(json({ ...base, nLayers: 5, residual: false }))).toThrow(/layers: 5 is above the maximum 4/);
    expect(() => parseRunJson(json({ ...base, nLayers: 2, residual: true }, { headsOff: flags(2), headsFrozen: flags(2), scaleScores: true, mask: 'causal' }))).toThrow(
      /not a list of 4 true\/false values \(one per head of every layer\)/,
    );
  });
});
