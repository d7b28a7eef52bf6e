// The training view's "Attention timeline" panel: the worker keeps a snapshot of every head's
// attention (and the head statistics) every N steps, within a memory cap; this panel fetches the
// new ones while the run plays, lets the learner scrub through them (or play them through), draws
// every head's matrix at the chosen step and plots per head the mean attention entropy, the
// mass on the keys holding the answer, and the previous-token and prefix-matching scores (so the
// learner can tell which head is which) against the step. Every number comes from the core.
// This file is the view; the state and the requests are model.ts's, the plots
// draw/timeline-charts.ts's.
import type { Controller } from '../../client/controller';
import { drawHeatmap } from '../../draw/heatmap';
import { headColour, TIMELINE_PLOTS, TimelinePlot } from '../../draw/timeline-charts';
import { kb, num } from '../../model/format';
import { hiddenCells } from '../../model/heads';
import { headLabel } from '../../model/layers';
import { tokenLabels } from '../../model/text';
import { hasHeadStats, HEADS_EVERY, TIMELINE_BYTES, type TimelineEntry } from '../../model/timeline';
import { h, uniqueId } from '../../ui/dom';
import { fillPanel, type PanelOptions } from '../../ui/panel';
import { TimelineModel, type TimelineChange } from './model';

/** Fills slot (the panel's section, placed by the training view). Returns the unmount function. */
export function mount(slot: HTMLElement, ctl: Controller, opts: PanelOptions): () => void {
  // ---- DOM
  const policy = h('p', { class: 'hint first timeline-policy', text: 'Snapshots of every head\'s attention, taken while the model trains.' });
  const scrubId = uniqueId('timeline-step');
  const scrubber = h('input', { type: 'range', id: scrubId, name: 'timeline-step', min: 0, max: 0, step: 1, value: 0, disabled: true });
  const position = h('output', { class: 'timeline-position', for: scrubId, 'aria-live': 'off', text: 'no snapshot yet' });
  const playBtn = h('button', { type: 'button', 'data-action': 'timeline-play', 'aria-pressed': 'false', disabled: true, text: 'Play-through' });
  const empty = h('p', { class: 'timeline-empty', role: 'status', text: 'No snapshot yet: the first one is taken when the model is built (step 0).' });
  const message = h('p', { class: 'timeline-msg', role: 'status' });
  const entryInfo = h('p', { class: 'timeline-entry-info' });
  const grid = h('div', { class: 'timeline-heatmaps' });
  const massNote = h('p', { class: 'hint timeline-mass-note', hidden: true });
  const chartsBox = h('div', { class: 'timeline-charts' });
  const plots = TIMELINE_PLOTS.map((spec) => {
    const el = h('div', { class: 'timeline-chart', 'data-chart': spec.key, 'data-series': '0' });
    chartsBox.append(h('figure', { class: 'timeline-chart-fig' }, h('figcaption', { text: spec.title }), el));
    return new TimelinePlot(spec, el, () => model.selected?.step ?? null);
  });
  const panel = fillPanel(
    slot,
    { 'data-step': '', 'data-entries': '0', 'data-measured': '0', 'data-bytes': '0', 'data-capacity': '0', 'data-every': '0', 'data-heads': '0' },
    'Attention timeline',
    policy,
    h('div', { class: 'timeline-scrub' }, h('label', { for: scrubId, text: 'Snapshot' }), scrubber, position, playBtn),
    empty,
    message,
    entryInfo,
    grid,
    h(
      'p',
      { class: 'hint' },
      'Entropy: how spread a head\'s attention is, averaged over the query rows of an eval batch (0 nats: all weight on one key; ln(k) nats: spread evenly over k keys). ',
      'Answer mass: the weight a head puts on the keys holding the token to predict; for repeat it is about 1 whatever the head does (every visible key holds the answer), while for shift, copy and reverse a head that finds the answer position pushes it toward 1. ',
      'Previous-token and prefix-matching scores, measured on fixed induction sequences whatever the task: a head that attends one position back scores near 1 on the first; an induction head (it attends from a repeated token to the token after its earlier occurrence) scores high on the second. With two layers on the induction task, watch one head of layer 1 rise on the first and one head of layer 2 on the second, at the phase change.',
    ),
    massNote,
    chartsBox,
  );

  // Hidden (the other view is shown, or an embedding page took the panel out): no fetch, no draw.
  const visible = () => panel.isConnected && panel.offsetParent !== null;
  const model = new TimelineModel(ctl, {
    interval: opts.reducedMotion ? 1000 : 500,
    frameMs: opts.reducedMotion ? 500 : 125,
    visible,
    onChange: render,
  });

  function render(c: TimelineChange): void {
    if (c.meta) renderMeta();
    if (c.entries) renderCharts();
    if (c.entries || c.selection) renderEntry();
    if (c.playThrough) setPlayLabel();
    if (c.message !== undefined) message.textContent = c.message;
  }

  // ---- Rendering
  function renderMeta(): void {
    const { entries, info, sel } = model;
    const n = entries.length;
    panel.dataset.entries = String(n);
    panel.dataset.measured = String(entries.filter(hasHeadStats).length);
    panel.dataset.bytes = String(info?.bytes ?? 0);
    panel.dataset.capacity = String(info?.capacity ?? 0);
    panel.dataset.every = String(info?.every ?? 0);
    panel.dataset.headsEvery = String(HEADS_EVERY);
    if (info) {
      policy.textContent =
        `Every head's attention on the sample sequence over training: a snapshot every ${info.every === 1 ? 'step' : `${info.every} steps`}, at most ${info.capacity} kept ` +
        `(${kb(info.bytes)} now; the memory budget is ${kb(TIMELINE_BYTES)}), and when full, older ones are thinned to every other one. ` +
        `The heads' statistics and scores below are measured every ${HEADS_EVERY * info.every === 1 ? 'step' : `${HEADS_EVERY * info.every} steps`}: each measurement costs about two training steps.`;
    }
    scrubber.max = String(Math.max(0, n - 1));
    scrubber.value = String(sel);
    scrubber.disabled = n < 2;
    playBtn.disabled = n < 2;
    empty.hidden = n > 0;
    const e = model.selected;
    if (e) {
      const text = `step ${e.step} (${sel + 1} of ${n})`;
      position.textContent = text;
      scrubber.setAttribute('aria-valuetext', text);
    } else {
      position.textContent = 'no snapshot yet';
      scrubber.removeAttribute('aria-valuetext');
    }
  }

  /** Heatmap figures, one per head of the selected entry. */
  let figures: { canvas: HTMLCanvasElement; stats: HTMLElement }[] = [];
  let drawnEntry: TimelineEntry | null = null;
  let drawnWidth = 0;
  let labelColour = '';

  let shape = '';
  /** One figure per head of L layers of H heads (global order). */
  function ensureFigures(L: number, H: number): void {
    if (shape === `${L}x${H}` && figures.length === L * H) return;
    shape = `${L}x${H}`;
    grid.replaceChildren();
    figures = [];
    for (let hh = 0; hh < L * H; ++hh) {
      const title = headLabel(hh, H, L);
      const canvas = h('canvas', { role: 'img', 'data-head': hh, 'aria-label': `${title}: attention weights at the selected step, queries down, keys across.` });
      const stats = h('span', { class: 'timeline-head-stats' });
      const swatch = h('span', { class: 'timeline-swatch', 'aria-hidden': 'true' });
      swatch.style.background = headColour(hh);
      grid.append(h('figure', { class: 'head' }, h('figcaption', {}, swatch, h('span', { class: 'timeline-head-title', text: title }), stats), canvas));
      figures.push({ canvas, stats });
    }
    panel.dataset.heads = String(L * H);
    drawnEntry = null;
  }

  /** Draws the selected entry's matrices (synchronously, so data-step and the pixels agree). */
  function renderEntry(): void {
    const e = model.selected;
    panel.dataset.step = e ? String(e.step) : '';
    if (!e) {
      grid.replaceChildren();
      figures = [];
      drawnEntry = null;
      entryInfo.textContent = '';
      massNote.hidden = true;
      for (const p of plots) p.redrawMarker();
      return;
    }
    // The head statistics: this snapshot's, or those of the latest one before it that measured them.
    const s = model.selectedHeads;
    const from = s && s !== e ? ` The heads' statistics beside each matrix are from step ${s.step}, the last snapshot before it that measured them.` : '';
    entryInfo.textContent = `Step ${e.step}: loss ${num(e.loss, 4)}${e.mask !== 'causal' ? ` (mask: ${e.mask})` : ''}.${from}`;
    const undefinedMass = s !== null && Array.from(s.answerMass).every((v) => !Number.isFinite(v));
    massNote.hidden = !undefinedMass;
    massNote.textContent = undefinedMass ? 'This task has no position whose answer is among the keys of the eval batch, so the answer mass is undefined here and not plotted.' : '';
    ensureFigures(e.L, e.H);
    figures.forEach((f, hh) => {
      if (!s || s.L !== e.L || s.H !== e.H) {
        f.stats.replaceChildren();
        delete f.stats.dataset.previousToken;
        delete f.stats.dataset.prefixMatching;
        delete f.stats.dataset.step;
        return;
      }
      const m = s.answerMass[hh];
      const parts = [h('span', { text: `${num(s.entropy[hh])} nats` })];
      if (Number.isFinite(m)) parts.push(h('span', { text: `mass ${num(m)}` }));
      if (Number.isFinite(s.previousToken[hh])) parts.push(h('span', { class: 'timeline-prev', text: `prev ${num(s.previousToken[hh])}` }));
      if (Number.isFinite(s.prefixMatching[hh])) parts.push(h('span', { class: 'timeline-prefix', text: `prefix ${num(s.prefixMatching[hh])}` }));
      f.stats.replaceChildren(...parts);
      // Full precision, for tests (the text rounds), and the step they were measured at.
      Object.assign(f.stats.dataset, { previousToken: String(s.previousToken[hh]), prefixMatching: String(s.prefixMatching[hh]), step: String(s.step) });
    });
    for (const p of plots) p.redrawMarker();
    if (!visible()) {
      drawnEntry = null;
      return;
    }
    const fig = figures[0]?.canvas.parentElement;
    const width = Math.max(100, Math.floor((fig?.clientWidth || 120) - 2));
    if (e === drawnEntry && width === drawnWidth) return;
    const labels = tokenLabels(e.ids, ctl.snapshot?.text?.corpus.vocab);
    const textColour = labelColour || (labelColour = getComputedStyle(grid).color || '#222');
    const { T } = e;
    const H = e.L * e.H;
    try {
      if (e.weights.length !== H * T * T) throw new Error(`${e.weights.length} weights for L=${e.L}, H=${e.H}, T=${T}`);
      for (let hh = 0; hh < H; ++hh) {
        drawHeatmap(figures[hh].canvas, width, {
          values: e.weights.subarray(hh * T * T, (hh + 1) * T * T),
          rows: T,
          cols: T,
          rowLabels: labels,
          colLabels: labels,
          causal: e.mask === 'causal',
          // The run's pattern (a timeline belongs to one run, one pattern).
          hidden: hiddenCells(e.mask, ctl.snapshot?.visible, T),
          textColour,
        });
      }
      drawnEntry = e;
      drawnWidth = width;
    } catch (err) {
      message.textContent = `The snapshot at step ${e.step} could not be drawn: ${err instanceof Error ? err.message : String(err)}`;
    }
  }

  /** The plots of the held entries, in the latest entry's head count (not while hidden). */
  function renderCharts(): void {
    const { entries } = model;
    const last = entries[entries.length - 1];
    for (const p of plots) {
      // Nothing to plot yet (or a new run): an empty plot of the old shape until data comes.
      if (!last) p.clear();
      else if (!visible()) model.stale = true;
      else p.draw(entries, last.L, last.H);
    }
  }

  // ---- Scrubbing and play-through
  scrubber.addEventListener('input', () => {
    model.stopPlayThrough();
    model.select(Number(scrubber.value), true);
  });

  function setPlayLabel(): void {
    playBtn.textContent = model.playingThrough ? 'Stop' : 'Play-through';
    playBtn.setAttribute('aria-pressed', String(model.playingThrough));
    panel.dataset.playthrough = model.playingThrough ? 'playing' : 'stopped';
  }
  playBtn.addEventListener('click', () => model.togglePlayThrough());
  setPlayLabel();

  // Width changes, and the train view being shown again, redraw (and fetch what was missed).
  const ro = new ResizeObserver(() => {
    if (!visible()) return;
    labelColour = '';
    for (const p of plots) p.fitWidth();
    if (model.stale) {
      renderCharts();
      model.want();
    }
    renderEntry();
  });
  ro.observe(panel);
  // A theme change: labels and axes take the new colours.
  const unrestyle = opts.onRestyle(() => {
    labelColour = '';
    for (const p of plots) p.destroy();
    renderCharts();
    renderEntry();
  });

  renderMeta();
  renderEntry();
  model.start();

  return () => {
    model.destroy();
    unrestyle();
    ro.disconnect();
    for (const p of plots) p.destroy();
    panel.replaceChildren();
  };
}
