// View 1, "Multi-head attention, trained": Start here (the presets, depth-view.ts) across the top,
// the controls column (train-controls.ts), the live loss chart, the heatmaps (heatmap-grid.ts), then
// the panel picker (panel-picker.ts) over the panels of the registry (web/src/panels/registry.ts).
// On a narrow screen the chart and the heatmaps come right after the Run box, before the settings. Binds the Store and the Controller to the DOM; draws
// at most once per animation frame.
import type { Controller } from '../client/controller';
import { DEMO_EPOCH_STEPS, LossChart, lossChartCaption } from '../draw/loss-chart';
import { CONVERGED_PATIENCE, DoneWatch, TASK_SOLVED_AT, type DoneDetail } from '../model/done';
import { keepPanel } from '../settings/panel-needs';
import { FILL_PRESET, FIND_CIRCUIT_PRESET, INDUCTION_PRESET, presetState, TEXT_PRESET, WINDOW_DEPTH_PRESET, type Preset } from '../settings/presets';
import type { State } from '../settings/settings';
import type { Store } from '../settings/store';
import { h, uniqueId } from './dom';
import { mountHeatmapGrid } from './heatmap-grid';
import type { PanelOptions } from './panel';
import type { Parts } from './parts';
import { checkYourself, TRAIN_QUESTIONS } from './check-yourself';
import { mountPanelPicker, type PickerEntry } from './panel-picker';
import { mountTrainControls } from './train-controls';
import { mountPresets, phaseChangeNote } from './depth-view';
import { mountCorpusBox } from './corpus-box';
import type { Snapshot } from '../model/protocol';
import { lossUnitOf, num } from '../model/format';
import { groupOf, PANELS } from '../panels/registry';

/** The preset to try once a task is done: the next lesson's. */
const NEXT_PRESET: Partial<Record<string, Preset>> = { repeat: INDUCTION_PRESET, shift: INDUCTION_PRESET, copy: WINDOW_DEPTH_PRESET, induction: FIND_CIRCUIT_PRESET, text: FILL_PRESET, reverse: TEXT_PRESET, sort: TEXT_PRESET };

/** With the heatmaps hidden (no first draw), the panels start this long after the first snapshot. */
const PANEL_START_FALLBACK_MS = 300;

/** A mounted view 1; destroy to unmount. */
export interface TrainView {
  destroy(): void;
}

/** Mounts view 1 into root; its parts go in (or stay out) through parts. */
export function mountTrainView(root: HTMLElement, store: Store, ctl: Controller, opts: Pick<PanelOptions, 'reducedMotion' | 'onRestyle'> & { parts: Parts }): TrainView {
  const cleanups: (() => void)[] = [];
  const { parts } = opts;
  const controls = mountTrainControls(store, ctl, parts);
  cleanups.push(controls.destroy);

  // ---- Loss chart
  const box = (key: 'logY' | 'smooth' | 'epochMeans', text: string) => {
    const id = uniqueId(key);
    const input = h('input', { type: 'checkbox', id, name: key });
    input.addEventListener('change', () => store.set({ [key]: input.checked }));
    return { input, label: h('label', { for: id, class: 'inline' }, input, text) };
  };
  const boxes = { logY: box('logY', ' log scale'), smooth: box('smooth', ' smoothed'), epochMeans: box('epochMeans', ` epoch means (${DEMO_EPOCH_STEPS} steps)`) };
  const chartEl = h('div', { class: 'chart' });
  // The sentence on the phase change (depth-view.ts).
  const phaseNote = h('p', { class: 'hint phase-note', 'aria-live': 'polite', hidden: true });
  // Task text: the validation readout and what the two extra lines mean.
  const textReadout = h('p', { class: 'readout text-readout', hidden: true });
  const textNote = h('p', {
    class: 'hint text-note',
    hidden: true,
    text:
      'For text, every line is in bits per character. The orange line is the loss on the held-out 10% of the text, measured about once a second, and the dashed line is the unigram entropy: the loss of a model that only knows how often each character occurs. ' +
      'Below the dashed line the model is using the characters before each position; a validation loss that rises while the training loss falls means it is memorising the training text.',
  });
  // What the chart shows, in the task's unit: ln V, or the unigram line on text (set per state).
  const lossCaption = h('p', { class: 'hint loss-caption' });
  // When the run is done (solved, or converged on text): a note, the next step to try, and why the
  // curve may spike if training goes on. A run that is playing then pauses itself, once per run
  // (Play goes on training).
  const doneText = h('span', {});
  const doneNext = h('button', { type: 'button', class: 'done-next', text: 'Next' });
  const doneNote = h('p', { class: 'done-note', role: 'status', hidden: true }, doneText, ' ', doneNext);
  const doneWatch = new DoneWatch();
  /** The run's done detail (null: not done), from the latest snapshot. */
  let done: DoneDetail | null = null;
  /** Whether this run paused itself when it was done. */
  let selfPaused = false;
  let observed: Snapshot | null = null;
  let nextPreset: Preset = INDUCTION_PRESET;
  doneNext.addEventListener('click', () => store.set(keepPanel(nextPreset, presetState(nextPreset), store.state.panel)));
  const chartSection = h(
    'section',
    { class: 'panel loss-panel', 'aria-label': 'Loss' },
    h('div', { class: 'panel-head' }, h('h2', { text: 'Loss' }), h('div', { class: 'chart-options' }, ...Object.values(boxes).map((b) => b.label))),
    chartEl,
    doneNote,
    textReadout,
    phaseNote,
    textNote,
    lossCaption,
  );

  // ---- Heatmaps
  const heat = mountHeatmapGrid(store, ctl, { reducedMotion: opts.reducedMotion, request: scheduleDraw, parts });
  cleanups.push(heat.destroy);

  const plots = h('div', { class: 'train-plots' }, parts.place(chartSection, 'loss'), parts.place(heat.section, 'heatmaps'));
  // With both boxes of the controls column out, the column goes too and the plots take the width.
  const layout = h('div', { class: 'train-layout' }, parts.place(controls.form, 'run', 'model'), plots);
  const fitColumns = () => layout.classList.toggle('no-controls', parts.isHidden('run', 'model'));
  fitColumns();
  cleanups.push(parts.onChange(fitColumns));
  // ---- Start here: the preset links ("watch an induction head form"), above everything else.
  const presets = mountPresets(store);
  cleanups.push(presets.destroy);
  root.append(parts.place(presets.element, 'presets'), layout);
  // ---- The text task's corpus sources (shown while the task is text).
  const corpusBox = mountCorpusBox(store, ctl);
  cleanups.push(corpusBox.destroy);
  controls.form.querySelector('fieldset.config')?.after(corpusBox.element);
  // ---- The panels of the registry, each in its section, one at a time under the picker. They
  // start once the first heatmap is drawn (or, when the heatmaps are not shown, shortly after the
  // first snapshot), so their requests and renders never delay it. Their sections are placed now
  // (so the layout is stable, and each is in or out by its group), their code (one chunk,
  // panels/views.ts) is loaded and mounted then.
  let markStarted = () => {};
  const started = new Promise<void>((r) => (markStarted = r));
  const panelOpts: PanelOptions = { reducedMotion: opts.reducedMotion, store, onRestyle: opts.onRestyle };
  const entries: PickerEntry[] = PANELS.map((p) => ({
    name: p.name,
    label: p.label,
    group: groupOf(p),
    section: h('section', { class: `panel ${groupOf(p)}-panel`, 'aria-label': p.title }),
  }));
  const picker = mountPanelPicker(store, parts, entries, () => ctl.refresh());
  cleanups.push(picker.destroy);
  plots.append(picker.element, ...entries.map((e) => parts.place(e.section, e.group)), parts.place(checkYourself(TRAIN_QUESTIONS), 'questions'));
  let unmounted = false;
  cleanups.push(() => (unmounted = true));
  void started
    .then(() => import('../panels/views'))
    .then(({ VIEWS }) => {
      for (const e of entries) {
        if (unmounted) return;
        cleanups.push(VIEWS[e.name](e.section, ctl, panelOpts));
      }
    })
    .catch((e: unknown) => {
      for (const { section } of entries) section.textContent = `This panel could not be loaded: ${e instanceof Error ? e.message : String(e)}`;
    });

  // ---- State -> what the chart shows (chance follows the vocabulary of the settings)
  // Task text: the unigram line and the validation curve replace chance (the text sets V); task
  // markov: the chain's symbols are the vocabulary.
  const chartOptions = (s: Readonly<State>, snap: Snapshot | null = ctl.snapshot) => {
    const unigram = s.task === 'text' ? (snap?.text?.corpus.unigramNats ?? null) : null;
    return { logY: s.logY, smooth: s.smooth, epochSteps: s.epochMeans ? DEMO_EPOCH_STEPS : 0, chance: s.task === 'text' ? null : Math.log(s.task === 'markov' ? s.markovSymbols : s.vocabSize), unigram, unit: lossUnitOf(s.task) };
  };
  const showCaption = (s: Readonly<State>) => (lossCaption.textContent = lossChartCaption(s.task === 'text', s.objective === 'mlm'));
  cleanups.push(
    store.subscribe((s, changed) => {
      for (const k of ['logY', 'smooth', 'epochMeans'] as const) boxes[k].input.checked = s[k];
      showCaption(s);
      if (changed.has('logY') || changed.has('smooth') || changed.has('epochMeans') || changed.has('vocabSize') || changed.has('task')) {
        chart.setOptions(chartOptions(s));
        lastHistory = null;
        scheduleDraw();
      }
    }),
  );

  // ---- Drawing: at most once per animation frame, from the latest snapshot.
  const chart = new LossChart(chartEl, { ...chartOptions(store.state), width: Math.max(200, chartEl.clientWidth || 320) });
  showCaption(store.state);
  let lastHistory: Float32Array | null = null;
  let lastChart = 0;
  let drawPending = false;

  function draw(): void {
    drawPending = false;
    const s = ctl.snapshot;
    if (!s) return;
    const t0 = performance.now();
    if (!heat.draw(s)) return;
    // The chart redraws every path and axis, so while playing it follows at most 4 times a second.
    const now = performance.now();
    chart.setOptions(chartOptions(store.state, s));
    if (s.history !== lastHistory && (ctl.status !== 'playing' || now - lastChart >= 250)) {
      lastHistory = s.history;
      lastChart = now;
      chart.setLosses(s.initLoss, s.history, s.historyStride, s.text ? { steps: s.text.valSteps, losses: s.text.valLoss } : undefined);
    }
    showText(s);
    showDone();
    chart.setPhaseChange(s.phaseChange);
    phaseChangeNote(phaseNote, s, store.state.task);
    markStarted();
    // A User Timing entry per redraw (DevTools shows them; the e2e test reads the slowest).
    performance.measure('playground:draw', { start: t0 });
    if (performance.getEntriesByName('playground:draw').length > 2000) performance.clearMeasures('playground:draw');
  }

  /** Each new snapshot: is the run done? The first time it is, a run that is playing pauses itself
   * (through the Controller, as Pause does), so a solved task does not train on into Adam's spikes
   * and the phase change stays on screen; Play goes on, and this run does not pause itself again. */
  function observe(s: Snapshot): void {
    if (s === observed) return;
    observed = s;
    done = doneWatch.observe(s, TASK_SOLVED_AT[store.state.task] ?? null, s.text?.valLoss, { losses: s.history, stride: s.historyStride });
    if (!done) selfPaused = false;
    else if (doneWatch.fresh) {
      selfPaused = ctl.status === 'playing';
      if (selfPaused) void ctl.pause();
    }
    doneNote.dataset.paused = selfPaused ? 'self' : '';
  }

  /** The done note: "Solved at step N" (or "Converged"), with the next step and, solved, why the
   * loss may spike later. */
  function showDone(): void {
    const task = store.state.task;
    doneNote.hidden = !done;
    doneNote.dataset.kind = done?.kind ?? '';
    doneNote.dataset.step = done ? String(done.step) : '';
    if (!done) return;
    nextPreset = NEXT_PRESET[task] ?? INDUCTION_PRESET;
    const paused = selfPaused ? ' Training paused itself here; Play goes on.' : '';
    doneText.textContent =
      done.kind === 'solved'
        ? `Solved at step ${done.step}: the loss is below ${TASK_SOLVED_AT[task]} nats, so the heads have found the answer.${paused} ` +
          'Trained on, the loss may spike now and then: with gradients near zero, Adam divides by a tiny running average of their squares and takes an outsize step, then recovers. That is the optimiser, not a broken model.'
        : `Converged at step ${done.step}: the validation loss has not improved over its last ${CONVERGED_PATIENCE} measurements; more steps mostly memorise the training text.${paused}`;
    doneNext.textContent = `Next: ${nextPreset.title}`;
  }

  /** The validation readout: the core's bits per character against the unigram entropy. */
  function showText(s: Snapshot): void {
    const last = s.text?.last;
    textReadout.hidden = textNote.hidden = !s.text;
    if (!s.text) return;
    textReadout.textContent = last
      ? `validation: ${num(last.valBitsPerChar, 2)} bits/char (unigram ${num(s.text.corpus.unigramBits, 2)}) at step ${last.step}`
      : `validation: — bits/char (unigram ${num(s.text.corpus.unigramBits, 2)})`;
    textReadout.dataset.valBitsPerChar = last ? String(last.valBitsPerChar) : '';
    textReadout.dataset.valLoss = last ? String(last.valLoss) : '';
    textReadout.dataset.unigramBits = String(s.text.corpus.unigramBits);
    textReadout.dataset.step = last ? String(last.step) : '';
  }

  function scheduleDraw(): void {
    if (drawPending) return;
    drawPending = true;
    requestAnimationFrame(draw);
  }

  // ---- Controller -> a redraw; the panels' start without heatmaps.
  let fallbackStart: ReturnType<typeof setTimeout> | null = null;
  cleanups.push(() => fallbackStart && clearTimeout(fallbackStart));
  cleanups.push(
    ctl.subscribe(() => {
      if (!ctl.snapshot) return;
      observe(ctl.snapshot);
      scheduleDraw();
      if (!fallbackStart) fallbackStart = setTimeout(markStarted, PANEL_START_FALLBACK_MS);
    }),
  );

  // Follow the layout's width (only its width: a note that appears under the chart changes the
  // height, and that is no reason to redraw every heatmap).
  let observedWidth = -1;
  const ro = new ResizeObserver((entries) => {
    const width = entries[entries.length - 1].contentRect.width;
    if (width === observedWidth) return;
    observedWidth = width;
    heat.resized();
    chart.setWidth(Math.max(200, chartEl.clientWidth));
    scheduleDraw();
  });
  ro.observe(root);
  cleanups.push(() => ro.disconnect());
  cleanups.push(
    opts.onRestyle(() => {
      heat.resized();
      lastHistory = null;
      chart.restyle();
      scheduleDraw();
    }),
  );

  for (const k of ['logY', 'smooth', 'epochMeans'] as const) boxes[k].input.checked = store.state[k];
  if (ctl.snapshot) {
    observe(ctl.snapshot);
    scheduleDraw();
  }
  return {
    destroy: () => {
      for (const f of cleanups) f();
      chart.destroy();
      root.replaceChildren();
    },
  };
}
