// The training view's "Self-test" panel: one click runs the curriculum's invariants in the worker,
// on the live wasm build and the live model (rows sum to 1 and the mask is exact, the future does
// not leak, split/merge heads round-trips, the fused QKV projection equals three projections, a
// finite-difference gradient check, and the PyTorch reference case shipped with the page). Every
// number shown (max error, tolerance, time) comes from the core; this module only lays it out
// (model.ts runs the checks).
import type { SelfTestResult } from '../../core/attention-core';
import type { Controller } from '../../client/controller';
import { ms, sci } from '../../model/format';
import { h, scrollBox } from '../../ui/dom';
import { fillPanel, type PanelOptions } from '../../ui/panel';
import { SelfTestModel } from './model';
import type { SelfTestReport } from './request';

/** A sentence ends with a full stop. */
const sentence = (s: string) => (/[.!?]$/.test(s.trim()) ? s.trim() : `${s.trim()}.`);

/** Fills slot (the panel's section, placed by the training view). Returns the unmount function. */
export function mount(slot: HTMLElement, ctl: Controller, _opts: PanelOptions): () => void {
  const runBtn = h('button', { type: 'button', class: 'primary', 'data-action': 'selftest', text: 'Run the checks' });
  const status = h('p', { class: 'selftest-status', role: 'status', 'aria-live': 'polite' });
  const problem = h('p', { class: 'problem', role: 'alert', hidden: true });
  const stale = h('p', { class: 'selftest-stale', hidden: true, text: 'These results are for an earlier model; run again.' });
  const body = h('tbody');
  const table = h(
    'table',
    { class: 'selftest-table', hidden: true },
    h('caption', { class: 'visually-hidden', text: 'Self-test results: one row per check' }),
    h(
      'thead',
      {},
      h('tr', {}, h('th', { scope: 'col', text: 'Check' }), h('th', { scope: 'col', text: 'Result' }), h('th', { scope: 'col', text: 'Max error ≤ tolerance' }), h('th', { scope: 'col', text: 'What was measured' })),
    ),
    body,
  );
  const panel = fillPanel(
    slot,
    {},
    "Self-test: the curriculum's checks, run here",
    h('p', {
      class: 'hint first',
      text:
        "These are the curriculum's tests, run on your model by the same WebAssembly core that trains it: the attention rows are probability distributions and the causal mask is exact, later tokens cannot change earlier outputs, splitting and merging heads loses nothing, the fused QKV projection is three projections in one, the hand-written backward agrees with finite differences, and a case computed by PyTorch comes out the same. If they pass here, the numbers on this page can be trusted.",
    }),
    h('div', { class: 'buttons' }, runBtn),
    status,
    problem,
    stale,
    scrollBox('Self-test results (scrolls sideways)', table),
  );

  function render(report: SelfTestReport, at: string): void {
    const rows = report.results.map((r: SelfTestResult) => {
      const measured = Number.isNaN(r.maxError) ? 'not measured' : `${sci(r.maxError)} ${r.maxError <= r.tolerance ? '≤' : '>'} ${sci(r.tolerance)}`;
      return h(
        'tr',
        { 'data-check': r.id, 'data-pass': String(r.pass), 'data-max-error': String(r.maxError), 'data-tolerance': String(r.tolerance) },
        h('th', { scope: 'row', class: 'selftest-name' }, r.name, h('code', { class: 'selftest-id', text: r.id })),
        h('td', { class: r.pass ? 'selftest-pass' : 'selftest-fail' }, h('span', { 'aria-hidden': 'true', text: r.pass ? '✓ ' : '✗ ' }), r.pass ? 'PASS' : 'FAIL'),
        h('td', { class: 'selftest-error', text: measured }),
        h('td', { class: 'selftest-detail', text: sentence(r.detail) }),
      );
    });
    body.replaceChildren(...rows);
    table.hidden = false;
    const passed = report.results.filter((r) => r.pass).length;
    const n = report.results.length;
    const took = ms(report.ms);
    status.textContent = `${passed} of ${n} checks passed on the live ${ctl.relaxed ? 'relaxed SIMD' : ctl.simd ? 'SIMD' : 'scalar'} WebAssembly build in ${took} ms (${at}).`;
    panel.dataset.passed = String(passed);
    panel.dataset.total = String(n);
    panel.dataset.state = 'done';
  }

  const model = new SelfTestModel(ctl, {
    visible: () => true,
    loading: () => {
      sync();
      problem.hidden = true;
      panel.dataset.state = 'running';
      status.textContent = 'Running the checks…';
    },
    done: ({ report, at, stale: isStale }) => {
      stale.hidden = !isStale;
      panel.dataset.stale = String(isStale);
      render(report, at);
      finished();
    },
    failed: (why) => {
      problem.textContent = sentence(`The checks could not run: ${why}`);
      problem.hidden = false;
      status.textContent = '';
      panel.dataset.state = 'error';
      finished();
    },
  });

  /** A run ended (either way). */
  function finished(): void {
    panel.dataset.runs = String(model.runs);
    sync();
  }

  function sync(): void {
    const busy = !model.ready;
    const running = model.running;
    // While the checks run the button stays focusable (a disabled button would drop the keyboard
    // focus); run() ignores presses until the answer is in.
    if (runBtn.disabled !== busy) runBtn.disabled = busy;
    if (runBtn.getAttribute('aria-disabled') !== String(running)) {
      runBtn.setAttribute('aria-disabled', String(running));
      panel.setAttribute('aria-busy', String(running));
    }
    if (!table.hidden && model.stale && stale.hidden) {
      stale.hidden = false;
      panel.dataset.stale = 'true';
    }
  }

  runBtn.addEventListener('click', () => model.run());
  const unsubscribe = ctl.subscribe(sync);
  sync();
  return () => {
    model.destroy();
    unsubscribe();
    panel.replaceChildren();
  };
}
