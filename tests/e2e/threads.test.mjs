// The threads build in the page. Served with the headers of web/dist/_headers (COOP, COEP, CORP:
// what `npm start` sends and the static site documents), the page is cross-origin isolated and
// its worker loads attention-core-threads.*, says so on the status line, and trains the "Train a
// GPT on text" preset to the very numbers of the one-thread SIMD build under node; without them
// it loads the one-thread build (relaxed SIMD in both engines here: relaxed.test.mjs), never asks
// for the threads files, and logs nothing. In Chromium and in Firefox ESR.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DIST, isolationHeaders, launch, openPage, serve, waitReady, readout } from './harness.mjs';
import { launchFirefox, openFirefoxPage, waitFor } from './firefox.mjs';
import { createCore } from '../js-api/load-core.mjs';

/** The preset's link (web/src/settings/presets.ts TEXT_PRESET) and its config for the core. */
const TEXT_HASH = 'view=train&d-model=64&heads=4&seq-len=64&batch=16&lr=0.003&seed=0&task=text&layers=2&residual=1&positions=rope&norm=layernorm&norm-position=pre&ffn=gelu';
const TEXT_CONFIG = { dModel: 64, nHeads: 4, seqLen: 64, batchSize: 16, lr: 0.003, seed: 0, task: 'text', nLayers: 2, residual: true, positions: 'rope', norm: 'layernorm', normPosition: 'pre', ffn: 'gelu' };

/** The loss after 10 steps of the preset, in the one-thread SIMD build under node. */
async function nodeLossAt10() {
  const core = await createCore('simd');
  const t = new core.Trainer({ ...core.defaultConfig(), ...TEXT_CONFIG });
  const loss = t.step(10);
  t.delete();
  return loss;
}

const isThreadsFile = (p) => /attention-core-threads/.test(p);

test('the documented headers make the page cross-origin isolated: the threads build trains the text preset to the SIMD build numbers (Chromium)', async () => {
  const headers = isolationHeaders();
  assert.deepEqual(Object.keys(headers).sort(), ['Cross-Origin-Embedder-Policy', 'Cross-Origin-Opener-Policy', 'Cross-Origin-Resource-Policy']);
  const srv = await serve(DIST, { headers });
  const browser = await launch();
  try {
    const { page, errors, external } = await openPage(browser, `${srv.url}#${TEXT_HASH}`);
    await waitReady(page);
    const { isolated, cores } = await page.evaluate(() => ({ isolated: crossOriginIsolated, cores: navigator.hardwareConcurrency }));
    assert.equal(isolated, true);
    const threads = Math.min(4, cores);
    const status = await page.textContent('.loading');
    if (threads > 1) assert.match(status, new RegExp(`Core loaded \\(WebAssembly SIMD \\+ threads build, ${threads} threads\\)`));
    else assert.match(status, /WebAssembly SIMD build, 1 thread/);
    await page.click('[data-action=step10]');
    await page.waitForFunction(() => document.querySelector('.readout').dataset.step === '10', null, { timeout: 60000 });
    assert.equal((await readout(page)).loss, await nodeLossAt10());
    assert.deepEqual(errors, []);
    assert.deepEqual(external, []);
    if (threads > 1) {
      assert.ok(srv.requests.some((p) => p.endsWith('/wasm/attention-core-threads.worker.js')), srv.requests.join(' '));
      assert.ok(!srv.requests.some((p) => p.endsWith('attention-core-simd.wasm')), 'the one-thread build is not downloaded');
    }
  } finally {
    await browser.close();
    await srv.close();
  }
});

test('without the headers the page falls back to the one-thread (relaxed SIMD) build silently (Chromium)', async () => {
  const srv = await serve(DIST);
  const browser = await launch();
  try {
    const { page, errors } = await openPage(browser, `${srv.url}#view=train`);
    await waitReady(page);
    assert.equal(await page.evaluate(() => crossOriginIsolated), false);
    assert.match(await page.textContent('.loading'), /Core loaded \(WebAssembly relaxed SIMD build, 1 thread\)/);
    await page.click('[data-action=step10]');
    await page.waitForFunction(() => document.querySelector('.readout').dataset.step === '10');
    assert.deepEqual(errors, []);
    assert.deepEqual(srv.requests.filter(isThreadsFile), []);
  } finally {
    await browser.close();
    await srv.close();
  }
});

test('Firefox: isolated, the threads build trains to the same numbers; not isolated, the one-thread (relaxed SIMD) build, silently', async () => {
  const isolatedSrv = await serve(DIST, { headers: isolationHeaders() });
  const plainSrv = await serve(DIST);
  const browser = await launchFirefox();
  try {
    const want = await nodeLossAt10();
    const { page, errors } = await openFirefoxPage(browser, `${isolatedSrv.url}#${TEXT_HASH}`);
    await waitFor(page, () => document.querySelector('.readout')?.dataset.status === 'paused');
    const cores = await page.evaluate(() => navigator.hardwareConcurrency);
    assert.equal(await page.evaluate(() => crossOriginIsolated), true);
    const threads = Math.min(4, cores);
    const status = await page.$eval('.loading', (el) => el.textContent);
    if (threads > 1) assert.match(status, new RegExp(`WebAssembly SIMD \\+ threads build, ${threads} threads`));
    await page.click('[data-action=step10]');
    await waitFor(page, () => document.querySelector('.readout').dataset.step === '10');
    assert.equal(await page.$eval('.readout', (el) => Number(el.dataset.loss)), want);
    assert.deepEqual(errors, []);
    await page.close();

    const plain = await openFirefoxPage(browser, `${plainSrv.url}#view=train`);
    await waitFor(plain.page, () => document.querySelector('.readout')?.dataset.status === 'paused');
    assert.match(await plain.page.$eval('.loading', (el) => el.textContent), /WebAssembly relaxed SIMD build, 1 thread/);
    assert.deepEqual(plain.errors, []);
    assert.deepEqual(plainSrv.requests.filter(isThreadsFile), []);
    await plain.page.close();
  } finally {
    await browser.close();
    await isolatedSrv.close();
    await plainSrv.close();
  }
});
