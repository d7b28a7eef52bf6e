// The training view's "Attention timeline" panel: the worker keeps a snapshot of every head's
// attention (and the head statistics) every N steps, within a memory cap; this panel fetches the
// new ones while the run plays, lets the learner scrub through them (or play them through), draws
// every head's matrix at the chosen step and plots per head the mean attention entropy and the
// mass on the keys holding the answer against the step. Every number comes from the core.
import uPlot from 'uplot';
import { axisColours } from '../draw/chart';
import 'uplot/dist/uPlot.min.css';
import type { Controller } from '../controller';
import { drawHeatmap } from '../draw/heatmap';
import type { Timeline, TimelineEntry } from '../protocol';
import { TIMELINE_BYTES } from '../timeline';
import { h, uniqueId } from './dom';
import { fillPanel, type PanelOptions } from './panel';

/** One colour per head (up to 16 heads), distinguishable on light and dark backgrounds. */
const HEAD_COLOURS = [
  '#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f',
  '#bcbd22', '#17becf', '#6b6ecf', '#e7ba52', '#637939', '#ad494a', '#a55194', '#3182bd',
];
const headColour = (hh: number) => HEAD_COLOURS[hh % HEAD_COLOURS.length];

const fmtKB = (bytes: number) => `${Math.round(bytes / 1024).toLocaleString('en-US')} KB`;
const fmt3 = (v: number | null | undefined) => (v == null || !Number.isFinite(v) ? '—' : v.toFixed(3));

/** What one of the two charts plots: a per-head statistic of an entry. */
interface ChartSpec {
  key: 'entropy' | 'answer-mass';
  title: string;
  axis: string;
  value: (e: TimelineEntry, head: number) => number;
  range: uPlot.Scale['range'];
}

const CHARTS: ChartSpec[] = [
  {
    key: 'entropy',
    title: 'Mean attention entropy',
    axis: 'entropy (nats)',
    value: (e, hh) => e.entropy[hh],
    range: (_u, _min, max) => [0, Math.max(0.1, Number.isFinite(max) ? max * 1.08 : 1)],
  },
  {
    key: 'answer-mass',
    title: 'Answer mass',
    axis: 'answer mass',
    value: (e, hh) => e.answerMass[hh],
    range: [0, 1],
  },
];

/** A mounted uPlot chart, the head count it was built for, and its container. */
interface Chart {
  spec: ChartSpec;
  el: HTMLElement;
  plot: uPlot | null;
  heads: number;
}

/** Fills slot (the panel's section, placed by the training view). Returns the unmount function. */
export function mountTimelinePanel(slot: HTMLElement, ctl: Controller, opts: PanelOptions): () => void {
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
  const charts: Chart[] = CHARTS.map((spec) => {
    const el = h('div', { class: 'timeline-chart', 'data-chart': spec.key, 'data-series': '0' });
    chartsBox.append(h('figure', { class: 'timeline-chart-fig' }, h('figcaption', { text: spec.title }), el));
    return { spec, el, plot: null, heads: 0 };
  });
  const panel = fillPanel(
    slot,
    { 'data-step': '', 'data-entries': '0', 'data-bytes': '0', 'data-capacity': '0', 'data-every': '0', 'data-heads': '0' },
    h('div', { class: 'panel-head' }, h('h2', { text: 'Attention timeline' })),
    policy,
    h(
      'div',
      { class: 'timeline-scrub' },
      h('label', { for: scrubId, text: 'Snapshot' }),
      scrubber,
      position,
      playBtn,
    ),
    empty,
    message,
    entryInfo,
    grid,
    h(
      'p',
      { class: 'hint' },
      'Entropy: how spread a head\'s attention is, averaged over the query rows of an eval batch (0 nats: all weight on one key; ln(k) nats: spread evenly over k keys). ',
      'Answer mass: the weight a head puts on the keys holding the token to predict; for repeat it is about 1 whatever the head does (every visible key holds the answer), while for shift, copy and reverse a head that finds the answer position pushes it toward 1.',
    ),
    massNote,
    chartsBox,
  );

  // ---- State
  /** The run the held entries belong to. */
  let heldRun = ctl.runId;
  let entries: TimelineEntry[] = [];
  let info: Pick<Timeline, 'every' | 'capacity' | 'bytes'> | null = null;
  /** Index of the selected entry. */
  let sel = 0;
  /** The scrubber follows the latest entry until the learner moves it away from the end. */
  let followEnd = true;
  let destroyed = false;

  // ---- Fetching: at most every `interval` ms while playing, promptly after a pause/step/reset.
  const interval = opts.reducedMotion ? 1000 : 500;
  let inflight = false;
  let again = false;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let lastFetch = -Infinity;
  let lastKey = '';
  let stale = true;

  // Hidden (the other view is shown, or an embedding page took the panel out): no fetch, no draw.
  const visible = () => panel.isConnected && panel.offsetParent !== null;
  const canFetch = () => !!ctl.snapshot && ctl.status !== 'loading' && ctl.status !== 'crashed';

  function clearTimer(): void {
    if (timer !== null) clearTimeout(timer);
    timer = null;
  }

  function wantFetch(): void {
    if (destroyed) return;
    if (!visible() || !canFetch()) {
      stale = true;
      return;
    }
    if (ctl.status === 'playing') {
      const wait = lastFetch + interval - performance.now();
      if (wait > 0) {
        timer ??= setTimeout(() => {
          timer = null;
          wantFetch();
        }, wait);
        return;
      }
    }
    clearTimer();
    if (inflight) {
      again = true;
      return;
    }
    void fetchNow();
  }

  async function fetchNow(): Promise<void> {
    inflight = true;
    stale = false;
    lastFetch = performance.now();
    const run = ctl.runId;
    const since = run === heldRun && entries.length > 0 ? entries[entries.length - 1].step : -1;
    try {
      const tl = await ctl.timeline(since);
      if (destroyed) return;
      if (ctl.runId !== run) {
        again = true; // the answer belongs to a run that is gone
      } else {
        if (run !== heldRun) dropRun();
        merge(tl);
        message.textContent = '';
      }
    } catch (e) {
      if (!destroyed) message.textContent = `The timeline could not be read: ${e instanceof Error ? e.message : String(e)}`;
    } finally {
      inflight = false;
      if (again && !destroyed) {
        again = false;
        wantFetch();
      }
    }
  }

  /** Keeps the held entries the worker still keeps, appends the new ones, and redraws. */
  function merge(tl: Timeline): void {
    const keep = new Set(tl.steps);
    const selectedStep = entries[sel]?.step;
    const next = entries.filter((e) => keep.has(e.step));
    const last = next.length > 0 ? next[next.length - 1].step : -Infinity;
    for (const e of tl.entries) if (keep.has(e.step) && e.step > last) next.push(e);
    const changed = next.length !== entries.length || next.some((e, i) => e !== entries[i]);
    entries = next;
    info = { every: tl.every, capacity: tl.capacity, bytes: tl.bytes };
    if (entries.length === 0) sel = 0;
    else if (followEnd && !playingThrough) sel = entries.length - 1;
    else if (selectedStep !== undefined) {
      // The selected step, or the last kept one before it (it may have been thinned out).
      let k = 0;
      for (let i = 0; i < entries.length; ++i) if (entries[i].step <= selectedStep) k = i;
      sel = k;
    }
    sel = Math.max(0, Math.min(sel, entries.length - 1));
    renderMeta();
    if (changed) {
      renderCharts();
      renderEntry();
    }
  }

  /** A new run: drop what belongs to the old one. */
  function dropRun(): void {
    heldRun = ctl.runId;
    stopPlayThrough();
    entries = [];
    info = null;
    sel = 0;
    followEnd = true;
    renderMeta();
    renderCharts();
    renderEntry();
  }

  // ---- Rendering
  function renderMeta(): void {
    const n = entries.length;
    panel.dataset.entries = String(n);
    panel.dataset.bytes = String(info?.bytes ?? 0);
    panel.dataset.capacity = String(info?.capacity ?? 0);
    panel.dataset.every = String(info?.every ?? 0);
    if (info) {
      policy.textContent =
        `Every head's attention on the sample sequence over training: a snapshot every ${info.every} steps, at most ${info.capacity} kept ` +
        `(${fmtKB(info.bytes)} now; the memory budget is ${fmtKB(TIMELINE_BYTES)}), and when full, older ones are thinned to every other one.`;
    }
    scrubber.max = String(Math.max(0, n - 1));
    scrubber.value = String(sel);
    scrubber.disabled = n < 2;
    playBtn.disabled = n < 2;
    empty.hidden = n > 0;
    const e = entries[sel];
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

  function ensureFigures(H: number): void {
    if (figures.length === H) return;
    grid.replaceChildren();
    figures = [];
    for (let hh = 0; hh < H; ++hh) {
      const canvas = h('canvas', { role: 'img', 'data-head': hh, 'aria-label': `Head ${hh + 1}: attention weights at the selected step, queries down, keys across.` });
      const stats = h('span', { class: 'timeline-head-stats' });
      const swatch = h('span', { class: 'timeline-swatch', 'aria-hidden': 'true' });
      swatch.style.background = headColour(hh);
      grid.append(h('figure', { class: 'head' }, h('figcaption', {}, swatch, h('span', { class: 'timeline-head-title', text: `Head ${hh + 1}` }), stats), canvas));
      figures.push({ canvas, stats });
    }
    panel.dataset.heads = String(H);
    drawnEntry = null;
  }

  /** Draws the selected entry's matrices (synchronously, so data-step and the pixels agree). */
  function renderEntry(): void {
    const e = entries[sel] ?? null;
    panel.dataset.step = e ? String(e.step) : '';
    if (!e) {
      grid.replaceChildren();
      figures = [];
      drawnEntry = null;
      entryInfo.textContent = '';
      massNote.hidden = true;
      redrawMarkers();
      return;
    }
    entryInfo.textContent = `Step ${e.step}: loss ${Number.isFinite(e.loss) ? e.loss.toFixed(4) : '—'}${e.mask !== 'causal' ? ` (mask: ${e.mask})` : ''}.`;
    const undefinedMass = Array.from(e.answerMass).every((v) => !Number.isFinite(v));
    massNote.hidden = !undefinedMass;
    massNote.textContent = undefinedMass ? 'This task has no position whose answer is among the keys of the eval batch, so the answer mass is undefined here and not plotted.' : '';
    ensureFigures(e.H);
    e.entropy.forEach((v, hh) => {
      const m = e.answerMass[hh];
      const parts = [h('span', { text: `${fmt3(v)} nats` })];
      if (Number.isFinite(m)) parts.push(h('span', { text: `mass ${fmt3(m)}` }));
      figures[hh].stats.replaceChildren(...parts);
    });
    redrawMarkers();
    if (!visible()) {
      drawnEntry = null;
      return;
    }
    const fig = figures[0]?.canvas.parentElement;
    const width = Math.max(100, Math.floor((fig?.clientWidth || 120) - 2));
    if (e === drawnEntry && width === drawnWidth) return;
    const labels = Array.from(e.ids, String);
    const textColour = labelColour || (labelColour = getComputedStyle(grid).color || '#222');
    const { H, T } = e;
    try {
      if (e.weights.length !== H * T * T) throw new Error(`${e.weights.length} weights for H=${H}, T=${T}`);
      for (let hh = 0; hh < H; ++hh) {
        drawHeatmap(figures[hh].canvas, width, {
          values: e.weights.subarray(hh * T * T, (hh + 1) * T * T),
          rows: T,
          cols: T,
          rowLabels: labels,
          colLabels: labels,
          causal: e.mask === 'causal',
          textColour,
        });
      }
      drawnEntry = e;
      drawnWidth = width;
    } catch (err) {
      message.textContent = `The snapshot at step ${e.step} could not be drawn: ${err instanceof Error ? err.message : String(err)}`;
    }
  }

  // ---- Charts
  /** Draws the vertical marker at the selected step. */
  function markerPlugin(): uPlot.Plugin {
    return {
      hooks: {
        draw: [
          (u: uPlot) => {
            const e = entries[sel];
            if (!e) return;
            const x = Math.round(u.valToPos(e.step, 'x', true));
            const { top, height, left, width } = u.bbox;
            if (x < left - 1 || x > left + width + 1) return;
            const g = u.ctx;
            g.save();
            g.strokeStyle = '#d6336c';
            g.lineWidth = Math.max(1, devicePixelRatio || 1) * 1.5;
            g.setLineDash([4 * (devicePixelRatio || 1), 3 * (devicePixelRatio || 1)]);
            g.beginPath();
            g.moveTo(x + 0.5, top);
            g.lineTo(x + 0.5, top + height);
            g.stroke();
            g.restore();
          },
        ],
      },
    };
  }

  function chartWidth(c: Chart): number {
    return Math.max(180, Math.floor(c.el.clientWidth || 280));
  }

  function buildChart(c: Chart, H: number): void {
    c.plot?.destroy();
    c.el.replaceChildren();
    const width = chartWidth(c);
    const axis = axisColours(panel);
    const series: uPlot.Series[] = [{ label: 'step', value: (_u, v) => (v == null ? '—' : String(v)) }];
    for (let hh = 0; hh < H; ++hh) {
      series.push({ label: `Head ${hh + 1}`, stroke: headColour(hh), width: 1.5, spanGaps: false, points: { show: false }, value: (_u, v) => fmt3(v) });
    }
    const options: uPlot.Options = {
      width,
      height: Math.round(Math.min(200, Math.max(140, width * 0.42))),
      cursor: { drag: { x: false, y: false }, points: { size: 5 } },
      legend: { live: true },
      scales: { x: { time: false }, y: { range: c.spec.range } },
      axes: [
        { ...axis, label: 'step', labelSize: 18, size: 32 },
        { ...axis, label: c.spec.axis, labelSize: 18, size: 44 },
      ],
      series,
      plugins: [markerPlugin()],
    };
    c.plot = new uPlot(options, chartData(c.spec, H), c.el);
    c.heads = H;
    c.el.dataset.series = String(H);
  }

  function chartData(spec: ChartSpec, H: number): uPlot.AlignedData {
    const kept = entries.filter((e) => e.H === H);
    const x = kept.map((e) => e.step);
    const ys = Array.from({ length: H }, (_, hh) => kept.map((e) => {
      const v = spec.value(e, hh);
      return Number.isFinite(v) ? v : null;
    }));
    return [x, ...ys];
  }

  function renderCharts(): void {
    const H = entries.length > 0 ? entries[entries.length - 1].H : 0;
    for (const c of charts) {
      if (H === 0) {
        // Nothing to plot yet (or a new run): an empty chart of the old shape until data comes.
        if (c.plot) c.plot.setData(chartData(c.spec, c.heads));
        continue;
      }
      if (!visible()) {
        stale = true;
        continue;
      }
      if (!c.plot || c.heads !== H) buildChart(c, H);
      else c.plot.setData(chartData(c.spec, H));
    }
  }

  function redrawMarkers(): void {
    for (const c of charts) c.plot?.redraw(false, false);
  }

  // ---- Scrubbing and play-through
  function select(i: number, byUser: boolean): void {
    const n = entries.length;
    if (n === 0) return;
    sel = Math.max(0, Math.min(n - 1, i));
    if (byUser) followEnd = sel === n - 1;
    renderMeta();
    renderEntry();
  }

  scrubber.addEventListener('input', () => {
    stopPlayThrough();
    select(Number(scrubber.value), true);
  });

  let playingThrough = false;
  let playTimer: ReturnType<typeof setTimeout> | null = null;
  const frameMs = opts.reducedMotion ? 500 : 125;

  function setPlayLabel(): void {
    playBtn.textContent = playingThrough ? 'Stop' : 'Play-through';
    playBtn.setAttribute('aria-pressed', String(playingThrough));
    panel.dataset.playthrough = playingThrough ? 'playing' : 'stopped';
  }

  function stopPlayThrough(): void {
    if (playTimer !== null) clearTimeout(playTimer);
    playTimer = null;
    if (!playingThrough) return;
    playingThrough = false;
    setPlayLabel();
  }

  function playFrame(): void {
    playTimer = null;
    if (destroyed || !playingThrough) return;
    if (sel >= entries.length - 1) {
      followEnd = true;
      stopPlayThrough();
      return;
    }
    sel += 1;
    followEnd = false;
    renderMeta();
    renderEntry();
    playTimer = setTimeout(playFrame, frameMs);
  }

  playBtn.addEventListener('click', () => {
    if (playingThrough) {
      stopPlayThrough();
      followEnd = sel === entries.length - 1;
      return;
    }
    if (entries.length < 2) return;
    playingThrough = true;
    setPlayLabel();
    // From the current position; from the first snapshot when already at the end.
    if (sel >= entries.length - 1) {
      sel = 0;
      followEnd = false;
      renderMeta();
      renderEntry();
    }
    playTimer = setTimeout(playFrame, frameMs);
  });
  setPlayLabel();

  // ---- Controller -> fetches
  function onController(): void {
    if (ctl.runId !== heldRun) dropRun();
    const key = `${ctl.runId}|${ctl.snapshot?.step ?? ''}|${ctl.status}`;
    if (ctl.status === 'playing') wantFetch();
    else if (key !== lastKey || stale) wantFetch();
    lastKey = key;
  }
  const unsubscribe = ctl.subscribe(onController);

  // Width changes, and the train view being shown again, redraw (and fetch what was missed).
  const ro = new ResizeObserver(() => {
    if (!visible()) return;
    labelColour = '';
    for (const c of charts) {
      if (c.plot) {
        const w = chartWidth(c);
        if (Math.abs(w - c.plot.width) >= 1) c.plot.setSize({ width: w, height: Math.round(Math.min(200, Math.max(140, w * 0.42))) });
      }
    }
    if (stale) {
      renderCharts();
      wantFetch();
    }
    renderEntry();
  });
  ro.observe(panel);
  // A theme change: labels and axes take the new colours.
  const unrestyle = opts.onRestyle(() => {
    labelColour = '';
    for (const c of charts) {
      c.plot?.destroy();
      c.plot = null;
    }
    renderCharts();
    renderEntry();
  });

  renderMeta();
  renderEntry();
  onController();

  return () => {
    destroyed = true;
    unsubscribe();
    unrestyle();
    ro.disconnect();
    clearTimer();
    stopPlayThrough();
    for (const c of charts) c.plot?.destroy();
    panel.replaceChildren();
  };
}
