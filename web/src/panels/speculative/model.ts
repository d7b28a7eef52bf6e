// The "Speculative decoding" panel's logic: the form's checks, the token fates' names, the bars of
// the exactness histogram and the sentences that say what the core's figures mean. No DOM here;
// the panel (view.ts) draws. Every figure is the core's (speculativeGenerate, expectedAcceptance,
// expectedTokensPerRound, speculativeExactness).
import type { ExactnessPosition, SpeculativeStats, TokenFate } from '../../core/attention-core';
import { count, ms, num, plural, sci } from '../../model/format';
import type { AcceptanceTable, DraftReport, SpeculativeReport, SpeculativeSpec } from './request';

/** The form's defaults and limits (the worker checks them again). */
export const DEFAULT_PROMPT = 'The ';
export const DEFAULT_CHARS = 120;
export const MAX_CHARS = 1000;
export const DEFAULT_N = 4;
export const MAX_N = 8;
export const DEFAULT_SAMPLES = 4000;
export const MIN_SAMPLES = 100;
export const MAX_SAMPLES = 20000;
/** The temperatures of the acceptance table. */
export const TEMPERATURES = [0.5, 0.8, 1, 1.5];
/** Bars of the histogram: the most likely tokens, the rest pooled into one. */
export const HISTOGRAM_BARS = 10;

/** Each fate's class, legend and meaning (the core's TokenFate: 0, 1, 2). */
export const FATES: readonly { fate: TokenFate; name: string; legend: string }[] = [
  { fate: 0, name: 'accepted', legend: 'a draft token the target accepted' },
  { fate: 1, name: 'resampled', legend: 'drawn from the residual norm(max(0, q − p)) where the target rejected a draft token' },
  { fate: 2, name: 'bonus', legend: 'the bonus token: all N draft tokens were accepted, so the target\'s own last distribution gave one more' },
];

/** What the form holds, as typed. */
export interface SpeculativeForm {
  prompt: string;
  chars: string;
  draftTokens: string;
  temperature: string;
  seed: string;
}

const whole = (raw: string, lo: number, hi: number): number | null => {
  const v = Number(raw.trim());
  return raw.trim() !== '' && Number.isInteger(v) && v >= lo && v <= hi ? v : null;
};

/** The form as a request, or the one sentence saying what is wrong (nothing is sent then). */
export function parseForm(f: SpeculativeForm): { spec: SpeculativeSpec } | { problem: string } {
  if (f.prompt.length === 0) return { problem: 'The prompt is empty: give at least one character to start from.' };
  const chars = whole(f.chars, 1, MAX_CHARS);
  if (chars === null) return { problem: `The number of characters must be a whole number from 1 to ${MAX_CHARS} (got "${f.chars}").` };
  const n = whole(f.draftTokens, 1, MAX_N);
  if (n === null) return { problem: `N must be a whole number from 1 to ${MAX_N} (got "${f.draftTokens}").` };
  const seed = whole(f.seed, 0, 4294967295);
  if (seed === null) return { problem: `The seed must be a whole number from 0 to 4294967295 (got "${f.seed}").` };
  const temperature = Number(f.temperature.trim());
  if (f.temperature.trim() === '' || !Number.isFinite(temperature) || temperature < 0) return { problem: `The temperature must be a number of 0 or more (got "${f.temperature}").` };
  return { spec: { prompt: f.prompt, tokens: chars, draftTokens: n, options: { temperature }, seed } };
}

/** The number of samples of the exactness check, or null when out of range. */
export function parseSamples(raw: string): number | null {
  return whole(raw, MIN_SAMPLES, MAX_SAMPLES);
}

/** The draft in words. */
export function draftText(d: DraftReport): string {
  if (d.kind === 'bigram') return 'The bigram of the training text: for each character, how often each other one followed it. No training, no context beyond one character.';
  return `A draft model of ${plural(d.nLayers, 'layer')}, d_model ${d.dModel}, ${plural(d.nHeads, 'head')}, trained ${plural(d.steps, 'step')} on the same text (last loss ${num(d.loss, 2)}), made when the target was at step ${count(d.targetStep)}.`;
}

/** The sentences under a generation: what alpha, the passes and the clock say. */
export function reportSentences(r: SpeculativeReport, spec: Pick<SpeculativeSpec, 'draftTokens' | 'options'>): { alpha: string; passes: string; clock: string; exact: string } {
  const s: SpeculativeStats = r.stats;
  const N = spec.draftTokens;
  const greedy = spec.options.temperature === 0;
  const alpha =
    s.judged > 0
      ? `The target judged ${plural(s.judged, 'draft token')} and accepted ${count(s.accepted)}: the measured acceptance α is ${num(s.alpha, 3)}. ` +
        `The mean of Σ min(p, q) over the same positions, the acceptance rate the rule gives on average when p is the draft's distribution and q the target's, is ${num(s.meanOverlap, 3)}` +
        (greedy ? ' (at temperature 0 both are one-hot, so it is 1 where the two agree on the top token and 0 where they do not).' : ': the measured rate scatters around it.')
      : 'The target judged no draft token yet, so there is no acceptance rate to measure.';
  const passes =
    `${plural(s.tokens, 'character')} took ${plural(s.rounds, 'verification')} (${plural(s.targetPasses, 'target pass', 'target passes')}), ${num(s.tokensPerRound, 2)} characters per verification; ` +
    `(1 − α^(N+1)) / (1 − α) with N = ${N} gives ${num(s.expectedTokensPerRound, 2)} at the measured α and ${num(r.expectedFromOverlap, 2)} at the mean Σ min(p, q). ` +
    `Plain decoding needs one target pass per character: ${count(s.tokens)}. That is ${num(s.tokensPerTargetPass, 2)} characters per target pass here.`;
  const clock =
    `Wall clock: ${ms(r.wallMs)} ms speculative against ${ms(r.plainMs)} ms plain, for the same ${plural(s.tokens, 'character')}. ` +
    'The gain is in target passes. On one CPU thread with a toy model the target is hardly slower than the draft, and checking N + 1 positions costs about N + 1 times one, so the time may not fall: speculative decoding pays when the target is large and a pass over several positions costs about as much as over one, as on a GPU.';
  const exact = greedy
    ? r.chars.join('') === r.plainText
      ? 'At temperature 0 both sides are greedy, so the text is exactly the target\'s own greedy text: identical to plain decoding, character for character, whatever the draft.'
      : 'At temperature 0 the text should be the target\'s own greedy text, but it differs from plain decoding: this is a bug.'
    : 'Above temperature 0 the text is a draw: a different one from plain decoding\'s, but from exactly the same distribution (the exactness check below tests that).';
  return { alpha, passes, clock, exact };
}

/** The sentences under the acceptance table: what a cell is, which draft the target accepts most
 * at temperature 1 (or the nearest temperature measured), and why that is not a matter of size alone. */
export function acceptanceSentences(t: AcceptanceTable): string[] {
  const col = t.temperatures.reduce((best, T, i) => (Math.abs(T - 1) < Math.abs(t.temperatures[best] - 1) ? i : best), 0);
  const drafts = t.rows.filter((r) => r.kind !== 'target');
  const best = drafts.reduce((a, b) => (b.alpha[col] > a.alpha[col] ? b : a), drafts[0]);
  const sentences = [
    `Each cell is the mean of Σ min(p, q) over the ${count([...t.text].length)} characters of the validation text "${t.text}", at step ${count(t.step)}: the acceptance rate α to expect for that draft at that temperature, computed from the two distributions without sampling. The target itself would always be accepted (α = 1) but saves nothing.`,
  ];
  if (drafts.length > 1 && best)
    sentences.push(
      `At temperature ${num(t.temperatures[col], 1)} the target accepts ${best.draft} most (α ${num(best.alpha[col], 3)}). What counts is how close the draft's guesses are to the target's, not how good the draft is on its own: early in training the target still writes much like character counts, so the bigram matches it best; as the target learns words, a trained draft overtakes the bigram.`,
    );
  sentences.push('Temperature reshapes both distributions alike: a higher one flattens them, which usually brings p and q closer; a lower one sharpens them, so two models that disagree on the top character disagree more.');
  return sentences;
}

/** One bar of the histogram: observed and expected counts of a token (or of the rest). */
export interface Bar {
  label: string;
  token: number;
  observed: number;
  expected: number;
}

/** The HISTOGRAM_BARS tokens of highest expected probability (ties: lower id) and one bar for the
 * rest (token -1); expected counts are the core's probabilities times the samples. */
export function histogramBars(p: ExactnessPosition, vocab: string, bars = HISTOGRAM_BARS): Bar[] {
  const order = Array.from(p.expected.keys()).sort((a, b) => p.expected[b] - p.expected[a] || a - b);
  const top = order.slice(0, bars);
  const out: Bar[] = top.map((t) => ({ label: vocab[t] ?? '?', token: t, observed: p.counts[t], expected: p.expected[t] * p.samples }));
  const rest = order.slice(bars);
  if (rest.length) out.push({ label: 'others', token: -1, observed: rest.reduce((a, t) => a + p.counts[t], 0), expected: rest.reduce((a, t) => a + p.expected[t], 0) * p.samples });
  return out;
}

/** The sentence under one position's histogram. */
export function exactnessSentence(p: ExactnessPosition, which: 'first' | 'second'): string {
  const verdict =
    p.impossible > 0
      ? `${plural(p.impossible, 'sample')} fell on characters the target gives probability 0: the output does not follow the target.`
      : p.pValue >= 0.001
        ? 'A p-value this size is what sampling noise gives: the speculative output follows the target\'s distribution.'
        : 'A p-value this small says the counts are unlikely under the target\'s distribution; a correct sampler gives one below 0.001 once in a thousand checks.';
  return (
    `The ${which} character after the prompt, ${count(p.samples)} samples: χ² = ${num(p.statistic, 2)} with ${count(p.dof)} degrees of freedom, p-value ${p.pValue < 1e-4 ? sci(p.pValue) : num(p.pValue, 4)}. ` +
    verdict
  );
}
