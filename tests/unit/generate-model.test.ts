// The Generate panel's logic (panels/generate/model.ts): the strategy as the core's options, the form's
// one-sentence checks, a character's alternatives, the strongest keys, the strip's schedule.
import { describe, expect, test } from 'vitest';
import {
  alternatives,
  nextStripStep,
  parseForm,
  pushLine,
  samplingOptions,
  strongestKeys,
  type GenerateForm,
} from '../../web/src/panels/generate/model';

const form = (over: Partial<GenerateForm> = {}): GenerateForm => ({ prompt: 'The ', chars: '200', strategy: 'top-k', temperature: '0.8', setting: '5', seed: '1', ...over });

describe('samplingOptions', () => {
  test('greedy is temperature 0; each cut-off keeps the temperature', () => {
    expect(samplingOptions('greedy', 0.8, 3)).toEqual({ temperature: 0 });
    expect(samplingOptions('temperature', 1.5, 3)).toEqual({ temperature: 1.5 });
    expect(samplingOptions('top-k', 0.8, 3)).toEqual({ temperature: 0.8, topK: 3 });
    expect(samplingOptions('top-p', 0.8, 0.9)).toEqual({ temperature: 0.8, topP: 0.9 });
    expect(samplingOptions('min-p', 0.8, 0.1)).toEqual({ temperature: 0.8, minP: 0.1 });
  });
});

describe('parseForm', () => {
  test('a good form becomes the request', () => {
    expect(parseForm(form())).toEqual({ spec: { prompt: 'The ', tokens: 200, options: { temperature: 0.8, topK: 5 }, seed: 1 } });
    expect(parseForm(form({ strategy: 'greedy', temperature: '' }))).toEqual({ spec: { prompt: 'The ', tokens: 200, options: { temperature: 0 }, seed: 1 } });
  });
  test('each bad value is one sentence', () => {
    expect(parseForm(form({ prompt: '' }))).toEqual({ problem: 'The prompt is empty: give at least one character to start from.' });
    expect(parseForm(form({ prompt: 'a'.repeat(1001) }))).toEqual({ problem: 'The prompt has 1001 characters; at most 1000 are taken.' });
    expect(parseForm(form({ chars: '2001' }))).toEqual({ problem: 'The number of characters must be a whole number from 1 to 2000 (got "2001").' });
    expect(parseForm(form({ chars: '1.5' }))).toMatchObject({ problem: expect.stringMatching(/^The number of characters/) });
    expect(parseForm(form({ seed: '-1' }))).toMatchObject({ problem: expect.stringMatching(/^The seed must be/) });
    expect(parseForm(form({ setting: '' }))).toEqual({ problem: 'The k of top-k must be a number (got "").' });
  });
  test('a prompt counts characters, not UTF-16 units', () => {
    expect(parseForm(form({ prompt: '😀'.repeat(1000) }))).toHaveProperty('spec');
  });
});

describe('alternatives', () => {
  const before = Float32Array.from([0.1, 0.3, 0.05, 0.3, 0.15, 0.02, 0.08]);
  const after = Float32Array.from([0, 0.5, 0, 0.5, 0, 0, 0]);
  test('the five likeliest before the strategy (ties: the lower id first), with both probabilities', () => {
    expect(alternatives(before, after, 3)).toEqual([
      { token: 1, before: before[1], after: 0.5, chosen: false },
      { token: 3, before: before[3], after: 0.5, chosen: true },
      { token: 4, before: before[4], after: 0, chosen: false },
      { token: 0, before: before[0], after: 0, chosen: false },
      { token: 6, before: before[6], after: 0, chosen: false },
    ]);
  });
  test('a chosen token outside the five is added last', () => {
    expect(alternatives(before, after, 5).map((a) => [a.token, a.chosen])).toEqual([[1, false], [3, false], [4, false], [0, false], [6, false], [5, true]]);
  });
  test('a vocabulary smaller than five lists every token', () => {
    expect(alternatives(Float32Array.from([0.4, 0.6]), Float32Array.from([0, 1]), 1).map((a) => a.token)).toEqual([1, 0]);
  });
});

test('strongestKeys: the three largest weights, the nearer key first on a tie', () => {
  expect(strongestKeys(Float32Array.from([0.1, 0.4, 0.1, 0.2, 0.2]))).toEqual([1, 4, 3]);
  expect(strongestKeys(Float32Array.from([1]))).toEqual([0]);
});

test('the strip samples at 0, 100, 200, 500, 1000 and every 1000, keeping the newest 8', () => {
  const steps: number[] = [];
  for (let s = -1; steps.length < 8; ) steps.push((s = nextStripStep(s)));
  expect(steps).toEqual([0, 100, 200, 500, 1000, 2000, 3000, 4000]);
  expect(nextStripStep(150)).toBe(200);
  expect(nextStripStep(2600)).toBe(3000);
  let lines: number[] = [];
  for (let i = 0; i < 10; ++i) lines = pushLine(lines, i);
  expect(lines).toEqual([2, 3, 4, 5, 6, 7, 8, 9]);
});
