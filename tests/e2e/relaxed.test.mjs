// The relaxed-SIMD build in the page. Where the engine validates a module with f32x4.relaxed_madd
// (Chromium; Firefox ESR 153), the worker loads attention-core-relaxed.* and only it, the status
// line says so, and the "Train a GPT on text" preset trains to the very numbers of the same build
// under node (step 20's loss, where the two builds differ). ?core=simd loads the plain SIMD build instead (node's SIMD numbers); a ?core= that
// names no build is corrected on the banner and the best build loads. An engine without relaxed
// SIMD (Firefox with its pref off) falls back to the plain SIMD build, silently.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DIST, launch, openPage, serve, waitReady, readout } from './harness.mjs';
import { launchFirefox, openFirefoxPage, waitFor } from './firefox.mjs';
import { createCore } from '../js-api/load-core.mjs';

/** The preset's link (web/src/settings/presets.ts TEXT_PRESET) and its config for the core. */
const TEXT_HASH = 'view=train&d-model=64&heads=4&seq-len=64&batch=16&lr=0.003&seed=0&task=text&layers=2&residual=1&positions=rope&norm=layernorm&norm-position=pre&ffn=gelu';
const TEXT_CONFIG = { dModel: 64, nHeads: 4, seqLen: 64, batchSize: 16, lr: 0.003, seed: 0, task: 'text', nLayers: 2, residual: true, positions: 'rope', norm: 'layernorm', normPosition: 'pre', ffn: 'gelu' };

/** The loss after 20 steps of the preset in one build under node (the builds' losses differ there;
 * at some steps, 10 among them, they round to the same float). */
async function nodeLossAt20(variant) {
  const core = await createCore(variant);
  const t = new core.Trainer({ ...core.defaultConfig(), ...TEXT_CONFIG });
  const loss = t.step(20);
  t.delete();
  return loss;
}

/** Two clicks on "10 steps", then the readout's loss at step 20 (Chromium or Firefox). */
async function stepTo20(page, wait) {
  for (const n of [10, 20]) {
    await page.click('[data-action=step10]');
    await wait(n);
  }
}

const wasmFiles = (requests) => requests.filter((p) => /attention-core-[a-z]+\.(js|wasm)$/.test(p)).map((p) => p.replace(/^.*\//, '')).sort();

test('Chromium loads the relaxed-SIMD build, and only it, and trains to its numbers under node; ?core=simd the plain one', async () => {
  const [relaxed, plain] = [await nodeLossAt20('relaxed'), await nodeLossAt20('simd')];
  assert.notEqual(relaxed, plain, 'the builds round differently (fused multiply-adds)');
  const browser = await launch();
  try {
    for (const [query, build, want, files] of [
      ['', 'WebAssembly relaxed SIMD build, 1 thread', relaxed, ['attention-core-relaxed.js', 'attention-core-relaxed.wasm']],
      ['?core=simd', 'WebAssembly SIMD build, 1 thread', plain, ['attention-core-simd.js', 'attention-core-simd.wasm']],
    ]) {
      const srv = await serve(DIST);
      try {
        const { page, context, errors, external } = await openPage(browser, `${srv.url}index.html${query}#${TEXT_HASH}`);
        await waitReady(page);
        assert.equal(await page.textContent('.loading'), `Core loaded (${build}).`);
        assert.equal(await page.evaluate(() => document.querySelector('.banner')?.hidden ?? true), true, 'no correction');
        await stepTo20(page, (n) => page.waitForFunction((n) => document.querySelector('.readout').dataset.step === String(n), n));
        assert.equal((await readout(page)).loss, want, `${query || 'no query'}: the loss at step 20`);
        assert.deepEqual(wasmFiles(srv.requests), files, 'only the build that runs is downloaded');
        assert.deepEqual(errors, []);
        assert.deepEqual(external, []);
        await context.close();
      } finally {
        await srv.close();
      }
    }
  } finally {
    await browser.close();
  }
});

test('a ?core= that names no build: one sentence on the banner, and the best build loads and trains', async () => {
  const srv = await serve(DIST);
  const browser = await launch();
  try {
    const { page, errors } = await openPage(browser, `${srv.url}index.html?core=fastest#view=train`);
    await waitReady(page);
    assert.match(await page.textContent('.loading'), /WebAssembly relaxed SIMD build/);
    const banner = await page.$$eval('.banner li', (li) => li.map((x) => x.textContent));
    assert.ok(banner.includes('?core=fastest names no build of the core (use simd or scalar), so the best build for this browser loads.'), banner.join(' | '));
    await page.click('[data-action=step10]');
    await page.waitForFunction(() => document.querySelector('.readout').dataset.step === '10');
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await srv.close();
  }
});

test('Firefox ESR: relaxed SIMD where the engine has it; with it turned off, the plain SIMD build, silently', async () => {
  const want = { relaxed: await nodeLossAt20('relaxed'), simd: await nodeLossAt20('simd') };
  for (const [prefs, build] of [
    [{}, 'relaxed'],
    [{ 'javascript.options.wasm_relaxed_simd': false }, 'simd'],
  ]) {
    const srv = await serve(DIST);
    const browser = await launchFirefox({ prefs });
    try {
      const { page, errors } = await openFirefoxPage(browser, `${srv.url}#${TEXT_HASH}`);
      await waitFor(page, () => document.querySelector('.readout')?.dataset.status === 'paused');
      const status = await page.$eval('.loading', (el) => el.textContent);
      assert.equal(status, `Core loaded (WebAssembly ${build === 'relaxed' ? 'relaxed SIMD' : 'SIMD'} build, 1 thread).`);
      await stepTo20(page, (n) => waitFor(page, (n) => document.querySelector('.readout').dataset.step === String(n), n));
      assert.equal(await page.$eval('.readout', (el) => Number(el.dataset.loss)), want[build]);
      assert.deepEqual(wasmFiles(srv.requests), [`attention-core-${build}.js`, `attention-core-${build}.wasm`]);
      assert.deepEqual(errors, []);
    } finally {
      await browser.close();
      await srv.close();
    }
  }
});
