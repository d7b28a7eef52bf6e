// The training view's Export / import panel: downloads (weights, JSON, PNG, SVG, CSV), restoring a
// run into a fresh page, and every kind of bad file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CONFIG } from './contract.mjs';
import { downloadBytes, GUARD_MS, openReused, playTo, readout, screenshot, useBrowser, waitForStep, waitReady } from './harness.mjs';

let srv;
let browser;
useBrowser((s, b) => {
  srv = s;
  browser = b;
});

const STATE_DICT = [
  'attn.out_proj.bias', 'attn.out_proj.weight', 'attn.qkv_proj.bias', 'attn.qkv_proj.weight',
  'lm_head.bias', 'lm_head.weight', 'token_emb.embedding.weight',
];

/** Clicks selector and collects the n downloads it starts: [{name, bytes}]. */
async function downloads(page, selector, n) {
  const got = [];
  const done = new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${selector}: ${got.length}/${n} downloads after ${GUARD_MS / 1000} s`)), GUARD_MS);
    const on = (d) => {
      got.push(d);
      if (got.length === n) {
        clearTimeout(timer);
        page.off('download', on);
        resolve();
      }
    };
    page.on('download', on);
  });
  await page.click(selector);
  await done;
  return Promise.all(got.map(async (d) => ({ name: d.suggestedFilename(), bytes: await downloadBytes(d) })));
}
const one = async (page, what) => (await downloads(page, `[data-export=${what}]`, 1))[0];

/** Waits until the heatmaps have been drawn for the current snapshot. */
const settle = (page) => page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
const heatmapPixels = (page) => page.$$eval('.heatmaps canvas', (cs) => cs.map((c) => c.toDataURL()));

/** Parses a safetensors header: {names, dataBytes}. */
function safetensorsHeader(bytes) {
  assert.ok(bytes.length >= 8, 'at least the 8-byte header length');
  const n = Number(bytes.readBigUInt64LE(0));
  assert.ok(n > 0 && 8 + n <= bytes.length, `header length ${n} fits in ${bytes.length} bytes`);
  const header = JSON.parse(bytes.subarray(8, 8 + n).toString('utf8'));
  const names = Object.keys(header).filter((k) => k !== '__metadata__').sort();
  for (const k of names) {
    assert.equal(header[k].dtype, 'F32');
    const [a, b] = header[k].data_offsets;
    assert.equal(b - a, 4 * header[k].shape.reduce((x, y) => x * y, 1), `${k} size`);
  }
  return { names, header };
}

const file = (d, mimeType) => ({ name: d.name, mimeType, buffer: d.bytes });

async function importFiles(page, files) {
  await page.setInputFiles('[data-import=file]', files);
}

test('export after training, import into a fresh page: same attention, step and loss history', async () => {
  const { page, context, errors } = await openReused(browser, `${srv.url}#view=train&panel=export&task=copy&seed=7`);
  await waitReady(page);
  for (const k of [1, 2, 3]) {
    await page.click('[data-action=step10]');
    await waitForStep(page, k * 10);
  }
  await page.click('[data-action=step1]');
  await waitForStep(page, 31);
  await settle(page);
  const weights = await one(page, 'weights');
  const json = await one(page, 'json');
  const csv = await one(page, 'csv');
  const pixels = await heatmapPixels(page);
  assert.equal(weights.name, 'attention-playground.safetensors');
  assert.equal(json.name, 'attention-playground.json');
  assert.match(csv.name, /\.csv$/);

  // The weights: a valid safetensors file with the 7 state-dict names.
  assert.deepEqual(safetensorsHeader(weights.bytes).names, STATE_DICT);

  // The JSON: the documented fields.
  const run = JSON.parse(json.bytes.toString('utf8'));
  assert.equal(run.format, 'attention-playground/1');
  assert.deepEqual(Object.keys(run.config), CONFIG.map((k) => k.js));
  assert.equal(run.config.task, 'copy');
  assert.equal(run.config.seed, 7);
  assert.equal(run.step, 31);
  assert.equal(run.historyStride, 1);
  assert.equal(run.lossHistory.length, 31);
  assert.ok(run.lossHistory.every((x) => typeof x === 'number' && Number.isFinite(x)));
  assert.ok(Array.isArray(run.sample) && run.sample.length > 0 && run.sample.every(Number.isInteger));

  // The CSV: header, one row per (head, query, key), masked cells weight 0, rows sum to 1.
  const lines = csv.bytes.toString('utf8').trim().split('\n');
  assert.equal(lines[0], 'head,query,key,query_token,key_token,weight');
  const T = run.sample.length;
  const H = run.config.nHeads;
  assert.equal(lines.length - 1, H * T * T);
  const rows = lines.slice(1).map((l) => l.split(',').map(Number));
  for (const [, q, k, qt, kt, w] of rows) {
    assert.equal(qt, run.sample[q]);
    assert.equal(kt, run.sample[k]);
    if (k > q) assert.equal(w, 0);
  }
  const sum = rows.filter((r) => r[0] === 0 && r[1] === 3).reduce((a, r) => a + r[5], 0);
  assert.ok(Math.abs(sum - 1) < 1e-5, `head 0, query 3 sums to ${sum}`);
  assert.deepEqual(errors, []);

  // A fresh page with another config: import both files at once.
  const fresh = await openReused(browser, `${srv.url}#view=train&panel=export&heads=2&seed=1`);
  await waitReady(fresh.page);
  await importFiles(fresh.page, [file(weights, 'application/octet-stream'), file(json, 'application/json')]);
  await waitForStep(fresh.page, 31);
  await fresh.page.waitForFunction(() => document.querySelectorAll('.heatmaps canvas').length === 5);
  assert.match(await fresh.page.textContent('.export-msg'), /Restored the run/);
  assert.equal(await fresh.page.inputValue('[name=task]'), 'copy');
  assert.equal(await fresh.page.inputValue('[name=nHeads]'), '4');
  assert.match(fresh.page.url(), /heads=4/);
  await settle(fresh.page);
  const csv2 = await one(fresh.page, 'csv');
  assert.equal(csv2.bytes.toString('utf8'), csv.bytes.toString('utf8'), 'the same attention, to the last digit');
  assert.deepEqual(await heatmapPixels(fresh.page), pixels, 'the same heatmap pixels');
  const run2 = JSON.parse((await one(fresh.page, 'json')).bytes.toString('utf8'));
  assert.equal(run2.step, 31);
  assert.deepEqual(run2.lossHistory, run.lossHistory);
  assert.deepEqual(run2.config, run.config);
  assert.deepEqual(run2.sample, run.sample);
  const r = await readout(fresh.page);
  assert.equal(r.loss, Math.fround(run.lossHistory[30]));
  // The weights round-trip byte for byte, and training continues from the imported step.
  assert.ok((await one(fresh.page, 'weights')).bytes.equals(weights.bytes));
  await fresh.page.click('[data-action=step10]');
  await waitForStep(fresh.page, 41);
  const after = await readout(fresh.page);
  assert.ok(Number.isFinite(after.loss) && after.loss > 0);
  assert.deepEqual(fresh.errors, []);
  await screenshot(fresh.page, 'export-panel-1280.png');
  await fresh.page.locator('.export-panel').screenshot({ path: 'tests/e2e/artifacts/export-panel.png' });
  await fresh.context.close();
  await context.close();
});

test('a run trained under a broken mask and a switched-off head comes back with them', async () => {
  const { page, context, errors } = await openReused(browser, `${srv.url}#view=train&panel=export&task=future&mask=none&heads-off=2&scale-scores=0&seed=5`);
  await waitReady(page);
  await page.click('[data-action=step10]');
  await waitForStep(page, 10);
  await settle(page);
  const weights = await one(page, 'weights');
  const json = await one(page, 'json');
  const csv = await one(page, 'csv');
  const run = JSON.parse(json.bytes.toString('utf8'));
  assert.deepEqual(run.ablation, { headsOff: [false, true, false, false], headsFrozen: [false, false, false, false], scaleScores: false, mask: 'none' });

  const fresh = await openReused(browser, `${srv.url}#view=train&panel=export`);
  await waitReady(fresh.page);
  await importFiles(fresh.page, [file(weights, 'application/octet-stream'), file(json, 'application/json')]);
  await waitForStep(fresh.page, 10);
  await fresh.page.waitForFunction(() => /mask=none&scale-scores=0&heads-off=2&heads-frozen=$/.test(location.hash));
  await fresh.page.waitForSelector('.ablation-panel [name=zero-h2]:checked', { state: 'attached' });
  assert.equal(await fresh.page.inputValue('[name=mask-mode]'), 'none');
  await settle(fresh.page);
  const csv2 = await one(fresh.page, 'csv');
  assert.equal(csv2.bytes.toString('utf8'), csv.bytes.toString('utf8'), 'the same attention under the same broken mask');
  assert.deepEqual([...errors, ...fresh.errors], []);
  await fresh.context.close();
  await context.close();
});

test('PNG and SVG: one file per head plus the average', async () => {
  const { page, context, errors } = await openReused(browser, `${srv.url}#view=train&panel=export&heads=4&seq-len=8&sample=1+2+3+4+5+6`);
  await waitReady(page);
  await page.click('[data-action=step10]');
  await waitForStep(page, 10);
  const pngs = await downloads(page, '[data-export=png]', 5);
  assert.deepEqual(pngs.map((d) => d.name).sort(), ['attention-playground-average.png', 'attention-playground-head-1.png', 'attention-playground-head-2.png', 'attention-playground-head-3.png', 'attention-playground-head-4.png']);
  for (const d of pngs) assert.ok(d.bytes.subarray(0, 8).equals(Buffer.from([137, 80, 78, 71, 13, 10, 26, 10])), `${d.name} is a PNG`);
  const svgs = await downloads(page, '[data-export=svg]', 5);
  assert.equal(new Set(svgs.map((d) => d.name)).size, 5);
  for (const d of svgs) {
    assert.match(d.name, /^attention-playground-(head-[1-4]|average)\.svg$/);
    const text = d.bytes.toString('utf8');
    assert.match(text, /<svg[^>]*xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    const cells = text.match(/<rect [^>]*data-masked="[01]"/g) ?? [];
    assert.equal(cells.length, 36, `${d.name}: 6x6 cells`);
    assert.equal(cells.filter((c) => c.includes('data-masked="1"')).length, 15, 'masked cells above the diagonal');
    assert.ok(/fill="url\(#masked\)"/.test(text) && /<pattern id="masked"/.test(text), 'masked cells hatched');
    assert.match(text, /fill="rgb\(\d+, \d+, \d+\)"/, 'viridis cells');
    assert.match(text, />6<\/text>/, 'token labels');
  }
  // The SVG is well-formed: the browser parses it.
  const ok = await page.evaluate((t) => new DOMParser().parseFromString(t, 'image/svg+xml').querySelector('parsererror') === null, svgs[0].bytes.toString('utf8'));
  assert.ok(ok);
  assert.deepEqual(errors, []);
  await context.close();
});

test('bad files show one sentence, leave the run untouched, and the page still trains', async (t) => {
  // Weights of another config.
  const other = await openReused(browser, `${srv.url}#view=train&panel=export&d-model=16&heads=2`);
  await waitReady(other.page);
  const otherWeights = await one(other.page, 'weights');
  const otherJson = await one(other.page, 'json');
  await other.context.close();

  const { page, context, errors } = await openReused(browser, `${srv.url}#view=train&panel=export`);
  await waitReady(page);
  await page.click('[data-action=step10]');
  await waitForStep(page, 10);
  await settle(page);
  const good = await one(page, 'weights');
  const before = await heatmapPixels(page);
  const r0 = await readout(page);
  const msg = () => page.textContent('.export-msg');
  const cases = [
    ['malformed JSON', [{ name: 'run.json', mimeType: 'application/json', buffer: Buffer.from('{"format": "attention-playground/1", ') }], /not valid JSON/],
    ['wrong format', [{ name: 'run.json', mimeType: 'application/json', buffer: Buffer.from('{"format": "other/2"}') }], /format is "other\/2", not "attention-playground\/1"/],
    ['wrong types', [{ name: 'run.json', mimeType: 'application/json', buffer: Buffer.from(otherJson.bytes.toString('utf8').replace('"step": 0', '"step": "zero"')) }], /"step" is not a whole number/],
    ['truncated safetensors', [{ name: 'cut.safetensors', mimeType: 'application/octet-stream', buffer: good.bytes.subarray(0, 200) }], /weights file cut\.safetensors could not be loaded/],
    ['weights of another config', [{ name: 'small.safetensors', mimeType: 'application/octet-stream', buffer: otherWeights.bytes }], /weights file small\.safetensors could not be loaded into the current model/],
    ['weights that do not match the JSON', [file(good, 'application/octet-stream'), file(otherJson, 'application/json')], /could not be loaded with that config/],
    ['a bad ablation', [{ name: 'run.json', mimeType: 'application/json', buffer: Buffer.from(otherJson.bytes.toString('utf8').replace('"mask": "causal"', '"mask": "triu"')) }], /"ablation\.mask" "triu" is not one of causal, none, inverted/],
    ['ablation flags for other heads', [{ name: 'run.json', mimeType: 'application/json', buffer: Buffer.from(otherJson.bytes.toString('utf8').replace(/"headsOff": \[[^\]]*\]/, '"headsOff": [true]')) }], /"ablation\.headsOff" is not a list of 2 true\/false values/],
    ['hostile size', [{ name: 'big.safetensors', mimeType: 'application/octet-stream', buffer: Buffer.alloc(5 * 1024 * 1024 + 1) }], /big\.safetensors has 5242881 bytes, more than the 5 MB/],
  ];
  for (const [what, files, re] of cases) {
    await page.evaluate(() => (document.querySelector('.export-msg').textContent = ''));
    await importFiles(page, files);
    await page.waitForFunction(() => document.querySelector('.export-msg').textContent !== '');
    const text = await msg();
    t.diagnostic(`${what}: ${text}`);
    assert.match(text, re, what);
    assert.equal((await page.$eval('.export-msg', (e) => e.dataset.state)), 'error', what);
    assert.ok(text.endsWith('.') || text.length < 400, `${what}: one sentence: ${text}`);
    const r = await readout(page);
    assert.deepEqual(r, r0, `${what}: the run is untouched`);
  }
  await page.locator('.export-panel').screenshot({ path: 'tests/e2e/artifacts/export-panel-error.png' });
  await settle(page);
  assert.deepEqual(await heatmapPixels(page), before, 'the heatmaps are untouched');
  assert.equal(await page.inputValue('[name=nHeads]'), '4');
  assert.equal(await page.$eval('.problem', (e) => e.hidden), true, 'no problem in the run panel');
  // Still trains: step, then play and pause.
  await page.click('[data-action=step10]');
  await waitForStep(page, 20);
  await playTo(page, 41);
  assert.deepEqual(errors, []);
  await context.close();
});

test('the JSON alone sets the config; weights alone (dropped) load into a matching model; buttons are keyboard-usable', async () => {
  const a = await openReused(browser, `${srv.url}#view=train&panel=export&seed=3`);
  await waitReady(a.page);
  await a.page.click('[data-action=step10]');
  await waitForStep(a.page, 10);
  const weights = await one(a.page, 'weights');
  const csv = await one(a.page, 'csv');
  // Keyboard: focus the CSV button and press Enter.
  const [viaKey] = await Promise.all([a.page.waitForEvent('download'), a.page.focus('[data-export=csv]').then(() => a.page.keyboard.press('Enter'))]);
  assert.equal((await downloadBytes(viaKey)).toString(), csv.bytes.toString());
  assert.ok((await a.page.getAttribute('[data-import=button]', 'type')) === 'button');
  await a.context.close();

  const { page, context, errors } = await openReused(browser, `${srv.url}#view=train&panel=export&seed=3`);
  await waitReady(page);
  // Drag-and-drop the weights onto the panel.
  const drop = await page.evaluateHandle(([name, bytes]) => {
    const dt = new DataTransfer();
    dt.items.add(new File([new Uint8Array(bytes)], name, { type: 'application/octet-stream' }));
    return dt;
  }, [weights.name, [...weights.bytes]]);
  await page.dispatchEvent('.export-panel', 'dragover', { dataTransfer: drop });
  assert.ok(await page.$eval('.export-panel', (e) => e.classList.contains('drop-target')));
  await page.dispatchEvent('.export-panel', 'drop', { dataTransfer: drop });
  await page.waitForFunction(() => /Loaded the weights/.test(document.querySelector('.export-msg').textContent));
  assert.equal((await one(page, 'csv')).bytes.toString(), csv.bytes.toString(), 'same attention from the weights alone');
  const json = JSON.stringify({ format: 'attention-playground/1', config: { vocabSize: 32, dModel: 16, nHeads: 2, seqLen: 8, batchSize: 8, lr: 0.01, seed: 5, attnDropout: 0, outDropout: 0, task: 'shift' }, step: 0, lossHistory: [], historyStride: 1, sample: [1, 2, 3] });
  await importFiles(page, [{ name: 'cfg.json', mimeType: 'application/json', buffer: Buffer.from(json) }]);
  await page.waitForFunction(() => /Applied the config/.test(document.querySelector('.export-msg').textContent));
  assert.equal(await page.inputValue('[name=task]'), 'shift');
  assert.equal(await page.locator('.heatmaps canvas').count(), 3);
  assert.equal((await readout(page)).step, 0);
  await page.click('[data-action=step1]');
  await waitForStep(page, 1);
  assert.deepEqual(errors, []);
  await context.close();
});
