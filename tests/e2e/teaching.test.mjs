// The page teaches: every stage of the lesson view says in two or three sentences what it shows,
// and both views end with "Check yourself" questions whose answers stay folded until asked for.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openReused, useBrowser, waitReady } from './harness.mjs';

let srv;
let browser;
useBrowser((s, b) => {
  srv = s;
  browser = b;
});

const sentences = (text) => text.split(/(?<=[.!?])\s+/).filter((x) => x.trim()).length;

test('lesson stages explain themselves; both views have check-yourself questions with answers on request', async () => {
  const { page, context, errors } = await openReused(browser, `${srv.url}#view=lesson&stage=7&lesson-mask=causal&dk=16`);
  await page.waitForSelector('.stage[data-stage=output]');
  const texts = await page.$$eval('.stage', (els) => els.map((e) => [e.dataset.stage, e.querySelector('.stage-text')?.textContent ?? '']));
  assert.equal(texts.length, 8);
  for (const [stage, text] of texts) {
    const n = sentences(text);
    assert.ok(n >= 2 && n <= 3, `${stage}: ${n} sentences: ${text}`);
  }
  // The lesson's third question is about numbers on this page: scaled = scores / 4 at dk = 16.
  const ratio = await page.evaluate(() => {
    const v = (name) => Number(document.querySelector(`table[data-matrix=${name}] td[data-value]`).dataset.value);
    return v('scores') / v('scaledScores');
  });
  assert.ok(Math.abs(ratio - 4) < 1e-5, `scores / scaled scores = ${ratio}`);

  for (const view of ['lesson', 'train']) {
    await page.click(`[role=tab][data-view=${view}]`);
    // The view's own questions (the Look inside panel has its own, tested with it).
    const section = `.view-${view} .check-yourself:not(.inspect-panel .check-yourself)`;
    await page.waitForSelector(section);
    const qs = await page.$$eval(`${section} details`, (ds) => ds.map((d) => ({ open: d.open, q: d.querySelector('summary').textContent, a: d.querySelector('.answer').textContent })));
    assert.ok(qs.length >= 3, `${view}: ${qs.length} questions`);
    assert.ok(qs.every((x) => !x.open && /[?.]$/.test(x.q) && x.a.length > 20), 'questions closed at first, each with an answer');
    assert.equal(await page.isVisible(`${section} details .answer`), false, 'the answer is hidden');
    await page.focus(`${section} details summary`);
    await page.keyboard.press('Enter');
    assert.equal(await page.isVisible(`${section} details .answer`), true, 'Enter on the question shows its answer');
  }
  await waitReady(page);
  assert.deepEqual(errors, []);
  await context.close();
});
