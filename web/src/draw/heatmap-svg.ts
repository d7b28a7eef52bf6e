// One attention matrix as a standalone SVG document (built with createElementNS, never from
// markup): cells as rects in the heatmap's viridis colours, masked cells grey and hatched, token
// labels on both axes. For the export panel.
import { MASKED_FILL, MASKED_HATCH, cssColour } from './colormap';
import { num } from '../model/format';

const NS = 'http://www.w3.org/2000/svg';

function el(tag: string, attrs: Record<string, string | number>): SVGElement {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
}

/** The SVG text of a rows x cols heatmap (values row-major), masked above the diagonal if causal,
 * or where hidden (rows*cols cells, nonzero = masked) says when given. */
export function heatmapSvg(opts: { title: string; values: Float32Array; rows: number; cols: number; rowLabels: string[]; colLabels: string[]; causal: boolean; hidden?: Uint8Array | null }): string {
  const { values, rows, cols } = opts;
  if (values.length !== rows * cols) throw new Error(`heatmap svg: ${values.length} values for ${rows}x${cols} cells`);
  const cell = 20;
  const x0 = 40;
  const y0 = 46;
  const W = x0 + cols * cell + 8;
  const H = y0 + rows * cell + 8;
  const svg = el('svg', { xmlns: NS, width: W, height: H, viewBox: `0 0 ${W} ${H}`, 'font-family': 'system-ui, sans-serif', 'font-size': 10 });
  const title = el('title', {});
  title.textContent = opts.title;
  svg.append(title);
  const defs = el('defs', {});
  const pattern = el('pattern', { id: 'masked', patternUnits: 'userSpaceOnUse', width: 6, height: 6, patternTransform: 'rotate(45)' });
  pattern.append(el('rect', { width: 6, height: 6, fill: MASKED_FILL }), el('line', { x1: 0, y1: 0, x2: 0, y2: 6, stroke: MASKED_HATCH, 'stroke-width': 2 }));
  defs.append(pattern);
  svg.append(defs);
  const head = el('text', { x: 4, y: 14, 'font-size': 12, 'font-weight': 'bold' });
  head.textContent = opts.title;
  svg.append(head);
  const cells = el('g', { class: 'cells' });
  for (let i = 0; i < rows; ++i) {
    for (let j = 0; j < cols; ++j) {
      const masked = opts.hidden ? opts.hidden[i * cols + j] !== 0 : opts.causal && j > i;
      const v = values[i * cols + j];
      const r = el('rect', { x: x0 + j * cell, y: y0 + i * cell, width: cell, height: cell, fill: masked ? 'url(#masked)' : cssColour(v) });
      const t = el('title', {});
      t.textContent = `query ${i} (${opts.rowLabels[i]}) -> key ${j} (${opts.colLabels[j]}): ${masked ? 'masked' : num(v, 4)}`;
      r.append(t);
      r.setAttribute('data-masked', masked ? '1' : '0');
      cells.append(r);
    }
  }
  svg.append(cells);
  const labels = el('g', { class: 'labels', fill: '#222' });
  for (let j = 0; j < cols; ++j) {
    const t = el('text', { x: x0 + (j + 0.5) * cell, y: y0 - 4, 'text-anchor': 'middle' });
    t.textContent = opts.colLabels[j];
    labels.append(t);
  }
  for (let i = 0; i < rows; ++i) {
    const t = el('text', { x: x0 - 4, y: y0 + (i + 0.5) * cell, 'text-anchor': 'end', 'dominant-baseline': 'middle' });
    t.textContent = opts.rowLabels[i];
    labels.append(t);
  }
  svg.append(labels);
  return `<?xml version="1.0" encoding="UTF-8"?>\n${new XMLSerializer().serializeToString(svg)}\n`;
}
