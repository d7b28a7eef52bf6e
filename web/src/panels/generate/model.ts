// The Generate panel's logic (task text): the strategy as the core's sampling options,
// the form's checks, the alternatives listed for a character, the strongest keys of an attention
// row, and when the strip of samples over training takes its next sample. No DOM here; the panel
// (view.ts) draws. The probabilities themselves are the core's (nextTokenDistribution).
import type { SamplingOptions } from '../../core/attention-core';
import type { GenerateSpec } from './request';

/** The decoding strategies of the GPT lesson. */
export const STRATEGIES = ['greedy', 'temperature', 'top-k', 'top-p', 'min-p'] as const;
export type Strategy = (typeof STRATEGIES)[number];

/** The form's defaults and limits (the worker checks the prompt and the count again). */
export const DEFAULT_PROMPT = 'The ';
export const DEFAULT_CHARS = 200;
export const MAX_CHARS = 2000;
export const MAX_PROMPT = 1000;
/** Characters per request while streaming. */
export const CHUNK_CHARS = 12;
/** The cut-off setting's default per strategy. */
export const DEFAULT_SETTING: Record<Strategy, number> = { greedy: 0, temperature: 0, 'top-k': 5, 'top-p': 0.9, 'min-p': 0.1 };
/** How many alternatives a character lists. */
export const ALTERNATIVES = 5;
/** How many keys per head are highlighted as the strongest. */
export const STRONGEST_KEYS = 3;

/** The strip of samples over training: its prompt length, its cap and its strategy. */
export const STRIP_CHARS = 60;
export const STRIP_LINES = 8;
export const STRIP_OPTIONS: SamplingOptions = { temperature: 0.8 };

/** What the form holds, as typed. */
export interface GenerateForm {
  prompt: string;
  chars: string;
  strategy: Strategy;
  temperature: string;
  setting: string;
  seed: string;
}

/** The strategy as nextTokenDistribution's options: greedy is temperature 0; the cut-offs keep
 * the temperature (it acts first). */
export function samplingOptions(strategy: Strategy, temperature: number, setting: number): SamplingOptions {
  switch (strategy) {
    case 'greedy':
      return { temperature: 0 };
    case 'temperature':
      return { temperature };
    case 'top-k':
      return { temperature, topK: setting };
    case 'top-p':
      return { temperature, topP: setting };
    case 'min-p':
      return { temperature, minP: setting };
  }
}

/** The label of the cut-off's setting ('' for greedy and temperature, which have none). */
export function settingLabel(strategy: Strategy): string {
  return { greedy: '', temperature: '', 'top-k': 'k', 'top-p': 'p', 'min-p': 'min p' }[strategy];
}

/** The form as a request, or the one sentence saying what is wrong (nothing is sent then). The
 * prompt's characters are the core's to check (encodeText names one outside the vocabulary). */
export function parseForm(f: GenerateForm): { spec: GenerateSpec } | { problem: string } {
  if (f.prompt.length === 0) return { problem: 'The prompt is empty: give at least one character to start from.' };
  const n = [...f.prompt].length;
  if (n > MAX_PROMPT) return { problem: `The prompt has ${n} characters; at most ${MAX_PROMPT} are taken.` };
  const chars = Number(f.chars.trim());
  if (!Number.isInteger(chars) || chars < 1 || chars > MAX_CHARS) return { problem: `The number of characters must be a whole number from 1 to ${MAX_CHARS} (got "${f.chars}").` };
  const seed = Number(f.seed.trim());
  if (!Number.isInteger(seed) || seed < 0 || seed > 4294967295) return { problem: `The seed must be a whole number from 0 to 4294967295 (got "${f.seed}").` };
  const temperature = Number(f.temperature.trim());
  if (f.strategy !== 'greedy' && (f.temperature.trim() === '' || !Number.isFinite(temperature))) return { problem: `The temperature must be a number (got "${f.temperature}").` };
  const setting = Number(f.setting.trim());
  if (settingLabel(f.strategy) && (f.setting.trim() === '' || !Number.isFinite(setting))) return { problem: `The ${settingLabel(f.strategy)} of ${f.strategy} must be a number (got "${f.setting}").` };
  return { spec: { prompt: f.prompt, tokens: chars, options: samplingOptions(f.strategy, temperature, setting), seed } };
}

/** One row of a character's alternatives. */
export interface Alternative {
  token: number;
  before: number;
  after: number;
  chosen: boolean;
}

/** The k most likely tokens before the strategy (ties: the lower id first), with their
 * probabilities before and after it; the chosen token is added at the end when it is not among them. */
export function alternatives(before: Float32Array, after: Float32Array, chosen: number, k = ALTERNATIVES): Alternative[] {
  const order = Array.from(before.keys()).sort((a, b) => before[b] - before[a] || a - b);
  const top = order.slice(0, Math.min(k, before.length));
  if (!top.includes(chosen)) top.push(chosen);
  return top.map((token) => ({ token, before: before[token], after: after[token], chosen: token === chosen }));
}

/** The k largest weights of row, their indices (ties: the later key, the nearer one, first). */
export function strongestKeys(row: Float32Array, k = STRONGEST_KEYS): number[] {
  return Array.from(row.keys())
    .sort((a, b) => row[b] - row[a] || b - a)
    .slice(0, Math.min(k, row.length));
}

/** The steps at which the strip takes a sample: 0, 100, 200, 500, 1000, then every 1000. */
export function nextStripStep(after: number): number {
  for (const s of [0, 100, 200, 500, 1000]) if (s > after) return s;
  return (Math.floor(after / 1000) + 1) * 1000;
}

/** The strip's lines with one more, newest last, at most STRIP_LINES. */
export function pushLine<T>(lines: readonly T[], line: T, cap = STRIP_LINES): T[] {
  return [...lines, line].slice(-cap);
}
