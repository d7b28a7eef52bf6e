// A matrix as a compact grid of coloured cells (view 3's stages): one SVG rect per value, no
// numbers drawn, each value (the core's float32) in the rect's title for hover and in data-value.
// Signed values on the diverging ramp centred on 0 (scaled to the matrix's largest |value|),
// weights in [0, 1] on the heatmaps' viridis; masked cells grey.
import { cssColour, MASKED_FILL } from './colormap';
import { divergingColours, symmetricScale } from './diverging';
import { sig } from '../model/format';
import type { Matrix } from '../model/protocol';

const NS = 'http://www.w3.org/2000/svg';

/** How to draw a matrix grid. */
export interface MatrixSvgOptions {
  /** The matrix's name: the SVG's accessible name and the start of each cell's title. */
  label: string;
  colour: 'signed' | 'weights';
  /** Cell size in CSS px; default: what fits `width` (4 to 14 px). */
  cell?: number;
  width?: number;
  /** Cells to draw as masked (grey), e.g. j > i under the causal mask. */
  masked?: (i: number, j: number) => boolean;
}

/** An SVG of m's values: rows top to bottom, columns left to right; data-rows and data-cols
 * carry the shape. */
export function matrixSvg(m: Matrix, opts: MatrixSvgOptions): SVGSVGElement {
  if (m.data.length !== m.rows * m.cols) throw new Error(`matrix svg: ${m.data.length} values for ${m.rows}x${m.cols}`);
  const cell = opts.cell ?? Math.max(4, Math.min(14, Math.floor((opts.width ?? 280) / m.cols)));
  const W = m.cols * cell;
  const H = m.rows * cell;
  const svg = document.createElementNS(NS, 'svg');
  for (const [k, v] of Object.entries({ width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: 'img', 'aria-label': `${opts.label} (${m.rows}, ${m.cols})`, class: 'matrix-svg', 'data-rows': m.rows, 'data-cols': m.cols }))
    svg.setAttribute(k, String(v));
  const scale = opts.colour === 'signed' ? symmetricScale(m.data) : 1;
  for (let i = 0; i < m.rows; ++i) {
    for (let j = 0; j < m.cols; ++j) {
      const v = m.data[i * m.cols + j];
      const masked = opts.masked?.(i, j) ?? false;
      const r = document.createElementNS(NS, 'rect');
      r.setAttribute('x', String(j * cell));
      r.setAttribute('y', String(i * cell));
      r.setAttribute('width', String(cell));
      r.setAttribute('height', String(cell));
      r.setAttribute('fill', masked ? MASKED_FILL : opts.colour === 'signed' ? divergingColours(v, scale).background : cssColour(v));
      r.setAttribute('data-value', String(v));
      const t = document.createElementNS(NS, 'title');
      t.textContent = `${opts.label}[${i}, ${j}] = ${masked ? 'masked' : sig(v, 4)}`;
      r.append(t);
      svg.append(r);
    }
  }
  return svg;
}
