// The training view's "Predictions on the sample" panel: at each position of the sample, the
// model's three most likely next tokens with their probabilities (a softmax of the core's logits,
// handler.ts), the task's answer there (the core's taskTargets) and whether the most
// likely token is it. A table with words and marks, never colour alone. model.ts holds the
// requests.
import type { Controller } from '../../client/controller';
import { prob } from '../../model/format';
import { tokenLabels } from '../../model/text';
import { h, scrollBox } from '../../ui/dom';
import { answerView, fillPanel, mountModel, type PanelOptions } from '../../ui/panel';
import { PredictionsModel, tally, verdictAt, type Verdict } from './model';
import type { PredictionsReport } from './request';

const VERDICT_TEXT: Record<Verdict, string> = { right: '✓ right', wrong: '✗ wrong', none: '– not counted' };
const ORDINAL = ['1st', '2nd', '3rd', '4th', '5th'];

/** Fills slot (the panel's section, placed by the training view). Returns the unmount function. */
export function mount(slot: HTMLElement, ctl: Controller, _opts: PanelOptions): () => void {
  const summary = h('p', { class: 'pred-summary' });
  const problem = h('p', { class: 'problem', role: 'alert', hidden: true });
  const table = h('table', { class: 'pred-table' });
  const panel = fillPanel(
    slot,
    { 'data-state': 'idle' },
    'Predictions on the sample',
    h('p', {
      class: 'hint first',
      text:
        'At each position of the sample, the three tokens the model thinks come next, with the probability it gives each (a softmax of the logits the core returns). ' +
        'The last columns compare its first choice with the answer the task sets there; positions where the task sets none (the first half of copy, reverse and sort, the first of shift) are not counted. ' +
        'An untrained model spreads about 1/V over every token; as the heads learn where to look, the answer takes almost all of it.',
    }),
    summary,
    problem,
    scrollBox('Predictions at each position (scrolls sideways)', table),
  );

  function render(r: PredictionsReport): void {
    const head = h(
      'tr',
      {},
      h('th', { scope: 'col', text: 'position' }),
      h('th', { scope: 'col', text: 'token' }),
      ...Array.from({ length: r.k }, (_, j) => h('th', { scope: 'col', text: `${ORDINAL[j] ?? `#${j + 1}`} guess (p)` })),
      h('th', { scope: 'col', text: 'answer' }),
      h('th', { scope: 'col', text: 'p(answer)' }),
      h('th', { scope: 'col', text: 'first guess is' }),
    );
    const body = h('tbody');
    const label = (id: number) => tokenLabels([id], r.vocab)[0];
    for (let t = 0; t < r.ids.length; ++t) {
      const verdict = verdictAt(r, t);
      const answer = r.answers[t];
      const guesses = Array.from({ length: r.k }, (_, j) => {
        const id = r.top[t * r.k + j];
        const p = r.probs[t * r.k + j];
        const isAnswer = id === answer;
        return h(
          'td',
          { class: isAnswer ? 'guess is-answer' : 'guess', 'data-token': id, 'data-prob': p, title: isAnswer ? 'the task\'s answer' : undefined },
          h('span', { class: 'tok', text: label(id) }),
          ` ${prob(p)}`,
          isAnswer ? h('span', { class: 'visually-hidden', text: ' (the answer)' }) : null,
        );
      });
      body.append(
        h(
          'tr',
          { 'data-pos': t, 'data-verdict': verdict },
          h('th', { scope: 'row', text: String(t) }),
          h('td', { class: 'tok', text: label(r.ids[t]) }),
          ...guesses,
          h('td', { class: 'answer', 'data-answer': answer, text: answer >= 0 ? label(answer) : 'none' }),
          h('td', { class: 'answer-prob', 'data-prob': r.answerProbs[t], text: answer >= 0 ? prob(r.answerProbs[t]) : '—' }),
          h('td', { class: `verdict ${verdict}`, text: VERDICT_TEXT[verdict] }),
        ),
      );
    }
    table.replaceChildren(h('caption', { class: 'visually-hidden', text: `The model's ${r.k} most likely next tokens at each position, at step ${r.step}` }), h('thead', {}, head), body);
    const { counted, right, inTopK } = tally(r);
    summary.textContent =
      counted === 0
        ? `Step ${r.step}: the ${r.task} task sets no answer anywhere in this sample, so nothing is counted.`
        : `Step ${r.step}: the first guess is right at ${right} of the ${counted} positions the ${r.task} task sets an answer for; the answer is among the ${r.k} guesses at ${inTopK}.`;
    panel.dataset.step = String(r.step);
    panel.dataset.ids = Array.from(r.ids).join(' ');
    panel.dataset.right = String(right);
    panel.dataset.counted = String(counted);
    panel.dataset.state = 'ready';
  }

  const model = new PredictionsModel(
    ctl,
    answerView(panel, problem, render, (why) => `The predictions could not be computed: ${why.replace(/[.!?]$/, '')}.`, { done: 'ready', failed: 'error' }),
  );
  return mountModel(panel, model);
}
