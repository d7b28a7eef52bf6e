// View 2's three side panels, each placed in the stage it explains: why scores are divided by
// √dk (in "scaled"), why the softmax subtracts the max (in "weights") and the output row as a blend
// of the value rows (in "output"). The numbers of the first two come from the core (scalingDemo,
// softmaxSteps); the blend multiplies the core's weights and V and sets the products beside the
// core's output row. Also installs the cell links and the colour legend of the stage tables.
import type { Controller } from '../../client/controller';
import { matrixTable } from '../../draw/matrix-table';
import { cell, wide } from '../../model/format';
import { parseLogits } from '../../settings/logits';
import type { Matrix } from '../../model/protocol';
import { scalingDemoRequest, softmaxStepsRequest, type ScalingDemo, type SoftmaxComparison, type SoftmaxSteps } from './request';
import { checkField, LIMITS, type State } from '../../settings/settings';
import type { Store } from '../../settings/store';
import { linkCells, markLinkable } from '../../ui/cell-links';
import { h, keepClearOfStageBar, scrollBox, uniqueId } from '../../ui/dom';

/** Keys in the √dk panel's row. */
export const SCALING_KEYS = 8;

/** What update() needs from the stages: the tokens, and one head's weights (T,T), V (T,dv) and
 * output (T,dv); head is its 0-based index when the lesson runs several heads, else null. */
export interface BlendStages {
  tokens: string[];
  head: number | null;
  weights: Matrix;
  V: Matrix;
  output: Matrix;
}

/** The mounted panels. */
export interface LessonPanels {
  /** Places the panels into the stage sections of stagesEl that exist, and redraws the blend;
   * the stages keep clear of the sticky stage bar, nav. */
  update(stagesEl: HTMLElement, stages: BlendStages, nav: HTMLElement): void;
  destroy(): void;
}

/** A labelled bar per value, with the value as text (data-value holds it exactly). */
function bars(caption: string, labels: string[], values: ArrayLike<number>, name: string): HTMLElement {
  const rows = labels.map((label, j) => {
    const v = values[j];
    const bar = h('span', { class: 'bar' });
    bar.style.width = `${Math.max(0, Math.min(1, v)) * 100}%`;
    return h('tr', {}, h('th', { scope: 'row', text: label }), h('td', { class: 'bar-cell' }, bar), h('td', { class: 'bar-value', 'data-value': String(v), text: cell(v) }));
  });
  return h('table', { class: 'bars', 'data-bars': name }, h('caption', { text: caption }), h('tbody', {}, ...rows));
}

/** One "label value" pair of a readout, the exact value in data-value. */
function stat(label: string, v: number, name: string): HTMLElement {
  return h('span', {}, `${label} `, h('output', { 'data-stat': name, 'data-value': String(v), text: cell(v) }));
}

/** Mounts the panels (not yet placed: update() places them). */
export function mountLessonPanels(store: Store, ctl: Controller): LessonPanels {
  const cleanups: (() => void)[] = [];

  // ---- Why √dk
  const dkId = uniqueId('scale-dk');
  const dkInput = h('input', { id: dkId, type: 'range', name: 'scaleDk', min: LIMITS.scaleDk[0], max: LIMITS.scaleDk[1], step: 1 });
  const dkOut = h('output', { for: dkId, class: 'scale-dk-value' });
  const scalingFigs = h('div', { class: 'panel-figs' });
  const scalingDetails = h('div', { class: 'matrix-row' });
  const scalingProblem = h('p', { class: 'problem', role: 'alert', hidden: true });
  const scaling = h(
    'section',
    { class: 'lesson-panel scaling-panel', 'aria-label': 'Why divide by √dk' },
    h('h4', { text: 'Why divide by √dk?' }),
    h('p', {
      class: 'stage-text',
      text: `One query against ${SCALING_KEYS} keys, every entry a random N(0, 1) number. Drag dk up: without the scaling the scores spread like √dk and the softmax piles almost all of its weight on one key (largest weight near 1, entropy near 0); divided by √dk the row keeps the same spread at every width.`,
    }),
    h('div', { class: 'field scale-dk-field' }, h('label', { for: dkId }, 'dk of the random vectors: ', dkOut), dkInput),
    scalingProblem,
    scalingFigs,
    h('details', {}, h('summary', { text: 'The random query, keys and scores' }), scalingDetails),
  );
  dkInput.addEventListener('input', () => {
    const { value } = checkField('scaleDk', dkInput.value);
    store.set({ scaleDk: value });
  });

  function drawScaling(d: ScalingDemo, dk: number): void {
    const labels = Array.from({ length: SCALING_KEYS }, (_, j) => `k${j}`);
    const side = (title: string, w: Float32Array, max: number, ent: number, name: string) =>
      h(
        'figure',
        { class: 'panel-fig', 'data-softmax': name },
        h('figcaption', { text: title }),
        bars(`${title}: weight of each key`, labels, w, name),
        h('p', { class: 'readout' }, stat('largest weight', max, `max-${name}`), stat('entropy (nats)', ent, `entropy-${name}`)),
      );
    scalingFigs.replaceChildren(
      side('softmax(q · k)', d.weightsUnscaled, d.maxUnscaled, d.entropyUnscaled, 'unscaled'),
      side(`softmax(q · k / √${dk})`, d.weightsScaled, d.maxScaled, d.entropyScaled, 'scaled'),
    );
    const rowOf = (data: Float32Array): Matrix => ({ rows: 1, cols: data.length, data });
    const cols = (n: number, p: string) => Array.from({ length: n }, (_, j) => `${p}${j}`);
    const scoresM: Matrix = { rows: 2, cols: SCALING_KEYS, data: Float32Array.from([...d.scores, ...d.scaledScores]) };
    const fig = (name: string, m: Matrix, rowLabels: string[], colLabels: string[]) => {
      const t = matrixTable(m, { rowLabels, colLabels, caption: name, colour: 'signed' });
      t.dataset.matrix = name;
      return h('figure', { class: 'matrix-fig' }, h('figcaption', {}, h('strong', { text: name }), ` (${m.rows}, ${m.cols})`), scrollBox(`${name} (scrolls sideways)`, t));
    };
    scalingDetails.replaceChildren(
      fig('scaling query', rowOf(d.query), ['q'], cols(dk, 'd')),
      fig('scaling keys', d.keys, labels, cols(dk, 'd')),
      fig('scaling scores', scoresM, ['q · k', `q · k / √${dk}`], labels),
    );
  }

  let scalingRequest = 0;
  async function refreshScaling(): Promise<void> {
    const { scaleDk, seed } = store.state;
    const mine = ++scalingRequest;
    try {
      const d = await ctl.call(scalingDemoRequest, { dk: scaleDk, keys: SCALING_KEYS, seed });
      if (mine !== scalingRequest) return;
      scalingProblem.hidden = true;
      scaling.dataset.dk = String(scaleDk);
      drawScaling(d, scaleDk);
    } catch (e) {
      if (mine !== scalingRequest) return;
      scalingProblem.textContent = e instanceof Error ? e.message : String(e);
      scalingProblem.hidden = false;
    }
  }

  // ---- Softmax stability
  const logitsId = uniqueId('logits');
  const logitsInput = h('input', { id: logitsId, type: 'text', name: 'logits', autocomplete: 'off', 'aria-describedby': `${logitsId}-msg` });
  const logitsMsg = h('p', { class: 'field-msg', id: `${logitsId}-msg`, role: 'status' });
  const stabilityFigs = h('div', { class: 'panel-figs' });
  const stabilityProblem = h('p', { class: 'problem', role: 'alert', hidden: true });
  const stability = h(
    'section',
    { class: 'lesson-panel stability-panel', 'aria-label': 'Why the softmax subtracts the max' },
    h('h4', { text: 'Why does the softmax subtract the max?' }),
    h('p', {
      class: 'stage-text',
      text: 'In float32, exp overflows to ∞ once its argument passes about 88.7, so the textbook exp(x) / Σ exp(x) turns logits like 100, 200, 300 into ∞ / ∞ = NaN. Subtracting the row\'s largest logit first changes nothing in exact arithmetic (the factor e^max cancels) but keeps every exponent at or below 0, so the largest exp is exactly 1 and the weights come out right.',
    }),
    h('div', { class: 'field logits-field' }, h('label', { for: logitsId, text: 'logits (up to 8 numbers, each within ±1000)' }), logitsInput, logitsMsg),
    stabilityProblem,
    stabilityFigs,
  );
  logitsInput.addEventListener('change', () => {
    const { value, correction } = checkField('logits', logitsInput.value);
    logitsMsg.textContent = correction?.message ?? '';
    logitsInput.value = value;
    store.set({ logits: value });
  });

  function stepsTable(title: string, x: Float32Array, st: SoftmaxSteps, name: string, subtract: boolean): HTMLElement {
    const n = x.length;
    const rows: [string, string, ArrayLike<number> | number][] = [
      ['x', 'logits', x],
      ...(subtract ? ([['max', 'max', st.max], ['x − max', 'shifted', st.shifted]] as [string, string, ArrayLike<number> | number][]) : []),
      [subtract ? 'exp(x − max)' : 'exp(x)', 'exps', st.exps],
      ['Σ exp', 'sum', st.sum],
      ['weights = exp / Σ', 'weights', st.weights],
    ];
    const head = h('tr', {}, h('td', {}), ...Array.from({ length: n }, (_, j) => h('th', { scope: 'col', text: `x${j}` })));
    const body = rows.map(([label, step, v]) => {
      const cells = typeof v === 'number' ? [h('td', { colspan: n, 'data-value': String(v), text: wide(v), class: cellClass(v) })] : Array.from({ length: n }, (_, j) => h('td', { 'data-value': String(v[j]), text: wide(v[j]), class: cellClass(v[j]) }));
      return h('tr', { 'data-step': step }, h('th', { scope: 'row', text: label }), ...cells);
    });
    const table = h('table', { class: 'matrix steps', 'data-softmax': name }, h('caption', { class: 'visually-hidden', text: title }), h('thead', {}, head), h('tbody', {}, ...body));
    return h('figure', { class: 'matrix-fig' }, h('figcaption', {}, h('strong', { text: title })), scrollBox(`${title} (scrolls sideways)`, table));
  }
  const cellClass = (v: number) => (Number.isNaN(v) || !Number.isFinite(v) ? 'bad' : undefined);

  function drawStability(c: SoftmaxComparison): void {
    const ok = (st: SoftmaxSteps) => Array.from(st.weights).every(Number.isFinite);
    const verdict = (st: SoftmaxSteps) => (ok(st) ? 'weights are finite and sum to 1' : 'overflow: the weights are NaN');
    stabilityFigs.replaceChildren(
      h('div', { class: 'stability-col' }, stepsTable('Textbook: exp(x) / Σ exp(x)', c.logits, c.naive, 'naive', false), h('p', { class: ok(c.naive) ? 'verdict' : 'verdict bad', 'data-verdict': 'naive', text: verdict(c.naive) })),
      h('div', { class: 'stability-col' }, stepsTable('Stable: subtract the max first', c.logits, c.stable, 'stable', true), h('p', { class: ok(c.stable) ? 'verdict' : 'verdict bad', 'data-verdict': 'stable', text: verdict(c.stable) })),
    );
  }

  let stabilityRequest = 0;
  async function refreshStability(): Promise<void> {
    const { logits } = parseLogits(store.state.logits);
    const mine = ++stabilityRequest;
    try {
      const c = await ctl.call(softmaxStepsRequest, { logits });
      if (mine !== stabilityRequest) return;
      stabilityProblem.hidden = true;
      drawStability(c);
    } catch (e) {
      if (mine !== stabilityRequest) return;
      stabilityProblem.textContent = e instanceof Error ? e.message : String(e);
      stabilityProblem.hidden = false;
    }
  }

  // ---- The output as a blend
  const rowId = uniqueId('blend-row');
  const rowSelect = h('select', { id: rowId, name: 'blendRow' });
  const blendFig = h('div', { class: 'blend-fig' });
  const blend = h(
    'section',
    { class: 'lesson-panel blend-panel', 'aria-label': 'The output row as a blend of the value rows' },
    h('h4', { text: 'One output row, taken apart' }),
    h('p', {
      class: 'stage-text',
      text: 'Each row below is a value row multiplied by the weight the chosen query gives its key; adding the rows up gives the query\'s output row, the last line. Keys with a tiny weight contribute almost nothing, so the output looks most like the values of the tokens the query attends to.',
    }),
    h('div', { class: 'field blend-row-field' }, h('label', { for: rowId, text: 'query row' }), rowSelect),
    blendFig,
  );
  rowSelect.addEventListener('change', () => store.set({ blendRow: Number(rowSelect.value) }));

  let last: BlendStages | null = null;
  function drawBlend(): void {
    const r = last;
    if (!r) return;
    const T = r.tokens.length;
    const dv = r.V.cols;
    const i = Math.min(store.state.blendRow, T - 1);
    if (rowSelect.options.length !== T || [...rowSelect.options].some((o, k) => o.text !== `${k} ${r.tokens[k]}`)) {
      rowSelect.replaceChildren(...r.tokens.map((t, k) => h('option', { value: k, text: `${k} ${t}` })));
    }
    rowSelect.value = String(i);
    const data = new Float32Array((T + 1) * dv);
    for (let j = 0; j < T; ++j) {
      const w = r.weights.data[i * T + j];
      for (let c = 0; c < dv; ++c) data[j * dv + c] = w * r.V.data[j * dv + c];
    }
    data.set(r.output.data.subarray(i * dv, (i + 1) * dv), T * dv);
    const rowLabels = [...r.tokens.map((t, j) => `${cell(r.weights.data[i * T + j])} × V[${j} ${t}]`), `Σ = output[${i} ${r.tokens[i]}]`];
    const m: Matrix = { rows: T + 1, cols: dv, data };
    const t = matrixTable(m, { rowLabels, colLabels: Array.from({ length: dv }, (_, c) => `v${c}`), caption: `Output row ${i} as weighted value rows${r.head === null ? '' : ` (head ${r.head + 1})`}`, colour: 'signed' });
    t.dataset.matrix = 'blend';
    t.dataset.row = String(i);
    t.tBodies[0].rows[T].classList.add('sum-row');
    blendFig.replaceChildren(
      h('figure', { class: 'matrix-fig' }, h('figcaption', {}, h('strong', { text: 'weight × value row' }), `, then their sum (row ${i}: ${r.tokens[i]}${r.head === null ? '' : `, head ${r.head + 1}`})`), scrollBox('The blend (scrolls sideways)', t)),
    );
  }

  // ---- Colour legend of the stage tables
  const legend = h('p', {
    class: 'hint colour-legend',
    text: 'Colour: negative numbers blue, positive orange, 0 near white; each table is scaled to its own largest |value|. Weights use viridis. Point at or focus a cell of the scores, weights or output to light up the rows and columns it is made from; the arrow keys move between cells.',
  });

  function sync(s: Readonly<State>): void {
    if (dkInput.value !== String(s.scaleDk)) dkInput.value = String(s.scaleDk);
    dkOut.textContent = String(s.scaleDk);
    if (logitsInput.value !== s.logits && document.activeElement !== logitsInput) logitsInput.value = s.logits;
  }

  cleanups.push(
    store.subscribe((s, changed) => {
      sync(s);
      if (changed.has('scaleDk') || changed.has('seed')) void refreshScaling();
      if (changed.has('logits')) void refreshStability();
      if (changed.has('blendRow')) drawBlend();
    }),
  );
  sync(store.state);

  let unlink: (() => void) | null = null;
  let linkedRoot: HTMLElement | null = null;
  let loaded = false;
  let barObserver: ResizeObserver | null = null;
  return {
    update(stagesEl, stages, nav) {
      if (!loaded) {
        // The first update comes once the core is up (the stages were computed).
        loaded = true;
        void refreshScaling();
        void refreshStability();
      }
      const place = (stage: string, el: HTMLElement) => {
        const sec = stagesEl.querySelector<HTMLElement>(`[data-stage="${stage}"]`);
        if (sec) sec.append(el);
        else el.remove();
      };
      place('X', legend);
      place('scaled', scaling);
      place('weights', stability);
      place('output', blend);
      last = stages;
      drawBlend();
      markLinkable(stagesEl);
      if (linkedRoot !== stagesEl) {
        unlink?.();
        unlink = linkCells(stagesEl);
        linkedRoot = stagesEl;
        barObserver?.disconnect();
        barObserver = keepClearOfStageBar(stagesEl, nav);
      }
    },
    destroy() {
      unlink?.();
      barObserver?.disconnect();
      for (const f of cleanups) f();
    },
  };
}
