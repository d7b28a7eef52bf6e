// The Speculative decoding panel and the block view's tiled step in the page. A GPT-preset text
// model trained 30 steps is the target; without a draft, generating gets one sentence; a draft
// model trained in the tab with one click; at temperature 0 the speculative text equals the
// Generate panel's greedy text character for character (values, not a sentence), with each
// character's fate coloured and a legend; the acceptance table; the exactness check's histograms
// with their p-value (1000 samples: enough for the figure, short in time). Then one head of the
// block computed tile by tile, equal to the plain softmax (a11y.test.mjs audits the block view with
// it). Waits are guards only (GUARD_MS); no duration is asserted.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { audit, openReused, useBrowser, waitForStep, waitReady } from './harness.mjs';

/** The "Train a GPT on text" preset's model (presets.ts), on the Speculative decoding panel. */
const GPT = 'task=text&d-model=64&heads=4&seq-len=64&batch=16&lr=0.003&seed=0&layers=2&residual=1&positions=rope&norm=layernorm&ffn=gelu';
const STEPS = 30;
const CHARS = 60;
const panel = '.speculative-panel';

let srv;
let browser;
useBrowser((s, b) => {
  srv = s;
  browser = b;
});

/** Sets an input's value as the learner would (an input event, then change). */
const setValue = (page, selector, value) =>
  page.$eval(
    selector,
    (el, v) => {
      el.value = v;
      el.dispatchEvent(new Event('input', { bubbles: true }));
      el.dispatchEvent(new Event('change', { bubbles: true }));
    },
    String(value),
  );

test('Speculative decoding: greedy text identical to plain greedy generation, token fates coloured, the acceptance table, the exactness check\'s p-value', async () => {
  const { page, context, errors } = await openReused(browser, `${srv.url}#view=train&panel=speculative&${GPT}`, { bypassCSP: true });
  await waitReady(page);
  await page.waitForSelector(`${panel} .spec-body:not([hidden])`);
  for (let i = 0; i < STEPS / 10; ++i) {
    await page.click('[data-action=step10]');
    await waitForStep(page, (i + 1) * 10);
  }
  // No draft yet: one sentence, the panel keeps working.
  await page.click(`${panel} [data-action=speculate]`);
  await page.waitForSelector(`${panel}[data-state=failed]`);
  assert.match(await page.textContent(`${panel} .problem`), /^Nothing was generated: No draft yet/);

  await page.click(`${panel} [data-action=draft-model]`);
  await page.waitForSelector(`${panel}[data-draft=model][data-state=done]`);
  assert.match(await page.textContent(`${panel} .spec-draft`), /1 layer, d_model 32, 2 heads, trained 300 steps/);

  await page.fill('[name=spec-chars]', String(CHARS));
  await page.fill('[name=spec-temperature]', '0');
  await setValue(page, '[name=spec-n]', 4);
  assert.equal(await page.textContent(`${panel} .spec-n-value`), '4');
  await page.click(`${panel} [data-action=speculate]`);
  await page.waitForSelector(`${panel}[data-state=done][data-generated="${CHARS}"]`);
  const spec = await page.$$eval(`${panel} .spec-output .spec-char`, (els) => els.map((e) => [e.textContent, e.dataset.fate, getComputedStyle(e).backgroundColor]));
  assert.equal(spec.length, CHARS);
  // Every character has a fate, each fate its own colour; a round ends with a resampled or bonus one.
  assert.ok(spec.every(([, f]) => ['accepted', 'resampled', 'bonus'].includes(f)), JSON.stringify(spec.map((s) => s[1])));
  assert.ok(spec.some(([, f]) => f === 'accepted'), 'some draft characters were accepted');
  assert.ok(spec.some(([, f]) => f !== 'accepted'), 'some rounds ended');
  const colour = Object.fromEntries(spec.map(([, f, c]) => [f, c]));
  assert.equal(new Set(Object.values(colour)).size, Object.keys(colour).length, JSON.stringify(colour));
  assert.ok(Object.values(colour).every((c) => c !== 'rgba(0, 0, 0, 0)'), JSON.stringify(colour));
  assert.deepEqual(await page.$$eval(`${panel} .spec-legend .spec-char`, (els) => els.map((e) => e.dataset.fate ?? e.textContent)), ['accepted', 'resampled', 'bonus']);
  assert.match(await page.textContent(`${panel} .spec-exact`), /identical to plain decoding/);
  assert.match(await page.textContent(`${panel} .spec-passes`), /target passes/);
  assert.match(await page.textContent(`${panel} .spec-clock`), /time may not fall/);
  assert.ok(Number(await page.getAttribute(panel, 'data-target-passes')) < CHARS);
  const specText = spec.map(([c]) => c).join('');

  // The acceptance to expect: the bigram, the draft model, the target itself (1 at every temperature).
  const table = await page.$$eval(`${panel} .spec-acceptance tbody tr`, (trs) => trs.map((tr) => [tr.dataset.kind, Array.from(tr.querySelectorAll('td'), (td) => Number(td.dataset.alpha))]));
  assert.deepEqual(table.map((r) => r[0]), ['bigram', 'model', 'target']);
  for (const a of table[2][1]) assert.ok(Math.abs(a - 1) < 1e-5, `target itself: ${a}`);
  for (const a of [...table[0][1], ...table[1][1]]) assert.ok(a > 0 && a < 1, `${a}`);

  // Plain greedy generation in the Generate panel, the same prompt and count.
  await page.click('.panel-picker [data-panel=generate]');
  await page.fill('[name=gen-chars]', String(CHARS));
  await page.selectOption('[name=gen-strategy]', 'greedy');
  await page.click('[data-action=generate]');
  await page.waitForSelector('.generate-panel[data-state=done]');
  const plain = await page.$$eval('.generate-panel .gen-char', (els) => els.map((e) => e.textContent).join(''));
  assert.equal(specText, plain);

  // The exactness check at temperature 1: two histograms with their chi-square and p-value.
  await page.click('.panel-picker [data-panel=speculative]');
  await page.fill('[name=spec-temperature]', '1');
  await page.fill('[name=spec-samples]', '1000');
  await page.click(`${panel} [data-action=exactness]`);
  await page.waitForSelector(`${panel}[data-state=done] .spec-histogram[data-position=second]`);
  const hist = await page.$$eval(`${panel} .spec-histogram`, (figs) =>
    figs.map((f) => ({ p: Number(f.dataset.pValue), bars: f.querySelectorAll('svg g[data-observed]').length, observed: Array.from(f.querySelectorAll('svg g[data-observed]'), (g) => Number(g.dataset.observed)).reduce((a, b) => a + b, 0), text: f.querySelector('.spec-chi2').textContent })),
  );
  assert.equal(hist.length, 2);
  for (const h of hist) {
    assert.ok(h.p >= 0 && h.p <= 1, `p-value ${h.p}`);
    assert.ok(h.bars >= 2, `${h.bars} bars`);
    assert.equal(h.observed, 1000, 'every sample in a bar');
    assert.match(h.text, /χ² = [\d.]+ with \d+ degrees of freedom, p-value [\d.e-]+\./);
  }
  assert.deepEqual(await audit(page), [], 'axe: the Speculative decoding panel with its text, table and histograms');
  // A bad count: one sentence, the histograms stay.
  await page.fill('[name=spec-samples]', '5');
  await page.click(`${panel} [data-action=exactness]`);
  await page.waitForFunction(() => /^The number of samples must be a whole number from 100 to 20000/.test(document.querySelector('.speculative-panel .problem').textContent));
  assert.equal(await page.$$eval(`${panel} .spec-histogram`, (f) => f.length), 2);
  assert.deepEqual(errors, []);
  await context.close();
});

test('Speculative decoding on a task that is not text: one sentence', async () => {
  const { page, context, errors } = await openReused(browser, `${srv.url}#view=train&panel=speculative`);
  await waitReady(page);
  await page.waitForSelector(`${panel} .spec-needs-text:not([hidden])`);
  assert.match(await page.textContent(`${panel} .spec-needs-text`), /needs the text task/);
  assert.equal(await page.isVisible(`${panel} .spec-body`), false);
  assert.deepEqual(errors, []);
  await context.close();
});

test('The block view: one head\'s attention tile by tile, its running max and sum per row, equal to the plain softmax', async () => {
  const { page, context, errors } = await openReused(browser, `${srv.url}#view=block&seq-len=12&heads=2`);
  await page.waitForSelector('.block-tiled[data-max-difference]');
  const read = () =>
    page.$eval('.block-tiled', (s) => ({
      tiles: Number(s.dataset.tiles),
      diff: Number(s.dataset.maxDifference),
      maxRows: s.querySelectorAll('[data-matrix=rowMax] tbody tr').length,
      maxCols: s.querySelector('[data-matrix=rowMax] tbody tr').querySelectorAll('td').length,
      sumRows: s.querySelectorAll('[data-matrix=rowSum] tbody tr').length,
      verdict: s.querySelector('.tiled-verdict').textContent,
    }));
  const first = await read();
  assert.deepEqual([first.tiles, first.maxRows, first.maxCols, first.sumRows], [3, 12, 3, 12], 'T = 12 in tiles of 4');
  assert.ok(first.diff < 1e-6, `max difference ${first.diff}`);
  assert.match(first.verdict, /largest difference between the tiled rows and the plain softmax is /);
  // Another head and tile size: the core again.
  await page.selectOption('[name=tiledTile]', '2');
  await page.waitForFunction(() => document.querySelector('.block-tiled').dataset.tiles === '6');
  await page.selectOption('[name=tiledHead]', '1');
  await page.waitForFunction(() => document.querySelector('.block-tiled [data-matrix=rowMax] tbody tr').querySelectorAll('td').length === 6);
  assert.ok((await read()).diff < 1e-6);
  assert.deepEqual(errors, []);
  await context.close();
});
