// The timeline's two plots, per head against the step: the mean attention entropy and the answer
// mass, each a step chart (draw/chart.ts) with a marker at the selected step. Only draws what it is
// given.
import type uPlot from 'uplot';
import type { TimelineEntry } from '../protocol';
import { stepChart, stepChartHeight, stepMarker } from './chart';

/** One colour per head (up to 16 heads), distinguishable on light and dark backgrounds. */
const HEAD_COLOURS = [
  '#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f',
  '#bcbd22', '#17becf', '#6b6ecf', '#e7ba52', '#637939', '#ad494a', '#a55194', '#3182bd',
];

/** The colour of head h in the plots (and its swatch beside the heatmaps). */
export const headColour = (h: number): string => HEAD_COLOURS[h % HEAD_COLOURS.length];

/** A value with three decimals, or a dash. */
export const fmt3 = (v: number | null | undefined): string => (v == null || !Number.isFinite(v) ? '—' : v.toFixed(3));

const HEIGHT: [number, number] = [140, 200];
const RATIO = 0.42;

/** What one plot shows: a per-head statistic of an entry. */
export interface TimelinePlotSpec {
  key: 'entropy' | 'answer-mass';
  title: string;
  axis: string;
  value: (e: TimelineEntry, head: number) => number;
  range: uPlot.Scale['range'];
}

/** The two plots. */
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
];

/** One plot in its container el, rebuilt when the head count changes. */
export class TimelinePlot {
  #plot: uPlot | null = null;
  /** The head count the plot was built for. */
  heads = 0;

  /** selectedStep() gives the step the marker is drawn at (null: none). */
  constructor(
    readonly spec: TimelinePlotSpec,
    readonly el: HTMLElement,
    private readonly selectedStep: () => number | null,
  ) {}

  get built(): boolean {
    return this.#plot !== null;
  }

  /** Plots the entries of H heads (those of another head count are left out). */
  draw(entries: readonly TimelineEntry[], H: number): void {
    if (!this.#plot || this.heads !== H) this.#build(entries, H);
    else this.#plot.setData(data(this.spec, entries, H));
  }

  /** Empties the plot, keeping its shape (a new run, before its data comes). */
  clear(): void {
    this.#plot?.setData(data(this.spec, [], this.heads));
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

  #build(entries: readonly TimelineEntry[], H: number): void {
    this.#plot?.destroy();
    const width = this.#width();
    const series = Array.from({ length: H }, (_, h) => ({ label: `Head ${h + 1}`, stroke: headColour(h), value: fmt3 }));
    const spec = { yLabel: this.spec.axis, series, yRange: this.spec.range, plugins: [stepMarker(this.selectedStep, '#d6336c')] };
    this.#plot = stepChart(this.el, spec, data(this.spec, entries, H), width, stepChartHeight(width, HEIGHT, RATIO));
    this.heads = H;
    this.el.dataset.series = String(H);
  }
}

/** [steps, head 1's values, head 2's, ...] of the entries with H heads (non-finite: a gap). */
function data(spec: TimelinePlotSpec, entries: readonly TimelineEntry[], H: number): uPlot.AlignedData {
  const kept = entries.filter((e) => e.H === H);
  const ys = Array.from({ length: H }, (_, h) =>
    kept.map((e) => {
      const v = spec.value(e, h);
      return Number.isFinite(v) ? v : null;
    }),
  );
  return [kept.map((e) => e.step), ...ys];
}
