// Induction heads in the page: the preset "watch an induction head form" (a link, and the same as element
// attributes), the layer × head grid, training until the phase change, the scores the timeline, the
// composition panel and the Ablation panel show, and the knockout of the previous-token head. Every
// number shown is checked against a second path: the core loaded in the page's main thread, trained
// with the same config for the same number of steps (the core is deterministic), so its
// phaseChange(), headScores(), evaluate() and attention() must give exactly what the page shows.
// Waits have timeouts as guards only (CI's other core may be busy); no duration is asserted.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { audit, downloadBytes, lessonPage, openRecorded, openReused, playTo, serveDistWith, useBrowser, waitForStep, waitReady } from './harness.mjs';

/** The preset, as presets.ts writes it (the unit tests pin the same string). */
const PRESET =
  'view=train&vocab-size=32&d-model=32&heads=2&seq-len=32&batch=32&lr=0.005&seed=0&task=induction&layers=2&residual=1&emb-init-std=0.5' +
  '&sample=3+17+5+12+20+8+29+16+22+1+26+10+14+5+12+20+8+29+16+31+9';
const CONFIG = { vocabSize: 32, dModel: 32, nHeads: 2, seqLen: 32, batchSize: 32, lr: 0.005, seed: 0, attnDropout: 0, outDropout: 0, task: 'induction', nLayers: 2, residual: true, embInitStd: 0.5 };
const SAMPLE = PRESET.split('sample=')[1].split('+').map(Number);

let srv;
let browser;
useBrowser((s, b) => {
  srv = s;
  browser = b;
});

/**
 * The second path, in the page's main thread: a Trainer of CONFIG trained to each of `steps`
 * (ascending); at each, its phase change, head scores, eval loss/accuracy (4 batches, as the
 * Ablation panel) and the sample's attention; and at the last, the same under each of
 * `ablations` (lists of heads off), so one training serves every knock-out the test reads.
 */
function reference(page, steps, ablations = []) {
  return page.evaluate(
    async ({ config, steps, sample, ablations }) => {
      const core = await (await import(new URL('wasm/attention-core-relaxed.js', document.baseURI).href)).default();
      const t = new core.Trainer(config);
      const plain = (s) => ({ previousToken: Array.from(s.previousToken), prefixMatching: Array.from(s.prefixMatching), composition: Array.from(s.composition), baseline: s.compositionBaseline });
      const at = [];
      try {
        for (const step of steps) {
          while (t.stepsDone() < step) t.step(Math.min(1000, step - t.stepsDone()));
          at.push({ step, phaseChange: t.phaseChange(), scores: plain(t.headScores()), evaluation: t.evaluate(4), weights: Array.from(t.attention(Int32Array.from(sample)).weights) });
        }
        const ablated = ablations.map((headsOff) => {
          t.setAblation({ headsOff });
          return { scores: plain(t.headScores()), evaluation: t.evaluate(4) };
        });
        return { at, ablated };
      } finally {
        t.delete();
      }
    },
    { config: CONFIG, steps, sample: SAMPLE, ablations },
  );
}

const readout = (page) => page.$eval('.readout', (el) => ({ step: Number(el.dataset.step), status: el.dataset.status }));

test('the preset link sets two layers with the residual stream on the induction task; the heatmaps are a layer × head grid', async () => {
  const { page, context, errors } = await openReused(browser, `${srv.url}#view=train&panel=all`);
  await waitReady(page);
  const link = page.locator('a[data-preset=induction]');
  assert.equal(await link.textContent(), 'Watch an induction head form');
  assert.equal(await link.getAttribute('href'), `#${PRESET}`);
  // From the keyboard.
  await link.focus();
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.querySelector('.heatmaps').dataset.layers === '2');
  await waitReady(page);
  const hash = await page.evaluate(() => location.hash);
  assert.match(hash, /&task=induction&layers=2&residual=1&/);
  assert.match(hash, /&heads=2&seq-len=32&/);
  assert.equal(await page.inputValue('[name=nLayers]'), '2');
  assert.equal(await page.isChecked('[name=residual]'), true);
  assert.match(await page.textContent('.task-help'), /One layer cannot do that/);
  assert.deepEqual(await page.locator('.heatmaps .heat-layer').allTextContents(), ['Layer 1', 'Layer 2']);
  assert.deepEqual(await page.locator('.heatmaps figcaption').allTextContents(), [
    'layer 1 · head 1', 'layer 1 · head 2', "Average of layer 1's heads", 'layer 2 · head 1', 'layer 2 · head 2', "Average of layer 2's heads",
  ]);
  assert.deepEqual(await page.$$eval('.heatmaps canvas', (cs) => cs.map((c) => c.dataset.head)), ['0', '1', 'avg', '2', '3', 'avg']);
  // The controls change the depth: one layer gives the one-layer grid back.
  await page.fill('[name=nLayers]', '1');
  await page.press('[name=nLayers]', 'Tab');
  await page.waitForFunction(() => document.querySelector('.heatmaps').dataset.layers === '1');
  assert.deepEqual(await page.locator('.heatmaps figcaption').allTextContents(), ['Head 1', 'Head 2', 'Average of heads']);
  assert.match(await page.evaluate(() => location.hash), /&layers=1&residual=1&/);
  assert.deepEqual(errors, []);
  await context.close();
});

test('trained from the preset until the phase change: the chart marks it, the scores shown are the core\'s, and knocking out the previous-token head breaks the induction head', async (t) => {
  // Trained with the Circuits panel open (the scores a learner watches while the head forms), then
  // every panel opened at the pause, as a learner looks at them.
  const { page, context, errors } = await openReused(browser, `${srv.url}#${PRESET}&panel=circuits`, { bypassCSP: true });
  await waitReady(page);
  // Train past the phase change, far enough for the induction head to do its job: 200 steps past
  // it, the weakest claim below (a previous-token score > 0.5) holds with a margin of 0.1 (node
  // core, this config with seeds 0 to 3: 0.60 to 0.65 at 200 steps past, 0.69 to 0.71 at 400;
  // seed 0, the preset's, 0.61; the knock-out's prefix-matching and accuracy fall to under 0.1 of
  // intact from the phase change on), and the main thread trains every step again. Solved on the
  // way, the run pauses itself with the phase change on screen; Play goes on.
  const step = await playTo(page, 200, {
    until: (past) => {
      const p = Number(document.querySelector('.chart').dataset.phaseChange ?? -1);
      return p >= 0 && Number(document.querySelector('.readout').dataset.step) >= p + past;
    },
  });
  const done = await page.$eval('.done-note', (el) => ({ hidden: el.hidden, kind: el.dataset.kind, step: Number(el.dataset.step), paused: el.dataset.paused }));
  t.diagnostic(`done note: ${JSON.stringify(done)}`);
  await page.click('.panel-picker [data-panel=all]');
  const phase = Number(await page.getAttribute('.chart', 'data-phase-change'));
  assert.match(await page.textContent('.phase-note'), new RegExp(`^Phase change at step ${phase} \\(the dashed line\\)`));
  // Solved (if it was by then) only after the phase change: the plateau is far above 0.1 nats, so
  // a run that paused itself stopped with the phase change and its note on screen.
  if (!done.hidden) assert.ok(done.kind === 'solved' && done.paused === 'self' && done.step > phase, `${JSON.stringify(done)}, phase change at ${phase}`);

  // What the panels show, once they measured this step.
  await waitForStep(page, step, { sel: '.composition-panel' });
  await waitForStep(page, step, { sel: '.ablation-panel' });
  // The timeline holds the last snapshot before the pause (its step: the last multiple of its interval).
  await page.waitForFunction(
    (s) => {
      const d = document.querySelector('.timeline-panel').dataset;
      return Number(d.entries) >= 2 && Number(d.step) === Math.floor(s / Number(d.every)) * Number(d.every);
    },
    step,
  );
  const timelineStep = Number(await page.getAttribute('.timeline-panel', 'data-step'));
  assert.ok(timelineStep > phase && timelineStep <= step, `the latest snapshot ${timelineStep} is after the phase change ${phase}`);
  // Its heads' statistics: its own, or the latest measured snapshot's when it did not measure them
  // (the heads are measured every data-heads-every intervals).
  const every = Number(await page.getAttribute('.timeline-panel', 'data-every'));
  const headsEvery = Number(await page.getAttribute('.timeline-panel', 'data-heads-every'));
  const headsStep = Number(await page.getAttribute('.timeline-panel .timeline-head-stats', 'data-step'));
  assert.ok(headsStep <= timelineStep && timelineStep - headsStep < headsEvery * every, `heads measured at ${headsStep}, the latest snapshot at ${timelineStep}`);

  // Both layer-1 heads knocked out in turn: the test knocks out whichever is the previous-token head.
  const layer1Off = [0, 1].map((h) => [0, 1, 2, 3].map((g) => g === h));
  const ref = await reference(page, [headsStep, step], layer1Off);
  const [atSnapshot, now] = ref.at;
  // The phase change is the core's.
  assert.equal(phase, now.phaseChange);
  assert.ok(phase > 0 && phase < step);

  // The timeline's scores at its latest measured snapshot (full precision in data-*, rounded in the text).
  const tl = await page.$$eval('.timeline-panel .timeline-head-stats', (els) => els.map((e) => ({ prev: Number(e.dataset.previousToken), prefix: Number(e.dataset.prefixMatching), text: e.textContent })));
  assert.equal(tl.length, 4, 'one figure per head of both layers');
  tl.forEach((x, g) => {
    assert.equal(x.prev, atSnapshot.scores.previousToken[g], `timeline previous-token, head ${g}`);
    assert.equal(x.prefix, atSnapshot.scores.prefixMatching[g], `timeline prefix-matching, head ${g}`);
    assert.match(x.text, new RegExp(`prev ${atSnapshot.scores.previousToken[g].toFixed(3)}prefix ${atSnapshot.scores.prefixMatching[g].toFixed(3)}`));
  });
  assert.deepEqual(await page.$$eval('.timeline-panel .timeline-chart', (els) => els.map((e) => [e.dataset.chart, e.dataset.series])), [
    ['entropy', '4'], ['answer-mass', '4'], ['previous-token', '4'], ['prefix-matching', '4'],
  ]);

  // The composition panel: the per-head scores and the K-composition matrix, the baseline.
  const comp = await page.$eval('.composition-panel', (p) => ({
    rows: [...p.querySelectorAll('.composition-scores tbody tr')].map((r) => ({ name: r.cells[0].textContent, prev: Number(r.dataset.previousToken), prefix: Number(r.dataset.prefixMatching), text: [r.cells[1].textContent, r.cells[2].textContent] })),
    matrix: [...p.querySelectorAll('.composition-fig table tbody td')].map((td) => Number(td.dataset.value)),
    heads: [...p.querySelectorAll('.composition-fig table thead th, .composition-fig table tbody th')].map((th) => th.textContent),
    baseline: p.querySelector('.composition-baseline').textContent,
    explain: p.querySelector('.composition-explain').textContent,
  }));
  assert.deepEqual(comp.rows.map((r) => r.name), ['layer 1 · head 1', 'layer 1 · head 2', 'layer 2 · head 1', 'layer 2 · head 2']);
  comp.rows.forEach((r, g) => {
    assert.equal(r.prev, now.scores.previousToken[g]);
    assert.equal(r.prefix, now.scores.prefixMatching[g]);
    assert.deepEqual(r.text, [now.scores.previousToken[g].toFixed(3), now.scores.prefixMatching[g].toFixed(3)]);
  });
  assert.deepEqual(comp.matrix, now.scores.composition);
  assert.deepEqual(comp.heads, ['layer 2 · head 1', 'layer 2 · head 2', 'layer 1 · head 1', 'layer 1 · head 2']);
  assert.equal(comp.baseline, `random baseline ${now.scores.baseline.toFixed(3)}`);

  // Which head is which, from the core's numbers: the previous-token head in layer 1, the
  // induction head in layer 2.
  const prev = now.scores.previousToken[0] >= now.scores.previousToken[1] ? 0 : 1;
  const ind = now.scores.prefixMatching[2] >= now.scores.prefixMatching[3] ? 2 : 3;
  assert.ok(now.scores.previousToken[prev] > 0.5, `a previous-token head formed: ${now.scores.previousToken}`);
  assert.ok(now.scores.prefixMatching[ind] > 0.5, `an induction head formed: ${now.scores.prefixMatching}`);
  assert.ok(now.evaluation.accuracy > 0.7, `the copy works: accuracy ${now.evaluation.accuracy}`);
  assert.match(comp.explain, new RegExp(`Most prefix-matching in a later layer: layer 2 · head ${ind - 1} \\(score ${now.scores.prefixMatching[ind].toFixed(3)}`));

  // The heatmaps draw the core's weights: the induction head's cell from the second 12 (query 14)
  // to the 20 after the first 12 (key 4), read from the keyboard.
  await page.focus(`.heatmaps canvas[data-head="${ind}"]`);
  for (let i = 0; i < 14; ++i) await page.keyboard.press('ArrowDown');
  for (let i = 0; i < 4; ++i) await page.keyboard.press('ArrowRight');
  const T = SAMPLE.length;
  const w = now.weights[(ind * T + 14) * T + 4];
  assert.equal(await page.textContent('.cell-readout'), `layer 2 · head ${ind - 1}: query 14 (12) → key 4 (20): ${w.toFixed(4)}`);

  // The CSV export has every head of both layers (global index), with the core's weights.
  await page.focus('[data-export=csv]');
  const [csvDownload] = await Promise.all([page.waitForEvent('download'), page.keyboard.press('Enter')]);
  const csv = (await downloadBytes(csvDownload)).toString('utf8').trim().split('\n');
  assert.equal(csv.length, 1 + 4 * T * T);
  assert.equal(csv[1 + (ind * T + 14) * T + 4], `${ind},14,4,12,20,${w}`);

  // Knock out the previous-token head.
  const before = await page.getAttribute('.ablation-panel', 'data-ablated-loss');
  await page.check(`.ablation-panel [name=zero-h${prev + 1}]`);
  await page.waitForFunction((b) => document.querySelector('.ablation-panel').dataset.ablatedLoss !== b, before);
  assert.match(await page.evaluate(() => location.hash), new RegExp(`&heads-off=${prev + 1}&`));
  const shown = await page.$eval('.ablation-panel', (p) => ({
    ...p.dataset,
    explain: p.querySelector('.ablation-explain').textContent,
    prefixRow: [...p.querySelectorAll('.ablation-effect tr[data-metric=prefix-matching] :is(th, td)')].map((c) => c.textContent),
    headNames: [...p.querySelectorAll('.ablation-heads tbody th')].map((th) => th.textContent),
  }));
  const knocked = ref.ablated[prev];
  assert.equal(Number(shown.inductionHead), ind);
  assert.equal(Number(shown.intactAccuracy), now.evaluation.accuracy);
  assert.equal(Number(shown.ablatedAccuracy), knocked.evaluation.accuracy);
  assert.equal(Number(shown.intactLoss), now.evaluation.loss);
  assert.equal(Number(shown.ablatedLoss), knocked.evaluation.loss);
  assert.equal(Number(shown.intactPrefix), now.scores.prefixMatching[ind]);
  assert.equal(Number(shown.ablatedPrefix), knocked.scores.prefixMatching[ind]);
  // Collapsing: the induction head loses its target, and the accuracy falls with it.
  assert.ok(Number(shown.ablatedPrefix) < Number(shown.intactPrefix) / 2, `prefix-matching ${shown.intactPrefix} -> ${shown.ablatedPrefix}`);
  assert.ok(Number(shown.ablatedAccuracy) < Number(shown.intactAccuracy) / 2, `accuracy ${shown.intactAccuracy} -> ${shown.ablatedAccuracy}`);
  assert.deepEqual(shown.headNames, ['layer 1 · head 1', 'layer 1 · head 2', 'layer 2 · head 1', 'layer 2 · head 2']);
  const pct = (v) => `${(100 * v).toFixed(1)}%`;
  assert.match(shown.explain, new RegExp(`^Layer 1 · head ${prev + 1} is switched off`));
  assert.ok(
    shown.explain.includes(
      `Induction: layer 2 · head ${ind - 1}'s prefix-matching score goes from ${Number(shown.intactPrefix).toFixed(3)} to ${Number(shown.ablatedPrefix).toFixed(3)}, ` +
        `the accuracy from ${pct(Number(shown.intactAccuracy))} to ${pct(Number(shown.ablatedAccuracy))}.`,
    ),
    shown.explain,
  );
  assert.deepEqual(shown.prefixRow.slice(0, 3), [`prefix-matching of layer 2 · head ${ind - 1}`, Number(shown.intactPrefix).toFixed(3), Number(shown.ablatedPrefix).toFixed(3)]);

  // The Backward panel picks heads of both layers; the Self-test passes on this model.
  assert.deepEqual(await page.locator('.backward-panel select[name=bw-head] option').allTextContents(), shown.headNames);
  await page.selectOption('.backward-panel select[name=bw-head]', String(ind));
  await page.waitForFunction((g) => document.querySelector('.backward-panel').dataset.head === String(g) && document.querySelector('.backward-panel').dataset.state === 'ready', ind);
  assert.match(await page.textContent('.backward-panel h3'), new RegExp(`^Forward: layer 2 · head ${ind - 1}, query`));
  await page.focus('[data-action=selftest]');
  await page.keyboard.press('Enter');
  await page.waitForFunction(() => document.querySelector('.selftest-panel').dataset.state === 'done');
  const st = await page.$eval('.selftest-panel', (p) => ({ passed: p.dataset.passed, total: p.dataset.total }));
  assert.equal(st.passed, st.total, 'every check passes on the two-layer model');

  assert.deepEqual(await audit(page), [], 'axe: the trained two-layer view');
  assert.deepEqual(errors, []);
  await context.close();
});

test('one layer on the induction task: the chart says why no phase change will come; at 360 px the grid and the composition panel fit', async () => {
  const { page, context, errors } = await openReused(browser, `${srv.url}#${PRESET.replace('layers=2', 'layers=1')}&panel=all`, { width: 360, height: 800 });
  await waitReady(page);
  await page.click('[data-action=step10]');
  await waitForStep(page, 10);
  await page.waitForFunction(() => !document.querySelector('.phase-note').hidden);
  assert.match(await page.textContent('.phase-note'), /^One layer cannot solve this task/);
  await waitForStep(page, 10, { sel: '.composition-panel' });
  assert.match(await page.textContent('.composition-panel .composition-none'), /^One layer: no head can read another head's output/);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
  assert.ok(overflow <= 0, `no sideways scroll at 360 px (${overflow} px)`);
  assert.deepEqual(errors, []);
  await context.close();
});

test('the element takes the preset as attributes (residual as a boolean attribute), with no error', async () => {
  const attrs = 'layers="2" residual task="induction" vocab-size="32" d-model="32" heads="2" seq-len="32" batch="32" lr="0.005" seed="0" sample="3 17 5 12 20 8 29 16 22 1 26 10 14 5 12 20 8 29 16 31 9"';
  const site = await serveDistWith({ 'lesson.html': lessonPage('./attention-playground.js', { attrs }) });
  const { page, context, errors } = await openRecorded(browser, `${site.url}lesson.html`);
  await page.waitForFunction(() => window.__events.some((e) => e.type === 'ready'));
  const state = await page.evaluate(() => document.getElementById('pg').state);
  assert.deepEqual(
    { nLayers: state.nLayers, residual: state.residual, task: state.task, nHeads: state.nHeads, seqLen: state.seqLen, sample: state.sample },
    { nLayers: 2, residual: true, task: 'induction', nHeads: 2, seqLen: 32, sample: SAMPLE.join(' ') },
  );
  await page.waitForFunction(() => window.__root().querySelectorAll('.heatmaps canvas').length === 6);
  assert.deepEqual(await page.evaluate(() => window.__events.filter((e) => e.type === 'error')), []);
  assert.deepEqual(errors, []);
  await context.close();
  await site.close();
});

test('export and import at two layers: the layers.<l> state dict, the JSON with nLayers and residual, the run restored in a one-layer page', async () => {
  const { page, context, errors } = await openReused(browser, `${srv.url}#${PRESET}&panel=all`);
  await waitReady(page);
  await page.click('[data-action=step10]');
  await waitForStep(page, 10);
  const save = async (what) => {
    await page.focus(`[data-export=${what}]`);
    const [d] = await Promise.all([page.waitForEvent('download'), page.keyboard.press('Enter')]);
    return { name: d.suggestedFilename(), buffer: await downloadBytes(d) };
  };
  const weights = await save('weights');
  const json = await save('json');
  const header = JSON.parse(weights.buffer.subarray(8, 8 + Number(weights.buffer.readBigUInt64LE(0))).toString('utf8'));
  assert.deepEqual(Object.keys(header).filter((k) => k !== '__metadata__').sort(), [
    'layers.0.out_proj.bias', 'layers.0.out_proj.weight', 'layers.0.qkv_proj.bias', 'layers.0.qkv_proj.weight',
    'layers.1.out_proj.bias', 'layers.1.out_proj.weight', 'layers.1.qkv_proj.bias', 'layers.1.qkv_proj.weight',
    'lm_head.bias', 'lm_head.weight', 'token_emb.embedding.weight',
  ]);
  assert.deepEqual([header.__metadata__.n_layers, header.__metadata__.residual], ['2', 'true']);
  const run = JSON.parse(json.buffer.toString('utf8'));
  assert.deepEqual([run.config.nLayers, run.config.residual, run.ablation.headsOff.length], [2, true, 4]);
  const pixels = await page.$$eval('.heatmaps canvas', (cs) => cs.map((c) => c.toDataURL()));

  // A page of the default one-layer model takes the run: its settings, its step, the same heatmaps.
  const fresh = await openReused(browser, `${srv.url}#view=train&panel=all`);
  await waitReady(fresh.page);
  await fresh.page.setInputFiles('[data-import=file]', [
    { name: 'attention-playground.safetensors', mimeType: 'application/octet-stream', buffer: weights.buffer },
    { name: 'attention-playground.json', mimeType: 'application/json', buffer: json.buffer },
  ]);
  await waitForStep(fresh.page, 10);
  await fresh.page.waitForFunction(() => document.querySelector('.heatmaps').dataset.layers === '2');
  assert.match(await fresh.page.evaluate(() => location.hash), /&layers=2&residual=1&/);
  await fresh.page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
  assert.deepEqual(await fresh.page.$$eval('.heatmaps canvas', (cs) => cs.map((c) => c.toDataURL())), pixels);
  assert.deepEqual(fresh.errors, []);
  await fresh.context.close();
  assert.deepEqual(errors, []);
  await context.close();
});
