// The text task's pure helpers: how a character token is labelled in the figures and named in
// lists (every panel's, Generate's and Speculative decoding's among them), and the
// validation curve the loss chart draws (the worker's evaluateText points).
import { num } from './format';

/** A character as a figure labels it: space and the control characters get a visible sign. */
export function charLabel(ch: string): string {
  if (ch === ' ') return '␣';
  if (ch === '\n') return '⏎';
  if (ch === '\t') return '⇥';
  if (ch === '\r') return '␍';
  const c = ch.codePointAt(0) ?? 0;
  return c < 0x20 || c === 0x7f ? `U+${c.toString(16).toUpperCase().padStart(4, '0')}` : ch;
}

const WHITESPACE_NAMES: Readonly<Record<string, string>> = { ' ': 'space', '\n': 'new line', '\t': 'tab', '\r': 'carriage return' };

/** A character as a list or a sentence names it: its sign, and whitespace's name in words. */
export function charName(ch: string): string {
  const name = WHITESPACE_NAMES[ch];
  return name ? `${charLabel(ch)} (${name})` : charLabel(ch);
}

/** The labels of token ids: the character for a text model (vocab: its characters, sorted, one
 * per code point), else the id itself. An id outside the vocabulary keeps its number. */
export function tokenLabels(ids: ArrayLike<number>, vocab: string | null | undefined): string[] {
  const chars = vocab ? Array.from(vocab) : null;
  return Array.from(ids, (id) => (chars && id >= 0 && id < chars.length ? charLabel(chars[id]) : String(id)));
}

/** The largest corpus the page accepts, in bytes (the core's kMaxCorpusBytes). */
export const MAX_CORPUS_BYTES = 2 * 1024 * 1024;

/** The sentence for a file over MAX_CORPUS_BYTES (refused before it is read). */
export function tooLargeMessage(name: string, bytes: number): string {
  return `${name || 'The file'} is ${num(bytes / (1024 * 1024), 1)} MB (${bytes} bytes), more than the 2 MB a text may have.`;
}

/** Values at the chart's x positions: xs[i] is a step (ascending), points the steps and values
 * measured (ascending steps); each point goes to the first x at or after its step, null (a gap the
 * chart spans) elsewhere. */
export function alignPoints(xs: ArrayLike<number>, steps: ArrayLike<number>, values: ArrayLike<number>): (number | null)[] {
  const out = new Array<number | null>(xs.length).fill(null);
  let i = 0;
  for (let p = 0; p < steps.length; ++p) {
    while (i < xs.length && xs[i] < steps[p]) ++i;
    if (i >= xs.length) break;
    out[i] = values[p];
  }
  return out;
}
