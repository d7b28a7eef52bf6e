// The key table: every setting of the page, written once (after tensorflow/playground's state.ts).
// For each: its name in JS (the State key, the element's `state` key and, for the config, the
// core's JS key), its name in the core and in C++ where it has one, the URL hash key, the element
// attribute and the `attn train` flag where it has them, the label, the type, the default, the
// bounds and the validation, and the old names that still parse. Everything else is derived from
// it: the defaults, checkField, the hash round trip (state.ts), the element's attributes
// (element/attributes.ts), the training view's controls and the import's config checks. The
// values themselves live in the Store (store.ts), and nowhere else.
import type { Ablation as CoreAblation, FfnKind, NormKind, NormPosition, PositionKind, TrainerConfig } from '../core/attention-core';
import type { MaskMode, NotOnThePage } from '../model/protocol';
import { PANELS, type PanelId } from '../panels/registry';
import { cleanHeads, cleanSample, cleanSentence, DEFAULT_SENTENCE, MAX_HEADS, MAX_LAYERS, quote, TEXT_LIMITS } from './parse';
import { cleanMask, cleanSecondSentence, MAX_MASK_TOKENS } from './lesson-mask';
import { TASKS, type TaskName } from './tasks';
import { cleanLogits, DEFAULT_LOGITS } from './logits';

export { parseHeads, parseSample, quote, TEXT_LIMITS, tokenize } from './parse';
export { TASKS, type TaskName };

/** The page's longest training sequence. */
const MAX_SEQ_LEN = 128;
/** The core's choices for the block's position method, norm, norm placement and FFN. */
const POSITION_KINDS = ['sinusoidal', 'learned', 'rope', 'alibi', 'none'] as const satisfies readonly PositionKind[];
const NORM_KINDS = ['none', 'layernorm', 'rmsnorm'] as const satisfies readonly NormKind[];
const NORM_POSITIONS = ['pre', 'post'] as const satisfies readonly NormPosition[];
const FFN_KINDS = ['none', 'relu', 'gelu', 'swiglu'] as const satisfies readonly FfnKind[];

/** View 1 trains the tiny LM; view 2 takes one head apart ("lesson"); view 3 one transformer block ("block"). */
export type View = 'train' | 'lesson' | 'block';

/** The training view's panel picker: the panel shown under the loss and the heatmaps (a line of
 * the panel registry), or all of them one after another. */
export type PanelName = PanelId | 'all';
const PANEL_NAMES: readonly PanelName[] = [...PANELS.map((p) => p.name), 'all'];

/** Every setting of the page. Model/training keys are the core's JS config keys. */
export interface State extends Required<Omit<TrainerConfig, NotOnThePage>> {
  view: View;
  task: TaskName;
  /** Token ids (space separated) of the sequence whose attention the heatmaps show; empty: a
   * sequence drawn from the task's generator with sampleSeed (the core's taskSample). */
  sample: string;
  sampleSeed: number;
  /** Loss chart on a log scale, with a smoothed curve, with the demo's epoch means. */
  logY: boolean;
  smooth: boolean;
  epochMeans: boolean;
  /** The training view's panel picker. */
  panel: PanelName;
  /** View 2 ("from scratch"): the sentence, projection sizes, current stage. */
  sentence: string;
  dk: number;
  dv: number;
  /** View 2's mask (a preset name or drawn rows of 0/1, see lesson-mask.ts), the sliding
   * window's k, the number of heads, sinusoidal positions added to X, and a second sentence. */
  lessonMask: string;
  window: number;
  lessonHeads: number;
  lessonPositions: boolean;
  secondSentence: string;
  stage: number;
  /** View 2's panels: dk of the sqrt(dk) panel, the stability panel's logits, the blend's row. */
  scaleDk: number;
  logits: string;
  blendRow: number;
  /** Ablation panel: the mask, the 1/sqrt(dk) scaling, heads switched off and frozen heads
   * (comma lists of 1-based global head numbers l * H + h + 1, e.g. "1,3"). */
  mask: MaskMode;
  scaleScores: boolean;
  headsOff: string;
  headsFrozen: string;
}

/** What a change of the setting does: config builds a new Trainer, sample changes the heatmaps'
 * sequence, ablation the interventions, lesson view 2's inputs, page only what is shown. */
export type SettingGroup = 'page' | 'config' | 'sample' | 'ablation' | 'lesson';
export type SettingType = 'int' | 'float' | 'bool' | 'enum' | 'text';

/** An `attn train` flag: one that takes a value (`--vocab-size V`), or a switch that sets the
 * value; `alias` is its old name, still accepted by `attn`. */
export type CliFlag = ({ flag: `--${string}`; value: string } | { flag: `--${string}`; sets: boolean }) & { alias?: `--${string}` };

/** One row of the key table. */
export interface Setting<K extends keyof State = keyof State> {
  /** The name in JS: the State key, the element's `state` key, the training view's control name. */
  key: K;
  group: SettingGroup;
  /** The core's JS name (TrainerConfig, Ablation, selfAttention), where it differs or exists;
   * null: the page's own setting. */
  core: keyof TrainerConfig | keyof CoreAblation | null;
  /** The C++ name (TrainerConfig, Trainer::Ablation, attention's argument); null: none. */
  cpp: string | null;
  /** The URL hash key (also embed.html's). */
  hash: string;
  /** The <attention-playground> attribute; null: set through `state` only. */
  attribute: string | null;
  /** The `attn train` flag; null: none. */
  cli: CliFlag | null;
  /** The name shown to the learner (the control's label, the start of its corrections). */
  label: string;
  type: SettingType;
  default: State[K];
  /** Numbers: the bounds, inclusive unless `exclusiveMin`. */
  range: readonly [number, number] | null;
  /** The lower bound is excluded (lr in (0, 10]); a value at or under it takes the default. */
  exclusiveMin: boolean;
  /** Enums: the allowed values. */
  values: readonly string[] | null;
  /** Numbers: the control's step (the number input's `step`). */
  step: string | null;
  /** Text: cleans a raw value; `why` says what was changed, after "<label>: ". */
  clean: ((raw: string) => { value: string; why?: string }) | null;
  /** Old names that still parse (never written). */
  aliases: { hash: readonly string[]; attribute: readonly string[] };
}

// Shorthands for the rows: the fields a type does not use are null.
const none = { hash: [], attribute: [] } as const;
const numeric = (range: readonly [number, number], step: string) => ({ range, step, exclusiveMin: false, values: null, clean: null });
const oneOf = (values: readonly string[]) => ({ range: null, step: null, exclusiveMin: false, values, clean: null });
const onOff = { range: null, step: null, exclusiveMin: false, values: null, clean: null } as const;
const textual = (clean: (raw: string) => { value: string; why?: string }) => ({ range: null, step: null, exclusiveMin: false, values: null, clean });

/** The key table, in hash order. The type makes every State key appear exactly once. */
export const SETTINGS: { readonly [K in keyof State]: Omit<Setting<K>, 'key'> } = {
  view: {
    group: 'page', core: null, cpp: null, hash: 'view', attribute: 'view', cli: null,
    label: 'view', type: 'enum', default: 'train', ...oneOf(['train', 'lesson', 'block']), aliases: none,
  },
  vocabSize: {
    group: 'config', core: 'vocabSize', cpp: 'vocab_size', hash: 'vocab-size', attribute: 'vocab-size', cli: { flag: '--vocab-size', value: 'V', alias: '--vocab' },
    label: 'vocab', type: 'int', default: 64, ...numeric([2, 512], '1'), aliases: { hash: ['vocab'], attribute: [] },
  },
  dModel: {
    group: 'config', core: 'dModel', cpp: 'd_model', hash: 'd-model', attribute: 'd-model', cli: { flag: '--d-model', value: 'D' },
    label: 'd_model', type: 'int', default: 32, ...numeric([2, 256], '2'), aliases: { hash: ['dmodel'], attribute: [] },
  },
  nHeads: {
    group: 'config', core: 'nHeads', cpp: 'n_heads', hash: 'heads', attribute: 'heads', cli: { flag: '--heads', value: 'H' },
    label: 'heads', type: 'int', default: 4, ...numeric([1, MAX_HEADS], '1'), aliases: none,
  },
  seqLen: {
    group: 'config', core: 'seqLen', cpp: 'seq_len', hash: 'seq-len', attribute: 'seq-len', cli: { flag: '--seq-len', value: 'T' },
    label: 'seq_len', type: 'int', default: 12, ...numeric([1, MAX_SEQ_LEN], '1'), aliases: { hash: ['seqlen'], attribute: [] },
  },
  batchSize: {
    group: 'config', core: 'batchSize', cpp: 'batch_size', hash: 'batch', attribute: 'batch', cli: { flag: '--batch', value: 'B' },
    label: 'batch', type: 'int', default: 16, ...numeric([1, 64], '1'), aliases: none,
  },
  lr: {
    group: 'config', core: 'lr', cpp: 'lr', hash: 'lr', attribute: 'lr', cli: { flag: '--lr', value: 'LR' },
    label: 'learning rate', type: 'float', default: 0.005, ...numeric([0, 10], 'any'), exclusiveMin: true, aliases: none,
  },
  seed: {
    group: 'config', core: 'seed', cpp: 'seed', hash: 'seed', attribute: 'seed', cli: { flag: '--seed', value: 'N' },
    label: 'seed', type: 'int', default: 42, ...numeric([0, 2 ** 32 - 1], '1'), aliases: none,
  },
  attnDropout: {
    group: 'config', core: 'attnDropout', cpp: 'attn_dropout', hash: 'attn-dropout', attribute: null, cli: { flag: '--attn-dropout', value: 'P' },
    label: 'attention dropout', type: 'float', default: 0, ...numeric([0, 0.9], '0.05'), aliases: { hash: ['attndrop'], attribute: [] },
  },
  outDropout: {
    group: 'config', core: 'outDropout', cpp: 'out_dropout', hash: 'out-dropout', attribute: null, cli: { flag: '--out-dropout', value: 'P' },
    label: 'output dropout', type: 'float', default: 0, ...numeric([0, 0.9], '0.05'), aliases: { hash: ['outdrop'], attribute: [] },
  },
  task: {
    group: 'config', core: 'task', cpp: 'task', hash: 'task', attribute: 'task', cli: { flag: '--task', value: 'NAME' },
    label: 'task', type: 'enum', default: 'repeat', ...oneOf(Object.keys(TASKS)), aliases: none,
  },
  // ---- Depth: stacked attention layers, with or without the residual stream.
  nLayers: {
    group: 'config', core: 'nLayers', cpp: 'n_layers', hash: 'layers', attribute: 'layers', cli: { flag: '--layers', value: 'L' },
    label: 'layers', type: 'int', default: 1, ...numeric([1, MAX_LAYERS], '1'), aliases: none,
  },
  residual: {
    group: 'config', core: 'residual', cpp: 'residual', hash: 'residual', attribute: 'residual', cli: { flag: '--residual', sets: true },
    label: 'residual stream', type: 'bool', default: false, ...onOff, aliases: none,
  },
  // ---- The transformer block. kvHeads and maxSeqLen keep the core's 0 for "the same as
  // heads" and "the same as seq_len": a default cannot follow another setting, and config() reports
  // the 0 it was given. The page caps maxSeqLen at 4 times its longest seq_len, so a learned table
  // covers the "Longer than trained" panel's 4x.
  kvHeads: {
    group: 'config', core: 'kvHeads', cpp: 'kv_heads', hash: 'kv-heads', attribute: 'kv-heads', cli: { flag: '--kv-heads', value: 'KV' },
    label: 'K/V heads (0 = heads)', type: 'int', default: 0, ...numeric([0, MAX_HEADS], '1'), aliases: none,
  },
  positions: {
    group: 'config', core: 'positions', cpp: 'positions', hash: 'positions', attribute: 'positions', cli: { flag: '--positions', value: 'KIND' },
    label: 'positions', type: 'enum', default: 'sinusoidal', ...oneOf(POSITION_KINDS), aliases: none,
  },
  maxSeqLen: {
    group: 'config', core: 'maxSeqLen', cpp: 'max_seq_len', hash: 'max-seq-len', attribute: 'max-seq-len', cli: { flag: '--max-seq-len', value: 'C' },
    label: 'max_seq_len (0 = seq_len)', type: 'int', default: 0, ...numeric([0, 4 * MAX_SEQ_LEN], '1'), aliases: none,
  },
  norm: {
    group: 'config', core: 'norm', cpp: 'norm', hash: 'norm', attribute: 'norm', cli: { flag: '--norm', value: 'KIND' },
    label: 'norm', type: 'enum', default: 'none', ...oneOf(NORM_KINDS), aliases: none,
  },
  normPosition: {
    group: 'config', core: 'normPosition', cpp: 'norm_position', hash: 'norm-position', attribute: 'norm-position', cli: { flag: '--norm-position', value: 'WHERE' },
    label: 'norm position', type: 'enum', default: 'pre', ...oneOf(NORM_POSITIONS), aliases: none,
  },
  ffn: {
    group: 'config', core: 'ffn', cpp: 'ffn', hash: 'ffn', attribute: 'ffn', cli: { flag: '--ffn', value: 'KIND' },
    label: 'FFN', type: 'enum', default: 'none', ...oneOf(FFN_KINDS), aliases: none,
  },
  ffnMult: {
    group: 'config', core: 'ffnMult', cpp: 'ffn_mult', hash: 'ffn-mult', attribute: 'ffn-mult', cli: { flag: '--ffn-mult', value: 'M' },
    label: 'FFN width (× d_model)', type: 'int', default: 4, ...numeric([1, 8], '1'), aliases: none,
  },
  // ---- Look inside: the token embedding's init std. The curriculum's 0.02 is the default;
  // the induction preset's larger value forms its head sooner.
  embInitStd: {
    group: 'config', core: 'embInitStd', cpp: 'emb_init_std', hash: 'emb-init-std', attribute: 'emb-init-std', cli: { flag: '--emb-init-std', value: 'S' },
    label: 'embedding init std', type: 'float', default: 0.02, ...numeric([0, 10], 'any'), exclusiveMin: true, aliases: none,
  },
  sample: {
    group: 'sample', core: null, cpp: null, hash: 'sample', attribute: 'sample', cli: null,
    label: 'sample sequence', type: 'text', default: '', ...textual(cleanSample), aliases: none,
  },
  sampleSeed: {
    group: 'sample', core: null, cpp: null, hash: 'sample-seed', attribute: null, cli: null,
    label: 'sample seed', type: 'int', default: 1, ...numeric([0, 2 ** 31 - 1], '1'), aliases: none,
  },
  logY: {
    group: 'page', core: null, cpp: null, hash: 'logy', attribute: null, cli: null,
    label: 'log scale', type: 'bool', default: true, ...onOff, aliases: none,
  },
  smooth: {
    group: 'page', core: null, cpp: null, hash: 'smooth', attribute: null, cli: null,
    label: 'smoothed curve', type: 'bool', default: false, ...onOff, aliases: none,
  },
  epochMeans: {
    group: 'page', core: null, cpp: null, hash: 'epochs', attribute: null, cli: null,
    label: 'epoch means', type: 'bool', default: false, ...onOff, aliases: none,
  },
  panel: {
    group: 'page', core: null, cpp: null, hash: 'panel', attribute: 'panel', cli: null,
    label: 'panel', type: 'enum', default: 'predictions', ...oneOf(PANEL_NAMES), aliases: none,
  },
  sentence: {
    group: 'lesson', core: null, cpp: null, hash: 'sentence', attribute: null, cli: null,
    label: 'sentence', type: 'text', default: DEFAULT_SENTENCE, ...textual(cleanSentence), aliases: none,
  },
  dk: {
    group: 'lesson', core: null, cpp: null, hash: 'dk', attribute: null, cli: null,
    label: 'dk', type: 'int', default: 4, ...numeric([1, 16], '1'), aliases: none,
  },
  dv: {
    group: 'lesson', core: null, cpp: null, hash: 'dv', attribute: null, cli: null,
    label: 'dv', type: 'int', default: 4, ...numeric([1, 16], '1'), aliases: none,
  },
  // View 2's mask, heads, positions and second sentence. The old `causal=1|0` link
  // still parses: the mask's cleaner reads 1 as causal and 0 as none.
  lessonMask: {
    group: 'lesson', core: null, cpp: null, hash: 'lesson-mask', attribute: null, cli: null,
    label: 'lesson mask', type: 'text', default: 'none', ...textual(cleanMask), aliases: { hash: ['causal'], attribute: [] },
  },
  window: {
    group: 'lesson', core: null, cpp: null, hash: 'window', attribute: null, cli: null,
    label: 'window k', type: 'int', default: 2, ...numeric([1, MAX_MASK_TOKENS], '1'), aliases: none,
  },
  lessonHeads: {
    group: 'lesson', core: null, cpp: null, hash: 'lesson-heads', attribute: null, cli: null,
    label: 'lesson heads', type: 'int', default: 1, ...numeric([1, 4], '1'), aliases: none,
  },
  // `positions` is the model's position method; an old `positions=0|1` link reaches
  // that enum and is corrected there.
  lessonPositions: {
    group: 'lesson', core: null, cpp: null, hash: 'lesson-positions', attribute: null, cli: null,
    label: 'lesson positions', type: 'bool', default: false, ...onOff, aliases: none,
  },
  secondSentence: {
    group: 'lesson', core: null, cpp: null, hash: 'second-sentence', attribute: null, cli: null,
    label: 'second sentence', type: 'text', default: '', ...textual(cleanSecondSentence), aliases: none,
  },
  stage: {
    group: 'lesson', core: null, cpp: null, hash: 'stage', attribute: null, cli: null,
    label: 'stage', type: 'int', default: 0, ...numeric([0, 9], '1'), aliases: none,
  },
  scaleDk: {
    group: 'lesson', core: null, cpp: null, hash: 'scale-dk', attribute: null, cli: null,
    label: 'dk (√dk panel)', type: 'int', default: 16, ...numeric([1, 64], '1'), aliases: none,
  },
  logits: {
    group: 'lesson', core: null, cpp: null, hash: 'logits', attribute: null, cli: null,
    label: 'logits', type: 'text', default: DEFAULT_LOGITS, ...textual(cleanLogits), aliases: none,
  },
  blendRow: {
    group: 'lesson', core: null, cpp: null, hash: 'blend-row', attribute: null, cli: null,
    label: 'blend row', type: 'int', default: 0, ...numeric([0, TEXT_LIMITS.sentenceTokens - 1], '1'), aliases: none,
  },
  mask: {
    group: 'ablation', core: 'mask', cpp: 'mask', hash: 'mask', attribute: null, cli: { flag: '--mask', value: 'MODE' },
    label: 'mask', type: 'enum', default: 'causal', ...oneOf(['causal', 'none', 'inverted']), aliases: none,
  },
  scaleScores: {
    group: 'ablation', core: 'scaleScores', cpp: 'scale_scores', hash: 'scale-scores', attribute: null, cli: { flag: '--no-scale-scores', sets: false, alias: '--no-scale' },
    label: '1/sqrt(dk) scaling', type: 'bool', default: true, ...onOff, aliases: { hash: ['scale'], attribute: [] },
  },
  headsOff: {
    group: 'ablation', core: 'headsOff', cpp: 'heads_off', hash: 'heads-off', attribute: null, cli: { flag: '--heads-off', value: 'LIST' },
    label: 'heads switched off', type: 'text', default: '', ...textual(cleanHeads), aliases: { hash: ['off'], attribute: [] },
  },
  headsFrozen: {
    group: 'ablation', core: 'headsFrozen', cpp: 'heads_frozen', hash: 'heads-frozen', attribute: null, cli: { flag: '--heads-frozen', value: 'LIST', alias: '--freeze' },
    label: 'frozen heads', type: 'text', default: '', ...textual(cleanHeads), aliases: { hash: ['frozen'], attribute: [] },
  },
};

/** The table as a list, in hash order, each row with its key. */
export const SETTING_LIST: readonly Setting[] = (Object.keys(SETTINGS) as (keyof State)[]).map((key) => ({ key, ...SETTINGS[key] }) as Setting);

/** The row of a key. */
export const settingOf = <K extends keyof State>(key: K): Setting<K> => ({ key, ...SETTINGS[key] }) as Setting<K>;

/** The keys of one group, in table order. */
export const keysOf = (group: SettingGroup): readonly (keyof State)[] => SETTING_LIST.filter((s) => s.group === group).map((s) => s.key);

/** The curriculum's DemoConfig plus the lesson's defaults. */
export const DEFAULTS: Readonly<State> = Object.freeze(Object.fromEntries(SETTING_LIST.map((s) => [s.key, s.default])) as unknown as State);

/** Keys whose change needs a new Trainer (the core's config keys). */
export const CONFIG_KEYS = keysOf('config') as readonly (keyof TrainerConfig & keyof State)[];
/** Keys of the interventions (the Ablation panel). */
export const ABLATION_KEYS = keysOf('ablation') as readonly ('mask' | 'scaleScores' | 'headsOff' | 'headsFrozen')[];

const range = (key: keyof State) => SETTINGS[key].range!;
/** Page limits (stricter than the core's, to keep every redraw cheap): the table's bounds, by key. */
export const LIMITS = {
  vocabSize: range('vocabSize'),
  dModel: range('dModel'),
  nHeads: range('nHeads'),
  nLayers: range('nLayers'),
  seqLen: range('seqLen'),
  batchSize: range('batchSize'),
  seed: range('seed'),
  sampleSeed: range('sampleSeed'),
  attnDropout: range('attnDropout'),
  outDropout: range('outDropout'),
  dk: range('dk'),
  dv: range('dv'),
  window: range('window'),
  lessonHeads: range('lessonHeads'),
  stage: range('stage'),
  scaleDk: range('scaleDk'),
  blendRow: range('blendRow'),
  lrMax: range('lr')[1],
  ...TEXT_LIMITS,
} as const;

/** One value that validation changed, said in words the learner can act on. */
export interface Correction {
  /** The setting corrected; null for what concerns no setting (unknown keys). */
  key: keyof State | null;
  message: string;
}

/**
 * Parses and clamps one raw value for a setting, by its row in the table. Returns the value and,
 * when it had to change, the correction ("<label>: <why>"). Never throws.
 */
export function checkField<K extends keyof State>(key: K, raw: string): { value: State[K]; correction?: Correction } {
  const s = settingOf(key);
  const fallback = s.default;
  const fix = (value: unknown, why: string) => ({ value: value as State[K], correction: { key, message: `${s.label}: ${why}` } });
  const ok = (value: unknown) => ({ value: value as State[K] });
  const text = raw.trim();
  switch (s.type) {
    case 'bool':
      if (text === '1' || text === 'true') return ok(true);
      if (text === '0' || text === 'false') return ok(false);
      return fix(fallback, `${quote(raw)} is not 0 or 1; using ${fallback ? 1 : 0}`);
    case 'enum':
      if (s.values!.includes(text)) return ok(text);
      return fix(fallback, `${quote(raw)} is not one of ${s.values!.join(', ')}; using ${String(fallback)}`);
    case 'text': {
      const { value, why } = s.clean!(raw);
      return why ? fix(value, why) : ok(value);
    }
    case 'int':
    case 'float': {
      const n = text === '' ? NaN : Number(text);
      if (!Number.isFinite(n)) return fix(fallback, `${quote(raw)} is not a number; using ${String(fallback)}`);
      const [lo, hi] = s.range!;
      if (s.exclusiveMin && n <= lo) return fix(fallback, `${n} is not in (${lo}, ${hi}]; using ${String(fallback)}`);
      let v = n;
      if (s.type === 'int' && !Number.isInteger(v)) {
        v = Math.round(v);
        if (v >= lo && v <= hi) return fix(v, `${n} is not a whole number; using ${v}`);
      }
      if (v < lo) return fix(lo, `${n} is below the minimum ${lo}; using ${lo}`);
      if (v > hi) return fix(hi, `${n} is above the maximum ${hi}; using ${hi}`);
      return ok(v);
    }
  }
}

/** The row whose hash key (or old hash key) is name. */
export function settingByHash(name: string): Setting | undefined {
  return SETTING_LIST.find((s) => s.hash === name || s.aliases.hash.includes(name));
}
