// Client-side navigation (MkDocs Material, Docusaurus, Jupyter Book) removes page content and adds
// it again. Removing <attention-playground> must end its worker (and so free its wasm memory),
// over many cycles, and an element added again must work.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { expectWorkers, launch, lessonPage, openRecorded, serveDistWith } from './harness.mjs';

/** 10 cycles to warm up, then 20 whose heap growth is measured. A live instance holds ~0.25 MB of
 * JS heap (measured: the heap after GC with the element minus without), so 20 cycles that each
 * leaked one would add ~5 MB, five times the bound below: a leak of 50 KB per cycle (a fifth of an
 * instance) crosses it. (With 50 cycles, 40 measured, 25 KB did: more cycles, little more reach.) */
const CYCLES = 30;
const WARM_UP = 10;

let browser;
let srv;
test.before(async () => {
  srv = await serveDistWith({ 'lesson.html': lessonPage('./attention-playground.js', { attrs: 'seed="3" hide="timeline"' }) });
  browser = await launch();
});
test.after(async () => {
  await browser?.close();
  await srv?.close();
});

/** Used JS heap after a full garbage collection, as the soak test measures it. */
async function heapAfterGc(cdp) {
  await cdp.send('HeapProfiler.collectGarbage');
  await cdp.send('HeapProfiler.collectGarbage');
  return (await cdp.send('Runtime.getHeapUsage')).usedSize;
}

test(`${CYCLES} remove/add cycles: each removal ends the worker, none is left, the heap is flat, and the element works again`, async (t) => {
  const { context, page, errors } = await openRecorded(browser, null);
  const cdp = await context.newCDPSession(page);
  await page.goto(`${srv.url}lesson.html`);

  const readyCount = () => page.evaluate(() => window.__events.filter((e) => e.type === 'ready').length);
  await page.waitForFunction(() => window.__events.some((e) => e.type === 'ready'));
  await expectWorkers(page, 1);

  // One cycle: navigate away (remove the figure), come back (add it again) and wait until ready.
  const cycle = async (i) => {
    await page.evaluate(() => {
      const pg = document.getElementById('pg');
      window.__parked = pg;
      pg.remove();
    });
    await expectWorkers(page, 0);
    await page.evaluate(() => document.querySelector('main').append(window.__parked));
    await page.waitForFunction((n) => window.__events.filter((e) => e.type === 'ready').length >= n, i + 2);
  };

  let heapWarm = 0;
  for (let i = 0; i < CYCLES; ++i) {
    await cycle(i);
    if (i === WARM_UP - 1) heapWarm = await heapAfterGc(cdp);
  }
  assert.equal(await readyCount(), CYCLES + 1);
  const heapAtEnd = await heapAfterGc(cdp);
  t.diagnostic(`JS heap after GC: ${(heapWarm / 1e6).toFixed(2)} MB after ${WARM_UP} cycles, ${(heapAtEnd / 1e6).toFixed(2)} MB after ${CYCLES}`);
  // Flat: 20 more cycles add less than 1 MB (20 leaked instances — DOM, uPlot, Store — are ~5 MB).
  assert.ok(heapAtEnd - heapWarm < 1e6, `heap grew ${heapAtEnd - heapWarm} bytes over ${CYCLES - WARM_UP} cycles`);

  // The element added again works: it trains.
  await expectWorkers(page, 1);
  await page.evaluate(() => document.getElementById('pg').step(30));
  await page.waitForFunction(() => window.__events.some((e) => e.type === 'step' && e.step === 30));

  // Removed for good: no worker is left.
  await page.evaluate(() => document.getElementById('pg').remove());
  await expectWorkers(page, 0);
  assert.deepEqual(errors, []);
  await context.close();
});
