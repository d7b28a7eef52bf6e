// Heads across layers, written once: the core numbers every head of an L-layer model layer-major,
// global head g = l * H + h (the order of attention()'s (L,H,T,T) weights, of the ablation's flags,
// of headScores()); the page names it "layer l · head h" (1-based), or "Head h" in a one-layer
// model, which looks as it always did. Pure functions, for the heatmaps, the panels and the exports.

/** Layer and head (0-based) of global head g in a model of H heads per layer. */
export function splitHead(g: number, H: number): { layer: number; head: number } {
  return { layer: Math.floor(g / H), head: g % H };
}

/** The global index of head h of layer l. */
export function globalHead(layer: number, head: number, H: number): number {
  return layer * H + head;
}

/** How the learner reads global head g: "layer 2 · head 1", or "Head 1" when L is 1. */
export function headLabel(g: number, H: number, L: number): string {
  const { layer, head } = splitHead(g, H);
  return L > 1 ? `layer ${layer + 1} · head ${head + 1}` : `Head ${head + 1}`;
}

/** Under grouped-query attention (kvHeads < H; 0 means H), what head g shares: its K/V head
 * floor(h / (H / kvHeads)) and the query heads of its group, 1-based ("K/V 1, shared by heads 1-2"),
 * or '' when every head has its own keys and values. */
export function kvGroupLabel(g: number, H: number, kvHeads: number): string {
  const G = kvHeads || H;
  if (G >= H) return '';
  const size = H / G;
  const kv = Math.floor(splitHead(g, H).head / size);
  return G === 1 ? `K/V shared by all ${H} heads` : `K/V ${kv + 1}, shared by heads ${kv * size + 1}–${(kv + 1) * size}`;
}

/** The same as a file-name part: "layer-2-head-1", or "head-1" when L is 1. */
export function headFileName(g: number, H: number, L: number): string {
  const { layer, head } = splitHead(g, H);
  return L > 1 ? `layer-${layer + 1}-head-${head + 1}` : `head-${head + 1}`;
}

/** The heads' average of layer l: "Average of layer 2's heads", or "Average of heads" when L is 1. */
export function averageLabel(layer: number, L: number): string {
  return L > 1 ? `Average of layer ${layer + 1}'s heads` : 'Average of heads';
}

/** Layer l's (H,T,T) block of (L,H,T,T) weights (a view, not a copy). */
export function layerWeights(weights: Float32Array, L: number, H: number, T: number, layer: number): Float32Array {
  if (weights.length !== L * H * T * T) throw new Error(`weights: ${weights.length} values for L=${L}, H=${H}, T=${T}`);
  if (!(layer >= 0 && layer < L)) throw new Error(`layer ${layer} is not in [0, ${L})`);
  return weights.subarray(layer * H * T * T, (layer + 1) * H * T * T);
}

/** The head with the largest score among the heads of layers >= fromLayer (global index), or -1. */
export function argmaxHead(scores: Float32Array, H: number, fromLayer = 0): number {
  let best = -1;
  for (let g = fromLayer * H; g < scores.length; ++g) if (Number.isFinite(scores[g]) && (best < 0 || scores[g] > scores[best])) best = g;
  return best;
}
