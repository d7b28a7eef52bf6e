// Text on coloured matrix cells: the colour textColourOn picks reads at WCAG AA (4.5:1) on every
// colour of the palette.
import { expect, test } from 'vitest';
import { cssColour, relativeLuminance, textColourOn } from '../../web/src/draw/colormap';

const contrast = (a: number, b: number) => (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);

test('relative luminance: black 0, white 1, mid grey by the sRGB curve', () => {
  expect(relativeLuminance(0, 0, 0)).toBe(0);
  expect(relativeLuminance(255, 255, 255)).toBeCloseTo(1, 12);
  expect(relativeLuminance(128, 128, 128)).toBeCloseTo(0.2158605, 6);
});

test('every palette colour gets black or white text with contrast >= 4.5', () => {
  let worst = Infinity;
  for (let i = 0; i <= 1000; ++i) {
    const v = i / 1000;
    const [r, g, b] = cssColour(v).match(/\d+/g)!.map(Number);
    const bg = relativeLuminance(r, g, b);
    const fg = textColourOn(v) === '#000' ? 0 : 1;
    worst = Math.min(worst, contrast(bg, fg));
  }
  expect(worst).toBeGreaterThanOrEqual(4.5);
});

test('the palette is viridis from d3, sampled at build time: its ends, and a luminance that rises', async () => {
  const { VIRIDIS_LUT } = await import('../../web/src/draw/colormap');
  const at = (k: number) => Array.from(VIRIDIS_LUT.slice(3 * k, 3 * k + 3));
  expect(VIRIDIS_LUT.length).toBe(768);
  expect(at(0)).toEqual([0x44, 0x01, 0x54]);
  expect(at(255)).toEqual([0xfd, 0xe7, 0x25]);
  // Luminance rises along viridis (up to the rounding of one sample to bytes).
  let last = -1;
  for (let k = 0; k < 256; ++k) {
    const L = relativeLuminance(...(at(k) as [number, number, number]));
    expect(L).toBeGreaterThan(last - 0.001);
    last = L;
  }
  expect(relativeLuminance(...(at(255) as [number, number, number]))).toBeGreaterThan(10 * relativeLuminance(...(at(0) as [number, number, number])));
});
