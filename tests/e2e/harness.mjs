// Shared e2e helpers: a tiny static server for web/dist (mounted under a sub-path, as a course
// site would), and headless Chromium through playwright-core with the system browser.
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { before, after } from 'node:test';
import { chromium } from 'playwright-core';

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

/**
 * Serves dir under SUB_PATH on a free localhost port, adding headers to every response.
 * Resolves to {url, requests, close}; requests lists every path asked for.
 */
export function serve(dir = DIST, { headers = {} } = {}) {
  const requests = [];
  const server = http.createServer((req, res) => {
    const url = new URL(req.url, 'http://x');
    requests.push(url.pathname);
    if (!url.pathname.startsWith(SUB_PATH)) {
      res.writeHead(404, headers).end('not found');
      return;
    }
    let rel = decodeURIComponent(url.pathname.slice(SUB_PATH.length)) || 'index.html';
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
      res.writeHead(200, { 'content-type': MIME[path.extname(file)] ?? 'application/octet-stream', 'cache-control': 'no-store', ...headers });
      res.end(body);
    });
  });
  return new Promise((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      resolve({ url: `http://127.0.0.1:${port}${SUB_PATH}`, requests, close: () => new Promise((r) => server.close(r)) });
    });
  });
}

/**
 * For the tests of one file: before() serves web/dist and launches Chromium, then hands both to
 * set(srv, browser); after() closes them.
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

/** Launches Debian's Chromium headless with the flags TOOLCHAIN.md lists. Never downloads one. */
export async function launch() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
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

/** Waits until the training view has a model (status paused at some step). */
export async function waitReady(page) {
  await page.waitForSelector('.readout[data-status="paused"]', { timeout: 20000 });
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
