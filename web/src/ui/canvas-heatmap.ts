// One matrix as a canvas heatmap (draw/heatmap.ts) that fits the width of its figure, with its
// numbers on demand: the cell under the pointer, or the keyboard's (focus the canvas, then the
// arrow keys, Home and End), is written into a readout. For matrices too large to read as
// tables of numbers (a head's QK and OV circuits, vocab x vocab).
import { cellAt, drawHeatmap, type HeatmapLayout } from '../draw/heatmap';
import { symmetricScale } from '../draw/diverging';
import type { Matrix } from '../model/protocol';
import { cellAfterKey } from './cell-links';
import { h } from './dom';

/** What to draw and how to say a cell. */
export interface CanvasHeatmapSpec {
  /** data-figure of the canvas. */
  name: string;
  /** The canvas's accessible name (what it shows; the keys to use are added). */
  label: string;
  m: Matrix;
  rowLabels: string[];
  colLabels: string[];
  /** Where describe(i, j) goes. */
  readout: HTMLElement;
  describe: (i: number, j: number) => string;
  /** The widest the canvas gets, in CSS pixels (default: 24 px a cell plus the labels). */
  maxWidth?: number;
}

/** A mounted heatmap: its figure element, and destroy (stops following the width). */
export interface CanvasHeatmap {
  element: HTMLElement;
  destroy(): void;
}

/** A signed matrix as a heatmap scaled to its largest |value| (blue below 0, orange above),
 * redrawn whenever its box changes width. */
export function canvasHeatmap(spec: CanvasHeatmapSpec): CanvasHeatmap {
  const { m, rowLabels, colLabels } = spec;
  const scale = symmetricScale(m.data);
  const values = Float32Array.from(m.data, (v) => (Number.isFinite(v) ? v / scale : 0));
  const canvas = h('canvas', {
    class: 'circuit-canvas',
    tabindex: 0,
    role: 'img',
    'data-figure': spec.name,
    'data-rows': m.rows,
    'data-cols': m.cols,
    'data-scale': scale,
    'aria-label': `${spec.label}. Arrow keys move between cells; the value is read out below.`,
  });
  const box = h('div', { class: 'canvas-heatmap' }, canvas);
  let layout: HeatmapLayout | null = null;
  let focus: { row: number; col: number } | null = null;
  let width = 0;
  const maxWidth = spec.maxWidth ?? 30 + 24 * m.cols;

  function draw(): void {
    if (width <= 0) return;
    layout = drawHeatmap(canvas, width, { values, signed: true, rows: m.rows, cols: m.cols, rowLabels, colLabels, causal: false, focus, textColour: getComputedStyle(box).color || '#222' });
    canvas.dataset.width = String(width);
  }
  const observer = new ResizeObserver(() => {
    const w = Math.floor(Math.min(maxWidth, box.clientWidth));
    if (w > 0 && w !== width) {
      width = w;
      draw();
    }
  });
  observer.observe(box);

  const say = (c: { row: number; col: number } | null) => {
    if (c) spec.readout.textContent = spec.describe(c.row, c.col);
  };
  canvas.addEventListener('mousemove', (ev) => {
    if (!layout) return;
    const r = canvas.getBoundingClientRect();
    say(cellAt(layout, ev.clientX - r.left, ev.clientY - r.top));
  });
  canvas.addEventListener('focus', () => {
    focus ??= { row: 0, col: 0 };
    say(focus);
    draw();
  });
  canvas.addEventListener('blur', () => {
    focus = null;
    draw();
  });
  canvas.addEventListener('keydown', (ev) => {
    const to = focus && cellAfterKey(ev.key, [focus.row, focus.col], m.rows, m.cols);
    if (!to) return;
    ev.preventDefault();
    focus = { row: to[0], col: to[1] };
    say(focus);
    draw();
  });
  return { element: box, destroy: () => observer.disconnect() };
}
