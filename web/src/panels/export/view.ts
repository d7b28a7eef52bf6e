// The training view's "Export / import" panel: downloads the weights (safetensors, from the core),
// the config and loss history (JSON), every heatmap (PNG and SVG) and the attention (CSV); imports
// a run from the weights plus the JSON by a file button or drag-and-drop. Every problem with a
// file is one sentence next to the panel (textContent only); the current run stays as it was.
// This file is the view; model.ts writes and reads the files. An imported run's settings go to the
// Store (Controller.importRun).
import type { Controller } from '../../client/controller';
import { RequestError } from '../../client/controller';
import { drawHeatmap } from '../../draw/heatmap';
import { heatmapSvg } from '../../draw/heatmap-svg';
import { hiddenCells } from '../../model/heads';
import type { Snapshot } from '../../model/protocol';
import { tokenLabels } from '../../model/text';
import { h } from '../../ui/dom';
import { fillPanel, type PanelOptions } from '../../ui/panel';
import { attentionCsv, exportFigures, importRunOf, ImportProblem, runJson, sortFiles } from './model';
import { exportWeightsRequest } from './request';

const BASE = 'attention-playground';

function download(name: string, data: BlobPart, type: string): void {
  const url = URL.createObjectURL(new Blob([data], { type }));
  const a = h('a', { href: url, download: name, hidden: true });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

/** Fills slot (the panel's section, placed by the training view); returns its cleanup. */
export function mount(slot: HTMLElement, ctl: Controller, _opts: PanelOptions): () => void {
  const btn = (action: string, text: string) => h('button', { type: 'button', 'data-export': action, text });
  const weightsBtn = btn('weights', 'Weights (.safetensors)');
  const jsonBtn = btn('json', 'Config + loss (.json)');
  const pngBtn = btn('png', 'Heatmaps (.png)');
  const svgBtn = btn('svg', 'Heatmaps (.svg)');
  const csvBtn = btn('csv', 'Attention (.csv)');
  const fileInput = h('input', { type: 'file', multiple: true, accept: '.json,.safetensors,application/json', 'data-import': 'file', 'aria-label': 'Import files: the weights (.safetensors) and the config (.json)', hidden: true });
  const importBtn = h('button', { type: 'button', 'data-import': 'button', text: 'Import weights + JSON…' });
  const message = h('p', { class: 'export-msg', role: 'status', 'aria-live': 'polite' });
  const panel = fillPanel(
    slot,
    {},
    'Export / import',
    h('div', { class: 'buttons', role: 'group', 'aria-label': 'Export' }, weightsBtn, jsonBtn, pngBtn, svgBtn, csvBtn),
    h('div', { class: 'buttons', role: 'group', 'aria-label': 'Import' }, importBtn, fileInput),
    h('p', { class: 'hint', text: 'Import both files at once (or drop them here) to restore a run; the JSON alone sets the config; weights alone must match the current config.' }),
    message,
  );

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

  async function guarded(f: () => Promise<void>): Promise<void> {
    try {
      await f();
    } catch (e) {
      say(e instanceof Error ? e.message : String(e));
    }
  }

  weightsBtn.addEventListener('click', () =>
    void guarded(async () => {
      if (ctl.status === 'playing') await ctl.pause();
      const { bytes } = await ctl.call(exportWeightsRequest);
      download(`${BASE}.safetensors`, bytes as Uint8Array<ArrayBuffer>, 'application/octet-stream');
      say('');
    }),
  );
  jsonBtn.addEventListener('click', () =>
    void guarded(async () => {
      download(`${BASE}.json`, runJson(ctl, await current()), 'application/json');
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
      const labels = tokenLabels(s.ids, s.text?.corpus.vocab);
      for (const f of exportFigures(s)) {
        const canvas = document.createElement('canvas');
        drawHeatmap(canvas, Math.max(240, 26 + 24 * s.T), { values: f.values, rows: s.T, cols: s.T, rowLabels: labels, colLabels: labels, causal: s.mask === 'causal', hidden: hiddenCells(s.mask, s.visible, s.T), textColour: '#222' });
        const ctx = canvas.getContext('2d')!;
        // An opaque background, so the labels read in any image viewer.
        ctx.globalCompositeOperation = 'destination-over';
        ctx.setTransform(1, 0, 0, 1, 0, 0);
        ctx.fillStyle = '#fff';
        ctx.fillRect(0, 0, canvas.width, canvas.height);
        const blob = await new Promise<Blob | null>((r) => canvas.toBlob(r, 'image/png'));
        if (!blob) throw new Error('The browser could not encode a PNG.');
        download(`${BASE}-${f.name}.png`, blob, 'image/png');
      }
      say('');
    }),
  );
  svgBtn.addEventListener('click', () =>
    void guarded(async () => {
      const s = await current();
      const labels = tokenLabels(s.ids, s.text?.corpus.vocab);
      for (const f of exportFigures(s)) {
        const text = heatmapSvg({ title: f.title, values: f.values, rows: s.T, cols: s.T, rowLabels: labels, colLabels: labels, causal: s.mask === 'causal', hidden: hiddenCells(s.mask, s.visible, s.T)?.cells ?? null });
        download(`${BASE}-${f.name}.svg`, text, 'image/svg+xml');
      }
      say('');
    }),
  );

  async function importFiles(files: File[]): Promise<void> {
    if (files.length === 0) return;
    const { json, weights } = await sortFiles(files);
    const run = await importRunOf(json, weights);
    try {
      await ctl.importRun(run);
    } catch (e) {
      if (e instanceof RequestError && weights) {
        const why = /[.!?]$/.test(e.message) ? e.message : `${e.message}.`;
        throw new ImportProblem(`The weights file ${weights.name} could not be loaded${json ? ' with that config' : ' into the current model'}: ${why}`);
      }
      throw e;
    }
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
    panel.replaceChildren();
  };
}
