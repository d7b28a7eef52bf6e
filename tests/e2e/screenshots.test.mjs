// Screenshots of both views at desktop and phone width, saved to tests/e2e/artifacts/ for a human
// to look at; plus the checks a screenshot cannot make: nothing wider than the screen at 360 px,
// and reduced motion honoured.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openPage, RECORD_WORKER, waitReady, waitSelfPaused, screenshot, useBrowser } from './harness.mjs';

let srv;
let browser;
useBrowser((s, b) => {
  srv = s;
  browser = b;
});

const SIZES = [
  { name: 'desktop', width: 1280, height: 900 },
  { name: '360', width: 360, height: 780 },
];

for (const size of SIZES) {
  test(`screenshots at ${size.name} (${size.width} px): trained view and lesson view`, async () => {
    const { page, context, errors } = await openPage(browser, `${srv.url}#view=train`, size);
    await waitReady(page);
    await page.click('[data-action=play]');
    // Trained: solved pauses the run itself (the loss at the pause is one batch's, so not the wait).
    await waitSelfPaused(page);
    await page.locator('.heatmaps canvas').nth(1).focus();
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('ArrowRight');
    // The cell readout names the focused cell (query 2, key 1) before the window is measured.
    await page.waitForFunction(() => /query 2 \(\d+\) → key 1 \(\d+\)/.test(document.querySelector('.cell-readout').textContent));
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `train view is ${overflow} px wider than the window`);
    await screenshot(page, `train-${size.name}.png`);

    await page.click('[data-view=lesson]');
    await page.selectOption('[name=lessonMask]', 'causal');
    await page.fill('[name=lessonHeads]', '2');
    // Enter on the focused button, not a click at coordinates: the page smooth-scrolls to each new
    // stage, and on a loaded machine a click can land while the button is still moving.
    await page.focus('[data-action=next]');
    for (let i = 1; i < 10; ++i) {
      await page.keyboard.press('Enter');
      await page.waitForFunction((n) => document.querySelector('.stage-label').textContent.startsWith(`Stage ${n} of 10`), i + 1);
    }
    await page.waitForSelector('table[data-matrix=output]');
    await page.evaluate(() => window.scrollTo(0, 0));
    const overflow2 = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow2 <= 0, `lesson view is ${overflow2} px wider than the window`);
    await screenshot(page, `lesson-${size.name}.png`);
    assert.deepEqual(errors, []);
    await context.close();
  });
}

test('prefers-reduced-motion: no smooth scrolling or transitions, slower live updates, and it says so', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, reducedMotion: 'reduce' });
  await context.addInitScript(RECORD_WORKER);
  const page = await context.newPage();
  // The future task is never solved, so only the click pauses the run.
  await page.goto(`${srv.url}#view=train&task=future`);
  await waitReady(page);
  assert.match(await page.textContent('.heat-panel'), /Reduced motion is on/);
  await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  const frames = () => page.evaluate(() => Number(document.querySelector('.heatmaps').dataset.frames));
  const snapshots = () => page.evaluate(() => window.__worker.snapshots.length);
  const [f0, n0] = [await frames(), await snapshots()];
  await page.click('[data-action=play]');
  // Still updates: three redraws while playing (a guard: without them this times out).
  await page.waitForFunction((f) => Number(document.querySelector('.heatmaps').dataset.frames) >= f + 3, f0);
  await page.click('[data-action=play]');
  await page.waitForSelector('.readout[data-status="paused"]');
  const [f1, n1] = [await frames(), await snapshots()];
  // Slower: the page asks the worker for progress at most every 500 ms (the default is 50 ms), and
  // redraws only for something new (a snapshot, or Play's status change). The redraws per second
  // this gives are a timing: bench/browser_bench.mjs reports them.
  const play = await page.evaluate(() => window.__worker.sent.filter((m) => m.type === 'play'));
  assert.deepEqual(play, [{ type: 'play', intervalMs: 500 }]);
  assert.ok(f1 - f0 >= 3, 'still updates');
  assert.ok(f1 - f0 <= n1 - n0 + 1, `${f1 - f0} redraws for ${n1 - n0} snapshots`);
  const behaviour = await page.evaluate(() => getComputedStyle(document.documentElement).scrollBehavior);
  assert.equal(behaviour, 'auto');
  await context.close();
});
