// The one uPlot set-up of the page: a line chart of values against the training step (or another x), with the
// hovered step's values in a live legend and axes in the container's text colour (so they follow
// the theme). The loss chart and the timeline's plots are built on it. Only draws.
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

/** uPlot axis colours from el's text colour (resolved, so it follows the theme): labels and ticks
 * in it, the grid in it at low opacity. */
export function axisColours(el: HTMLElement): Pick<uPlot.Axis, 'stroke' | 'grid' | 'ticks'> {
  const fg = getComputedStyle(el).color || '#222';
  const rgb = /^rgba?\((\d+),\s*(\d+),\s*(\d+)/.exec(fg);
  const faint = rgb ? `rgba(${rgb[1]}, ${rgb[2]}, ${rgb[3]}, 0.14)` : 'rgba(128, 128, 128, 0.2)';
  return { stroke: fg, grid: { stroke: faint, width: 1 }, ticks: { stroke: faint, width: 1 } };
}

/** One line of a step chart. */
export interface StepSeries {
  label: string;
  stroke: string;
  /** The legend's text for a value. */
  value: (v: number | null | undefined) => string;
  /** Line width in CSS pixels (default 1.5) and dash pattern (default solid). */
  width?: number;
  dash?: number[];
  /** Draw as steps (flat between points), e.g. for per-epoch means. */
  stepped?: boolean;
  /** Join the points across null gaps (a curve measured only at some steps). */
  spanGaps?: boolean;
  /** Draw a dot at each point when the chart holds at most this many x values (a curve of one
   * point, which a line cannot show). Default: never. */
  dotsUpTo?: number;
}

/** What a step chart shows. */
export interface StepChartSpec {
  /** The y axis label. */
  yLabel: string;
  /** The x axis label and the legend's name for x (default 'step'). */
  xLabel?: string;
  series: StepSeries[];
  /** Log scale on y (base 10). */
  logY?: boolean;
  /** A fixed or computed y range (uPlot's scale range). */
  yRange?: uPlot.Scale['range'];
  /** The y tick labels (default uPlot's). */
  yTick?: (v: number) => string;
  plugins?: uPlot.Plugin[];
}

/** The chart height for a width: wide charts are not taller than maxHeight. */
export function stepChartHeight(width: number, [min, max]: [number, number], ratio: number): number {
  return Math.round(Math.min(max, Math.max(min, width * ratio)));
}

/** Builds a step chart in el (emptied first), width x height CSS pixels, with data [x, ...ys]. */
export function stepChart(el: HTMLElement, spec: StepChartSpec, data: uPlot.AlignedData, width: number, height: number): uPlot {
  el.replaceChildren();
  const axis = axisColours(el);
  const options: uPlot.Options = {
    width,
    height,
    cursor: { drag: { x: false, y: false }, points: { size: 6 } },
    legend: { live: true },
    scales: { x: { time: false }, y: spec.logY ? { distr: 3 } : { range: spec.yRange } },
    axes: [
      { ...axis, label: spec.xLabel ?? 'step', labelSize: 18, size: 32 },
      { ...axis, label: spec.yLabel, labelSize: 18, size: 46, ...(spec.yTick ? { values: (_u: uPlot, splits: number[]) => splits.map((v) => (v == null ? '' : spec.yTick!(v))) } : {}) },
    ],
    series: [
      { label: spec.xLabel ?? 'step', value: (_u, v) => (v == null ? '—' : String(v)) },
      ...spec.series.map((s) => ({
        label: s.label,
        stroke: s.stroke,
        width: s.width ?? 1.5,
        dash: s.dash,
        paths: s.stepped ? uPlot.paths.stepped!({ align: 1 }) : undefined,
        spanGaps: s.spanGaps ?? false,
        points: { show: (u: uPlot) => u.data[0].length <= (s.dotsUpTo ?? 0), size: 7 },
        value: (_u: uPlot, v: number | null) => s.value(v),
      })),
    ],
    plugins: spec.plugins,
  };
  return new uPlot(options, data, el);
}

/** A plugin that draws a dashed vertical line at step() (null: none) in colour, with an optional
 * label beside its top (the timeline's selected step, the loss chart's phase change). */
export function stepMarker(step: () => number | null, colour: string, label?: string): uPlot.Plugin {
  return {
    hooks: {
      draw: [
        (u: uPlot) => {
          const at = step();
          if (at === null) return;
          const x = Math.round(u.valToPos(at, 'x', true));
          const { top, height, left, width } = u.bbox;
          if (x < left - 1 || x > left + width + 1) return;
          const dpr = devicePixelRatio || 1;
          const g = u.ctx;
          g.save();
          g.strokeStyle = colour;
          g.lineWidth = Math.max(1, dpr) * 1.5;
          g.setLineDash([4 * dpr, 3 * dpr]);
          g.beginPath();
          g.moveTo(x + 0.5, top);
          g.lineTo(x + 0.5, top + height);
          g.stroke();
          if (label) {
            g.fillStyle = colour;
            g.font = `${Math.round(11 * dpr)}px sans-serif`;
            const w = g.measureText(label).width;
            const right = x + 4 * dpr + w <= left + width;
            g.textAlign = right ? 'left' : 'right';
            g.fillText(label, right ? x + 4 * dpr : x - 4 * dpr, top + 12 * dpr);
          }
          g.restore();
        },
      ],
    },
  };
}
