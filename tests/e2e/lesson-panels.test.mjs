// View 2's panels end to end, every number checked against a plain reference computed here:
// why √dk (the softmax with and without the scaling, largest weight, entropy), softmax
// stability (every intermediate, in float32), the output row as a blend of the value rows, the
// coloured tables, the cell links, and the sticky stage bar that must not cover a stage.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openReused, useBrowser } from './harness.mjs';
import { entropy, softmax } from '../reference-math.mjs';

let srv;
let browser;
useBrowser((s, b) => {
  srv = s;
  browser = b;
});

const close = (a, b, tol, what) => assert.ok(Math.abs(a - b) <= tol * (1 + Math.abs(b)), `${what}: shown ${a}, reference ${b}`);
/** The page's rounding (3 decimals, typographic minus, no "−0.000"). */
function fmt(v) {
  const s = v.toFixed(3);
  if (Number(s) === 0) return s.replace('-', '');
  return s.startsWith('-') ? `−${s.slice(1)}` : s;
}

/** data-value and text of every data cell of table[data-matrix=name], by row. */
function matrixOf(page, name) {
  return page.$eval(`table[data-matrix="${name}"]`, (t) =>
    [...t.tBodies[0].rows].map((r) => [...r.cells].filter((c) => c.tagName === 'TD').map((c) => ({ v: Number(c.dataset.value), text: c.textContent, bg: getComputedStyle(c).backgroundColor, fg: getComputedStyle(c).color }))),
  );
}
const values = (m) => m.map((r) => r.map((c) => c.v));

/** The √dk panel as shown: both bar lists, the readouts, the query and the keys. */
async function scalingShown(page) {
  return page.evaluate(() => {
    const p = document.querySelector('.scaling-panel');
    const bars = (name) => [...p.querySelectorAll(`[data-bars=${name}] td.bar-value`)].map((c) => ({ v: Number(c.dataset.value), text: c.textContent }));
    const stat = (name) => {
      const o = p.querySelector(`[data-stat=${name}]`);
      return { v: Number(o.dataset.value), text: o.textContent };
    };
    const rows = (name) => [...document.querySelector(`table[data-matrix="${name}"]`).tBodies[0].rows].map((r) => [...r.cells].filter((c) => c.tagName === 'TD').map((c) => Number(c.dataset.value)));
    return {
      dk: Number(p.dataset.dk),
      unscaled: bars('unscaled'),
      scaled: bars('scaled'),
      maxUnscaled: stat('max-unscaled'),
      maxScaled: stat('max-scaled'),
      entropyUnscaled: stat('entropy-unscaled'),
      entropyScaled: stat('entropy-scaled'),
      query: rows('scaling query')[0],
      keys: rows('scaling keys'),
      scores: rows('scaling scores'),
    };
  });
}

function checkScaling(shown, dk) {
  assert.equal(shown.dk, dk);
  assert.equal(shown.query.length, dk);
  assert.equal(shown.keys.length, 8);
  const scores = shown.keys.map((k) => k.reduce((s, v, i) => s + v * shown.query[i], 0));
  const scaled = scores.map((s) => s / Math.sqrt(dk));
  scores.forEach((s, j) => close(shown.scores[0][j], s, 1e-5, `score ${j}`));
  scaled.forEach((s, j) => close(shown.scores[1][j], s, 1e-5, `scaled score ${j}`));
  const wu = softmax(scores);
  const ws = softmax(scaled);
  wu.forEach((w, j) => close(shown.unscaled[j].v, w, 1e-4, `unscaled weight ${j}`));
  ws.forEach((w, j) => close(shown.scaled[j].v, w, 1e-5, `scaled weight ${j}`));
  assert.deepEqual(shown.unscaled.map((b) => b.text), shown.unscaled.map((b) => fmt(b.v)));
  assert.deepEqual(shown.scaled.map((b) => b.text), shown.scaled.map((b) => fmt(b.v)));
  close(shown.maxUnscaled.v, Math.max(...wu), 1e-4, 'largest unscaled weight');
  close(shown.maxScaled.v, Math.max(...ws), 1e-5, 'largest scaled weight');
  close(shown.entropyUnscaled.v, entropy(wu), 1e-4, 'unscaled entropy');
  close(shown.entropyScaled.v, entropy(ws), 1e-5, 'scaled entropy');
  for (const s of ['maxUnscaled', 'maxScaled', 'entropyUnscaled', 'entropyScaled']) assert.equal(shown[s].text, fmt(shown[s].v), s);
}

test('why √dk: the dk slider redraws both softmaxes, each matching a plain reference and the core\'s draws', async () => {
  const { page, context, errors } = await openReused(browser, `${srv.url}#view=lesson&stage=4&scale-dk=64&seed=42`, { bypassCSP: true });
  await page.waitForSelector('.stage[data-stage=scaled] .scaling-panel[data-dk="64"] [data-bars=scaled] td');
  const at64 = await scalingShown(page);
  checkScaling(at64, 64);
  // The random vectors come from the core (scalingDemo with the view's seed).
  const core = await page.evaluate(async () => {
    const url = new URL('wasm/attention-core-relaxed.js', document.baseURI).href;
    const c = await (await import(url)).default();
    const d = c.scalingDemo(64, 8, 42);
    return { query: Array.from(d.query), keys: Array.from(d.keys.data) };
  });
  assert.deepEqual(at64.query, core.query);
  assert.deepEqual(at64.keys.flat(), core.keys);
  // What the text promises, on these draws: unscaled is far sharper than scaled at dk = 64.
  assert.ok(at64.entropyUnscaled.v < at64.entropyScaled.v, 'the unscaled softmax has the lower entropy');
  assert.ok(at64.maxUnscaled.v > at64.maxScaled.v, 'the unscaled softmax has the larger top weight');

  // The slider with the keyboard: Home is dk = 1, where scaling by √1 changes nothing.
  await page.focus('[name=scaleDk]');
  await page.keyboard.press('Home');
  await page.waitForSelector('.scaling-panel[data-dk="1"]');
  await page.waitForFunction(() => document.querySelector('[data-matrix="scaling query"] tbody tr').cells.length === 2);
  const at1 = await scalingShown(page);
  checkScaling(at1, 1);
  assert.deepEqual(at1.scaled.map((b) => b.v), at1.unscaled.map((b) => b.v));
  assert.match(await page.evaluate(() => location.hash), /scale-dk=1\b/);
  await page.keyboard.press('ArrowRight');
  await page.waitForSelector('.scaling-panel[data-dk="2"]');
  await page.waitForFunction(() => document.querySelector('[data-matrix="scaling query"] tbody tr').cells.length === 3);
  checkScaling(await scalingShown(page), 2);
  assert.deepEqual(errors, []);
  await context.close();
});

/** The stability panel's table `name` (naive|stable): {step: [data-value, text] per cell}. */
function stepsShown(page, name) {
  return page.$eval(`table[data-softmax=${name}]`, (t) =>
    Object.fromEntries([...t.tBodies[0].rows].map((r) => [r.dataset.step, [...r.cells].filter((c) => c.tagName === 'TD').map((c) => ({ v: Number(c.dataset.value), text: c.textContent }))])),
  );
}
const f32 = Math.fround;
/** softmax_steps in float32, plainly: exps of (x - max), their sum in order, exps / sum. */
function stepsRef(x, subtract) {
  const xs = x.map(f32);
  const max = subtract ? Math.max(...xs) : 0;
  const shifted = xs.map((v) => f32(v - max));
  const exps = shifted.map((v) => f32(Math.exp(v)));
  let sum = 0;
  for (const e of exps) sum = f32(sum + e);
  return { max, shifted, exps, sum, weights: exps.map((e) => f32(e / sum)) };
}
function checkSteps(shown, ref, subtract, what) {
  const eq = (a, b, k) => {
    if (Number.isNaN(b) || !Number.isFinite(b) || b === 0) assert.ok(Object.is(a, b), `${what} ${k}: shown ${a}, reference ${b}`);
    else close(a, b, 2e-6, `${what} ${k}`);
  };
  shown.logits.forEach((c, j) => eq(c.v, ref.shifted[j] + ref.max, `x${j}`));
  if (subtract) {
    eq(shown.max[0].v, ref.max, 'max');
    shown.shifted.forEach((c, j) => eq(c.v, ref.shifted[j], `x${j} − max`));
  } else assert.equal(shown.max, undefined, 'the textbook recipe has no max step');
  shown.exps.forEach((c, j) => eq(c.v, ref.exps[j], `exp ${j}`));
  eq(shown.sum[0].v, ref.sum, 'sum');
  shown.weights.forEach((c, j) => eq(c.v, ref.weights[j], `weight ${j}`));
}

test('softmax stability: [100, 200, 300] overflows to ∞ and NaN without the max and not with it; typed logits too', async () => {
  const { page, context, errors } = await openReused(browser, `${srv.url}#view=lesson&stage=6`);
  await page.waitForSelector('.stage[data-stage=weights] table[data-softmax=stable]');
  assert.equal(await page.inputValue('[name=logits]'), '100 200 300');
  const naive = await stepsShown(page, 'naive');
  const stable = await stepsShown(page, 'stable');
  checkSteps(naive, stepsRef([100, 200, 300], false), false, 'naive');
  checkSteps(stable, stepsRef([100, 200, 300], true), true, 'stable');
  assert.deepEqual(naive.exps.map((c) => c.text), ['∞', '∞', '∞']);
  assert.deepEqual(naive.weights.map((c) => c.text), ['NaN', 'NaN', 'NaN']);
  assert.deepEqual(stable.shifted.map((c) => c.text), ['−200.000', '−100.000', '0.000']);
  // exp(−100) = 3.72e−44 is a float32 subnormal, which holds it as 3.78e−44.
  assert.deepEqual(stable.weights.map((c) => c.text), ['0.000', f32(Math.exp(-100)).toExponential(2).replace('-', '−'), '1.000']);
  assert.equal(await page.textContent('[data-verdict=naive]'), 'overflow: the weights are NaN');
  assert.equal(await page.textContent('[data-verdict=stable]'), 'weights are finite and sum to 1');

  // Small logits: both recipes agree with the plain softmax.
  await page.fill('[name=logits]', '1, -2 0.5 3');
  await page.locator('[name=logits]').blur();
  await page.waitForFunction(() => document.querySelectorAll('table[data-softmax=naive] thead th').length === 4);
  const x = [1, -2, 0.5, 3];
  checkSteps(await stepsShown(page, 'naive'), stepsRef(x, false), false, 'naive small');
  checkSteps(await stepsShown(page, 'stable'), stepsRef(x, true), true, 'stable small');
  const plain = softmax(x);
  (await stepsShown(page, 'naive')).weights.forEach((c, j) => close(c.v, plain[j], 1e-6, `weight ${j}`));
  assert.equal(await page.textContent('[data-verdict=naive]'), 'weights are finite and sum to 1');
  assert.match(await page.evaluate(() => location.hash), /logits=1%20-2%200.5%203|logits=1\+-2\+0.5\+3/);

  // Out of bounds and junk: one sentence says what was changed; the numbers follow the cleaned list.
  await page.fill('[name=logits]', '5000 abc 1');
  await page.locator('[name=logits]').blur();
  await page.waitForFunction(() => document.querySelectorAll('table[data-softmax=naive] thead th').length === 2);
  assert.equal(await page.inputValue('[name=logits]'), '1000 1');
  assert.equal(await page.textContent('.logits-field .field-msg'), 'logits: 5000 is outside ±1000; using 1000; "abc" is not a number');
  checkSteps(await stepsShown(page, 'stable'), stepsRef([1000, 1], true), true, 'stable clamped');
  assert.deepEqual(errors, []);
  await context.close();
});

test('the output as a blend: weight × value row for each key, summing to the core\'s output row', async () => {
  const { page, context, errors } = await openReused(browser, `${srv.url}#view=lesson&stage=7&blend-row=2`);
  await page.waitForSelector('table[data-matrix=blend][data-row="2"]');
  for (const row of [2, 0, 5]) {
    if (row !== 2) {
      await page.selectOption('[name=blendRow]', String(row));
      await page.waitForSelector(`table[data-matrix=blend][data-row="${row}"]`);
    }
    const W = values(await matrixOf(page, 'weights'));
    const V = values(await matrixOf(page, 'V'));
    const O = values(await matrixOf(page, 'output'));
    const blend = await matrixOf(page, 'blend');
    const T = W.length;
    assert.equal(blend.length, T + 1);
    for (let j = 0; j < T; ++j)
      V[j].forEach((v, c) => {
        assert.equal(blend[j][c].v, f32(W[row][j] * v), `row ${row}: key ${j} column ${c} is w × v in float32`);
        assert.equal(blend[j][c].text, fmt(blend[j][c].v));
      });
    assert.deepEqual(blend[T].map((c) => c.v), O[row], 'the last line is the core\'s output row');
    O[row].forEach((o, c) => close(blend.slice(0, T).reduce((s, r) => s + r[c].v, 0), o, 1e-5, `column ${c}: Σ of the products`));
    const labels = await page.$$eval('table[data-matrix=blend] tbody th', (ths) => ths.map((t) => t.textContent));
    assert.equal(labels[0], `${fmt(W[row][0])} × V[0 The]`);
    assert.equal(labels[T], `Σ = output[${row} ${['The', 'cat', 'sat', 'on', 'the', 'mat'][row]}]`);
  }
  assert.match(await page.evaluate(() => location.hash), /blend-row=5/);
  assert.deepEqual(errors, []);
  await context.close();
});

/** WCAG contrast of two "rgb(r, g, b)" colours. */
function contrast(a, b) {
  const lum = (s) => {
    const [r, g, bl] = s.match(/\d+/g).map(Number).map((c) => {
      const x = c / 255;
      return x <= 0.04045 ? x / 12.92 : ((x + 0.055) / 1.055) ** 2.4;
    });
    return 0.2126 * r + 0.7152 * g + 0.0722 * bl;
  };
  const [hi, lo] = [lum(a), lum(b)].sort((x, y) => y - x);
  return (hi + 0.05) / (lo + 0.05);
}
const rgb = (s) => s.match(/\d+/g).slice(0, 3).map(Number);

test('every matrix is coloured: signed values blue below 0 and orange above, weights on viridis, text readable', async () => {
  const { page, context, errors } = await openReused(browser, `${srv.url}#view=lesson&stage=7`);
  await page.waitForSelector('table[data-matrix=output]');
  const names = await page.$$eval('.stages table[data-matrix]', (ts) => ts.map((t) => t.dataset.matrix));
  for (const n of ['X', 'Q', 'K', 'V', 'scores', 'scaledScores', 'maskedScores', 'weights', 'output', 'blend']) assert.ok(names.includes(n), n);
  for (const name of names) {
    const m = (await matrixOf(page, name)).flat();
    for (const c of m) assert.ok(contrast(c.bg, c.fg) >= 4.5, `${name}: text ${c.fg} on ${c.bg}`);
    if (name === 'weights') {
      // viridis grows lighter with the value: sort by value, the luminance order must follow.
      const byValue = [...m].sort((a, b) => a.v - b.v);
      const lum = (c) => contrast(c.bg, 'rgb(0, 0, 0)');
      for (let k = 1; k < byValue.length; ++k) if (byValue[k].v > byValue[k - 1].v + 1e-3) assert.ok(lum(byValue[k]) >= lum(byValue[k - 1]), `weights: ${byValue[k].v} is not lighter than ${byValue[k - 1].v}`);
      continue;
    }
    const maxAbs = Math.max(...m.map((c) => Math.abs(c.v)));
    for (const c of m) {
      const [r, , b] = rgb(c.bg);
      if (c.v < -0.05 * maxAbs) assert.ok(b > r, `${name}: ${c.v} should be blue, is ${c.bg}`);
      if (c.v > 0.05 * maxAbs) assert.ok(r > b, `${name}: ${c.v} should be orange, is ${c.bg}`);
      // The further from 0, the darker: |v| = max is a full end of the ramp.
      if (Math.abs(c.v) === maxAbs) assert.ok(contrast(c.bg, 'rgb(255, 255, 255)') > 4, `${name}: the largest |value| ${c.v} is a dark end, ${c.bg}`);
      if (Math.abs(c.v) < 0.02 * maxAbs) assert.ok(contrast(c.bg, 'rgb(255, 255, 255)') < 1.2, `${name}: ${c.v} near 0 is near white, ${c.bg}`);
    }
  }
  assert.deepEqual(errors, []);
  await context.close();
});

/** The (table, row, col) of every lit cell, and the lit headers' texts. */
function litCells(page) {
  return page.evaluate(() => {
    const out = [];
    for (const td of document.querySelectorAll('td.linked')) {
      const tr = td.parentElement;
      const tds = [...tr.cells].filter((c) => c.tagName === 'TD');
      out.push(`${td.closest('table').dataset.matrix}:${tr.sectionRowIndex},${tds.indexOf(td)}`);
    }
    return out.sort();
  });
}
const rowCells = (name, i, n) => Array.from({ length: n }, (_, j) => `${name}:${i},${j}`);
const colCells = (name, j, n) => Array.from({ length: n }, (_, i) => `${name}:${i},${j}`);

test('pointing at or focusing a score, weight or output cell lights the rows and columns that made it', async () => {
  const { page, context, errors } = await openReused(browser, `${srv.url}#view=lesson&stage=7`);
  await page.waitForSelector('table[data-matrix=output]');
  // scores (2, 3) = Q row 2 · K row 3 (dk = 4).
  await page.hover('table[data-matrix=scores] tbody tr:nth-child(3) td:nth-of-type(4)');
  assert.deepEqual(await litCells(page), [...rowCells('K', 3, 4), ...rowCells('Q', 2, 4)].sort());
  assert.deepEqual(await page.$$eval('th.linked', (ths) => ths.map((t) => t.textContent).sort()), ['2 sat', '3 on']);
  // output (1, 2) = weights row 1 · V column 2 (T = 6, dv = 4), by keyboard: one tab stop per table.
  assert.equal(await page.$$eval('table[data-matrix=output] td[tabindex="0"]', (x) => x.length), 1);
  await page.focus('table[data-matrix=output] td[tabindex="0"]');
  await page.keyboard.press('ArrowDown');
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowRight');
  assert.deepEqual(await page.evaluate(() => {
    const td = document.activeElement;
    return [td.closest('table').dataset.matrix, td.parentElement.sectionRowIndex, td.textContent === td.parentElement.cells[3].textContent];
  }), ['output', 1, true]);
  assert.deepEqual(await litCells(page), [...colCells('V', 2, 6), ...rowCells('weights', 1, 6)].sort());
  assert.equal(await page.$$eval('table[data-matrix=output] td[tabindex="0"]', (x) => x.length), 1);
  // weights (4, 0): Q row 4, K row 0 and the masked-scores row 4 it normalises.
  await page.hover('table[data-matrix=weights] tbody tr:nth-child(5) td:nth-of-type(1)');
  assert.deepEqual(await litCells(page), [...rowCells('K', 0, 4), ...rowCells('Q', 4, 4), ...rowCells('maskedScores', 4, 6)].sort());
  // Leaving the tables clears the links.
  await page.hover('h1');
  await page.locator('h1').focus().catch(() => {});
  await page.evaluate(() => document.activeElement?.blur());
  assert.deepEqual(await litCells(page), []);
  assert.deepEqual(errors, []);
  await context.close();
});

for (const width of [1280, 360]) {
  test(`the sticky stage bar never covers the stage scrolled under it (${width} px)`, async () => {
    const context = await browser.newContext({ viewport: { width, height: 640 }, reducedMotion: 'reduce' });
    const page = await context.newPage();
    await page.goto(`${srv.url}#view=lesson`);
    await page.waitForSelector('.stage[data-stage=tokens]');
    let scrolled = 0;
    for (let i = 1; i < 8; ++i) {
      const before = await page.evaluate(() => scrollY);
      await page.focus('[data-action=next]');
      await page.keyboard.press('Enter');
      await page.waitForFunction((n) => document.querySelectorAll('.stage').length === n, i + 1);
      // Reduced motion: the page scrolled when it rendered the stage; a frame later the layout is drawn.
      await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => r())));
      const boxes = await page.evaluate(() => {
        const nav = document.querySelector('.stage-nav').getBoundingClientRect();
        const cur = document.querySelector('.stage[aria-current=step]');
        const first = cur.querySelector('table, ol');
        return { navBottom: nav.bottom, stageTop: cur.getBoundingClientRect().top, tableTop: first?.getBoundingClientRect().top ?? Infinity, y: scrollY };
      });
      if (boxes.y !== before) scrolled++;
      assert.ok(boxes.stageTop >= boxes.navBottom - 0.5, `stage ${i}: the bar (bottom ${boxes.navBottom}) covers the stage (top ${boxes.stageTop})`);
      assert.ok(boxes.tableTop >= boxes.navBottom, `stage ${i}: the bar covers the table (top ${boxes.tableTop})`);
    }
    assert.ok(scrolled >= 2, `the page scrolled to new stages (${scrolled} times)`);
    // A stage scrolled into view by script (as Next does) lands below the bar too.
    await page.evaluate(() => document.querySelector('.stage[data-stage=X]').scrollIntoView({ block: 'start' }));
    const x = await page.evaluate(() => ({ nav: document.querySelector('.stage-nav').getBoundingClientRect().bottom, table: document.querySelector('table[data-matrix=X]').getBoundingClientRect().top }));
    assert.ok(x.table >= x.nav, `X table top ${x.table} under the bar bottom ${x.nav}`);
    await context.close();
  });
}
