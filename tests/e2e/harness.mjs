// Shared e2e helpers: a tiny static server for web/dist (mounted under a sub-path, as a course
// site would), and headless Chromium through playwright-core with the system browser (the suite's
// shared one when run by tests/e2e/run.mjs, see chromium.mjs).
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { before, after } from 'node:test';
import { createRequire } from 'node:module';
import { launch as launchChromium } from './chromium.mjs';

/**
 * How long any wait may take before the test calls it a hang: the one guard of the suite, for
 * every wait of every page it opens (a guard, never a verdict: no test asserts a duration). Long
 * enough for the longest wait (the induction preset training to its phase change) with the other
 * file of the pair and other work loading the machine.
 */
export const GUARD_MS = 180000;

/**
 * Chromium for one test file (chromium.mjs), whose every context and page waits at most GUARD_MS
 * by default: a test's waits need no timeout of their own.
 */
export async function launch() {
  const browser = await launchChromium();
  const newContext = browser.newContext.bind(browser);
  const newPage = browser.newPage.bind(browser);
  browser.newContext = async (options) => {
    const context = await newContext(options);
    context.setDefaultTimeout(GUARD_MS);
    return context;
  };
  browser.newPage = async (options) => {
    const page = await newPage(options);
    page.setDefaultTimeout(GUARD_MS);
    return page;
  };
  return browser;
}

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** The built page: web/dist, or ATTN_DIST (to test a build made elsewhere). */
export const DIST = process.env.ATTN_DIST ? path.resolve(process.env.ATTN_DIST) : path.join(ROOT, 'web/dist');
export const ARTIFACTS = path.join(ROOT, 'tests/e2e/artifacts');
/** The page is served from here, not from "/", to prove relative asset paths. */
export const SUB_PATH = '/course/lesson-7/playground/';

const MIME = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.wasm': 'application/wasm',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};

/** The content type of a file, by extension. */
export function mimeOf(file) {
  return MIME[path.extname(file)] ?? 'application/octet-stream';
}

/**
 * Serves dir under SUB_PATH on a free port of host (127.0.0.1; another loopback address such as
 * 127.0.0.2 is another origin), adding headers to every response. headersFor(pathname) may add
 * more per file. Resolves to {url, requests, close}; requests lists every path asked for.
 */
export function serve(dir = DIST, { headers = {}, host = '127.0.0.1', headersFor = () => ({}), subPath = SUB_PATH } = {}) {
  const requests = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    requests.push(url.pathname);
    if (!url.pathname.startsWith(subPath)) {
      res.writeHead(404, headers).end('not found');
      return;
    }
    let rel = decodeURIComponent(url.pathname.slice(subPath.length)) || 'index.html';
    const file = path.resolve(dir, rel);
    if (!file.startsWith(path.resolve(dir) + path.sep)) {
      res.writeHead(403, headers).end();
      return;
    }
    fs.readFile(file, (err, body) => {
      if (err) {
        res.writeHead(404, headers).end('not found');
        return;
      }
      res.writeHead(200, { 'content-type': mimeOf(file), 'cache-control': 'no-store', ...headers, ...headersFor(url.pathname) });
      res.end(body);
    });
  });
  return new Promise((resolve) => {
    server.listen(0, host, () => {
      const { port } = server.address();
      resolve({ url: `http://${host}:${port}${subPath}`, requests, close: () => new Promise((r) => server.close(r)) });
    });
  });
}

/** The headers dir/_headers (web/public/_headers, copied to web/dist) gives every path: COOP,
 * COEP and CORP, which make the page cross-origin isolated (the threads build). */
export function isolationHeaders(dir = DIST) {
  const lines = fs.readFileSync(path.join(dir, '_headers'), 'utf8').split('\n');
  if (lines[0].trim() !== '/*') throw new Error(`${dir}/_headers: expected a /* rule first`);
  return Object.fromEntries(lines.slice(1).filter((l) => l.trim()).map((l) => l.trim().split(/:\s*/)));
}

/**
 * For the tests of one file: before() serves web/dist and gets a Chromium (launch()), then hands
 * both to set(srv, browser); after() closes them.
 */
export function useBrowser(set, { dir = DIST, headers = {} } = {}) {
  let srv;
  let browser;
  before(async () => {
    srv = await serve(dir, { headers });
    browser = await launch();
    set(srv, browser);
  });
  after(async () => {
    await browser?.close();
    await srv?.close();
  });
}

/**
 * Opens a page that records console errors, page errors and requests to other origins.
 * bypassCSP lets a test inject its own scripts (e.g. load the core on the main thread to compare
 * numbers) past the page's meta CSP. Returns {page, context, errors, external}.
 */
export async function openPage(browser, url, { width = 1280, height = 900, bypassCSP = false } = {}) {
  const context = await browser.newContext({ viewport: { width, height }, bypassCSP });
  const page = await context.newPage();
  const errors = [];
  const external = [];
  const origin = new URL(url).origin;
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('request', (r) => {
    const u = r.url();
    if (!u.startsWith(origin) && !u.startsWith('data:') && !u.startsWith('blob:')) external.push(u);
  });
  await page.goto(url);
  return { page, context, errors, external };
}

/** Free pages of openReused, per browser and per context options. */
const reusable = new WeakMap();

/**
 * openPage, but into a page an earlier test of the file handed back (one of the same options), if
 * there is one: the URL loads as a new document (after about:blank, so that even a URL that
 * differs only in its hash is a real load; the page's scripts, worker and listeners start afresh),
 * which costs about half the Chromium CPU of a new page, whose renderer process has to start
 * (measured: 0.7 s against 1.3 s per load to ready). Returns what openPage returns, except that
 * context is only {close()}, which hands the page back (the browser's close() closes them all);
 * so it is for tests that change nothing outside the document: no init scripts, routes, clock,
 * viewport changes or listeners left on the page.
 */
export async function openReused(browser, url, { width = 1280, height = 900, bypassCSP = false } = {}) {
  if (!reusable.has(browser)) reusable.set(browser, new Map());
  const key = JSON.stringify({ width, height, bypassCSP });
  const free = reusable.get(browser).get(key) ?? [];
  reusable.get(browser).set(key, free);
  let entry = free.pop();
  if (!entry) {
    const context = await browser.newContext({ viewport: { width, height }, bypassCSP });
    const page = await context.newPage();
    entry = { page, log: null };
    // The listeners write to the current test's lists.
    page.on('console', (m) => {
      if (m.type() === 'error') entry.log.errors.push(`console: ${m.text()}`);
    });
    page.on('pageerror', (e) => entry.log.errors.push(`pageerror: ${e.message}`));
    page.on('request', (r) => {
      const u = r.url();
      if (!u.startsWith(entry.log.origin) && !u.startsWith('data:') && !u.startsWith('blob:') && u !== 'about:blank') entry.log.external.push(u);
    });
  }
  entry.log = { errors: [], external: [], origin: new URL(url).origin };
  const { page, log } = entry;
  await page.goto('about:blank');
  // The mouse stays where the last test left it: move it off, lest the new document's figures
  // see a hover that this test did not make.
  await page.mouse.move(0, 0);
  // What the previous document logged while it went is not this test's.
  log.errors.length = 0;
  log.external.length = 0;
  await page.goto(url);
  return { page, errors: log.errors, external: log.external, context: { close: async () => free.push(entry) } };
}

/** Waits until the training view has a model (status paused at some step). */
export async function waitReady(page) {
  await page.waitForSelector('.readout[data-status="paused"]', { timeout: GUARD_MS });
}

/**
 * Waits until the step an element shows (its data-step; by default the Run box's readout) is n,
 * or at least n (atLeast). root: the selector of the element whose shadow root holds it (the
 * custom element). page may be a page or a frame.
 */
export function waitForStep(page, n, { sel = '.readout', root = null, atLeast = false } = {}) {
  return page.waitForFunction(
    ({ n, sel, root, atLeast }) => {
      const scope = root ? document.querySelector(root)?.shadowRoot : document;
      const step = scope?.querySelector(sel)?.dataset.step;
      return step !== undefined && step !== '' && (atLeast ? Number(step) >= n : step === String(n));
    },
    { n, sel, root, atLeast },
    { timeout: GUARD_MS },
  );
}

/** Pauses the training view's run if it is playing (a run that is done pauses itself, and a click
 * then would start it again), and waits until it is paused. */
export async function pauseRun(page) {
  await page.evaluate(() => {
    if (document.querySelector('.readout').dataset.status === 'playing') document.querySelector('[data-action=play]').click();
  });
  await page.waitForSelector('.readout[data-status="paused"]', { timeout: GUARD_MS });
}

/** Waits until the training view's run has paused itself on being done (the done note says so). */
export async function waitSelfPaused(page) {
  await page.waitForFunction(() => document.querySelector('.done-note')?.dataset.paused === 'self' && document.querySelector('.readout').dataset.status === 'paused', null, { timeout: GUARD_MS });
}

/**
 * Presses Play (press: how; by default a click) and trains until the readout's step is at least
 * n (or, given, until the page function until(n) returns true), then pauses; returns the step it
 * paused at. A run that pauses itself on the way (solved or converged) is started again once, as
 * a learner who wants more steps would; any other stop before then is an error. (Functions, not
 * strings: the page's CSP forbids evaluating strings.)
 */
export async function playTo(page, n, { press = () => page.click('[data-action=play]'), until = (n) => Number(document.querySelector('.readout').dataset.step) >= n } = {}) {
  await press();
  const deadline = Date.now() + GUARD_MS;
  let resumed = false;
  for (;;) {
    const r = await readout(page);
    if (await page.evaluate(until, n)) break;
    if (r.status !== 'playing') {
      const self = await page.$eval('.done-note', (el) => el.dataset.paused === 'self');
      if (resumed || !self || r.status !== 'paused') throw new Error(`training stopped at step ${r.step} (${r.status}) before it was far enough`);
      resumed = true;
      await press();
    }
    if (Date.now() > deadline) throw new Error(`playTo: not there after ${GUARD_MS} ms (step ${r.step})`);
    await new Promise((ok) => setTimeout(ok, 100));
  }
  await pauseRun(page);
  return (await readout(page)).step;
}

/** The readout's step and loss. */
export async function readout(page) {
  return page.$eval('.readout', (el) => ({ step: Number(el.dataset.step), loss: Number(el.dataset.loss), status: el.dataset.status }));
}

/** Saves a full-page screenshot under tests/e2e/artifacts/. */
export async function screenshot(page, name) {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  const file = path.join(ARTIFACTS, name);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/**
 * Serves a course site's pages: pages maps a path under SUB_PATH ('lesson.html') to its HTML.
 * Resolves like serve().
 */
export function serveSite(pages, { host = '127.0.0.1', headers = {} } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ap-site-'));
  for (const [name, html] of Object.entries(pages)) fs.writeFileSync(path.join(dir, name), html);
  return serve(dir, { host, headers });
}

/** The fake public CDN that the cross-origin tests load the playground from. */
export const CDN = 'https://cdn.example.test/npm/attention-playground@0.1.0/web/dist/';

/**
 * Answers every request to CDN from web/dist, with CORS as npm CDNs send it, in a Playwright
 * context (its pages and their workers). Returns the list of paths asked for.
 */
export async function routeCdn(context) {
  const asked = [];
  await context.route(`${CDN}**`, async (route) => {
    const rel = decodeURIComponent(new URL(route.request().url()).pathname.slice(new URL(CDN).pathname.length));
    asked.push(rel);
    const file = path.resolve(DIST, rel);
    if (!file.startsWith(path.resolve(DIST) + path.sep) || !fs.existsSync(file)) {
      await route.fulfill({ status: 404, body: 'not found', headers: { 'access-control-allow-origin': '*' } });
      return;
    }
    const headers = { 'content-type': mimeOf(file), 'cache-control': 'public, max-age=31536000', 'access-control-allow-origin': '*' };
    await route.fulfill({ status: 200, body: fs.readFileSync(file), headers });
  });
  return asked;
}

/** Records every event of the page's <attention-playground> elements into window.__events, and
 * defines window.__root(id = 'pg'), the element's shadow root (an init script: it runs before the
 * page's own scripts, whatever its CSP allows). */
export const RECORD_EVENTS = `
  window.__events = [];
  window.__root = (id = 'pg') => document.getElementById(id).shadowRoot;
  for (const type of ['ready', 'step', 'solved', 'error']) {
    document.addEventListener(type, (e) => {
      if (e.target && e.target.localName === 'attention-playground') window.__events.push({ type, id: e.target.id, ...e.detail });
    }, true);
  }`;

/**
 * A course site's lesson page: some text, one <attention-playground id="pg"> with attrs, and the
 * element module from src (a CDN URL, a relative path...). csp adds a Content-Security-Policy.
 */
export function lessonPage(src, { attrs = 'seed="3"', csp = null } = {}) {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Lesson 7: attention</title><link rel="icon" href="data:,">
${csp ? `<meta http-equiv="Content-Security-Policy" content="${csp}">` : ''}
<script type="module" src="${src}"></script></head>
<body><main>
<h1>Lesson 7: attention</h1>
<p id="host-text">Each query row of the weights sums to one.</p>
<details id="host-details"><summary>Why?</summary><p>Softmax.</p></details>
<attention-playground id="pg" ${attrs}><p>Fallback text.</p></attention-playground>
<p>After the figure.</p>
</main></body></html>`;
}

/** Serves a copy of web/dist with extra pages beside attention-playground.js ({name: html}), as a
 * course site that copied the folder has them. Resolves like serve(). */
export function serveDistWith(pages) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ap-dist-'));
  fs.cpSync(DIST, dir, { recursive: true });
  for (const [name, html] of Object.entries(pages)) fs.writeFileSync(path.join(dir, name), html);
  return serve(dir);
}

/**
 * A fresh Chromium context (contextOptions as Playwright takes them) whose pages run the init
 * scripts (default: RECORD_EVENTS; RECORD_WORKER records the worker's traffic) before their own,
 * and collect console errors and uncaught errors; opens url (unless null). Returns {context, page,
 * errors}.
 */
export async function openRecorded(browser, url, contextOptions = {}, init = [RECORD_EVENTS]) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, ...contextOptions });
  for (const script of init) await context.addInitScript(script);
  const page = await context.newPage();
  const errors = [];
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  page.on('pageerror', (e) => errors.push(e.message));
  if (url) await page.goto(url);
  return { context, page, errors };
}

/** Waits (GUARD_MS at most) until the page has exactly n live workers, then asserts it. */
export async function expectWorkers(page, n) {
  for (let i = 0; i < GUARD_MS / 25 && page.workers().length !== n; ++i) await page.waitForTimeout(25);
  if (page.workers().length !== n) throw new Error(`expected ${n} live workers, found: ${page.workers().map((w) => w.url())}`);
}

/** Records what the page's workers are told and what they report, into window.__worker (an init
 * script, like RECORD_EVENTS): sent lists each request's {type, intervalMs}; snapshots lists
 * each message that carries a snapshot, {type, step, loss}. Lets a test count snapshots and redraws
 * instead of timing them. */
export const RECORD_WORKER = `{
  window.__worker = { sent: [], snapshots: [] };
  const NativeWorker = window.Worker;
  window.Worker = class extends NativeWorker {
    constructor(...args) {
      super(...args);
      this.addEventListener('message', (e) => {
        const s = e.data && e.data.snapshot;
        if (s) window.__worker.snapshots.push({ type: e.data.type, step: s.step, loss: s.loss });
      });
    }
    postMessage(m, ...rest) {
      if (m && typeof m.type === 'string') window.__worker.sent.push({ type: m.type, intervalMs: m.intervalMs });
      return super.postMessage(m, ...rest);
    }
  };
}`;


const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];
let axeSource = null;

/** Runs axe-core (WCAG 2.0/2.1, A and AA) in the page, shadow roots included; returns the
 * violations, one line each. The page must have been opened with bypassCSP (the script is the
 * test's, not the page's), and is injected once per document. Every rule runs on every node;
 * resultTypes only spares axe the details of the passes and inapplicable results, which nobody
 * reads (on the trained view with every panel, ~11k elements, a third of the audit's time). */
export async function audit(page) {
  axeSource ??= fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  if (!(await page.evaluate(() => typeof window.axe === 'object'))) await page.addScriptTag({ content: axeSource });
  const violations = await page.evaluate((tags) => window.axe.run(document, { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] }).then((r) => r.violations), AXE_TAGS);
  return violations.map((v) => `${v.id} (${v.nodes.length}): ${v.help} — ${v.nodes.slice(0, 3).map((n) => JSON.stringify(n.target)).join(', ')}`);
}

/** The bytes of a finished download. (Download.path() is not available over the shared browser's
 * connection; the stream is.) */
export async function downloadBytes(download) {
  const chunks = [];
  for await (const chunk of await download.createReadStream()) chunks.push(chunk);
  return Buffer.concat(chunks);
}

/**
 * What the canvases of locator hold, one entry per canvas: {width, height, inked (pixels that are
 * not transparent), colours (distinct colours among them)}. A heatmap that drew its cells has
 * most of its pixels inked, in several colours.
 */
export function canvasInk(locator) {
  return locator.evaluateAll((canvases) =>
    canvases.map((c) => {
      const { data } = c.getContext('2d').getImageData(0, 0, c.width, c.height);
      const colours = new Set();
      let inked = 0;
      for (let i = 0; i < data.length; i += 4) {
        if (data[i + 3] === 0) continue;
        ++inked;
        colours.add((data[i] << 16) | (data[i + 1] << 8) | data[i + 2]);
      }
      return { width: c.width, height: c.height, inked, colours: colours.size };
    }),
  );
}

/**
 * The lines a uPlot chart (locator: its container) drew: for each series in its legend (after x),
 * {label, columns}, the number of pixel columns of the plot's canvas with a pixel of the series'
 * colour; and width, the canvas' width. A line through n points spread over the x range inks most
 * columns; a chart with its axes but no line inks none.
 */
export function chartInk(locator) {
  return locator.evaluate((el) => {
    const canvas = el.querySelector('canvas');
    const rgb = (css) => css.match(/[\d.]+/g).slice(0, 3).map(Number);
    const series = [...el.querySelectorAll('.u-legend .u-series')].slice(1).map((row) => ({
      label: row.querySelector('.u-label')?.textContent ?? '',
      colour: rgb(getComputedStyle(row.querySelector('.u-marker')).borderTopColor),
    }));
    const { width, height } = canvas;
    const { data } = canvas.getContext('2d').getImageData(0, 0, width, height);
    return {
      width,
      series: series.map(({ label, colour }) => {
        let columns = 0;
        for (let x = 0; x < width; ++x) {
          for (let y = 0; y < height; ++y) {
            const i = 4 * (y * width + x);
            // On the transparent canvas an antialiased edge keeps the line's colour at a lower alpha.
            if (data[i + 3] > 64 && Math.hypot(data[i] - colour[0], data[i + 1] - colour[1], data[i + 2] - colour[2]) < 24) {
              ++columns;
              break;
            }
          }
        }
        return { label, columns };
      }),
    };
  });
}
