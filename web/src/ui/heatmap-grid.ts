// The training view's heatmaps panel: the sample sequence (sample-field.ts), the colour legend, the hovered-
// cell readout and one heatmap per head plus the heads' average (model/heads.ts), drawn by draw/heatmap;
// with several layers, one row per layer ("layer l · head h", model/layers.ts), each with its average.
// Hover, or focus a heatmap and use the arrow keys, to read a cell.
import { tokenLabels } from '../model/text';
import type { Controller } from '../client/controller';
import { cellAt, drawHeatmap, drawLegendBar, drawMaskedSwatch, type HeatmapLayout } from '../draw/heatmap';
import { num, plural } from '../model/format';
import { headAverage, headWeights, hiddenCells, visibleInEffect } from '../model/heads';
import { averageLabel, headLabel, kvGroupLabel, layerWeights } from '../model/layers';
import type { MaskMode, Snapshot } from '../model/protocol';
import type { State } from '../settings/settings';
import type { Store } from '../settings/store';
import { cellAfterKey } from './cell-links';
import { h } from './dom';
import type { Parts } from './parts';
import { mountSampleField } from './sample-field';

const HINT = 'Hover a cell, or focus a heatmap and use the arrow keys.';

/** The mounted panel. */
export interface HeatmapGrid {
  section: HTMLElement;
  /** Draws the snapshot's heatmaps; false when the grid is not shown (nothing drawn). */
  draw(s: Snapshot): boolean;
  /** Figures changed width or colour: measure again, redraw the legend. */
  resized(): void;
  destroy(): void;
}

/** What the pattern figure shows, in words: which keys a query sees under the settings and the
 * mask in effect (the Ablation panel's broken masks included), and why it matters. `seen` is the
 * count of visible pairs. */
export function patternSentence(c: Pick<State, 'objective' | 'attention' | 'window' | 'stride' | 'nLayers'>, T: number, seen: number, mask: MaskMode = 'causal'): string {
  if (mask === 'none') return `${seen} of ${T * T} pairs visible: the mask is off (Ablation panel), so every query sees every key, the later ones too, and a head can copy its answer from the future.`;
  if (mask === 'inverted') return `${seen} of ${T * T} pairs visible: the inverted mask (Ablation panel) writes −1e4 on the earlier keys instead of the later ones, so each query sees itself and every later key, the future the causal mask should hide.`;
  const both = c.objective === 'mlm';
  const side = both ? 'on both sides' : 'before it';
  const what =
    c.attention === 'window'
      ? `each query sees the ${c.window === 1 ? 'nearest key' : `${c.window} nearest keys`} ${side} (itself included${both ? `, |i − j| < ${c.window}` : ''})`
      : c.attention === 'strided'
        ? `each query sees a window of ${plural(c.window, 'key')} ${side} plus every position that is a multiple of ${c.stride}`
        : both
          ? 'every query sees every key, left and right: an encoder reads the whole sequence'
          : 'each query sees itself and every earlier key, never a later one';
  const L = c.nLayers;
  const cost =
    c.attention === 'window'
      ? ` Each layer reaches W − 1 = ${plural(c.window - 1, 'position')} further, so ${plural(L, 'layer')} reach${L === 1 ? 'es' : ''} L·(W − 1) = ${L * (c.window - 1)}${both ? ' on each side' : `, and a decoder keeps only ${plural(c.window, 'key')} per layer in its KV cache instead of the whole context`}.`
      : c.attention === 'strided'
        ? ' The strided keys carry what lies far away into a single layer; the window keeps the rest local.'
        : '';
  return `${seen} of ${T * T} pairs visible: ${what}.${cost}`;
}

/** Builds the heatmaps panel; `request` asks the view for a redraw (next animation frame). */
export function mountHeatmapGrid(store: Store, ctl: Controller, opts: { reducedMotion: boolean; request: () => void; parts: Parts }): HeatmapGrid {
  const sample = mountSampleField(store, ctl);
  const legendBar = h('canvas', { class: 'legend-bar', 'aria-hidden': 'true' });
  const legendMasked = h('canvas', { class: 'legend-masked', 'aria-hidden': 'true' });
  const legend = h(
    'div',
    { class: 'legend', role: 'img', 'aria-label': 'Colour legend: attention weight from 0 (dark purple) to 1 (yellow); masked cells are grey and hatched.' },
    h('span', { text: '0' }),
    legendBar,
    h('span', { text: '1' }),
    h('span', { class: 'legend-masked-wrap' }, legendMasked, ' masked (a key the query may not see)'),
  );
  const cellReadout = h('p', { class: 'cell-readout', text: HINT });
  const liveCell = h('p', { class: 'visually-hidden', 'aria-live': 'polite' });
  const grid = h('div', { class: 'heatmaps', 'data-frames': '0' });
  const gqaNote = h('p', { class: 'hint gqa-note', hidden: true });
  // The attention pattern: which keys each query may see (the core's attentionMask), beside the heads.
  const patternCanvas = h('canvas', { class: 'pattern-canvas', role: 'img', 'aria-label': 'The attention pattern' });
  const patternNote = h('figcaption', { class: 'hint pattern-note' });
  const pattern = h('figure', { class: 'attention-pattern', 'data-visible': '' }, h('div', { class: 'pattern-title', text: 'Which keys each query may see' }), patternCanvas, patternNote);
  const section = h(
    'section',
    { class: 'panel heat-panel', 'aria-label': 'Attention heatmaps' },
    h('div', { class: 'panel-head' }, h('h2', { text: 'Attention of every head' })),
    opts.parts.place(sample.element, 'sample'),
    opts.parts.place(legend, 'legend'),
    opts.parts.place(cellReadout, 'legend'),
    liveCell,
    gqaNote,
    h('div', { class: 'heat-row' }, pattern, grid),
    opts.reducedMotion ? h('p', { class: 'hint', text: 'Reduced motion is on: heatmaps and chart update twice a second while training.' }) : null,
  );

  // ---- The figures, and the cell under the pointer or the keyboard focus.
  let figureWidth = 0;
  let labelColour = '';
  let frames = 0;
  /** One figure: global head `head` of layer `layer`, or (head -1) the layer's average. */
  const figures: { canvas: HTMLCanvasElement; title: string; layer: number; head: number; layout: HeatmapLayout | null; values: Float32Array | null }[] = [];
  let shape = '';
  let focus: { fig: number; row: number; col: number } | null = null;
  let hover: { fig: number; row: number; col: number } | null = null;

  /** The figures of L layers of H heads: per layer its heads, then (H > 1) their average; with
   * several layers, each layer starts a row under its title. */
  function ensureFigures(L: number, H: number, G: number): void {
    if (shape === `${L}x${H}x${G}`) return;
    shape = `${L}x${H}x${G}`;
    grid.replaceChildren();
    grid.dataset.layers = String(L);
    grid.dataset.heads = String(H);
    figures.length = 0;
    figureWidth = 0;
    gqaNote.hidden = G >= H;
    gqaNote.textContent =
      G >= H
        ? ''
        : `Grouped-query attention: ${H} query heads read ${G === 1 ? 'one shared set' : `${G} sets`} of keys and values (K/V heads), ${H / G} heads per set. ` +
          'Heads that share K/V can still look at different places, because each has its own queries; what they share is what the keys offer and what the values carry.';
    focus = hover = null;
    for (let l = 0; l < L; ++l) {
      if (L > 1) grid.append(h('h3', { class: 'heat-layer', text: `Layer ${l + 1}` }));
      for (let k = 0; k < (H > 1 ? H + 1 : 1); ++k) {
        const g = k < H ? l * H + k : -1;
        const title = g >= 0 ? headLabel(g, H, L) : averageLabel(l, L);
        const canvas = h('canvas', {
          tabindex: 0,
          role: 'img',
          'aria-label': `${title}: attention weights, queries down, keys across. Arrow keys move between cells.`,
          'data-head': g >= 0 ? g : 'avg',
          'data-layer': l,
        });
        // Grouped-query attention: the heads of one group share keys and values (the caption says which).
        const kv = g >= 0 ? kvGroupLabel(g, H, G) : '';
        const caption = h('figcaption', { text: title }, ...(kv ? [h('span', { class: 'kv-group', 'data-kv-group': Math.floor(k / (H / G)), text: kv })] : []));
        grid.append(h('figure', { class: g >= 0 ? 'head' : 'head avg' }, caption, canvas));
        figures.push({ canvas, title, layer: l, head: g, layout: null, values: null });
        bindCanvas(canvas, figures.length - 1);
      }
    }
  }

  function describe(fig: number, row: number, col: number): string {
    const s = ctl.snapshot;
    const f = figures[fig];
    if (!s || !f?.values) return '';
    const tok = (i: number) => tokenLabels([s.ids[i]], s.text?.corpus.vocab)[0];
    const masked = s.mask === 'causal' && !s.visible[row * s.T + col];
    const w = f.values[row * s.T + col];
    const leak = s.mask !== 'causal' && col > row ? ' (a future key: the broken mask lets it through)' : '';
    const why = col > row && store.state.objective === 'causal' ? 'a query cannot see later keys' : `the ${store.state.attention} pattern hides this key`;
    const value = masked ? `masked (${why}), weight 0` : `${num(w, 4)}${leak}`;
    return `${f.title}: query ${row} (${tok(row)}) → key ${col} (${tok(col)}): ${value}`;
  }

  function showCell(): void {
    const c = hover ?? focus;
    cellReadout.textContent = c ? describe(c.fig, c.row, c.col) : HINT;
  }

  function bindCanvas(canvas: HTMLCanvasElement, fig: number): void {
    canvas.addEventListener('mousemove', (ev) => {
      const l = figures[fig].layout;
      if (!l) return;
      const r = canvas.getBoundingClientRect();
      const c = cellAt(l, ev.clientX - r.left, ev.clientY - r.top);
      hover = c ? { fig, ...c } : null;
      showCell();
    });
    canvas.addEventListener('mouseleave', () => {
      hover = null;
      showCell();
    });
    canvas.addEventListener('focus', () => {
      if (!focus || focus.fig !== fig) focus = { fig, row: 0, col: 0 };
      showCell();
      liveCell.textContent = describe(fig, focus.row, focus.col);
      opts.request();
    });
    canvas.addEventListener('blur', () => {
      if (focus?.fig === fig) focus = null;
      showCell();
      opts.request();
    });
    canvas.addEventListener('keydown', (ev) => {
      const T = ctl.snapshot?.T ?? 0;
      if (!focus || focus.fig !== fig || T === 0) return;
      const to = cellAfterKey(ev.key, [focus.row, focus.col], T, T);
      if (!to) return;
      ev.preventDefault();
      focus = { fig, row: to[0], col: to[1] };
      showCell();
      liveCell.textContent = describe(fig, focus.row, focus.col);
      opts.request();
    });
  }

  function draw(s: Snapshot): boolean {
    // Hidden (the other view is shown): draw when it shows again (the ResizeObserver calls back).
    if (grid.offsetParent === null) return false;
    const { H, L, T } = s;
    ensureFigures(L, H, s.kvHeads);
    const labels = tokenLabels(s.ids, s.text?.corpus.vocab);
    const avgs = H > 1 ? Array.from({ length: L }, (_, l) => headAverage(layerWeights(s.weights, L, H, T, l), H, T)) : [];
    if (figureWidth === 0) figureWidth = figures[0].canvas.parentElement?.clientWidth ?? 160;
    const width = Math.max(120, Math.floor(figureWidth - 2));
    const textColour = labelColour || (labelColour = getComputedStyle(grid).color || '#222');
    // Under the layers' own mask, hatch what their pattern hides (the causal triangle, a window,
    // nothing under mlm's full attention); a broken mask hides nothing.
    const hidden = hiddenCells(s.mask, s.visible, T);
    drawPattern(s, width, textColour, labels);
    figures.forEach((f, idx) => {
      f.values = f.head >= 0 ? headWeights(s.weights, L * H, T, f.head) : avgs[f.layer];
      f.layout = drawHeatmap(f.canvas, width, {
        values: f.values,
        rows: T,
        cols: T,
        rowLabels: labels,
        colLabels: labels,
        causal: s.mask === 'causal',
        hidden,
        focus: focus?.fig === idx ? focus : null,
        textColour,
      });
    });
    showCell();
    grid.dataset.frames = String(++frames);
    return true;
  }

  /** The pattern figure: the visible keys in yellow, the hidden ones hatched, and what it means. */
  function drawPattern(s: Snapshot, width: number, textColour: string, labels: string[]): void {
    const T = s.T;
    const visible = visibleInEffect(s.mask, s.visible, T);
    const key = visible.join('');
    pattern.dataset.visible = key;
    pattern.dataset.mask = s.mask;
    let seen = 0;
    for (const v of visible) seen += v;
    pattern.dataset.seen = String(seen);
    drawHeatmap(patternCanvas, Math.min(width, 180), {
      values: Float32Array.from(visible),
      rows: T,
      cols: T,
      rowLabels: labels,
      colLabels: labels,
      causal: false,
      hidden: { cells: visible.map((v) => 1 - v), key },
      textColour,
    });
    patternCanvas.setAttribute('aria-label', `The attention pattern: ${seen} of the ${T * T} query-key pairs are visible (yellow), the others hidden (hatched).`);
    patternNote.textContent = patternSentence(store.state, T, seen, s.mask);
    pattern.hidden = false;
  }

  function resized(): void {
    figureWidth = 0;
    labelColour = '';
    drawLegendBar(legendBar, Math.min(220, Math.max(100, legend.clientWidth - 200)), 12);
  }

  drawLegendBar(legendBar, 160, 12);
  drawMaskedSwatch(legendMasked, 12);
  return { section, draw, resized, destroy: sample.destroy };
}
