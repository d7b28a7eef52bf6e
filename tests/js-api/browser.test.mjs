// The shipped browser modules (web/wasm/attention-core-{simd,scalar}.js, ES modules) loaded
// through web/src/core/load-core.js in headless Chromium: on the main thread and in module
// workers, from a sub-path, with errors arriving as Errors. Same losses as the same module under Node.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { extname } from 'node:path';
import { after, before, test } from 'node:test';

import { chromium } from 'playwright-core';

import { loadCore, repoRoot, variants } from './core.mjs';

// URL prefix under /course/ (a sub-path, as on a course site) -> folder.
const ROUTES = {
  '/course/wasm/': `${repoRoot}web/wasm/`,
  '/course/core/': `${repoRoot}web/src/core/`,
  '/course/': `${repoRoot}tests/js-api/browser/`,
};
const TYPES = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm' };

let server, browser, origin;

before(async () => {
  for (const v of ['simd', 'scalar'])
    for (const ext of ['js', 'wasm']) {
      const f = `${repoRoot}web/wasm/attention-core-${v}.${ext}`;
      if (!existsSync(f)) throw new Error(`${f} is missing: run scripts/build-wasm`);
    }
  server = createServer((req, res) => {
    const path = new URL(req.url, 'http://x').pathname;
    const prefix = Object.keys(ROUTES).find((p) => path.startsWith(p));
    const rest = prefix && path.slice(prefix.length);
    const file = rest !== undefined && !rest.includes('..') ? ROUTES[prefix] + (rest || 'index.html') : null;
    if (!file || !existsSync(file)) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' });
    res.end(readFileSync(file));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${server.address().port}`;
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
});

after(async () => {
  await browser?.close();
  server?.close();
});

test('both variants load in module workers and on the main thread, and train as in Node', async () => {
  const page = await browser.newPage();
  const pageErrors = [];
  page.on('pageerror', (e) => pageErrors.push(e.message));
  await page.goto(`${origin}/course/`);
  await page.waitForFunction(() => window.report, null, { timeout: 60000 });
  const report = await page.evaluate(() => window.report);
  await page.close();
  assert.deepEqual(pageErrors, []);
  assert.equal(report.error, undefined, report.error);
  assert.equal(report.detectSimd, true, 'Chromium has WebAssembly SIMD');

  // The same module under Node is the reference.
  const node = await loadCore(variants.includes('simd') ? 'simd' : variants[0]);
  const t = new node.Trainer({ seed: 3 });
  t.step(5);
  const expected = Array.from(t.lossHistory());
  t.delete();

  const [simd, scalar] = report.workers;
  for (const [w, isSimd] of [[simd, true], [scalar, false]]) {
    assert.equal(w.failure, undefined, w.failure);
    assert.equal(w.simd, isSimd);
    assert.equal(w.losses.length, 5);
    w.losses.forEach((l, i) => assert.ok(Math.abs(l - expected[i]) <= 1e-5 * expected[i], `step ${i + 1}: ${l} vs ${expected[i]}`));
    assert.equal(w.weights, 4 * 3 * 3);
    assert.equal(w.attentionError.isError, true);
    assert.match(w.attentionError.message, /^token id 64 at position 1 is outside \[0, 64\)/);
    assert.equal(w.attentionError.kind, 'input');
    assert.equal(w.attentionError.hasKey, false);
    assert.equal(w.stillWorks, true);
  }
  assert.equal(report.main.simd, true);
  assert.deepEqual(report.main.losses, simd.losses);
});
