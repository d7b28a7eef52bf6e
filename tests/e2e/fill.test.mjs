// Masked language modelling and the attention patterns in the page: the "Fill in the blanks" preset
// trains a masked model of the default text; clicking a character blanks it and the panel shows its
// five most likely characters, with probabilities in (0, 1] summing to at most 1 (the softmax over
// the characters; [MASK] gets the rest); the heatmaps hatch nothing of an mlm model (attention both
// ways), and the drawing of the attention pattern changes when attention becomes window. The
// "A window that grows with depth" preset's Receptive field panel shows zeros beyond L·(W − 1). A
// link with the six keys sets their controls, and the pattern drawn is the link's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openReused, useBrowser, waitForStep, waitReady } from './harness.mjs';

const FILL = 'section.fill-panel';
const RECEPTIVE = 'section.receptive-panel';

let srv;
let browser;
useBrowser((s, b) => {
  srv = s;
  browser = b;
});

/** Waits until the panel shows its answer at this step (and, given, with n blanks). */
function panelReady(page, sel, step, blanks) {
  return page.waitForFunction(
    ({ sel, step, blanks }) => {
      const d = document.querySelector(sel)?.dataset;
      return d?.state === 'ready' && d.step === String(step) && (blanks === undefined || d.blanks === String(blanks));
    },
    { sel, step, blanks },
  );
}

/** The masked model's guesses, blank by blank. */
function guesses(page) {
  return page.$$eval(`${FILL} tbody tr`, (rows) => rows.map((tr) => ({ pos: Number(tr.dataset.pos), probs: [...tr.querySelectorAll('td.guess')].map((td) => Number(td.dataset.prob)) })));
}

test('Fill in the blanks: the preset trains; a clicked character is blanked and gets 5 guesses whose probabilities are in (0, 1] and sum to at most 1', async () => {
  const { page, context, errors } = await openReused(browser, `${srv.url}#view=train`);
  await waitReady(page);
  await page.click('a[data-preset=fill]');
  await page.waitForFunction(() => location.hash.includes('objective=mlm') && location.hash.includes('panel=fill'));
  await waitForStep(page, 0);
  for (let k = 1; k <= 2; ++k) {
    await page.click('[data-action=step10]');
    await waitForStep(page, 10 * k);
  }
  await panelReady(page, FILL, 20);
  assert.equal(await page.getAttribute(FILL, 'data-objective'), 'mlm');
  const before = Number(await page.getAttribute(FILL, 'data-blanks'));
  assert.ok(before >= 1, `default blanks: ${before}`);
  // Blank the first character that is not one yet.
  const pos = await page.$eval(`${FILL} .fill-char[aria-pressed=false]`, (b) => Number(b.dataset.pos));
  await page.click(`${FILL} .fill-char[data-pos="${pos}"]`);
  assert.equal(await page.getAttribute(`${FILL} .fill-char[data-pos="${pos}"]`, 'aria-pressed'), 'true');
  await panelReady(page, FILL, 20, before + 1);
  const rows = await guesses(page);
  assert.equal(rows.length, before + 1);
  assert.ok(rows.some((r) => r.pos === pos), `no row for position ${pos}`);
  for (const r of rows) {
    assert.equal(r.probs.length, 5, `position ${r.pos}`);
    for (const p of r.probs) assert.ok(p > 0 && p <= 1, `position ${r.pos}: p ${p}`);
    assert.ok(r.probs.reduce((a, b) => a + b, 0) <= 1 + 1e-6, `position ${r.pos}: sum ${r.probs}`);
    for (let j = 1; j < 5; ++j) assert.ok(r.probs[j] <= r.probs[j - 1], `position ${r.pos}: not most likely first`);
  }
  // No causal model of this text in this tab yet: a sentence says how to get one.
  assert.equal(await page.getAttribute(FILL, 'data-causal'), 'no');
  assert.match(await page.$eval(`${FILL} .fill-causal-note`, (el) => el.textContent), /train one on the same text/);
  // An mlm model attends both ways: the pattern shows every pair visible and the heatmaps hatch none.
  const T = 32; // the preset's seq_len
  await page.waitForFunction((n) => document.querySelector('.attention-pattern')?.dataset.seen === String(n), T * T);
  const full = await page.getAttribute('.attention-pattern', 'data-visible');
  assert.ok(!full.includes('0'));
  // attention = window: the pattern's drawing changes (a band of 2W - 1 around the diagonal).
  await page.selectOption('select[name=attention]', 'window');
  await page.waitForFunction((f) => (document.querySelector('.attention-pattern')?.dataset.visible ?? f) !== f, full);
  const band = await page.getAttribute('.attention-pattern', 'data-visible');
  for (let i = 0; i < T; ++i)
    for (let j = 0; j < T; ++j) assert.equal(band[i * T + j], Math.abs(i - j) < 4 ? '1' : '0', `query ${i}, key ${j}`);
  assert.deepEqual(errors, []);
  await context.close();
});

test('Receptive field: with 3 layers of a window of 3 keys, every attribution beyond L·(W − 1) = 6 is exactly 0', async () => {
  const { page, context, errors } = await openReused(browser, `${srv.url}#view=train`);
  await waitReady(page);
  await page.click('a[data-preset=window-depth]');
  await page.waitForFunction(() => location.hash.includes('attention=window') && location.hash.includes('panel=receptive'));
  await waitForStep(page, 0);
  await page.click('[data-action=step10]');
  await waitForStep(page, 10);
  await panelReady(page, RECEPTIVE, 10);
  const d = await page.$eval(RECEPTIVE, (el) => ({ ...el.dataset }));
  assert.equal(d.bound, '6');
  assert.equal(d.beyondNonzero, '0');
  assert.ok(Number(d.beyondZero) > 0, JSON.stringify(d));
  assert.equal(d.farthest, '6', 'the measured reach is the bound: a causal window reaches exactly L (W - 1)');
  assert.match(await page.$eval(`${RECEPTIVE} .receptive-formula`, (el) => el.textContent), /L·\(W − 1\) = 3·\(3 − 1\) = 6/);
  assert.deepEqual(errors, []);
  await context.close();
});

test('the six keys are settings like the others: a link sets each control, and the pattern drawn is the link\'s', async () => {
  const { page, context, errors } = await openReused(browser, `${srv.url}#view=train&objective=mlm&mask-rate=0.2&attention=strided&window=2&stride=3&differential=1`);
  await waitReady(page);
  const values = await page.evaluate(() => {
    const v = (n) => document.querySelector(`[name=${n}]`);
    return [v('objective').value, v('maskRate').value, v('attention').value, v('window').value, v('stride').value, v('differential').checked];
  });
  assert.deepEqual(values, ['mlm', '0.2', 'strided', '2', '3', true]);
  // Both ways, a window of 2 and every multiple of 3: |i - j| < 2 or min(i, j) mod 3 = 0, at T 12.
  const T = 12;
  let want = '';
  for (let i = 0; i < T; ++i) for (let j = 0; j < T; ++j) want += Math.abs(i - j) < 2 || Math.min(i, j) % 3 === 0 ? '1' : '0';
  await page.waitForFunction((w) => document.querySelector('.attention-pattern')?.dataset.visible === w, want);
  assert.deepEqual(errors, []);
  await context.close();
});
