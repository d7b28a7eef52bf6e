// The "Longer than trained" panel: the current model measured by the core at 1x, 2x
// and 4x its training length (a row each with finite numbers, one line per length); learned
// positions with max_seq_len = seq_len get a sentence naming max_seq_len for 2x and 4x instead of
// numbers; and the preset "Compare the five position methods" with a tiny step budget, and its
// cancel. Numbers are read from the panel's data attributes (the core's, full precision).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openReused, useBrowser, waitForStep, waitReady } from './harness.mjs';

let srv;
let browser;
useBrowser((s, b) => {
  srv = s;
  browser = b;
});

const SMALL = 'view=train&task=shift&residual=1&seq-len=8&vocab-size=16&d-model=16&heads=2&batch=8';

/** Steps 10 twice, then waits for the panel's measurement at that step. */
async function trainAndMeasure(page) {
  await waitReady(page);
  await page.click('[data-action=step10]');
  await waitForStep(page, 10);
  await page.click('[data-action=step10]');
  await waitForStep(page, 20);
  await page.waitForFunction(() => {
    const p = document.querySelector('.longer-panel');
    return p?.dataset.state === 'done' && p.dataset.step === '20';
  });
  return page.$$eval('.longer-table tbody tr', (rows) => rows.map((r) => ({ length: Number(r.dataset.length), accuracy: r.dataset.accuracy, loss: r.dataset.loss, problem: r.dataset.problem, text: r.textContent })));
}

test('rope: three rows with finite numbers and one line per length', async () => {
  const { page, context, errors } = await openReused(browser, `${srv.url}#${SMALL}&panel=longer&positions=rope`);
  const rows = await trainAndMeasure(page);
  assert.deepEqual(rows.map((r) => r.length), [8, 16, 32]);
  for (const r of rows) {
    assert.ok(Number.isFinite(Number(r.accuracy)) && Number.isFinite(Number(r.loss)), JSON.stringify(r));
    assert.ok(r.accuracy !== undefined && r.loss !== undefined);
  }
  assert.equal(await page.getAttribute('.longer-chart', 'data-lines'), '3');
  // uPlot's legend: x, then one series per length.
  const legend = await page.$$eval('.longer-chart .u-legend .u-series', (s) => s.map((e) => e.textContent));
  assert.equal(legend.length, 4, legend.join(' | '));
  assert.match(await page.textContent('.longer-explain'), /RoPE/);
  assert.deepEqual(errors, []);
  await context.close();
});

test('learned with max_seq_len = seq_len: 2x and 4x say why, naming max_seq_len', async () => {
  const { page, context, errors } = await openReused(browser, `${srv.url}#${SMALL}&panel=longer&positions=learned`);
  const rows = await trainAndMeasure(page);
  assert.ok(Number.isFinite(Number(rows[0].accuracy)), 'the training length is measured');
  for (const r of rows.slice(1)) {
    assert.equal(r.problem, 'maxSeqLen');
    assert.match(r.text, /max_seq_len = 8/);
  }
  assert.equal(await page.getAttribute('.longer-chart', 'data-lines'), '1');
  assert.deepEqual(errors, []);
  await context.close();
});

test('the preset compares the five methods at 16, 32 and 64 (5 steps each), and cancels', async () => {
  const { page, context, errors } = await openReused(browser, `${srv.url}#${SMALL}&panel=longer&positions=rope`);
  await trainAndMeasure(page);
  await page.fill('[name=comparison-steps]', '5');
  await page.click('[data-action=compare-positions]');
  await page.waitForFunction(() => document.querySelector('.longer-panel').dataset.comparison === 'done');
  const table = await page.$$eval('.longer-compare tbody tr', (rows) =>
    rows.map((r) => ({ positions: r.dataset.positions, cells: [...r.querySelectorAll('td[data-length]')].map((c) => [Number(c.dataset.length), Number(c.dataset.accuracy), Number(c.dataset.loss)]) })),
  );
  assert.deepEqual(table.map((r) => r.positions), ['sinusoidal', 'learned', 'rope', 'alibi', 'none']);
  for (const r of table) {
    assert.deepEqual(r.cells.map((c) => c[0]), [16, 32, 64], r.positions);
    for (const [, acc, loss] of r.cells) assert.ok(acc >= 0 && acc <= 1 && Number.isFinite(loss), r.positions);
  }
  // The learner's own run is untouched.
  assert.equal(await page.getAttribute('.readout', 'data-step'), '20');
  // A long one, cancelled: it stops with what it has.
  await page.fill('[name=comparison-steps]', '20000');
  await page.click('[data-action=compare-positions]');
  await page.waitForFunction(() => /Training sinusoidal/.test(document.querySelector('.longer-status').textContent));
  await page.click('[data-action=compare-cancel]');
  await page.waitForFunction(() => document.querySelector('.longer-panel').dataset.comparison === 'cancelled');
  assert.match(await page.textContent('.longer-status'), /Cancelled after 0 of 5/);
  // A bad step count: one sentence, nothing started.
  await page.fill('[name=comparison-steps]', '0');
  await page.click('[data-action=compare-positions]');
  assert.match(await page.textContent('.longer-status'), /whole number from 1 to 20000/);
  assert.deepEqual(errors, []);
  await context.close();
});
