// The training view's "Ablation" panel: switch heads off or freeze them, drop the 1/sqrt(dk)
// scaling, break the causal mask. Every change goes to the core at once (it applies to training
// and to every readout), and the panel shows the run measured by the core without and with the
// changes: eval loss and accuracy, and per head the entropy, the largest weight and the mass on
// the answer, with a few sentences that say what the numbers mean.
import { RequestError, type Controller } from '../controller';
import { noAblation, type Ablation, type AblationReport, type HeadStats, type MaskMode } from '../protocol';
import { ablationOf, ablationState, type State } from '../state';
import { h, scrollBox, uniqueId } from './dom';
import { fillPanel, type PanelOptions } from './panel';

const MASKS: { mode: MaskMode; label: string }[] = [
  { mode: 'causal', label: 'causal (correct): −∞ above the diagonal' },
  { mode: 'none', label: 'none: no mask at all' },
  { mode: 'inverted', label: 'inverted (a classic bug): −1e4 on the past, the future visible' },
];

/** How often the panel re-measures while training plays (ms). */
const REMEASURE_MS = 1000;

const pct = (v: number) => (Number.isFinite(v) ? `${(100 * v).toFixed(1)}%` : '—');
const num = (v: number, d = 3) => (Number.isFinite(v) ? v.toFixed(d) : '—');
const mean = (a: Float32Array) => (a.length ? a.reduce((s, v) => s + v, 0) / a.length : NaN);
const signed = (v: number, d = 3) => (Number.isFinite(v) ? `${v >= 0 ? '+' : '−'}${Math.abs(v).toFixed(d)}` : '—');

/** The sentences under the numbers: what each intervention did, in this run's numbers. */
export function explainAblation(r: AblationReport, vocabSize: number): string[] {
  const a = r.ablation;
  const out: string[] = [];
  const off = a.zeroed.flatMap((z, i) => (z ? [i + 1] : []));
  const frozen = a.frozen.flatMap((f, i) => (f ? [i + 1] : []));
  if (a.mask !== 'causal') {
    const how = a.mask === 'none' ? 'With no mask' : 'With the inverted mask (−1e4 written below the diagonal instead of above it)';
    out.push(
      `The mask leaks. ${how}, query i can read key i + 1, and in next-token prediction key i + 1 holds exactly the token query i must predict. ` +
        'Training will happily learn to copy it: the loss falls and the accuracy rises, but the model has learned to read the future, which is not there when it generates text. That is a leak, not learning.',
    );
    const gain = r.ablated.accuracy - r.intact.accuracy;
    if (Number.isFinite(gain) && gain > 0.05) {
      out.push(`Measured now: accuracy ${pct(r.ablated.accuracy)} with the leaking mask, ${pct(r.intact.accuracy)} for the same weights under the correct causal mask (chance is ${pct(1 / vocabSize)}).`);
    } else if (r.task === 'future') {
      out.push(`On the future task the target is the next token: chance is ${pct(1 / vocabSize)} under the causal mask. Press Play and watch the accuracy with the leak climb toward 100%.`);
    } else {
      out.push('Choose the task "future" (the target is the next token) to see the leak most clearly: under the causal mask it stays at chance, with the leak it is solved.');
    }
  }
  if (!a.scaleScores) {
    const is = r.intactStats;
    const as = r.ablatedStats;
    out.push(
      `Without the 1/√dk scaling the scores are √dk times larger, so the softmax saturates: the mean largest weight of a row goes from ${num(mean(is.maxWeight))} to ${num(mean(as.maxWeight))} ` +
        `and the mean entropy from ${num(mean(is.entropy))} to ${num(mean(as.entropy))} nats. A saturated row passes almost no gradient back (the softmax Jacobian w(1 − w) is near 0 there), so training slows or stalls.`,
    );
  }
  if (off.length > 0) {
    const dl = r.ablated.loss - r.intact.loss;
    out.push(
      `${off.length === 1 ? `Head ${off[0]} is` : `Heads ${off.join(', ')} are`} switched off: ${off.length === 1 ? 'its' : 'their'} output is zero, so nothing it computes reaches the LM head. ` +
        `The loss goes from ${num(r.intact.loss)} to ${num(r.ablated.loss)} (${signed(dl)}), the accuracy from ${pct(r.intact.accuracy)} to ${pct(r.ablated.accuracy)}. ` +
        (Math.abs(dl) < 0.01 ? 'Hardly a change: the other heads carry what this task needs.' : 'The remaining heads cannot fully stand in for it; keep training to see whether they learn to.'),
    );
  }
  if (frozen.length > 0) {
    out.push(
      `${frozen.length === 1 ? `Head ${frozen[0]} is` : `Heads ${frozen.join(', ')} are`} frozen: ${frozen.length === 1 ? 'its' : 'their'} query, key and value projections and ${frozen.length === 1 ? 'its' : 'their'} columns of out_proj stop updating while everything else trains. Press Play to see whether the other heads compensate.`,
    );
  }
  if (out.length === 0) out.push('The layer is intact: both columns measure the same model.');
  return out;
}

/** Fills slot (the panel's section, placed by the training view); returns its cleanup. */
export function mountAblationPanel(slot: HTMLElement, ctl: Controller, opts: PanelOptions): () => void {
  const { store } = opts;
  let ablation: Ablation = noAblation(0);
  let report: AblationReport | null = null;
  let runId = -1;
  let inFlight = false;
  let again = false;
  let lastMeasure = 0;
  let measuredStep = -1;

  const headRows = h('tbody');
  const headTable = h(
    'table',
    { class: 'ablation-heads' },
    h('caption', { text: 'Heads: switch off or freeze; statistics on a fixed eval batch (intact → with your changes)' }),
    h('thead', {}, h('tr', {}, ...['head', 'switch off', 'freeze', 'entropy (nats)', 'largest weight', 'mass on the answer'].map((t) => h('th', { scope: 'col', text: t })))),
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
    h('div', { class: 'panel-head' }, h('h2', { text: 'Ablation: knock out a head, drop the scaling, break the mask' })),
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

  function buildHeads(H: number): void {
    headRows.replaceChildren();
    boxes.length = 0;
    for (let i = 0; i < H; ++i) {
      const zero = h('input', { type: 'checkbox', name: `zero-h${i + 1}`, 'aria-label': `switch head ${i + 1} off` });
      const freeze = h('input', { type: 'checkbox', name: `freeze-h${i + 1}`, 'aria-label': `freeze head ${i + 1}` });
      zero.addEventListener('change', () => change({ zeroed: ablation.zeroed.map((z, k) => (k === i ? zero.checked : z)) }));
      freeze.addEventListener('change', () => change({ frozen: ablation.frozen.map((f, k) => (k === i ? freeze.checked : f)) }));
      const cells = [h('td'), h('td'), h('td')];
      boxes.push({ zero, freeze, cells });
      headRows.append(h('tr', { 'data-head': i + 1 }, h('th', { scope: 'row', text: `Head ${i + 1}` }), h('td', {}, zero), h('td', {}, freeze), ...cells));
    }
  }

  function syncInputs(): void {
    ablation.zeroed.forEach((z, i) => boxes[i] && (boxes[i].zero.checked = z));
    ablation.frozen.forEach((f, i) => boxes[i] && (boxes[i].freeze.checked = f));
    scaleBox.checked = ablation.scaleScores;
    maskSelect.value = ablation.mask;
  }

  const pair = (a: number, b: number, fmt: (v: number) => string) => (a === b ? fmt(a) : `${fmt(a)} → ${fmt(b)}`);

  function render(): void {
    const r = report;
    if (!r) return;
    const rows: [string, number, number, (v: number) => string, (v: number) => string][] = [
      ['eval loss', r.intact.loss, r.ablated.loss, (v) => num(v, 4), (v) => signed(v, 4)],
      ['token accuracy', r.intact.accuracy, r.ablated.accuracy, pct, (v) => (Number.isFinite(v) ? `${v >= 0 ? '+' : '−'}${Math.abs(100 * v).toFixed(1)} pts` : '—')],
      ['mean entropy (nats)', mean(r.intactStats.entropy), mean(r.ablatedStats.entropy), (v) => num(v), (v) => signed(v)],
      ['mean largest weight', mean(r.intactStats.maxWeight), mean(r.ablatedStats.maxWeight), (v) => num(v), (v) => signed(v)],
    ];
    effectBody.replaceChildren(
      ...rows.map(([name, a, b, fmt, fmtDiff]) =>
        h('tr', { 'data-metric': name.split(' ').pop() }, h('th', { scope: 'row', text: name }), h('td', { text: fmt(a) }), h('td', { text: fmt(b) }), h('td', { text: fmtDiff(b - a) })),
      ),
    );
    const stat = (s: HeadStats, k: keyof HeadStats, i: number) => s[k][i] ?? NaN;
    boxes.forEach((b, i) => {
      b.cells[0].textContent = pair(stat(r.intactStats, 'entropy', i), stat(r.ablatedStats, 'entropy', i), num);
      b.cells[1].textContent = pair(stat(r.intactStats, 'maxWeight', i), stat(r.ablatedStats, 'maxWeight', i), num);
      b.cells[2].textContent = pair(stat(r.intactStats, 'answerMass', i), stat(r.ablatedStats, 'answerMass', i), num);
    });
    panel.dataset.intactLoss = String(r.intact.loss);
    panel.dataset.ablatedLoss = String(r.ablated.loss);
    panel.dataset.intactAccuracy = String(r.intact.accuracy);
    panel.dataset.ablatedAccuracy = String(r.ablated.accuracy);
    panel.dataset.intactMaxWeight = String(mean(r.intactStats.maxWeight));
    panel.dataset.ablatedMaxWeight = String(mean(r.ablatedStats.maxWeight));
    panel.dataset.step = String(r.step);
    measured.textContent = `Measured at step ${r.step}${ctl.status === 'playing' ? `, again every ${(remeasureMs() / 1000).toFixed(0)} s while training plays` : ''}.`;
    const vocab = ctl.currentConfig?.vocabSize ?? 64;
    explain.replaceChildren(...explainAblation(r, vocab).map((t) => h('p', { text: t })));
  }

  const remeasureMs = () => (opts.reducedMotion ? 2 * REMEASURE_MS : REMEASURE_MS);

  /** Sends the current ablation; one request at a time, the latest wins. */
  async function send(): Promise<void> {
    if (inFlight) {
      again = true;
      return;
    }
    inFlight = true;
    try {
      do {
        again = false;
        lastMeasure = performance.now();
        report = await ctl.ablate(ablation);
        measuredStep = report.step;
        problem.hidden = true;
      } while (again);
      syncInputs();
      render();
    } catch (e) {
      problem.textContent = e instanceof RequestError || e instanceof Error ? e.message : String(e);
      problem.hidden = false;
    } finally {
      inFlight = false;
    }
  }

  /** A change from the panel goes to the page's state (and so to the URL); the state sends it. */
  function change(part: Partial<Ablation>): void {
    store.set(ablationState({ ...ablation, ...part }));
  }

  const ABLATION_KEYS: readonly (keyof State)[] = ['mask', 'scaleScores', 'headsOff', 'headsFrozen'];
  const unsubscribeStore = store.subscribe((st, changed) => {
    if (!ABLATION_KEYS.some((k) => changed.has(k)) || boxes.length === 0) return;
    ablation = ablationOf(st, boxes.length);
    syncInputs();
    void send();
  });

  scaleBox.addEventListener('change', () => change({ scaleScores: scaleBox.checked }));
  maskSelect.addEventListener('change', () => change({ mask: maskSelect.value as MaskMode }));
  restoreBtn.addEventListener('click', () => change(noAblation(ablation.zeroed.length)));

  const sync = () => {
    const s = ctl.snapshot;
    const ready = !!s && ctl.status !== 'loading' && ctl.status !== 'crashed';
    for (const el of [scaleBox, maskSelect, restoreBtn, ...boxes.flatMap((b) => [b.zero, b.freeze])]) el.disabled = !ready;
    if (!ready || !s) return;
    if (ctl.runId !== runId) {
      runId = ctl.runId;
      // A new run gets the interventions of the page's state, for its head count.
      if (boxes.length !== s.H) buildHeads(s.H);
      ablation = ablationOf(store.state, s.H);
      syncInputs();
      void send();
      return;
    }
    if (panel.offsetParent === null || s.step === measuredStep) return;
    if (ctl.status !== 'playing' || performance.now() - lastMeasure >= remeasureMs()) void send();
  };
  const unsubscribe = ctl.subscribe(sync);
  sync();
  return () => {
    unsubscribe();
    unsubscribeStore();
    panel.replaceChildren();
  };
}
