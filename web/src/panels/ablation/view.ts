// The training view's "Ablation" panel: switch heads off or freeze them, drop the 1/sqrt(dk)
// scaling, break the causal mask. Every change goes to the Store, and from there to the core (it
// applies to training and to every readout); the panel shows the run measured by the core without
// and with the changes: eval loss and accuracy, and per head the entropy, the largest weight and
// the mass on the answer, with a few sentences that say what the numbers mean. This file is the
// view; model.ts holds the state and the requests.
import type { HeadScores } from '../../core/attention-core';
import type { Controller } from '../../client/controller';
import { mean, num, pct, points, signed } from '../../model/format';
import { headLabel } from '../../model/layers';
import type { Ablation, MaskMode } from '../../model/protocol';
import { h, scrollBox, uniqueId } from '../../ui/dom';
import { answerView, fillPanel, type PanelOptions } from '../../ui/panel';
import { AblationModel, explainAblation, inductionHead } from './model';
import type { AblationReport, HeadStats } from './request';

const MASKS: { mode: MaskMode; label: string }[] = [
  { mode: 'causal', label: 'causal (correct): −∞ above the diagonal' },
  { mode: 'none', label: 'none: no mask at all' },
  { mode: 'inverted', label: 'inverted (a classic bug): −1e4 on the past, the future visible' },
];

/** Fills slot (the panel's section, placed by the training view); returns its cleanup. */
export function mount(slot: HTMLElement, ctl: Controller, opts: PanelOptions): () => void {
  const headRows = h('tbody');
  const headTable = h(
    'table',
    { class: 'ablation-heads' },
    h('caption', { text: 'Heads: switch off or freeze; statistics on a fixed eval batch (intact → with your changes)' }),
    h(
      'thead',
      {},
      h('tr', {}, ...['head', 'switch off', 'freeze', 'entropy (nats)', 'largest weight', 'mass on the answer', 'previous-token score', 'prefix-matching score'].map((t) => h('th', { scope: 'col', text: t }))),
    ),
    headRows,
  );
  const scaleId = uniqueId('scale');
  const scaleBox = h('input', { type: 'checkbox', id: scaleId, name: 'scale-scores', checked: true });
  const maskId = uniqueId('mask');
  const maskSelect = h('select', { id: maskId, name: 'mask-mode' });
  for (const m of MASKS) maskSelect.append(h('option', { value: m.mode, text: m.label }));
  const restoreBtn = h('button', { type: 'button', 'data-action': 'ablation-reset', text: 'Restore the intact layer' });

  const effectBody = h('tbody');
  const effect = h(
    'table',
    { class: 'ablation-effect' },
    h('caption', { text: 'The same weights, measured by the core on 4 fixed eval batches' }),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col', text: '' }), h('th', { scope: 'col', text: 'intact layer' }), h('th', { scope: 'col', text: 'with your changes' }), h('th', { scope: 'col', text: 'change' }))),
    effectBody,
  );
  const measured = h('p', { class: 'hint ablation-measured' });
  const explain = h('div', { class: 'ablation-explain', 'aria-live': 'polite' });
  const problem = h('p', { class: 'problem', role: 'alert', hidden: true });

  const panel = fillPanel(
    slot,
    {},
    'Ablation: knock out a head, drop the scaling, break the mask',
    h('p', { class: 'hint', text: 'Each change applies at once, to training and to every heatmap. The table below compares the intact layer with your changes on the same weights.' }),
    scrollBox('Heads: switch off or freeze (scrolls sideways)', headTable),
    h(
      'div',
      { class: 'fields ablation-fields' },
      h('div', { class: 'field' }, h('label', { for: scaleId, class: 'inline' }, scaleBox, ' divide the scores by √dk')),
      h('div', { class: 'field' }, h('label', { for: maskId, text: 'mask' }), maskSelect),
      h('div', { class: 'field' }, restoreBtn),
    ),
    problem,
    scrollBox('Effect of the changes (scrolls sideways)', effect),
    measured,
    explain,
  );

  const boxes: { zero: HTMLInputElement; freeze: HTMLInputElement; cells: HTMLElement[] }[] = [];

  /** One row per head of every layer (global index i = l * H + h; inputs named by i + 1). */
  function buildHeads(L: number, H: number): void {
    headRows.replaceChildren();
    boxes.length = 0;
    for (let i = 0; i < L * H; ++i) {
      const name = headLabel(i, H, L);
      const zero = h('input', { type: 'checkbox', name: `zero-h${i + 1}`, 'aria-label': `switch ${name.toLowerCase()} off` });
      const freeze = h('input', { type: 'checkbox', name: `freeze-h${i + 1}`, 'aria-label': `freeze ${name.toLowerCase()}` });
      zero.addEventListener('change', () => model.change({ headsOff: model.ablation.headsOff.map((z, k) => (k === i ? zero.checked : z)) }));
      freeze.addEventListener('change', () => model.change({ headsFrozen: model.ablation.headsFrozen.map((f, k) => (k === i ? freeze.checked : f)) }));
      const cells = [h('td'), h('td'), h('td'), h('td'), h('td')];
      boxes.push({ zero, freeze, cells });
      headRows.append(h('tr', { 'data-head': i + 1 }, h('th', { scope: 'row', text: name }), h('td', {}, zero), h('td', {}, freeze), ...cells));
    }
  }

  function syncInputs(ablation: Ablation): void {
    ablation.headsOff.forEach((z, i) => boxes[i] && (boxes[i].zero.checked = z));
    ablation.headsFrozen.forEach((f, i) => boxes[i] && (boxes[i].freeze.checked = f));
    scaleBox.checked = ablation.scaleScores;
    maskSelect.value = ablation.mask;
  }

  const pair = (a: number, b: number, fmt: (v: number) => string) => (a === b ? fmt(a) : `${fmt(a)} → ${fmt(b)}`);

  function render(r: AblationReport): void {
    const rows: [string, number, number, (v: number) => string, (v: number) => string][] = [
      ['eval loss', r.intact.loss, r.ablated.loss, (v) => num(v, 4), (v) => signed(v, 4)],
      ['token accuracy', r.intact.accuracy, r.ablated.accuracy, pct, points],
      ['mean entropy (nats)', mean(r.intactStats.entropy), mean(r.ablatedStats.entropy), (v) => num(v), (v) => signed(v)],
      ['mean largest weight', mean(r.intactStats.maxWeight), mean(r.ablatedStats.maxWeight), (v) => num(v), (v) => signed(v)],
    ];
    // With layers (or on the induction task): the induction head's prefix-matching score.
    const g = inductionHead(r);
    if (g >= 0 && (r.intactScores.nLayers > 1 || r.task === 'induction')) {
      const label = `prefix-matching of ${headLabel(g, r.intactScores.nHeads, r.intactScores.nLayers).toLowerCase()}`;
      rows.push([label, r.intactScores.prefixMatching[g], r.ablatedScores.prefixMatching[g], (v) => num(v), (v) => signed(v)]);
    }
    effectBody.replaceChildren(
      ...rows.map(([name, a, b, fmt, fmtDiff]) =>
        h('tr', { 'data-metric': name.startsWith('prefix-matching') ? 'prefix-matching' : name.split(' ').pop() }, h('th', { scope: 'row', text: name }), h('td', { text: fmt(a) }), h('td', { text: fmt(b) }), h('td', { text: fmtDiff(b - a) })),
      ),
    );
    const stat = (s: HeadStats, k: keyof HeadStats, i: number) => s[k][i] ?? NaN;
    const score = (s: HeadScores, k: 'previousToken' | 'prefixMatching', i: number) => s[k][i] ?? NaN;
    boxes.forEach((b, i) => {
      b.cells[0].textContent = pair(stat(r.intactStats, 'entropy', i), stat(r.ablatedStats, 'entropy', i), num);
      b.cells[1].textContent = pair(stat(r.intactStats, 'maxWeight', i), stat(r.ablatedStats, 'maxWeight', i), num);
      b.cells[2].textContent = pair(stat(r.intactStats, 'answerMass', i), stat(r.ablatedStats, 'answerMass', i), num);
      b.cells[3].textContent = pair(score(r.intactScores, 'previousToken', i), score(r.ablatedScores, 'previousToken', i), num);
      b.cells[4].textContent = pair(score(r.intactScores, 'prefixMatching', i), score(r.ablatedScores, 'prefixMatching', i), num);
    });
    // The induction head's prefix-matching score, intact and ablated (full precision, for tests).
    const ind = inductionHead(r);
    panel.dataset.inductionHead = String(ind);
    panel.dataset.intactPrefix = ind >= 0 ? String(r.intactScores.prefixMatching[ind]) : '';
    panel.dataset.ablatedPrefix = ind >= 0 ? String(r.ablatedScores.prefixMatching[ind]) : '';
    panel.dataset.intactLoss = String(r.intact.loss);
    panel.dataset.ablatedLoss = String(r.ablated.loss);
    panel.dataset.intactAccuracy = String(r.intact.accuracy);
    panel.dataset.ablatedAccuracy = String(r.ablated.accuracy);
    panel.dataset.intactMaxWeight = String(mean(r.intactStats.maxWeight));
    panel.dataset.ablatedMaxWeight = String(mean(r.ablatedStats.maxWeight));
    panel.dataset.step = String(r.step);
    measured.textContent = `Measured at step ${r.step}${ctl.status === 'playing' ? `, again every ${num(model.remeasureMs / 1000, 0)} s while training plays` : ''}.`;
    explain.replaceChildren(...explainAblation(r, ctl.store.state.vocabSize).map((t) => h('p', { text: t })));
  }

  const model = new AblationModel(
    ctl,
    {
      heads: buildHeads,
      settings: syncInputs,
      ready: (ok) => {
        for (const el of [scaleBox, maskSelect, restoreBtn, ...boxes.flatMap((b) => [b.zero, b.freeze])]) el.disabled = !ok;
      },
      ...answerView(panel, problem, render, (why) => why, null),
    },
    opts.reducedMotion,
  );
  scaleBox.addEventListener('change', () => model.change({ scaleScores: scaleBox.checked }));
  maskSelect.addEventListener('change', () => model.change({ mask: maskSelect.value as MaskMode }));
  restoreBtn.addEventListener('click', () => model.restore());
  return () => {
    model.destroy();
    panel.replaceChildren();
  };
}
