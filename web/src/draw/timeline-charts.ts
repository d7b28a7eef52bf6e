// The timeline's plots, per head (of every layer) against the step: the mean attention entropy, the
// answer mass, and the core's previous-token and prefix-matching scores (they tell which
// head is which), each a step chart (draw/chart.ts) with a marker at the selected step. Only draws
// what it is given.
import type uPlot from 'uplot';
import { num } from '../model/format';
import { headLabel } from '../model/layers';
import type { TimelineEntry } from '../model/timeline';
import { hasHeadStats } from '../model/timeline';
import { stepChart, stepChartHeight, stepMarker } from './chart';

/** One colour per head (up to 16 heads), distinguishable on light and dark backgrounds. */
const HEAD_COLOURS = [
  '#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f',
  '#bcbd22', '#17becf', '#6b6ecf', '#e7ba52', '#637939', '#ad494a', '#a55194', '#3182bd',
];

/** The colour of head h in the plots (and its swatch beside the heatmaps). */
export const headColour = (h: number): string => HEAD_COLOURS[h % HEAD_COLOURS.length];

const HEIGHT: [number, number] = [140, 200];
const RATIO = 0.42;

/** What one plot shows: a per-head statistic of an entry. */
export interface TimelinePlotSpec {
  key: 'entropy' | 'answer-mass' | 'previous-token' | 'prefix-matching';
  title: string;
  axis: string;
  value: (e: TimelineEntry, head: number) => number;
  range: uPlot.Scale['range'];
}

/** The plots. */
export const TIMELINE_PLOTS: TimelinePlotSpec[] = [
  {
    key: 'entropy',
    title: 'Mean attention entropy',
    axis: 'entropy (nats)',
    value: (e, h) => e.entropy[h],
    range: (_u, _min, max) => [0, Math.max(0.1, Number.isFinite(max) ? max * 1.08 : 1)],
  },
  {
    key: 'answer-mass',
    title: 'Answer mass',
    axis: 'answer mass',
    value: (e, h) => e.answerMass[h],
    range: [0, 1],
  },
  {
    key: 'previous-token',
    title: 'Previous-token score',
    axis: 'previous-token',
    value: (e, h) => e.previousToken[h],
    range: [0, 1],
  },
  {
    key: 'prefix-matching',
    title: 'Prefix-matching score',
    axis: 'prefix-matching',
    value: (e, h) => e.prefixMatching[h],
    range: [0, 1],
  },
];

/** One plot in its container el, rebuilt when the head count changes. */
export class TimelinePlot {
  #plot: uPlot | null = null;
  /** The shape the plot was built for: layers and heads per layer (heads: every layer's). */
  heads = 0;
  #shape = '';

  /** selectedStep() gives the step the marker is drawn at (null: none). */
  constructor(
    readonly spec: TimelinePlotSpec,
    readonly el: HTMLElement,
    private readonly selectedStep: () => number | null,
  ) {}

  get built(): boolean {
    return this.#plot !== null;
  }

  /** Plots the entries of L layers of H heads (those of another shape are left out). */
  draw(entries: readonly TimelineEntry[], L: number, H: number): void {
    if (!this.#plot || this.#shape !== `${L}x${H}`) this.#build(entries, L, H);
    else this.#plot.setData(data(this.spec, entries, L, H));
  }

  /** Empties the plot, keeping its shape (a new run, before its data comes). */
  clear(): void {
    this.#plot?.setData(data(this.spec, [], 1, this.heads));
  }

  /** Redraws the marker only. */
  redrawMarker(): void {
    this.#plot?.redraw(false, false);
  }

  /** Follows the container's width. */
  fitWidth(): void {
    if (!this.#plot) return;
    const w = this.#width();
    if (Math.abs(w - this.#plot.width) >= 1) this.#plot.setSize({ width: w, height: stepChartHeight(w, HEIGHT, RATIO) });
  }

  /** Removes the plot (the next draw builds it again, e.g. in a new theme's colours). */
  destroy(): void {
    this.#plot?.destroy();
    this.#plot = null;
  }

  #width(): number {
    return Math.max(180, Math.floor(this.el.clientWidth || 280));
  }

  #build(entries: readonly TimelineEntry[], L: number, H: number): void {
    this.#plot?.destroy();
    const width = this.#width();
    const series = Array.from({ length: L * H }, (_, g) => ({ label: headLabel(g, H, L), stroke: headColour(g), value: (v: number | null | undefined) => num(v) }));
    const spec = { yLabel: this.spec.axis, series, yRange: this.spec.range, plugins: [stepMarker(this.selectedStep, '#d6336c')] };
    this.#plot = stepChart(this.el, spec, data(this.spec, entries, L, H), width, stepChartHeight(width, HEIGHT, RATIO));
    this.heads = L * H;
    this.#shape = `${L}x${H}`;
    this.el.dataset.series = String(L * H);
  }
}

/** [steps, head 1's values, head 2's, ...] of the entries of L layers of H heads that measured
 * the heads (non-finite: a gap); heads in global order. */
function data(spec: TimelinePlotSpec, entries: readonly TimelineEntry[], L: number, H: number): uPlot.AlignedData {
  const kept = entries.filter((e) => e.H === H && e.L === L && hasHeadStats(e));
  const ys = Array.from({ length: L * H }, (_, h) =>
    kept.map((e) => {
      const v = spec.value(e, h);
      return Number.isFinite(v) ? v : null;
    }),
  );
  return [kept.map((e) => e.step), ...ys];
}
