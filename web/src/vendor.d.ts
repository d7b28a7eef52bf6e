// The virtual module of the palette (web/viridis-lut.mjs, a Vite plugin).
declare module 'virtual:viridis-lut' {
  /** 256 viridis samples as "rrggbb" x 256, entry k for t = k / 255. */
  export const VIRIDIS_HEX: string;
}
