// The stability panel's logits setting (view 2): a short list of numbers typed by the learner,
// parsed and bounded here so the key table (settings.ts) can clean what a link or an input gives.
import { quote } from './parse';

/** At most this many logits, each within ±LOGIT_BOUND (far past exp's float32 overflow at ~88.7). */
export const MAX_LOGITS = 8;
export const LOGIT_BOUND = 1000;
export const DEFAULT_LOGITS = '100 200 300';

/** Parses "100, 200 300" into numbers; reports what it dropped or clamped. */
export function parseLogits(text: string): { logits: number[]; problems: string[] } {
  const logits: number[] = [];
  const problems: string[] = [];
  for (const p of text.slice(0, 256).split(/[\s,;]+/).filter((x) => x !== '')) {
    const n = Number(p.replace('−', '-'));
    if (!Number.isFinite(n)) {
      if (problems.length < 3) problems.push(`${quote(p)} is not a number`);
      continue;
    }
    const c = Math.min(LOGIT_BOUND, Math.max(-LOGIT_BOUND, n));
    if (c !== n && problems.length < 3) problems.push(`${n} is outside ±${LOGIT_BOUND}; using ${c}`);
    logits.push(c);
  }
  if (logits.length > MAX_LOGITS) {
    problems.push(`more than ${MAX_LOGITS} logits; keeping the first ${MAX_LOGITS}`);
    logits.length = MAX_LOGITS;
  }
  return { logits, problems };
}

/** The setting's clean: a space-separated list of 1 to MAX_LOGITS bounded numbers. */
export function cleanLogits(raw: string): { value: string; why?: string } {
  const { logits, problems } = parseLogits(raw);
  if (logits.length === 0) return { value: DEFAULT_LOGITS, why: `no numbers; using ${DEFAULT_LOGITS}` };
  const value = logits.join(' ');
  return problems.length ? { value, why: problems.join('; ') } : { value };
}
