// The training view's "Backward pass of one query row" panel: pick a head, a query position and a
// target; the core (in the worker) runs that row forward and backward on the live model, and this
// module lays out every stage with real numbers: q_i, K, V, the scores row, the weights row and
// out_i, then loss = -log p(target), dOut_i, dWeights, dScores (the softmax Jacobian applied), dQ_i
// and the row's contributions to dK and dV. Every number comes from the core (rowBackward). This
// file is the view; model.ts holds the selection's choices and the requests.
import type { Controller } from '../../client/controller';
import { cssColour, textColourOn } from '../../draw/colormap';
import { matrixTable } from '../../draw/matrix-table';
import { cell } from '../../model/format';
import { headLabel } from '../../model/layers';
import type { Matrix } from '../../model/protocol';
import { h, scrollBox, uniqueId } from '../../ui/dom';
import { answerView, fillPanel, mountModel, type PanelOptions } from '../../ui/panel';
import { BackwardModel, type RowChoices } from './model';
import type { RowBackwardReport } from './request';

/** Digits after the point so that the largest |value| shows about 3 significant digits. */
function digitsFor(values: Float32Array): number {
  let m = 0;
  for (const v of values) if (Number.isFinite(v) && Math.abs(v) > m && Math.abs(v) < 1e3) m = Math.abs(v);
  if (m === 0 || m >= 0.1) return 3;
  return Math.min(8, 2 - Math.floor(Math.log10(m)));
}

const vec = (data: Float32Array): Matrix => ({ data, rows: 1, cols: data.length });
const cols = (n: number, p: string) => Array.from({ length: n }, (_, j) => `${p}${j}`);

/** Where the default target came from, as the end of a sentence. */
function targetWhy(r: RowBackwardReport, task: string): string {
  switch (r.targetSource) {
    case 'task':
      return `the ${task} task's answer at position ${r.query}`;
    case 'next':
      return `the next token of the sample, because the ${task} task sets no answer at position ${r.query}`;
    case 'last':
      return `the position's own token, because position ${r.query} is the last and the ${task} task sets no answer there`;
    default:
      return 'chosen by you';
  }
}

/** Fills slot (the panel's section, placed by the training view). Returns the unmount function. */
export function mount(slot: HTMLElement, ctl: Controller, _opts: PanelOptions): () => void {
  const select = (name: string, label: string) => {
    const id = uniqueId(name);
    const el = h('select', { id, name });
    return { el, field: h('div', { class: 'field' }, h('label', { for: id, text: label }), el) };
  };
  const head = select('bw-head', 'head');
  const query = select('bw-query', 'query position (token id)');
  const target = select('bw-target', 'target token');
  const targetNote = h('p', { class: 'bw-target-note', 'aria-live': 'polite' });
  const problem = h('p', { class: 'problem', role: 'alert', hidden: true });
  const content = h('div', { class: 'bw-content' });
  const panel = fillPanel(
    slot,
    { 'data-state': 'idle' },
    'Backward pass of one query row',
    h('p', {
      class: 'hint first',
      text: 'One row of one head, on the sample sequence: the forward stages on one side, and on the other the gradient of loss = −log p(target) at that position flowing back through them. Labels read position (token id); every number is computed by the wasm core on the live model.',
    }),
    h('form', { class: 'bw-controls', 'aria-label': 'Which row' }, h('div', { class: 'fields' }, head.field, query.field, target.field)),
    targetNote,
    problem,
    content,
  );
  panel.querySelector('form')!.addEventListener('submit', (e) => e.preventDefault());

  // ---- Controls follow the run's shape (H, the sample, V) without losing the selection.
  function syncControls(c: RowChoices | null, ready: boolean): void {
    for (const el of [head.el, query.el, target.el]) if (el.disabled !== !ready) el.disabled = !ready;
    if (!c) return;
    const { L, H, ids, V } = c;
    const keep = (el: HTMLSelectElement, fallback: string, ok: (v: string) => boolean) => (el.value && ok(el.value) ? el.value : fallback);
    const hv = keep(head.el, '0', (v) => Number(v) < L * H);
    const defaultQuery = String(Math.min(ids.length - 1, Math.floor(ids.length / 2)));
    const qv = keep(query.el, defaultQuery, (v) => Number(v) < ids.length);
    const tv = target.el.value !== '' && Number(target.el.value) < V ? target.el.value : '';
    // The core's head index is global (l * H + h); the options name layer and head.
    head.el.replaceChildren(...Array.from({ length: L * H }, (_, i) => h('option', { value: i, text: headLabel(i, H, L) })));
    query.el.replaceChildren(...Array.from(ids, (id, i) => h('option', { value: i, text: `${i} (token ${id})` })));
    target.el.replaceChildren(h('option', { value: '', text: "task's answer (default)" }), ...Array.from({ length: V }, (_, v) => h('option', { value: v, text: `token ${v}` })));
    head.el.value = hv;
    query.el.value = qv;
    target.el.value = tv;
  }

  // ---- Rendering
  function figure(name: string, title: string, formula: string, m: Matrix, rowLabels: string[], colLabels: string[], opts: { colour?: boolean; mask?: { keys: boolean[]; style: 'hatch' | 'dim' } } = {}): HTMLElement {
    const table = matrixTable(m, { rowLabels, colLabels, caption: `${title}: ${formula}`, colour: opts.colour, digits: digitsFor(m.data) });
    table.dataset.matrix = name;
    const mask = opts.mask;
    if (mask) {
      const rows = [...table.tBodies[0].rows];
      const tds = (tr: HTMLTableRowElement) => [...tr.cells].filter((c) => c.tagName === 'TD');
      // A row over the keys (cell j is key j), or one row per key (row j is key j).
      const cells = m.rows === 1 ? tds(rows[0]).map((td) => [td]) : rows.map(tds);
      cells.forEach((group, j) => {
        if (!mask.keys[j]) return;
        for (const td of group) {
          if (mask.style === 'hatch') {
            td.className = 'masked';
            td.style.background = td.style.color = '';
            td.title = m.rows === 1 ? 'masked: this query may not look at a later key' : 'masked key: exactly zero gradient';
            if (td.dataset.value === '-Infinity') td.textContent = 'masked';
          } else {
            td.className = 'bw-unseen';
            td.title = 'a key after the query: masked, so this value does not reach the loss';
          }
        }
      });
    }
    return h(
      'figure',
      { class: 'matrix-fig bw-fig', 'data-stage': name },
      h('figcaption', {}, h('strong', { text: title }), ` (${m.rows}, ${m.cols})`, h('br'), h('code', { text: formula })),
      scrollBox(`${title} (scrolls sideways)`, table),
    );
  }

  /** New values for a table matrixTable built (same shape, labels and mask): while training
   * plays, the numbers change every refresh but nothing else does, and rewriting the cells' text
   * costs far less layout than new tables. */
  function updateTable(table: HTMLTableElement, m: Matrix, colour: boolean): void {
    const digits = digitsFor(m.data);
    const tds = [...table.tBodies[0].rows].flatMap((tr) => [...tr.cells].filter((c) => c.tagName === 'TD'));
    tds.forEach((td, k) => {
      const v = m.data[k];
      const text = v === -Infinity && td.className === 'masked' ? 'masked' : cell(v, digits);
      if (td.textContent !== text) td.textContent = text;
      td.dataset.value = String(v);
      if (colour && td.className !== 'masked') {
        td.style.background = cssColour(v);
        td.style.color = textColourOn(v);
      }
    });
  }

  /** What render() built last: everything but the numbers. */
  let structure = '';
  let lossCode: HTMLElement | null = null;

  function render(r: RowBackwardReport): void {
    const t0 = performance.now();
    const w = r.row;
    const T = r.ids.length;
    const i = r.query;
    const dk = w.q.length;
    const dv = w.out.length;
    const tok = (j: number) => `${j} (${r.ids[j]})`;
    const keyLabels = Array.from({ length: T }, (_, j) => tok(j));
    const rowLabel = [tok(i)];
    const masked = Array.from(w.scores, (v) => v === -Infinity);
    const nMasked = masked.filter(Boolean).length;
    const filled = Array.from(w.scores, (v) => v <= -1e4 + 1 && v > -Infinity).some(Boolean);
    const scaleText = w.scale === 1 && dk !== 1 ? 'scale = 1 (the 1/√dk scaling is switched off in the Ablation panel)' : `scale = 1/√dk = 1/√${dk} = ${cell(w.scale, 4)}`;
    const task = ctl.store.state.task;
    const dOutZero = w.dOut.every((v) => v === 0);
    const lossText = `loss = −log p(token ${r.target} at position ${i}) = ${cell(w.loss, 4)}`;
    const key = JSON.stringify([r.head, i, r.target, r.targetSource, task, Array.from(r.ids), dk, dv, masked, filled, dOutZero, scaleText, ctl.snapshot?.mask]);
    if (key === structure && lossCode) {
      const tables = new Map([...content.querySelectorAll<HTMLTableElement>('table[data-matrix]')].map((t) => [t.dataset.matrix!, t]));
      const values: [string, Matrix][] = [
        ['q', vec(w.q)], ['K', w.k], ['V', w.v], ['scores', vec(w.scores)], ['weights', vec(w.weights)], ['out', vec(w.out)],
        ['dOut', vec(w.dOut)], ['dWeights', vec(w.dWeights)], ['dScores', vec(w.dScores)], ['dQ', vec(w.dQ)], ['dK', w.dK], ['dV', w.dV],
      ];
      for (const [name, m] of values) updateTable(tables.get(name)!, m, name === 'weights');
      lossCode.textContent = lossText;
    } else {
      build();
      structure = key;
    }
    finish();

    function build(): void {
      const forward = h(
        'div',
        { class: 'bw-col', role: 'group', 'aria-label': 'Forward' },
        h('h3', { text: `Forward: ${headLabel(r.head, ctl.snapshot?.H ?? r.head + 1, ctl.snapshot?.L ?? 1).toLowerCase()}, query ${i}` }),
        figure('q', `q_${i}`, `q_${i} = x_${i} W_q (this head's ${dk} columns)`, vec(w.q), rowLabel, cols(dk, 'k')),
        figure('K', 'K', 'K = X W_k, one row per key j', w.k, keyLabels, cols(dk, 'k'), { mask: { keys: masked, style: 'dim' } }),
        figure('V', 'V', 'V = X W_v, one row per key j', w.v, keyLabels, cols(dv, 'v'), { mask: { keys: masked, style: 'dim' } }),
        figure('scores', 'scores', `s_j = q_${i} · k_j × scale, then the mask`, vec(w.scores), rowLabel, keyLabels, { mask: { keys: masked, style: 'hatch' } }),
        h('p', { class: 'formula' }, h('code', { text: scaleText })),
        filled ? h('p', { class: 'hint', text: 'Cells at −10000 are the inverted mask’s fill: the broken mask hides the past instead of the future, and the future stays visible.' }) : null,
        figure('weights', 'weights', 'w = softmax(s): the row sums to 1', vec(w.weights), rowLabel, keyLabels, { colour: true, mask: { keys: masked, style: 'hatch' } }),
        figure('out', `out_${i}`, `out_${i} = Σ_j w_j v_j = w V`, vec(w.out), rowLabel, cols(dv, 'v')),
      );
      lossCode = h('code', { text: lossText });
      const backward = h(
        'div',
        { class: 'bw-col', role: 'group', 'aria-label': 'Backward' },
        h('h3', { text: 'Backward: the gradient of the loss' }),
        h(
          'p',
          { class: 'bw-loss' },
          lossCode,
          h('span', { class: 'bw-loss-why', text: ` Target: token ${r.target}, ${targetWhy(r, task)}.` }),
        ),
        figure('dOut', `dOut_${i}`, `dOut_${i} = ∂loss/∂out_${i} (back through out_proj and the LM head)`, vec(w.dOut), rowLabel, cols(dv, 'v')),
        dOutZero ? h('p', { class: 'hint', text: 'dOut is exactly 0: this head is switched off in the Ablation panel, so nothing flows back into it.' }) : null,
        figure('dWeights', 'dWeights', `dW_j = dOut_${i} · v_j (dOut · Vᵀ)`, vec(w.dWeights), rowLabel, keyLabels, { mask: { keys: masked, style: 'dim' } }),
        figure('dScores', 'dScores', 'dS_j = w_j (dW_j − Σ_k w_k dW_k): the softmax Jacobian applied', vec(w.dScores), rowLabel, keyLabels, { mask: { keys: masked, style: 'hatch' } }),
        figure('dQ', `dQ_${i}`, `dq_${i} = Σ_j dS_j k_j × scale (dScores · K · scale)`, vec(w.dQ), rowLabel, cols(dk, 'k')),
        figure('dK', 'dK contributions', `row j: dS_j q_${i} × scale`, w.dK, keyLabels, cols(dk, 'k'), { mask: { keys: masked, style: 'hatch' } }),
        figure('dV', 'dV contributions', `row j: w_j dOut_${i}`, w.dV, keyLabels, cols(dv, 'v'), { mask: { keys: masked, style: 'hatch' } }),
      );
      const note = h('p', {
        class: 'hint bw-note',
        text: `${nMasked > 0 ? `${nMasked === 1 ? 'The key' : `The ${nMasked} keys`} after the query (j > ${i}) ${nMasked === 1 ? 'gets' : 'get'} exactly zero gradient: masked, so w_j = 0 and dS_j = 0, and the dK and dV rows are 0.` : filled ? 'No key is masked with −∞ here: the keys the inverted mask fills with −10000 (the past) get weights of about 0 and so almost no gradient, while the future keys it leaves visible get gradient, which is the leak.' : ctl.snapshot?.mask === 'none' ? 'No key is masked for this row (the mask is off in the Ablation panel), so every key can receive gradient.' : 'No key comes after the query (the last position), so every key can receive gradient.'} A head switched off in the Ablation panel gets dOut = 0, and with it every gradient here.`,
      });
      content.replaceChildren(h('div', { class: 'bw-grid' }, forward, backward), note);
    }

    function finish(): void {
      const note = `Target token ${r.target}: ${targetWhy(r, task)}.`;
      if (targetNote.textContent !== note) targetNote.textContent = note;
      Object.assign(panel.dataset, {
        loss: String(w.loss),
        scale: String(w.scale),
        head: String(r.head),
        query: String(i),
        target: String(r.target),
        targetSource: r.targetSource,
        step: String(ctl.snapshot?.step ?? ''),
        state: 'ready',
      });
      // A User Timing entry per render, for DevTools (as the heatmaps' playground:draw).
      performance.measure('playground:backward', { start: t0 });
      if (performance.getEntriesByName('playground:backward').length > 500) performance.clearMeasures('playground:backward');
    }
  }

  // ---- Refreshing (model.ts): on a change of the controls, on pause/step, ~2/s while
  // playing (if visible).
  // Hidden: the other view is shown, or an embedding took the panel out (no offsetParent either way).
  const model = new BackwardModel(ctl, {
    ...answerView(panel, problem, render, (why) => `The backward pass of this row could not be computed: ${why.replace(/[.!?]$/, '')}.`, { done: 'ready', failed: 'error' }),
    selection: () => ({ head: Number(head.el.value), query: Number(query.el.value), target: target.el.value === '' ? undefined : Number(target.el.value) }),
    choices: syncControls,
  });
  for (const el of [head.el, query.el, target.el]) el.addEventListener('change', () => model.refresh());
  // Scrolled into view after a change it skipped while training played: catch up.
  const io = new IntersectionObserver((entries) => {
    model.onScreen = entries[entries.length - 1].isIntersecting;
    if (model.onScreen) model.shown();
  });
  io.observe(panel);
  return mountModel(panel, model, () => io.disconnect());
}
