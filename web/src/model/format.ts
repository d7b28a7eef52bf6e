// Numbers as the page writes them in sentences, tables and legends: one spelling for every panel,
// and a dash for what is not a number (undefined scores, a loss not yet measured).

/** v with d decimals; a dash when it is missing or not finite. */
export const num = (v: number | null | undefined, d = 3): string => (v != null && Number.isFinite(v) ? v.toFixed(d) : '—');
/** A fraction as a percentage with one decimal ("42.0%"); a dash when not finite. */
export const pct = (v: number): string => (Number.isFinite(v) ? `${(100 * v).toFixed(1)}%` : '—');
/** v with an explicit sign ("+0.120", "−0.120", with a true minus sign); a dash when not finite. */
export const signed = (v: number, d = 3): string => (Number.isFinite(v) ? `${v >= 0 ? '+' : '−'}${Math.abs(v).toFixed(d)}` : '—');
/** The mean of a; NaN for none. */
export const mean = (a: Float32Array): number => (a.length ? a.reduce((s, v) => s + v, 0) / a.length : NaN);
