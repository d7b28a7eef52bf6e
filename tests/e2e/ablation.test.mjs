// The Ablation panel: switching heads off changes the loss at once (and back restores it), the
// 1/sqrt(dk) toggle shows saturation, and a broken mask lets the model cheat on a task that needs
// the future, which the panel measures and explains. Every number is the core's, read from the
// panel's data attributes (full precision) and its text.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openReused, playTo, useBrowser, waitForStep, waitReady } from './harness.mjs';

let srv;
let browser;
useBrowser((s, b) => {
  srv = s;
  browser = b;
});

/** The panel's measurement, once it is for the given step. */
async function measured(page, step) {
  await waitForStep(page, step, { sel: '.ablation-panel' });
  return page.evaluate(() => {
    const d = document.querySelector('.ablation-panel').dataset;
    return {
      intactLoss: Number(d.intactLoss),
      ablatedLoss: Number(d.ablatedLoss),
      intactAccuracy: Number(d.intactAccuracy),
      ablatedAccuracy: Number(d.ablatedAccuracy),
      intactMaxWeight: Number(d.intactMaxWeight),
      ablatedMaxWeight: Number(d.ablatedMaxWeight),
      text: document.querySelector('.ablation-explain').textContent,
    };
  });
}

/** Sets the change and waits for the measurement that includes it. */
async function setAndMeasure(page, action, step) {
  const before = await page.getAttribute('.ablation-panel', 'data-ablated-loss');
  await action();
  await page.waitForFunction((b) => document.querySelector('.ablation-panel').dataset.ablatedLoss !== b, before);
  return measured(page, step);
}

test('switching heads off changes the loss at once; restoring the layer gives it back', async () => {
  const { page, context, errors } = await openReused(browser, `${srv.url}#view=train&panel=ablation&task=copy`);
  await waitReady(page);
  const step = await playTo(page, 400);
  const intact = await measured(page, step);
  assert.equal(intact.intactLoss, intact.ablatedLoss, 'nothing changed yet');
  assert.ok(intact.intactAccuracy > 0.9, `trained: ${intact.intactAccuracy}`);

  const one = await setAndMeasure(page, () => page.check('[name=zero-h1]'), step);
  assert.notEqual(one.ablatedLoss, one.intactLoss, 'one head off changes the loss');
  assert.equal(one.intactLoss, intact.intactLoss, 'the intact column is the same model');
  assert.match(one.text, /Head 1 is switched off/);
  assert.match(one.text, new RegExp(`loss goes from ${one.intactLoss.toFixed(3)} to ${one.ablatedLoss.toFixed(3)}`));

  for (const k of [2, 3, 4]) await page.check(`[name=zero-h${k}]`);
  await page.waitForFunction(() => /Heads 1, 2, 3, 4 are switched off/.test(document.querySelector('.ablation-explain').textContent));
  const none = await measured(page, step);
  assert.ok(none.ablatedLoss > none.intactLoss + 1, `no attention at all: ${none.ablatedLoss} vs ${none.intactLoss}`);
  assert.ok(none.ablatedAccuracy < 0.5, `the copy is gone: ${none.ablatedAccuracy}`);
  // The readout row of the effect table shows the same numbers.
  const lossRow = await page.locator('.ablation-effect tr[data-metric=loss] td').allTextContents();
  assert.equal(lossRow[0], none.intactLoss.toFixed(4));
  assert.equal(lossRow[1], none.ablatedLoss.toFixed(4));

  await page.focus('[data-action=ablation-reset]');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.querySelector('.ablation-panel').dataset.ablatedLoss === document.querySelector('.ablation-panel').dataset.intactLoss);
  assert.equal(await page.isChecked('[name=zero-h1]'), false);
  assert.deepEqual(errors, []);
  await context.close();
});

test('without the 1/sqrt(dk) scaling the softmax saturates, and the panel says so', async () => {
  const { page, context, errors } = await openReused(browser, `${srv.url}#view=train&panel=ablation`);
  await waitReady(page);
  const step = await playTo(page, 100);
  const r = await setAndMeasure(page, () => page.uncheck('[name=scale-scores]'), step);
  assert.ok(r.ablatedMaxWeight > r.intactMaxWeight, `largest weight ${r.intactMaxWeight} -> ${r.ablatedMaxWeight}`);
  assert.match(r.text, /saturates/);
  assert.match(r.text, new RegExp(`from ${r.intactMaxWeight.toFixed(3)} to ${r.ablatedMaxWeight.toFixed(3)}`));
  assert.deepEqual(errors, []);
  await context.close();
});

test('a broken mask lets the model read the future: accuracy on the future task jumps, and the panel explains the leak', async () => {
  const { page, context, errors } = await openReused(browser, `${srv.url}#view=train&panel=ablation&task=future`);
  await waitReady(page);
  let step = await playTo(page, 300);
  const honest = await measured(page, step);
  assert.ok(honest.intactAccuracy < 0.15, `a causal model is at chance on future: ${honest.intactAccuracy}`);
  // Masked cells are hatched under the causal mask: hovering one says so.
  await page.locator('.heatmaps canvas').first().focus();
  await page.keyboard.press('ArrowRight');
  assert.match(await page.textContent('.cell-readout'), /masked/);

  const broken = await setAndMeasure(page, () => page.selectOption('[name=mask-mode]', 'none'), step);
  assert.match(broken.text, /The mask leaks/);
  assert.match(broken.text, /read the future/);
  await page.keyboard.press('ArrowLeft');
  await page.keyboard.press('ArrowRight');
  await page.locator('.heatmaps canvas').first().focus();
  await page.keyboard.press('ArrowRight');
  assert.match(await page.textContent('.cell-readout'), /future key: the broken mask lets it through/);

  step = await playTo(page, step + 400);
  const cheat = await measured(page, step);
  assert.ok(cheat.ablatedAccuracy > 0.9, `with the leak the model reads the answer: ${cheat.ablatedAccuracy}`);
  assert.ok(cheat.intactAccuracy < 0.5, `the same weights under the causal mask: ${cheat.intactAccuracy}`);
  assert.match(cheat.text, new RegExp(`accuracy ${(100 * cheat.ablatedAccuracy).toFixed(1)}% with the leaking mask`));

  // The inverted mask leaks too; Reset keeps the choice (a new model under the same mask).
  await page.selectOption('[name=mask-mode]', 'inverted');
  await page.waitForFunction(() => /inverted mask/.test(document.querySelector('.ablation-explain').textContent));
  await page.click('[data-action=reset]');
  await waitForStep(page, 0);
  assert.equal(await page.inputValue('[name=mask-mode]'), 'inverted');
  assert.deepEqual(errors, []);
  await context.close();
});

test('the interventions live in the URL: a link sets them from the first heatmap, and the panel writes them back', async () => {
  const { page, context, errors } = await openReused(browser, `${srv.url}#view=train&panel=ablation&task=future&mask=none&scale-scores=0&heads-off=2`);
  await waitReady(page);
  // The first snapshot is already computed under the link's mask: future cells are not masked.
  await page.locator('.heatmaps canvas').first().focus();
  await page.keyboard.press('ArrowRight');
  assert.match(await page.textContent('.cell-readout'), /future key: the broken mask lets it through/);
  // The pattern figure draws the mask in effect: with it off, every pair, and no "never a later one".
  const T = 12;
  await page.waitForFunction((n) => document.querySelector('.attention-pattern')?.dataset.seen === String(n), T * T);
  assert.equal(await page.getAttribute('.attention-pattern', 'data-visible'), '1'.repeat(T * T));
  assert.match(await page.textContent('.pattern-note'), /^144 of 144 pairs visible: the mask is off/);
  await page.waitForSelector('.ablation-panel [name=zero-h2]');
  assert.equal(await page.inputValue('[name=mask-mode]'), 'none');
  assert.equal(await page.isChecked('[name=scale-scores]'), false);
  assert.equal(await page.isChecked('[name=zero-h2]'), true);
  await page.waitForFunction(() => /Head 2 is switched off/.test(document.querySelector('.ablation-explain').textContent));

  await page.check('[name=freeze-h3]');
  await page.waitForFunction(() => /heads-frozen=3(&|$)/.test(location.hash));
  await page.focus('[data-action=ablation-reset]');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => /mask=causal&scale-scores=1&heads-off=&heads-frozen=$/.test(location.hash));
  assert.equal(await page.isChecked('[name=zero-h2]'), false);
  // A hash typed by hand applies too.
  await page.evaluate(() => (location.hash = location.hash.replace('mask=causal', 'mask=inverted')));
  await page.waitForFunction(() => document.querySelector('[name=mask-mode]').value === 'inverted');
  await page.waitForFunction(() => /inverted mask/.test(document.querySelector('.ablation-explain').textContent));
  // Inverted: the query itself and every later key, T(T + 1)/2 pairs, the upper triangle.
  await page.waitForFunction(() => document.querySelector('.attention-pattern')?.dataset.mask === 'inverted');
  const upper = Array.from({ length: T * T }, (_, k) => (k % T >= Math.floor(k / T) ? '1' : '0')).join('');
  assert.equal(await page.getAttribute('.attention-pattern', 'data-visible'), upper);
  assert.match(await page.textContent('.pattern-note'), /^78 of 144 pairs visible: the inverted mask/);
  assert.deepEqual(errors, []);
  await context.close();
});
