// The live loss chart: loss per step, linear or log y, with the exact value of the hovered step in
// the legend (a step chart, draw/chart.ts). Only draws what it is given.
import type uPlot from 'uplot';
import { stepChart, stepChartHeight } from './chart';

const HEIGHT: [number, number] = [160, 240];

/** Formats a loss for the hover legend: exact to float32 precision. */
export function formatLoss(v: number | null | undefined): string {
  return v == null || !Number.isFinite(v) ? '—' : Number(v.toPrecision(7)).toString();
}

/** A uPlot line chart of loss against step. */
export class LossChart {
  private plot: uPlot | null = null;
  private data: uPlot.AlignedData = [new Float64Array(0), new Float64Array(0)];
  private logY: boolean;
  private width: number;

  /** Creates the chart inside el, width CSS pixels wide. */
  constructor(private readonly el: HTMLElement, opts: { logY: boolean; width: number }) {
    this.logY = opts.logY;
    this.width = opts.width;
    this.build();
  }

  private build(): void {
    this.plot?.destroy();
    const spec = { yLabel: this.logY ? 'loss (log)' : 'loss', logY: this.logY, series: [{ label: 'loss', stroke: '#3b528b', value: formatLoss }] };
    this.plot = stepChart(this.el, spec, this.data, this.width, stepChartHeight(this.width, HEIGHT, 0.45));
    this.el.dataset.scale = this.logY ? 'log' : 'linear';
  }

  /** Replaces the data: the loss at init is step 0, losses[i] the loss of step 1 + i * stride. */
  setLosses(initLoss: number, losses: Float32Array, stride: number): void {
    const first = Number.isFinite(initLoss) ? 1 : 0;
    const x = new Float64Array(first + losses.length);
    const y = new Float64Array(first + losses.length);
    if (first) y[0] = initLoss;
    for (let i = 0; i < losses.length; ++i) {
      x[first + i] = 1 + i * stride;
      y[first + i] = losses[i];
    }
    this.data = [x, y];
    const t0 = performance.now();
    // batch() redraws now rather than in a microtask, so the measure below covers the redraw.
    this.plot!.batch(() => this.plot!.setData(this.data));
    performance.measure('playground:chart', { start: t0 });
    if (performance.getEntriesByName('playground:chart').length > 2000) performance.clearMeasures('playground:chart');
  }

  /** Switches between linear and log y (rebuilds the chart). */
  setLogY(logY: boolean): void {
    if (logY === this.logY) return;
    this.logY = logY;
    this.build();
  }

  /** Takes the container's current text colour for the axes (after a theme change). */
  restyle(): void {
    this.build();
  }

  /** Follows the container's width. */
  setWidth(width: number): void {
    if (Math.abs(width - this.width) < 1) return;
    this.width = width;
    this.plot!.setSize({ width, height: stepChartHeight(width, HEIGHT, 0.45) });
  }

  /** Removes the chart. */
  destroy(): void {
    this.plot?.destroy();
    this.plot = null;
  }
}
