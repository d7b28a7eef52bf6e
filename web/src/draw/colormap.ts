// The heatmaps' palette: viridis (perceptually uniform, readable by colour-blind viewers and in
// greyscale), as a 256-entry lookup table sampled at build time (web/viridis-lut.mjs).
import { VIRIDIS_HEX } from 'virtual:viridis-lut';

/** RGB bytes of 256 viridis samples, entry k for t = k / 255. */
export const VIRIDIS_LUT: Uint8Array = Uint8Array.from({ length: 256 * 3 }, (_, i) => parseInt(VIRIDIS_HEX.slice(2 * i, 2 * i + 2), 16));

/** The LUT index of a value in [0, 1] (clamped). */
export function lutIndex(v: number): number {
  const t = v <= 0 ? 0 : v >= 1 ? 1 : v;
  return Math.round(t * 255);
}

/** CSS colour of a value in [0, 1]. */
export function cssColour(v: number): string {
  const k = lutIndex(v) * 3;
  return `rgb(${VIRIDIS_LUT[k]}, ${VIRIDIS_LUT[k + 1]}, ${VIRIDIS_LUT[k + 2]})`;
}

/** WCAG 2 relative luminance of an sRGB colour (channels 0..255). */
export function relativeLuminance(r: number, g: number, b: number): number {
  const lin = (c: number) => {
    const x = c / 255;
    return x <= 0.04045 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * lin(r) + 0.7152 * lin(g) + 0.0722 * lin(b);
}

/** Black or white, whichever has the higher WCAG contrast on the colour of v (at least 4.58:1
 * on any colour, so AA for normal text). */
export function textColourOn(v: number): string {
  const k = lutIndex(v) * 3;
  return textColourOnRgb(VIRIDIS_LUT[k], VIRIDIS_LUT[k + 1], VIRIDIS_LUT[k + 2]);
}

/** Black or white, whichever has the higher WCAG contrast on an sRGB colour (channels 0..255). */
export function textColourOnRgb(r: number, g: number, b: number): string {
  const L = relativeLuminance(r, g, b);
  return (L + 0.05) / 0.05 >= 1.05 / (L + 0.05) ? '#000' : '#fff';
}

/** Colour of masked cells (drawn hatched on top), distinct from every viridis colour. */
export const MASKED_FILL = '#e6e6e6';
export const MASKED_HATCH = '#8a8a8a';
