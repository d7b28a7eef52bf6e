// The loss chart's extra lines, checked against the numbers of the run: chance is ln V of the
// settings, and the epoch means are the means of every step's loss in each block of 120 steps (the
// exported JSON has every step's loss), as the curriculum's demo prints them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chartInk, downloadBytes, openReused, readout, useBrowser, waitForStep, waitReady } from './harness.mjs';

let srv;
let browser;
useBrowser((s, b) => {
  srv = s;
  browser = b;
});

const chart = (page) => page.$eval('.loss-panel .chart', (el) => ({ chance: el.dataset.chance, means: el.dataset.epochMeans, series: el.dataset.series }));

test('chance is ln V; the epoch means are the means of each 120 steps of the run; smoothing adds a line', async () => {
  const { page, context, errors } = await openReused(browser, `${srv.url}#vocab-size=32&seed=5&panel=export`);
  await waitReady(page);
  let c = await chart(page);
  assert.equal(Number(c.chance), Math.log(32));
  assert.equal(c.series, 'loss|chance (ln V)');
  assert.equal(c.means, '');
  // Before Play: the step-0 loss (a dot) and the chance line are drawn, in nats, named on the axis.
  const r0 = await readout(page);
  assert.equal(r0.step, 0);
  await page.waitForFunction(() => document.querySelector('.loss-panel .chart').dataset.initLoss !== '');
  assert.equal(Number(await page.$eval('.loss-panel .chart', (el) => el.dataset.initLoss)), r0.loss, 'the dot is the loss at init of the readout');
  assert.equal(await page.$eval('.loss-panel .chart', (el) => el.dataset.unit), 'nats');
  assert.equal(await page.$eval('.loss-panel .chart', (el) => el.dataset.yLabel), 'loss (nats, log scale)', 'the axis names its unit');
  const ink0 = await chartInk(page.locator('.loss-panel .chart'));
  for (const label of ['loss', 'chance (ln V)']) assert.ok(ink0.series.find((x) => x.label === label)?.columns > 0, `${label} drawn at step 0: ${JSON.stringify(ink0.series)}`);
  // The legend gives chance's value without a hover (a level line is the same at every step).
  const legendChance = await page.$$eval('.loss-panel .u-legend .u-series', (rows) => rows.find((r) => r.querySelector('.u-label')?.textContent === 'chance (ln V)')?.querySelector('.u-value')?.textContent);
  assert.ok(Math.abs(Number(legendChance) - Math.log(32)) < 1e-3, `the legend's chance reads ${legendChance}`);

  await page.check('[name=epochMeans]');
  await page.check('[name=smooth]');
  await page.waitForFunction(() => /epochs=1/.test(location.hash) && /smooth=1/.test(location.hash));
  // 300 steps: two whole epochs and a part of the third.
  for (let i = 0; i < 30; ++i) {
    await page.focus('[data-action=step10]');
    await page.keyboard.press('Enter');
    await waitForStep(page, 10 * (i + 1));
  }
  await page.waitForFunction(() => document.querySelector('.loss-panel .chart').dataset.epochMeans.split(',').length === 3);
  c = await chart(page);
  assert.equal(c.series, 'loss|smoothed|epoch mean (120 steps)|chance (ln V)');

  // Every step's loss, from the exported run.
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('[data-export=json]')]);
  const run = JSON.parse((await downloadBytes(download)).toString('utf8'));
  assert.equal(run.historyStride, 1);
  assert.equal(run.lossHistory.length, 300);
  const mean = (a) => a.reduce((x, y) => x + y, 0) / a.length;
  const want = [mean(run.lossHistory.slice(0, 120)), mean(run.lossHistory.slice(120, 240)), mean(run.lossHistory.slice(240))];
  const got = c.means.split(',').map(Number);
  for (let e = 0; e < 3; ++e) assert.ok(Math.abs(got[e] - want[e]) <= 1e-6 * want[e], `epoch ${e + 1}: shown ${got[e]}, from the run ${want[e]}`);
  assert.ok(got[0] > got[1] && got[1] > got[2], `the means fall: ${got}`);
  assert.ok(got[0] < Math.log(32), 'the first epoch is already below chance');

  // A new vocabulary moves the chance line.
  await page.fill('[name=vocabSize]', '16');
  await page.press('[name=vocabSize]', 'Enter');
  await page.waitForFunction(() => Number(document.querySelector('.loss-panel .chart').dataset.chance) === Math.log(16));
  assert.deepEqual(errors, []);
  await context.close();
});
