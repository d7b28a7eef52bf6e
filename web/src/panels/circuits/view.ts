// The training view's "Composition between layers" panel: per head, the core's previous-token and
// prefix-matching scores now, and for each pair of consecutive layers the K-composition matrix
// (layer-l heads down, layer-(l+1) heads across) beside its random baseline, with sentences naming
// the heads that play each part. Every number comes from the core (headScores()); this file is the
// view, model.ts holds the requests and the helpers.
import type { HeadScores } from '../../core/attention-core';
import type { Controller } from '../../client/controller';
import { matrixTable } from '../../draw/matrix-table';
import { num } from '../../model/format';
import { headLabel } from '../../model/layers';
import { h, scrollBox } from '../../ui/dom';
import { answerView, fillPanel, mountModel, type PanelOptions } from '../../ui/panel';
import { CompositionModel, compositionMatrix, explainScores } from './model';
import type { HeadScoresReport } from './request';

/** Fills slot (the panel's section, placed by the training view). Returns the unmount function. */
export function mount(slot: HTMLElement, ctl: Controller, opts: PanelOptions): () => void {
  const scoreBody = h('tbody');
  const scoreTable = h(
    'table',
    { class: 'composition-scores' },
    h('caption', { text: 'Per head, on fixed induction sequences' }),
    h('thead', {}, h('tr', {}, ...['head', 'previous-token score', 'prefix-matching score'].map((t) => h('th', { scope: 'col', text: t })))),
    scoreBody,
  );
  const matrices = h('div', { class: 'composition-matrices' });
  const explain = h('div', { class: 'composition-explain', 'aria-live': 'polite' });
  const measured = h('p', { class: 'hint composition-measured' });
  const problem = h('p', { class: 'problem', role: 'alert', hidden: true });
  const panel = fillPanel(
    slot,
    { 'data-step': '' },
    'Composition between layers: which head reads which',
    h('p', {
      class: 'hint first',
      text:
        'A head that attends one position back (a high previous-token score) writes into each position which token came before it. ' +
        'A head in the next layer can use that in its keys: it then attends, from a repeated token, to the token after that token\'s earlier occurrence (a high prefix-matching score). That pair is an induction circuit.',
    }),
    scrollBox('Per-head scores (scrolls sideways)', scoreTable),
    matrices,
    h('p', {
      class: 'hint',
      text:
        'Each cell of a matrix is the K-composition score from a head of one layer (row) to a head of the next (column): ‖W_QK W_OV‖ / (‖W_QK‖ ‖W_OV‖), how much of what the first head writes the second reads with its keys. ' +
        'Random matrices of the same shapes score about the baseline shown; a cell well above it is a connection training made.',
    }),
    explain,
    measured,
    problem,
  );

  function renderScores(s: HeadScores): void {
    const { nLayers: L, nHeads: H } = s;
    scoreBody.replaceChildren(
      ...Array.from({ length: L * H }, (_, g) =>
        h(
          'tr',
          { 'data-head': g, 'data-previous-token': String(s.previousToken[g]), 'data-prefix-matching': String(s.prefixMatching[g]) },
          h('th', { scope: 'row', text: headLabel(g, H, L) }),
          h('td', { text: num(s.previousToken[g]) }),
          h('td', { text: num(s.prefixMatching[g]) }),
        ),
      ),
    );
  }

  function renderMatrices(s: HeadScores): void {
    const { nLayers: L, nHeads: H } = s;
    if (L < 2) {
      matrices.replaceChildren(h('p', { class: 'composition-none', text: 'One layer: no head can read another head\'s output, so there is no composition to show. Set layers to 2 or more.' }));
      return;
    }
    const figs = [];
    for (let l = 0; l < L - 1; ++l) {
      const rows = Array.from({ length: H }, (_, k) => headLabel(l * H + k, H, L));
      const cols = Array.from({ length: H }, (_, k) => headLabel((l + 1) * H + k, H, L));
      const title = `K-composition, layer ${l + 1} (rows) → layer ${l + 2} (columns)`;
      const table = matrixTable(compositionMatrix(s, l), { rowLabels: rows, colLabels: cols, caption: title, colour: true });
      table.dataset.layer = String(l);
      figs.push(
        h(
          'figure',
          { class: 'matrix-fig composition-fig', 'data-layer': l },
          h('figcaption', {}, h('strong', { text: title }), h('br'), h('span', { class: 'composition-baseline', text: `random baseline ${num(s.compositionBaseline)}` })),
          scrollBox(`${title} (scrolls sideways)`, table),
        ),
      );
    }
    matrices.replaceChildren(...figs);
  }

  function render(r: HeadScoresReport): void {
    renderScores(r.scores);
    renderMatrices(r.scores);
    explain.replaceChildren(...explainScores(r.scores).map((t) => h('p', { text: t })));
    panel.dataset.step = String(r.step);
    panel.dataset.layers = String(r.scores.nLayers);
    panel.dataset.baseline = String(r.scores.compositionBaseline);
    panel.dataset.composition = Array.from(r.scores.composition).join(',');
    measured.textContent = `Measured by the core at step ${r.step}${ctl.status === 'playing' ? ', again about once a second while training plays' : ''}, under the Ablation panel's interventions.`;
  }

  const model = new CompositionModel(ctl, answerView(panel, problem, render, (why) => `The scores could not be measured: ${why}`, null), opts.reducedMotion ? 2000 : 1000);
  return mountModel(panel, model);
}
