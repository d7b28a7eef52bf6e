// The "Fill in the blanks" panel's numbers: the masked language model fills the blanks with one
// forward pass over the whole text (the core's fill: both sides), and a causal model of the same
// text guesses each blank from the characters left of it (the core's predictions at the position
// before; an earlier blank takes that model's own first guess). The causal model is the run itself,
// or a copy of the last causal text model the panel saw in this tab, kept in the worker until the
// tab closes or another replaces it.
import type { AttentionCore, CorpusInput, Trainer } from '../../core/attention-core';
import { handle, type Held, type WorkerContext } from '../../worker/context';
import { RequestFailure } from '../../worker/post';
import { fillRequest, type CausalFill, type FillInput, type FillReport, type FilledBlank } from './request';

/** Guesses shown per blank. */
export const TOP = 5;
/** Characters that may mark a blank, the first one not in the vocabulary is used. */
const BLANK_MARKS = ['_', '□', '¤', '\u2581', '\u00b7'];

/** A copy of a causal text model, for comparison with a masked one trained later on the same text. */
class CausalCopy implements Held {
  constructor(
    readonly trainer: Trainer,
    /** The run it copies, and at which step. */
    readonly run: unknown,
    readonly step: number,
    readonly vocab: string,
    readonly corpus: CorpusInput | null,
  ) {}
  free(): void {
    this.trainer.delete();
  }
}

/** The characters of a text, checked: 1 to seqLen of them, blanks unique positions inside it,
 * at least one blank and one character left. */
function checked(input: FillInput, seqLen: number): { chars: string[]; blanks: number[] } {
  const chars = [...(typeof input.text === 'string' ? input.text : '')];
  if (chars.length === 0) throw new RequestFailure('input', 'The text is empty: type a few characters of the corpus.');
  if (chars.length > seqLen) throw new RequestFailure('input', `The text has ${chars.length} ${chars.length === 1 ? 'character' : 'characters'}; this model reads at most ${seqLen} (its seq_len).`);
  const blanks = [...new Set(input.blanks)].sort((a, b) => a - b);
  for (const p of blanks) if (!Number.isInteger(p) || p < 0 || p >= chars.length) throw new RequestFailure('input', `Blank position ${p} is outside the text (0 to ${chars.length - 1}).`);
  if (blanks.length === 0) throw new RequestFailure('input', 'No blank yet: click a character to blank it.');
  if (blanks.length === chars.length) throw new RequestFailure('input', 'Every character is blank: leave some for the model to read.');
  return { chars, blanks };
}

/** The guesses of a causal model: each blank, left to right, from the characters before it. */
function causalGuesses(core: AttentionCore, t: Trainer, chars: string[], blanks: number[]): FilledBlank[] {
  const vocab = [...t.corpus()!.vocab];
  const C = t.config().seqLen;
  // The blanks' own characters are never read: each is replaced by the model's guess before a
  // later position reads it.
  const ids = core.encodeText(vocab.join(''), chars.map((c, i) => (blanks.includes(i) ? vocab[0] : c)).join(''));
  return blanks.map((p) => {
    if (p === 0) return { position: p, truth: chars[p], top: [], why: 'nothing to its left: a causal model has no guess for the first character' };
    const left = ids.slice(Math.max(0, p - C), p);
    const pred = t.predictions(left, TOP);
    const row = (left.length - 1) * pred.k;
    const top = Array.from({ length: pred.k }, (_, j) => ({ char: vocab[pred.top[row + j]], prob: pred.probs[row + j] }));
    ids[p] = pred.top[row];
    return { position: p, truth: chars[p], top };
  });
}

/** The causal model to compare with: the run itself (kept for later), or the copy kept from an
 * earlier causal run of the same text. */
function causalModel(ctx: WorkerContext, vocab: string): { trainer: Trainer; step: number } | null {
  const run = ctx.run();
  if (run.config.objective === 'causal') {
    const held = ctx.held<CausalCopy>('fill:causal');
    if (run.step > 0 && (!held || held.run !== run || held.step !== run.step)) {
      const copy = new ctx.core.Trainer(run.config, ctx.corpus);
      copy.importWeights(run.trainer.exportWeights());
      ctx.hold('fill:causal', new CausalCopy(copy, run, run.step, vocab, ctx.corpus), 'released');
    }
    return { trainer: run.trainer, step: run.step };
  }
  const held = ctx.held<CausalCopy>('fill:causal');
  return held && held.vocab === vocab && held.corpus === ctx.corpus ? { trainer: held.trainer, step: held.step } : null;
}

/** The worker's answer: the run's guesses (an mlm model) and a causal model's, for the same text. */
export const handlers = [
  handle(fillRequest, (ctx, input): FillReport => {
    const run = ctx.run();
    const t = run.trainer;
    const corpus = t.corpus();
    if (!corpus) throw new RequestFailure('state', 'Fill in the blanks works on characters: choose the text task (the preset "Fill in the blanks" sets up a masked model of the default text).');
    const { chars, blanks } = checked(input, run.config.seqLen);
    ctx.core.encodeText(corpus.vocab, chars.join(''));  // a character outside the vocabulary: the core's sentence
    const blank = BLANK_MARKS.find((m) => !corpus.vocab.includes(m)) ?? '\u0001';
    let filled: FilledBlank[] = [];
    if (run.config.objective === 'mlm') {
      const r = t.fill(chars.map((c, i) => (blanks.includes(i) ? blank : c)).join(''), { blank, top: TOP });
      filled = r.blanks.map((b) => ({ position: b.position, truth: chars[b.position], top: b.top }));
    }
    const other = causalModel(ctx, corpus.vocab);
    const causal: CausalFill | null = other ? { step: other.step, blanks: causalGuesses(ctx.core, other.trainer, chars, blanks) } : null;
    return { step: run.step, objective: run.config.objective, task: run.config.task, seqLen: run.config.seqLen, text: chars.join(''), blank, blanks: filled, causal };
  }),
];
