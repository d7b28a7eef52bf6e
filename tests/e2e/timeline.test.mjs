// The training view's Attention timeline panel: snapshots of every head while training, a
// scrubber and Play-through over them, per-head entropy and answer-mass charts, starting over on
// Reset or a new head count, and the worker's memory cap.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { canvasInk, chartInk, openReused, playTo, readout, useBrowser, waitForStep, waitReady } from './harness.mjs';

let srv;
let browser;
useBrowser((s, b) => {
  srv = s;
  browser = b;
});

const PANEL = 'section.timeline-panel';
const SCRUB = `${PANEL} input[type=range][name=timeline-step]`;
const PLAY = `${PANEL} [data-action=timeline-play]`;

/** The panel's data attributes, as numbers (step: NaN before the first snapshot). */
const panelState = (page) =>
  page.$eval(PANEL, (el) => ({
    step: el.dataset.step === '' ? NaN : Number(el.dataset.step),
    entries: Number(el.dataset.entries),
    measured: Number(el.dataset.measured),
    bytes: Number(el.dataset.bytes),
    capacity: Number(el.dataset.capacity),
    every: Number(el.dataset.every),
    heads: Number(el.dataset.heads),
  }));
const timelinePixels = (page) => page.$$eval(`${PANEL} .timeline-heatmaps canvas`, (cs) => cs.map((c) => c.toDataURL()));
const scrubber = (page) => page.$eval(SCRUB, (el) => ({ value: Number(el.value), max: Number(el.max), disabled: el.disabled, text: el.getAttribute('aria-valuetext') }));

/** Play from the keyboard. */
async function pressPlay(page) {
  await page.focus('[data-action=play]');
  await page.keyboard.press('Space');
}

/** Trains with Play (from the keyboard) until the step reaches atLeast (on past a self-pause when
 * the task is solved), then pauses. */
function trainTo(page, atLeast) {
  return playTo(page, atLeast, { press: () => pressPlay(page) });
}

/**
 * Waits until the panel shows the latest snapshot of a run paused at `step`: the worker's last
 * snapshot is within the last `every` steps. Resolves to the panel's state.
 */
async function waitCaughtUp(page, step) {
  await page.waitForFunction(
    ([sel, s]) => {
      const p = document.querySelector(sel);
      const last = Number(p.dataset.step);
      const range = p.querySelector('input[type=range]');
      return p.dataset.step !== '' && last <= s && last > s - Number(p.dataset.every) && range.max === String(Number(p.dataset.entries) - 1) && range.value === range.max;
    },
    [PANEL, step],
  );
  return panelState(page);
}

test('the timeline scrubs: scrubber, heatmaps per head, Play-through, charts per head, Reset starts over', async () => {
  const { page, context, errors } = await openReused(browser, `${srv.url}#view=train&panel=timeline`);
  await waitReady(page);
  // Before training: the snapshot of step 0 only.
  await page.waitForFunction((sel) => document.querySelector(sel).dataset.entries === '1', PANEL);
  assert.equal((await panelState(page)).step, 0);
  assert.match(await page.textContent(`${PANEL} h2`), /Attention timeline/);
  assert.equal(await page.getAttribute(PANEL, 'aria-label'), 'Attention timeline');

  const step = await trainTo(page, 300);
  const st = await waitCaughtUp(page, step);
  const last = st.step;
  assert.ok(st.entries >= 10, `at least 10 snapshots, got ${st.entries}`);
  assert.equal(st.heads, 4);
  assert.ok(st.entries <= st.capacity && st.bytes > 0 && st.bytes <= 8 * 1024 * 1024, JSON.stringify(st));
  const sc = await scrubber(page);
  assert.equal(sc.max + 1, st.entries, 'one scrubber position per snapshot');
  assert.equal(sc.value, sc.max, 'the scrubber followed the latest snapshot');
  assert.equal(sc.text, `step ${last} (${st.entries} of ${st.entries})`);
  assert.match(await page.textContent(`${PANEL} .timeline-position`), new RegExp(`^step ${last} \\(${st.entries} of ${st.entries}\\)$`));
  assert.equal(await page.locator(`${PANEL} .timeline-heatmaps canvas`).count(), 4, 'one heatmap per head');
  assert.deepEqual(await page.$$eval(`${PANEL} .timeline-heatmaps .timeline-head-title`, (els) => els.map((e) => e.textContent)), ['Head 1', 'Head 2', 'Head 3', 'Head 4']);
  const atLast = await timelinePixels(page);
  for (const [i, c] of (await canvasInk(page.locator(`${PANEL} .timeline-heatmaps canvas`))).entries()) {
    assert.ok(c.inked >= 0.5 * c.width * c.height && c.colours >= 4, `timeline heatmap ${i} drew its cells: ${JSON.stringify(c)}`);
  }

  // Keyboard on the focused range: Home goes to step 0, whose matrices differ from the last ones.
  await page.focus(SCRUB);
  await page.keyboard.press('Home');
  await waitForStep(page, 0, { sel: PANEL });
  assert.equal((await scrubber(page)).text, `step 0 (1 of ${st.entries})`);
  const atFirst = await timelinePixels(page);
  assert.equal(atFirst.length, 4);
  assert.ok(atFirst.every((p, i) => p !== atLast[i]), 'every head drew differently at step 0 than at the last snapshot');
  await page.keyboard.press('ArrowRight');
  await waitForStep(page, st.every, { sel: PANEL });
  const atSecond = await timelinePixels(page);
  assert.ok(atSecond.some((p, i) => p !== atFirst[i]), 'moving the scrubber one position redrew the heatmaps');
  // page.fill sets the range to a position too.
  const mid = Math.floor(st.entries / 2);
  await page.fill(SCRUB, String(mid));
  await waitForStep(page, mid * st.every, { sel: PANEL });
  assert.notDeepEqual(await timelinePixels(page), atFirst);

  // The charts: one series per head (uPlot's legend lists x and then the series).
  for (const chart of ['entropy', 'answer-mass']) {
    const sel = `${PANEL} [data-chart=${chart}]`;
    assert.equal(await page.getAttribute(sel, 'data-series'), '4', `${chart}: 4 series`);
    assert.equal(await page.locator(`${sel} .u-legend .u-series`).count(), 5, `${chart}: step + 4 heads in the legend`);
    // Drawn: lines through the snapshots' points span the x range. (Heads with equal values share
    // one line, the last head's colour on top, so not every head's colour need show.)
    const ink = await chartInk(page.locator(sel));
    assert.equal(ink.series.length, 4, `${chart}: ${JSON.stringify(ink)}`);
    assert.ok(Math.max(...ink.series.map((x) => x.columns)) >= 0.3 * ink.width, `${chart}: the lines cover too few columns: ${JSON.stringify(ink)}`);
  }

  // Play-through from the start reaches the last snapshot, then the button reads Play-through again.
  await page.focus(SCRUB);
  await page.keyboard.press('Home');
  await waitForStep(page, 0, { sel: PANEL });
  await page.focus(PLAY);
  await page.keyboard.press('Enter');
  await page.waitForFunction((sel) => document.querySelector(sel).textContent === 'Stop', PLAY);
  assert.equal(await page.getAttribute(PLAY, 'aria-pressed'), 'true');
  await waitForStep(page, last, { sel: PANEL });
  await page.waitForSelector(`${PANEL}[data-playthrough=stopped]`);
  assert.equal(await page.textContent(PLAY), 'Play-through');
  assert.equal((await scrubber(page)).value, st.entries - 1);

  // Reset: the timeline starts over with the snapshot of step 0.
  await page.focus('[data-action=reset]');
  await page.keyboard.press('Enter');
  await waitForStep(page, 0, { sel: PANEL });
  await page.waitForSelector(`${PANEL}[data-entries="1"]`);
  const sr = await scrubber(page);
  assert.equal(sr.max, 0);
  assert.ok(sr.disabled, 'nothing to scrub with one snapshot');
  assert.equal((await readout(page)).step, 0);

  // A new head count: the heatmaps and the charts follow it.
  await page.fill('input[name=nHeads]', '2');
  await page.press('input[name=nHeads]', 'Tab');
  await page.waitForFunction((sel) => document.querySelector(sel).dataset.heads === '2' && document.querySelector(sel).dataset.entries === '1', PANEL);
  await page.click('[data-action=step10]');
  await page.waitForFunction((sel) => document.querySelector(sel).dataset.entries === '2', PANEL);
  assert.equal(await page.locator(`${PANEL} .timeline-heatmaps canvas`).count(), 2);
  for (const chart of ['entropy', 'answer-mass']) {
    assert.equal(await page.getAttribute(`${PANEL} [data-chart=${chart}]`, 'data-series'), '2', `${chart}: 2 series after heads=2`);
  }
  assert.deepEqual(errors, []);
  await context.close();
});

// 8 heads of 64 x 64 on a 64-token sample: 128 KB per snapshot, so the 8 MB cap binds (63 kept);
// 16 heads of 128 x 128: 1 MB per snapshot, 8 kept (the byte budget wins over any minimum count).
// A small batch keeps the steps cheap.
for (const [H, T, B] of [[8, 64, 2], [16, 128, 1]]) test(`the timeline memory stays capped (H ${H}, T ${T}): thinned when full, at most capacity snapshots and 8 MB`, async () => {
  const sample = Array.from({ length: T }, (_, i) => (i * 7) % 64).join(' ');
  const { page, context, errors } = await openReused(browser, `${srv.url}#view=train&panel=timeline&seq-len=${T}&heads=${H}&d-model=32&batch=${B}&sample=${encodeURIComponent(sample)}`);
  await waitReady(page);
  await page.waitForFunction((sel) => document.querySelector(sel).dataset.entries === '1', PANEL);
  const first = await panelState(page);
  assert.equal(first.heads, H);
  // Weights, ids, and where the heads were measured (the first snapshot, then every
  // data-heads-every-th one): entropy, answer mass, previous-token and prefix-matching scores.
  const headBytes = 4 * 4 * H;
  const perEntry = 4 * H * T * T + 4 * T + headBytes;
  assert.equal(first.bytes, perEntry);
  assert.equal(first.measured, 1);
  assert.equal(first.capacity, Math.min(240, Math.floor((8 * 1024 * 1024) / perEntry)));

  // Train past capacity x interval: the worker doubles the interval and thins.
  const st = await waitCaughtUp(page, await playTo(page, 20, { press: () => pressPlay(page), until: (every) => Number(document.querySelector('section.timeline-panel').dataset.every) >= every }));
  assert.ok(st.entries <= st.capacity, `${st.entries} snapshots <= capacity ${st.capacity}`);
  assert.ok(st.bytes <= 8 * 1024 * 1024, `${st.bytes} bytes <= 8 MB`);
  assert.equal(st.bytes, st.entries * perEntry - (st.entries - st.measured) * headBytes, 'the page holds exactly the snapshots the worker keeps');
  const headsEvery = Number(await page.getAttribute(PANEL, 'data-heads-every'));
  assert.ok(headsEvery >= 1);
  assert.ok(st.measured >= Math.floor(st.entries / headsEvery), `at least every ${headsEvery}th kept snapshot measured the heads (${st.measured} of ${st.entries})`);
  assert.ok(st.entries >= st.capacity / 2, `thinned to every other one, not emptied (${st.entries})`);
  assert.equal((await scrubber(page)).max + 1, st.entries);
  assert.match(await page.textContent(`${PANEL} .timeline-policy`), new RegExp(`a snapshot every ${st.every} steps, at most ${st.capacity} kept`));
  // The kept steps are on the doubled grid (the latest one aside).
  await page.focus(SCRUB);
  await page.keyboard.press('Home');
  await waitForStep(page, 0, { sel: PANEL });
  await page.keyboard.press('ArrowRight');
  await waitForStep(page, 1, { sel: PANEL, atLeast: true });
  const second = (await panelState(page)).step;
  assert.equal(second % st.every, 0, `second kept step ${second} is a multiple of ${st.every}`);
  assert.deepEqual(errors, []);
  await context.close();
});
