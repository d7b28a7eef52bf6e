// The live loss chart: loss per step, linear or log y, with the exact value of the hovered step in
// the legend (a step chart, draw/chart.ts), and on request the chance level ln V, a smoothed curve
// beside the raw one, and the epoch means of the curriculum's demo; a dashed line marks the phase
// change once the core has found one. The text task adds the validation loss (measured at some
// steps, joined) and the corpus's unigram entropy (dashed). Only draws what it is given.
import type uPlot from 'uplot';
import { stepChart, stepChartHeight, stepMarker, type StepSeries } from './chart';
import { alignPoints } from '../model/text';
import { ema, epochMeans } from './loss-series';
import { exact, tick } from '../model/format';

const HEIGHT: [number, number] = [160, 240];

/** What the loss chart shows besides the loss. */
export interface LossChartOptions {
  logY: boolean;
  /** The chance level ln V (a dashed line), or null for none. */
  chance: number | null;
  /** A smoothed curve (EMA) over the raw points. */
  smooth: boolean;
  /** The mean loss of each epoch of this many steps (the demo's 120), or 0 for none. */
  epochSteps: number;
  /** Task text: the unigram entropy in nats (a dashed line) and the validation loss; null: none. */
  unigram: number | null;
}

/** Steps per epoch of the curriculum's demo (3 epochs x 120 steps). */
export const DEMO_EPOCH_STEPS = 120;

/** How much the smoothed curve remembers: each step moves it 5% of the way. */
export const SMOOTHING = 0.95;

/** A uPlot line chart of loss against step. */
export class LossChart {
  private plot: uPlot | null = null;
  private data: uPlot.AlignedData = [new Float64Array(0), new Float64Array(0)];
  private opts: LossChartOptions;
  private width: number;
  private history: { initLoss: number; losses: Float32Array; stride: number } | null = null;
  /** The phase change's step, or -1 (none). */
  private phaseStep = -1;
  /** The validation loss at some steps (task text). */
  private validation: { steps: number[]; losses: number[] } = { steps: [], losses: [] };

  /** Creates the chart inside el, width CSS pixels wide. */
  constructor(private readonly el: HTMLElement, opts: Partial<LossChartOptions> & { logY: boolean; width: number }) {
    this.opts = { chance: null, smooth: false, epochSteps: 0, unigram: null, ...opts };
    this.width = opts.width;
    this.build();
  }

  /** The lines drawn, in data order after x: loss, then the optional ones. */
  private series(): StepSeries[] {
    const o = this.opts;
    const s: StepSeries[] = [{ label: 'loss', stroke: o.smooth ? 'rgba(59, 82, 139, 0.35)' : '#3b528b', value: exact, width: o.smooth ? 1 : 1.5 }];
    if (o.smooth) s.push({ label: 'smoothed', stroke: '#3b528b', value: exact, width: 2 });
    if (o.epochSteps > 0) s.push({ label: `epoch mean (${o.epochSteps} steps)`, stroke: '#c2571a', value: exact, width: 2, stepped: true });
    if (o.chance !== null) s.push({ label: 'chance (ln V)', stroke: '#7a7a7a', value: exact, width: 1, dash: [6, 4] });
    if (o.unigram !== null) {
      s.push({ label: 'validation', stroke: '#c2571a', value: exact, width: 2, spanGaps: true });
      s.push({ label: 'unigram entropy', stroke: '#7a7a7a', value: exact, width: 1, dash: [6, 4] });
    }
    return s;
  }

  private build(): void {
    this.plot?.destroy();
    const logY = this.opts.logY;
    const phase = stepMarker(() => (this.phaseStep >= 0 ? this.phaseStep : null), '#b8326b', 'phase change');
    const spec = { yLabel: logY ? 'loss (log)' : 'loss', logY, series: this.series(), yTick: tick, plugins: [phase] };
    this.plot = stepChart(this.el, spec, this.data, this.width, stepChartHeight(this.width, HEIGHT, 0.45));
    this.el.dataset.scale = logY ? 'log' : 'linear';
    this.el.dataset.series = spec.series.map((x) => x.label).join('|');
  }

  /** Changes what is drawn besides the loss (rebuilds the chart). */
  setOptions(opts: Partial<LossChartOptions>): void {
    const next = { ...this.opts, ...opts };
    if (Object.keys(next).every((k) => next[k as keyof LossChartOptions] === this.opts[k as keyof LossChartOptions])) return;
    this.opts = next;
    this.data = this.history ? this.columns(this.history.initLoss, this.history.losses, this.history.stride) : this.columns(NaN, new Float32Array(0), 1);
    this.build();
  }

  /** The data columns: x, the loss, then the optional lines of series(). */
  private columns(initLoss: number, losses: Float32Array, stride: number): uPlot.AlignedData {
    const first = Number.isFinite(initLoss) ? 1 : 0;
    const n = first + losses.length;
    const x = new Float64Array(n);
    const y = new Float64Array(n);
    if (first) y[0] = initLoss;
    for (let i = 0; i < losses.length; ++i) {
      x[first + i] = 1 + i * stride;
      y[first + i] = losses[i];
    }
    const cols: uPlot.AlignedData[number][] = [x, y];
    const o = this.opts;
    if (o.smooth) cols.push(ema(y, SMOOTHING ** stride));
    const means = o.epochSteps > 0 ? epochMeans(losses, stride, o.epochSteps) : [];
    if (o.epochSteps > 0) {
      const m = new Float64Array(n).fill(NaN);
      for (let i = 0; i < losses.length; ++i) m[first + i] = means[Math.floor((i * stride) / o.epochSteps)];
      cols.push(m);
    }
    if (o.chance !== null) cols.push(new Float64Array(n).fill(o.chance));
    if (o.unigram !== null) {
      cols.push(alignPoints(x, this.validation.steps, this.validation.losses) as unknown as Float64Array);
      cols.push(new Float64Array(n).fill(o.unigram));
    }
    this.el.dataset.chance = o.chance === null ? '' : String(o.chance);
    this.el.dataset.unigram = o.unigram === null ? '' : String(o.unigram);
    this.el.dataset.validation = o.unigram === null ? '' : this.validation.losses.join(',');
    this.el.dataset.epochMeans = means.join(',');
    return cols as uPlot.AlignedData;
  }

  /** Replaces the data: the loss at init is step 0, losses[i] the loss of step 1 + i * stride. */
  setLosses(initLoss: number, losses: Float32Array, stride: number, validation?: { steps: number[]; losses: number[] }): void {
    this.history = { initLoss, losses, stride };
    this.validation = validation ?? { steps: [], losses: [] };
    this.data = this.columns(initLoss, losses, stride);
    const t0 = performance.now();
    // batch() redraws now rather than in a microtask, so the measure below covers the redraw.
    this.plot!.batch(() => this.plot!.setData(this.data));
    performance.measure('playground:chart', { start: t0 });
    if (performance.getEntriesByName('playground:chart').length > 2000) performance.clearMeasures('playground:chart');
  }

  /** Marks the phase change at step (-1: no mark). */
  setPhaseChange(step: number): void {
    if (step === this.phaseStep) return;
    this.phaseStep = step;
    this.el.dataset.phaseChange = String(step);
    this.plot?.redraw(false, false);
  }

  /** Switches between linear and log y (rebuilds the chart). */
  setLogY(logY: boolean): void {
    this.setOptions({ logY });
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
