// The key table: every setting of the page (after tensorflow/playground's state.ts). For each: its
// name in JS (the State key, the element's `state` key and, for the config, the core's JS key), its
// name in the core where it has one, the URL hash key, the element attribute, the label, the type,
// the default, the bounds and the validation. The config's rows are built from the core's schema
// (core/config-schema.ts, written from cpp/attn/train/config.h at build time): names, type,
// default, bounds and choices come from there, and CONFIG_PAGE adds only what the page does its own
// way (labels, tighter bounds, steps); a new config key needs no edit here. The page's own settings
// (view, panel, the lesson view's, the ablation's) are written out below. Everything else is
// derived from the table: the defaults, checkField, the hash round trip (state.ts), the element's
// attributes (element/attributes.ts), the training view's controls and the import's config
// checks. The values themselves live in the Store (store.ts), and nowhere else.
import type { Ablation as CoreAblation, ConfigKeySchema, TrainerConfig } from '../core/attention-core';
import { CONFIG_SCHEMA } from '../core/config-schema';
import type { MaskMode } from '../model/protocol';
import { PANELS, type PanelId } from '../panels/registry';
import { cleanHeads, cleanSample, cleanSentence, DEFAULT_SENTENCE, MAX_HEADS, quote, TEXT_LIMITS } from './parse';
import { cleanMask, cleanSecondSentence, MAX_MASK_TOKENS } from './lesson-mask';
import { TASKS, type TaskName } from './tasks';
import { cleanLogits, DEFAULT_LOGITS } from './logits';

export { parseHeads, parseSample, quote, TEXT_LIMITS, tokenize } from './parse';
export { TASKS, type TaskName };

/** The page's longest training sequence. */
const MAX_SEQ_LEN = 128;

/** View 1 trains the tiny LM; view 2 takes one head apart ("lesson"); view 3 one transformer block ("block"). */
export type View = 'train' | 'lesson' | 'block';

/** The training view's panel picker: the panel shown under the loss and the heatmaps (a line of
 * the panel registry), or all of them one after another. */
export type PanelName = PanelId | 'all';
const PANEL_NAMES: readonly PanelName[] = [...PANELS.map((p) => p.name), 'all'];

/** Every setting of the page. Model/training keys are the core's JS config keys. */
export interface State extends Required<TrainerConfig> {
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
  lessonWindow: number;
  lessonHeads: number;
  lessonPositions: boolean;
  secondSentence: string;
  stage: number;
  /** View 2's panels: dk of the sqrt(dk) panel, the stability panel's logits, the blend's row. */
  scaleDk: number;
  logits: string;
  blendRow: number;
  /** View 3's own norm and FFN: its block has them whatever the training view's model has (every
   * other setting of its model is the training view's). */
  blockNorm: Required<TrainerConfig>['norm'];
  blockFfn: Required<TrainerConfig>['ffn'];
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

/** One row of the key table. */
export interface Setting<K extends keyof State = keyof State> {
  /** The name in JS: the State key, the element's `state` key, the training view's control name. */
  key: K;
  group: SettingGroup;
  /** The core's JS name (TrainerConfig, Ablation), where it exists; null: the page's own setting. */
  core: keyof TrainerConfig | keyof CoreAblation | null;
  /** The URL hash key (also embed.html's). */
  hash: string;
  /** The <attention-playground> attribute; null: set through `state` only. */
  attribute: string | null;
  /** The name shown to the learner (the control's label, the start of its corrections). */
  label: string;
  type: SettingType;
  default: State[K];
  /** Numbers: the bounds, inclusive unless `exclusiveMin` or `exclusiveMax`. */
  range: readonly [number, number] | null;
  /** The lower bound is excluded (lr in (0, 10]); a value at or under it takes the default. */
  exclusiveMin: boolean;
  /** The upper bound is excluded; a value at or over it takes the default. */
  exclusiveMax: boolean;
  /** Enums: the allowed values. */
  values: readonly string[] | null;
  /** Numbers: the control's step (the number input's `step`). */
  step: string | null;
  /** Text: cleans a raw value; `why` says what was changed, after "<label>: ". */
  clean: ((raw: string) => { value: string; why?: string }) | null;
  /** Config keys: the model families the key applies to (the schema's); absent: every family. */
  families?: readonly string[];
}

// Shorthands for the rows: the fields a type does not use are null.
const numeric = (range: readonly [number, number], step: string) => ({ range, step, exclusiveMin: false, exclusiveMax: false, values: null, clean: null });
const oneOf = (values: readonly string[]) => ({ range: null, step: null, exclusiveMin: false, exclusiveMax: false, values, clean: null });
const onOff = { range: null, step: null, exclusiveMin: false, exclusiveMax: false, values: null, clean: null } as const;
const textual = (clean: (raw: string) => { value: string; why?: string }) => ({ range: null, step: null, exclusiveMin: false, exclusiveMax: false, values: null, clean });

/** What the page does its own way for a config key; absent fields take the schema's: the label is
 * the key's snake_case name, the bounds the core's, the step 1 for integers and any for numbers,
 * the attribute the key's flag (null: none, set through `state` only). The page's bounds are
 * tighter than the core's, to keep every redraw cheap. kvHeads and maxSeqLen keep the core's 0
 * for "the same as heads" and "the same as seq_len": a default cannot follow another setting, and
 * config() reports the 0 it was given; the page caps maxSeqLen at 4 times its longest seq_len, so a
 * learned table covers the "Longer than trained" panel's 4x. */
interface ConfigPage {
  label?: string;
  range?: readonly [number, number];
  step?: string;
  attribute?: null;
}
const CONFIG_PAGE: { readonly [K in keyof TrainerConfig]?: ConfigPage } = {
  vocabSize: { label: 'vocab', range: [2, 512] },
  dModel: { range: [2, 256], step: '2' },
  nHeads: { label: 'heads', range: [1, MAX_HEADS] },
  seqLen: { range: [1, MAX_SEQ_LEN] },
  batchSize: { label: 'batch', range: [1, 64] },
  lr: { label: 'learning rate' },
  seed: { range: [0, 2 ** 32 - 1] },
  attnDropout: { label: 'attention dropout', range: [0, 0.9], step: '0.05', attribute: null },
  outDropout: { label: 'output dropout', range: [0, 0.9], step: '0.05', attribute: null },
  nLayers: { label: 'layers' },
  residual: { label: 'residual stream' },
  kvHeads: { label: 'K/V heads (0 = heads)', range: [0, MAX_HEADS] },
  maxSeqLen: { label: 'max_seq_len (0 = seq_len)', range: [0, 4 * MAX_SEQ_LEN] },
  normPosition: { label: 'norm position' },
  ffn: { label: 'FFN' },
  ffnMult: { label: 'FFN width (× d_model)' },
  embInitStd: { label: 'embedding init std' },
  maskRate: { label: 'mask rate', step: '0.01' },
  attention: { label: 'attention pattern' },
  window: { label: 'window W', range: [1, MAX_SEQ_LEN] },
  stride: { label: 'stride S', range: [1, MAX_SEQ_LEN] },
  differential: { label: 'differential attention' },
  tieEmbeddings: { label: 'head tied to the embedding' },
  bias: { label: 'Linear biases' },
  posInitStd: { label: 'position table init std' },
  weightDecay: { label: 'weight decay (AdamW)' },
  adamBeta2: { label: 'Adam beta2' },
  gradClip: { label: 'gradient clip (0 = off)' },
  builtinText: { label: 'built-in text' },
};

/** A config key's row: the schema's key with the page's CONFIG_PAGE on top. */
export function configRow(k: ConfigKeySchema): Omit<Setting, 'key'> {
  const page: ConfigPage = CONFIG_PAGE[k.js as keyof TrainerConfig] ?? {};
  const common = { group: 'config' as const, core: k.js as keyof TrainerConfig, hash: k.flag, attribute: page.attribute === null ? null : k.flag, label: page.label ?? k.name, default: k.default as State[keyof State], families: k.families };
  if (k.type === 'bool') return { ...common, type: 'bool', ...onOff };
  if (k.type === 'enum') return { ...common, type: 'enum', ...oneOf(k.choices!) };
  // A number: the page's bounds (inclusive), else the core's (an unbounded integer is a safe one).
  const range = page.range ?? [k.min ?? 0, k.max ?? Number.MAX_SAFE_INTEGER];
  const step = page.step ?? (k.type === 'float' ? 'any' : '1');
  return { ...common, type: k.type === 'float' ? 'float' : 'int', ...numeric(range, step), exclusiveMin: !page.range && k.min_exclusive === true, exclusiveMax: !page.range && k.max_exclusive === true };
}

/** The config's rows, in the core's order. */
const CONFIG_ROWS = Object.fromEntries(CONFIG_SCHEMA.map((k) => [k.js, configRow(k)])) as unknown as { readonly [K in keyof TrainerConfig]-?: Omit<Setting<K>, 'key'> };

/** The key table, in hash order. The type makes every State key appear exactly once. */
export const SETTINGS: { readonly [K in keyof State]: Omit<Setting<K>, 'key'> } = {
  view: {
    group: 'page', core: null, hash: 'view', attribute: 'view',
    label: 'view', type: 'enum', default: 'train', ...oneOf(['train', 'lesson', 'block']),
  },
  ...CONFIG_ROWS,
  sample: {
    group: 'sample', core: null, hash: 'sample', attribute: 'sample',
    label: 'sample sequence', type: 'text', default: '', ...textual(cleanSample),
  },
  sampleSeed: {
    group: 'sample', core: null, hash: 'sample-seed', attribute: null,
    label: 'sample seed', type: 'int', default: 1, ...numeric([0, 2 ** 31 - 1], '1'),
  },
  logY: {
    group: 'page', core: null, hash: 'logy', attribute: null,
    label: 'log scale', type: 'bool', default: true, ...onOff,
  },
  smooth: {
    group: 'page', core: null, hash: 'smooth', attribute: null,
    label: 'smoothed curve', type: 'bool', default: false, ...onOff,
  },
  epochMeans: {
    group: 'page', core: null, hash: 'epochs', attribute: null,
    label: 'epoch means', type: 'bool', default: false, ...onOff,
  },
  panel: {
    group: 'page', core: null, hash: 'panel', attribute: 'panel',
    label: 'panel', type: 'enum', default: 'predictions', ...oneOf(PANEL_NAMES),
  },
  sentence: {
    group: 'lesson', core: null, hash: 'sentence', attribute: null,
    label: 'sentence', type: 'text', default: DEFAULT_SENTENCE, ...textual(cleanSentence),
  },
  dk: {
    group: 'lesson', core: null, hash: 'dk', attribute: null,
    label: 'dk', type: 'int', default: 4, ...numeric([1, 16], '1'),
  },
  dv: {
    group: 'lesson', core: null, hash: 'dv', attribute: null,
    label: 'dv', type: 'int', default: 4, ...numeric([1, 16], '1'),
  },
  // View 2's mask, heads, positions and second sentence.
  lessonMask: {
    group: 'lesson', core: null, hash: 'lesson-mask', attribute: null,
    label: 'lesson mask', type: 'text', default: 'none', ...textual(cleanMask),
  },
  lessonWindow: {
    group: 'lesson', core: null, hash: 'lesson-window', attribute: null,
    label: 'window k', type: 'int', default: 2, ...numeric([1, MAX_MASK_TOKENS], '1'),
  },
  lessonHeads: {
    group: 'lesson', core: null, hash: 'lesson-heads', attribute: null,
    label: 'lesson heads', type: 'int', default: 1, ...numeric([1, 4], '1'),
  },
  lessonPositions: {
    group: 'lesson', core: null, hash: 'lesson-positions', attribute: null,
    label: 'lesson positions', type: 'bool', default: false, ...onOff,
  },
  secondSentence: {
    group: 'lesson', core: null, hash: 'second-sentence', attribute: null,
    label: 'second sentence', type: 'text', default: '', ...textual(cleanSecondSentence),
  },
  stage: {
    group: 'lesson', core: null, hash: 'stage', attribute: null,
    label: 'stage', type: 'int', default: 0, ...numeric([0, 9], '1'),
  },
  scaleDk: {
    group: 'lesson', core: null, hash: 'scale-dk', attribute: null,
    label: 'dk (√dk panel)', type: 'int', default: 16, ...numeric([1, 64], '1'),
  },
  logits: {
    group: 'lesson', core: null, hash: 'logits', attribute: null,
    label: 'logits', type: 'text', default: DEFAULT_LOGITS, ...textual(cleanLogits),
  },
  blendRow: {
    group: 'lesson', core: null, hash: 'blend-row', attribute: null,
    label: 'blend row', type: 'int', default: 0, ...numeric([0, TEXT_LIMITS.sentenceTokens - 1], '1'),
  },
  // View 3's norm and FFN: by default a LayerNorm and a GELU FFN, so that each of its stages has
  // a figure (the training view's default model has neither).
  blockNorm: {
    group: 'page', core: null, hash: 'block-norm', attribute: null,
    label: 'block norm', type: 'enum', default: 'layernorm', ...oneOf(CONFIG_ROWS.norm.values!),
  },
  blockFfn: {
    group: 'page', core: null, hash: 'block-ffn', attribute: null,
    label: 'block FFN', type: 'enum', default: 'gelu', ...oneOf(CONFIG_ROWS.ffn.values!),
  },
  mask: {
    group: 'ablation', core: 'mask', hash: 'mask', attribute: null,
    label: 'mask', type: 'enum', default: 'causal', ...oneOf(['causal', 'none', 'inverted']),
  },
  scaleScores: {
    group: 'ablation', core: 'scaleScores', hash: 'scale-scores', attribute: null,
    label: '1/sqrt(dk) scaling', type: 'bool', default: true, ...onOff,
  },
  headsOff: {
    group: 'ablation', core: 'headsOff', hash: 'heads-off', attribute: null,
    label: 'heads switched off', type: 'text', default: '', ...textual(cleanHeads),
  },
  headsFrozen: {
    group: 'ablation', core: 'headsFrozen', hash: 'heads-frozen', attribute: null,
    label: 'frozen heads', type: 'text', default: '', ...textual(cleanHeads),
  },
};

/** The table as a list, in hash order, each row with its key. */
export const SETTING_LIST: readonly Setting[] = (Object.keys(SETTINGS) as (keyof State)[]).map((key) => ({ key, ...SETTINGS[key] }) as Setting);

/** The row of a key. */
export const settingOf = <K extends keyof State>(key: K): Setting<K> => ({ key, ...SETTINGS[key] }) as Setting<K>;

/** Whether a setting applies to the model family: a config key to the families of its schema row,
 * any other setting to every family. */
export const appliesTo = (s: Pick<Setting, 'families'>, family: string): boolean => !s.families || s.families.includes(family);

/** The keys of one group, in table order. */
export const keysOf = (group: SettingGroup): readonly (keyof State)[] => SETTING_LIST.filter((s) => s.group === group).map((s) => s.key);

/** The curriculum's DemoConfig plus the lesson's defaults. */
export const DEFAULTS: Readonly<State> = Object.freeze(Object.fromEntries(SETTING_LIST.map((s) => [s.key, s.default])) as unknown as State);

/** Keys whose change needs a new Trainer (the core's config keys). */
export const CONFIG_KEYS = keysOf('config') as readonly (keyof TrainerConfig & keyof State)[];
/** When a config key matters, by JS key: the schema's applies_when (window: while attention is
 * window or strided), its key in JS. A key not listed always matters. */
export const APPLIES_WHEN: { readonly [K in keyof TrainerConfig]?: { key: keyof TrainerConfig; in: readonly string[] } } = Object.fromEntries(
  (CONFIG_SCHEMA as readonly ConfigKeySchema[]).flatMap((k) => {
    const on = k.applies_when && CONFIG_SCHEMA.find((r) => r.name === k.applies_when!.key);
    return on ? [[k.js, { key: on.js as keyof TrainerConfig, in: k.applies_when!.in }]] : [];
  }),
);

/** Whether a setting matters in state s: it applies to the model family, and its applies_when
 * holds (the controls of those that do not are hidden). */
export function applies(key: keyof State, s: Readonly<State>): boolean {
  if (!appliesTo(settingOf(key), s.family)) return false;
  const when = APPLIES_WHEN[key as keyof TrainerConfig];
  return !when || when.in.includes(String(s[when.key]));
}

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
  lessonWindow: range('lessonWindow'),
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
  return checkValue(settingOf(key), raw);
}

/** checkField for a row of the table (or one built like them). */
export function checkValue<K extends keyof State>(s: Setting<K>, raw: string): { value: State[K]; correction?: Correction } {
  const key = s.key;
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
      if ((s.exclusiveMin && n <= lo) || (s.exclusiveMax && n >= hi)) {
        return fix(fallback, `${n} is not in ${s.exclusiveMin ? '(' : '['}${lo}, ${hi}${s.exclusiveMax ? ')' : ']'}; using ${String(fallback)}`);
      }
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

/** The row whose hash key is name. */
export function settingByHash(name: string): Setting | undefined {
  return SETTING_LIST.find((s) => s.hash === name);
}
