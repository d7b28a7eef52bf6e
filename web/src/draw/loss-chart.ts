// The live loss chart (uPlot): loss per step, linear or log y, with the exact value of the hovered
// step in the legend. Only draws what it is given.
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

/** Formats a loss for the hover legend: exact to float32 precision. */
export function formatLoss(v: number | null | undefined): string {
  return v == null || !Number.isFinite(v) ? '—' : Number(v.toPrecision(7)).toString();
}

/** uPlot axis colours from el's text colour (resolved, so it follows the theme): labels and ticks
 * in it, the grid in it at low opacity. */
export function axisColours(el: HTMLElement): Pick<uPlot.Axis, 'stroke' | 'grid' | 'ticks'> {
  const fg = getComputedStyle(el).color || '#222';
  const rgb = /^rgba?\((\d+),\s*(\d+),\s*(\d+)/.exec(fg);
  const faint = rgb ? `rgba(${rgb[1]}, ${rgb[2]}, ${rgb[3]}, 0.14)` : 'rgba(128, 128, 128, 0.2)';
  return { stroke: fg, grid: { stroke: faint, width: 1 }, ticks: { stroke: faint, width: 1 } };
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
    const axis = axisColours(this.el);
    const opts: uPlot.Options = {
      width: this.width,
      height: Math.round(Math.min(240, Math.max(160, this.width * 0.45))),
      cursor: { drag: { x: false, y: false }, points: { size: 6 } },
      legend: { live: true },
      scales: { x: { time: false }, y: { distr: this.logY ? 3 : 1 } },
      axes: [
        { label: 'step', labelSize: 18, size: 32, ...axis },
        { label: this.logY ? 'loss (log)' : 'loss', labelSize: 18, size: 46, ...axis },
      ],
      series: [
        { label: 'step', value: (_u, v) => (v == null ? '—' : String(v)) },
        { label: 'loss', stroke: '#3b528b', width: 1.5, value: (_u, v) => formatLoss(v), points: { show: false } },
      ],
    };
    this.plot = new uPlot(opts, this.data, this.el);
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
    this.plot!.setSize({ width, height: Math.round(Math.min(240, Math.max(160, width * 0.45))) });
  }

  /** Removes the chart. */
  destroy(): void {
    this.plot?.destroy();
    this.plot = null;
  }
}
