// The one state object: every setting of the page, with its type, default and bounds, and its
// serialisation to the URL hash (after tensorflow/playground's state.ts). Values read from a URL
// are validated and clamped, so a hostile link can neither break the page nor freeze the tab.

import type { Ablation, MaskMode, TrainerConfigMsg } from './protocol';

/** View 1 trains the tiny LM; view 2 takes one head apart ("lesson"). */
export type View = 'train' | 'lesson';
/** Training tasks the core knows. */
export type TaskName = TrainerConfigMsg['task'];

/** Each task, with the attention pattern that solves it (shown under the task control). */
export const TASKS: Record<TaskName, string> = {
  repeat:
    'Every sequence is one token repeated. Any key the causal mask lets a query see holds the answer, so any spread of attention over the past works; the heads only have to carry the token through.',
  shift:
    'Random tokens; the target is the token before the current one. A head that puts its weight one position back (a diagonal just below the main one) solves it.',
  copy:
    'The second half repeats the first. Queries in the second half attend exactly half a sequence back: a stripe parallel to the diagonal. Targets in the first half are unpredictable and left out of the loss.',
  reverse:
    'The second half is the first half reversed. Each query in the second half attends to its mirror position in the first half: an anti-diagonal. The first half is left out of the loss.',
  sort:
    'The second half is the first half sorted (distinct tokens). The head must find, among the first half, the smallest token larger than the current one: attention by content, not position. Needs vocab >= (seq_len + 1) / 2.',
  future:
    'Random tokens; the target is the next token, which a causal model cannot see, so the loss stays near ln(vocab) and the accuracy at chance (1/vocab). It exists for the broken-mask switch of the Ablation panel: once the mask leaks, a head attends one position ahead and copies the answer, and the accuracy jumps to 100% without learning anything usable.',
};

/** Every setting of the page. Model/training keys are the core's JS config keys. */
export interface State extends TrainerConfigMsg {
  view: View;
  task: TaskName;
  /** Token ids (space separated) of the sequence whose attention the heatmaps show. */
  sample: string;
  /** Loss chart on a log scale. */
  logY: boolean;
  /** View 2 ("from scratch"): the sentence, projection sizes, causal mask, current stage. */
  sentence: string;
  dk: number;
  dv: number;
  causal: boolean;
  stage: number;
  /** Ablation panel: the mask, the 1/sqrt(dk) scaling, heads switched off and frozen heads
   * (comma lists of 1-based head numbers, e.g. "1,3"). */
  mask: MaskMode;
  scaleScores: boolean;
  headsOff: string;
  headsFrozen: string;
}

/** The curriculum's DemoConfig plus the lesson's defaults. */
export const DEFAULTS: Readonly<State> = Object.freeze({
  view: 'train',
  vocabSize: 64,
  dModel: 32,
  nHeads: 4,
  seqLen: 12,
  batchSize: 16,
  lr: 0.005,
  seed: 42,
  attnDropout: 0,
  outDropout: 0,
  task: 'repeat',
  sample: '3 14 15 9 26 5 35 8 9 7 9 3',
  logY: true,
  sentence: 'The cat sat on the mat',
  dk: 4,
  dv: 4,
  causal: false,
  stage: 0,
  mask: 'causal',
  scaleScores: true,
  headsOff: '',
  headsFrozen: '',
});

/** Page limits (stricter than the core's, to keep every redraw cheap). */
type Range = readonly [number, number];
export const LIMITS = {
  vocabSize: [2, 512],
  dModel: [2, 256],
  nHeads: [1, 16],
  seqLen: [1, 128],
  batchSize: [1, 64],
  seed: [0, 2 ** 32 - 1],
  attnDropout: [0, 0.9],
  outDropout: [0, 0.9],
  dk: [1, 16],
  dv: [1, 16],
  stage: [0, 7],
  lrMax: 10,
  sentenceChars: 120,
  sentenceTokens: 16,
  sampleChars: 1024,
} as const satisfies Record<string, Range | number>;

type Kind = 'int' | 'float' | 'bool' | 'enum' | 'text';
interface Field {
  key: keyof State;
  /** Name in the URL hash. */
  hash: string;
  /** Name shown to the learner (the control's label). */
  label: string;
  kind: Kind;
  range?: readonly [number, number];
  values?: readonly string[];
}

/** Every field in hash order. */
export const FIELDS: readonly Field[] = [
  { key: 'view', hash: 'view', label: 'view', kind: 'enum', values: ['train', 'lesson'] },
  { key: 'vocabSize', hash: 'vocab', label: 'vocab', kind: 'int', range: LIMITS.vocabSize },
  { key: 'dModel', hash: 'dmodel', label: 'd_model', kind: 'int', range: LIMITS.dModel },
  { key: 'nHeads', hash: 'heads', label: 'heads', kind: 'int', range: LIMITS.nHeads },
  { key: 'seqLen', hash: 'seqlen', label: 'seq_len', kind: 'int', range: LIMITS.seqLen },
  { key: 'batchSize', hash: 'batch', label: 'batch', kind: 'int', range: LIMITS.batchSize },
  { key: 'lr', hash: 'lr', label: 'learning rate', kind: 'float' },
  { key: 'seed', hash: 'seed', label: 'seed', kind: 'int', range: LIMITS.seed },
  { key: 'attnDropout', hash: 'attndrop', label: 'attention dropout', kind: 'float', range: LIMITS.attnDropout },
  { key: 'outDropout', hash: 'outdrop', label: 'output dropout', kind: 'float', range: LIMITS.outDropout },
  { key: 'task', hash: 'task', label: 'task', kind: 'enum', values: Object.keys(TASKS) },
  { key: 'sample', hash: 'sample', label: 'sample sequence', kind: 'text' },
  { key: 'logY', hash: 'logy', label: 'log scale', kind: 'bool' },
  { key: 'sentence', hash: 'sentence', label: 'sentence', kind: 'text' },
  { key: 'dk', hash: 'dk', label: 'dk', kind: 'int', range: LIMITS.dk },
  { key: 'dv', hash: 'dv', label: 'dv', kind: 'int', range: LIMITS.dv },
  { key: 'causal', hash: 'causal', label: 'causal mask', kind: 'bool' },
  { key: 'stage', hash: 'stage', label: 'stage', kind: 'int', range: LIMITS.stage },
  { key: 'mask', hash: 'mask', label: 'mask', kind: 'enum', values: ['causal', 'none', 'inverted'] },
  { key: 'scaleScores', hash: 'scale', label: '1/sqrt(dk) scaling', kind: 'bool' },
  { key: 'headsOff', hash: 'off', label: 'heads switched off', kind: 'text' },
  { key: 'headsFrozen', hash: 'frozen', label: 'frozen heads', kind: 'text' },
];

/** One value that validation changed, said in words the learner can act on. */
export interface Correction {
  /** The setting corrected; null for what concerns no setting (unknown keys). */
  key: keyof State | null;
  message: string;
}

/** A state plus what was corrected to make it valid. */
export interface Checked {
  state: State;
  corrections: Correction[];
}

const fieldOf = (key: keyof State): Field => FIELDS.find((f) => f.key === key)!;

/** Shortens a hostile string for display (it is only ever shown with textContent). */
function quote(raw: string): string {
  const s = raw.length > 24 ? `${raw.slice(0, 24)}…` : raw;
  return JSON.stringify(s);
}

/**
 * Parses and clamps one raw value for a field. Returns the value and, when it had to change,
 * the correction. Never throws.
 */
export function checkField(key: keyof State, raw: string): { value: State[keyof State]; correction?: Correction } {
  const f = fieldOf(key);
  const fallback = DEFAULTS[key];
  const fix = (value: State[keyof State], why: string) => ({
    value,
    correction: { key, message: `${f.label}: ${why}` },
  });
  const text = raw.trim();
  switch (f.kind) {
    case 'bool':
      if (text === '1' || text === 'true') return { value: true };
      if (text === '0' || text === 'false') return { value: false };
      return fix(fallback, `${quote(raw)} is not 0 or 1; using ${fallback ? 1 : 0}`);
    case 'enum':
      if (f.values!.includes(text)) return { value: text as State[keyof State] };
      return fix(fallback, `${quote(raw)} is not one of ${f.values!.join(', ')}; using ${String(fallback)}`);
    case 'text':
      return checkText(key, raw);
    case 'int':
    case 'float': {
      const n = text === '' ? NaN : Number(text);
      if (!Number.isFinite(n)) return fix(fallback, `${quote(raw)} is not a number; using ${String(fallback)}`);
      if (key === 'lr') {
        if (n <= 0) return fix(fallback, `${n} is not in (0, ${LIMITS.lrMax}]; using ${String(fallback)}`);
        if (n > LIMITS.lrMax) return fix(LIMITS.lrMax, `${n} is above the maximum ${LIMITS.lrMax}; using ${LIMITS.lrMax}`);
        return { value: n };
      }
      const [lo, hi] = f.range!;
      let v = n;
      if (f.kind === 'int' && !Number.isInteger(v)) {
        v = Math.round(v);
        if (v >= lo && v <= hi) return fix(v, `${n} is not a whole number; using ${v}`);
      }
      if (v < lo) return fix(lo, `${n} is below the minimum ${lo}; using ${lo}`);
      if (v > hi) return fix(hi, `${n} is above the maximum ${hi}; using ${hi}`);
      return { value: v };
    }
  }
}

/** Splits a sentence into word tokens (letters, digits, apostrophes) and punctuation. */
export function tokenize(sentence: string): string[] {
  return sentence.match(/[\p{L}\p{N}']+|[^\s\p{L}\p{N}']/gu) ?? [];
}

/** Parses "3 14 15" into ids; reports anything that is not an id in [0, vocab). */
export function parseSample(text: string, vocabSize: number, seqLen: number): { ids: number[]; problems: string[] } {
  const ids: number[] = [];
  const problems: string[] = [];
  const parts = text.slice(0, LIMITS.sampleChars).split(/[\s,]+/).filter((p) => p !== '');
  for (const p of parts) {
    const n = Number(p);
    if (!Number.isInteger(n) || n < 0 || n >= vocabSize) {
      if (problems.length < 3) problems.push(`${quote(p)} is not a token id in [0, ${vocabSize - 1}]`);
      continue;
    }
    ids.push(n);
  }
  if (ids.length > seqLen) {
    problems.push(`only the first ${seqLen} ids fit (seq_len ${seqLen})`);
    ids.length = seqLen;
  }
  if (ids.length === 0) {
    problems.push('no token ids left; using 0 1 2 ...');
    for (let i = 0; i < Math.min(seqLen, 8); ++i) ids.push(i % vocabSize);
  }
  return { ids, problems };
}

function checkText(key: keyof State, raw: string): { value: string; correction?: Correction } {
  if (key === 'sentence') {
    // Drop control characters, keep it short enough to draw, keep at most sentenceTokens tokens.
    let s = raw.replace(/[\u0000-\u001f\u007f]/g, ' ').slice(0, LIMITS.sentenceChars);
    const toks = tokenize(s);
    let why = s.length < raw.length || /[\u0000-\u001f\u007f]/.test(raw) ? 'shortened or cleaned' : '';
    if (toks.length > LIMITS.sentenceTokens) {
      s = toks.slice(0, LIMITS.sentenceTokens).join(' ');
      why = `more than ${LIMITS.sentenceTokens} tokens; keeping the first ${LIMITS.sentenceTokens}`;
    }
    if (toks.length === 0) {
      return { value: DEFAULTS.sentence, correction: { key, message: `sentence: empty; using "${DEFAULTS.sentence}"` } };
    }
    return why ? { value: s, correction: { key, message: `sentence: ${why}` } } : { value: s };
  }
  if (key === 'headsOff' || key === 'headsFrozen') {
    const { heads, problems } = parseHeads(raw, LIMITS.nHeads[1]);
    const value = heads.join(',');
    return problems.length ? { value, correction: { key, message: `${fieldOf(key).label}: ${problems.join('; ')}` } } : { value };
  }
  // sample: checked against vocab and seq_len once those are known (see checkState).
  const s = raw.slice(0, LIMITS.sampleChars);
  return s.length < raw.length
    ? { value: s, correction: { key, message: `sample sequence: longer than ${LIMITS.sampleChars} characters; cut` } }
    : { value: s };
}

/** Parses "1, 3" into sorted distinct head numbers in [1, H]; reports what it dropped. */
export function parseHeads(text: string, H: number): { heads: number[]; problems: string[] } {
  const heads = new Set<number>();
  const problems: string[] = [];
  for (const p of text.slice(0, 256).split(/[\s,]+/).filter((x) => x !== '')) {
    const n = Number(p);
    if (Number.isInteger(n) && n >= 1 && n <= H) heads.add(n);
    else if (problems.length < 3) problems.push(`${quote(p)} is not a head number in [1, ${H}]`);
  }
  return { heads: [...heads].sort((a, b) => a - b), problems };
}

/** The core's ablation for a state and H heads (head lists past H are ignored). */
export function ablationOf(s: Readonly<State>, H: number): Required<Ablation> {
  const set = (text: string) => new Set(parseHeads(text, H).heads);
  const off = set(s.headsOff);
  const frozen = set(s.headsFrozen);
  return {
    zeroed: Array.from({ length: H }, (_, i) => off.has(i + 1)),
    frozen: Array.from({ length: H }, (_, i) => frozen.has(i + 1)),
    scaleScores: s.scaleScores,
    mask: s.mask,
  };
}

/** The state keys of an ablation (head flags as 1-based lists): the inverse of ablationOf. */
export function ablationState(a: Required<Ablation>): Pick<State, 'mask' | 'scaleScores' | 'headsOff' | 'headsFrozen'> {
  const list = (flags: boolean[]) => flags.flatMap((f, i) => (f ? [i + 1] : [])).join(',');
  return { mask: a.mask, scaleScores: a.scaleScores, headsOff: list(a.zeroed), headsFrozen: list(a.frozen) };
}

/** Largest divisor of d that is <= h (at least 1). */
export function largestDivisorAtMost(d: number, h: number): number {
  for (let k = Math.min(h, d); k >= 1; --k) if (d % k === 0) return k;
  return 1;
}

/**
 * Makes a state consistent across fields, as a URL must be before it reaches the core:
 * d_model even, heads divide d_model, the sample made of ids < vocab and at most seq_len long.
 */
export function fixConsistency(state: State, corrections: Correction[]): void {
  if (state.dModel % 2 !== 0) {
    const d = state.dModel + 1 <= LIMITS.dModel[1] ? state.dModel + 1 : state.dModel - 1;
    corrections.push({ key: 'dModel', message: `d_model: ${state.dModel} must be even (sinusoidal positions); using ${d}` });
    state.dModel = d;
  }
  if (state.dModel % state.nHeads !== 0) {
    const h = largestDivisorAtMost(state.dModel, state.nHeads);
    corrections.push({
      key: 'nHeads',
      message: `heads: ${state.nHeads} does not divide d_model ${state.dModel}; using ${h}`,
    });
    state.nHeads = h;
  }
  for (const key of ['headsOff', 'headsFrozen'] as const) {
    const { heads, problems } = parseHeads(state[key], state.nHeads);
    if (problems.length > 0) {
      corrections.push({ key, message: `${fieldOf(key).label}: ${problems.join('; ')} (heads ${state.nHeads})` });
      state[key] = heads.join(',');
    }
  }
  const { ids, problems } = parseSample(state.sample, state.vocabSize, state.seqLen);
  if (problems.length > 0) {
    corrections.push({ key: 'sample', message: `sample sequence: ${problems.join('; ')}` });
    state.sample = ids.join(' ');
  }
}

/** Reads a state from a URL hash ("#view=train&vocab=64..."): unknown keys are ignored, and
 * named (at most 5, shortened) in one correction. */
export function stateFromHash(hash: string): Checked {
  const params = new URLSearchParams(hash.replace(/^#/, '').slice(0, 8192));
  const state: State = { ...DEFAULTS };
  const corrections: Correction[] = [];
  for (const f of FIELDS) {
    const raw = params.get(f.hash);
    if (raw === null) continue;
    const { value, correction } = checkField(f.key, raw);
    (state as unknown as Record<string, unknown>)[f.key] = value;
    if (correction) corrections.push(correction);
  }
  const known = new Set(FIELDS.map((f) => f.hash));
  const unknown = [...new Set([...params.keys()].filter((k) => !known.has(k)))];
  if (unknown.length > 0) {
    const shown = unknown.slice(0, 5).map(quote).join(', ');
    const more = unknown.length > 5 ? ` and ${unknown.length - 5} more` : '';
    corrections.push({ key: null, message: `ignored unknown keys: ${shown}${more}` });
  }
  fixConsistency(state, corrections);
  return { state, corrections };
}

/** Writes every field to a hash string (without '#'), in FIELDS order. */
export function stateToHash(state: State): string {
  const params = new URLSearchParams();
  for (const f of FIELDS) {
    const v = state[f.key];
    params.set(f.hash, typeof v === 'boolean' ? (v ? '1' : '0') : String(v));
  }
  return params.toString();
}

/** The core's Trainer config for a state (keys as in attention-core.d.ts). */
export function trainerConfig(s: State) {
  return {
    vocabSize: s.vocabSize,
    dModel: s.dModel,
    nHeads: s.nHeads,
    seqLen: s.seqLen,
    batchSize: s.batchSize,
    lr: s.lr,
    seed: s.seed,
    attnDropout: s.attnDropout,
    outDropout: s.outDropout,
    task: s.task,
  };
}

/** Keys whose change needs a new Trainer. */
export const CONFIG_KEYS: readonly (keyof State)[] = [
  'vocabSize', 'dModel', 'nHeads', 'seqLen', 'batchSize', 'lr', 'seed', 'attnDropout', 'outDropout', 'task',
];
