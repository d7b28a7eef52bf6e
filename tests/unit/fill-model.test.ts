// The pure logic of the "Fill in the blanks" and Receptive field panels: the default blanks (a
// first letter and a letter inside a word), toggling a blank, the probability the guesses give the
// hidden character, the bound L·(W − 1) and the counting of a measured field against it; and the
// sentence beside the attention pattern.
import { describe, expect, test } from 'vitest';
import { defaultBlanks, toggleBlank, truthProb } from '../../web/src/panels/fill/model';
import { reach, reachBound } from '../../web/src/panels/receptive/model';
import type { ReceptiveReport } from '../../web/src/panels/receptive/request';
import { visibleInEffect } from '../../web/src/model/heads';
import { patternSentence } from '../../web/src/ui/heatmap-grid';

describe('fill', () => {
  test('the default blanks: the first letter of the second word and a letter inside a later word', () => {
    // "the quiet sea": q (4) starts a word; e (7) is the first letter past q + 2 with letters on
    // both sides.
    expect(defaultBlanks('the quiet sea')).toEqual([4, 7]);
    expect(defaultBlanks('ab')).toEqual([1]);
    expect(defaultBlanks('a')).toEqual([]);
    expect(defaultBlanks('  ')).toEqual([1]);
  });

  test('a click adds a blank in order, a second click removes it', () => {
    expect(toggleBlank([2, 9], 5)).toEqual([2, 5, 9]);
    expect(toggleBlank([2, 5, 9], 5)).toEqual([2, 9]);
  });

  test('the probability of the hidden character: its guess, or 0 when it is not among them', () => {
    const top = [{ char: 'a', prob: 0.5 }, { char: 'b', prob: 0.25 }];
    expect(truthProb(top, 'b')).toBe(0.25);
    expect(truthProb(top, 'z')).toBe(0);
  });
});

describe('receptive field', () => {
  const report = (field: number[], over: Partial<ReceptiveReport> = {}): ReceptiveReport => ({ step: 0, T: Math.sqrt(field.length), nLayers: 2, objective: 'causal', attention: 'window', window: 2, stride: 4, field: Float32Array.from(field), ...over });

  test('the bound is L (W - 1) for a window, none for full attention and the strided pattern', () => {
    expect(reachBound({ attention: 'window', nLayers: 3, window: 3 })).toBe(6);
    expect(reachBound({ attention: 'full', nLayers: 3, window: 3 })).toBeNull();
    expect(reachBound({ attention: 'strided', nLayers: 3, window: 3 })).toBeNull();
  });

  test('the farthest nonzero attribution, and the cells beyond the bound split into zeros and not', () => {
    // T 4, 2 layers of window 2: bound 2. Row 3 reaches 2 back (cell (3,1)); (3,0) is 3 back.
    const f = [1, 0, 0, 0, 1, 1, 0, 0, 1, 1, 1, 0, 0, 1, 1, 1];
    expect(reach(report(f))).toEqual({ farthest: 2, beyondZero: 2, beyondNonzero: 0 });
    // A leak past the bound is counted as such.
    f[12] = 0.5;
    expect(reach(report(f))).toEqual({ farthest: 3, beyondZero: 1, beyondNonzero: 1 });
    // Without a bound nothing is beyond it.
    expect(reach(report(f, { attention: 'full' }))).toEqual({ farthest: 3, beyondZero: 0, beyondNonzero: 0 });
  });
});

describe('the attention pattern', () => {
  const c = { objective: 'causal', attention: 'full', window: 4, stride: 4, nLayers: 1 } as const;
  test('says what a query sees and, for a window, the reach and the KV cache', () => {
    expect(patternSentence(c, 8, 36)).toBe('36 of 64 pairs visible: each query sees itself and every earlier key, never a later one.');
    expect(patternSentence({ ...c, objective: 'mlm' }, 8, 64)).toMatch(/every query sees every key, left and right/);
    const w = patternSentence({ ...c, attention: 'window', window: 3, nLayers: 3 }, 8, 21);
    expect(w).toMatch(/3 layers reach L·\(W − 1\) = 6/);
    expect(w).toMatch(/keeps only 3 keys per layer in its KV cache/);
    expect(patternSentence({ ...c, attention: 'strided', window: 2, stride: 3 }, 8, 24)).toMatch(/plus every position that is a multiple of 3/);
  });

  test("draws the mask in effect: the Ablation panel's broken masks included, with their count", () => {
    const causal = Uint8Array.from({ length: 9 }, (_, k) => (k % 3 <= Math.floor(k / 3) ? 1 : 0));
    expect(visibleInEffect('causal', causal, 3)).toBe(causal);
    expect([...visibleInEffect('none', causal, 3)]).toEqual([1, 1, 1, 1, 1, 1, 1, 1, 1]);
    expect([...visibleInEffect('inverted', causal, 3)]).toEqual([1, 1, 1, 0, 1, 1, 0, 0, 1]);
    expect(patternSentence(c, 8, 64, 'none')).toMatch(/^64 of 64 pairs visible: the mask is off .*the later ones too/);
    expect(patternSentence(c, 8, 36, 'inverted')).toMatch(/^36 of 64 pairs visible: the inverted mask .*every later key/);
    expect(patternSentence(c, 8, 36, 'none')).not.toMatch(/never a later one/);
  });
});
