// The training view's "Look inside" panel: the core's trainer.inspect on the sample (the
// heatmaps' sequence), in the worker, as four figures: the logit lens, the direct logit
// attribution, the activation patching against a corrupted input the learner can edit, and the QK
// and OV circuits of a head with every head's copying score; then the lesson's questions. Every
// number is the core's; model.ts holds the logic, this file draws (tables from
// draw/matrix-table, the cell readout and arrow keys of the other tables; the circuits, vocab x
// vocab, as canvas heatmaps with their numbers on demand, ui/canvas-heatmap.ts).
import type { Controller } from '../../client/controller';
import { symmetricScale } from '../../draw/diverging';
import { matrixTable } from '../../draw/matrix-table';
import { num } from '../../model/format';
import type { Matrix } from '../../model/protocol';
import { canvasHeatmap, type CanvasHeatmap } from '../../ui/canvas-heatmap';
import { cellsOf, moveCellFocus, positionOf } from '../../ui/cell-links';
import { checkYourself } from '../../ui/check-yourself';
import { h, scrollBox, uniqueId } from '../../ui/dom';
import { answerView, fillPanel, mountModel, type PanelOptions } from '../../ui/panel';
import {
  attributionTable,
  changedPositions,
  column,
  headLabels,
  INSPECT_QUESTIONS,
  InspectModel,
  parseCorrupted,
  streamRowLabels,
  tokenLabels,
} from './model';
import type { InspectReport } from './request';

const HINT = 'Hover a cell, or focus the table and use the arrow keys, to read it.';

/** A table of the core's numbers with a token (or other) axis, named by data-figure; NaN cells
 * (no answer there) read "—"; its cells are one tab stop, the arrow keys move between them, and
 * pointing at or focusing a cell writes describe(i, j) into readout. */
function figureTable(name: string, m: Matrix, rowLabels: string[], colLabels: string[], caption: string, colour: 'weights' | 'signed', readout: HTMLElement, describe: (i: number, j: number) => string): HTMLElement {
  const table = matrixTable(m, { rowLabels, colLabels, caption, colour, digits: 2 });
  table.dataset.figure = name;
  const cells = cellsOf(table);
  cells.flat().forEach((td, k) => {
    td.tabIndex = k === 0 ? 0 : -1;
    if (Number.isNaN(Number(td.dataset.value))) {
      td.textContent = '—';
      td.style.background = '';
      td.classList.add('no-value');
    }
  });
  const show = (e: Event) => {
    const td = e.target instanceof Element ? e.target.closest('td') : null;
    if (!td || !table.contains(td)) return;
    const [i, j] = positionOf(td);
    readout.textContent = describe(i, j);
    if (e.type === 'focusin') for (const c of cells.flat()) c.tabIndex = c === td ? 0 : -1;
  };
  table.addEventListener('mouseover', show);
  table.addEventListener('focusin', show);
  table.addEventListener('keydown', (e) => {
    const td = e.target instanceof Element ? e.target.closest('td') : null;
    if (td) moveCellFocus(e, cells, td);
  });
  return scrollBox(`${caption} (scrolls sideways)`, table);
}

/** A bar's filled part, w percent wide (set through the CSSOM: the page's CSP has no inline styles). */
function fill(w: number): HTMLElement {
  const el = h('span', { class: 'inspect-bar-fill' });
  el.style.width = `${Math.round(10 * w) / 10}%`;
  return el;
}

/** The value of a cell as the readout writes it. */
const val = (v: number, d = 3) => (Number.isFinite(v) ? num(v, d) : 'none (no answer here)');

/** Fills slot (the panel's section, placed by the training view); returns its cleanup. */
export function mount(slot: HTMLElement, ctl: Controller, opts: PanelOptions): () => void {
  void opts;
  const problem = h('p', { class: 'problem', role: 'alert', hidden: true });
  const measured = h('p', { class: 'hint inspect-measured' });
  const again = h('button', { type: 'button', 'data-action': 'inspect-refresh', text: 'Measure again' });

  const figure = (name: string, title: string, text: string, ...rest: (Node | null)[]) =>
    h('figure', { class: `inspect-fig inspect-${name}`, 'data-figure': name }, h('h3', { text: title }), h('p', { class: 'hint', text }), ...rest);
  const readout = () => h('p', { class: 'cell-readout', 'aria-live': 'polite', text: HINT });

  // 1. The logit lens
  const lensBody = h('div', { class: 'inspect-body' });
  const lensReadout = readout();
  const lensFig = figure(
    'lens',
    'Logit lens: what the model would answer if it stopped here',
    'Each row reads the residual stream at one depth as if it were the last: through the final norm (if the model has one) and the LM head. ' +
      'A cell is the probability the right answer gets at that position; the row where it first turns bright is the layer that put the answer there.',
    lensBody,
    lensReadout,
  );

  // 2. Direct logit attribution
  const attrBody = h('div', { class: 'inspect-body' });
  const attrSum = h('p', { class: 'hint inspect-sum' });
  const attrReadout = readout();
  const attrFig = figure(
    'attribution',
    'Direct logit attribution: which part pushes the answer',
    'Each cell is how far one part\'s output, read straight through the LM head, lifts the right answer\'s logit above the mean logit at that position: orange lifts it, blue lowers it. ' +
      'The last stream is a sum of these parts, so with the final norm\'s scale held fixed the parts of each column add up to its total row.',
    attrBody,
    attrSum,
    attrReadout,
  );

  // 3. Activation patching
  const fieldId = uniqueId('inspect-corrupted');
  const changeId = uniqueId('inspect-change');
  const field = h('input', { id: fieldId, name: 'corrupted', type: 'text', class: 'inspect-corrupted', autocomplete: 'off', spellcheck: 'false' });
  const patchBtn = h('button', { type: 'button', 'data-action': 'inspect-patch', text: 'Patch with these ids' });
  const change = h('input', { id: changeId, name: 'change', type: 'number', min: 0, step: 1, class: 'inspect-change' });
  const changeBtn = h('button', { type: 'button', 'data-action': 'inspect-change', text: 'Change this token' });
  const defaultBtn = h('button', { type: 'button', 'data-action': 'inspect-default', text: 'Default' });
  const fieldProblem = h('p', { class: 'problem inspect-field-problem', role: 'alert', hidden: true });
  const patchInfo = h('p', { class: 'hint inspect-patch-info' });
  const patchBody = h('div', { class: 'inspect-body' });
  const patchReadout = readout();
  const patchFig = figure(
    'patching',
    'Activation patching: where the answer is carried',
    'The core runs a corrupted input, one token changed, but copies a single activation (one cell) from the run on the sample, and measures how much of the clean answer comes back: 0 is as bad as the corrupted run, 1 as good as the clean one. ' +
      'Bright cells show where, at each depth, the information the answer needs sits.',
    h(
      'div',
      { class: 'fields' },
      h('div', { class: 'field' }, h('label', { for: fieldId, text: 'corrupted input (token ids)' }), field, ' ', patchBtn),
      h('div', { class: 'field' }, h('label', { for: changeId, text: 'or change the token at position' }), change, ' ', changeBtn, ' ', defaultBtn),
    ),
    fieldProblem,
    patchInfo,
    patchBody,
    patchReadout,
  );

  // 4. QK and OV circuits
  const headId = uniqueId('inspect-head');
  const headPick = h('select', { id: headId, name: 'inspect-head' });
  const circBody = h('div', { class: 'inspect-body' });
  const circReadout = readout();
  const circFig = figure(
    'circuits',
    'QK and OV circuits: what a head reads and what it writes',
    'Read from the weights alone, token to token, as two maps of vocab × vocab cells. QK row i, column j: how strongly a query of token i scores a key of token j, so an orange cell is a key that token i looks for. ' +
      'OV row i: what the head adds to each next-token logit when it attends to token i; an orange diagonal means it copies the token it looks at, and the copying score (the share of OV\'s eigenvalues that are positive) is then near 1.',
    h('div', { class: 'fields' }, h('div', { class: 'field' }, h('label', { for: headId, text: 'head' }), headPick)),
    circBody,
    circReadout,
  );

  const panel = fillPanel(
    slot,
    { 'data-state': 'idle' },
    'Look inside',
    h('p', {
      class: 'hint first',
      text:
        'Four tools interpretability courses use to find circuits, run by the core on the model you are training and the sample the heatmaps show. ' +
        'They are measured when you pause or step, never while training plays.',
    }),
    h('div', { class: 'fields' }, h('div', { class: 'field' }, again)),
    measured,
    problem,
    lensFig,
    attrFig,
    patchFig,
    circFig,
    checkYourself(INSPECT_QUESTIONS),
  );

  let last: InspectReport | null = null;
  let head = 0;
  let circuitMaps: CanvasHeatmap[] = [];

  function renderLens(r: InspectReport): void {
    const lens = r.inspection.lens;
    const T = r.ids.length;
    lensFig.dataset.applies = String(lens.applies);
    if (!lens.applies || !lens.answerProb || !lens.topToken || !lens.topProb) {
      lensBody.replaceChildren(h('p', { class: 'inspect-reason', text: lens.reason }));
      return;
    }
    const rows = streamRowLabels(r.nLayers);
    const top = lens.topToken;
    const topP = lens.topProb;
    const ans = r.inspection.answers;
    const body = figureTable('lens', lens.answerProb, rows, tokenLabels(r.ids), 'Logit lens: the answer\'s probability (rows: depth, columns: positions)', 'weights', lensReadout, (i, j) =>
      `${rows[i]}, position ${j} (token ${r.ids[j]}): answer ${ans[j] >= 0 ? ans[j] : 'none'} has probability ${val(lens.answerProb!.data[i * T + j])}; top token ${top.data[i * T + j]} with ${num(topP.data[i * T + j])}.`,
    );
    body.querySelectorAll<HTMLTableCellElement>('tbody td').forEach((td, k) => {
      td.dataset.topToken = String(top.data[k]);
      td.dataset.topProb = String(topP.data[k]);
      td.title = `top token ${top.data[k]} (${num(topP.data[k])})`;
    });
    lensBody.replaceChildren(body);
  }

  function renderAttribution(r: InspectReport): void {
    const a = attributionTable(r);
    attrFig.dataset.applies = String(!!a);
    if (!a) {
      attrBody.replaceChildren(h('p', { class: 'inspect-reason', text: r.inspection.attribution.reason }));
      attrSum.textContent = '';
      return;
    }
    const T = a.matrix.cols;
    attrBody.replaceChildren(
      figureTable('attribution', a.matrix, a.labels, tokenLabels(r.ids), 'Direct logit attribution (rows: parts, then the total; columns: positions)', 'signed', attrReadout, (i, j) =>
        `${a.labels[i]}, position ${j} (token ${r.ids[j]}): ${val(a.matrix.data[i * T + j])} on logit[answer] − mean logit.`,
      ),
    );
    attrSum.textContent = `The ${a.parts} parts above the total add up to it at every position (up to float rounding): nothing is left out.`;
  }

  function renderPatching(r: InspectReport): void {
    const p = r.inspection.patching;
    const T = r.ids.length;
    change.max = String(T - 1);
    if (r.corrupted && document.activeElement !== field) field.value = Array.from(r.corrupted).join(' ');
    if (r.changed >= 0 && document.activeElement !== change) change.value = String(r.changed);
    patchFig.dataset.patched = String(!!p);
    if (!p) {
      patchInfo.textContent = r.patchingNote || 'No corrupted input: type one, or pick a token to change.';
      patchBody.replaceChildren();
      return;
    }
    const diff = r.corrupted ? changedPositions(r.ids, r.corrupted) : [];
    patchInfo.textContent =
      `Changed ${diff.length === 1 ? `position ${diff[0]}` : `positions ${diff.join(', ') || 'none'}`}. Measured at position ${p.position}: ` +
      (p.logitDiff ? `logit[${p.answerClean}] − logit[${p.answerCorrupt}]` : `logit[${p.answerClean}] − mean logit`) +
      ` is ${num(p.metricClean)} on the clean input and ${num(p.metricCorrupt)} on the corrupted one.`;
    const cols = tokenLabels(r.ids);
    const rows = streamRowLabels(r.nLayers);
    const heads = headLabels(r.nLayers, r.nHeads);
    const bars = h(
      'div',
      { class: 'inspect-bars', 'data-figure': 'heads-all', role: 'list', 'aria-label': 'Each head patched at every position' },
      ...heads.map((label, g) => {
        const v = p.headsAll[g];
        const w = Number.isFinite(v) ? Math.max(0, Math.min(1, v)) * 100 : 0;
        return h(
          'div',
          { class: 'inspect-bar', role: 'listitem', 'data-head': g, 'data-value': String(v) },
          h('span', { class: 'inspect-bar-label', text: label }),
          h('span', { class: 'inspect-bar-track' }, fill(w)),
          h('span', { class: 'inspect-bar-value', text: val(v, 2) }),
        );
      }),
    );
    patchBody.replaceChildren(
      h('h4', { text: 'The residual stream patched at one position' }),
      figureTable('resid', p.resid, rows, cols, 'Patching the residual stream (rows: depth, columns: positions)', 'weights', patchReadout, (i, j) =>
        `Stream ${rows[i]} at position ${j} (token ${r.ids[j]}) from the clean run: ${val(p.resid.data[i * T + j])} of the clean answer back.`,
      ),
      h('h4', { text: 'One head\'s output patched at one position' }),
      figureTable('heads', p.heads, heads, cols, 'Patching one head at one position (rows: heads, columns: positions)', 'weights', patchReadout, (i, j) =>
        `${heads[i]} at position ${j} (token ${r.ids[j]}) from the clean run: ${val(p.heads.data[i * T + j])} of the clean answer back.`,
      ),
      h('h4', { text: 'One head\'s output patched at every position' }),
      bars,
    );
  }

  function renderCircuits(r: InspectReport): void {
    const heads = headLabels(r.nLayers, r.nHeads);
    const circuits = r.inspection.circuits;
    if (head >= circuits.length) head = 0;
    headPick.replaceChildren(...heads.map((label, g) => h('option', { value: g, text: label, selected: g === head })));
    const c = circuits[head];
    if (!c) {
      circBody.replaceChildren();
      return;
    }
    const V = c.qk.rows;
    const tokens = Array.from({ length: V }, (_, t) => String(t));
    const copying = column(Float32Array.from(circuits, (x) => x.copying));
    circFig.dataset.head = String(head);
    const describeQk = (i: number, j: number) => `QK of ${heads[head]}: query token ${i} on key token ${j}: ${val(c.qk.data[i * V + j])}.`;
    const describeOv = (i: number, j: number) => `OV of ${heads[head]}: attending to token ${i} adds ${val(c.ov.data[i * V + j])} to the logit of token ${j}.`;
    for (const m of circuitMaps) m.destroy();
    circuitMaps = [
      canvasHeatmap({ name: 'qk', label: `QK circuit of ${heads[head]}: ${V} query tokens down, ${V} key tokens across`, m: c.qk, rowLabels: tokens, colLabels: tokens, readout: circReadout, describe: describeQk }),
      canvasHeatmap({ name: 'ov', label: `OV circuit of ${heads[head]}: ${V} tokens attended to down, the logit of each token across`, m: c.ov, rowLabels: tokens, colLabels: tokens, readout: circReadout, describe: describeOv }),
    ];
    // Every number, on demand: the same matrices as tables, built when the learner opens them.
    const numbers = h('details', { class: 'inspect-numbers' }, h('summary', { text: `Show every number (two tables of ${V} × ${V})` }));
    numbers.addEventListener('toggle', () => {
      if (!numbers.open || numbers.querySelector('table')) return;
      numbers.append(
        figureTable('qk', c.qk, tokens, tokens, `QK circuit of ${heads[head]}`, 'signed', circReadout, describeQk),
        figureTable('ov', c.ov, tokens, tokens, `OV circuit of ${heads[head]}`, 'signed', circReadout, describeOv),
      );
    });
    // Side by side where the panel is wide enough, one under the other on a phone; the readout
    // right under both.
    circBody.replaceChildren(
      h(
        'div',
        { class: 'circuit-maps' },
        h('div', { class: 'circuit-map' }, h('h4', { text: `QK of ${heads[head]} (rows: query token, columns: key token)` }), circuitMaps[0].element),
        h('div', { class: 'circuit-map' }, h('h4', { text: `OV of ${heads[head]} (rows: token attended to, columns: logit of token)` }), circuitMaps[1].element),
      ),
      circReadout,
      h('p', { class: 'hint', text: `Blue is negative, orange positive, white near 0; each map is scaled to its own largest |value| (QK ${val(symmetricScale(c.qk.data))}, OV ${val(symmetricScale(c.ov.data))}). Point at a cell, or focus a map and use the arrow keys, to read its number.` }),
      numbers,
      h('h4', { text: 'Copying score per head' }),
      figureTable('copying', copying, heads, ['copying'], 'Copying score of each head', 'weights', circReadout, (i) => `${heads[i]}: copying score ${val(copying.data[i])}.`),
    );
  }

  function render(r: InspectReport): void {
    last = r;
    renderLens(r);
    renderAttribution(r);
    renderPatching(r);
    renderCircuits(r);
    measured.textContent = `Measured by the core at step ${r.step} on the sample ${Array.from(r.ids).join(' ')}, under the Ablation panel's interventions.`;
    panel.dataset.step = String(r.step);
    panel.dataset.ids = Array.from(r.ids).join(' ');
  }

  const model = new InspectModel(ctl, answerView(panel, problem, render, (why) => `The core could not look inside the model: ${why}`, { done: 'done', failed: 'failed' }));

  const showFieldProblem = (text: string | null) => {
    fieldProblem.textContent = text ?? '';
    fieldProblem.hidden = text === null;
    patchFig.dataset.fieldProblem = text ? 'true' : 'false';
  };
  const patch = () => {
    const T = last?.ids.length ?? ctl.snapshot?.T ?? 0;
    const V = last?.vocabSize ?? ctl.store.state.vocabSize;
    const parsed = parseCorrupted(field.value, T, V);
    if ('problem' in parsed) return showFieldProblem(parsed.problem);
    showFieldProblem(null);
    model.choose({ kind: 'ids', ids: parsed.ids });
  };
  patchBtn.addEventListener('click', patch);
  field.addEventListener('keydown', (e) => e.key === 'Enter' && patch());
  changeBtn.addEventListener('click', () => {
    const T = last?.ids.length ?? 0;
    const p = Number(change.value);
    if (!(Number.isInteger(p) && p >= 0 && p < T)) return showFieldProblem(`The position must be a whole number from 0 to ${T - 1}; nothing was changed.`);
    showFieldProblem(null);
    model.choose({ kind: 'change', position: p });
  });
  defaultBtn.addEventListener('click', () => {
    showFieldProblem(null);
    model.choose({ kind: 'default' });
  });
  again.addEventListener('click', () => model.choose(model.choice));
  headPick.addEventListener('change', () => {
    head = Number(headPick.value);
    if (last) renderCircuits(last);
  });

  return mountModel(panel, model, () => circuitMaps.forEach((m) => m.destroy()));
}
