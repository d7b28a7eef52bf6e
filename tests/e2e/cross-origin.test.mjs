// The element loaded from another origin, as a CDN serves it: the lesson page is on
// http://127.0.0.1, the module and everything it loads on https://cdn.example.test (answered from
// web/dist with `Access-Control-Allow-Origin: *`). It must work as on the page's own origin, and a
// worker that cannot start (a CSP without blob:, no CORS, a file:// page) must be explained in one
// sentence with `error` kind 'worker', the host page untouched. It runs the one-thread (relaxed) SIMD build
// there, with not a console message, even on a cross-origin-isolated lesson page: the threads
// build's pthread workers would have to come from the page's own origin.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CDN, DIST, downloadBytes, isolationHeaders, launch, lessonPage, openRecorded, routeCdn, screenshot, serve, serveSite } from './harness.mjs';

const MODULE = `${CDN}attention-playground.js`;
/** A lesson site's CSP for a playground from a CDN, as the README gives it. */
const GOOD_CSP = `default-src 'self'; script-src 'self' https://cdn.example.test 'wasm-unsafe-eval'; worker-src 'self' blob: https://cdn.example.test; connect-src 'self' https://cdn.example.test; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:`;

let browser;
let site;
let isolatedSite;
test.before(async () => {
  browser = await launch();
  isolatedSite = await serveSite({ 'lesson.html': lessonPage(MODULE, { attrs: 'seed="3" solved-at="0.1"' }) }, { headers: isolationHeaders() });
  site = await serveSite({
    'lesson.html': lessonPage(MODULE, { attrs: 'seed="3" solved-at="0.1" panel="all"' }),
    'strict.html': lessonPage(MODULE, { attrs: 'seed="3" solved-at="0.1" panel="all"', csp: GOOD_CSP }),
    'no-blob.html': lessonPage(MODULE, { csp: GOOD_CSP.replace('worker-src \'self\' blob: https://cdn.example.test', 'worker-src \'self\' https://cdn.example.test') }),
    'worker-src-self.html': lessonPage(MODULE, { csp: GOOD_CSP.replace('worker-src \'self\' blob: https://cdn.example.test', 'worker-src \'self\' blob:') }),
  });
});
test.after(async () => {
  await browser?.close();
  await site?.close();
  await isolatedSite?.close();
});

/** Opens a page of the site in a fresh context whose CDN answers from web/dist; noise collects
 * every console message of the page and its workers that is a warning or an error. */
async function open(url) {
  const { context, page, errors } = await openRecorded(browser, null, { acceptDownloads: true });
  const noise = [];
  page.on('console', (m) => (m.type() === 'error' || m.type() === 'warning') && noise.push(`${m.type()}: ${m.text()}`));
  const asked = await routeCdn(context);
  await page.goto(url);
  return { context, page, errors, noise, asked };
}

const isThreadsFile = (p) => /attention-core-threads/.test(p);

const events = (page, type) => page.evaluate((type) => window.__events.filter((e) => e.type === type), type);
const waitEvent = (page, type) => page.waitForFunction((type) => window.__events.some((e) => e.type === type), type);
/** Waits until f() is truthy in the page (f reads the element through __root()). */
const waitShadow = (page, f) => page.waitForFunction(f);

for (const [name, file] of [['no CSP', 'lesson.html'], ['a strict CSP that allows the CDN and blob: workers', 'strict.html']]) {
  test(`from a CDN (${name}): ready, play, step and solved, every panel, the PyTorch files, export and import`, async () => {
    site.requests.length = 0;
    const { context, page, errors, noise, asked } = await open(`${site.url}${file}`);
    await waitEvent(page, 'ready');
    assert.deepEqual((await events(page, 'ready'))[0], { type: 'ready', id: 'pg', simd: true });
    // The worker runs from a same-origin blob: bootstrap that imports the CDN's worker module.
    const workers = page.workers().map((w) => w.url());
    assert.equal(workers.length, 1, `one worker: ${workers}`);
    assert.match(workers[0], /^blob:http:\/\/127\.0\.0\.1:\d+\//);

    await page.evaluate(() => document.getElementById('pg').play());
    await waitEvent(page, 'solved');
    await page.evaluate(() => document.getElementById('pg').pause());
    const solved = (await events(page, 'solved'))[0];
    assert.ok(solved.loss < 0.1 && solved.step > 0, JSON.stringify(solved));
    assert.ok((await events(page, 'step')).length > 0);

    // The learning panels, in the element's shadow root.
    await waitShadow(page, () => Number(__root().querySelector('.timeline-panel').dataset.entries) >= 2);
    await waitShadow(page, () => __root().querySelector('.ablation-panel').dataset.intactLoss !== undefined);
    await page.evaluate(() => __root().querySelector('.selftest-panel [data-action=selftest]').click());
    await waitShadow(page, () => __root().querySelector('.selftest-panel').dataset.state === 'done');
    const checks = await page.evaluate(() => [...__root().querySelectorAll('.selftest-panel tr[data-check]')].map((tr) => [tr.dataset.check, tr.dataset.pass]));
    assert.deepEqual(Object.fromEntries(checks).pytorch_reference, 'true', `the PyTorch case came from the CDN: ${JSON.stringify(checks)}`);
    assert.ok(checks.every(([, pass]) => pass === 'true'), JSON.stringify(checks));
    for (const f of ['short.weights.safetensors', 'short.input.safetensors', 'short.expected.safetensors']) assert.ok(asked.includes(`reference/${f}`), `${f} from the CDN`);

    // Export the weights, then import them into a fresh model: the trained loss comes back (a fresh
    // model's is about ln 64 = 4.2).
    const [download] = await Promise.all([page.waitForEvent('download'), page.evaluate(() => __root().querySelector('[data-export=weights]').click())]);
    const bytes = await downloadBytes(download);
    assert.ok(bytes.length > 1000, `weights file: ${bytes.length} bytes`);
    await page.evaluate(() => document.getElementById('pg').reset());
    await page.waitForFunction(() => window.__events.at(-1)?.type === 'step' && window.__events.at(-1).step === 0);
    const weightsFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "ap-x-")), "attention-playground.safetensors");
    fs.writeFileSync(weightsFile, bytes);
    await page.locator('#pg [data-import=file]').setInputFiles(weightsFile);
    await waitShadow(page, () => __root().querySelector('.export-msg').textContent === 'Loaded the weights from attention-playground.safetensors.');
    await page.evaluate(() => document.getElementById('pg').step(1));
    await page.waitForFunction(() => window.__events.at(-1)?.type === 'step' && window.__events.at(-1).step >= 1);
    const after = await page.evaluate(() => window.__events.at(-1).loss);
    assert.ok(after < 0.5, `imported weights are trained: loss ${after} one step after the import`);

    // Nothing of the playground was asked from the lesson page's origin.
    const local = site.requests.filter((p) => !p.endsWith(file) && !p.endsWith('favicon.ico'));
    assert.deepEqual(local, [], 'requests to the page origin besides the page');
    // Chromium runs relaxed SIMD: only that build is downloaded.
    assert.ok(asked.includes('wasm/attention-core-relaxed.wasm') && asked.some((p) => /^assets\/worker-.*\.js$/.test(p)), `from the CDN: ${asked}`);
    assert.ok(!asked.some((p) => /attention-core-(simd|scalar)\./.test(p)), `only the build that runs: ${asked}`);
    assert.deepEqual(asked.filter(isThreadsFile), []);
    assert.deepEqual(await events(page, 'error'), []);
    assert.deepEqual(errors, []);
    assert.deepEqual(noise, []);
    await screenshot(page, `cross-origin-${file.replace('.html', '')}.png`);
    await context.close();
  });
}

test('from a CDN on a cross-origin-isolated lesson page (COOP/COEP): the one-thread (relaxed) SIMD build, no console message', async () => {
  const { context, page, errors, noise, asked } = await open(`${isolatedSite.url}lesson.html`);
  assert.equal(await page.evaluate(() => crossOriginIsolated), true);
  await waitEvent(page, 'ready');
  assert.deepEqual((await events(page, 'ready'))[0], { type: 'ready', id: 'pg', simd: true });
  await page.evaluate(() => document.getElementById('pg').play());
  await waitEvent(page, 'solved');
  await page.evaluate(() => document.getElementById('pg').pause());
  assert.ok(asked.includes('wasm/attention-core-relaxed.wasm'), `from the CDN: ${asked}`);
  assert.deepEqual(asked.filter(isThreadsFile), []);
  assert.deepEqual(await events(page, 'error'), []);
  assert.deepEqual(errors, []);
  assert.deepEqual(noise, []);
  await context.close();
});

/** The lesson page after a worker that could not start: one sentence, kind worker, host intact. */
async function assertWorkerError(page, errors, pattern) {
  await waitEvent(page, 'error');
  const [e] = await events(page, 'error');
  assert.equal(e.kind, 'worker', JSON.stringify(e));
  assert.match(e.message, pattern);
  assert.equal(e.message.split(/[.!?](\s|$)/).filter((s) => s && s.trim()).length, 1, `one sentence: ${e.message}`);
  const shown = await page.evaluate(() => __root().textContent);
  assert.ok(shown.includes(e.message), 'the element shows the message');
  assert.equal(await events(page, 'ready').then((r) => r.length), 0);
  // The host page keeps working: its content is there and responds.
  assert.equal(await page.textContent('#host-text'), 'Each query row of the weights sums to one.');
  await page.click('#host-details summary');
  assert.equal(await page.evaluate(() => document.getElementById('host-details').open), true);
  assert.deepEqual(errors.filter((x) => !/Content Security Policy|CORS|Failed to load|net::ERR/.test(x)), [], 'no uncaught error');
}

test('a CSP without blob: workers: the element names worker-src blob: as the fix, kind worker', async () => {
  const { context, page, errors } = await open(`${site.url}no-blob.html`);
  await assertWorkerError(page, errors, /Content-Security-Policy.*`blob:` and https:\/\/cdn\.example\.test to `worker-src`/);
  await screenshot(page, 'cross-origin-no-blob.png');
  await context.close();
});

test('a CSP whose worker-src lacks the CDN (Chromium checks the worker\'s imports against it): named as the fix, kind worker', async () => {
  const { context, page, errors } = await open(`${site.url}worker-src-self.html`);
  await assertWorkerError(page, errors, /https:\/\/cdn\.example\.test to `worker-src`/);
  await context.close();
});

test('a CDN that sends no CORS headers for the worker: the element names CORS as the cause, kind worker', async () => {
  // A real second origin (another loopback address): Playwright's route.fulfill adds CORS headers
  // by itself, so it cannot play a server that leaves them out.
  const cdn = await serve(DIST, { host: '127.0.0.2', headersFor: (p) => (p.includes('/assets/worker-') ? {} : { 'access-control-allow-origin': '*' }) });
  const other = await serveSite({ 'lesson.html': lessonPage(`${cdn.url}attention-playground.js`) });
  const { context, page, errors } = await open(`${other.url}lesson.html`);
  await assertWorkerError(page, errors, /not served with CORS headers.*Access-Control-Allow-Origin/);
  await context.close();
  await other.close();
  await cdn.close();
});

test('a page opened from a file (file://): the element says to serve it over http, kind worker', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ap-file-'));
  fs.writeFileSync(path.join(dir, 'lesson.html'), lessonPage(MODULE));
  const { context, page, errors } = await open(`file://${dir}/lesson.html`);
  await assertWorkerError(page, errors, /file:\/\/.*web server/);
  await context.close();
});
