// Presets: a few settings that set up one experiment, as a short URL hash (a link a lesson page can
// use), as the <attention-playground> attributes that do the same, and as the State they give. The
// configs and titles are the core's table (CORE_PRESETS, from presets()); the page adds only its
// lesson groups, sentences, and the view, panel and sample each opens.
// Every key and value goes through the key table (settings.ts), so a preset is exactly what its link
// opens: the preset's settings, and the defaults for everything else.
import { CORE_PRESETS } from '../core/config-schema';
import { CONFIG_KEYS, SETTINGS, type State } from './settings';
import { stateFromHash } from './state';

/** One preset: its link text, the lesson it belongs to, one sentence on what to watch, and the
 * settings it changes from the defaults. */
export interface Preset {
  id: string;
  title: string;
  lesson: Lesson;
  /** What the learner will see, in one sentence (the Start here button's text under the title). */
  sentence: string;
  settings: Partial<State>;
}

/** The course's lessons the presets belong to, in the course's order (the Start here groups). */
export const LESSONS = ['Attention, trained', 'Depth and the induction head', 'A small GPT on text', 'Both ways: masks and windows'] as const;
export type Lesson = (typeof LESSONS)[number];

/** The induction presets' sample: the run 5 12 20 8 29 16 twice. */
const INDUCTION_SAMPLE = '3 17 5 12 20 8 29 16 22 1 26 10 14 5 12 20 8 29 16 31 9';

/** What the page adds to each of the core's presets (CORE_PRESETS, whose titles and config keys are
 * the one declaration of both): its lesson group, one sentence on what to watch, and the view,
 * panel and sample it opens. */
const PAGE: Record<string, { lesson: Lesson; sentence: string; page?: Partial<State> }> = {
  // "One position back": the shift task on the default model. The page opens on it when its URL
  // has no hash (web/docs/page.md, "Start here", says why): within about 150 steps each head puts
  // its weight one position back, a stripe just under the diagonal of every heatmap, and the loss
  // falls from ln 64 to near 0 (seed 42: loss 0.006 at step 350 in node).
  shift: {
    lesson: 'Attention, trained',
    sentence: 'Each answer is the token before the current one: press Play and watch every head draw a stripe just under the diagonal.',
  },
  // "Watch an induction head form": two attention layers of two heads with the residual stream on
  // the induction task, sized as the PyTorch measurement (V 32, D 32, H 2, T 32, B 32,
  // Adam lr 5e-3) with the seed the core's convergence budget was measured on, and the token
  // embedding initialised at std 0.5 instead of the curriculum's 0.02: the head then forms at about
  // step 500 instead of 1,200-4,000 (8 seeds; see bench/results/induction.md, "Convergence
  // budget"), and on seed 0 one clean previous-token head forms (std 1 is a little faster but
  // splits that job between both layer-1 heads). The sample holds the run 5 12 20 8 29 16 twice, so
  // the heatmaps show both heads' patterns: one position back (layer 1), and from each token of
  // the second copy to the token after its first occurrence (layer 2).
  induction: {
    lesson: 'Depth and the induction head',
    sentence: 'The loss sits on a plateau, then drops within a few hundred steps as a head learns to look up what came next last time.',
    page: { sample: INDUCTION_SAMPLE },
  },
  // "Find the induction circuit": the induction preset with the "Look inside" panel open, so that
  // after training the learner finds the two heads with the lens, the attribution, the patching
  // and the circuits.
  'find-circuit': {
    lesson: 'Depth and the induction head',
    sentence: 'The same run with Look inside open: once it has trained, find its two heads with the lens, patching and circuits.',
    page: { sample: INDUCTION_SAMPLE, panel: 'inspect' },
  },
  // "Train a GPT on text": a small GPT-style model on the core's default text, one character per
  // token: 2 pre-norm blocks (LayerNorm, RoPE, GELU FFN, the residual stream), D 64, H 4, T 64,
  // B 16, Adam lr 3e-3. In node its validation loss is below the unigram line by step 100 (seed 0:
  // 2.33 bits/char at step 100 and 0.91 at step 500, against 4.31 for the unigram).
  text: {
    lesson: 'A small GPT on text',
    sentence: 'Two blocks read English one character at a time and soon beat a guess that only knows how common each letter is.',
  },
  // "Fill in the blanks": BERT's objective on the core's default text, with the Fill in the blanks
  // panel open. The model is the text preset's GPT in size and block at T 32; RoPE, not learned
  // positions, because without the causal mask only the positions tell a bidirectional model where
  // it is, and a learned table starting at std 0.02 barely learns in 1000 steps
  // (bench/results/mlm.md). Measured there at 2000 steps: a blanked first letter of a word right
  // 88% of the time (a causal model of the same size, from the left: 45%).
  fill: {
    lesson: 'Both ways: masks and windows',
    sentence: 'A model that sees both sides of a blank guesses the missing letter far more often than one reading from the left.',
    page: { panel: 'fill' },
  },
  // "The course's capstone GPT, number for number": the course's lesson 14 model and training as
  // the lesson has them (learned positions, pre-norm RMSNorm, SwiGLU 170 wide, no biases, the head
  // tied to the embedding, AdamW with weight decay 0.1 and clipping at 1.0, lr 3e-4) on its 999
  // characters of Coriolanus, the core's built-in text "shakespeare": 154,560 parameters, a step-0
  // loss near 41 (nn.Embedding's N(0, 1) init), and by step 500 a validation loss near 2.9 above
  // the training loss (bench/README.md, "The course's capstone"). Its weights file loads into the
  // lesson's class, and the lesson's file imports here.
  capstone: {
    lesson: 'A small GPT on text',
    sentence: "The course's own GPT, tied head and all: 154,560 parameters on 999 characters of Shakespeare, overfitting as the lesson's does.",
  },
  // "A window that grows with depth": the copy task at T 12 (the answer lies 5 positions back) with
  // a sliding window of 3 keys (2 positions back per layer) and 3 layers, which reach 6 >= 5 and
  // learn the task (eval accuracy 1.0 by step 350 on seeds 1-3); 1 or 2 layers reach 2 or 4 and
  // stay at chance (bench/results/mlm.md, "A window that grows with depth"). The Receptive field
  // panel is open.
  'window-depth': {
    lesson: 'Both ways: masks and windows',
    sentence: 'Each layer sees 3 keys, yet three layers reach 6 positions back and learn to copy; the receptive field shows how far.',
    page: { panel: 'receptive' },
  },
};

/** The core's preset `id` with what the page adds (PAGE). */
function fromCore(id: string): Preset {
  const p = CORE_PRESETS.find((x) => x.name === id);
  const page = PAGE[id];
  if (!p || !page) throw new Error(`the core or the page has no preset ${id}`);
  return { id, title: p.title, lesson: page.lesson, sentence: page.sentence, settings: { view: 'train', ...(p.config as Partial<State>), ...page.page } };
}

/** "One position back" (PAGE.shift). */
export const SHIFT_PRESET: Preset = fromCore('shift');
/** "Watch an induction head form" (PAGE.induction). */
export const INDUCTION_PRESET: Preset = fromCore('induction');
/** "Train a GPT on text" (PAGE.text). */
export const TEXT_PRESET: Preset = fromCore('text');
/** "Find the induction circuit" (PAGE['find-circuit']). */
export const FIND_CIRCUIT_PRESET: Preset = fromCore('find-circuit');
/** "Fill in the blanks" (PAGE.fill). */
export const FILL_PRESET: Preset = fromCore('fill');
/** "A window that grows with depth" (PAGE['window-depth']). */
export const WINDOW_DEPTH_PRESET: Preset = fromCore('window-depth');
/** "The course's capstone GPT, number for number" (PAGE.capstone). */
export const CAPSTONE_PRESET: Preset = fromCore('capstone');

/** Every preset the training view offers. */
export const PRESETS: readonly Preset[] = [SHIFT_PRESET, INDUCTION_PRESET, FIND_CIRCUIT_PRESET, TEXT_PRESET, CAPSTONE_PRESET, FILL_PRESET, WINDOW_DEPTH_PRESET];

/** What the page opens on when its URL has no hash (a first visit): the shift preset. */
export const START_PRESET = SHIFT_PRESET;

const text = (v: State[keyof State]) => (typeof v === 'boolean' ? (v ? '1' : '0') : String(v));

/** The preset's URL hash (without '#'): its settings under their hash keys, in table order. */
export function presetHash(p: Preset): string {
  const params = new URLSearchParams();
  for (const key of Object.keys(SETTINGS) as (keyof State)[]) {
    const v = p.settings[key];
    if (v !== undefined) params.set(SETTINGS[key].hash, text(v));
  }
  return params.toString();
}

/** The preset as <attention-playground> attributes (name -> value); every setting a preset
 * changes has one. */
export function presetAttributes(p: Preset): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of Object.keys(SETTINGS) as (keyof State)[]) {
    const v = p.settings[key];
    const name = SETTINGS[key].attribute;
    if (v === undefined) continue;
    if (name === null) throw new Error(`preset ${p.id}: ${key} has no attribute`);
    out[name] = text(v);
  }
  return out;
}

/** The State the preset's link opens (its settings; the defaults for the rest). */
export function presetState(p: Preset): State {
  return stateFromHash(`#${presetHash(p)}`).state;
}

/** Whether state s runs the preset's model: every config key as the preset's link sets it, and
 * its panel when it names one. */
export function runsPreset(p: Preset, s: Readonly<State>): boolean {
  const want = presetState(p);
  return CONFIG_KEYS.every((k) => s[k] === want[k]) && (p.settings.panel === undefined || s.panel === p.settings.panel);
}
