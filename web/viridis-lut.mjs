// The heatmaps' palette, sampled at build time: viridis (perceptually uniform, readable by
// colour-blind viewers and in greyscale) from d3-scale-chromatic, as 256 RGB triples. The page
// imports it as the virtual module `virtual:viridis-lut`, so the browser gets 1.5 KB of colours
// instead of d3's colour and interpolation code.
import { interpolateViridis } from 'd3-scale-chromatic';

/** The id pages import. */
export const VIRIDIS_MODULE = 'virtual:viridis-lut';

/** 256 viridis samples, entry k for t = k / 255, as one hex string "rrggbb" x 256. */
export function viridisHex() {
  let out = '';
  for (let k = 0; k < 256; ++k) {
    const c = interpolateViridis(k / 255); // "#rrggbb" (or "rgb(r, g, b)")
    const hex = /^#([0-9a-f]{6})$/i.exec(c);
    const rgb = /rgb\((\d+), ?(\d+), ?(\d+)\)/.exec(c);
    if (hex) out += hex[1].toLowerCase();
    else if (rgb) out += rgb.slice(1, 4).map((x) => Number(x).toString(16).padStart(2, '0')).join('');
    else throw new Error(`unexpected colour ${c}`);
  }
  return out;
}

/** The virtual module's source. */
export function viridisModuleSource() {
  return `export const VIRIDIS_HEX = ${JSON.stringify(viridisHex())};\n`;
}

/** A Vite plugin serving `virtual:viridis-lut` (for the page's builds, the dev server and Vitest). */
export function viridisLut() {
  const resolved = `\0${VIRIDIS_MODULE}`;
  return {
    name: 'attention-playground:viridis-lut',
    resolveId: (id) => (id === VIRIDIS_MODULE ? resolved : null),
    load: (id) => (id === resolved ? viridisModuleSource() : null),
  };
}
