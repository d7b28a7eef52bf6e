// The loss chart's derived lines, computed from the loss history (pure; the chart draws them):
// a smoothed curve and the epoch means of the curriculum's demo (the tick labels are model/format.ts's tick).

/** The exponential moving average of values (bias-corrected, as TensorBoard's smoothing): y_0 is
 * values[0], and each next y moves 1 - alpha of the way to the new value. NaN values are skipped. */
export function ema(values: ArrayLike<number>, alpha: number): Float64Array {
  const out = new Float64Array(values.length);
  let acc = 0;
  let weight = 0;
  for (let i = 0; i < values.length; ++i) {
    const v = values[i];
    if (Number.isFinite(v)) {
      acc = alpha * acc + (1 - alpha) * v;
      weight = alpha * weight + (1 - alpha);
    }
    out[i] = weight > 0 ? acc / weight : NaN;
  }
  return out;
}

/**
 * The mean loss of each epoch of stepsPerEpoch steps, from the history (losses[i] is the loss of
 * step 1 + i * stride). With stride 1 these are the exact means of every step's loss; with a
 * thinned history, the means of the points kept. Returns one mean per epoch that has begun.
 */
export function epochMeans(losses: ArrayLike<number>, stride: number, stepsPerEpoch: number): number[] {
  const sums: number[] = [];
  const counts: number[] = [];
  for (let i = 0; i < losses.length; ++i) {
    const epoch = Math.floor((i * stride) / stepsPerEpoch);
    sums[epoch] = (sums[epoch] ?? 0) + losses[i];
    counts[epoch] = (counts[epoch] ?? 0) + 1;
  }
  return sums.map((s, e) => s / counts[e]);
}
