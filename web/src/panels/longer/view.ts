// The training view's "Longer than trained" panel (length extrapolation): the current
// model on its task at 1x, 2x and 4x the training length (the core's evaluateAt, in the worker),
// as a table of accuracy and loss per length and the accuracy at each position as one line per
// length, with a few sentences on the position method. Its second part is the preset "Compare the
// five position methods": five fresh Trainers in the worker, one after the other, each measured at
// 16, 32 and 64. model.ts holds the logic; this file draws.
import type uPlot from 'uplot';
import type { Controller } from '../../client/controller';
import { stepChart, stepChartHeight } from '../../draw/chart';
import { headColour } from '../../draw/timeline-charts';
import { num, pct } from '../../model/format';
import { h, scrollBox, uniqueId } from '../../ui/dom';
import { answerView, fillPanel, type PanelOptions } from '../../ui/panel';
import {
  comparisonApi,
  COMPARISON_METHODS,
  COMPARISON_STEPS,
  COMPARISON_TABLE,
  COMPARISON_T,
  explainPositions,
  LENGTH_FACTORS,
  LongerModel,
  parseSteps,
  perPositionSeries,
  problemText,
  runComparison,
  COMPARISON_MAX_STEPS,
  type ComparisonResult,
} from './model';
import type { LengthRow, LengthsReport } from './request';

const HEIGHT: [number, number] = [150, 220];

/** A table cell pair (accuracy, loss) for one length, or the sentence spanning both. */
function lengthCells(row: LengthRow, config: LengthsReport['config']): HTMLTableCellElement[] {
  if (!row.evaluation) return [h('td', { colspan: 2, class: 'longer-problem', text: problemText(row, config) })];
  return [h('td', { text: pct(row.evaluation.accuracy) }), h('td', { text: num(row.evaluation.loss) })];
}

/** Fills slot (the panel's section, placed by the training view); returns its cleanup. */
export function mount(slot: HTMLElement, ctl: Controller, opts: PanelOptions): () => void {
  const body = h('tbody');
  const table = h(
    'table',
    { class: 'longer-table' },
    h('caption', { text: 'The current model on its task, measured by the core at each length' }),
    h('thead', {}, h('tr', {}, ...['length', '', 'accuracy', 'loss'].map((t) => h('th', { scope: 'col', text: t })))),
    body,
  );
  const chartEl = h('div', { class: 'longer-chart' });
  const measured = h('p', { class: 'hint longer-measured' });
  const explain = h('div', { class: 'longer-explain', 'aria-live': 'polite' });
  const problem = h('p', { class: 'problem', role: 'alert', hidden: true });

  // The preset.
  const stepsId = uniqueId('longer-steps');
  const stepsInput = h('input', { id: stepsId, name: 'comparison-steps', type: 'number', min: 1, max: COMPARISON_MAX_STEPS, step: 1, value: COMPARISON_STEPS });
  const runBtn = h('button', { type: 'button', 'data-action': 'compare-positions', text: 'Compare the five position methods' });
  const cancelBtn = h('button', { type: 'button', 'data-action': 'compare-cancel', text: 'Cancel', disabled: true });
  const status = h('p', { class: 'longer-status', 'aria-live': 'polite' });
  const compareBody = h('tbody');
  const lengths = LENGTH_FACTORS.map((f) => f * COMPARISON_T);
  const compareTable = h(
    'table',
    { class: 'longer-compare', hidden: true },
    h('caption', { text: `Each method trained on shift at T = ${COMPARISON_T}, then measured by the core at ${lengths.join(', ')}: accuracy / loss` }),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col', text: 'positions' }), h('th', { scope: 'col', text: 'steps' }), ...lengths.map((n) => h('th', { scope: 'col', text: `length ${n}` })))),
    compareBody,
  );

  const panel = fillPanel(
    slot,
    { 'data-state': 'idle', 'data-comparison': 'idle' },
    'Longer than trained',
    h('p', {
      class: 'hint first',
      text:
        'The model was trained on sequences of one length. Here the core runs it, unchanged, on fresh sequences of the same task twice and four times as long. ' +
        'Whether it still works there depends on how it knows positions: a method that encodes where a token is breaks where it never saw a position, one that encodes how far apart two tokens are can carry over.',
    }),
    problem,
    scrollBox('Accuracy and loss per length (scrolls sideways)', table),
    chartEl,
    h('p', { class: 'hint', text: 'Accuracy at each position, one line per length (positions where the task sets no answer are left out). Where a line drops is where the model meets positions it never trained on.' }),
    measured,
    explain,
    h('h3', { text: 'Compare the five position methods' }),
    h('p', {
      class: 'hint',
      text:
        `Trains a fresh model for each position method (sinusoidal, learned with max_seq_len ${COMPARISON_TABLE}, RoPE, ALiBi, none) on the shift task at T = ${COMPARISON_T}, one after the other in the worker, ` +
        'then measures each at 16, 32 and 64. Your own run is not touched. The same experiment from the command line: bench/length-extrapolation.',
    }),
    h('div', { class: 'fields' }, h('div', { class: 'field' }, h('label', { for: stepsId, text: 'steps per method' }), stepsInput), h('div', { class: 'field' }, runBtn, ' ', cancelBtn)),
    status,
    scrollBox('The five position methods at three lengths (scrolls sideways)', compareTable),
  );

  // ---- The live model
  let chart: uPlot | null = null;
  let last: LengthsReport | null = null;
  const visible = () => panel.offsetParent !== null;

  function drawChart(r: LengthsReport): void {
    chart?.destroy();
    chart = null;
    const { x, ys } = perPositionSeries(r.rows);
    const measuredRows = r.rows.map((row, i) => ({ row, ys: ys[i] })).filter((m) => m.row.evaluation);
    chartEl.dataset.lines = String(measuredRows.length);
    if (!measuredRows.length || !visible()) return;
    const width = Math.max(200, chartEl.clientWidth || 320);
    chart = stepChart(
      chartEl,
      {
        xLabel: 'position',
        yLabel: 'accuracy',
        yRange: [0, 1],
        series: measuredRows.map((m, i) => ({ label: `length ${m.row.length}`, stroke: headColour(i), value: (v) => (v == null ? '—' : pct(v)), dash: i === 0 ? undefined : [6, 3 * i] })),
      },
      [x, ...measuredRows.map((m) => m.ys)] as uPlot.AlignedData,
      width,
      stepChartHeight(width, HEIGHT, 0.4),
    );
  }

  function render(r: LengthsReport): void {
    last = r;
    const T = r.config.seqLen;
    body.replaceChildren(
      ...r.rows.map((row, i) => {
        const tr = h('tr', { 'data-length': row.length }, h('th', { scope: 'row', text: String(row.length) }), h('td', { text: `${LENGTH_FACTORS[i] ?? row.length / T}× trained` }), ...lengthCells(row, r.config));
        if (row.evaluation) {
          tr.dataset.accuracy = String(row.evaluation.accuracy);
          tr.dataset.loss = String(row.evaluation.loss);
        } else tr.dataset.problem = row.problem?.key ?? row.problem?.kind ?? '';
        return tr;
      }),
    );
    drawChart(r);
    measured.textContent = `Measured at step ${r.step}: positions ${r.config.positions}, trained at length ${T}, on ${r.config.task}. It is measured again after each pause in training.`;
    explain.replaceChildren(...explainPositions(r.config.positions, r.config).map((t) => h('p', { text: t })));
    panel.dataset.step = String(r.step);
  }

  const model = new LongerModel(ctl, answerView(panel, problem, render, (why) => `The core could not measure the model at other lengths: ${why}`, { done: 'done', failed: 'failed' }));

  // ---- The preset
  let cancelled = false;
  let running = false;

  function resultRow(r: ComparisonResult): HTMLTableRowElement {
    const name = r.positions === 'learned' ? `learned (max_seq_len ${r.report.config.maxSeqLen})` : r.positions;
    const cells = r.report.rows.map((row) => {
      if (!row.evaluation) return h('td', { class: 'longer-problem', text: problemText(row, r.report.config) });
      return h('td', { 'data-length': row.length, 'data-accuracy': String(row.evaluation.accuracy), 'data-loss': String(row.evaluation.loss), text: `${pct(row.evaluation.accuracy)} / ${num(row.evaluation.loss)}` });
    });
    return h('tr', { 'data-positions': r.positions }, h('th', { scope: 'row', text: name }), h('td', { text: String(r.steps) }), ...cells);
  }

  async function compare(): Promise<void> {
    const steps = parseSteps(stepsInput.value);
    if (steps === null) {
      status.textContent = `Steps per method must be a whole number from 1 to ${COMPARISON_MAX_STEPS}; nothing was started.`;
      return;
    }
    cancelled = false;
    running = true;
    runBtn.disabled = true;
    cancelBtn.disabled = false;
    compareBody.replaceChildren();
    compareTable.hidden = false;
    panel.dataset.comparison = 'running';
    try {
      const out = await runComparison(
        comparisonApi(ctl),
        steps,
        (p) => (status.textContent = `Training ${p.positions} (${p.method + 1} of ${COMPARISON_METHODS.length}): step ${p.step} of ${p.steps}.`),
        () => cancelled,
        (r) => compareBody.append(resultRow(r)),
      );
      status.textContent = out.cancelled
        ? `Cancelled after ${out.results.length} of ${COMPARISON_METHODS.length} methods.`
        : `Done: ${COMPARISON_METHODS.length} methods, ${steps} steps each. Read each row across: a method that keeps its accuracy at 32 and 64 extrapolates.`;
      panel.dataset.comparison = out.cancelled ? 'cancelled' : 'done';
    } catch (e) {
      status.textContent = `The comparison stopped: ${e instanceof Error ? e.message : String(e)}`;
      panel.dataset.comparison = 'failed';
    } finally {
      running = false;
      runBtn.disabled = false;
      cancelBtn.disabled = true;
    }
  }
  runBtn.addEventListener('click', () => {
    if (!running) void compare();
  });
  cancelBtn.addEventListener('click', () => {
    cancelled = true;
    status.textContent = 'Cancelling after the current chunk of steps…';
  });

  // Width changes, and the train view being shown again, redraw (and fetch what was missed).
  let drawnWidth = 0;
  const ro = new ResizeObserver(() => {
    if (!visible()) return;
    model.shown();
    const width = chartEl.clientWidth;
    if (last && width !== drawnWidth) {
      drawnWidth = width;
      drawChart(last);
    }
  });
  ro.observe(panel);
  const unrestyle = opts.onRestyle(() => last && drawChart(last));

  return () => {
    cancelled = true;
    model.destroy();
    unrestyle();
    ro.disconnect();
    chart?.destroy();
    panel.replaceChildren();
  };
}
