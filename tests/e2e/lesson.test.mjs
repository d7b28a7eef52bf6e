// View 2 end to end: every number the page shows equals the core's selfAttention, called here in
// the page's own context on the inputs the page shows; Next/Prev; dk, dv and the causal mask.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openPage, useBrowser } from './harness.mjs';

let srv;
let browser;
useBrowser((s, b) => {
  srv = s;
  browser = b;
});

const OUTPUTS = ['Q', 'K', 'V', 'scores', 'scaledScores', 'maskedScores', 'weights', 'output'];

/** What the page shows for each matrix: shape, exact values (data-value) and cell texts. */
function shownMatrices(page) {
  return page.$$eval('table[data-matrix]', (tables) =>
    Object.fromEntries(
      tables.map((t) => {
        const rows = [...t.tBodies[0].rows];
        const cells = rows.flatMap((r) => [...r.cells].filter((c) => c.tagName === 'TD'));
        return [t.dataset.matrix, { rows: rows.length, cols: cells.length / rows.length, values: cells.map((c) => Number(c.dataset.value)), texts: cells.map((c) => c.textContent) }];
      }),
    ),
  );
}

/** Calls the core's selfAttention in the page on the X, Wq, Wk, Wv the page shows. */
function coreInPage(page, shown, causal) {
  return page.evaluate(
    async ({ shown, causal }) => {
      const url = new URL('wasm/attention-core-simd.js', document.baseURI).href;
      const core = await (await import(url)).default();
      const m = (name) => ({ data: Float32Array.from(shown[name].values), rows: shown[name].rows, cols: shown[name].cols });
      const r = core.selfAttention({ X: m('X'), Wq: m('Wq'), Wk: m('Wk'), Wv: m('Wv'), causal });
      return Object.fromEntries(Object.entries(r).map(([k, v]) => [k, { rows: v.rows, cols: v.cols, values: Array.from(v.data) }]));
    },
    { shown, causal },
  );
}

/** The page's rounding: 3 decimals, typographic minus (none on a value that rounds to 0), −∞ for masked. */
function fmt(v) {
  if (v === -Infinity) return '−∞';
  const s = v.toFixed(3);
  if (Number(s) === 0) return s.replace('-', '');
  return s.startsWith('-') ? `−${s.slice(1)}` : s;
}

function assertSame(shown, core) {
  for (const name of OUTPUTS) {
    const a = shown[name];
    const b = core[name];
    assert.ok(a, `the page shows ${name}`);
    assert.deepEqual([a.rows, a.cols], [b.rows, b.cols], `${name} shape`);
    const diff = a.values.map((v, i) => [i, v, b.values[i]]).filter(([, v, w]) => !Object.is(v, w));
    assert.deepEqual(diff.slice(0, 5), [], `${name}: ${diff.length} values differ from the core's (index, shown, core)`);
    assert.deepEqual(a.texts, b.values.map(fmt), `${name}: shown text is the core's value rounded`);
  }
}

test('view 2 shows, for the default sentence, exactly the numbers of the core', async () => {
  const { page, context, errors } = await openPage(browser, `${srv.url}#view=lesson&stage=7`, { bypassCSP: true });
  await page.waitForSelector('table[data-matrix=output]');
  assert.equal(await page.inputValue('[name=sentence]'), 'The cat sat on the mat');
  assert.deepEqual(await page.locator('.stage[data-stage=tokens] li').allTextContents(), ['The', 'cat', 'sat', 'on', 'the', 'mat']);
  const shown = await shownMatrices(page);
  assert.deepEqual([shown.X.rows, shown.X.cols, shown.Q.cols, shown.V.cols], [6, 8, 4, 4]);
  assertSame(shown, await coreInPage(page, shown, false));
  // Sanity of what is shown: rows of the weights sum to 1.
  for (let i = 0; i < 6; ++i) {
    const s = shown.weights.values.slice(i * 6, i * 6 + 6).reduce((a, b) => a + b, 0);
    assert.ok(Math.abs(s - 1) < 1e-5, `row ${i} sums to ${s}`);
  }
  assert.deepEqual(errors, []);
  await context.close();
});

test('view 2 with the causal mask, other dk/dv and a new sentence still shows the core numbers', async () => {
  const { page, context, errors } = await openPage(browser, `${srv.url}#view=lesson&stage=7`, { bypassCSP: true });
  await page.waitForSelector('table[data-matrix=output]');
  await page.check('[name=causal]');
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
  const { page, context } = await openPage(browser, `${srv.url}#view=lesson`);
  await page.waitForSelector('.stage[data-stage=tokens]');
  assert.equal(await page.isDisabled('[data-action=prev]'), true);
  const names = ['tokens', 'X', 'QKV', 'scores', 'scaled', 'masked', 'weights', 'output'];
  for (let i = 0; i < names.length; ++i) {
    const current = page.locator(`.stage[data-stage=${names[i]}]`);
    assert.equal(await current.getAttribute('aria-current'), 'step');
    assert.equal(await page.locator('.stage').count(), i + 1);
    assert.ok((await current.locator('.formula code').textContent()).length > 0);
    assert.match(await current.locator('.shape').textContent(), /^(T = 6|\(T, .*\) = \(6, \d\)|Q, K: \(T, dk\) = \(6, 4\);  V: \(T, dv\) = \(6, 4\))$/);
    assert.match(await page.textContent('.stage-label'), new RegExp(`^Stage ${i + 1} of 8`));
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
  assert.equal(await page.locator('.stage').count(), 7);
  assert.match(await page.evaluate(() => location.hash), /stage=6/);
  await page.keyboard.press('Enter');
  assert.equal(await page.locator('.stage').count(), 6);
  await context.close();
});
