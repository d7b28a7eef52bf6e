// View 2 end to end: every number the page shows equals the core's selfAttention (and, for the
// concatenation and W_o, its multiHeadSelfAttention), called here in the page's own context on the
// inputs the page shows; Next/Prev; dk, dv and the causal mask. lesson-heads.test.mjs covers the
// heads, the drawn mask, positions and two sentences.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openReused, useBrowser } from './harness.mjs';
import { fmt, loadCoreInPage, shownMatrices, STAGES } from './lesson-shown.mjs';

let srv;
let browser;
useBrowser((s, b) => {
  srv = s;
  browser = b;
});

const OUTPUTS = ['Q', 'K', 'V', 'scores', 'scaledScores', 'maskedScores', 'weights', 'output'];

/** Calls the core's selfAttention in the page on the X, Wq, Wk, Wv the page shows. */
async function coreInPage(page, shown, causal) {
  await loadCoreInPage(page);
  return page.evaluate(
    ({ X, Wq, Wk, Wv, causal }) => {
      const m = (s) => ({ data: Float32Array.from(s.values), rows: s.rows, cols: s.cols });
      return window.__plain(window.__core.selfAttention({ X: m(X), Wq: m(Wq), Wk: m(Wk), Wv: m(Wv), causal }));
    },
    { X: shown.X, Wq: shown.Wq, Wk: shown.Wk, Wv: shown.Wv, causal },
  );
}

function assertSame(shown, core) {
  for (const name of OUTPUTS) {
    const a = shown[name];
    const b = { rows: core[name].rows, cols: core[name].cols, values: core[name].data };
    assert.ok(a, `the page shows ${name}`);
    assert.deepEqual([a.rows, a.cols], [b.rows, b.cols], `${name} shape`);
    const diff = a.values.map((v, i) => [i, v, b.values[i]]).filter(([, v, w]) => !Object.is(v, w));
    assert.deepEqual(diff.slice(0, 5), [], `${name}: ${diff.length} values differ from the core's (index, shown, core)`);
    assert.deepEqual(a.texts, b.values.map(fmt), `${name}: shown text is the core's value rounded`);
  }
}

test('view 2 shows, for the default sentence, exactly the numbers of the core', async () => {
  const { page, context, errors } = await openReused(browser, `${srv.url}#view=lesson&stage=9`, { bypassCSP: true });
  await page.waitForSelector('table[data-matrix=projected]');
  assert.equal(await page.inputValue('[name=sentence]'), 'The cat sat on the mat');
  assert.deepEqual(await page.locator('.stage[data-stage=tokens] li').allTextContents(), ['The', 'cat', 'sat', 'on', 'the', 'mat']);
  const shown = await shownMatrices(page);
  assert.deepEqual([shown.X.rows, shown.X.cols, shown.Q.cols, shown.V.cols], [6, 8, 4, 4]);
  assertSame(shown, await coreInPage(page, shown, false));
  // One head: the concatenation is its output, and Y = C W_o is the core's multi-head output.
  assert.deepEqual(shown.concat.values, shown.output.values);
  const mh = await page.evaluate(({ X, Wq, Wk, Wv, Wo }) => {
    const m = (s) => ({ data: Float32Array.from(s.values), rows: s.rows, cols: s.cols });
    return window.__plain(window.__core.multiHeadSelfAttention({ X: m(X), Wq: [m(Wq)], Wk: [m(Wk)], Wv: [m(Wv)], Wo: m(Wo) }));
  }, shown);
  assert.deepEqual(shown.projected.values, mh.output.data);
  assert.deepEqual(shown.projected.texts, mh.output.data.map(fmt));
  assert.deepEqual([shown.Wo.rows, shown.Wo.cols], [4, 8]);
  // The inputs are the core's own (lessonInputs, what `attn demo self-attention --seed 42` prints
  // from: tests/js-api/lesson.test.mjs): the lower-cased words at the training view's seed.
  const inputs = await page.evaluate(() => window.__plain(window.__core.lessonInputs({ tokens: ['the', 'cat', 'sat', 'on', 'the', 'mat'], dModel: 8, dk: 4, dv: 4, heads: 1, seed: 42 })));
  assert.deepEqual(shown.X.values, inputs.E.data, 'X is the core\'s E (no positions)');
  assert.deepEqual([shown.Wq.values, shown.Wk.values, shown.Wv.values], [inputs.Wq[0].data, inputs.Wk[0].data, inputs.Wv[0].data]);
  assert.deepEqual(shown.Wo.values, inputs.Wo.data);
  // Sanity of what is shown: rows of the weights sum to 1.
  for (let i = 0; i < 6; ++i) {
    const s = shown.weights.values.slice(i * 6, i * 6 + 6).reduce((a, b) => a + b, 0);
    assert.ok(Math.abs(s - 1) < 1e-5, `row ${i} sums to ${s}`);
  }
  assert.deepEqual(errors, []);
  await context.close();
});

test('view 2 with the causal mask, other dk/dv and a new sentence still shows the core numbers', async () => {
  const { page, context, errors } = await openReused(browser, `${srv.url}#view=lesson&stage=7`, { bypassCSP: true });
  await page.waitForSelector('table[data-matrix=output]');
  // The link opens at its stage: the page has scrolled to stage 8 (index 7), whose top is in view
  // (as near the top as the page's end allows).
  const at = await page.$eval('.stage[aria-current=step]', (el) => ({ top: el.getBoundingClientRect().top, scrolled: window.scrollY, height: innerHeight }));
  assert.ok(at.scrolled > 0 && at.top >= -1 && at.top < at.height / 2, `scrolled to the stage: ${JSON.stringify(at)}`);
  await page.selectOption('[name=lessonMask]', 'causal');
  await page.waitForSelector('table[data-matrix=maskedScores] td.masked');
  await page.fill('[name=dk]', '2');
  await page.locator('[name=dk]').blur();
  await page.fill('[name=dv]', '3');
  await page.locator('[name=dv]').blur();
  await page.fill('[name=sentence]', 'A dog barked');
  await page.locator('[name=sentence]').blur();
  await page.waitForFunction(() => document.querySelectorAll('table[data-matrix=Q] tbody tr').length === 3 && document.querySelector('table[data-matrix=Q] tbody tr').cells.length === 3);
  const shown = await shownMatrices(page);
  assert.deepEqual([shown.Q.cols, shown.V.cols, shown.output.cols], [2, 3, 3]);
  assert.equal(shown.maskedScores.texts[1], '−∞', 'query 0 cannot see key 1');
  assert.equal(await page.locator('table[data-matrix=maskedScores] td.masked').count(), 3);
  assert.equal(shown.weights.values[1], 0);
  assertSame(shown, await coreInPage(page, shown, true));
  assert.match(await page.textContent('.stage[data-stage=scaled] .formula'), /S \/ √2/);
  assert.deepEqual(errors, []);
  await context.close();
});

test('Next and Prev step through the stages, each labelled with its formula and shape', async () => {
  const { page, context } = await openReused(browser, `${srv.url}#view=lesson`);
  await page.waitForSelector('.stage[data-stage=tokens]');
  assert.equal(await page.isDisabled('[data-action=prev]'), true);
  const names = STAGES;
  for (let i = 0; i < names.length; ++i) {
    const current = page.locator(`.stage[data-stage=${names[i]}]`);
    assert.equal(await current.getAttribute('aria-current'), 'step');
    assert.equal(await page.locator('.stage').count(), i + 1);
    assert.ok((await current.locator('.formula code').textContent()).length > 0);
    assert.match(await current.locator('.shape').textContent(), /^(T = 6|\(T, .*\) = \(6, \d\)|Q, K: \(T, dk\) = \(6, 4\);  V: \(T, dv\) = \(6, 4\)|W_o: \(H·dv, d_model\) = \(4, 8\);  Y: \(T, d_model\) = \(6, 8\))$/);
    assert.match(await page.textContent('.stage-label'), new RegExp(`^Stage ${i + 1} of 10`));
    // The first step is a click; later ones press Enter on the focused button, because the page
    // smooth-scrolls to each new stage and, on a loaded machine, a click at coordinates can land
    // while the button still moves.
    if (i === 0) await page.click('[data-action=next]');
    else if (i < names.length - 1) {
      await page.focus('[data-action=next]');
      await page.keyboard.press('Enter');
    }
  }
  assert.equal(await page.isDisabled('[data-action=next]'), true);
  await page.focus('[data-action=prev]');
  await page.keyboard.press('Enter');
  assert.equal(await page.locator('.stage').count(), 9);
  assert.match(await page.evaluate(() => location.hash), /stage=8/);
  await page.keyboard.press('Enter');
  assert.equal(await page.locator('.stage').count(), 8);
  await context.close();
});
