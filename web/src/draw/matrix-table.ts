// Draws a small matrix as an HTML table (view 2): every number as text, rounded for reading, with
// its exact float32 value in data-value. Masked cells (-inf) read "−∞" and are hatched. Cells can
// be coloured: weights on the heatmaps' viridis, signed values on the diverging ramp.
import { cssColour, textColourOn } from './colormap';
import { divergingColours, symmetricScale } from './diverging';
import { cell } from '../model/format';
import type { Matrix } from '../model/protocol';

/** How to label and colour a matrix. */
export interface MatrixTableOptions {
  rowLabels: string[];
  colLabels: string[];
  /** Name of the matrix, read by screen readers as the table caption. */
  caption: string;
  /** Colour the cells: 'weights' (or true) by value in [0, 1] on viridis (attention weights);
   * 'signed' on the diverging ramp centred on 0, scaled to the table's largest |value|. */
  colour?: boolean | 'weights' | 'signed';
  /** Digits after the decimal point. */
  digits?: number;
  /** Cells that a mask hid (rows*cols, 1 = masked): drawn hatched even when their value is 0. */
  masked?: Uint8Array;
}

/** Builds a table for m. Throws if the labels do not match its shape. */
export function matrixTable(m: Matrix, opts: MatrixTableOptions): HTMLTableElement {
  if (m.data.length !== m.rows * m.cols) throw new Error(`matrix: ${m.data.length} values for ${m.rows}x${m.cols}`);
  if (opts.rowLabels.length !== m.rows || opts.colLabels.length !== m.cols) {
    throw new Error(`matrix: ${opts.rowLabels.length}x${opts.colLabels.length} labels for ${m.rows}x${m.cols}`);
  }
  const digits = opts.digits ?? 3;
  const mode = opts.colour === true ? 'weights' : opts.colour || null;
  const scale = mode === 'signed' ? symmetricScale(m.data) : 1;
  const table = document.createElement('table');
  table.className = mode ? `matrix coloured ${mode}` : 'matrix';
  if (mode === 'signed') table.dataset.scale = String(scale);
  const cap = table.createCaption();
  cap.className = 'visually-hidden';
  cap.textContent = opts.caption;
  const head = table.createTHead().insertRow();
  head.appendChild(document.createElement('td'));
  for (const c of opts.colLabels) {
    const th = document.createElement('th');
    th.scope = 'col';
    th.textContent = c;
    head.appendChild(th);
  }
  const body = table.createTBody();
  for (let i = 0; i < m.rows; ++i) {
    const tr = body.insertRow();
    const th = document.createElement('th');
    th.scope = 'row';
    th.textContent = opts.rowLabels[i];
    tr.appendChild(th);
    for (let j = 0; j < m.cols; ++j) {
      const v = m.data[i * m.cols + j];
      const td = tr.insertCell();
      td.textContent = cell(v, digits);
      td.dataset.value = String(v);
      if (v === -Infinity || opts.masked?.[i * m.cols + j]) {
        td.className = 'masked';
        td.title = 'masked: this query may not look at this key';
      } else if (mode === 'weights') {
        td.style.background = cssColour(v);
        td.style.color = textColourOn(v);
      } else if (mode === 'signed') {
        const c = divergingColours(v, scale);
        td.style.background = c.background;
        td.style.color = c.color;
      }
    }
  }
  return table;
}
