// View 2's mask as one setting: a preset name (none, causal, window, blocks) or cells drawn by
// hand, written as rows of 0/1 joined by dots ("011.001.000": 1 = query i may not read key j).
// Pure functions: the key table cleans the value with cleanMask, the view turns it into cells
// for the core with maskCells and writes a drawn mask back with maskValue.
import { cleanSentence, quote, TEXT_LIMITS, tokenize } from './parse';

/** The presets, in the order the view offers them. */
export const MASK_PRESETS = ['none', 'causal', 'window', 'blocks'] as const;
export type MaskPreset = (typeof MASK_PRESETS)[number];

/** Most tokens of the lesson's sequence: two sentences of at most sentenceTokens each. */
export const MAX_MASK_TOKENS = 2 * TEXT_LIMITS.sentenceTokens;

const DRAWN = /^[01]+(?:\.[01]+)*$/;
const isPreset = (v: string): v is MaskPreset => (MASK_PRESETS as readonly string[]).includes(v);

/** The mask setting's cleaner: a preset or drawn rows (square, at most MAX_MASK_TOKENS). Anything
 * else becomes none, with why. */
export function cleanMask(raw: string): { value: string; why?: string } {
  const t = raw.trim();
  if (isPreset(t)) return { value: t };
  const max = MAX_MASK_TOKENS;
  if (t.length <= 4 * max * (max + 1) && DRAWN.test(t)) {
    const rows = t.split('.');
    if (rows.length <= max && rows.every((r) => r.length === rows.length)) return { value: t };
    return { value: 'none', why: `${quote(raw)} is not a square of at most ${max} rows of 0 and 1; using none` };
  }
  return { value: 'none', why: `${quote(raw)} is not none, causal, window, blocks or rows of 0 and 1 such as 011.001.000; using none` };
}

/** The preset a mask value names, or 'drawn'. */
export function presetOf(value: string): MaskPreset | 'drawn' {
  return isPreset(value) ? value : 'drawn';
}

/**
 * The cells (T*T, row-major, 1 = masked) of a mask value for T tokens: causal masks j > i; the
 * window of k lets query i read keys i-k+1 .. i; blocks lets each sentence read only itself (the
 * first has `split` tokens). A drawn mask of another size is cut or padded with open cells, and
 * `note` says so.
 */
export function maskCells(value: string, T: number, k: number, split: number): { cells: Uint8Array; note?: string } {
  const cells = new Uint8Array(T * T);
  const preset = presetOf(value);
  const rows = preset === 'drawn' ? value.split('.') : [];
  for (let i = 0; i < T; ++i)
    for (let j = 0; j < T; ++j) {
      let masked = false;
      if (preset === 'causal') masked = j > i;
      else if (preset === 'window') masked = j > i || j <= i - k;
      else if (preset === 'blocks') masked = i < split !== j < split;
      else if (preset === 'drawn') masked = rows[i]?.[j] === '1';
      cells[i * T + j] = masked ? 1 : 0;
    }
  const n = rows.length;
  const note = preset === 'drawn' && n !== T ? `The drawn mask has ${n} rows and the sequence ${T} tokens: ${n > T ? 'the extra rows and columns are dropped' : 'the new cells are open'}.` : undefined;
  return note ? { cells, note } : { cells };
}

/** The setting value of drawn cells (T*T). */
export function maskValue(cells: Uint8Array, T: number): string {
  return Array.from({ length: T }, (_, i) => Array.from(cells.subarray(i * T, i * T + T)).join('')).join('.');
}

/** The queries (row indices) whose every key is masked. */
export function fullyMaskedRows(cells: Uint8Array, T: number): number[] {
  return Array.from({ length: T }, (_, i) => i).filter((i) => cells.subarray(i * T, i * T + T).every((c) => c !== 0));
}

/** The second sentence's cleaner: like the first, but empty stays empty (one sentence). */
export function cleanSecondSentence(raw: string): { value: string; why?: string } {
  const plain = raw.replace(/[\u0000-\u001f\u007f]/g, ' ');
  if (tokenize(plain).length > 0) return cleanSentence(raw);
  return plain === raw && raw.trim() === '' ? { value: '' } : { value: '', why: `${quote(raw)} has no words; left empty` };
}
