// The training view's Self-test panel: one click runs the curriculum's six checks on the live wasm
// build and the live model, in the browser; each row shows pass/fail, the measured max error and
// the tolerance. Both builds pass, before and after training; a missing reference case fails only
// its own check, with a sentence saying so.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openPage, pauseRun, useBrowser, waitForStep, waitReady } from './harness.mjs';

let srv;
let browser;
useBrowser((s, b) => {
  srv = s;
  browser = b;
});

const CHECKS = ['rows_and_mask', 'future_invariance', 'split_merge', 'fused_qkv', 'gradcheck', 'pytorch_reference'];
const PANEL = 'section.selftest-panel';

/** Clicks Run (keyboard: Enter on the focused button) and waits for a new result. */
async function runChecks(page) {
  const before = await page.$eval(PANEL, (el) => el.dataset.runs ?? '0');
  await page.focus(`${PANEL} [data-action=selftest]`);
  await page.keyboard.press('Enter');
  await page.waitForFunction(
    ({ sel, before }) => {
      const el = document.querySelector(sel);
      return (el.dataset.state === 'done' || el.dataset.state === 'error') && (el.dataset.runs ?? '0') !== before;
    },
    { sel: PANEL, before },
  );
}

/** What the table shows: one entry per row, the numbers parsed back from the shown text. */
function shownResults(page) {
  return page.$$eval(`${PANEL} tr[data-check]`, (rows) =>
    rows.map((tr) => {
      const [result, error, detail] = [...tr.querySelectorAll('td')].map((td) => td.textContent);
      return { id: tr.dataset.check, pass: tr.dataset.pass, result, error, detail, name: tr.querySelector('th').textContent };
    }),
  );
}

/** "1.19e-7 ≤ 1e-5" -> {max, op, tol}. */
function parseError(text) {
  const m = /^(\S+) (≤|>) (\S+)$/.exec(text);
  assert.ok(m, `the error cell reads "max op tolerance", got ${JSON.stringify(text)}`);
  const num = (s) => Number(s.replace('−', '-'));
  return { max: num(m[1]), op: m[2], tol: num(m[3]) };
}

function assertAllPass(rows) {
  assert.deepEqual(rows.map((r) => r.id), CHECKS);
  for (const r of rows) {
    assert.equal(r.pass, 'true', `${r.id} passes: ${r.detail}`);
    assert.match(r.result, /^✓ PASS$/, `${r.id}: PASS is written, not only coloured`);
    const { max, op, tol } = parseError(r.error);
    assert.ok(Number.isFinite(max) && Number.isFinite(tol), `${r.id}: numbers in ${r.error}`);
    assert.equal(op, '≤');
    assert.ok(max <= tol, `${r.id}: ${max} <= ${tol}`);
    assert.ok(r.detail.length > 10 && r.detail.endsWith('.'), `${r.id}: a detail sentence, got ${JSON.stringify(r.detail)}`);
    assert.ok(r.name.length > 10, `${r.id} has a name`);
  }
}

const summary = (page) => page.textContent(`${PANEL} .selftest-status`);

test('self-test: all six checks pass on the live build (relaxed SIMD in Chromium), before and after training', async () => {
  const { page, context, errors } = await openPage(browser, `${srv.url}#view=train&panel=selftest`);
  await waitReady(page);
  assert.equal(await page.getAttribute(`${PANEL}`, 'aria-label'), 'Self-test');
  assert.equal(await page.textContent(`${PANEL} h2`), "Self-test: the curriculum's checks, run here");
  assert.equal(await page.locator(`${PANEL} tr[data-check]`).count(), 0, 'nothing is shown before a run');

  await runChecks(page);
  assertAllPass(await shownResults(page));
  assert.match(await summary(page), /^6 of 6 checks passed on the live relaxed SIMD WebAssembly build in [\d.]+ ms \(the model at step 0\)\.$/);
  assert.equal(await page.isHidden(`${PANEL} .selftest-stale`), true);

  // Train, then again: a trained model passes too.
  await page.click('[data-action=step10]');
  await waitForStep(page, 10);
  await page.click('[data-action=step10]');
  await waitForStep(page, 20);
  await runChecks(page);
  assertAllPass(await shownResults(page));
  assert.match(await summary(page), /^6 of 6 checks passed .* \(the model at step 20\)\.$/);

  // While training plays, the worker answers between chunks.
  await page.click('[data-action=play]');
  await page.waitForSelector('.readout[data-status="playing"]');
  await runChecks(page);
  assertAllPass(await shownResults(page));
  // (Solved meanwhile, the run may have paused itself.)
  await pauseRun(page);

  // A new run (Reset) makes the shown results stale.
  await page.click('[data-action=reset]');
  await waitForStep(page, 0);
  await page.waitForSelector(`${PANEL} .selftest-stale:not([hidden])`);
  assert.match(await page.textContent(`${PANEL} .selftest-stale`), /results are for an earlier model; run again/);
  await runChecks(page);
  assert.equal(await page.isHidden(`${PANEL} .selftest-stale`), true);
  assertAllPass(await shownResults(page));
  assert.deepEqual(errors, []);
  await context.close();
});

test('self-test: the scalar build (?core=scalar) passes every check too', async () => {
  const { page, context, errors } = await openPage(browser, `${srv.url}?core=scalar#view=train&panel=selftest&task=copy&heads=2`);
  await waitReady(page);
  await page.click('[data-action=step10]');
  await waitForStep(page, 10);
  await runChecks(page);
  assertAllPass(await shownResults(page));
  assert.match(await summary(page), /^6 of 6 checks passed on the live scalar WebAssembly build in [\d.]+ ms/);
  assert.deepEqual(errors, []);
  await context.close();
});

test('self-test: without the reference files, only the PyTorch check fails, and it says why', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.route('**/reference/**', (route) => route.abort());
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  await page.goto(`${srv.url}#view=train&panel=selftest`);
  await waitReady(page);
  await runChecks(page);
  const rows = await shownResults(page);
  assert.deepEqual(rows.map((r) => r.id), CHECKS);
  const ref = rows.find((r) => r.id === 'pytorch_reference');
  assert.equal(ref.pass, 'false');
  assert.match(ref.result, /^✗ FAIL$/);
  assert.match(ref.detail, /^The PyTorch reference case could not be loaded: .+\.$/);
  for (const r of rows.filter((r) => r.id !== 'pytorch_reference')) assert.equal(r.pass, 'true', `${r.id} still passes`);
  assert.match(await summary(page), /^5 of 6 checks passed/);
  // The page keeps working: it still trains.
  await page.click('[data-action=step1]');
  await waitForStep(page, 1);
  // The request failures are expected; nothing else went wrong.
  assert.deepEqual(errors, []);
  await context.close();
});
