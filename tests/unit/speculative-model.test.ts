// The Speculative decoding panel's logic (panels/speculative/model.ts): the form's checks, the
// histogram's bars from the core's counts and probabilities, and the sentences, which quote the
// core's figures and say what they mean.
import { describe, expect, test } from 'vitest';
import type { ExactnessPosition, SpeculativeStats } from '../../web/src/core/attention-core';
import { acceptanceSentences, exactnessSentence, FATES, histogramBars, parseForm, parseSamples, reportSentences, type SpeculativeForm } from '../../web/src/panels/speculative/model';
import type { SpeculativeReport } from '../../web/src/panels/speculative/request';

const form = (over: Partial<SpeculativeForm> = {}): SpeculativeForm => ({ prompt: 'The ', chars: '120', draftTokens: '4', temperature: '0.8', seed: '1', ...over });

describe('the form', () => {
  test('a good form is the request, the temperature as the core\'s option', () => {
    expect(parseForm(form())).toEqual({ spec: { prompt: 'The ', tokens: 120, draftTokens: 4, options: { temperature: 0.8 }, seed: 1 } });
    expect(parseForm(form({ temperature: '0' }))).toMatchObject({ spec: { options: { temperature: 0 } } });
  });
  test('each bad field: one sentence naming it and what it got', () => {
    expect(parseForm(form({ prompt: '' }))).toEqual({ problem: 'The prompt is empty: give at least one character to start from.' });
    expect(parseForm(form({ chars: '0' }))).toEqual({ problem: 'The number of characters must be a whole number from 1 to 1000 (got "0").' });
    expect(parseForm(form({ draftTokens: '9' }))).toEqual({ problem: 'N must be a whole number from 1 to 8 (got "9").' });
    expect(parseForm(form({ seed: '1.5' }))).toEqual({ problem: 'The seed must be a whole number from 0 to 4294967295 (got "1.5").' });
    expect(parseForm(form({ temperature: '-1' }))).toEqual({ problem: 'The temperature must be a number of 0 or more (got "-1").' });
    expect(parseForm(form({ temperature: '' }))).toHaveProperty('problem');
  });
  test('samples: whole, 100 to 20000', () => {
    expect(parseSamples('4000')).toBe(4000);
    for (const bad of ['99', '20001', '1e3.5', '', 'x']) expect(parseSamples(bad)).toBeNull();
  });
});

test('the fates: the core\'s 0, 1, 2 in order, each with a legend', () => {
  expect(FATES.map((f) => [f.fate, f.name])).toEqual([[0, 'accepted'], [1, 'resampled'], [2, 'bonus']]);
});

/** An exactness position over 5 tokens: counts against probabilities. */
const position = (over: Partial<ExactnessPosition> = {}): ExactnessPosition => ({
  counts: Int32Array.of(10, 50, 0, 30, 10),
  expected: Float64Array.of(0.1, 0.5, 0, 0.3, 0.1),
  statistic: 0.5,
  dof: 3,
  pValue: 0.92,
  samples: 100,
  impossible: 0,
  ...over,
});

describe('the histogram', () => {
  test('the likeliest tokens by the core\'s probability (ties: the lower id), the rest pooled', () => {
    // Order by expected: 1 (0.5), 3 (0.3), 0 (0.1), 4 (0.1), 2 (0); two bars, then 0 + 4 + 2 pooled.
    const bars = histogramBars(position(), 'abcde', 2);
    expect(bars).toEqual([
      { label: 'b', token: 1, observed: 50, expected: 50 },
      { label: 'd', token: 3, observed: 30, expected: 30 },
      { label: 'others', token: -1, observed: 20, expected: expect.closeTo(20, 10) },
    ]);
  });
  test('no pooled bar when every token has its own', () => {
    expect(histogramBars(position(), 'abcde', 5).map((b) => b.token)).toEqual([1, 3, 0, 4, 2]);
  });
  test('the sentence quotes χ², the degrees of freedom and the p-value, and says what they mean', () => {
    expect(exactnessSentence(position(), 'first')).toMatch(/^The first character after the prompt, 100 samples: χ² = 0\.50 with 3 degrees of freedom, p-value 0\.9200\. .*sampling noise/);
    expect(exactnessSentence(position({ pValue: 1e-7 }), 'second')).toMatch(/p-value 1e-7\. .*unlikely/);
    expect(exactnessSentence(position({ impossible: 2, pValue: 0 }), 'first')).toMatch(/2 samples fell on characters the target gives probability 0/);
    expect(exactnessSentence(position({ impossible: 1, pValue: 0 }), 'first')).toMatch(/ 1 sample fell on characters/);
  });
});

describe('the sentences under a generation', () => {
  const stats: SpeculativeStats = { tokens: 12, rounds: 5, targetPasses: 5, draftPasses: 20, proposed: 20, judged: 10, accepted: 7, draftTokens: 4, alpha: 0.7, meanOverlap: 0.68, tokensPerTargetPass: 2.4, tokensPerRound: 2.4, expectedTokensPerRound: 2.77 };
  const report = (over: Partial<SpeculativeReport> = {}): SpeculativeReport => ({
    step: 30,
    draft: { kind: 'bigram', nLayers: 0, dModel: 0, nHeads: 0, steps: 0, loss: NaN, targetStep: 30 },
    chars: Array.from('the cat sat '),
    fates: [0, 0, 1, 0, 0, 0, 2, 0, 1, 0, 0, 1],
    plainText: 'the cat sat ',
    stats,
    wallMs: 3.5,
    plainMs: 2.1,
    expectedFromOverlap: 2.7,
    ...over,
  });
  test('α against Σ min(p, q), passes against the formula, the clock and why it may not fall', () => {
    const s = reportSentences(report(), { draftTokens: 4, options: { temperature: 0.8 } });
    expect(s.alpha).toMatch(/judged 10 draft tokens and accepted 7: the measured acceptance α is 0\.700\. .*Σ min\(p, q\).* is 0\.680/);
    expect(s.passes).toMatch(/^12 characters took 5 verifications \(5 target passes\), 2\.40 characters per verification; \(1 − α\^\(N\+1\)\) \/ \(1 − α\) with N = 4 gives 2\.77 at the measured α and 2\.70 at the mean Σ min\(p, q\)\. Plain decoding needs one target pass per character: 12\./);
    expect(s.clock).toMatch(/^Wall clock: 3\.5 ms speculative against 2\.1 ms plain.*time may not fall/);
    expect(s.exact).toMatch(/exactly the same distribution/);
  });
  test('at temperature 0: identical to plain greedy, or a bug said as such', () => {
    expect(reportSentences(report(), { draftTokens: 4, options: { temperature: 0 } }).exact).toMatch(/identical to plain decoding, character for character/);
    expect(reportSentences(report({ plainText: 'the cat sat!' }), { draftTokens: 4, options: { temperature: 0 } }).exact).toMatch(/this is a bug/);
  });
});

describe('the sentences under the acceptance table', () => {
  const table = (bigram: number[], model: number[]) => ({
    step: 30,
    temperatures: [0.5, 1, 1.5],
    text: 'the cat',
    rows: [
      { draft: 'the bigram', kind: 'bigram' as const, dModel: 0, nLayers: 0, alpha: bigram },
      { draft: 'the draft model', kind: 'model' as const, dModel: 32, nLayers: 1, alpha: model },
      { draft: 'the target itself', kind: 'target' as const, dModel: 64, nLayers: 2, alpha: [1, 1, 1] },
    ],
  });
  test('what a cell is, and the draft the target accepts most at temperature 1, whichever it is', () => {
    const early = acceptanceSentences(table([0.7, 0.72, 0.73], [0.4, 0.41, 0.45]));
    expect(early[0]).toMatch(/^Each cell is the mean of Σ min\(p, q\) over the 7 characters of the validation text "the cat", at step 30/);
    expect(early[1]).toMatch(/^At temperature 1\.0 the target accepts the bigram most \(α 0\.720\)\./);
    expect(acceptanceSentences(table([0.7, 0.5, 0.73], [0.4, 0.61, 0.45]))[1]).toMatch(/accepts the draft model most \(α 0\.610\)/);
  });
  test('with the bigram alone, no comparison between drafts', () => {
    const t = table([0.7, 0.72, 0.73], []);
    t.rows.splice(1, 1);
    expect(acceptanceSentences(t)).toHaveLength(2);
  });
});
