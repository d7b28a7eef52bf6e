// The "Look inside" panel in the page. A small induction model is stepped and paused;
// the four figures (logit lens, direct attribution, activation patching, QK/OV circuits) show
// exactly the numbers of a second path: the core loaded in the page's main thread, a Trainer of
// the same config stepped the same steps (the core is deterministic), trainer.inspect on the same
// sample with the core's default corruption. A bad corrupted input gets one sentence and the
// figures stay; a model without the residual stream shows the lens's reason; the preset link
// opens the induction preset with the panel. Waits have timeouts as guards only.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { audit, openReused, useBrowser, waitForStep, waitReady } from './harness.mjs';

const HASH = 'view=train&task=induction&layers=2&residual=1&heads=2&d-model=16&vocab-size=16&seq-len=16&batch=8&lr=0.005&seed=1&panel=inspect';
const CONFIG = { vocabSize: 16, dModel: 16, nHeads: 2, seqLen: 16, batchSize: 8, lr: 0.005, seed: 1, attnDropout: 0, outDropout: 0, task: 'induction', nLayers: 2, residual: true };
const STEPS = 50;

let srv;
let browser;
useBrowser((s, b) => {
  srv = s;
  browser = b;
});

/** The second path: a Trainer of config stepped `steps` steps, inspected on ids as the panel does
 * by default (the task's answers; on induction the core's default corruption). */
function reference(page, config, steps, ids) {
  return page.evaluate(
    async ({ config, steps, ids }) => {
      const core = await (await import(new URL('wasm/attention-core-relaxed.js', document.baseURI).href)).default();
      const t = new core.Trainer(config);
      const m = (x) => (x ? Array.from(x.data ?? x) : null);
      try {
        while (t.stepsDone() < steps) t.step(Math.min(1000, steps - t.stepsDone()));
        const clean = Int32Array.from(ids);
        const c = core.inductionCorruption(clean, config.vocabSize);
        const r = t.inspect({ ids: clean, answers: core.taskTargets(config.task, clean), corrupted: c.ids, position: c.position, answerClean: c.answerClean, answerCorrupt: c.answerCorrupt });
        const a = r.attribution;
        return {
          corrupted: Array.from(c.ids),
          lens: { applies: r.lens.applies, reason: r.lens.reason, answerProb: m(r.lens.answerProb), topToken: m(r.lens.topToken), topProb: m(r.lens.topProb) },
          attribution: a.applies ? [...m(a.heads), ...m(a.embed), ...m(a.ffn), ...m(a.bias), ...m(a.total)] : null,
          patching: { resid: m(r.patching.resid), heads: m(r.patching.heads), headsAll: m(r.patching.headsAll) },
          qk: r.circuits.map((x) => m(x.qk)),
          ov: r.circuits.map((x) => m(x.ov)),
          copying: r.circuits.map((x) => x.copying),
        };
      } finally {
        t.delete();
      }
    },
    { config, steps, ids },
  );
}

/** The circuits' canvases, once drawn: name, shape, and whether each lies within the panel's
 * content box. */
const circuitCanvases = async (page) => {
  await page.waitForFunction(() => {
    const cs = [...document.querySelectorAll('.inspect-circuits canvas')];
    return cs.length === 2 && cs.every((c) => c.dataset.width);
  });
  return page.$$eval('.inspect-circuits canvas', (cs) => {
    const panel = document.querySelector('.inspect-panel');
    const p = panel.getBoundingClientRect();
    const pad = parseFloat(getComputedStyle(panel).paddingRight) || 0;
    return cs.map((c) => {
      const r = c.getBoundingClientRect();
      return { name: c.dataset.figure, rows: Number(c.dataset.rows), cols: Number(c.dataset.cols), fits: r.width > 100 && r.left >= p.left && r.right <= p.right - pad + 0.5 };
    });
  });
};

/** Points at cell (i, j) of a circuit's canvas (the heatmap's layout: a 26 px margin for the
 * labels, then square cells across the rest, less 4 px) and returns the readout. */
async function hoverCell(page, name, i, j) {
  const canvas = page.locator(`.inspect-circuits canvas[data-figure=${name}][data-width]`);
  await canvas.scrollIntoViewIfNeeded();
  const box = await canvas.boundingBox();
  const cols = Number(await canvas.getAttribute('data-cols'));
  const cell = (box.width - 26 - 4) / cols;
  await page.mouse.move(box.x + 26 + (j + 0.5) * cell, box.y + 26 + (i + 0.5) * cell);
  return page.textContent('.inspect-circuits .cell-readout');
}

/** Opens "Show every number" under the circuits and waits for its two tables. */
async function showNumbers(page) {
  await page.click('.inspect-numbers summary');
  await page.waitForSelector('.inspect-numbers table[data-figure=ov]');
}

/** The exact values (data-value) of a figure's cells, row-major. */
const values = (page, figure) => page.$$eval(`.inspect-panel table[data-figure=${figure}] tbody td`, (tds) => tds.map((td) => Number(td.dataset.value)));
const same = (shown, ref) => assert.deepEqual(shown.map((v) => (Number.isNaN(v) ? 'NaN' : v)), ref.map((v) => (Number.isNaN(v) ? 'NaN' : Math.fround(v))));

test('stepped and paused: the four figures show the core\'s numbers; a bad corrupted input gets one sentence and keeps them', async () => {
  const { page, context, errors } = await openReused(browser, `${srv.url}#${HASH}`, { bypassCSP: true });
  await waitReady(page);
  for (let k = 0; k < STEPS / 10; ++k) {
    await page.click('[data-action=step10]');
    await waitForStep(page, (k + 1) * 10);
  }
  await page.waitForFunction((s) => {
    const d = document.querySelector('.inspect-panel').dataset;
    return d.step === String(s) && d.state === 'done';
  }, STEPS);
  const ids = (await page.getAttribute('.inspect-panel', 'data-ids')).split(' ').map(Number);
  const ref = await reference(page, CONFIG, STEPS, ids);

  // The logit lens: the answer's probability, and the top token in each cell.
  assert.equal(await page.getAttribute('.inspect-lens', 'data-applies'), 'true');
  same(await values(page, 'lens'), ref.lens.answerProb);
  assert.deepEqual(await page.$$eval('.inspect-panel table[data-figure=lens] tbody td', (tds) => tds.map((td) => Number(td.dataset.topToken))), ref.lens.topToken);
  // Direct attribution: heads, embedding, biases, total (no FFN in this model).
  same(await values(page, 'attribution'), ref.attribution);
  assert.match(await page.textContent('.inspect-sum'), /^The 6 parts above the total add up to it at every position/);
  const T = ids.length;
  for (let t = 0; t < T; ++t) {
    const col = ref.attribution.filter((_, k) => k % T === t);
    const total = col.pop();
    if (Number.isFinite(total)) assert.ok(Math.abs(col.reduce((a, b) => a + b, 0) - total) <= 1e-4 * Math.max(1, Math.abs(total)), `position ${t}: the parts add up to the total`);
  }
  // Patching against the core's default corruption.
  assert.equal(await page.inputValue('.inspect-corrupted'), ref.corrupted.join(' '));
  same(await values(page, 'resid'), ref.patching.resid);
  same(await values(page, 'heads'), ref.patching.heads);
  same(await page.$$eval('.inspect-bar', (bars) => bars.map((b) => Number(b.dataset.value))), ref.patching.headsAll);
  // The circuits of the first head, then of the last one picked: two canvas heatmaps within the
  // panel's width, the hovered cell's value read out; every number in tables on demand; every
  // head's copying score.
  const V = CONFIG.vocabSize;
  assert.deepEqual(await circuitCanvases(page), [
    { name: 'qk', rows: V, cols: V, fits: true },
    { name: 'ov', rows: V, cols: V, fits: true },
  ]);
  assert.equal(await hoverCell(page, 'qk', 3, 5), `QK of layer 1 · head 1: query token 3 on key token 5: ${ref.qk[0][3 * V + 5].toFixed(3)}.`);
  assert.equal(await hoverCell(page, 'ov', 7, 7), `OV of layer 1 · head 1: attending to token 7 adds ${ref.ov[0][7 * V + 7].toFixed(3)} to the logit of token 7.`);
  assert.equal(await page.$('.inspect-panel table[data-figure=qk]'), null, 'the tables wait until asked for');
  await showNumbers(page);
  same(await values(page, 'qk'), ref.qk[0]);
  same(await values(page, 'ov'), ref.ov[0]);
  same(await values(page, 'copying'), ref.copying);
  await page.selectOption('.inspect-circuits select', '3');
  await page.waitForFunction(() => document.querySelector('.inspect-circuits').dataset.head === '3');
  await showNumbers(page);
  same(await values(page, 'ov'), ref.ov[3]);
  // The keyboard reads the maps too: focus one, move with the arrow keys.
  await page.focus('.inspect-circuits canvas[data-figure=qk]');
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowDown');
  assert.equal(await page.textContent('.inspect-circuits .cell-readout'), `QK of layer 2 · head 2: query token 1 on key token 1: ${ref.qk[3][1 * V + 1].toFixed(3)}.`);

  assert.deepEqual(await audit(page), []);
  // The cell readout, from the keyboard.
  await page.focus('.inspect-panel table[data-figure=lens] tbody td');
  await page.keyboard.press('ArrowDown');
  assert.match(await page.textContent('.inspect-lens .cell-readout'), /^after layer 1, position 0 \(token \d+\): answer .* top token \d+ with \d\.\d{3}\.$/);

  // Bad corrupted inputs: one sentence each, the figures stay as they were.
  const before = await values(page, 'resid');
  const problem = () => page.textContent('.inspect-field-problem');
  await page.fill('.inspect-corrupted', '1 2 3');
  await page.click('[data-action=inspect-patch]');
  assert.equal(await problem(), 'The corrupted input was not used: it has 3 tokens, and it needs 16, as many as the sample.');
  await page.fill('.inspect-corrupted', [...ref.corrupted.slice(0, 15), 16].join(' '));
  await page.press('.inspect-corrupted', 'Enter');
  assert.equal(await problem(), 'The corrupted input was not used: token 16 is outside the vocabulary (0 to 15).');
  await page.fill('.inspect-corrupted', ref.corrupted.join(' ').replace(/\d+$/, 'x'));
  await page.click('[data-action=inspect-patch]');
  assert.equal(await problem(), 'The corrupted input was not used: "x" is not a whole number; type token ids such as 3 17 5.');
  assert.deepEqual(await values(page, 'resid'), before);
  assert.equal(await page.getAttribute('.inspect-panel', 'data-state'), 'done');
  assert.equal(await page.isVisible('.inspect-panel > .problem'), false);
  assert.deepEqual(errors, []);
  await context.close();
});

test('the circuits fit the panel: 64 × 64 on the default model in one screenful or two, on a phone too; the induction preset\'s within the panel\'s edge', async () => {
  for (const width of [1280, 390]) {
    const { page, context, errors } = await openReused(browser, `${srv.url}#panel=inspect`, { bypassCSP: true, width });
    await waitReady(page);
    await page.waitForFunction(() => document.querySelector('.inspect-panel').dataset.state === 'done');
    const V = Number((await page.evaluate(() => location.hash)).match(/[#&]vocab-size=(\d+)/)[1]);
    assert.equal(V, 64, 'the default vocabulary');
    const shown = await circuitCanvases(page);
    assert.deepEqual(shown.map((c) => [c.name, c.rows, c.cols, c.fits]), [['qk', V, V, true], ['ov', V, V, true]], `width ${width}`);
    const tall = await page.$eval('.inspect-circuits', (f) => f.getBoundingClientRect().height);
    assert.ok(tall < 2.5 * Math.min(width, 900) + 600, `width ${width}: the circuits figure is ${tall} px tall`);
    assert.deepEqual(errors, []);
    await context.close();
  }
  const { page, context, errors } = await openReused(browser, `${srv.url}#panel=inspect`, { bypassCSP: true });
  await waitReady(page);
  await page.click('a[data-preset=find-circuit]');
  await page.waitForFunction(() => /[#&]task=induction(&|$)/.test(location.hash));
  await waitReady(page);
  await page.waitForFunction(() => document.querySelector('.inspect-panel').dataset.state === 'done' && document.querySelectorAll('.inspect-circuits canvas').length === 2);
  const V = Number((await page.evaluate(() => location.hash)).match(/[#&]vocab-size=(\d+)/)[1]);
  assert.deepEqual((await circuitCanvases(page)).map((c) => [c.name, c.rows, c.cols, c.fits]), [['qk', V, V, true], ['ov', V, V, true]]);
  assert.deepEqual(errors, []);
  await context.close();
});

test('without the residual stream the lens says why; the preset link opens the induction preset with the panel', async () => {
  const hash = 'view=train&task=induction&layers=1&residual=0&heads=2&d-model=16&vocab-size=16&seq-len=16&panel=inspect';
  const { page, context, errors } = await openReused(browser, `${srv.url}#${hash}`, { bypassCSP: true });
  await waitReady(page);
  await page.waitForFunction(() => document.querySelector('.inspect-panel').dataset.state === 'done');
  const ids = (await page.getAttribute('.inspect-panel', 'data-ids')).split(' ').map(Number);
  const ref = await reference(page, { ...CONFIG, nLayers: 1, residual: false }, 0, ids);
  assert.equal(ref.lens.applies, false);
  assert.equal(await page.getAttribute('.inspect-lens', 'data-applies'), 'false');
  assert.equal(await page.textContent('.inspect-lens .inspect-reason'), ref.lens.reason);
  assert.equal(await page.$('.inspect-panel table[data-figure=lens]'), null);

  const link = page.locator('a[data-preset=find-circuit]');
  assert.equal(await link.textContent(), 'Find the induction circuit');
  await link.click();
  await page.waitForFunction(() => /[#&]panel=inspect(&|$)/.test(location.hash) && /[#&]task=induction(&|$)/.test(location.hash) && /[#&]layers=2(&|$)/.test(location.hash));
  await waitReady(page);
  assert.equal(await page.getAttribute('.panel-picker [data-panel=inspect]', 'aria-selected'), 'true');
  assert.equal(await page.isVisible('.inspect-panel'), true);
  await page.waitForFunction(() => document.querySelector('.inspect-lens').dataset.applies === 'true');
  assert.deepEqual(errors, []);
  await context.close();
});
