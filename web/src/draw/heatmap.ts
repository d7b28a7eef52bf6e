// Draws one attention matrix on a canvas: cells in viridis, masked cells grey and hatched (never
// confused with weight 0), token labels on both axes, an optional focus outline; or a signed
// matrix on the diverging ramp (draw/diverging.ts). Only draws: the caller owns interaction and
// uses the returned layout for hit-testing.
import { MASKED_FILL, MASKED_HATCH, VIRIDIS_LUT, lutIndex } from './colormap';
import { divergingRgb } from './diverging';

/** What to draw. values is (rows, cols) row-major, each in [0, 1] (signed: in [-1, 1]). */
export interface HeatmapInput {
  values: Float32Array;
  /** Signed values in [-1, 1] on the diverging ramp (blue below 0, white at 0, orange above)
   * instead of viridis. */
  signed?: boolean;
  rows: number;
  cols: number;
  /** Row (query) and column (key) labels. */
  rowLabels: string[];
  colLabels: string[];
  /** Cells above the diagonal are masked (causal attention). */
  causal: boolean;
  /** The masked cells when they are not the causal triangle (an attention pattern: a window, a
   * strided pattern, both ways under mlm): rows*cols cells, nonzero = masked, with `key` naming
   * the pattern (the hatch is drawn once per key and size). Replaces `causal` when given. */
  hidden?: { cells: Uint8Array; key: string } | null;
  /** The cell with keyboard focus, outlined. */
  focus?: { row: number; col: number } | null;
  /** CSS colour of the labels. */
  textColour?: string;
}

/** Where the cells landed, in CSS pixels of the canvas. */
export interface HeatmapLayout {
  x0: number;
  y0: number;
  cell: number;
  rows: number;
  cols: number;
}

const FONT = '10px system-ui, sans-serif';

/** Layout of a rows x cols heatmap on a canvas of the given CSS width. */
export function heatmapLayout(cssWidth: number, rows: number, cols: number): HeatmapLayout {
  const margin = 26;
  const cell = Math.max(1, (cssWidth - margin - 4) / cols);
  return { x0: margin, y0: margin, cell, rows, cols };
}

/** CSS height the canvas needs for that layout. */
export function heatmapHeight(l: HeatmapLayout): number {
  return Math.ceil(l.y0 + l.cell * l.rows + 4);
}

/** The cell under a point (CSS pixels relative to the canvas), or null. */
export function cellAt(l: HeatmapLayout, x: number, y: number): { row: number; col: number } | null {
  const col = Math.floor((x - l.x0) / l.cell);
  const row = Math.floor((y - l.y0) / l.cell);
  if (row < 0 || col < 0 || row >= l.rows || col >= l.cols) return null;
  return { row, col };
}

// Per-size scratch canvases: one pixel per cell, and the hatch overlay of the masked triangle.
const scratch = new Map<string, HTMLCanvasElement>();
function scratchCanvas(key: string, w: number, h: number, paint?: (c: CanvasRenderingContext2D) => void) {
  let c = scratch.get(key);
  if (!c) {
    c = document.createElement('canvas');
    c.width = w;
    c.height = h;
    if (paint) paint(c.getContext('2d')!);
    if (scratch.size > 64) scratch.clear();
    scratch.set(key, c);
  }
  return c;
}

/** Hatched overlay for the strict upper triangle of a rows x cols grid (or, given, the cells of
 * hidden), in device pixels. */
function hatchOverlay(rows: number, cols: number, cellPx: number, hidden?: { cells: Uint8Array; key: string } | null): HTMLCanvasElement {
  const w = Math.ceil(cols * cellPx);
  const h = Math.ceil(rows * cellPx);
  return scratchCanvas(`hatch:${rows}:${cols}:${Math.round(cellPx * 1000)}:${hidden?.key ?? 'causal'}`, w, h, (g) => {
    g.beginPath();
    for (let i = 0; i < rows; ++i) {
      if (hidden) {
        for (let j = 0; j < cols; ++j) if (hidden.cells[i * cols + j]) g.rect(j * cellPx, i * cellPx, cellPx, cellPx);
        continue;
      }
      if (i + 1 >= cols) break;
      g.rect((i + 1) * cellPx, i * cellPx, (cols - i - 1) * cellPx, cellPx);
    }
    g.fillStyle = MASKED_FILL;
    g.fill();
    g.save();
    g.clip();
    g.strokeStyle = MASKED_HATCH;
    g.lineWidth = Math.max(1, cellPx / 10);
    const step = Math.max(3, Math.min(8, cellPx / 2));
    g.beginPath();
    for (let d = -h; d < w; d += step) {
      g.moveTo(d, h);
      g.lineTo(d + h, 0);
    }
    g.stroke();
    g.restore();
  });
}

/** Which labels to draw so that they do not overlap: every k-th, for labels `size` px long. */
function labelStride(cell: number, size: number): number {
  return Math.max(1, Math.ceil((size + 2) / cell));
}

function shorten(label: string): string {
  return label.length > 4 ? `${label.slice(0, 3)}…` : label;
}

/**
 * Draws input on canvas at cssWidth CSS pixels (the canvas is sized for devicePixelRatio).
 * Throws if the arrays do not match the given dimensions or a value is not finite (nothing is
 * drawn then). Returns the layout for hit-testing.
 */
export function drawHeatmap(canvas: HTMLCanvasElement, cssWidth: number, input: HeatmapInput): HeatmapLayout {
  const { values, rows, cols, rowLabels, colLabels } = input;
  if (!(rows >= 1 && cols >= 1) || values.length !== rows * cols) {
    throw new Error(`heatmap: ${values.length} values for ${rows}x${cols} cells`);
  }
  if (rowLabels.length !== rows || colLabels.length !== cols) {
    throw new Error(`heatmap: ${rowLabels.length}x${colLabels.length} labels for ${rows}x${cols} cells`);
  }
  // A NaN would map to no palette entry and be drawn as a plausible black cell. The core never
  // sends one (a non-finite step is refused), so one here is a bug upstream: refuse to draw it.
  for (let k = 0; k < values.length; ++k) {
    if (!Number.isFinite(values[k])) {
      throw new Error(`heatmap: value ${values[k]} at row ${Math.floor(k / cols)}, col ${k % cols} is not finite`);
    }
  }
  const l = heatmapLayout(cssWidth, rows, cols);
  const cssHeight = heatmapHeight(l);
  const dpr = window.devicePixelRatio || 1;
  const W = Math.round(cssWidth * dpr);
  const H = Math.round(cssHeight * dpr);
  if (canvas.width !== W || canvas.height !== H) {
    canvas.width = W;
    canvas.height = H;
    canvas.style.width = `${cssWidth}px`;
    canvas.style.height = `${cssHeight}px`;
  }
  const g = canvas.getContext('2d')!;
  g.setTransform(1, 0, 0, 1, 0, 0);
  g.clearRect(0, 0, W, H);

  // Cells: one pixel per cell, scaled up without smoothing.
  const px = scratchCanvas(`px:${rows}:${cols}`, cols, rows);
  const pg = px.getContext('2d')!;
  const img = pg.createImageData(cols, rows);
  for (let i = 0; i < rows; ++i) {
    for (let j = 0; j < cols; ++j) {
      const o = (i * cols + j) * 4;
      if (input.signed) {
        const [r, gr, b] = divergingRgb(values[i * cols + j]);
        img.data[o] = r;
        img.data[o + 1] = gr;
        img.data[o + 2] = b;
      } else {
        const k = lutIndex(values[i * cols + j]) * 3;
        img.data[o] = VIRIDIS_LUT[k];
        img.data[o + 1] = VIRIDIS_LUT[k + 1];
        img.data[o + 2] = VIRIDIS_LUT[k + 2];
      }
      img.data[o + 3] = 255;
    }
  }
  pg.putImageData(img, 0, 0);
  const cellPx = l.cell * dpr;
  const gx = l.x0 * dpr;
  const gy = l.y0 * dpr;
  g.imageSmoothingEnabled = false;
  g.drawImage(px, gx, gy, cols * cellPx, rows * cellPx);
  if (input.hidden) {
    if (input.hidden.cells.length !== rows * cols) throw new Error(`heatmap: ${input.hidden.cells.length} mask cells for ${rows}x${cols} cells`);
    g.drawImage(hatchOverlay(rows, cols, cellPx, input.hidden), gx, gy);
  } else if (input.causal) g.drawImage(hatchOverlay(rows, cols, cellPx), gx, gy);

  // Labels (keys along the top, queries down the left): drawn once per labels and size, then
  // reused, since text is the slowest part of a redraw.
  const colour = input.textColour ?? '#222';
  const labelKey = `lab:${W}:${H}:${dpr}:${colour}:${rowLabels.join(' ')}|${colLabels.join(' ')}`;
  g.drawImage(
    scratchCanvas(labelKey, W, H, (t) => {
      t.scale(dpr, dpr);
      t.font = FONT;
      t.fillStyle = colour;
      const widest = Math.max(...colLabels.map((s) => t.measureText(shorten(s)).width));
      const kc = labelStride(l.cell, widest);
      const kr = labelStride(l.cell, 9);
      t.textAlign = 'center';
      t.textBaseline = 'bottom';
      for (let j = 0; j < cols; j += kc) t.fillText(shorten(colLabels[j]), l.x0 + (j + 0.5) * l.cell, l.y0 - 3);
      t.textAlign = 'right';
      t.textBaseline = 'middle';
      for (let i = 0; i < rows; i += kr) t.fillText(shorten(rowLabels[i]), l.x0 - 3, l.y0 + (i + 0.5) * l.cell);
    }),
    0,
    0,
  );
  g.scale(dpr, dpr);

  if (input.focus) {
    const { row, col } = input.focus;
    const x = l.x0 + col * l.cell;
    const y = l.y0 + row * l.cell;
    g.lineWidth = 2;
    g.strokeStyle = '#fff';
    g.strokeRect(x + 1, y + 1, l.cell - 2, l.cell - 2);
    g.lineWidth = 1;
    g.strokeStyle = '#d6336c';
    g.strokeRect(x - 0.5, y - 0.5, l.cell + 1, l.cell + 1);
  }
  return l;
}

/** Draws the colour legend: a 0..1 viridis bar on a canvas of the given CSS size. */
export function drawLegendBar(canvas: HTMLCanvasElement, cssWidth: number, cssHeight: number): void {
  const dpr = window.devicePixelRatio || 1;
  canvas.width = Math.round(cssWidth * dpr);
  canvas.height = Math.round(cssHeight * dpr);
  canvas.style.width = `${cssWidth}px`;
  canvas.style.height = `${cssHeight}px`;
  const g = canvas.getContext('2d')!;
  const img = g.createImageData(canvas.width, canvas.height);
  for (let x = 0; x < canvas.width; ++x) {
    const k = lutIndex(x / (canvas.width - 1)) * 3;
    for (let y = 0; y < canvas.height; ++y) {
      const o = (y * canvas.width + x) * 4;
      img.data[o] = VIRIDIS_LUT[k];
      img.data[o + 1] = VIRIDIS_LUT[k + 1];
      img.data[o + 2] = VIRIDIS_LUT[k + 2];
      img.data[o + 3] = 255;
    }
  }
  g.putImageData(img, 0, 0);
}

/** Draws the "masked" swatch of the legend (same fill and hatch as masked cells). */
export function drawMaskedSwatch(canvas: HTMLCanvasElement, cssSize: number): void {
  const dpr = window.devicePixelRatio || 1;
  const n = Math.round(cssSize * dpr);
  canvas.width = n;
  canvas.height = n;
  canvas.style.width = `${cssSize}px`;
  canvas.style.height = `${cssSize}px`;
  const g = canvas.getContext('2d')!;
  // The masked (top-right) cell of a 2x2 grid, drawn by the heatmap's own overlay.
  g.drawImage(hatchOverlay(2, 2, n), n, 0, n, n, 0, 0, n, n);
}
