// The "Fill in the blanks" panel's model: the text and its blanks (the learner's), when the core
// fills them again (when shown after a step, a pause, a new model; never while training plays; at
// once when the learner edits the text or clicks a character), and the default text: the sample the
// heatmaps show, with a first letter and a middle letter blanked.
import type { Controller } from '../../client/controller';
import { PanelModel, type PanelView } from '../../ui/panel-model';
import { fillRequest, type FillGuess, type FillReport } from './request';

/** The blanks a text starts with: the first letter of its second word (only the right side tells
 * which word comes) and a letter inside a word after it (both sides help). */
export function defaultBlanks(text: string): number[] {
  const chars = [...text];
  const letter = (i: number) => i >= 0 && i < chars.length && /\p{L}/u.test(chars[i]);
  const out: number[] = [];
  const first = chars.findIndex((_, i) => i > 0 && letter(i) && !letter(i - 1));
  if (first >= 0) out.push(first);
  const middle = chars.findIndex((_, i) => i > (first >= 0 ? first + 2 : 0) && letter(i - 1) && letter(i) && letter(i + 1));
  if (middle >= 0) out.push(middle);
  return out.length > 0 || chars.length < 2 ? out : [1];
}

/** The blanks after the learner clicks position i: added, or removed when it was one. */
export function toggleBlank(blanks: readonly number[], i: number): number[] {
  return blanks.includes(i) ? blanks.filter((b) => b !== i) : [...blanks, i].sort((a, b) => a - b);
}

/** The probability the guesses give the hidden character (0 when it is not among them). */
export function truthProb(top: readonly FillGuess[], truth: string): number {
  return top.find((g) => g.char === truth)?.prob ?? 0;
}

/** The panel's inputs and requests; `destroy` stops it. */
export class FillModel extends PanelModel<FillReport> {
  /** The text and its blanks: the sample's characters until the learner types their own. */
  text = '';
  blanks: number[] = [];
  #typed = false;

  constructor(ctl: Controller, view: PanelView<FillReport>) {
    super(ctl, view, { whilePlaying: 'never' });
    this.start();
  }

  /** The learner's text (its blanks kept where they still fall inside it). */
  setText(text: string): void {
    this.#typed = true;
    this.text = text;
    const n = [...text].length;
    this.blanks = this.blanks.filter((b) => b < n);
    this.refresh();
  }

  /** The learner clicked character i. */
  toggle(i: number): void {
    this.blanks = toggleBlank(this.blanks, i);
    this.refresh();
  }

  protected follow(): void {
    // Until the learner types: the sample's characters (task text, a new run or sample brings
    // its own), blanked where only one side helps and where both do.
    const s = this.ctl.snapshot;
    if (this.#typed || !s?.text) return;
    const vocab = [...s.text.corpus.vocab];
    const sample = Array.from(s.ids, (id) => vocab[id] ?? '').join('');
    if (sample === this.text) return;
    this.text = sample;
    this.blanks = defaultBlanks(sample);
  }

  protected ask(): Promise<FillReport> {
    return this.ctl.call(fillRequest, { text: this.text, blanks: this.blanks });
  }
}
