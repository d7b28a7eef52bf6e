// Soak, the page in headless Chromium: SOAK_MINUTES (default 10) of Play on the DemoConfig with
// the heatmaps drawn live. Every 30 s, after a forced garbage collection, it samples the page's
// JS heap (CDP Performance.getMetrics: JSHeapUsedSize, Nodes, JSEventListeners), the step, the
// loss, the heatmap frame count and the timeline's size (entries within capacity, bytes within
// 8 MB). After a 1-minute warm-up the heap after GC must stay within
// 8 MB of its warm-up value and the DOM node and listener counts must not grow; training must
// keep going, the heatmaps keep redrawing, and the loss stay finite. Prints the figures as JSON.
// Run by scripts/soak (npm run soak), outside npm test.
import { serve, launch, openPage, waitReady, readout } from '../e2e/harness.mjs';

const MINUTES = Number(process.env.SOAK_MINUTES ?? 10);
const SAMPLE_S = 30;
const WARMUP_S = 60;
const HEAP_SLACK = 8 * 1024 * 1024;
const TIMELINE_BYTES = 8 * 1024 * 1024; // web/src/model/timeline.ts

const srv = await serve();
const browser = await launch();
const failures = [];
const samples = [];
try {
  const { page, errors } = await openPage(browser, `${srv.url}#view=train`);
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Performance.enable');
  await cdp.send('HeapProfiler.enable');
  await waitReady(page);
  await page.click('[data-action=play]');
  await page.waitForSelector('.readout[data-status="playing"]');
  const t0 = Date.now();
  const sample = async () => {
    await cdp.send('HeapProfiler.collectGarbage');
    const { metrics } = await cdp.send('Performance.getMetrics');
    const m = Object.fromEntries(metrics.map((x) => [x.name, x.value]));
    const r = await readout(page);
    const frames = Number(await page.getAttribute('.heatmaps', 'data-frames'));
    const tl = await page.evaluate(() => {
      const d = document.querySelector('.timeline-panel')?.dataset ?? {};
      return { entries: Number(d.entries), capacity: Number(d.capacity), bytes: Number(d.bytes), every: Number(d.every) };
    });
    const s = {
      t: Math.round((Date.now() - t0) / 1000),
      heapMB: Number((m.JSHeapUsedSize / 2 ** 20).toFixed(2)),
      heapTotalMB: Number((m.JSHeapTotalSize / 2 ** 20).toFixed(2)),
      nodes: m.Nodes,
      listeners: m.JSEventListeners,
      step: r.step,
      loss: r.loss,
      status: r.status,
      frames,
      timeline: tl,
    };
    samples.push(s);
    console.error(`page-soak: ${JSON.stringify(s)}`);
    return s;
  };
  let warm = null;
  let prev = null;
  while (Date.now() - t0 < MINUTES * 60_000) {
    await page.waitForTimeout(SAMPLE_S * 1000);
    const s = await sample();
    if (!warm && s.t >= WARMUP_S) warm = s;
    if (s.status !== 'playing') failures.push(`status ${s.status} at ${s.t} s`);
    if (!Number.isFinite(s.loss)) failures.push(`loss ${s.loss} at ${s.t} s`);
    if (prev && !(s.step > prev.step)) failures.push(`no training progress between ${prev.t} s and ${s.t} s`);
    if (prev && !(s.frames > prev.frames)) failures.push(`no heatmap redraw between ${prev.t} s and ${s.t} s`);
    if (!(s.timeline.entries <= s.timeline.capacity && s.timeline.bytes <= TIMELINE_BYTES)) failures.push(`timeline ${JSON.stringify(s.timeline)} at ${s.t} s is over its cap`);
    if (warm && s !== warm) {
      if (s.heapMB * 2 ** 20 > warm.heapMB * 2 ** 20 + HEAP_SLACK) failures.push(`JS heap ${s.heapMB} MB at ${s.t} s vs ${warm.heapMB} MB after warm-up`);
      if (s.nodes > warm.nodes + 50) failures.push(`DOM nodes ${s.nodes} at ${s.t} s vs ${warm.nodes} after warm-up`);
      if (s.listeners > warm.listeners + 20) failures.push(`listeners ${s.listeners} at ${s.t} s vs ${warm.listeners} after warm-up`);
    }
    prev = s;
  }
  await page.click('[data-action=play]');
  await page.waitForSelector('.readout[data-status="paused"]');
  if (errors.length) failures.push(...errors.slice(0, 5));
  const heaps = samples.filter((s) => s.t >= WARMUP_S).map((s) => s.heapMB);
  console.log(
    JSON.stringify({
      soak: 'page-chromium',
      minutes: MINUTES,
      steps: samples.at(-1)?.step,
      frames: samples.at(-1)?.frames,
      finalLoss: samples.at(-1)?.loss,
      heapAfterWarmupMB: warm?.heapMB,
      heapMinMB: Math.min(...heaps),
      heapMaxMB: Math.max(...heaps),
      heapEndMB: samples.at(-1)?.heapMB,
      nodes: [warm?.nodes, samples.at(-1)?.nodes],
      listeners: [warm?.listeners, samples.at(-1)?.listeners],
      samples,
      failures,
    }),
  );
} finally {
  await browser.close();
  await srv.close();
}
process.exit(failures.length ? 1 : 0);
