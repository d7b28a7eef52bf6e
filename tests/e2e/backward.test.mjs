// The training view's "Backward pass of one query row" panel: after some training, the numbers it
// shows for one head and query are consistent with each other (softmax Jacobian, masked keys, the
// dQ/dK/dV formulas) and the loss is -log softmax(logits)[target] of the model, computed here by
// a second path: the core loaded in the page, with the weights the page exports. Changing the
// head, the query or the target changes what is shown; the controls work from the keyboard.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { downloadBytes, openReused, pauseRun, useBrowser, waitForStep, waitReady } from './harness.mjs';

let srv;
let browser;
useBrowser((s, b) => {
  srv = s;
  browser = b;
});

const PANEL = 'section.backward-panel';

/** Waits until the panel shows the row for these attributes (and is not loading). */
function panelShows(page, want) {
  return page.waitForFunction(
    ({ sel, want }) => {
      const d = document.querySelector(sel).dataset;
      return d.state === 'ready' && Object.entries(want).every(([k, v]) => d[k] === String(v));
    },
    { sel: PANEL, want },
  );
}

/** Every table of the panel: shape and exact values (data-value), plus the panel's attributes. */
function shown(page) {
  return page.$eval(PANEL, (panel) => {
    const matrices = Object.fromEntries(
      [...panel.querySelectorAll('table[data-matrix]')].map((t) => {
        const rows = [...t.tBodies[0].rows];
        const cells = rows.flatMap((r) => [...r.cells].filter((c) => c.tagName === 'TD'));
        return [t.dataset.matrix, { rows: rows.length, cols: cells.length / rows.length, values: cells.map((c) => Number(c.dataset.value)), texts: cells.map((c) => c.textContent) }];
      }),
    );
    return { m: matrices, data: { ...panel.dataset } };
  });
}

/** Presses Enter on the button (no click at coordinates: panels above it may change height) and
 * returns the bytes of the one download it starts. */
async function download(page, selector) {
  await page.focus(selector);
  const [d] = await Promise.all([page.waitForEvent('download'), page.keyboard.press('Enter')]);
  return downloadBytes(d);
}

/** -log softmax(logits of position i)[target] for each target, by the core loaded in the page
 * with the exported weights: a second path to the model's loss. */
function lossesInPage(page, { weights, config, ids, i, targets }) {
  return page.evaluate(
    async ({ weights, config, ids, i, targets }) => {
      const url = new URL('wasm/attention-core-relaxed.js', document.baseURI).href;
      const core = await (await import(url)).default();
      const t = new core.Trainer(config);
      try {
        t.importWeights(Uint8Array.from(weights));
        const r = t.attention(Int32Array.from(ids));
        const row = Array.from(r.logits.subarray(i * r.vocabSize, (i + 1) * r.vocabSize));
        const max = Math.max(...row);
        const lse = max + Math.log(row.reduce((a, x) => a + Math.exp(x - max), 0));
        return { losses: targets.map((y) => lse - row[y]), answers: Array.from(core.taskTargets(config.task, Int32Array.from(ids))) };
      } finally {
        t.delete();
      }
    },
    { weights: Array.from(weights), config, ids, i, targets },
  );
}

const close = (a, b, tol, what) => assert.ok(Math.abs(a - b) <= tol, `${what}: ${a} vs ${b} (tolerance ${tol})`);

/** The consistency of one shown row: forward and backward formulas, the mask, the shapes. */
function assertConsistent({ m, data }, query) {
  const T = m.weights.cols;
  const dk = m.q.cols;
  const dv = m.out.cols;
  const scale = Number(data.scale);
  close(scale, 1 / Math.sqrt(dk), 1e-7, 'scale is 1/sqrt(dk)');
  assert.deepEqual([m.K.rows, m.K.cols, m.V.rows, m.V.cols], [T, dk, T, dv]);
  assert.deepEqual([m.dK.rows, m.dK.cols, m.dV.rows, m.dV.cols], [T, dk, T, dv]);
  for (const name of ['scores', 'weights', 'dWeights', 'dScores']) assert.deepEqual([m[name].rows, m[name].cols], [1, T], name);
  const w = m.weights.values;
  const dW = m.dWeights.values;
  const dS = m.dScores.values;
  const q = m.q.values;
  const dOut = m.dOut.values;
  // The weights row is a distribution over the keys up to the query.
  close(w.reduce((a, b) => a + b, 0), 1, 1e-5, 'the weights row sums to 1');
  // The scores: q . k_j * scale for visible keys, masked (-inf, shown as "masked") after the query.
  for (let j = 0; j < T; ++j) {
    if (j > query) {
      assert.equal(m.scores.values[j], -Infinity, `score ${j} is masked`);
      assert.equal(m.scores.texts[j], 'masked');
      assert.equal(w[j], 0, `weight ${j} is 0`);
    } else {
      let s = 0;
      for (let c = 0; c < dk; ++c) s += q[c] * m.K.values[j * dk + c];
      close(m.scores.values[j], s * scale, 1e-5, `score ${j}`);
    }
  }
  // out_i = w V.
  for (let c = 0; c < dv; ++c) {
    let o = 0;
    for (let j = 0; j < T; ++j) o += w[j] * m.V.values[j * dv + c];
    close(m.out.values[c], o, 1e-5, `out[${c}]`);
  }
  // dWeights = dOut . V^T.
  for (let j = 0; j < T; ++j) {
    let s = 0;
    for (let c = 0; c < dv; ++c) s += dOut[c] * m.V.values[j * dv + c];
    close(dW[j], s, 1e-5, `dWeights[${j}]`);
  }
  // The softmax Jacobian applied: dScores = w * (dW - sum_k w_k dW_k).
  const wdw = w.reduce((a, wj, j) => a + wj * dW[j], 0);
  for (let j = 0; j < T; ++j) close(dS[j], w[j] * (dW[j] - wdw), 1e-5, `dScores[${j}]`);
  // dQ = dScores K * scale; dK row j = dS_j q * scale; dV row j = w_j dOut.
  for (let c = 0; c < dk; ++c) {
    let s = 0;
    for (let j = 0; j < T; ++j) s += dS[j] * m.K.values[j * dk + c];
    close(m.dQ.values[c], s * scale, 1e-5, `dQ[${c}]`);
  }
  for (let j = 0; j < T; ++j) {
    for (let c = 0; c < dk; ++c) close(m.dK.values[j * dk + c], dS[j] * q[c] * scale, 1e-6, `dK[${j}][${c}]`);
    for (let c = 0; c < dv; ++c) close(m.dV.values[j * dv + c], w[j] * dOut[c], 1e-6, `dV[${j}][${c}]`);
  }
  // Keys after the query get exactly zero gradient.
  for (let j = query + 1; j < T; ++j) {
    assert.equal(dS[j], 0, `dScores[${j}] is exactly 0`);
    assert.ok(m.dK.values.slice(j * dk, (j + 1) * dk).every((v) => v === 0), `dK row ${j} is exactly 0`);
    assert.ok(m.dV.values.slice(j * dv, (j + 1) * dv).every((v) => v === 0), `dV row ${j} is exactly 0`);
  }
  assert.ok(dOut.some((v) => v !== 0), 'an intact head gets a nonzero dOut');
}

test('backward panel: after training, one row of head 2 is consistent, and the loss is the model\'s', async () => {
  const { page, context, errors } = await openReused(browser, `${srv.url}#view=train&panel=all`, { bypassCSP: true });
  await waitReady(page);
  assert.equal(await page.getAttribute(PANEL, 'aria-label'), 'Backward pass for one query row');
  assert.equal(await page.textContent(`${PANEL} h2`), 'Backward pass of one query row');
  for (let k = 1; k <= 5; ++k) {
    await page.click('[data-action=step10]');
    await waitForStep(page, 10 * k);
  }
  // Pause/step refreshes the panel.
  await panelShows(page, { step: 50 });
  assert.deepEqual(await page.locator(`${PANEL} select[name=bw-head] option`).allTextContents(), ['Head 1', 'Head 2', 'Head 3', 'Head 4']);

  await page.selectOption(`${PANEL} select[name=bw-head]`, '1');
  await page.selectOption(`${PANEL} select[name=bw-query]`, '5');
  await panelShows(page, { head: 1, query: 5, step: 50, targetSource: 'task' });
  const a = await shown(page);
  for (const name of ['q', 'K', 'V', 'scores', 'weights', 'out', 'dOut', 'dWeights', 'dScores', 'dQ', 'dK', 'dV']) assert.ok(a.m[name], `the panel shows ${name}`);
  assertConsistent(a, 5);
  assert.match(await page.textContent(`${PANEL} .bw-target-note`), new RegExp(`^Target token ${a.data.target}: the repeat task's answer at position 5\\.$`));
  assert.match(await page.textContent(`${PANEL} .bw-note`), /after the query \(j > 5\) get exactly zero gradient.*Ablation panel gets dOut = 0/);

  // The loss, by a second path: the exported weights in a core loaded here.
  const weights = await download(page, '[data-export=weights]');
  const run = JSON.parse((await download(page, '[data-export=json]')).toString('utf8'));
  const target = Number(a.data.target);
  const other = (target + 1) % run.config.vocabSize;
  const ref = await lossesInPage(page, { weights, config: run.config, ids: run.sample, i: 5, targets: [target, other] });
  assert.equal(ref.answers[5], target, "the default target is the task's answer at position 5");
  close(Number(a.data.loss), ref.losses[0], 1e-4 * (1 + ref.losses[0]), 'loss = -log softmax(logits)[target]');

  // Another head: other numbers, but the same loss (it is the model's, not the head's).
  await page.selectOption(`${PANEL} select[name=bw-head]`, '2');
  await panelShows(page, { head: 2, query: 5 });
  const b = await shown(page);
  assertConsistent(b, 5);
  assert.notDeepEqual(b.m.q.values, a.m.q.values, 'head 3 has other queries');
  assert.notDeepEqual(b.m.weights.values, a.m.weights.values, 'head 3 has other weights');
  assert.notDeepEqual(b.m.dOut.values, a.m.dOut.values, 'head 3 gets another dOut');
  assert.equal(b.data.loss, a.data.loss);

  // A chosen target: another loss, the model's for that target.
  await page.selectOption(`${PANEL} select[name=bw-target]`, String(other));
  await panelShows(page, { head: 2, query: 5, target: other, targetSource: 'chosen' });
  const c = await shown(page);
  assertConsistent(c, 5);
  assert.notEqual(c.data.loss, b.data.loss);
  close(Number(c.data.loss), ref.losses[1], 1e-4 * (1 + ref.losses[1]), `loss for the chosen target ${other}`);
  assert.match(await page.textContent(`${PANEL} .bw-target-note`), /chosen by you/);
  // Back to the default.
  await page.selectOption(`${PANEL} select[name=bw-target]`, '');
  await panelShows(page, { head: 2, query: 5, target, targetSource: 'task' });
  assert.deepEqual(errors, []);
  await context.close();
});

test('backward panel: keyboard operable, follows steps and training, no overflow at 360 px', async () => {
  const { page, context, errors } = await openReused(browser, `${srv.url}#view=train&panel=backward&task=copy&heads=2`, { width: 360, height: 780 });
  await waitReady(page);
  await panelShows(page, { step: 0 });
  const start = await shown(page);
  const q0 = Number(start.data.query);

  // Keyboard: arrow keys on the focused query select, Tab to the target select.
  await page.focus(`${PANEL} select[name=bw-query]`);
  await page.keyboard.press('ArrowDown');
  await panelShows(page, { query: q0 + 1 });
  assertConsistent(await shown(page), q0 + 1);
  await page.keyboard.press('Shift+Tab');
  assert.equal(await page.evaluate(() => document.activeElement.getAttribute('name')), 'bw-head');
  await page.keyboard.press('ArrowDown');
  await panelShows(page, { head: 1, query: q0 + 1 });
  await page.keyboard.press('Tab');
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.getAttribute('name')), 'bw-target');
  await page.keyboard.press('ArrowDown');
  await panelShows(page, { head: 1, query: q0 + 1, target: 0, targetSource: 'chosen' });

  // A step refreshes it; so does training (throttled, while the panel is on screen), and pausing.
  await page.click('[data-action=step1]');
  await waitForStep(page, 1);
  await panelShows(page, { step: 1, head: 1, target: 0 });
  await page.focus('[data-action=play]');
  await page.keyboard.press('Enter');
  await page.waitForSelector('.readout[data-status="playing"]');
  await page.$eval(PANEL, (el) => el.scrollIntoView());
  await waitForStep(page, 2, { sel: PANEL, atLeast: true });
  // The play button still has the focus: Pause, unless the run (copy is solved fast) has paused
  // itself meanwhile, when Enter would play again; pauseRun pauses it either way.
  if ((await page.getAttribute('.readout', 'data-status')) === 'playing') await page.keyboard.press('Enter');
  await pauseRun(page);
  const step = (await page.$eval('.readout', (el) => el.dataset.step));
  await panelShows(page, { step, head: 1, target: 0 });
  assertConsistent(await shown(page), q0 + 1);

  // Wide tables scroll inside the panel; the page itself does not.
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `the page is ${overflow} px wider than the window`);
  assert.deepEqual(errors, []);
  await context.close();
});
