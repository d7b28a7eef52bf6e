// An accessibility audit with axe-core (WCAG 2.0/2.1, levels A and AA) in Chromium: the page's
// three views (the trained view after training), the first screen (Start here) and each preset,
// and the element on a lesson page. Zero violations are allowed. The first screen's test also
// holds its layout: the presets above the fold, hidden settings, the phone's order.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { ARTIFACTS, audit, launch, lessonPage, openRecorded, pauseRun, readout, serveDistWith, waitForStep, waitReady, waitSelfPaused } from './harness.mjs';

let browser;
let srv;
test.before(async () => {
  srv = await serveDistWith({ 'lesson.html': lessonPage('./attention-playground.js', { attrs: 'seed="3" solved-at="0.1"' }) });
  browser = await launch();
});
test.after(async () => {
  await browser?.close();
  await srv?.close();
});

test('the page: the trained view after training, then the lesson view at its last stage, have no axe violations', async () => {
  // The page's CSP forbids inline scripts; the audit script is the test's, so it goes past it.
  const { context, page } = await openRecorded(browser, `${srv.url}index.html#seed=3&panel=all`, { bypassCSP: true });
  await waitReady(page);
  await page.click('[data-action=step10]');
  await waitForStep(page, 10);
  await page.click('[data-action=play]');
  // The default task is solved within 300 steps, and the run pauses itself: the note says at which
  // step, that it paused, and the next step to try.
  await waitSelfPaused(page);
  await page.waitForFunction(() => Number(document.querySelector('.timeline-panel')?.dataset.entries ?? 0) >= 2);
  const done = await page.$eval('.done-note', (el) => ({ hidden: el.hidden, kind: el.dataset.kind, step: Number(el.dataset.step), text: el.textContent }));
  assert.equal(done.hidden, false);
  assert.equal(done.kind, 'solved');
  assert.ok(done.step > 0 && done.step <= 300 && done.text.startsWith(`Solved at step ${done.step}`) && /paused itself/.test(done.text) && /Adam/.test(done.text) && /Next: /.test(done.text), JSON.stringify(done));
  assert.deepEqual(await audit(page), [], 'trained view');

  await page.click('[role=tab][data-view=lesson]');
  await page.waitForSelector('.stage[data-stage=tokens]');
  for (let i = 0; i < 12 && (await page.$('.stage-nav [data-action=next]:not([disabled])')); i++) {
    await page.focus('.stage-nav [data-action=next]');
    await page.keyboard.press('Enter');
  }
  assert.deepEqual(await audit(page), [], 'lesson view');
  await context.close();
});

test('shift, played until it pauses itself: Play goes on, and the Predictions panel\'s "✓ right" and "– not counted" differ in colour and mark with no axe violations', async () => {
  const { context, page, errors } = await openRecorded(browser, `${srv.url}index.html#seed=3&task=shift&panel=predictions`, { bypassCSP: true });
  await waitReady(page);
  await page.click('[data-action=play]');
  await waitSelfPaused(page);
  const done = await page.$eval('.done-note', (el) => ({ kind: el.dataset.kind, step: Number(el.dataset.step), text: el.textContent }));
  const paused = await readout(page);
  assert.ok(done.kind === 'solved' && done.text.startsWith(`Solved at step ${done.step}: `) && paused.status === 'paused' && paused.step >= done.step, JSON.stringify({ done, paused }));
  // Play goes on; the steps keep rising and the run does not pause itself again.
  await page.click('[data-action=play]');
  await waitForStep(page, paused.step + 30, { atLeast: true });
  assert.equal((await readout(page)).status, 'playing');
  await pauseRun(page);
  const { step } = await readout(page);
  await waitForStep(page, step, { sel: 'section.predictions-panel' });
  // Shift sets no answer at the first position: not counted; solved, the others are right.
  const verdicts = await page.$$eval('section.predictions-panel tbody tr', (trs) =>
    trs.map((tr) => {
      const td = tr.querySelector('td.verdict');
      const cs = getComputedStyle(td);
      return { verdict: tr.dataset.verdict, text: td.textContent, colour: cs.color, style: cs.fontStyle };
    }),
  );
  const right = verdicts.filter((v) => v.verdict === 'right');
  const none = verdicts.filter((v) => v.verdict === 'none');
  assert.ok(right.length > 0 && none.length > 0, JSON.stringify(verdicts));
  assert.ok(right.every((v) => v.text === '✓ right') && none.every((v) => v.text === '– not counted'), 'its own mark each');
  assert.ok(none.every((v) => right.every((r) => r.colour !== v.colour && r.style !== v.style)), `its own colour and style: ${JSON.stringify([right[0], none[0]])}`);
  // axe checks both colours' contrast on the panel's background.
  assert.deepEqual(await audit(page), [], 'the solved shift run');
  assert.deepEqual(errors, []);
  await context.close();
});

test('the first screen: Start here above the fold, each preset applied by a click with no axe violations, settings that do not apply hidden live, and on a phone the chart before the settings', async () => {
  // A first visit: no hash, the Start here preset (shift).
  const { context, page, errors } = await openRecorded(browser, `${srv.url}index.html`, { viewport: { width: 1366, height: 900 }, bypassCSP: true });
  await waitReady(page);
  assert.equal(await page.inputValue('select[name=task]'), 'shift');
  assert.equal(await page.getAttribute('a[data-preset=shift]', 'aria-current'), 'true');
  const cards = await page.$$eval('.start-here .start-card', (els) => els.map((el) => ({ id: el.querySelector('a').dataset.preset, bottom: el.getBoundingClientRect().bottom, height: el.getBoundingClientRect().height })));
  assert.equal(cards.length, 7);
  for (const c of cards) assert.ok(c.bottom <= 900 && c.height >= 60, `${c.id}: a big button above the fold (${JSON.stringify(c)})`);
  assert.deepEqual(await page.locator('.start-group h3').allTextContents(), ['Attention, trained', 'Depth and the induction head', 'A small GPT on text', 'Both ways: masks and windows']);
  assert.deepEqual(await audit(page), [], 'the default view');
  await page.screenshot({ path: path.join(ARTIFACTS, 'start-1366.png') });

  // Each preset, clicked anywhere on its card, sets what its link opens.
  for (const id of cards.map((c) => c.id)) {
    const href = await page.getAttribute(`a[data-preset=${id}]`, 'href');
    const box = await page.locator(`a[data-preset=${id}]`).evaluate((a) => a.closest('.start-card').getBoundingClientRect().toJSON());
    await page.mouse.click(box.x + box.width / 2, box.bottom - 8);
    await page.waitForFunction((id) => document.querySelector(`a[data-preset="${id}"]`).getAttribute('aria-current') === 'true', id);
    const task = new URLSearchParams(href.slice(1)).get('task');
    assert.equal(await page.inputValue('select[name=task]'), task, id);
    assert.match(await page.evaluate(() => location.hash), new RegExp(`&task=${task}&`), id);
    await waitReady(page);
    assert.deepEqual(await audit(page), [], `after the preset ${id}`);
  }

  // The window-depth preset set attention=window: the block's disclosure opened by itself, the
  // window shows, the stride (strided only) does not; full attention hides the window, strided
  // shows both.
  assert.equal(await page.$eval('details.block-settings', (d) => d.open), true);
  assert.deepEqual([await page.isVisible('[name=window]'), await page.isVisible('[name=stride]'), await page.isVisible('[name=maskRate]')], [true, false, false]);
  await page.selectOption('select[name=attention]', 'full');
  await page.waitForSelector('[name=window]', { state: 'hidden' });
  await page.selectOption('select[name=attention]', 'strided');
  await page.waitForSelector('[name=stride]', { state: 'visible' });
  assert.equal(await page.isVisible('[name=window]'), true);
  await page.selectOption('select[name=objective]', 'mlm');
  await page.waitForSelector('[name=maskRate]', { state: 'visible' });
  // Closed by the learner, the disclosure stays closed while no block setting leaves its default.
  await page.click('details.block-settings summary');
  await page.fill('[name=seed]', '5');
  await page.press('[name=seed]', 'Enter');
  await page.waitForFunction(() => /&seed=5&/.test(location.hash));
  assert.equal(await page.$eval('details.block-settings', (d) => d.open), false);
  assert.equal(await page.$eval('details.block-settings summary', (s) => s.textContent), 'Transformer block (3 changed)');

  // A phone: the Run box, then the loss chart and the heatmaps, then the settings.
  await page.setViewportSize({ width: 390, height: 844 });
  await page.click('a[data-preset=shift]');
  await waitReady(page);
  const top = (sel) => page.$eval(sel, (el) => el.getBoundingClientRect().top + window.scrollY);
  const [run, chart, heat, config] = [await top('fieldset.run'), await top('.loss-panel'), await top('.heatmaps'), await top('fieldset.config')];
  assert.ok(run < chart && chart < heat && heat < config, `run ${run}, chart ${chart}, heatmaps ${heat}, settings ${config}`);
  assert.ok(run < 844, `the Run box starts on the first screen (${run})`);
  assert.deepEqual(await audit(page), [], 'the phone layout');
  await page.screenshot({ path: path.join(ARTIFACTS, 'start-390.png') });
  assert.deepEqual(errors, []);
  await context.close();
});

test('the lesson view with two heads, a drawn mask with a fully masked row, positions and two sentences: no axe violations', async () => {
  // 6 + 3 tokens; query 1 may read no key.
  const mask = Array.from({ length: 9 }, (_, i) => (i === 1 ? '1' : '0').repeat(9)).join('.');
  const hash = `view=lesson&stage=9&lesson-heads=2&lesson-positions=1&second-sentence=a+dog+ran&lesson-mask=${mask}`;
  const { context, page } = await openRecorded(browser, `${srv.url}index.html#${hash}`, { bypassCSP: true });
  await page.waitForSelector('[data-compare=sentences] table[data-sentence="2"]');
  await page.waitForSelector('.lesson-empty-rows');
  assert.deepEqual(await audit(page), []);
  await context.close();
});

test('the block view with RoPE, GQA, a norm and SwiGLU: no axe violations', async () => {
  const hash = 'view=block&positions=rope&kv-heads=2&block-norm=rmsnorm&block-ffn=swiglu';
  const { context, page } = await openRecorded(browser, `${srv.url}index.html#${hash}`, { bypassCSP: true });
  await page.waitForSelector('.view-block figure[data-figure=rope]');
  assert.deepEqual(await audit(page), []);
  await context.close();
});

test('the block view at its defaults (a LayerNorm and a GELU FFN, the stage buttons) and without norm and FFN (the skipped stages drawn dashed): no axe violations', async () => {
  const { context, page } = await openRecorded(browser, `${srv.url}index.html#view=block`, { bypassCSP: true });
  await page.waitForSelector('.view-block .block-stage[data-stage=ffn] figure[data-matrix=ffnOut]');
  await page.click('.block-nav [data-action=block-next]');
  assert.deepEqual(await audit(page), []);
  await context.close();
  const none = await openRecorded(browser, `${srv.url}index.html#view=block&block-norm=none&block-ffn=none`, { bypassCSP: true });
  await none.page.waitForSelector('.view-block .block-stage[data-skipped=true]');
  assert.deepEqual(await audit(none.page), []);
  await none.context.close();
});

test('the element on a lesson page, after training: no axe violations', async () => {
  const { context, page } = await openRecorded(browser, `${srv.url}lesson.html`);
  await page.waitForFunction(() => window.__events.some((e) => e.type === 'ready'));
  await page.evaluate(() => document.getElementById('pg').play());
  await page.waitForFunction(() => window.__events.some((e) => e.type === 'solved'));
  await page.evaluate(() => document.getElementById('pg').pause());
  assert.deepEqual(await audit(page), []);
  await context.close();
});
