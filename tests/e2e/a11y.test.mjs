// An accessibility audit with axe-core (WCAG 2.0/2.1, levels A and AA) in Chromium: the page's
// three views (the trained view after training), and the element on a lesson page. Zero
// violations are allowed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { audit, launch, lessonPage, openRecorded, serveDistWith, waitForStep, waitReady } from './harness.mjs';

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
  await waitForStep(page, 300, { atLeast: true });
  await page.click('[data-action=play]');
  await page.waitForFunction(() => document.querySelector('.readout').dataset.status === 'paused');
  await page.waitForFunction(() => Number(document.querySelector('.timeline-panel')?.dataset.entries ?? 0) >= 2);
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
  const hash = 'view=block&positions=rope&kv-heads=2&norm=rmsnorm&ffn=swiglu';
  const { context, page } = await openRecorded(browser, `${srv.url}index.html#${hash}`, { bypassCSP: true });
  await page.waitForSelector('.view-block figure[data-figure=rope]');
  assert.deepEqual(await audit(page), []);
  await context.close();
});

test('the block view at its defaults (no norm, no FFN: the skipped stages drawn dashed): no axe violations', async () => {
  const { context, page } = await openRecorded(browser, `${srv.url}index.html#view=block`, { bypassCSP: true });
  await page.waitForSelector('.view-block .block-stage[data-skipped=true]');
  assert.deepEqual(await audit(page), []);
  await context.close();
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
