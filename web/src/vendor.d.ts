// The one function of d3-scale-chromatic the page uses (the package ships no types).
declare module 'd3-scale-chromatic' {
  /** t in [0, 1] -> a CSS colour ("#rrggbb") on the viridis colour map. */
  export function interpolateViridis(t: number): string;
}
