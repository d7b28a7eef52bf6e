// The palette of signed values (view 2's matrices): blue below 0, near-white at 0, orange above,
// a ramp of our own in the spirit of ColorBrewer's PuOr. Blue against orange stays distinct for
// the common colour-vision deficiencies (they confuse red with green, not blue with orange), and
// the lightness falls on both sides of 0, so the sign and size also read in greyscale.
import { textColourOnRgb } from './colormap';

/** The ramp's stops at t = -1, -0.5, 0, 0.5, 1 (sRGB). */
export const DIVERGING_STOPS: readonly (readonly [number, number, number])[] = [
  [33, 84, 150],
  [136, 172, 214],
  [244, 244, 244],
  [236, 170, 98],
  [166, 80, 8],
];

/** RGB of t in [-1, 1] (clamped; NaN is 0), linear between the stops. */
export function divergingRgb(t: number): [number, number, number] {
  const x = Number.isNaN(t) ? 0 : Math.max(-1, Math.min(1, t));
  const pos = (x + 1) * 2; // 0..4 over the stops
  const k = Math.min(3, Math.floor(pos));
  const f = pos - k;
  const a = DIVERGING_STOPS[k];
  const b = DIVERGING_STOPS[k + 1];
  return [0, 1, 2].map((c) => Math.round(a[c] + (b[c] - a[c]) * f)) as [number, number, number];
}

/** The largest |v| over the finite values (1 when there is none or all are 0): the scale that
 * maps a table onto [-1, 1], so every table uses the full ramp and 0 stays at its centre. */
export function symmetricScale(values: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < values.length; ++i) if (Number.isFinite(values[i])) m = Math.max(m, Math.abs(values[i]));
  return m > 0 ? m : 1;
}

/** Background and text colour (black or white, the higher WCAG contrast) of v on scale. */
export function divergingColours(v: number, scale: number): { background: string; color: string } {
  const [r, g, b] = divergingRgb(v / scale);
  return { background: `rgb(${r}, ${g}, ${b})`, color: textColourOnRgb(r, g, b) };
}
