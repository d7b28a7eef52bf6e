// View 1 end to end: load, train, step, reset, heatmaps, keyboard, long tasks, worker crash.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openPage, waitReady, readout, useBrowser } from './harness.mjs';

let srv;
let browser;
useBrowser((s, b) => {
  srv = s;
  browser = b;
});

/** PNG data URLs of every heatmap canvas (what the learner sees). */
const heatmapPixels = (page) => page.$$eval('.heatmaps canvas', (cs) => cs.map((c) => c.toDataURL()));

/** Waits until the heatmaps have been drawn for the current snapshot. */
async function settle(page) {
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
}

test('the page loads with no console errors and no external requests', async () => {
  const { page, context, errors, external } = await openPage(browser, `${srv.url}#view=train`);
  await waitReady(page);
  assert.match(await page.textContent('.loading'), /Core loaded \(WebAssembly SIMD build\)/);
  assert.equal(await page.locator('.heatmaps canvas').count(), 5, '4 heads + the average');
  await page.click('[data-action=step10]');
  await page.waitForFunction(() => document.querySelector('.readout').dataset.step === '10');
  await page.click('[data-view=lesson]');
  await page.waitForSelector('.stage[data-stage=tokens]');
  assert.deepEqual(errors, []);
  assert.deepEqual(external, []);
  const wasm = srv.requests.filter((p) => p.endsWith('.wasm'));
  assert.ok(wasm.length > 0 && wasm.every((p) => p.startsWith('/course/lesson-7/playground/wasm/')), `wasm from the sub-path: ${wasm}`);
  await context.close();
});

test('Play trains the repeat task to loss < 0.1 within 20 s, and the heatmaps change', async (t) => {
  const { page, context, errors } = await openPage(browser, `${srv.url}#view=train`);
  await waitReady(page);
  await settle(page);
  const before0 = await heatmapPixels(page);
  assert.equal((await readout(page)).step, 0);
  const t0 = Date.now();
  await page.click('[data-action=play]');
  await page.waitForFunction(() => Number(document.querySelector('.readout').dataset.loss) < 0.1 && document.querySelector('.readout').dataset.step !== '0', null, { timeout: 20000 });
  const seconds = (Date.now() - t0) / 1000;
  t.diagnostic(`loss < 0.1 after ${seconds} s`);
  await page.click('[data-action=play]'); // pause
  await page.waitForSelector('.readout[data-status="paused"]');
  await settle(page);
  const r = await readout(page);
  assert.ok(r.loss < 0.1 && r.step > 0, `loss ${r.loss} at step ${r.step} after ${seconds} s`);
  const after0 = await heatmapPixels(page);
  assert.equal(after0.length, before0.length);
  const changed = after0.filter((p, i) => p !== before0[i]).length;
  assert.equal(changed, after0.length, `every heatmap changed (${changed}/${after0.length})`);
  // The chart got the history: uPlot drew a series path.
  assert.ok((await page.locator('.chart canvas').count()) > 0);
  assert.deepEqual(errors, []);
  await context.close();
});

test('Step 1 advances exactly one step, Step 10 ten; Reset returns to step 0 with loss near ln(vocab)', async () => {
  const { page, context, errors } = await openPage(browser, `${srv.url}#view=train&vocab=64`);
  await waitReady(page);
  await settle(page);
  const initial = await heatmapPixels(page);
  const r0 = await readout(page);
  assert.equal(r0.step, 0);
  assert.ok(Math.abs(r0.loss - Math.log(64)) < 0.4, `loss at init ${r0.loss} vs ln 64 = ${Math.log(64)}`);

  await page.click('[data-action=step1]');
  await page.waitForFunction(() => document.querySelector('.readout').dataset.step !== '0');
  assert.equal((await readout(page)).step, 1);
  await page.click('[data-action=step1]');
  await page.waitForFunction(() => document.querySelector('.readout').dataset.step !== '1');
  assert.equal((await readout(page)).step, 2);
  await page.click('[data-action=step10]');
  await page.waitForFunction(() => document.querySelector('.readout').dataset.step !== '2');
  assert.equal((await readout(page)).step, 12);

  // Train a while, then Reset.
  await page.click('[data-action=play]');
  await page.waitForFunction(() => Number(document.querySelector('.readout').dataset.step) > 100, null, { timeout: 20000 });
  await page.click('[data-action=reset]');
  await page.waitForFunction(() => document.querySelector('.readout').dataset.step === '0' && document.querySelector('.readout').dataset.status === 'paused');
  const r1 = await readout(page);
  assert.ok(Math.abs(r1.loss - Math.log(64)) < 0.4, `loss after reset ${r1.loss}`);
  assert.equal(r1.loss, r0.loss, 'same seed, same initial loss');
  await settle(page);
  assert.deepEqual(await heatmapPixels(page), initial, 'same seed, same initial heatmaps');
  assert.match(await page.textContent('.readout'), /steps\/s/);
  assert.deepEqual(errors, []);
  await context.close();
});

test('no main-thread long task > 50 ms while training, and >= 10 heatmap redraws per second', async (t) => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  await context.addInitScript(() => {
    window.__longTasks = [];
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) window.__longTasks.push(e.duration);
    }).observe({ type: 'longtask', buffered: true });
    // Long animation frames say which script a long task ran, for the failure message.
    window.__frames = [];
    new PerformanceObserver((list) => {
      for (const e of list.getEntries()) {
        if (e.duration > 50) window.__frames.push(`${Math.round(e.duration)} ms (render ${Math.round(e.renderStart ? e.startTime + e.duration - e.renderStart : 0)} ms): ${e.scripts.map((s) => `${s.invoker} ${Math.round(s.duration)} ms`).join(', ')}`);
      }
    }).observe({ type: 'long-animation-frame' });
  });
  const page = await context.newPage();
  // The default config, as a newcomer meets it. Long tasks are wall time, so a machine busy with
  // other work can stretch a frame of a few ms of script past 50 ms.
  await page.goto(`${srv.url}#view=train`);
  await waitReady(page);
  await settle(page);
  // Play and Pause from the keyboard: Playwright's mouse click first waits for the button to be
  // stable with its own requestAnimationFrame callback, which is itself a long task in a loaded
  // browser and would be counted against the page.
  await page.evaluate(() => document.querySelector('[data-action=play]').focus());
  await page.evaluate(() => (window.__longTasks.length = window.__frames.length = 0)); // only while training
  await page.keyboard.press('Space');
  // Count redraws from inside the page, so that no Playwright call runs during the window.
  const fps = await page.evaluate(
    () =>
      new Promise((resolve) => {
        setTimeout(() => {
          const grid = document.querySelector('.heatmaps');
          const f0 = Number(grid.dataset.frames);
          const t0 = performance.now();
          setTimeout(() => resolve(((Number(grid.dataset.frames) - f0) * 1000) / (performance.now() - t0)), 3000);
        }, 500);
      }),
  );
  // The controls stay responsive: the pause key press is handled right away.
  await page.keyboard.press('Space');
  await page.waitForSelector('.readout[data-status="paused"]', { timeout: 2000 });
  const long = await page.evaluate(() => window.__longTasks);
  const frames = await page.evaluate(() => window.__frames);
  const draws = await page.evaluate(() => performance.getEntriesByName('playground:draw').map((e) => e.duration));
  t.diagnostic(`redraw script time: max ${Math.max(...draws).toFixed(1)} ms, mean ${(draws.reduce((a, b) => a + b, 0) / draws.length).toFixed(1)} ms`);
  const charts = await page.evaluate(() => performance.getEntriesByName('playground:chart').map((e) => Math.round(e.duration)));
  t.diagnostic(`chart redraws (ms): ${charts}`);
  t.diagnostic(`heatmap redraws/s ${fps.toFixed(1)}; long tasks ${JSON.stringify(long)}; long frames ${JSON.stringify(frames)}`);
  assert.deepEqual(long.filter((d) => d > 50), [], `long tasks: ${long}; long animation frames: ${frames}`);
  assert.ok(fps >= 10, `heatmap redraws per second: ${fps.toFixed(1)}`);
  await context.close();
});

test('heatmap cells: hover and keyboard show "query i (token) → key j (token): weight"', async () => {
  const { page, context } = await openPage(browser, `${srv.url}#view=train&sample=3%2014%2015%209`);
  await waitReady(page);
  await settle(page);
  const canvas = page.locator('.heatmaps canvas').first();
  await canvas.focus();
  assert.match(await page.textContent('.cell-readout'), /^Head 1: query 0 \(3\) → key 0 \(3\): 1\.0000$/);
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowRight');
  assert.match(await page.textContent('.cell-readout'), /^Head 1: query 2 \(15\) → key 1 \(14\): 0\.\d{4}$/);
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowRight');
  assert.match(await page.textContent('.cell-readout'), /query 2 \(15\) → key 3 \(9\): masked/);
  // The accessible text follows the keyboard.
  assert.match(await page.textContent('[aria-live=polite].visually-hidden'), /query 2 \(15\) → key 3 \(9\)/);
  // Hover: the centre of the last cell of the average heatmap.
  const avg = page.locator('.heatmaps canvas[data-head=avg]');
  await page.keyboard.press('Tab');
  await avg.scrollIntoViewIfNeeded();
  const box = await avg.boundingBox();
  await page.mouse.move(box.x + box.width - 8, box.y + box.height - 8);
  assert.match(await page.textContent('.cell-readout'), /^Average of heads: query 3 \(9\) → key 3 \(9\): 0\.\d{4}$/);
  await context.close();
});

test('an invalid config shows the core message next to the control; fixing it recovers', async () => {
  const { page, context, errors } = await openPage(browser, `${srv.url}#view=train`);
  await waitReady(page);
  await page.fill('[name=dModel]', '30');
  await page.press('[name=dModel]', 'Enter');
  await page.locator('[name=dModel]').blur();
  const msg = page.locator('.field[data-key=dModel] .field-msg');
  await page.waitForFunction(() => document.querySelector('.field[data-key=dModel] .field-msg').textContent !== '');
  assert.match(await msg.textContent(), /^dModel \(30\) must be divisible by nHeads \(4\)$/);
  assert.equal(await page.getAttribute('[name=dModel]', 'aria-invalid'), 'true');
  assert.equal(await page.isDisabled('[data-action=play]'), true);
  await page.fill('[name=nHeads]', '3');
  await page.locator('[name=nHeads]').blur();
  await page.waitForSelector('.readout[data-status="paused"]');
  assert.equal(await msg.textContent(), '');
  assert.equal(await page.locator('.heatmaps canvas').count(), 4, '3 heads + the average');
  assert.match(await page.evaluate(() => location.hash), /dmodel=30&heads=3/);
  assert.deepEqual(errors, []);
  await context.close();
});

test('a worker crash shows a message and Restart brings training back', async () => {
  const { page, context, errors } = await openPage(browser, `${srv.url}#view=train`);
  await waitReady(page);
  await page.click('[data-action=step10]');
  await page.waitForFunction(() => document.querySelector('.readout').dataset.step === '10');
  const worker = page.workers()[0];
  await worker.evaluate(() => setTimeout(() => {
    throw new Error('simulated crash');
  }));
  await page.waitForSelector('.problem[data-kind=crash]:not([hidden])');
  assert.match(await page.textContent('.problem'), /worker stopped unexpectedly.*simulated crash/);
  assert.equal(await page.isDisabled('[data-action=play]'), true);
  await page.click('[data-action=restart]');
  await waitReady(page);
  assert.equal((await readout(page)).step, 0);
  assert.equal(await page.isHidden('.problem'), true);
  await page.click('[data-action=step1]');
  await page.waitForFunction(() => document.querySelector('.readout').dataset.step === '1');
  assert.deepEqual(errors.filter((e) => !/simulated crash/.test(e)), []);
  await context.close();
});

test('the loss chart: exact value on hover, and the log-scale toggle (mirrored in the hash)', async () => {
  const { page, context, errors } = await openPage(browser, `${srv.url}#view=train`);
  await waitReady(page);
  await page.click('[data-action=step10]');
  await page.waitForFunction(() => document.querySelector('.readout').dataset.step === '10');
  await page.click('[data-action=step10]');
  await page.waitForFunction(() => document.querySelector('.readout').dataset.step === '20');
  const over = page.locator('.chart .u-over');
  const box = await over.boundingBox();
  await page.mouse.move(box.x + box.width - 2, box.y + box.height / 2);
  const values = await page.locator('.chart .u-legend .u-value').allTextContents();
  assert.equal(values[0], '20', `hovered step: ${values}`);
  assert.equal(Number(values[1]), Number((await readout(page)).loss.toPrecision(7)), `hovered loss ${values[1]} is the loss of step 20`);
  assert.equal(await page.getAttribute('.chart', 'data-scale'), 'log');
  await page.uncheck('[name=logY]');
  await page.waitForFunction(() => /logy=0/.test(location.hash));
  assert.equal(await page.getAttribute('.chart', 'data-scale'), 'linear');
  assert.deepEqual(errors, []);
  await context.close();
});

test('the scalar build (?core=scalar, what browsers without SIMD get) trains too', async () => {
  const { page, context, errors } = await openPage(browser, `${srv.url.replace(/\/$/, '/index.html')}?core=scalar#view=train`);
  await waitReady(page);
  assert.match(await page.textContent('.loading'), /scalar WebAssembly build/);
  assert.ok(srv.requests.some((p) => p.endsWith('/wasm/attention-core-scalar.wasm')));
  await page.evaluate(() => document.querySelector('[data-action=play]').click());
  await page.waitForFunction(() => Number(document.querySelector('.readout').dataset.loss) < 0.1 && document.querySelector('.readout').dataset.step !== '0', null, { timeout: 20000 });
  assert.deepEqual(errors, []);
  await context.close();
});

test('training goes on behind the lesson view, and the heatmaps catch up on return', async () => {
  const { page, context, errors } = await openPage(browser, `${srv.url}#view=train`);
  await waitReady(page);
  await page.evaluate(() => document.querySelector('[data-action=play]').click());
  await page.click('[data-view=lesson]');
  const f0 = Number(await page.getAttribute('.heatmaps', 'data-frames'));
  const s0 = (await readout(page)).step;
  await page.waitForTimeout(1000);
  assert.equal(Number(await page.getAttribute('.heatmaps', 'data-frames')), f0, 'no redraws while hidden');
  assert.ok((await readout(page)).step > s0, 'still training');
  await page.click('[data-view=train]');
  await page.waitForFunction((f) => Number(document.querySelector('.heatmaps').dataset.frames) > f, f0);
  await page.evaluate(() => document.querySelector('[data-action=play]').click());
  assert.deepEqual(errors, []);
  await context.close();
});

test('every task can be chosen: its explanation shows, the hash follows, and it trains', async () => {
  const { page, context, errors } = await openPage(browser, `${srv.url}#view=train`);
  await waitReady(page);
  const explanations = new Set();
  for (const task of ['shift', 'copy', 'reverse', 'sort', 'future', 'repeat']) {
    await page.selectOption('select[name=task]', task);
    await page.waitForFunction((t) => location.hash.includes(`task=${t}`), task);
    await page.waitForFunction(() => document.querySelector('.readout').dataset.step === '0');
    const help = await page.textContent('.task-help');
    assert.ok(help.length > 40, `${task}: explanation "${help}"`);
    explanations.add(help);
  }
  assert.equal(explanations.size, 6, 'one explanation per task');
  await page.selectOption('select[name=task]', 'copy');
  await page.waitForFunction(() => location.hash.includes('task=copy'));
  const start = (await readout(page)).loss;
  await page.click('[data-action=step10]');
  await page.waitForFunction(() => document.querySelector('.readout').dataset.step === '10');
  await page.evaluate(() => document.querySelector('[data-action=play]').click());
  await page.waitForFunction((l) => Number(document.querySelector('.readout').dataset.loss) < l / 4, start, { timeout: 20000 });
  await page.evaluate(() => document.querySelector('[data-action=play]').click());
  assert.deepEqual(errors, []);
  await context.close();
});
