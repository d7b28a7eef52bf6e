// The smoke tests in the second engine, Firefox ESR over WebDriver BiDi (tests/e2e/firefox.mjs):
// the page's Play until the loss falls, the element reaching `solved`, the element loaded from
// another origin as a CDN serves it, the Speculative decoding panel (a bigram draft, greedy text,
// the exactness check) and the "Fill in the blanks" panel of a masked model. (The npm-installed
// Vite app runs in Firefox in package.test.mjs.) Chromium keeps the full suite.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DIST, RECORD_EVENTS, lessonPage, serve, serveDistWith, serveSite } from './harness.mjs';
import { launchFirefox, openFirefoxPage, waitFor } from './firefox.mjs';

let browser;
let srv;
test.before(async () => {
  srv = await serveDistWith({ 'lesson.html': lessonPage('./attention-playground.js', { attrs: 'seed="3" solved-at="0.1"' }) });
  browser = await launchFirefox();
});
test.after(async () => {
  await browser?.close();
  await srv?.close();
});

test('Firefox: the page loads the relaxed-SIMD core, Play trains until solved and pauses itself, the loss falls, the heatmaps redraw', async () => {
  const { page, errors } = await openFirefoxPage(browser, `${srv.url}index.html`);
  await waitFor(page, () => document.querySelector('.readout')?.dataset.status === 'paused');
  assert.match(await page.$eval('.loading', (el) => el.textContent), /WebAssembly relaxed SIMD build/);
  const start = await page.$eval('.readout', (el) => ({ step: Number(el.dataset.step), loss: Number(el.dataset.loss) }));
  assert.equal(start.step, 0);
  await page.click('[data-action=play]');
  // Solved (the first visit's shift task), the run pauses itself and says so.
  await waitFor(page, () => document.querySelector('.done-note')?.dataset.paused === 'self' && document.querySelector('.readout').dataset.status === 'paused');
  assert.match(await page.$eval('.done-note', (el) => el.textContent), /^Solved at step \d+: .*paused itself/);
  const end = await page.$eval('.readout', (el) => ({ step: Number(el.dataset.step), loss: Number(el.dataset.loss) }));
  assert.ok(end.loss < start.loss / 4, `loss ${start.loss} -> ${end.loss} after ${end.step} steps`);
  const frames = await page.$eval('.heatmaps', (el) => Number(el.dataset.frames));
  assert.ok(frames > 1, `heatmap frames: ${frames}`);
  assert.deepEqual(errors, []);
  await page.close();
});

test('Firefox: the Fill in the blanks panel of a masked text model shows 5 guesses per blank, and a clicked character becomes one', async () => {
  const { page, errors } = await openFirefoxPage(browser, `${srv.url}index.html#task=text&objective=mlm&seq-len=16&panel=fill`);
  const ready = (n) => waitFor(page, (k) => {
    const d = document.querySelector('section.fill-panel')?.dataset;
    return d?.state === 'ready' && d.objective === 'mlm' && Number(d.blanks) === k;
  }, n);
  await waitFor(page, () => document.querySelector('section.fill-panel')?.dataset.state === 'ready');
  const n = await page.$eval('section.fill-panel', (el) => Number(el.dataset.blanks));
  await page.click('section.fill-panel .fill-char[aria-pressed=false]');
  await ready(n + 1);
  const rows = await page.$$eval('section.fill-panel tbody tr', (trs) => trs.map((tr) => [...tr.querySelectorAll('td.guess')].map((td) => Number(td.dataset.prob))));
  assert.equal(rows.length, n + 1);
  for (const probs of rows) {
    assert.equal(probs.length, 5);
    assert.ok(probs.every((p) => p > 0 && p <= 1) && probs.reduce((a, b) => a + b, 0) <= 1 + 1e-6, String(probs));
  }
  assert.deepEqual(errors, []);
  await page.close();
});

test('Firefox: the element on a lesson page reaches solved through its API', async () => {
  const { page, errors } = await openFirefoxPage(browser, `${srv.url}lesson.html`, { init: RECORD_EVENTS });
  await waitFor(page, () => window.__events.some((e) => e.type === 'ready'));
  await page.evaluate(() => document.getElementById('pg').play());
  await waitFor(page, () => window.__events.some((e) => e.type === 'solved'));
  const solved = await page.evaluate(() => window.__events.find((e) => e.type === 'solved'));
  assert.ok(solved.loss < 0.1 && solved.step > 0, JSON.stringify(solved));
  assert.ok(await page.evaluate(() => window.__events.filter((e) => e.type === 'step').length) > 0);
  assert.deepEqual(errors, []);
  await page.close();
});

test('Firefox: the element from another origin (a CDN with CORS) starts its worker through a blob: bootstrap and trains', async () => {
  // Another loopback address is another origin; the CDN sends CORS headers as npm CDNs do.
  const cdn = await serve(DIST, { host: '127.0.0.2', headers: { 'access-control-allow-origin': '*' } });
  const site = await serveSite({ 'lesson.html': lessonPage(`${cdn.url}attention-playground.js`, { attrs: 'seed="3" solved-at="0.1"' }) });
  try {
    const { page, errors } = await openFirefoxPage(browser, `${site.url}lesson.html`, { init: RECORD_EVENTS });
    await waitFor(page, () => window.__events.some((e) => e.type === 'ready' || e.type === 'error'));
    assert.deepEqual(await page.evaluate(() => window.__events.filter((e) => e.type === 'error')), []);
    await page.evaluate(() => document.getElementById('pg').play());
    await waitFor(page, () => window.__events.some((e) => e.type === 'solved'));
    // Everything of the playground came from the CDN's origin; the page's origin served the page.
    assert.deepEqual(site.requests.filter((p) => !p.endsWith('lesson.html')), []);
    assert.ok(cdn.requests.some((p) => p.endsWith('/wasm/attention-core-relaxed.wasm')), `from the CDN: ${cdn.requests}`);
    assert.deepEqual(errors, []);
    await page.close();
  } finally {
    await site.close();
    await cdn.close();
  }
});

test('Firefox: the Speculative decoding panel: the bigram draft, greedy text equal to plain decoding with its fates, the exactness check\'s p-value', async () => {
  const hash = 'view=train&panel=speculative&task=text&d-model=32&heads=2&seq-len=16&batch=8&lr=0.01&seed=3&layers=2&residual=1';
  const { page, errors } = await openFirefoxPage(browser, `${srv.url}index.html#${hash}`);
  const panel = '.speculative-panel';
  const set = (selector, value) =>
    page.$eval(
      selector,
      (el, v) => {
        el.value = v;
        el.dispatchEvent(new Event('input', { bubbles: true }));
      },
      String(value),
    );
  await waitFor(page, () => document.querySelector('.readout')?.dataset.status === 'paused');
  await page.click('[data-action=step10]');
  await waitFor(page, () => Number(document.querySelector('.readout').dataset.step) === 10);
  await page.click(`${panel} [data-action=draft-bigram]`);
  await waitFor(page, () => document.querySelector('.speculative-panel').dataset.draft === 'bigram' && document.querySelector('.speculative-panel').dataset.state === 'done');
  await set('[name=spec-chars]', 40);
  await set('[name=spec-temperature]', 0);
  await page.click(`${panel} [data-action=speculate]`);
  await waitFor(page, () => document.querySelector('.speculative-panel').dataset.generated === '40' && document.querySelector('.speculative-panel').dataset.state === 'done');
  const out = await page.$eval(`${panel} .spec-output`, (el) => ({ text: el.dataset.text, plain: el.dataset.plain, fates: Array.from(el.querySelectorAll('.spec-char'), (c) => c.dataset.fate) }));
  assert.equal(out.text, out.plain, 'greedy speculative text = plain greedy text');
  assert.equal(out.fates.length, 40);
  assert.ok(out.fates.every((f) => ['accepted', 'resampled', 'bonus'].includes(f)), out.fates.join(' '));
  await set('[name=spec-temperature]', 1);
  await set('[name=spec-samples]', 500);
  await page.click(`${panel} [data-action=exactness]`);
  await waitFor(page, () => document.querySelectorAll('.speculative-panel .spec-histogram').length === 2);
  const p = await page.$$eval(`${panel} .spec-histogram`, (figs) => figs.map((f) => Number(f.dataset.pValue)));
  assert.ok(p.every((v) => v >= 0 && v <= 1), JSON.stringify(p));
  assert.deepEqual(errors, []);
  await page.close();
});
