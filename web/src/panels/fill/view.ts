// The training view's "Fill in the blanks" panel (task text): a text, each of its characters a
// button that blanks it; for each blank the masked language model's five most likely characters
// (the core's fill: one forward pass that reads both sides) and, beside them, a causal model's of the
// same text (the core's predictions from the characters left of the blank). model.ts holds the
// text, the blanks and the requests.
import type { Controller } from '../../client/controller';
import { plural, prob } from '../../model/format';
import { h, scrollBox } from '../../ui/dom';
import { answerView, fillPanel, mountModel, type PanelOptions } from '../../ui/panel';
import { FillModel, truthProb } from './model';
import type { FillReport, FilledBlank } from './request';

/** A visible character: a space as the open-box sign. */
const shown = (c: string) => (c === ' ' ? '␣' : c);

/** Fills slot (the panel's section, placed by the training view). Returns the unmount function. */
export function mount(slot: HTMLElement, ctl: Controller, _opts: PanelOptions): () => void {
  const input = h('input', { type: 'text', name: 'fillText', class: 'fill-text', spellcheck: false, autocomplete: 'off' });
  const chars = h('div', { class: 'fill-chars', role: 'group', 'aria-label': 'The text: click a character to blank it, click a blank to restore it' });
  const summary = h('p', { class: 'fill-summary' });
  const causalNote = h('p', { class: 'hint fill-causal-note' });
  const problem = h('p', { class: 'problem', role: 'alert', hidden: true });
  const table = h('table', { class: 'fill-table' });
  const panel = fillPanel(
    slot,
    { 'data-state': 'idle' },
    'Fill in the blanks',
    h('p', {
      class: 'hint first',
      text:
        'A masked language model is trained the way BERT is: at each step about 15% of the characters are picked, and the model must say what they were. ' +
        'Of the picked ones, 80% are shown as [MASK], 10% as some other character and 10% unchanged, so the model cannot count on the mask to tell it where to work, and must check every character it reads. ' +
        'Nothing hides the right side from it, so a blank at the start of a word, where the left side says little, is often easy.',
    }),
    h('label', { class: 'fill-label' }, 'Text (characters of the corpus) ', input),
    chars,
    summary,
    problem,
    scrollBox('Guesses for each blank (scrolls sideways)', table),
    causalNote,
    h('p', {
      class: 'hint',
      text:
        'Why an encoder cannot write text left to right: every position it predicts was computed with the characters after it in view. ' +
        'To write the next character there is no right side yet, so a causal model (the GPT of the text preset) generates, and a masked one fills in.',
    }),
  );

  const guessCells = (b: FilledBlank | undefined) => {
    if (!b) return [h('td', { class: 'fill-none', colSpan: 5, text: '—' })];
    if (b.top.length === 0) return [h('td', { class: 'fill-none', colSpan: 5, text: b.why ?? '—' })];
    return b.top.map((g) =>
      h('td', { class: g.char === b.truth ? 'guess is-answer' : 'guess', 'data-prob': g.prob, 'data-char': g.char }, h('span', { class: 'tok', text: shown(g.char) }), ` ${prob(g.prob)}`, g.char === b.truth ? h('span', { class: 'visually-hidden', text: ' (the hidden character)' }) : null),
    );
  };

  function renderChars(): void {
    const text = [...model.text];
    input.maxLength = ctl.snapshot?.T ?? 256;
    if (document.activeElement !== input) input.value = model.text;
    chars.replaceChildren(
      ...text.map((c, i) => {
        const blank = model.blanks.includes(i);
        const b = h('button', { type: 'button', class: blank ? 'fill-char blank' : 'fill-char', 'data-pos': i, 'aria-pressed': String(blank), 'aria-label': blank ? `position ${i}: blank (was ${shown(c)})` : `position ${i}: ${shown(c)}`, text: blank ? '_' : shown(c) });
        b.addEventListener('click', () => {
          model.toggle(i);
          renderChars();
          (chars.querySelector(`[data-pos="${i}"]`) as HTMLElement | null)?.focus();
        });
        return b;
      }),
    );
  }

  function render(r: FillReport): void {
    renderChars();
    const mlm = r.objective === 'mlm';
    const rows = (mlm ? r.blanks.map((b) => b.position) : (r.causal?.blanks.map((b) => b.position) ?? [])).map((p) => {
      const own = r.blanks.find((b) => b.position === p);
      const left = r.causal?.blanks.find((b) => b.position === p);
      const truth = (own ?? left)?.truth ?? '';
      return h(
        'tr',
        { 'data-pos': p, 'data-truth': truth },
        h('th', { scope: 'row', text: String(p) }),
        h('td', { class: 'tok answer', text: shown(truth) }),
        ...(mlm ? guessCells(own) : []),
        ...(r.causal ? guessCells(left) : []),
      );
    });
    const head = h(
      'tr',
      {},
      h('th', { scope: 'col', text: 'position' }),
      h('th', { scope: 'col', text: 'hidden' }),
      ...(mlm ? [h('th', { scope: 'col', colSpan: 5, text: 'masked model, both sides: top 5 (p)' })] : []),
      ...(r.causal ? [h('th', { scope: 'col', colSpan: 5, text: `causal model${mlm ? `, step ${r.causal.step}` : ''}, left side only: top 5 (p)` })] : []),
    );
    table.replaceChildren(h('caption', { class: 'visually-hidden', text: `Guesses for each blank at step ${r.step}` }), h('thead', {}, head), h('tbody', {}, ...rows));
    const right = (list: FilledBlank[]) => list.filter((b) => b.top[0]?.char === b.truth).length;
    const n = mlm ? r.blanks.length : (r.causal?.blanks.length ?? 0);
    summary.textContent = mlm
      ? `Step ${r.step}: the masked model's first guess is right at ${right(r.blanks)} of ${n} blank${n === 1 ? '' : 's'}` +
        (r.causal ? `; the causal model's at ${right(r.causal.blanks)}.` : '.') +
        ` It gives the hidden characters ${r.blanks.map((b) => prob(truthProb(b.top, b.truth))).join(', ')}.`
      : `Step ${r.step}: this model is causal, so it fills nothing: it never saw a character to the right of the one it predicts. Its guesses from the left side are below.`;
    causalNote.textContent = mlm
      ? r.causal
        ? `The causal model was trained on the same text earlier in this tab (for ${plural(r.causal.step, 'step')}) and reads only what lies left of each blank. It often knows the inside of a word, rarely which word begins.`
        : 'To compare with a causal model: train one on the same text in this tab first (objective causal, task text, e.g. the "Train a GPT on text" preset), open this panel once it has trained, then come back here; the panel keeps it.'
      : 'Switch objective to mlm (or open the "Fill in the blanks" preset) to train a model that reads both sides; this panel keeps the causal model you trained here to compare.';
    panel.dataset.step = String(r.step);
    panel.dataset.objective = r.objective;
    panel.dataset.blanks = String(n);
    panel.dataset.causal = r.causal ? 'yes' : 'no';
  }

  input.addEventListener('input', () => model.setText(input.value));
  const model = new FillModel(
    ctl,
    answerView(panel, problem, render, (why) => `The blanks could not be filled: ${why.replace(/[.!?]$/, '')}.`, { done: 'ready', failed: 'error' }),
  );
  renderChars();
  return mountModel(panel, model);
}
