// The State as a whole: the rules across settings (d_model even, heads dividing it, K/V heads
// dividing heads, max_seq_len at least seq_len, a norm or an FFN only with the residual stream, the
// sample and head lists within vocab, seq_len and heads), the URL hash round trip, and what the core gets from
// a State (its config, the sample's ids, the ablation). Every name and bound comes from the key
// table (settings.ts). Values read from a URL are validated and clamped, so a hostile link can
// neither break the page nor freeze the tab.
import { CONFIG_SCHEMA } from '../core/config-schema';
import type { Ablation, SampleSpec } from '../model/protocol';
import {
  ABLATION_KEYS,
  CONFIG_KEYS,
  checkField,
  DEFAULTS,
  LIMITS,
  parseHeads,
  parseSample,
  quote,
  SETTING_LIST,
  SETTINGS,
  type Correction,
  type Setting,
  type State,
} from './settings';

/** A state plus what was corrected to make it valid. */
export interface Checked {
  state: State;
  corrections: Correction[];
}

/** Every head of the state's model: L * H (the head lists number them 1..L*H, layer-major). */
export function totalHeads(s: Pick<State, 'nLayers' | 'nHeads'>): number {
  return s.nLayers * s.nHeads;
}

/** Largest divisor of d that is <= h (at least 1). */
export function largestDivisorAtMost(d: number, h: number): number {
  for (let k = Math.min(h, d); k >= 1; --k) if (d % k === 0) return k;
  return 1;
}

/**
 * Makes a state consistent across fields, as a URL must be before it reaches the core:
 * d_model even, heads divide d_model, K/V heads (unless 0) divide heads, max_seq_len (unless 0) at
 * least seq_len, the residual stream on under a norm or an FFN, the head lists within the heads of
 * every layer, the sample made of ids < vocab and at most seq_len long.
 */
export function fixConsistency(state: State, corrections: Correction[]): void {
  if (state.dModel % 2 !== 0) {
    const d = state.dModel + 1 <= LIMITS.dModel[1] ? state.dModel + 1 : state.dModel - 1;
    corrections.push({ key: 'dModel', message: `${SETTINGS.dModel.label}: ${state.dModel} must be even (sinusoidal positions); using ${d}` });
    state.dModel = d;
  }
  if (state.dModel % state.nHeads !== 0) {
    const h = largestDivisorAtMost(state.dModel, state.nHeads);
    corrections.push({ key: 'nHeads', message: `${SETTINGS.nHeads.label}: ${state.nHeads} does not divide ${SETTINGS.dModel.label} ${state.dModel}; using ${h}` });
    state.nHeads = h;
  }
  if (state.kvHeads !== 0 && state.nHeads % state.kvHeads !== 0) {
    const kv = largestDivisorAtMost(state.nHeads, state.kvHeads);
    corrections.push({ key: 'kvHeads', message: `${SETTINGS.kvHeads.label}: ${state.kvHeads} does not divide ${SETTINGS.nHeads.label} ${state.nHeads}; using ${kv}` });
    state.kvHeads = kv;
  }
  if (state.maxSeqLen !== 0 && state.maxSeqLen < state.seqLen) {
    corrections.push({ key: 'maxSeqLen', message: `${SETTINGS.maxSeqLen.label}: ${state.maxSeqLen} is under ${SETTINGS.seqLen.label} ${state.seqLen}; using ${state.seqLen}` });
    state.maxSeqLen = state.seqLen;
  }
  // The core refuses a norm or an FFN without the residual stream; a link that asks for one most
  // likely wants the block, so the stream is turned on rather than the layer dropped.
  if (!state.residual && (state.norm !== 'none' || state.ffn !== 'none')) {
    const needs = [state.norm !== 'none' ? `norm ${state.norm}` : '', state.ffn !== 'none' ? `FFN ${state.ffn}` : ''].filter((x) => x !== '').join(' and ');
    corrections.push({ key: 'residual', message: `${SETTINGS.residual.label}: ${needs} need${needs.includes(' and ') ? '' : 's'} it; turning it on` });
    state.residual = true;
  }
  const total = totalHeads(state);
  for (const key of ['headsOff', 'headsFrozen'] as const) {
    const { heads, problems } = parseHeads(state[key], total);
    if (problems.length > 0) {
      const where = state.nLayers > 1 ? `${state.nLayers} layers × ${state.nHeads} heads` : `heads ${state.nHeads}`;
      corrections.push({ key, message: `${SETTINGS[key].label}: ${problems.join('; ')} (${where})` });
      state[key] = heads.join(',');
    }
  }
  const { ids, problems } = parseSample(state.sample, state.vocabSize, state.seqLen);
  if (problems.length > 0 && !generatedSample(state)) {
    corrections.push({ key: 'sample', message: `${SETTINGS.sample.label}: ${problems.join('; ')}` });
    state.sample = ids.join(' ');
  }
}

/** The raw values of a URL's parameters, by key (a setting's hash key, or its snake_case spelling,
 * `d_model` for `d-model`, as the labels read; the kebab-case one wins when both are given); also
 * the names that are no setting's. */
export function paramsByKey(params: URLSearchParams, table: readonly Setting[] = SETTING_LIST): { raw: Partial<Record<keyof State, string>>; unknown: string[] } {
  const raw: Partial<Record<keyof State, string>> = {};
  const known = new Set<string>();
  for (const s of table) {
    const snake = s.hash.replace(/-/g, '_');
    known.add(s.hash).add(snake);
    const v = params.get(s.hash) ?? params.get(snake);
    if (v !== null) raw[s.key] = v;
  }
  const unknown = [...new Set([...params.keys()].filter((k) => !known.has(k)))];
  return { raw, unknown };
}

/** A name as compared for a near miss: lower case, without -, _, / and spaces (d_Model is dmodel). */
const bare = (name: string): string => name.toLowerCase().replace(/[-_/\s]/g, '');

/** The edit distance of a and b (insertions, deletions and substitutions), or more than max. */
function distance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; ++i) {
    const row = [i];
    for (let j = 1; j <= b.length; ++j) row[j] = Math.min(prev[j] + 1, row[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = row;
  }
  return prev[b.length];
}

/** The hash key an unknown name most likely meant, or null: a setting whose hash key, JS name
 * (dModel), core name (d_model) or label (vocab) it spells in another case or with other
 * separators, else (names of 3 characters or more) the one within an edit or two of it. */
export function suggestKey(name: string, table: readonly Setting[] = SETTING_LIST): string | null {
  const n = bare(name);
  if (n === '' || n.length > 40) return null;
  const spellings = (s: Setting) => [s.hash, s.key, s.label.replace(/\s*\(.*\)$/, ''), CONFIG_SCHEMA.find((k) => k.js === s.key)?.name ?? s.hash].map(bare);
  const exact = table.find((s) => spellings(s).includes(n));
  if (exact) return exact.hash;
  if (n.length < 3) return null;
  const max = n.length <= 4 ? 1 : 2;
  let best: { hash: string; d: number } | null = null;
  for (const s of table) {
    const d = Math.min(...spellings(s).map((w) => distance(n, w, max)));
    if (d <= max && (!best || d < best.d)) best = { hash: s.hash, d };
  }
  return best?.hash ?? null;
}

/** The correction for the unknown names of a link: each quoted (at most 5, shortened), with the
 * key it most likely meant. */
export function unknownKeysMessage(unknown: readonly string[], table: readonly Setting[] = SETTING_LIST): string {
  const shown = unknown.slice(0, 5).map((k) => {
    const near = suggestKey(k, table);
    return near ? `${quote(k)} (did you mean ${near}?)` : quote(k);
  });
  const more = unknown.length > 5 ? ` and ${unknown.length - 5} more` : '';
  return `ignored unknown ${unknown.length === 1 ? 'key' : 'keys'}: ${shown.join(', ')}${more}`;
}

/** Longest hash read (the rest is ignored). */
const MAX_HASH_CHARS = 8192;

/** The parameters of a URL hash ("#view=train&vocab-size=64..."), cut to a bounded size. */
export function hashParams(hash: string): URLSearchParams {
  return new URLSearchParams(hash.replace(/^#/, '').slice(0, MAX_HASH_CHARS));
}

/** Reads a state from a URL hash: unknown keys are ignored, and named (at most 5, shortened) in
 * one correction. */
export function stateFromHash(hash: string, table: readonly Setting[] = SETTING_LIST): Checked {
  const { raw, unknown } = paramsByKey(hashParams(hash), table);
  const state: State = { ...DEFAULTS };
  const corrections: Correction[] = [];
  for (const s of table) {
    const r = raw[s.key];
    if (r === undefined) continue;
    const { value, correction } = checkField(s.key, r);
    (state as unknown as Record<string, unknown>)[s.key] = value;
    if (correction) corrections.push(correction);
  }
  if (unknown.length > 0) corrections.push({ key: null, message: unknownKeysMessage(unknown, table) });
  fixConsistency(state, corrections);
  return { state, corrections };
}

/** Writes every setting to a hash string (without '#'), in table order, under its hash key. */
export function stateToHash(state: Readonly<State>, table: readonly Setting[] = SETTING_LIST): string {
  const params = new URLSearchParams();
  for (const s of table) {
    const v = state[s.key];
    params.set(s.hash, typeof v === 'boolean' ? (v ? '1' : '0') : String(v));
  }
  return params.toString();
}

/** The core's Trainer config for a state (keys as in attention-core.d.ts). */
export function trainerConfig(s: Readonly<State>): Pick<State, (typeof CONFIG_KEYS)[number]> {
  return Object.fromEntries(CONFIG_KEYS.map((k) => [k, s[k]])) as Pick<State, (typeof CONFIG_KEYS)[number]>;
}

/** The ids of the heatmaps' sequence under the state's vocab and seq_len (what the core gets),
 * with what had to be dropped. */
export function sampleOf(s: Readonly<State>): { ids: number[]; problems: string[] } {
  return parseSample(s.sample, s.vocabSize, s.seqLen);
}

/** Whether the sample is the task generator's (no ids typed: the sample text is empty). */
export function generatedSample(s: Readonly<Pick<State, 'sample'>>): boolean {
  return /^[\s,]*$/.test(s.sample);
}

/** What the worker is asked to show: the typed ids, or the task generator's sequence for the seed. */
export function sampleSpec(s: Readonly<State>): SampleSpec {
  return generatedSample(s) ? { seed: s.sampleSeed } : sampleOf(s).ids;
}

/** The core's ablation for a state and H heads in all (every layer's, global index; head numbers
 * past H are ignored). */
export function ablationOf(s: Readonly<State>, H: number): Required<Ablation> {
  const set = (text: string) => new Set(parseHeads(text, H).heads);
  const off = set(s.headsOff);
  const frozen = set(s.headsFrozen);
  return {
    headsOff: Array.from({ length: H }, (_, i) => off.has(i + 1)),
    headsFrozen: Array.from({ length: H }, (_, i) => frozen.has(i + 1)),
    scaleScores: s.scaleScores,
    mask: s.mask,
  };
}

/** The state keys of an ablation (head flags as 1-based lists): the inverse of ablationOf. */
export function ablationState(a: Required<Ablation>): Pick<State, (typeof ABLATION_KEYS)[number]> {
  const list = (flags: boolean[]) => flags.flatMap((f, i) => (f ? [i + 1] : [])).join(',');
  return { mask: a.mask, scaleScores: a.scaleScores, headsOff: list(a.headsOff), headsFrozen: list(a.headsFrozen) };
}
