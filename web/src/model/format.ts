// Numbers as the page writes them in sentences, tables, legends and axes: the one module that
// spells them, so every panel writes a number the same way. A dash stands for what is not a number
// (undefined scores, a loss not yet measured); a true minus sign (U+2212) for a negative where a
// table or a sentence shows one.

/** v with d decimals; a dash when it is missing or not finite. */
export const num = (v: number | null | undefined, d = 3): string => (v != null && Number.isFinite(v) ? v.toFixed(d) : '—');
/** A fraction as a percentage with one decimal ("42.0%"); a dash when not finite. */
export const pct = (v: number): string => (Number.isFinite(v) ? `${(100 * v).toFixed(1)}%` : '—');
/** v with an explicit sign ("+0.120", "−0.120", with a true minus sign); a dash when not finite. */
export const signed = (v: number, d = 3): string => (Number.isFinite(v) ? `${v >= 0 ? '+' : '−'}${Math.abs(v).toFixed(d)}` : '—');
/** A change of a fraction in percentage points, signed ("+12.5 pts"); a dash when not finite. */
export const points = (v: number): string => (Number.isFinite(v) ? `${signed(100 * v, 1)} pts` : '—');
/** The mean of a; NaN for none. */
export const mean = (a: Float32Array): number => (a.length ? a.reduce((s, v) => s + v, 0) / a.length : NaN);

/** v with d significant digits ("0.1235", "1.235e-5"); a dash when not finite. */
export const sig = (v: number, d = 4): string => (Number.isFinite(v) ? v.toPrecision(d) : '—');

/** A probability: 3 decimals, or 2 significant digits in exponent form under 0.0005 ("1.2e-5"). */
export function prob(p: number): string {
  if (!Number.isFinite(p)) return '—';
  return p >= 0.0005 || p === 0 ? p.toFixed(3) : p.toExponential(1);
}

/** A small or large number in short exponent form: 1.19e-7, 1e-5, 0; "—" when not measured (NaN). */
export function sci(v: number): string {
  if (v === 0) return '0';
  if (!Number.isFinite(v)) return Number.isNaN(v) ? '—' : v > 0 ? '∞' : '−∞';
  const [mant, exp] = v.toExponential(2).split('e');
  const m = mant.replace(/\.?0+$/, '');
  return `${m}e${exp.replace(/^\+/, '')}`;
}

/** A table cell: fixed digits with a true minus ("−0.250"), "−∞" and "∞"; a tiny negative that
 * rounds to 0 is "0.000", not "−0.000". */
export function cell(v: number, digits = 3): string {
  if (v === -Infinity) return '−∞';
  if (v === Infinity) return '∞';
  const s = v.toFixed(digits);
  if (Number(s) === 0) return s.replace('-', '');
  return s.startsWith('-') ? `−${s.slice(1)}` : s;
}

/** A cell that may hold any size: "NaN", an exponent for the very large or very small (so
 * exp(-100) reads 3.72e−44, not 0.000), else cell()'s fixed digits. */
export function wide(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (!Number.isFinite(v)) return cell(v);
  const a = Math.abs(v);
  if (a !== 0 && (a >= 1e5 || a < 1e-3)) return v.toExponential(2).replace('-', '−').replace('e+', 'e');
  return cell(v);
}

/** A loss in a legend: exact to float32 precision (7 significant digits, no trailing zeros). */
export const exact = (v: number | null | undefined): string => (v == null || !Number.isFinite(v) ? '—' : Number(v.toPrecision(7)).toString());

/** An axis tick: 3 significant digits down to 0.01, then as 1e-4, 5e-5 (never "0"). */
export function tick(v: number): string {
  if (v === 0 || !Number.isFinite(v)) return String(v);
  const a = Math.abs(v);
  if (a >= 0.01 && a < 1e5) return String(Number(v.toPrecision(3)));
  return v.toExponential(0).replace('e+', 'e');
}

/** A count rounded to a whole number, with thousands separators ("12,345"). */
export const count = (v: number): string => Math.round(v).toLocaleString('en-US');
/** A count and its noun, singular for 1: plural(1, 'head') is "1 head", plural(4, 'head') "4 heads". */
export const plural = (v: number, noun: string, nouns = `${noun}s`): string => `${count(v)} ${Math.round(v) === 1 ? noun : nouns}`;
/** Bytes as whole kilobytes with thousands separators ("1,234 KB"). */
export const kb = (bytes: number): string => `${count(bytes / 1024)} KB`;

/** A duration in ms: one decimal under 10 ms, else whole ms. */
export const ms = (t: number): string => (t < 10 ? t.toFixed(1) : String(Math.round(t)));

/** The unit a loss is shown in: the core's nats, or bits per character on text (one unit per task,
 * in the chart, its lines and the readout). */
export type LossUnit = 'nats' | 'bits/char';

/** The unit of a task's loss: bits per character on text, nats elsewhere. */
export const lossUnitOf = (task: string): LossUnit => (task === 'text' ? 'bits/char' : 'nats');

/** What one nat is in unit (bits divide by ln 2). */
export const perNat = (unit: LossUnit): number => (unit === 'nats' ? 1 : 1 / Math.LN2);
