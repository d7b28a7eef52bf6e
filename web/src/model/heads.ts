// One head's attention, or the heads' average, out of a snapshot's (H,T,T) weights: computed here
// once, for the heatmaps and the exports alike, so that the drawing modules only draw.

/** Head hh's (T,T) weights, a copy, out of (H,T,T) weights. */
export function headWeights(weights: Float32Array, H: number, T: number, hh: number): Float32Array {
  if (weights.length !== H * T * T) throw new Error(`weights: ${weights.length} values for H=${H}, T=${T}`);
  if (!(hh >= 0 && hh < H)) throw new Error(`head ${hh} is not in [0, ${H})`);
  return weights.slice(hh * T * T, (hh + 1) * T * T);
}

/** The mean over the heads of (H,T,T) weights: (T,T). */
export function headAverage(weights: Float32Array, H: number, T: number): Float32Array {
  if (weights.length !== H * T * T) throw new Error(`weights: ${weights.length} values for H=${H}, T=${T}`);
  const avg = new Float32Array(T * T);
  for (let hh = 0; hh < H; ++hh) {
    const w = weights.subarray(hh * T * T, (hh + 1) * T * T);
    for (let k = 0; k < T * T; ++k) avg[k] += w[k] / H;
  }
  return avg;
}

/** Figure f of a snapshot's heatmaps: head f for f < H, the average for f === H. */
export function headOrAverage(weights: Float32Array, H: number, T: number, f: number): Float32Array {
  return f < H ? headWeights(weights, H, T, f) : headAverage(weights, H, T);
}

/** The keys each query may see under the mask in effect, (T,T) row-major, 1 = visible: the layers'
 * own pattern (`visible`, the core's attentionMask) under `causal`; every key with the mask off
 * (`none`); under `inverted`, which writes −1e4 on the past instead of the future, the query itself
 * and every later key. */
export function visibleInEffect(mask: string, visible: Uint8Array, T: number): Uint8Array {
  if (mask === 'causal') return visible;
  if (mask === 'none') return new Uint8Array(T * T).fill(1);
  return Uint8Array.from({ length: T * T }, (_, k) => (k % T >= Math.floor(k / T) ? 1 : 0));
}

/** The cells a heatmap hatches: under the layers' own mask (`causal`) those their attention
 * pattern hides (visible: the core's (T,T) attentionMask; none under mlm's full attention), with a
 * key naming the pattern; null under a broken mask, which hides nothing. */
export function hiddenCells(mask: string, visible: Uint8Array | null | undefined, T: number): { cells: Uint8Array; key: string } | null {
  if (mask !== 'causal' || !visible || visible.length !== T * T) return null;
  return { cells: visible.map((v) => 1 - v), key: visible.join('') };
}
