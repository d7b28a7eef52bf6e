// View 1, "Multi-head attention, trained": the controls, the run buttons and readout, the live
// loss chart and one heatmap per head plus the head average. Binds the Store and the Controller
// to the DOM; draws through the drawing modules.
import type { Controller, Problem } from '../controller';
import { drawHeatmap, drawLegendBar, drawMaskedSwatch, type HeatmapLayout, cellAt } from '../draw/heatmap';
import { LossChart } from '../draw/loss-chart';
import { headAverage, headWeights } from '../heads';
import { ablationOf, ablationState, checkField, LIMITS, parseSample, trainerConfig, CONFIG_KEYS, TASKS, type State } from '../state';
import type { Store } from '../store';
import { fmtLoss, h, uniqueId } from './dom';
import { mountExportPanel } from './export-panel';
import type { PanelOptions } from './panel';

interface ControlSpec {
  key: keyof State;
  label: string;
  /** The core's name for the key, as in its error messages. */
  coreKey: string;
  min?: number;
  max?: number;
  step?: string;
  options?: string[];
}

const CONTROLS: ControlSpec[] = [
  { key: 'vocabSize', coreKey: 'vocabSize', label: 'vocab', min: LIMITS.vocabSize[0], max: LIMITS.vocabSize[1], step: '1' },
  { key: 'dModel', coreKey: 'dModel', label: 'd_model', min: LIMITS.dModel[0], max: LIMITS.dModel[1], step: '2' },
  { key: 'nHeads', coreKey: 'nHeads', label: 'heads', min: LIMITS.nHeads[0], max: LIMITS.nHeads[1], step: '1' },
  { key: 'seqLen', coreKey: 'seqLen', label: 'seq_len', min: LIMITS.seqLen[0], max: LIMITS.seqLen[1], step: '1' },
  { key: 'batchSize', coreKey: 'batchSize', label: 'batch', min: LIMITS.batchSize[0], max: LIMITS.batchSize[1], step: '1' },
  { key: 'lr', coreKey: 'lr', label: 'learning rate', min: 0, max: LIMITS.lrMax, step: 'any' },
  { key: 'seed', coreKey: 'seed', label: 'seed', min: LIMITS.seed[0], max: LIMITS.seed[1], step: '1' },
  { key: 'attnDropout', coreKey: 'attnDropout', label: 'attention dropout', min: 0, max: LIMITS.attnDropout[1], step: '0.05' },
  { key: 'outDropout', coreKey: 'outDropout', label: 'output dropout', min: 0, max: LIMITS.outDropout[1], step: '0.05' },
  { key: 'task', coreKey: 'task', label: 'task', options: Object.keys(TASKS) },
];

/** With the heatmaps hidden (no first draw), the learning panels start this long after the first snapshot. */
const PANEL_START_FALLBACK_MS = 300;

/** A mounted view 1: build the first model once the worker is up; destroy to unmount. */
export interface TrainView {
  configure(): Promise<void>;
  destroy(): void;
}

/** Mounts view 1 into root. */
export function mountTrainView(root: HTMLElement, store: Store, ctl: Controller, opts: Pick<PanelOptions, 'reducedMotion' | 'onRestyle'>): TrainView {
  const cleanups: (() => void)[] = [];

  // ---- Controls
  const inputs = new Map<keyof State, HTMLInputElement | HTMLSelectElement>();
  const messages = new Map<keyof State, HTMLElement>();
  const fields = CONTROLS.map((c) => {
    const id = uniqueId(`ctl-${c.key}`);
    const msgId = `${id}-msg`;
    let input: HTMLInputElement | HTMLSelectElement;
    if (c.options) {
      input = h('select', { id, name: c.key, 'aria-describedby': msgId });
      for (const o of c.options) input.append(h('option', { value: o, text: o }));
    } else {
      input = h('input', { id, name: c.key, type: 'number', inputmode: 'decimal', min: c.min, max: c.max, step: c.step, 'aria-describedby': msgId });
    }
    input.addEventListener('change', () => onControl(c.key, input.value));
    inputs.set(c.key, input);
    const msg = h('p', { class: 'field-msg', id: msgId, role: 'status' });
    messages.set(c.key, msg);
    return h('div', { class: 'field', 'data-key': c.key }, h('label', { for: id, text: c.label }), input, msg);
  });

  const playBtn = h('button', { type: 'button', class: 'primary', 'data-action': 'play', text: 'Play' });
  const step1Btn = h('button', { type: 'button', 'data-action': 'step1', text: 'Step 1' });
  const step10Btn = h('button', { type: 'button', 'data-action': 'step10', text: 'Step 10' });
  const resetBtn = h('button', { type: 'button', 'data-action': 'reset', text: 'Reset' });
  const stepOut = h('output', { class: 'step', text: '0' });
  const rateOut = h('output', { class: 'rate', text: '0' });
  const lossOut = h('output', { class: 'loss', text: '—' });
  const lossNote = h('span', { class: 'loss-note' });
  const readout = h(
    'p',
    { class: 'readout', 'data-step': '0', 'data-loss': '', 'data-status': 'loading' },
    h('span', {}, 'step ', stepOut),
    h('span', {}, rateOut, ' steps/s'),
    h('span', {}, 'loss ', lossOut, lossNote),
  );
  const problemText = h('p', { class: 'problem-text' });
  const restartBtn = h('button', { type: 'button', 'data-action': 'restart', text: 'Restart', hidden: true });
  const problem = h('div', { class: 'problem', role: 'alert', hidden: true }, problemText, restartBtn);

  const taskHelp = h('p', { class: 'hint task-help', 'aria-live': 'polite' });
  const controls = h(
    'form',
    { class: 'controls', 'aria-label': 'Model and training controls' },
    h('fieldset', { class: 'run' }, h('legend', { text: 'Run' }), h('div', { class: 'buttons' }, playBtn, step1Btn, step10Btn, resetBtn), readout, problem),
    h('fieldset', { class: 'config' }, h('legend', { text: 'Model and training' }), h('p', { class: 'hint first', text: 'Changing a value builds a new model (step 0).' }), h('div', { class: 'fields' }, ...fields), taskHelp),
  );
  controls.addEventListener('submit', (e) => e.preventDefault());

  // ---- Loss chart
  const logId = uniqueId('logy');
  const logBox = h('input', { type: 'checkbox', id: logId, name: 'logY' });
  const chartEl = h('div', { class: 'chart' });
  const chartSection = h(
    'section',
    { class: 'panel loss-panel', 'aria-label': 'Loss' },
    h('div', { class: 'panel-head' }, h('h2', { text: 'Loss' }), h('label', { for: logId, class: 'inline' }, logBox, ' log scale')),
    chartEl,
    h('p', { class: 'hint', text: 'Hover the chart for the exact loss of a step.' }),
  );

  // ---- Heatmaps
  const sampleId = uniqueId('sample');
  const sampleMsgId = `${sampleId}-msg`;
  const sampleInput = h('input', { id: sampleId, type: 'text', name: 'sample', spellcheck: 'false', autocomplete: 'off', 'aria-describedby': sampleMsgId });
  const sampleMsg = h('p', { class: 'field-msg', id: sampleMsgId, role: 'status' });
  const legendBar = h('canvas', { class: 'legend-bar', 'aria-hidden': 'true' });
  const legendMasked = h('canvas', { class: 'legend-masked', 'aria-hidden': 'true' });
  const legend = h(
    'div',
    { class: 'legend', role: 'img', 'aria-label': 'Colour legend: attention weight from 0 (dark purple) to 1 (yellow); masked cells are grey and hatched.' },
    h('span', { text: '0' }),
    legendBar,
    h('span', { text: '1' }),
    h('span', { class: 'legend-masked-wrap' }, legendMasked, ' masked (future key)'),
  );
  const cellReadout = h('p', { class: 'cell-readout', text: 'Hover a cell, or focus a heatmap and use the arrow keys.' });
  const liveCell = h('p', { class: 'visually-hidden', 'aria-live': 'polite' });
  const grid = h('div', { class: 'heatmaps', 'data-frames': '0' });
  const heatSection = h(
    'section',
    { class: 'panel heat-panel', 'aria-label': 'Attention heatmaps' },
    h('div', { class: 'panel-head' }, h('h2', { text: 'Attention of every head' })),
    h('div', { class: 'field sample-field' }, h('label', { for: sampleId, text: 'sample sequence (token ids)' }), sampleInput, sampleMsg),
    legend,
    cellReadout,
    liveCell,
    grid,
    opts.reducedMotion ? h('p', { class: 'hint', text: 'Reduced motion is on: heatmaps and chart update twice a second while training.' }) : null,
  );

  const plots = h('div', { class: 'train-plots' }, chartSection, heatSection);
  root.append(h('div', { class: 'train-layout' }, controls, plots));
  // ---- The learning panels, each computed by the core in the worker. They start once the first
  // heatmap is drawn (or, when the heatmaps are not shown, shortly after the first snapshot), so
  // their requests and renders never delay it.
  // Their sections are placed now (so the layout and the element's hide groups see them), their
  // code is loaded and mounted then.
  let markStarted = () => {};
  const started = new Promise<void>((r) => (markStarted = r));
  const panelOpts: PanelOptions = { reducedMotion: opts.reducedMotion, store, onRestyle: opts.onRestyle };
  const slot = (cls: string, label: string) => h('section', { class: `panel ${cls}`, 'aria-label': label });
  const slots = {
    ablation: slot('ablation-panel', 'Ablation'),
    timeline: slot('timeline-panel', 'Attention timeline'),
    backward: slot('backward-panel', 'Backward pass for one query row'),
    selftest: slot('selftest-panel', 'Self-test'),
  };
  plots.append(...Object.values(slots));
  let unmounted = false;
  cleanups.push(() => (unmounted = true));
  void started
    .then(() => import('./learning-panels'))
    .then((m) => {
      if (unmounted) return;
      cleanups.push(
        m.mountAblationPanel(slots.ablation, ctl, panelOpts),
        m.mountTimelinePanel(slots.timeline, ctl, panelOpts),
        m.mountBackwardPanel(slots.backward, ctl, panelOpts),
        m.mountSelfTestPanel(slots.selftest, ctl, panelOpts),
      );
    })
    .catch((e: unknown) => {
      for (const el of Object.values(slots)) el.textContent = `This panel could not be loaded: ${e instanceof Error ? e.message : String(e)}`;
    });
  // ---- Export / import. An imported run is already in the worker: the settings follow it
  // without building a new model.
  let applyingImport = false;
  cleanups.push(
    mountExportPanel(plots, ctl, (config, sample, ablation) => {
      applyingImport = true;
      try {
        clearFieldMessages();
        store.set({ ...config, sample: sample.join(' '), ...ablationState(ablation) });
      } finally {
        applyingImport = false;
      }
    }),
  );

  // ---- State -> controls
  function syncControls(s: Readonly<State>): void {
    for (const c of CONTROLS) {
      const el = inputs.get(c.key)!;
      const v = String(s[c.key]);
      if (el.value !== v) el.value = v;
    }
    logBox.checked = s.logY;
    if (sampleInput.value !== s.sample) sampleInput.value = s.sample;
    taskHelp.textContent = TASKS[s.task] ?? '';
  }

  function setFieldMessage(key: keyof State, text: string): void {
    const el = key === 'sample' ? sampleMsg : messages.get(key);
    if (!el) return;
    el.textContent = text;
    const input = key === 'sample' ? sampleInput : inputs.get(key);
    if (input) {
      if (text) input.setAttribute('aria-invalid', 'true');
      else input.removeAttribute('aria-invalid');
    }
  }

  function clearFieldMessages(): void {
    for (const k of messages.keys()) setFieldMessage(k, '');
  }

  function onControl(key: keyof State, raw: string): void {
    const { value, correction } = checkField(key, raw);
    clearFieldMessages();
    if (correction) setFieldMessage(key, correction.message);
    const el = inputs.get(key)!;
    el.value = String(value);
    store.set({ [key]: value } as Partial<State>);
  }

  /** The sample's ids under the current vocab/seq_len, with any problem shown by its input. */
  function sampleIds(s: Readonly<State>): number[] {
    const { ids, problems } = parseSample(s.sample, s.vocabSize, s.seqLen);
    setFieldMessage('sample', problems.length ? `sample sequence: ${problems.join('; ')}` : '');
    return ids;
  }

  logBox.addEventListener('change', () => store.set({ logY: logBox.checked }));
  sampleInput.addEventListener('change', () => {
    store.set({ sample: sampleInput.value.slice(0, LIMITS.sampleChars) });
  });

  playBtn.addEventListener('click', () => void ctl.toggle());
  step1Btn.addEventListener('click', () => void ctl.step(1));
  step10Btn.addEventListener('click', () => void ctl.step(10));
  resetBtn.addEventListener('click', () => void ctl.reset());
  restartBtn.addEventListener('click', () => void ctl.restart());

  cleanups.push(
    store.subscribe((s, changed) => {
      syncControls(s);
      if (applyingImport) return;
      if (CONFIG_KEYS.some((k) => changed.has(k))) void ctl.configure(trainerConfig(s), sampleIds(s), ablationOf(s, s.nHeads));
      else if (changed.has('sample')) void ctl.setSample(sampleIds(s));
      if (changed.has('logY')) chart.setLogY(s.logY), (lastHistory = null), scheduleDraw();
    }),
  );

  // ---- Problems: a core message that names a key goes next to that control.
  cleanups.push(
    ctl.onProblem((p: Problem | null) => {
      if (!p) {
        problem.hidden = true;
        problemText.textContent = '';
        restartBtn.hidden = true;
        for (const c of CONTROLS) if (messages.get(c.key)!.dataset.core) (messages.get(c.key)!.dataset.core = ''), setFieldMessage(c.key, '');
        return;
      }
      const spec = p.key ? CONTROLS.find((c) => c.coreKey === p.key) : undefined;
      if (spec) {
        setFieldMessage(spec.key, p.message);
        messages.get(spec.key)!.dataset.core = '1';
        problemText.textContent = `The core rejected this config: ${p.message}`;
      } else {
        problemText.textContent = p.message;
      }
      problem.dataset.kind = p.kind;
      problem.hidden = false;
      restartBtn.hidden = p.kind !== 'crash';
    }),
  );

  // ---- Drawing: at most once per animation frame, from the latest snapshot.
  const chart = new LossChart(chartEl, { logY: store.state.logY, width: Math.max(200, chartEl.clientWidth || 320) });
  let lastHistory: Float32Array | null = null;
  let lastChart = 0;
  /** Width of one heatmap figure (CSS px), measured on resize rather than every frame. */
  let figureWidth = 0;
  let labelColour = '';
  let drawPending = false;
  let frames = 0;
  const figures: { canvas: HTMLCanvasElement; title: string; layout: HeatmapLayout | null; values: Float32Array | null }[] = [];
  let focus: { fig: number; row: number; col: number } | null = null;
  let hover: { fig: number; row: number; col: number } | null = null;

  function ensureFigures(H: number): void {
    const want = H > 1 ? H + 1 : 1;
    if (figures.length === want) return;
    grid.replaceChildren();
    figures.length = 0;
    figureWidth = 0;
    focus = hover = null;
    for (let f = 0; f < want; ++f) {
      const title = f < H ? `Head ${f + 1}` : 'Average of heads';
      const canvas = h('canvas', {
        tabindex: 0,
        role: 'img',
        'aria-label': `${title}: attention weights, queries down, keys across. Arrow keys move between cells.`,
        'data-head': f < H ? f : 'avg',
      });
      const fig = h('figure', { class: f < H ? 'head' : 'head avg' }, h('figcaption', { text: title }), canvas);
      grid.append(fig);
      figures.push({ canvas, title, layout: null, values: null });
      bindCanvas(canvas, f);
    }
  }

  function describe(fig: number, row: number, col: number): string {
    const s = ctl.snapshot;
    const f = figures[fig];
    if (!s || !f?.values) return '';
    const tok = (i: number) => String(s.ids[i]);
    const masked = s.mask === 'causal' && col > row;
    const w = f.values[row * s.T + col];
    const leak = s.mask !== 'causal' && col > row ? ' (a future key: the broken mask lets it through)' : '';
    const value = masked ? 'masked (a query cannot see later keys), weight 0' : `${w.toFixed(4)}${leak}`;
    return `${f.title}: query ${row} (${tok(row)}) → key ${col} (${tok(col)}): ${value}`;
  }

  function showCell(): void {
    const c = hover ?? focus;
    cellReadout.textContent = c ? describe(c.fig, c.row, c.col) : 'Hover a cell, or focus a heatmap and use the arrow keys.';
  }

  function bindCanvas(canvas: HTMLCanvasElement, fig: number): void {
    canvas.addEventListener('mousemove', (ev) => {
      const l = figures[fig].layout;
      if (!l) return;
      const r = canvas.getBoundingClientRect();
      const c = cellAt(l, ev.clientX - r.left, ev.clientY - r.top);
      hover = c ? { fig, ...c } : null;
      showCell();
    });
    canvas.addEventListener('mouseleave', () => {
      hover = null;
      showCell();
    });
    canvas.addEventListener('focus', () => {
      if (!focus || focus.fig !== fig) focus = { fig, row: 0, col: 0 };
      showCell();
      liveCell.textContent = describe(fig, focus.row, focus.col);
      scheduleDraw();
    });
    canvas.addEventListener('blur', () => {
      if (focus?.fig === fig) focus = null;
      showCell();
      scheduleDraw();
    });
    canvas.addEventListener('keydown', (ev) => {
      const T = ctl.snapshot?.T ?? 0;
      if (!focus || focus.fig !== fig || T === 0) return;
      const moves: Record<string, [number, number]> = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1] };
      let { row, col } = focus;
      if (ev.key in moves) {
        row += moves[ev.key][0];
        col += moves[ev.key][1];
      } else if (ev.key === 'Home') col = 0;
      else if (ev.key === 'End') col = T - 1;
      else return;
      ev.preventDefault();
      focus = { fig, row: Math.max(0, Math.min(T - 1, row)), col: Math.max(0, Math.min(T - 1, col)) };
      showCell();
      liveCell.textContent = describe(fig, focus.row, focus.col);
      scheduleDraw();
    });
  }

  function draw(): void {
    drawPending = false;
    const s = ctl.snapshot;
    if (!s) return;
    // Hidden (the other view is shown): draw when it shows again (the ResizeObserver calls back).
    if (grid.offsetParent === null) return;
    const t0 = performance.now();
    const { H, T } = s;
    ensureFigures(H);
    const labels = Array.from(s.ids, String);
    const avg = H > 1 ? headAverage(s.weights, H, T) : null;
    if (figureWidth === 0) figureWidth = figures[0].canvas.parentElement?.clientWidth ?? 160;
    const width = Math.max(120, Math.floor(figureWidth - 2));
    const textColour = labelColour || (labelColour = getComputedStyle(grid).color || '#222');
    figures.forEach((f, idx) => {
      f.values = idx < H ? headWeights(s.weights, H, T, idx) : avg!;
      f.layout = drawHeatmap(f.canvas, width, {
        values: f.values,
        rows: T,
        cols: T,
        rowLabels: labels,
        colLabels: labels,
        causal: s.mask === 'causal',
        focus: focus?.fig === idx ? focus : null,
        textColour,
      });
    });
    // The chart redraws every path and axis, so while playing it follows at most 4 times a second.
    const now = performance.now();
    if (s.history !== lastHistory && (ctl.status !== 'playing' || now - lastChart >= 250)) {
      lastHistory = s.history;
      lastChart = now;
      chart.setLosses(s.initLoss, s.history, s.historyStride);
    }
    showCell();
    grid.dataset.frames = String(++frames);
    markStarted();
    // A User Timing entry per redraw (DevTools shows them; the e2e test reads the slowest).
    performance.measure('playground:draw', { start: t0 });
    if (performance.getEntriesByName('playground:draw').length > 2000) performance.clearMeasures('playground:draw');
  }

  function scheduleDraw(): void {
    if (drawPending) return;
    drawPending = true;
    requestAnimationFrame(draw);
  }

  // ---- Controller -> readout and buttons
  let fallbackStart: ReturnType<typeof setTimeout> | null = null;
  cleanups.push(() => fallbackStart && clearTimeout(fallbackStart));
  function updateUI(): void {
    const s = ctl.snapshot;
    const st = ctl.status;
    const busy = st === 'loading' || st === 'crashed' || st === 'invalid';
    playBtn.textContent = st === 'playing' ? 'Pause' : 'Play';
    playBtn.disabled = busy;
    step1Btn.disabled = step10Btn.disabled = busy;
    resetBtn.disabled = st === 'loading' || st === 'crashed';
    readout.dataset.status = st;
    if (s) {
      stepOut.textContent = String(s.step);
      rateOut.textContent = st === 'playing' ? Math.round(s.stepsPerSec).toLocaleString('en-US') : '0';
      lossOut.textContent = fmtLoss(s.loss);
      lossNote.textContent = s.lossAtInit ? ' (at init: first batch, before any update)' : '';
      readout.dataset.step = String(s.step);
      readout.dataset.loss = String(s.loss);
      scheduleDraw();
      if (!fallbackStart) fallbackStart = setTimeout(markStarted, PANEL_START_FALLBACK_MS);
    }
  }
  cleanups.push(ctl.subscribe(updateUI));

  // Follow the layout's width.
  const ro = new ResizeObserver(() => {
    figureWidth = 0;
    labelColour = '';
    chart.setWidth(Math.max(200, chartEl.clientWidth));
    const w = Math.min(220, Math.max(100, legend.clientWidth - 200));
    drawLegendBar(legendBar, w, 12);
    scheduleDraw();
  });
  ro.observe(root);
  cleanups.push(() => ro.disconnect());
  cleanups.push(
    opts.onRestyle(() => {
      labelColour = '';
      lastHistory = null;
      chart.restyle();
      drawLegendBar(legendBar, Math.min(220, Math.max(100, legend.clientWidth - 200)), 12);
      scheduleDraw();
    }),
  );
  drawLegendBar(legendBar, 160, 12);
  drawMaskedSwatch(legendMasked, 12);

  syncControls(store.state);
  updateUI();
  return {
    configure: () => ctl.configure(trainerConfig(store.state), sampleIds(store.state), ablationOf(store.state, store.state.nHeads)),
    destroy: () => {
      for (const f of cleanups) f();
      chart.destroy();
      root.replaceChildren();
    },
  };
}
