// The state object mirrored in the URL hash: round trips, and hostile or bad values.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { controlsWith, hashWith } from './contract.mjs';
import { openReused, readout, useBrowser, waitForStep, waitReady } from './harness.mjs';

let srv;
let browser;
useBrowser((s, b) => {
  srv = s;
  browser = b;
});

const controlValues = (page) =>
  page.$$eval('.view-train .field[data-key] :is(input, select)', (els) => Object.fromEntries(els.map((e) => [e.name, e.type === 'checkbox' ? String(e.checked) : e.value])));

test('the URL hash round-trips: a copied link reproduces view, config and seed', async () => {
  const config = { vocabSize: 32, dModel: 16, nHeads: 2, seqLen: 8, batchSize: 8, lr: 0.01, seed: 7, attnDropout: 0.1 };
  const hash = hashWith({
    ...config, sample: '1 2 3 4', logY: false, smooth: true, epochMeans: true, panel: 'ablation', sentence: 'Attention is all you need', dk: 3, dv: 5,
    lessonMask: 'causal', stage: 4, mask: 'none', scaleScores: false, headsOff: '2', headsFrozen: '1',
  });
  const { page, context, errors } = await openReused(browser, `${srv.url}#${hash}`);
  await waitReady(page);
  assert.equal(await page.evaluate(() => location.hash), `#${hash}`, 'a canonical hash is kept as it is');
  assert.deepEqual(await controlValues(page), controlsWith(config));
  assert.equal(await page.inputValue('[name=sample]'), '1 2 3 4');
  assert.equal(await page.isChecked('[name=logY]'), false);
  assert.equal(await page.isChecked('[name=smooth]'), true);
  assert.equal(await page.isChecked('[name=epochMeans]'), true);
  assert.equal(await page.locator('.heatmaps canvas').count(), 3, '2 heads + the average');
  assert.equal(await page.isHidden('.banner'), true, 'nothing to correct');
  // The Ablation panel shows the link's interventions.
  await page.waitForSelector('.ablation-panel [name=zero-h2]');
  assert.equal(await page.inputValue('[name=mask-mode]'), 'none');
  assert.equal(await page.isChecked('[name=scale-scores]'), false);
  assert.equal(await page.isChecked('[name=zero-h2]'), true);
  assert.equal(await page.isChecked('[name=zero-h1]'), false);
  assert.equal(await page.isChecked('[name=freeze-h1]'), true);

  // Change things through the UI; the hash follows.
  await page.fill('[name=nHeads]', '4');
  await page.locator('[name=nHeads]').blur();
  await page.waitForFunction(() => /heads=4/.test(location.hash));
  await page.click('[data-view=lesson]');
  await page.click('[data-action=next]');
  const url = await page.evaluate(() => location.href);
  assert.match(url, /view=lesson/);
  assert.match(url, /stage=5/);
  const before1 = await page.evaluate(() => location.hash);

  // Opening the copied link gives the same state.
  const second = await openReused(browser, url);
  await second.page.waitForSelector('.stage[data-stage=masked]');
  assert.equal(await second.page.evaluate(() => location.hash), before1);
  assert.equal(await second.page.isVisible('.view-lesson'), true);
  assert.equal(await second.page.inputValue('[name=sentence]'), 'Attention is all you need');
  assert.equal(await second.page.inputValue('[name=dk]'), '3');
  assert.equal(await second.page.inputValue('[name=lessonMask]'), 'causal');
  assert.equal((await controlValues(second.page)).nHeads, '4');
  assert.deepEqual([...errors, ...second.errors], []);
  await second.context.close();
  await context.close();
});

test('a link with missing keys gets the defaults, written back in full', async () => {
  const { page, context } = await openReused(browser, `${srv.url}#seed=9`);
  await waitReady(page);
  const h = await page.evaluate(() => location.hash);
  assert.match(h, /^#view=train&vocab-size=64&d-model=32&heads=4&seq-len=12&batch=16&lr=0.005&seed=9&/);
  await context.close();
});

test('bad and hostile URL values are corrected with a visible message, never injected, and the page works', async () => {
  const hostile = encodeURIComponent('<img src=x onerror="window.__pwned=1">');
  const hash =
    `vocab-size=99999&d-model=31&heads=5&seq-len=abc&batch=0&lr=-1&attn-dropout=2&view=evil&logy=maybe` +
    `&sentence=${hostile}&sample=${encodeURIComponent('<script>alert(1)</script> 3 4')}&dk=1e9`;
  const { page, context, errors } = await openReused(browser, `${srv.url}#${hash}`);
  await waitReady(page);
  const banner = page.locator('.banner');
  assert.equal(await banner.isVisible(), true);
  const items = await banner.locator('li').allTextContents();
  const expect = [
    /^vocab: 99999 is above the maximum 512; using 512$/,
    /^seq_len: "abc" is not a number; using 12$/,
    /^batch: 0 is below the minimum 1; using 1$/,
    /^learning rate: -1 is not in \(0, 10\]; using 0\.005$/,
    /^attention dropout: 2 is above the maximum 0\.9; using 0\.9$/,
    /^view: "evil" is not one of train, lesson, block; using train$/,
    /^log scale: "maybe" is not 0 or 1; using 1$/,
    /^dk: 1000000000 is above the maximum 16; using 16$/,
    /^d_model: 31 must be even \(sinusoidal positions\); using 32$/,
    /^heads: 5 does not divide d_model 32; using 4$/,
    /^sentence: more than 16 tokens; keeping the first 16$/,
    /^sample sequence: "<script>alert\(1\)<\/script…" is not a token id in \[0, 511\]/,
  ];
  for (const re of expect) assert.ok(items.some((t) => re.test(t)), `banner has ${re}: ${JSON.stringify(items)}`);
  assert.deepEqual(await controlValues(page), controlsWith({ vocabSize: 512, batchSize: 1, attnDropout: 0.9 }));
  // Nothing from the URL became markup.
  assert.equal(await page.locator('main img, main script').count(), 0);
  assert.equal(await page.evaluate(() => window.__pwned), undefined);
  await page.click('[data-view=lesson]');
  await page.waitForSelector('.stage[data-stage=tokens]');
  assert.match(await page.inputValue('[name=sentence]'), /^< img src = x onerror = " window/);
  assert.equal(await page.textContent('.stage[data-stage=tokens] li'), '<');
  assert.equal(await page.inputValue('[name=sample]'), '3 4');
  // The page still works.
  await page.click('[data-view=train]');
  await page.click('[data-action=step1]');
  await waitForStep(page, 1);
  assert.ok(Number.isFinite((await readout(page)).loss));
  assert.deepEqual(errors, []);
  await context.close();
});

test('a hash edited by hand is validated too', async () => {
  const { page, context } = await openReused(browser, `${srv.url}#view=train`);
  await waitReady(page);
  await page.evaluate(() => (location.hash = 'view=train&heads=3&seq-len=500'));
  await page.waitForSelector('.banner:not([hidden])');
  const items = await page.locator('.banner li').allTextContents();
  assert.ok(items.some((t) => /seq_len: 500 is above the maximum 128; using 128/.test(t)), JSON.stringify(items));
  assert.ok(items.some((t) => /heads: 3 does not divide d_model 32; using 2/.test(t)), JSON.stringify(items));
  await page.waitForFunction(() => document.querySelectorAll('.heatmaps canvas').length === 3);
  assert.match(await page.evaluate(() => location.hash), /heads=2&seq-len=128/);
  await context.close();
});

test('every control has a label and is reachable from the keyboard', async () => {
  const { page, context } = await openReused(browser, `${srv.url}#view=train`);
  await waitReady(page);
  for (const view of ['train', 'lesson', 'block']) {
    await page.click(`[data-view=${view}]`);
    await page.waitForSelector(`.view-${view}:not([hidden])`);
    const unlabelled = await page.$$eval(`.view-${view} :is(input, select, button)`, (els) =>
      els.filter((e) => !(e.labels?.length || e.getAttribute('aria-label') || e.textContent.trim())).map((e) => e.outerHTML),
    );
    assert.deepEqual(unlabelled, [], `${view}: controls without a label`);
    // Tabs keep a roving tabindex: the selected one is in the tab order, the arrow keys reach the
    // others (panels.test.mjs presses them); so each tab list has exactly one tab at 0.
    const untabbable = await page.$$eval(`.view-${view} :is(input, select, button, canvas[tabindex]):not([role=tab])`, (els) =>
      els.filter((e) => e.tabIndex < 0 && !e.disabled).map((e) => e.outerHTML),
    );
    assert.deepEqual(untabbable, [], `${view}: controls out of the tab order`);
    const tabStops = await page.$$eval(`.view-${view} [role=tablist]`, (lists) => lists.map((l) => [...l.querySelectorAll('[role=tab]')].filter((t) => !t.hidden && t.tabIndex === 0).length));
    assert.ok(tabStops.every((n) => n === 1), `${view}: one tab stop per tab list, got ${tabStops}`);
  }
  // Play/Pause works from the keyboard.
  await page.click('[data-view=train]');
  await page.focus('[data-action=step1]');
  await page.keyboard.press('Enter');
  await waitForStep(page, 1);
  await context.close();
});
