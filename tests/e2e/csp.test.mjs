// The page under a strict Content-Security-Policy sent as an HTTP header on every response (the
// page, its scripts, the worker script and the wasm), as a course site might send it:
//   default-src 'self'; script-src 'self' 'wasm-unsafe-eval'
// A worker's CSP is the one of its own script's response, so the worker (which runs Embind's
// glue) is bound by the header too. The page must load, train and show no CSP violation: no
// securitypolicyviolation event in the page or in the worker, and no console error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DIST, GUARD_MS, playTo, readout, useBrowser, waitForStep, waitReady } from './harness.mjs';

const CSP = "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'";
/** The built page (CSP_DIST overrides it, e.g. to check a patched copy). */
const ROOT_DIR = process.env.CSP_DIST ?? DIST;
let srv;
let browser;
useBrowser(
  (s, b) => {
    srv = s;
    browser = b;
  },
  { dir: ROOT_DIR, headers: { 'content-security-policy': CSP } },
);

/** Opens the page with violation listeners installed before any script of the page runs. */
async function openWithCsp(hash) {
  // Never bypass CSP here: the point is to run under it.
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, bypassCSP: false });
  const page = await context.newPage();
  const errors = [];
  const violations = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  await page.exposeFunction('__cspViolation', (v) => violations.push(v));
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) =>
      window.__cspViolation({ where: 'page', directive: e.violatedDirective, blocked: e.blockedURI, sample: e.sample }),
    );
  });
  // The worker: playwright reports its console messages as the page's (above); CDP's Log domain
  // adds the browser's own CSP reports.
  const workers = [];
  page.on('worker', (w) => workers.push(w));
  const cdp = await context.newCDPSession(page);
  await cdp.send('Log.enable');
  cdp.on('Log.entryAdded', ({ entry }) => {
    if (entry.level === 'error' || /Content.Security.Policy|unsafe-eval/i.test(entry.text)) errors.push(`log: ${entry.text}`);
  });
  await page.goto(`${srv.url}#${hash}`);
  return { page, context, errors, violations, workers };
}

test('under the CSP header the page loads, trains, and reports no violation', async (t) => {
  const { page, context, errors, violations, workers } = await openWithCsp('view=train&vocab-size=16&d-model=8&heads=2&seq-len=6&batch=4');
  // Ready, or the load error the page shows (e.g. Embind needing 'unsafe-eval'): fail with its text.
  await page.waitForSelector('.readout[data-status="paused"], .loading.error');
  assert.match(await page.textContent('.loading'), /Core loaded/);
  await waitReady(page);
  // The worker really ran under the header: it was served with it and Embind's glue runs in it.
  assert.ok(srv.requests.some((p) => /assets\/worker-.*\.js$/.test(p)), `worker script served: ${srv.requests}`);
  assert.ok(srv.requests.some((p) => /wasm\/attention-core-(simd|scalar|relaxed)\.js$/.test(p)), 'the Embind glue was served with the header');
  assert.ok(workers.length >= 1, 'a worker started');
  // The worker runs under the header policy (its own script's response), not the page's meta one:
  // a request to another origin from inside the worker is a connect-src violation there. (Eval
  // cannot be probed from here: DevTools' evaluate is exempt from the eval check.)
  const workerViolation = await workers[0].evaluate(async (guard) => {
    const seen = new Promise((resolve) => {
      self.addEventListener('securitypolicyviolation', (e) => resolve(e.effectiveDirective), { once: true });
      setTimeout(() => resolve(null), guard);
    });
    try {
      await fetch('http://localhost:9/csp-probe');
    } catch {
      // blocked (or refused): the event says which
    }
    return seen;
  }, GUARD_MS);
  assert.equal(workerViolation, 'connect-src', 'the worker enforces the header CSP');
  // That probe's own reports are expected (they may arrive late); nothing else may appear.
  const notProbe = (x) => !/csp-probe/.test(typeof x === 'string' ? x : JSON.stringify(x));
  // From now on, record every violation inside the worker too.
  await workers[0].evaluate(() => {
    self.__violations = [];
    self.addEventListener('securitypolicyviolation', (e) => {
      if (!/csp-probe/.test(e.blockedURI)) self.__violations.push(`${e.effectiveDirective} ${e.blockedURI}`);
    });
  });

  await page.click('[data-action=step10]');
  await waitForStep(page, 10);
  await playTo(page, 200);
  const r = await readout(page);
  t.diagnostic(`trained to step ${r.step}, loss ${r.loss}`);
  assert.ok(Number.isFinite(r.loss));
  assert.equal(await page.locator('.heatmaps canvas').count(), 3, '2 heads + the average');
  // The lesson view uses the core too (selfAttention).
  await page.click('[data-view=lesson]');
  await page.waitForSelector('.stage[data-stage=tokens]');
  assert.deepEqual(violations.filter(notProbe), []);
  assert.deepEqual(await workers[0].evaluate(() => self.__violations), [], 'violations in the worker');
  assert.deepEqual(errors.filter(notProbe), []);
  await context.close();
});
