// View 3's two position figures: the RoPE rotation of one q/k pair at every position, and the
// ALiBi bias as one small matrix per head. Every number drawn is the core's (transformerBlock).
import { matrixSvg } from '../../draw/matrix-svg';
import { cell } from '../../model/format';
import type { BlockStages } from './request';
import { h } from '../../ui/dom';

const NS = 'http://www.w3.org/2000/svg';

function svgEl<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number>, text?: string): SVGElementTagNameMap[K] {
  const e = document.createElementNS(NS, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = text;
  return e;
}

/** The RoPE figure: for the q and the k of one pair, one small plot per position with the 2-D
 * vector before its rotation (dashed) and after it (solid), and the angle between them. */
export function ropeFigure(r: NonNullable<BlockStages['rope']>, tokens: string[]): HTMLElement {
  const T = r.angles.length;
  const box = 64;
  const pad = 4;
  const rows: [string, typeof r.qBefore, typeof r.qAfter][] = [
    ['q', r.qBefore, r.qAfter],
    ['k', r.kBefore, r.kAfter],
  ];
  let norm = 0;
  for (const [, b] of rows) for (let p = 0; p < T; ++p) norm = Math.max(norm, Math.hypot(b.data[2 * p], b.data[2 * p + 1]));
  const radius = box / 2 - pad;
  const s = norm > 0 ? radius / norm : 1;
  const labelW = 18;
  const W = labelW + T * box;
  const Hh = rows.length * (box + 14) + 14;
  const svg = svgEl('svg', { width: W, height: Hh, viewBox: `0 0 ${W} ${Hh}`, role: 'img', class: 'rope-svg', 'data-positions': T, 'aria-label': `RoPE: pair ${r.pair} of q (head ${r.head + 1}) and k (K/V head ${r.kvHead + 1}) at ${T} positions, before and after the rotation` });
  for (let p = 0; p < T; ++p)
    svg.append(svgEl('text', { x: labelW + p * box + box / 2, y: 10, 'text-anchor': 'middle', 'font-size': 10, fill: 'currentColor' }, `${p} ${tokens[p] ?? ''}`));
  rows.forEach(([name, before, after], row) => {
    const y0 = 14 + row * (box + 14);
    svg.append(svgEl('text', { x: 2, y: y0 + box / 2, 'dominant-baseline': 'middle', 'font-size': 12, 'font-weight': 'bold', fill: 'currentColor' }, name));
    for (let p = 0; p < T; ++p) {
      const cx = labelW + p * box + box / 2;
      const cy = y0 + box / 2;
      const g = svgEl('g', { class: 'rope-pos', 'data-vector': name, 'data-pos': p, 'data-angle': r.angles[p] });
      g.append(
        svgEl('circle', { cx, cy, r: radius, fill: 'none', stroke: 'currentColor', 'stroke-opacity': 0.2 }),
        svgEl('line', { x1: cx - radius, y1: cy, x2: cx + radius, y2: cy, stroke: 'currentColor', 'stroke-opacity': 0.15 }),
        svgEl('line', { x1: cx, y1: cy - radius, x2: cx, y2: cy + radius, stroke: 'currentColor', 'stroke-opacity': 0.15 }),
      );
      // y up, as on paper: the rotation by +angle turns counter-clockwise.
      const bx = before.data[2 * p] * s, by = before.data[2 * p + 1] * s;
      const ax = after.data[2 * p] * s, ay = after.data[2 * p + 1] * s;
      g.append(
        svgEl('line', { class: 'rope-before', x1: cx, y1: cy, x2: cx + bx, y2: cy - by, stroke: 'currentColor', 'stroke-opacity': 0.5, 'stroke-dasharray': '3 2', 'stroke-width': 1.5 }),
        svgEl('line', { class: 'rope-after', x1: cx, y1: cy, x2: cx + ax, y2: cy - ay, stroke: 'var(--accent, #c0580c)', 'stroke-width': 2 }),
        svgEl('circle', { cx: cx + ax, cy: cy - ay, r: 2.5, fill: 'var(--accent, #c0580c)' }),
      );
      g.append(svgEl('title', {}, `${name} at position ${p}: (${cell(before.data[2 * p])}, ${cell(before.data[2 * p + 1])}) turned by ${cell(r.angles[p])} rad to (${cell(after.data[2 * p])}, ${cell(after.data[2 * p + 1])})`));
      svg.append(g);
      svg.append(svgEl('text', { x: cx, y: y0 + box + 10, 'text-anchor': 'middle', 'font-size': 9, fill: 'currentColor' }, `θ ${cell(r.angles[p], 2)}`));
    }
  });
  return h(
    'figure',
    { class: 'block-fig rope-fig', 'data-figure': 'rope' },
    h('figcaption', {}, h('strong', { text: `RoPE, pair ${r.pair} (dims ${2 * r.pair} and ${2 * r.pair + 1}) of head ${r.head + 1}` }), h('code', { text: ` θ = pos / 10000^(2·${r.pair}/d_head)` })),
    h('p', {
      class: 'stage-text',
      text: 'Dashed: the pair of numbers as the projection made it; solid: the same pair turned by its position\'s angle before the scores see it. The length never changes, only the direction, so a query and a key meet at an angle that depends on how far apart they are, not on where they are.',
    }),
    h('div', { class: 'scroll', tabindex: 0, role: 'region', 'aria-label': 'RoPE rotation (scrolls sideways)' }, svg),
  );
}

/** The ALiBi figure: each head's bias -m_h |i - j| as a small matrix, the future cells grey (the
 * causal mask removes them anyway). */
export function alibiFigure(a: NonNullable<BlockStages['alibi']>, T: number): HTMLElement {
  const H = a.slopes.length;
  const heads = Array.from({ length: H }, (_, hd) => {
    const m = { rows: T, cols: T, data: a.bias.data.slice(hd * T * T, (hd + 1) * T * T) };
    const svg = matrixSvg(m, { label: `ALiBi bias, head ${hd + 1}`, colour: 'signed', cell: Math.max(5, Math.min(10, Math.floor(120 / T))), masked: (i, j) => j > i });
    return h('figure', { class: 'matrix-fig', 'data-matrix': 'alibi', 'data-head': hd }, h('figcaption', { text: `head ${hd + 1}: m = ${cell(a.slopes[hd], 4)}` }), svg);
  });
  return h(
    'figure',
    { class: 'block-fig alibi-fig', 'data-figure': 'alibi' },
    h('figcaption', {}, h('strong', { text: `ALiBi bias, one matrix per head` }), h('code', { text: ` bias[i, j] = −m_h (i − j),  m_h = 2^(−8(h+1)/H),  H = ${H}` })),
    h('p', {
      class: 'stage-text',
      text: 'Nothing is added to x: instead each head subtracts a penalty that grows with the distance from query i back to key j, darker for keys further away. The first head has the steepest slope and looks mostly at nearby tokens; the last has the gentlest and can still reach far back.',
    }),
    h('div', { class: 'matrix-row' }, ...heads),
  );
}
