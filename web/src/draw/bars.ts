// A histogram of observed against expected counts as SVG: per label two bars side by side
// (observed filled, expected outlined), a shared scale from 0 to the largest count. Each bar's
// count is in its title and in data-observed / data-expected on its group.
import { count, num } from '../model/format';

const NS = 'http://www.w3.org/2000/svg';

/** Draws the bars; observed and expected must have one value per label. */
export function observedExpectedBars(labels: string[], observed: number[], expected: number[], opts: { label: string; width?: number; height?: number }): SVGSVGElement {
  if (observed.length !== labels.length || expected.length !== labels.length) throw new Error(`bars: ${labels.length} labels, ${observed.length} observed, ${expected.length} expected`);
  const W = opts.width ?? 420;
  const H = opts.height ?? 160;
  const bottom = 18;
  const top = 4;
  const max = Math.max(1, ...observed, ...expected);
  const slot = W / Math.max(1, labels.length);
  const bw = Math.max(2, (slot - 6) / 2);
  const y = (v: number) => top + (H - top - bottom) * (1 - v / max);
  const el = <K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number>): SVGElementTagNameMap[K] => {
    const e = document.createElementNS(NS, tag);
    for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
    return e;
  };
  const svg = el('svg', { viewBox: `0 0 ${W} ${H}`, width: W, height: H, role: 'img', 'aria-label': opts.label, class: 'bars' });
  labels.forEach((label, i) => {
    const x0 = i * slot + 3;
    const g = el('g', { 'data-label': label, 'data-observed': observed[i], 'data-expected': expected[i] });
    const title = el('title', {});
    title.textContent = `${label}: observed ${count(observed[i])}, expected ${num(expected[i], 1)}`;
    g.append(
      title,
      el('rect', { class: 'bar-observed', x: x0, y: y(observed[i]), width: bw, height: Math.max(0, H - bottom - y(observed[i])) }),
      el('rect', { class: 'bar-expected', x: x0 + bw, y: y(expected[i]), width: bw, height: Math.max(0, H - bottom - y(expected[i])) }),
    );
    const text = el('text', { x: x0 + bw, y: H - 4, 'text-anchor': 'middle', class: 'bar-label' });
    text.textContent = label;
    g.append(text);
    svg.append(g);
  });
  svg.append(el('line', { x1: 0, x2: W, y1: H - bottom, y2: H - bottom, class: 'bar-axis' }));
  return svg;
}
