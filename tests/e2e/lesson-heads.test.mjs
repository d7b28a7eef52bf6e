// View 2's heads, drawn mask, positions and two sentences: the numbers shown against the core
// called in the page on the inputs the page shows, and against plain references computed here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openReused, useBrowser } from './harness.mjs';
import { fmt, loadCoreInPage, shownMatrices } from './lesson-shown.mjs';

let srv;
let browser;
useBrowser((s, b) => {
  srv = s;
  browser = b;
});

const m = (s) => ({ data: s.values, rows: s.rows, cols: s.cols });

/** The core's multi-head call in the page on shown matrices (mask as plain cells). */
async function multiHead(page, args) {
  await loadCoreInPage(page);
  return page.evaluate(({ X, Wq, Wk, Wv, Wo, mask }) => {
    const f = (s) => ({ data: Float32Array.from(s.data), rows: s.rows, cols: s.cols });
    return window.__plain(window.__core.multiHeadSelfAttention({ X: f(X), Wq: Wq.map(f), Wk: Wk.map(f), Wv: Wv.map(f), Wo: f(Wo), mask: Uint8Array.from(mask) }));
  }, args);
}

/** The cells the page shows as masked in the masked-scores table of head 0. */
/** A W_o of zeros (rows, 8), for comparisons of stages that come before it. */
const zeroWo = (rows) => ({ data: new Array(rows * 8).fill(0), rows, cols: 8 });

const maskedCells = (shown) => shown.maskedScores.values.map((v) => (v === -Infinity ? 1 : 0));

test('three heads: each head\'s stages, the concatenation and W_o are the core\'s, and Y = C W_o by hand', async () => {
  const { page, context, errors } = await openReused(browser, `${srv.url}#view=lesson&stage=9&lesson-mask=causal`, { bypassCSP: true });
  await page.waitForSelector('table[data-matrix=projected]');
  await page.fill('[name=lessonHeads]', '3');
  await page.locator('[name=lessonHeads]').blur();
  await page.waitForSelector('table[data-matrix=Q][data-head="2"]');
  assert.match(await page.evaluate(() => location.hash), /lesson-heads=3/);
  const shown = await shownMatrices(page);
  const H = 3;
  const key = (name, h) => (h === 0 ? name : `${name}@${h}`);
  const heads = [0, 1, 2];
  const core = await multiHead(page, {
    X: m(shown.X),
    Wq: heads.map((h) => m(shown[key('Wq', h)])),
    Wk: heads.map((h) => m(shown[key('Wk', h)])),
    Wv: heads.map((h) => m(shown[key('Wv', h)])),
    Wo: m(shown.Wo),
    mask: maskedCells(shown),
  });
  for (const h of heads)
    for (const name of ['Q', 'K', 'V', 'scores', 'scaledScores', 'maskedScores', 'weights', 'output']) {
      const a = shown[key(name, h)];
      assert.deepEqual(a.values, core.heads[h][name].data, `head ${h} ${name}`);
      assert.deepEqual(a.texts, core.heads[h][name].data.map(fmt), `head ${h} ${name} texts`);
    }
  // Heads differ (their own projections), and the concatenation is their outputs side by side.
  assert.notDeepEqual(shown.weights.values, shown['weights@1'].values);
  const T = 6, dv = 4, D = 8;
  assert.deepEqual([shown.concat.rows, shown.concat.cols, shown.Wo.rows, shown.Wo.cols, shown.projected.cols], [T, H * dv, H * dv, D, D]);
  for (let i = 0; i < T; ++i)
    for (let c = 0; c < H * dv; ++c) assert.equal(shown.concat.values[i * H * dv + c], shown[key('output', Math.floor(c / dv))].values[i * dv + (c % dv)]);
  assert.deepEqual(shown.projected.values, core.output.data);
  for (let i = 0; i < T; ++i)
    for (let o = 0; o < D; ++o) {
      let acc = 0;
      for (let c = 0; c < H * dv; ++c) acc += shown.concat.values[i * H * dv + c] * shown.Wo.values[c * D + o];
      assert.ok(Math.abs(shown.projected.values[i * D + o] - acc) < 1e-5, `Y[${i}][${o}] = ${shown.projected.values[i * D + o]}, by hand ${acc}`);
    }
  assert.deepEqual(errors, []);
  await context.close();
});

test('the mask: presets, a click and Enter/Space on a cell, a fully masked row gives 0 (not NaN), the old causal link', async () => {
  const { page, context, errors } = await openReused(browser, `${srv.url}#view=lesson&stage=7&lesson-mask=causal`, { bypassCSP: true });
  await page.waitForSelector('table[data-matrix=output]');
  assert.equal(await page.inputValue('[name=lessonMask]'), 'causal', 'lesson-mask=causal still works');
  const T = 6;
  const pattern = async () => {
    const shown = await shownMatrices(page);
    return Array.from({ length: T }, (_, i) => maskedCells(shown).slice(i * T, i * T + T).join(''));
  };
  assert.deepEqual(await pattern(), ['011111', '001111', '000111', '000011', '000001', '000000']);

  // Sliding window of k = 3: query i reads keys i-2 .. i.
  await page.selectOption('[name=lessonMask]', 'window');
  await page.fill('[name=lessonWindow]', '3');
  await page.locator('[name=lessonWindow]').blur();
  await page.waitForFunction(() => /lesson-mask=window&lesson-window=3/.test(location.hash));
  await page.waitForFunction(() => document.querySelectorAll('table[data-matrix=maskedScores] td.masked').length === 21);
  assert.deepEqual(await pattern(), ['011111', '001111', '000111', '100011', '110001', '111000']);

  // Draw: mask every key of row 2 ("sat") with clicks and keys, from the preset "none".
  await page.selectOption('[name=lessonMask]', 'none');
  await page.waitForFunction(() => document.querySelectorAll('table[data-matrix=maskedScores] td.masked').length === 0);
  for (let j = 0; j < T; ++j) {
    const cell = page.locator(`button.mask-cell[data-i="2"][data-j="${j}"]`);
    if (j < 2) await cell.click();
    else {
      await cell.focus();
      await page.keyboard.press(j % 2 ? 'Space' : 'Enter');
      // Focus stays on the flipped cell after the redraw.
      await page.waitForFunction((jj) => document.activeElement?.dataset?.j === String(jj) && document.activeElement.getAttribute('aria-pressed') === 'true', j);
    }
  }
  await page.waitForFunction(() => /lesson-mask=000000\.000000\.111111\.000000\.000000\.000000/.test(location.hash));
  await page.waitForFunction(() => document.querySelectorAll('table[data-matrix=maskedScores] td.masked').length === 6);
  assert.equal(await page.inputValue('[name=lessonMask]'), 'drawn');
  const shown = await shownMatrices(page);
  assert.deepEqual(shown.weights.values.slice(2 * T, 3 * T), [0, 0, 0, 0, 0, 0], 'row 2: weights 0');
  assert.deepEqual(shown.output.values.slice(2 * 4, 3 * 4), [0, 0, 0, 0], 'row 2: output 0');
  assert.ok(Object.values(shown).every((x) => x.texts.every((t) => !/NaN/.test(t))), 'no NaN shown');
  assert.match(await page.textContent('.stage[data-stage=masked] .lesson-empty-rows'), /^Row 2 sat: every key is masked\. .*weights 0 and an output of 0 instead of NaN\.$/);
  // Unmask one cell again: the row has one key, which gets all of its weight.
  await page.locator('button.mask-cell[data-i="2"][data-j="4"]').click();
  await page.waitForFunction(() => document.querySelectorAll('table[data-matrix=maskedScores] td.masked').length === 5);
  const after = await shownMatrices(page);
  assert.deepEqual(after.weights.values.slice(2 * T, 3 * T), [0, 0, 0, 0, 1, 0]);
  assert.deepEqual(after.output.values.slice(2 * 4, 3 * 4), after.V.values.slice(4 * 4, 5 * 4), 'the output row is V row 4');
  const core = await multiHead(page, { X: m(after.X), Wq: [m(after.Wq)], Wk: [m(after.Wk)], Wv: [m(after.Wv)], Wo: zeroWo(4), mask: maskedCells(after) });
  assert.deepEqual(after.weights.values, core.heads[0].weights.data);
  assert.equal(await page.locator('.lesson-empty-rows').count(), 0);
  assert.deepEqual(errors, []);
  await context.close();
});

test('positions: X = E + P with P from the core\'s sinusoidal table; a repeated word gets two rows; the rule is stated', async () => {
  const { page, context, errors } = await openReused(browser, `${srv.url}#view=lesson&stage=1&sentence=the+cat+saw+The+dog`, { bypassCSP: true });
  await page.waitForSelector('table[data-matrix=X]');
  assert.match(await page.textContent('.stage[data-stage=tokens] .stage-text'), /split into words \(runs of letters, digits and apostrophes\) and single punctuation marks\. Each token is lower-cased/);
  let shown = await shownMatrices(page);
  const row = (x, i) => x.values.slice(i * 8, i * 8 + 8);
  assert.deepEqual(row(shown.X, 0), row(shown.X, 3), 'positions off: "the" and "The" share a row');
  await page.check('[name=lessonPositions]');
  await page.waitForSelector('table[data-matrix=P]');
  shown = await shownMatrices(page);
  assert.deepEqual(row(shown.E, 0), row(shown.E, 3), 'E: one row per lower-cased word');
  assert.notDeepEqual(row(shown.X, 0), row(shown.X, 3), 'X: the two get different rows');
  for (let p = 0; p < 5; ++p)
    for (let i = 0; i < 8; i += 2) {
      const angle = p / 10000 ** (i / 8);
      assert.ok(Math.abs(shown.P.values[p * 8 + i] - Math.sin(angle)) < 1e-6, `P[${p}][${i}]`);
      assert.ok(Math.abs(shown.P.values[p * 8 + i + 1] - Math.cos(angle)) < 1e-6, `P[${p}][${i + 1}]`);
    }
  shown.X.values.forEach((v, c) => assert.equal(v, Math.fround(shown.E.values[c] + shown.P.values[c]), `X[${c}]`));
  await loadCoreInPage(page);
  const core = await page.evaluate((E) => window.__plain(window.__core.addPositions({ data: Float32Array.from(E.values), rows: E.rows, cols: E.cols })), shown.E);
  assert.deepEqual(shown.P.values, core.positions.data);
  assert.deepEqual(shown.P.texts, core.positions.data.map(fmt));
  assert.match(await page.evaluate(() => location.hash), /lesson-positions=1/);
  assert.deepEqual(errors, []);
  await context.close();
});

test('two sentences through the same weights: side by side, and with blocks (positions off) equal to the packed run\'s blocks', async () => {
  const url = `${srv.url}#view=lesson&stage=6&lesson-heads=2&sentence=the+bank+was+closed&second-sentence=the+river+bank+flooded&lesson-mask=blocks`;
  const { page, context, errors } = await openReused(browser, url, { bypassCSP: true });
  await page.waitForSelector('[data-compare=sentences] table[data-sentence="2"][data-head="1"]');
  assert.deepEqual(await page.locator('.stage[data-stage=tokens] li').allTextContents(), ['the', 'bank', 'was', 'closed', 'the', 'river', 'bank', 'flooded']);
  let shown = await shownMatrices(page);
  const T = 8, n = 4;
  const blockOf = (w, from) => Array.from({ length: n }, (_, i) => w.values.slice((from + i) * T + from, (from + i) * T + from + n)).flat();
  for (const h of [0, 1]) {
    const packed = shown[h ? `weights@${h}` : 'weights'];
    for (let i = 0; i < T; ++i)
      for (let j = 0; j < T; ++j) if (i < n !== j < n) assert.equal(packed.values[i * T + j], 0, `head ${h}: no weight across sentences`);
    for (const [s, from] of [[1, 0], [2, n]]) {
      const alone = shown[`weights@${h}#s${s}`];
      assert.deepEqual([alone.rows, alone.cols], [n, n]);
      blockOf(packed, from).forEach((v, c) => assert.ok(Math.abs(v - alone.values[c]) < 1e-6, `head ${h} sentence ${s} [${c}]: packed ${v}, alone ${alone.values[c]}`));
    }
  }
  // "bank" (key 1 of sentence 1, key 2 of sentence 2) has the same embedding, yet its rows differ.
  assert.notDeepEqual(shown['weights@0#s1'].values.slice(4, 8), shown['weights@0#s2'].values.slice(8, 12));

  // With positions on, each sentence alone counts its positions from 0: the core on its own rows of E.
  await page.check('[name=lessonPositions]');
  await page.waitForFunction(() => /lesson-positions=1/.test(location.hash));
  await page.waitForSelector('table[data-matrix=P]');
  shown = await shownMatrices(page);
  await loadCoreInPage(page);
  const core = await page.evaluate(({ E, Wq, Wk, Wv, Wo }) => {
    const f = (s) => ({ data: Float32Array.from(s.values), rows: s.rows, cols: s.cols });
    const rows = { data: Float32Array.from(E.values.slice(4 * 8)), rows: 4, cols: 8 };
    const X = window.__core.addPositions(rows).X;
    return window.__plain(window.__core.multiHeadSelfAttention({ X, Wq: Wq.map(f), Wk: Wk.map(f), Wv: Wv.map(f), Wo: f(Wo), mask: new Uint8Array(16) }));
  }, { E: shown.E, Wq: [shown.Wq, shown['Wq@1']], Wk: [shown.Wk, shown['Wk@1']], Wv: [shown.Wv, shown['Wv@1']], Wo: { values: zeroWo(8).data, rows: 8, cols: 8 } });
  assert.deepEqual(shown['weights@0#s2'].values, core.heads[0].weights.data);
  assert.deepEqual(shown['weights@1#s2'].texts, core.heads[1].weights.data.map(fmt));
  assert.deepEqual(errors, []);
  await context.close();
});

test('at 360 px the lesson with two heads, a drawn mask and two sentences fits, and the mask is reachable', async () => {
  const url = `${srv.url}#view=lesson&stage=9&lesson-heads=2&second-sentence=a+b&lesson-positions=1&lesson-mask=causal`;
  const { page, context, errors } = await openReused(browser, url, { width: 360, height: 740 });
  await page.waitForSelector('table[data-matrix=projected]');
  assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= 360), 'no sideways scroll of the page');
  const cell = page.locator('button.mask-cell[data-i="0"][data-j="7"]');
  await cell.scrollIntoViewIfNeeded();
  await cell.focus();
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => /lesson-mask=01111110\./.test(location.hash));
  assert.deepEqual(errors, []);
  await context.close();
});
