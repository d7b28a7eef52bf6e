// The training view's "Predictions on the sample" panel and the sample drawn from the task: the
// top 3 tokens and probabilities shown are a softmax of the logits of the core, loaded here in the
// page with the weights the page exports; the marks are the core's taskTargets; after training
// repeat every counted position is right. "New sample" shows the generator's next sequence (the
// core's taskSample with the next seed) for every task; a typed sample still works and stays in
// the URL; a hostile one gets one clear sentence. Works at 360 px, the table reachable by keyboard.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { downloadBytes, openReused, playTo, useBrowser, waitForStep, waitReady } from './harness.mjs';

const PANEL = 'section.predictions-panel';
const TASKS = ['repeat', 'shift', 'copy', 'reverse', 'sort', 'future'];

let srv;
let browser;
useBrowser((s, b) => {
  srv = s;
  browser = b;
});

/** Waits until the panel shows its answer for this step and these sample ids. */
function panelShows(page, { step, ids }) {
  return page.waitForFunction(
    ({ sel, step, ids }) => {
      const d = document.querySelector(sel)?.dataset;
      return d?.state === 'ready' && (step === undefined || d.step === String(step)) && (ids === undefined || d.ids === ids);
    },
    { sel: PANEL, step, ids },
  );
}

/** What the table shows, row by row. */
function shown(page) {
  return page.$eval(PANEL, (panel) =>
    [...panel.querySelectorAll('tbody tr')].map((tr) => ({
      pos: Number(tr.dataset.pos),
      token: Number(tr.querySelector('td.tok').textContent),
      guesses: [...tr.querySelectorAll('td.guess')].map((td) => ({ token: Number(td.dataset.token), prob: Number(td.dataset.prob), text: td.textContent })),
      answer: Number(tr.querySelector('td.answer').dataset.answer),
      answerText: tr.querySelector('td.answer').textContent,
      answerProb: Number(tr.querySelector('td.answer-prob').dataset.prob),
      verdict: tr.dataset.verdict,
      verdictText: tr.querySelector('td.verdict').textContent,
      verdictColor: getComputedStyle(tr.querySelector('td.verdict')).color,
    })),
  );
}

/** Presses Enter on the button and returns the bytes of the one download it starts. */
async function download(page, selector) {
  await page.focus(selector);
  const [d] = await Promise.all([page.waitForEvent('download'), page.keyboard.press('Enter')]);
  return downloadBytes(d);
}

/** Loads the core in the page (once) as window.__core. */
function loadCore(page) {
  return page.evaluate(async () => {
    if (!window.__core) window.__core = await (await import(new URL('wasm/attention-core-relaxed.js', document.baseURI).href)).default();
  });
}

/** The core's probabilities are float32: a double softmax differs from them by their rounding
 * (half an ulp of a number <= 1, 6e-8) and the float32 logits' sums. */
const PROB_TOL = 1e-7;

/** A plain reference from the core loaded here with the exported weights: each position's
 * softmax of the logits (in double, the maximum subtracted) and the task's targets. */
async function reference(page, { weights, config, ids }) {
  await loadCore(page);
  return page.evaluate(
    ({ weights, config, ids }) => {
      const core = window.__core;
      const t = new core.Trainer(config);
      try {
        t.importWeights(Uint8Array.from(weights));
        const r = t.attention(Int32Array.from(ids));
        const V = r.vocabSize;
        const probs = ids.map((_, i) => {
          const row = Array.from(r.logits.subarray(i * V, (i + 1) * V));
          const max = Math.max(...row);
          const e = row.map((x) => Math.exp(x - max));
          const sum = e.reduce((a, b) => a + b, 0);
          return e.map((x) => x / sum);
        });
        return { probs, answers: Array.from(core.taskTargets(config.task, Int32Array.from(ids))) };
      } finally {
        t.delete();
      }
    },
    { weights: Array.from(weights), config, ids },
  );
}

/** Checks every row of the table against the reference: the top 3 by probability, the numbers
 * and their text, the answer, its probability and the mark. */
function assertMatches(rows, ids, ref) {
  assert.equal(rows.length, ids.length, 'one row per position');
  for (const [i, row] of rows.entries()) {
    const p = ref.probs[i];
    const order = p.map((_, v) => v).sort((a, b) => p[b] - p[a] || a - b);
    assert.equal(row.pos, i);
    assert.equal(row.token, ids[i]);
    assert.deepEqual(row.guesses.map((g) => g.token), order.slice(0, 3), `position ${i}: the three most likely tokens`);
    for (const [j, g] of row.guesses.entries()) {
      assert.ok(Math.abs(g.prob - p[g.token]) <= PROB_TOL, `position ${i}, guess ${j}: ${g.prob} vs ${p[g.token]}`);
      const [tok, num] = g.text.replace(' (the answer)', '').split(' ');
      assert.equal(Number(tok), g.token);
      const tol = g.prob >= 0.0005 ? 0.0005 : 0.05 * g.prob;
      assert.ok(Math.abs(Number(num) - g.prob) <= tol + 1e-12, `position ${i}: text ${g.text} shows ${g.prob}`);
      assert.equal(g.text.endsWith(' (the answer)'), g.token === ref.answers[i]);
    }
    const answer = ref.answers[i];
    assert.equal(row.answer, answer, `position ${i}: the task's answer`);
    if (answer < 0) {
      assert.equal(row.answerText, 'none');
      assert.deepEqual([row.verdict, row.verdictText], ['none', '– not counted']);
    } else {
      assert.ok(Math.abs(row.answerProb - p[answer]) <= PROB_TOL, `position ${i}: p(answer)`);
      const right = order[0] === answer;
      assert.deepEqual([row.verdict, row.verdictText], right ? ['right', '✓ right'] : ['wrong', '✗ wrong'], `position ${i}`);
    }
  }
}

/** The run as the page exports it: the weights and the JSON (config, sample). */
async function exported(page) {
  const weights = await download(page, '[data-export=weights]');
  const run = JSON.parse((await download(page, '[data-export=json]')).toString('utf8'));
  return { weights, config: run.config, ids: run.sample };
}

test('predictions: the top 3 and their probabilities are a softmax of the core\'s logits, the marks the task\'s answers', async () => {
  const { page, context, errors } = await openReused(browser, `${srv.url}#view=train&panel=all&task=copy&seed=5`, { bypassCSP: true });
  await waitReady(page);
  for (let k = 1; k <= 3; ++k) {
    await page.click('[data-action=step10]');
    await waitForStep(page, 10 * k);
  }
  await panelShows(page, { step: 30 });
  const run = await exported(page);
  assert.equal(await page.getAttribute(PANEL, 'data-ids'), run.ids.join(' '));
  const rows = await shown(page);
  const ref = await reference(page, run);
  assertMatches(rows, run.ids, ref);
  // copy: the first half sets no answer, so it is not counted; the summary says how many are right.
  assert.ok(rows.some((r) => r.verdict === 'none') && rows.some((r) => r.verdict !== 'none'));
  // "not counted" is neither right's colour nor wrong's (and its mark is neither ✓ nor ✗).
  const colours = (v) => new Set(rows.filter((r) => r.verdict === v).map((r) => r.verdictColor));
  for (const other of ['right', 'wrong']) for (const c of colours('none')) assert.ok(!colours(other).has(c), `not counted is ${c}, as ${other} is`);
  const counted = ref.answers.filter((a) => a >= 0).length;
  const right = rows.filter((r) => r.verdict === 'right').length;
  assert.match(await page.textContent(`${PANEL} .pred-summary`), new RegExp(`^Step 30: the first guess is right at ${right} of the ${counted} positions the copy task sets an answer for`));
  assert.match(await page.textContent(`${PANEL} .hint`), /softmax of the logits/);
  assert.deepEqual(errors, []);
  await context.close();
});

test('after training repeat, every position is marked right', async () => {
  const { page, context, errors } = await openReused(browser, `${srv.url}#view=train&panel=all`, { bypassCSP: true });
  await waitReady(page);
  const step = await playTo(page, 400);
  await panelShows(page, { step });
  const run = await exported(page);
  const rows = await shown(page);
  assertMatches(rows, run.ids, await reference(page, run));
  assert.deepEqual(rows.map((r) => r.verdict), run.ids.map(() => 'right'), 'repeat: every position right');
  assert.ok(rows.every((r) => r.guesses[0].prob > 0.9), 'and nearly sure of it');
  assert.equal(await page.getAttribute(PANEL, 'data-right'), String(run.ids.length));
  assert.deepEqual(errors, []);
  await context.close();
});

test('"New sample" shows the generator\'s next sequence for every task; the seed is in the URL', async () => {
  const { page, context, errors } = await openReused(browser, `${srv.url}#view=train&vocab-size=16&seq-len=9`, { bypassCSP: true });
  await waitReady(page);
  await loadCore(page);
  const taskSample = (task, seed) => page.evaluate(({ task, seed }) => Array.from(window.__core.taskSample(task, 16, 9, seed)).join(' '), { task, seed });
  // The default: the repeat task's sequence for sample seed 1.
  assert.equal(await page.getAttribute('.sample-field', 'data-source'), 'task');
  await panelShows(page, { step: 0, ids: await taskSample('repeat', 1) });
  assert.equal(await page.inputValue('[name=sample]'), await taskSample('repeat', 1));
  let seed = 1;
  for (const task of TASKS) {
    await page.selectOption('select[name=task]', task);
    await panelShows(page, { step: 0, ids: await taskSample(task, seed) });
    await page.click('[data-action=new-sample]');
    seed += 1;
    const want = await taskSample(task, seed);
    await panelShows(page, { step: 0, ids: want });
    assert.equal(await page.inputValue('[name=sample]'), want, `${task}: the box shows the drawn ids`);
    assert.match(await page.textContent('.sample-note'), new RegExp(`^Drawn from the ${task} task's generator \\(sample ${seed}\\)`));
    const hash = new URLSearchParams((await page.evaluate(() => location.hash)).slice(1));
    assert.deepEqual([hash.get('sample'), hash.get('sample-seed'), hash.get('task')], ['', String(seed), task]);
    // The marks are the task's answers on that sequence.
    const answers = await page.evaluate(({ task, ids }) => Array.from(window.__core.taskTargets(task, Int32Array.from(ids.split(' ').map(Number)))), { task, ids: want });
    const rows = await shown(page);
    assert.deepEqual(rows.map((r) => r.answer), answers, `${task}: answers`);
    assert.deepEqual(rows.map((r) => r.verdict === 'none'), answers.map((a) => a < 0), `${task}: not counted where the task sets no answer`);
  }
  // The link reloads to the same drawn sequence.
  const again = await openReused(browser, await page.evaluate(() => location.href));
  await waitReady(again.page);
  assert.equal(await again.page.inputValue('[name=sample]'), await taskSample('future', seed));
  await again.context.close();
  assert.deepEqual(errors, []);
  await context.close();
});

test('a typed sample still works and stays in the URL; emptying the box goes back to the task; a hostile one is named', async () => {
  const { page, context, errors } = await openReused(browser, `${srv.url}#view=train&panel=all&task=shift`, { bypassCSP: true });
  await waitReady(page);
  await page.fill('[name=sample]', '5 6 7 8 9');
  await page.press('[name=sample]', 'Enter');
  await panelShows(page, { step: 0, ids: '5 6 7 8 9' });
  assert.equal(await page.getAttribute('.sample-field', 'data-source'), 'typed');
  assert.equal(new URLSearchParams((await page.evaluate(() => location.hash)).slice(1)).get('sample'), '5 6 7 8 9');
  const rows = await shown(page);
  assert.deepEqual(rows.map((r) => r.answer), [-100, 5, 6, 7, 8], 'shift: the previous token');
  assertMatches(rows, [5, 6, 7, 8, 9], await reference(page, await exported(page)));

  // An old link's typed sample reads as before.
  const old = await openReused(browser, `${srv.url}#view=train&panel=all&sample=3%2014%2015%209`);
  await waitReady(old.page);
  assert.equal(await old.page.inputValue('[name=sample]'), '3 14 15 9');
  await old.page.waitForFunction((sel) => document.querySelector(sel)?.dataset.ids === '3 14 15 9', PANEL);
  await old.context.close();

  // Hostile: markup and out-of-range ids are named in one sentence; the ids that fit are used.
  await page.fill('[name=sample]', '<img src=x onerror=alert(1)> 3 99999');
  await page.press('[name=sample]', 'Enter');
  await panelShows(page, { step: 0, ids: '3' });
  assert.equal(await page.textContent('.sample-field .field-msg'), 'sample sequence: "<img" is not a token id in [0, 63]; "src=x" is not a token id in [0, 63]; "onerror=alert(1)>" is not a token id in [0, 63]');
  assert.equal(await page.getAttribute('[name=sample]', 'aria-invalid'), 'true');
  assert.equal(await page.locator(`${PANEL} img, .sample-field img`).count(), 0);
  await page.fill('[name=sample]', '1 2 3 4 5 6 7 8 9 10 11 12 13 14');
  await page.press('[name=sample]', 'Enter');
  await panelShows(page, { step: 0, ids: '1 2 3 4 5 6 7 8 9 10 11 12' });
  assert.equal(await page.textContent('.sample-field .field-msg'), 'sample sequence: only the first 12 ids fit (seq_len 12)');

  // Emptying the box: the task's generator again, with the seed kept.
  await page.fill('[name=sample]', '');
  await page.press('[name=sample]', 'Enter');
  await loadCore(page);
  const drawn = await page.evaluate(() => Array.from(window.__core.taskSample('shift', 64, 12, 1)).join(' '));
  await panelShows(page, { step: 0, ids: drawn });
  assert.equal(await page.inputValue('[name=sample]'), drawn);
  assert.equal(await page.textContent('.sample-field .field-msg'), '');
  assert.deepEqual(errors, []);
  await context.close();
});

test('at 360 px the table scrolls in a box the keyboard reaches, and the page does not', async () => {
  const { page, context, errors } = await openReused(browser, `${srv.url}#view=train&seq-len=16`, { width: 360, height: 800 });
  await waitReady(page);
  await panelShows(page, { step: 0 });
  const box = `${PANEL} .scroll`;
  assert.equal(await page.getAttribute(box, 'tabindex'), '0');
  assert.equal(await page.getAttribute(box, 'role'), 'region');
  const sizes = await page.$eval(box, (el) => ({ scroll: el.scrollWidth, client: el.clientWidth, page: document.documentElement.scrollWidth }));
  assert.ok(sizes.scroll > sizes.client, `the table is wider than the box at 360 px: ${JSON.stringify(sizes)}`);
  assert.ok(sizes.page <= 360, `the page does not scroll sideways: ${sizes.page}`);
  await page.focus(box);
  await page.keyboard.press('ArrowRight');
  await page.keyboard.press('ArrowRight');
  // The arrow keys scroll it (the browser may animate the scroll: wait for it, as a guard).
  await page.waitForFunction((sel) => document.querySelector(sel).scrollLeft > 0, box);
  assert.equal((await shown(page)).length, 16);
  // The New sample button is reachable and works from the keyboard.
  await page.focus('[data-action=new-sample]');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => new URLSearchParams(location.hash.slice(1)).get('sample-seed') === '2');
  assert.deepEqual(errors, []);
  await context.close();
});
