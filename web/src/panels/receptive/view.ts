// The training view's Receptive field panel: a map of how much the output at each position of the
// sample depends on the input at each other position (the core's receptiveField: a gradient norm,
// each row scaled to its largest entry; exactly 0 hatched), with the bound L·(W − 1) of a sliding
// window beside the distance the measurement reaches. model.ts holds the requests and the counting.
import type { Controller } from '../../client/controller';
import { drawHeatmap } from '../../draw/heatmap';
import { count, plural } from '../../model/format';
import { tokenLabels } from '../../model/text';
import { h } from '../../ui/dom';
import { answerView, fillPanel, mountModel, type PanelOptions } from '../../ui/panel';
import { reach, reachBound, ReceptiveModel } from './model';
import type { ReceptiveReport } from './request';

/** Fills slot (the panel's section, placed by the training view). Returns the unmount function. */
export function mount(slot: HTMLElement, ctl: Controller, _opts: PanelOptions): () => void {
  const canvas = h('canvas', { class: 'receptive-canvas', role: 'img', 'aria-label': 'The receptive field' });
  const formula = h('p', { class: 'receptive-formula' });
  const measured = h('p', { class: 'receptive-measured' });
  const problem = h('p', { class: 'problem', role: 'alert', hidden: true });
  const panel = fillPanel(
    slot,
    { 'data-state': 'idle' },
    'Receptive field',
    h('p', {
      class: 'hint first',
      text:
        'Row i, column j: how much the output at position i changes when the input at position j does (the size of the gradient, measured by the core, each row scaled to its largest entry). ' +
        'Hatched cells are exactly 0: nothing the model could learn would let that input reach that output. ' +
        'A sliding window of W keys lets each layer look W − 1 positions further, so the reach grows with depth: L layers see L·(W − 1) positions away, and no further.',
    }),
    h('div', { class: 'receptive-row' }, canvas, h('div', { class: 'receptive-text' }, formula, measured)),
    problem,
  );

  function render(r: ReceptiveReport): void {
    const T = r.T;
    const values = new Float32Array(T * T);
    const zero = new Uint8Array(T * T);
    for (let i = 0; i < T; ++i) {
      let max = 0;
      for (let j = 0; j < T; ++j) max = Math.max(max, r.field[i * T + j]);
      for (let j = 0; j < T; ++j) {
        const v = r.field[i * T + j];
        values[i * T + j] = max > 0 ? v / max : 0;
        zero[i * T + j] = v === 0 ? 1 : 0;
      }
    }
    const s = ctl.snapshot;
    const labels = s && s.ids.length === T ? tokenLabels(s.ids, s.text?.corpus.vocab) : Array.from({ length: T }, (_, i) => String(i));
    drawHeatmap(canvas, Math.max(200, Math.min(420, 26 + 14 * T)), { values, rows: T, cols: T, rowLabels: labels, colLabels: labels, causal: false, hidden: { cells: zero, key: zero.join('') } });
    const bound = reachBound(r);
    const m = reach(r);
    const side = r.objective === 'mlm' ? 'on either side' : 'back';
    formula.textContent =
      bound !== null
        ? `The bound: L·(W − 1) = ${r.nLayers}·(${r.window} − 1) = ${plural(bound, 'position')} ${side}.`
        : r.attention === 'strided'
          ? `No bound from depth: the strided keys (every multiple of ${r.stride}) link far positions in a single layer, so every earlier position can matter.`
          : `No bound: with full attention every ${r.objective === 'mlm' ? '' : 'earlier '}position can reach every output in one layer. Set attention to window to see one.`;
    measured.textContent =
      `Measured: the farthest nonzero attribution is ${plural(m.farthest, 'position')} from its output.` +
      (bound !== null ? ` Beyond ${bound}, ${count(m.beyondZero)} cells are exactly 0 and ${count(m.beyondNonzero)} are not.` : '');
    canvas.setAttribute('aria-label', `The receptive field of the ${plural(T, 'position')}: the farthest nonzero attribution is ${plural(m.farthest, 'position')} away.`);
    panel.dataset.step = String(r.step);
    panel.dataset.bound = bound === null ? 'none' : String(bound);
    panel.dataset.farthest = String(m.farthest);
    panel.dataset.beyondZero = String(m.beyondZero);
    panel.dataset.beyondNonzero = String(m.beyondNonzero);
  }

  const model = new ReceptiveModel(
    ctl,
    answerView(panel, problem, render, (why) => `The receptive field could not be measured: ${why.replace(/[.!?]$/, '')}.`, { done: 'ready', failed: 'error' }),
  );
  return mountModel(panel, model);
}
