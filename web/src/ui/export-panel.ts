// The training view's "Export / import" panel: downloads the weights (safetensors, from the core),
// the config and loss history (JSON), every heatmap (PNG and SVG) and the attention (CSV); imports
// a run from the weights plus the JSON by a file button or drag-and-drop. Every problem with a
// file is one sentence next to the panel (textContent only); the current run stays as it was.
import type { Controller } from '../controller';
import { RequestError } from '../controller';
import { drawHeatmap } from '../draw/heatmap';
import { heatmapSvg } from '../draw/heatmap-svg';
import { headOrAverage } from '../heads';
import { MAX_IMPORT_BYTES, noAblation, type Ablation, type ImportRun, type Snapshot, type TrainerConfigMsg } from '../protocol';
import { checkField, CONFIG_KEYS, TASKS, type State } from '../state';
import { h } from './dom';

/** The JSON file's format field. */
export const EXPORT_FORMAT = 'attention-playground/1';
const BASE = 'attention-playground';

/** What the page applies to its settings after a successful import. */
export type ApplyImported = (config: TrainerConfigMsg, sample: number[], ablation: Ablation) => void;

function download(name: string, data: BlobPart, type: string): void {
  const url = URL.createObjectURL(new Blob([data], { type }));
  const a = h('a', { href: url, download: name, hidden: true });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

/** Head hh's (T,T) weights, or the average of the heads for hh === H. */
const headValues = (s: Snapshot, hh: number): Float32Array => headOrAverage(s.weights, s.H, s.T, hh);

const headName = (s: Snapshot, hh: number) => (hh < s.H ? `head-${hh + 1}` : 'average');
const headTitle = (s: Snapshot, hh: number) => (hh < s.H ? `Head ${hh + 1}` : 'Average of heads');

/** The attention as CSV: one row per (head, query, key); under the causal mask, masked cells
 * (key > query) have weight 0. */
export function attentionCsv(s: Snapshot): string {
  const { H, T } = s;
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

/** Thrown for a file the import refuses; the message is the sentence shown. */
class ImportProblem extends Error {}

const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v);

/** Parses and checks the JSON file; throws ImportProblem naming what is wrong. */
/** The JSON's optional "ablation" (files written before it existed have none: the intact layer). */
function parseAblation(v: unknown, H: number): Ablation {
  if (v === undefined) return noAblation(H);
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new ImportProblem('The JSON file\'s "ablation" is not an object.');
  const a = v as Record<string, unknown>;
  const heads = (key: 'zeroed' | 'frozen') => {
    const x = a[key];
    if (!Array.isArray(x) || x.length !== H || !x.every((b) => typeof b === 'boolean')) {
      throw new ImportProblem(`The JSON file's "ablation.${key}" is not a list of ${H} true/false values (one per head).`);
    }
    return x as boolean[];
  };
  if (a.mask !== 'causal' && a.mask !== 'none' && a.mask !== 'inverted') throw new ImportProblem(`The JSON file's "ablation.mask" ${JSON.stringify(a.mask) ?? '(missing)'} is not one of causal, none, inverted.`);
  if (typeof a.scaleScores !== 'boolean') throw new ImportProblem('The JSON file\'s "ablation.scaleScores" is not true or false.');
  return { zeroed: heads('zeroed'), frozen: heads('frozen'), scaleScores: a.scaleScores, mask: a.mask };
}

function parseRunJson(text: string): { config: TrainerConfigMsg; step: number; history: Float32Array; historyStride: number; sample: number[]; ablation: Ablation } {
  let o: unknown;
  try {
    o = JSON.parse(text);
  } catch {
    throw new ImportProblem('The JSON file is not valid JSON.');
  }
  if (typeof o !== 'object' || o === null || Array.isArray(o)) throw new ImportProblem('The JSON file does not hold an object.');
  const r = o as Record<string, unknown>;
  if (r.format !== EXPORT_FORMAT) throw new ImportProblem(`The JSON file's format is ${JSON.stringify(r.format) ?? 'missing'}, not "${EXPORT_FORMAT}".`);
  const c = r.config;
  if (typeof c !== 'object' || c === null || Array.isArray(c)) throw new ImportProblem('The JSON file has no "config" object.');
  const cfg = c as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key of CONFIG_KEYS as readonly (keyof State)[]) {
    const v = cfg[key];
    if (key === 'task') {
      if (typeof v !== 'string' || !(v in TASKS)) throw new ImportProblem(`The JSON config's task ${JSON.stringify(v) ?? '(missing)'} is not one of ${Object.keys(TASKS).join(', ')}.`);
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
  const ablation = parseAblation(r.ablation, config.nHeads);
  return { config, step: r.step, history: Float32Array.from(r.lossHistory as number[]), historyStride: r.historyStride, sample: ids as number[], ablation };
}

/** Mounts the panel into parent (the training view's plots column). Returns the unmount function. */
export function mountExportPanel(parent: HTMLElement, ctl: Controller, apply: ApplyImported): () => void {
  const btn = (action: string, text: string) => h('button', { type: 'button', 'data-export': action, text });
  const weightsBtn = btn('weights', 'Weights (.safetensors)');
  const jsonBtn = btn('json', 'Config + loss (.json)');
  const pngBtn = btn('png', 'Heatmaps (.png)');
  const svgBtn = btn('svg', 'Heatmaps (.svg)');
  const csvBtn = btn('csv', 'Attention (.csv)');
  const fileInput = h('input', { type: 'file', multiple: true, accept: '.json,.safetensors,application/json', 'data-import': 'file', 'aria-label': 'Import files: the weights (.safetensors) and the config (.json)', hidden: true });
  const importBtn = h('button', { type: 'button', 'data-import': 'button', text: 'Import weights + JSON…' });
  const message = h('p', { class: 'export-msg', role: 'status', 'aria-live': 'polite' });
  const panel = h(
    'section',
    { class: 'panel export-panel', 'aria-label': 'Export / import' },
    h('div', { class: 'panel-head' }, h('h2', { text: 'Export / import' })),
    h('div', { class: 'buttons', role: 'group', 'aria-label': 'Export' }, weightsBtn, jsonBtn, pngBtn, svgBtn, csvBtn),
    h('div', { class: 'buttons', role: 'group', 'aria-label': 'Import' }, importBtn, fileInput),
    h('p', { class: 'hint', text: 'Import both files at once (or drop them here) to restore a run; the JSON alone sets the config; weights alone must match the current config.' }),
    message,
  );
  parent.append(panel);

  const say = (text: string, ok = false) => {
    message.textContent = text;
    message.dataset.state = text ? (ok ? 'ok' : 'error') : '';
  };

  async function current(): Promise<Snapshot> {
    if (ctl.status === 'playing') await ctl.pause();
    const s = ctl.snapshot;
    if (!s) throw new ImportProblem('There is no run to export yet.');
    return s;
  }

  function runJson(s: Snapshot, config: TrainerConfigMsg): string {
    return `${JSON.stringify(
      {
        format: EXPORT_FORMAT,
        config,
        step: s.step,
        lossHistory: Array.from(s.history),
        historyStride: s.historyStride,
        sample: Array.from(s.ids),
        initLoss: Number.isFinite(s.initLoss) ? s.initLoss : null,
        ablation: ctl.currentAblation ?? noAblation(config.nHeads),
      },
      null,
      1,
    )}\n`;
  }

  async function guarded(f: () => Promise<void>): Promise<void> {
    try {
      await f();
    } catch (e) {
      say(e instanceof Error ? e.message : String(e));
    }
  }

  weightsBtn.addEventListener('click', () =>
    void guarded(async () => {
      const { bytes } = await ctl.exportWeights();
      download(`${BASE}.safetensors`, bytes as Uint8Array<ArrayBuffer>, 'application/octet-stream');
      say('');
    }),
  );
  jsonBtn.addEventListener('click', () =>
    void guarded(async () => {
      const s = await current();
      const cfg = ctl.currentConfig;
      if (!cfg) throw new ImportProblem('There is no run to export yet.');
      download(`${BASE}.json`, runJson(s, cfg), 'application/json');
      say('');
    }),
  );
  csvBtn.addEventListener('click', () =>
    void guarded(async () => {
      download(`${BASE}-attention.csv`, attentionCsv(await current()), 'text/csv');
      say('');
    }),
  );
  pngBtn.addEventListener('click', () =>
    void guarded(async () => {
      const s = await current();
      const labels = Array.from(s.ids, String);
      for (let hh = 0; hh <= s.H; ++hh) {
        const canvas = document.createElement('canvas');
        drawHeatmap(canvas, Math.max(240, 26 + 24 * s.T), { values: headValues(s, hh), rows: s.T, cols: s.T, rowLabels: labels, colLabels: labels, causal: s.mask === 'causal', textColour: '#222' });
        const ctx = canvas.getContext('2d')!;
        // An opaque background, so the labels read in any image viewer.
        ctx.globalCompositeOperation = 'destination-over';
        ctx.setTransform(1, 0, 0, 1, 0, 0);
        ctx.fillStyle = '#fff';
        ctx.fillRect(0, 0, canvas.width, canvas.height);
        const blob = await new Promise<Blob | null>((r) => canvas.toBlob(r, 'image/png'));
        if (!blob) throw new Error('The browser could not encode a PNG.');
        download(`${BASE}-${headName(s, hh)}.png`, blob, 'image/png');
      }
      say('');
    }),
  );
  svgBtn.addEventListener('click', () =>
    void guarded(async () => {
      const s = await current();
      const labels = Array.from(s.ids, String);
      for (let hh = 0; hh <= s.H; ++hh) {
        const text = heatmapSvg({ title: headTitle(s, hh), values: headValues(s, hh), rows: s.T, cols: s.T, rowLabels: labels, colLabels: labels, causal: s.mask === 'causal' });
        download(`${BASE}-${headName(s, hh)}.svg`, text, 'image/svg+xml');
      }
      say('');
    }),
  );

  async function importFiles(files: File[]): Promise<void> {
    if (files.length === 0) return;
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
    const run: ImportRun = {};
    if (json) {
      const r = parseRunJson(await json.text());
      run.config = r.config;
      run.sample = r.sample;
      run.ablation = r.ablation;
      run.past = { step: r.step, history: r.history, historyStride: r.historyStride };
    }
    if (weights) run.weights = new Uint8Array(await weights.arrayBuffer());
    try {
      await ctl.importRun(run);
    } catch (e) {
      if (e instanceof RequestError && weights) {
        const why = /[.!?]$/.test(e.message) ? e.message : `${e.message}.`;
        throw new ImportProblem(`The weights file ${weights.name} could not be loaded${json ? ' with that config' : ' into the current model'}: ${why}`);
      }
      throw e;
    }
    if (run.config && run.sample) apply(run.config, run.sample, run.ablation ?? noAblation(run.config.nHeads));
    say(
      weights && json ? `Restored the run from ${weights.name} and ${json.name} (step ${ctl.snapshot?.step ?? 0}).` : json ? `Applied the config from ${json.name} (step 0).` : `Loaded the weights from ${weights!.name}.`,
      true,
    );
  }

  importBtn.addEventListener('click', () => fileInput.click());
  fileInput.addEventListener('change', () => {
    const files = Array.from(fileInput.files ?? []);
    fileInput.value = '';
    void guarded(() => importFiles(files));
  });
  panel.addEventListener('dragover', (ev) => {
    if (!ev.dataTransfer?.types.includes('Files')) return;
    ev.preventDefault();
    ev.dataTransfer.dropEffect = 'copy';
    panel.classList.add('drop-target');
  });
  panel.addEventListener('dragleave', () => panel.classList.remove('drop-target'));
  panel.addEventListener('drop', (ev) => {
    ev.preventDefault();
    panel.classList.remove('drop-target');
    void guarded(() => importFiles(Array.from(ev.dataTransfer?.files ?? [])));
  });

  const sync = () => {
    const busy = ctl.status === 'loading' || ctl.status === 'crashed' || !ctl.snapshot;
    for (const b of [weightsBtn, jsonBtn, pngBtn, svgBtn, csvBtn, importBtn]) b.disabled = busy;
  };
  const unsubscribe = ctl.subscribe(sync);
  sync();
  return () => {
    unsubscribe();
    panel.remove();
  };
}
