// The Export / import panel's model: the files it writes (the run's JSON from the Store's settings,
// the attention as CSV, each head's or the average's weights for the pictures), and the files it
// reads (which file is which, the JSON's checks, the run to import). Every problem with a file is
// an ImportProblem whose message is the one sentence shown.
import type { Controller } from '../../client/controller';
import { headOrAverage } from '../../model/heads';
import { averageLabel, headFileName, headLabel, layerWeights } from '../../model/layers';
import { MAX_IMPORT_BYTES, noAblation, type Ablation, type ImportRun, type Snapshot, type TrainerConfigMsg } from '../../model/protocol';
import { CONFIG_KEYS, checkField, DEFAULTS, SETTINGS } from '../../settings/settings';
import { ablationOf, totalHeads, trainerConfig } from '../../settings/state';

/** The JSON file's format field. */
export const EXPORT_FORMAT = 'attention-playground/1';

/** Thrown for a file the import refuses; the message is the sentence shown. */
export class ImportProblem extends Error {}

/** One exported picture: its file-name part, its title and its (T,T) weights. */
export interface ExportFigure {
  name: string;
  title: string;
  values: Float32Array;
}

/** The pictures of a snapshot: per layer each head, then the layer's average ("head-1".. and
 * "average" with one layer; "layer-1-head-1".. and "layer-1-average" with several). */
export function exportFigures(s: Snapshot): ExportFigure[] {
  const { L, H, T } = s;
  const out: ExportFigure[] = [];
  for (let l = 0; l < L; ++l) {
    const w = layerWeights(s.weights, L, H, T, l);
    for (let k = 0; k <= H; ++k) {
      const g = l * H + k;
      out.push({
        name: k < H ? headFileName(g, H, L) : L > 1 ? `layer-${l + 1}-average` : 'average',
        title: k < H ? headLabel(g, H, L) : averageLabel(l, L),
        values: headOrAverage(w, H, T, k),
      });
    }
  }
  return out;
}

/** The attention as CSV: one row per (head, query, key), head the global index l * H + h (the
 * core's order); under the causal mask, masked cells (key > query) have weight 0. */
export function attentionCsv(s: Snapshot): string {
  const { T } = s;
  const H = s.L * s.H;
  const lines = ['head,query,key,query_token,key_token,weight'];
  for (let hh = 0; hh < H; ++hh) {
    for (let i = 0; i < T; ++i) {
      for (let j = 0; j < T; ++j) {
        const w = s.mask === 'causal' && j > i ? 0 : s.weights[(hh * T + i) * T + j];
        lines.push(`${hh},${i},${j},${s.ids[i]},${s.ids[j]},${w}`);
      }
    }
  }
  return `${lines.join('\n')}\n`;
}

/** The run's JSON: the Store's config and interventions (for the run's heads) with the snapshot's
 * step, loss history and sample. */
export function runJson(ctl: Controller, s: Snapshot): string {
  const settings = ctl.store.state;
  return `${JSON.stringify(
    {
      format: EXPORT_FORMAT,
      config: trainerConfig(settings),
      step: s.step,
      lossHistory: Array.from(s.history),
      historyStride: s.historyStride,
      sample: Array.from(s.ids),
      initLoss: Number.isFinite(s.initLoss) ? s.initLoss : null,
      ablation: ablationOf(settings, s.L * s.H),
    },
    null,
    1,
  )}\n`;
}

const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v);

/** The JSON's optional "ablation" (files written before it existed have none: the intact layer);
 * H: every layer's heads. */
function parseAblation(v: unknown, H: number): Ablation {
  if (v === undefined) return noAblation(H);
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new ImportProblem('The JSON file\'s "ablation" is not an object.');
  const a = v as Record<string, unknown>;
  const heads = (key: 'headsOff' | 'headsFrozen') => {
    const x = a[key];
    if (!Array.isArray(x) || x.length !== H || !x.every((b) => typeof b === 'boolean')) {
      throw new ImportProblem(`The JSON file's "ablation.${key}" is not a list of ${H} true/false values (one per head of every layer).`);
    }
    return x as boolean[];
  };
  if (a.mask !== 'causal' && a.mask !== 'none' && a.mask !== 'inverted') throw new ImportProblem(`The JSON file's "ablation.mask" ${JSON.stringify(a.mask) ?? '(missing)'} is not one of causal, none, inverted.`);
  if (typeof a.scaleScores !== 'boolean') throw new ImportProblem('The JSON file\'s "ablation.scaleScores" is not true or false.');
  return { headsOff: heads('headsOff'), headsFrozen: heads('headsFrozen'), scaleScores: a.scaleScores, mask: a.mask };
}

/** The config keys of the format's first files, which every file has; a key added since may be
 * missing from an older file and takes its default (the one-layer model, the block's settings...). */
const FIRST_KEYS: readonly string[] = ['vocabSize', 'dModel', 'nHeads', 'seqLen', 'batchSize', 'lr', 'seed', 'attnDropout', 'outDropout', 'task'];

/** The JSON's config: every config key of the table, typed and within the page's bounds. */
function parseConfig(c: unknown): TrainerConfigMsg {
  if (typeof c !== 'object' || c === null || Array.isArray(c)) throw new ImportProblem('The JSON file has no "config" object.');
  const cfg = c as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key of CONFIG_KEYS) {
    const v = cfg[key] === undefined && !FIRST_KEYS.includes(key) ? DEFAULTS[key] : cfg[key];
    const values = SETTINGS[key].values;
    if (SETTINGS[key].type === 'bool') {
      if (typeof v !== 'boolean') throw new ImportProblem(`The JSON config's ${key} is ${JSON.stringify(v) ?? 'missing'}, not true or false.`);
      out[key] = v;
      continue;
    }
    if (values) {
      if (typeof v !== 'string' || !values.includes(v)) throw new ImportProblem(`The JSON config's ${key} ${JSON.stringify(v) ?? '(missing)'} is not one of ${values.join(', ')}.`);
      out[key] = v;
      continue;
    }
    if (typeof v !== 'number' || !Number.isFinite(v)) throw new ImportProblem(`The JSON config's ${key} is ${JSON.stringify(v) ?? 'missing'}, not a number.`);
    const { correction } = checkField(key, String(v));
    if (correction) throw new ImportProblem(`The JSON config's ${correction.message.replace(/; using .*$/, '')}.`);
    out[key] = v;
  }
  const config = out as unknown as TrainerConfigMsg;
  if (config.dModel % config.nHeads !== 0) throw new ImportProblem(`The JSON config's nHeads (${config.nHeads}) does not divide dModel (${config.dModel}).`);
  if (config.kvHeads !== 0 && config.nHeads % config.kvHeads !== 0) throw new ImportProblem(`The JSON config's kvHeads (${config.kvHeads}) does not divide nHeads (${config.nHeads}).`);
  if (config.maxSeqLen !== 0 && config.maxSeqLen < config.seqLen) throw new ImportProblem(`The JSON config's maxSeqLen (${config.maxSeqLen}) is under seqLen (${config.seqLen}).`);
  if (!config.residual && (config.norm !== 'none' || config.ffn !== 'none')) throw new ImportProblem(`The JSON config's norm (${config.norm}) and ffn (${config.ffn}) need residual true.`);
  return config;
}

/** Parses and checks the JSON file; throws ImportProblem naming what is wrong. */
export function parseRunJson(text: string): { config: TrainerConfigMsg; step: number; history: Float32Array; historyStride: number; sample: number[]; ablation: Ablation } {
  let o: unknown;
  try {
    o = JSON.parse(text);
  } catch {
    throw new ImportProblem('The JSON file is not valid JSON.');
  }
  if (typeof o !== 'object' || o === null || Array.isArray(o)) throw new ImportProblem('The JSON file does not hold an object.');
  const r = o as Record<string, unknown>;
  if (r.format !== EXPORT_FORMAT) throw new ImportProblem(`The JSON file's format is ${JSON.stringify(r.format) ?? 'missing'}, not "${EXPORT_FORMAT}".`);
  const config = parseConfig(r.config);
  if (!isInt(r.step) || r.step < 0) throw new ImportProblem('The JSON file\'s "step" is not a whole number >= 0.');
  if (!isInt(r.historyStride) || r.historyStride < 1) throw new ImportProblem('The JSON file\'s "historyStride" is not a whole number >= 1.');
  if (!Array.isArray(r.lossHistory) || !r.lossHistory.every((x) => typeof x === 'number' && Number.isFinite(x))) {
    throw new ImportProblem('The JSON file\'s "lossHistory" is not a list of finite numbers.');
  }
  if (r.lossHistory.length > Math.ceil(r.step / r.historyStride)) throw new ImportProblem(`The JSON file's "lossHistory" has ${r.lossHistory.length} losses, more than its ${r.step} steps.`);
  const ids = r.sample;
  if (!Array.isArray(ids) || ids.length < 1 || ids.length > config.seqLen || !ids.every((x) => isInt(x) && x >= 0 && x < config.vocabSize)) {
    throw new ImportProblem(`The JSON file's "sample" is not a list of 1 to ${config.seqLen} token ids in [0, ${config.vocabSize}).`);
  }
  const ablation = parseAblation(r.ablation, totalHeads(config));
  return { config, step: r.step, history: Float32Array.from(r.lossHistory as number[]), historyStride: r.historyStride, sample: ids as number[], ablation };
}

/** Which of up to two files is the JSON and which the weights (by name, else by the first byte). */
export async function sortFiles(files: File[]): Promise<{ json: File | null; weights: File | null }> {
  if (files.length > 2) throw new ImportProblem(`Import takes at most 2 files (the weights and the JSON), not ${files.length}.`);
  let json: File | null = null;
  let weights: File | null = null;
  for (const f of files) {
    if (f.size > MAX_IMPORT_BYTES) throw new ImportProblem(`The file ${f.name} has ${f.size} bytes, more than the 5 MB (${MAX_IMPORT_BYTES} bytes) an import accepts.`);
    const head = new Uint8Array(await f.slice(0, 1).arrayBuffer());
    const isJson = /\.json$/i.test(f.name) || (!/\.safetensors$/i.test(f.name) && head[0] === 0x7b);
    if (isJson) {
      if (json) throw new ImportProblem('Two JSON files were given; import takes one JSON file and one weights file.');
      json = f;
    } else {
      if (weights) throw new ImportProblem('Two weights files were given; import takes one JSON file and one weights file.');
      weights = f;
    }
  }
  return { json, weights };
}

/** The run to import from the files (weights plus JSON, either alone). */
export async function importRunOf(json: File | null, weights: File | null): Promise<ImportRun> {
  const run: ImportRun = {};
  if (json) {
    const r = parseRunJson(await json.text());
    run.config = r.config;
    run.sample = r.sample;
    run.ablation = r.ablation;
    run.past = { step: r.step, history: r.history, historyStride: r.historyStride };
  }
  if (weights) run.weights = new Uint8Array(await weights.arrayBuffer());
  return run;
}
