// The live loss chart: loss per step, linear or log y, with the exact value of the hovered step in
// the legend (a step chart, draw/chart.ts), and on request the chance level ln V, a smoothed curve
// beside the raw one, and the epoch means of the curriculum's demo; a dashed line marks the phase
// change once the core has found one. The text task adds the validation loss (measured at some
// steps, joined) and the corpus's unigram entropy (dashed). Every line is in one unit, the task's
// (nats, or bits per character on text), named on the y axis. Before the first step it still draws
// the step-0 loss (a dot) and the chance or unigram line across the first 100 steps, so the learner
// can compare them before pressing Play. Only draws what it is given.
import type uPlot from 'uplot';
import { stepChart, stepChartHeight, stepMarker, type StepSeries } from './chart';
import { alignPoints } from '../model/text';
import { ema, epochMeans } from './loss-series';
import { exact, perNat, tick, type LossUnit } from '../model/format';

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
  /** The unit every line is drawn in: the core's nats, or bits (per character, on text). */
  unit: LossUnit;
}

/** The y axis label: the loss, its unit, and the scale. */
export function lossAxisLabel(unit: LossUnit, logY: boolean): string {
  return `loss (${unit}${logY ? ', log scale' : ''})`;
}

/** The sentence under the chart: what its lines are, for the text task or the others, and for
 * the causal or the masked objective. */
export function lossChartCaption(text: boolean, masked: boolean): string {
  const what = masked
    ? 'The loss of every step (hover for its exact value), counted on the hidden positions only. '
    : 'The loss of every step (hover for its exact value). The dot at step 0 is the untrained model, before you press Play. ';
  const line = text
    ? 'On text every line is in bits per character, and the dashed one is the unigram entropy (see above). '
    : 'The dashed line is chance, ln V nats: the loss of a model that spreads its guess evenly over the V tokens. A falling curve means the heads are finding the positions that hold the answer. ';
  return `${what}${line}"Smoothed" averages out the batch-to-batch noise; "epoch means" shows the mean of each ${DEMO_EPOCH_STEPS} steps, as the curriculum's demo prints them.`;
}

/** The x range drawn before the first step, so the chance line has a length. */
export const EMPTY_STEPS = 100;

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
    this.opts = { chance: null, smooth: false, epochSteps: 0, unigram: null, unit: 'nats', ...opts };
    this.width = opts.width;
    this.build();
  }

  /** The lines drawn, in data order after x: loss, then the optional ones. */
  private series(): StepSeries[] {
    const o = this.opts;
    // A level line's value is the same at every step: the legend shows it without a hover too.
    const level = (nats: number) => (v: number | null | undefined) => exact(v ?? nats * perNat(o.unit));
    const s: StepSeries[] = [{ label: 'loss', stroke: o.smooth ? 'rgba(59, 82, 139, 0.35)' : '#3b528b', value: exact, width: o.smooth ? 1 : 1.5, dotsUpTo: 2 }];
    if (o.smooth) s.push({ label: 'smoothed', stroke: '#3b528b', value: exact, width: 2 });
    if (o.epochSteps > 0) s.push({ label: `epoch mean (${o.epochSteps} steps)`, stroke: '#c2571a', value: exact, width: 2, stepped: true });
    if (o.chance !== null) s.push({ label: 'chance (ln V)', stroke: '#7a7a7a', value: level(o.chance), width: 1, dash: [6, 4] });
    if (o.unigram !== null) {
      s.push({ label: 'validation', stroke: '#c2571a', value: exact, width: 2, spanGaps: true });
      s.push({ label: 'unigram entropy', stroke: '#7a7a7a', value: level(o.unigram), width: 1, dash: [6, 4] });
    }
    return s;
  }

  private build(): void {
    this.plot?.destroy();
    const logY = this.opts.logY;
    const phase = stepMarker(() => (this.phaseStep >= 0 ? this.phaseStep : null), '#b8326b', 'phase change');
    const spec = { yLabel: lossAxisLabel(this.opts.unit, logY), logY, series: this.series(), yTick: tick, plugins: [phase] };
    this.plot = stepChart(this.el, spec, this.data, this.width, stepChartHeight(this.width, HEIGHT, 0.45));
    this.el.dataset.scale = logY ? 'log' : 'linear';
    this.el.dataset.unit = this.opts.unit;
    // uPlot draws the axis label on the canvas; the attribute says it for tests and tools.
    this.el.dataset.yLabel = spec.yLabel;
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

  /** The data columns: x, the loss, then the optional lines of series(), all in the chart's unit.
   * With no step yet, x runs from 0 to EMPTY_STEPS: the step-0 loss is one dot and the flat lines
   * span the range. */
  private columns(initLoss: number, losses: Float32Array, stride: number): uPlot.AlignedData {
    const k = perNat(this.opts.unit);
    const o = this.opts;
    const first = Number.isFinite(initLoss) ? 1 : 0;
    const val = this.validation.losses.map((v) => v * k);
    const means = o.epochSteps > 0 ? epochMeans(losses, stride, o.epochSteps).map((m) => m * k) : [];
    let cols: uPlot.AlignedData[number][];
    if (losses.length === 0) {
      // Two x values, 0 and EMPTY_STEPS; uPlot leaves null out (NaN it would draw).
      const at0 = [first ? initLoss * k : null, null];
      const flat = (v: number) => [v * k, v * k];
      cols = [[0, EMPTY_STEPS], at0];
      if (o.smooth) cols.push(at0);
      if (o.epochSteps > 0) cols.push([null, null]);
      if (o.chance !== null) cols.push(flat(o.chance));
      if (o.unigram !== null) cols.push([null, null], flat(o.unigram));
    } else {
      const n = first + losses.length;
      const x = new Float64Array(n);
      const y = new Float64Array(n);
      if (first) y[0] = initLoss * k;
      for (let i = 0; i < losses.length; ++i) {
        x[first + i] = 1 + i * stride;
        y[first + i] = losses[i] * k;
      }
      cols = [x, y];
      if (o.smooth) cols.push(ema(y, SMOOTHING ** stride));
      if (o.epochSteps > 0) {
        const m = new Float64Array(n).fill(NaN);
        for (let i = 0; i < losses.length; ++i) m[first + i] = means[Math.floor((i * stride) / o.epochSteps)];
        cols.push(m);
      }
      if (o.chance !== null) cols.push(new Float64Array(n).fill(o.chance * k));
      if (o.unigram !== null) cols.push(alignPoints(x, this.validation.steps, val) as unknown as Float64Array, new Float64Array(n).fill(o.unigram * k));
    }
    this.el.dataset.chance = o.chance === null ? '' : String(o.chance * k);
    this.el.dataset.unigram = o.unigram === null ? '' : String(o.unigram * k);
    this.el.dataset.validation = o.unigram === null ? '' : val.join(',');
    this.el.dataset.epochMeans = means.join(',');
    this.el.dataset.initLoss = first ? String(initLoss * k) : '';
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

