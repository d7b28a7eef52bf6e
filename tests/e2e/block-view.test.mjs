// View 3 end to end: "The transformer block, step by step" opened from a link draws every stage
// with the shapes of the settings, in the order of the norm position; the pre/post switch
// reorders them; rope draws the rotation of one pair, alibi one bias matrix per head; a bad
// value in the link gets the banner. It opens on a varied sample; its default block has a norm
// and an FFN, so every stage has a figure, and its input x is drawn in its token and position
// parts; previous/next buttons walk the stages.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openReused, useBrowser } from './harness.mjs';
import { loadCoreInPage } from './lesson-shown.mjs';

let srv;
let browser;
useBrowser((s, b) => {
  srv = s;
  browser = b;
});

/** The stages' ids in page order, and the (rows, cols) of each grid by name. */
async function shown(page) {
  return page.$eval('.view-block .block-stages', (el) => ({
    order: [...el.querySelectorAll('.block-stage')].map((s) => s.dataset.stage),
    skipped: [...el.querySelectorAll('.block-stage[data-skipped]')].map((s) => s.dataset.stage),
    grids: [...el.querySelectorAll('figure[data-matrix] > svg')].map((svg) => [svg.parentElement.dataset.matrix, Number(svg.dataset.rows), Number(svg.dataset.cols)]),
  }));
}

/** Waits for the stages drawn for normPosition (their container says it). */
const drawn = (page, order) => page.waitForSelector(`.view-block .block-stages[data-order=${order}] .block-stage`);

test('the block view draws every stage with the live shapes; pre/post, rope and alibi', async () => {
  const hash = '#view=block&d-model=16&heads=4&kv-heads=2&seq-len=6&block-norm=rmsnorm&block-ffn=swiglu&ffn-mult=2';
  const { page, errors } = await openReused(browser, `${srv.url}${hash}`);
  assert.equal(await page.locator('[role=tab][data-view=block]').textContent(), 'The transformer block, step by step');
  assert.equal(await page.locator('[role=tab][data-view=block]').getAttribute('aria-selected'), 'true');
  await drawn(page, 'pre');
  let s = await shown(page);
  assert.deepEqual(s.order, ['x', 'norm1', 'attention', 'add1', 'norm2', 'ffn', 'add2']);
  assert.deepEqual(s.skipped, []);
  const T = 6, D = 16, F = 32;
  const shape = Object.fromEntries(s.grids.filter(([n]) => n !== 'weights').map(([n, r, c]) => [n, [r, c]]));
  assert.deepEqual(shape, {
    xTokens: [T, D], xPositions: [T, D], x: [T, D], norm1: [T, D], q: [T, 16], k: [T, 8], attnOut: [T, D], sum1: [T, D], norm2: [T, D],
    ffnGate: [T, F], ffnUp: [T, F], ffnHidden: [T, F], ffnOut: [T, D], sum2: [T, D], finalOut: [T, D],
  });
  assert.deepEqual(s.grids.filter(([n]) => n === 'weights').map(([, r, c]) => [r, c]), Array(4).fill([T, T]));
  // Each stage has its formula, its shape and its sentences.
  for (const id of s.order) {
    const sec = page.locator(`.block-stage[data-stage=${id}]`);
    assert.ok((await sec.locator('.formula code').textContent()).length > 0, `${id}: formula`);
    assert.match(await sec.locator('.shape').textContent(), /\d/, `${id}: shape with numbers`);
    assert.ok((await sec.locator('.stage-text').first().textContent()).length > 60, `${id}: its sentences`);
  }
  assert.match(await page.locator('.block-stage[data-stage=attention] .shape').textContent(), /\(6, 16\).*\(6, 8\)/);
  // GQA: the heads say which K/V head they read.
  assert.match(await page.locator('figure[data-matrix=weights][data-head="3"] figcaption').textContent(), /head 4 · K\/V 2/);

  // Post-norm: the switch reorders the stages.
  await page.check('.block-controls input[type=radio][value=post]');
  await drawn(page, 'post');
  s = await shown(page);
  assert.deepEqual(s.order, ['x', 'attention', 'add1', 'norm1', 'ffn', 'add2', 'norm2']);
  assert.match(page.url(), /norm-position=post/);

  // RoPE: the rotation of one pair, a plot per position for q and k.
  await page.selectOption('.block-controls select[name=block-positions]', 'rope');
  await page.waitForSelector('figure[data-figure=rope] svg');
  assert.equal(await page.locator('figure[data-figure=rope] .rope-pos[data-vector=q]').count(), T);
  assert.equal(await page.locator('figure[data-figure=rope] .rope-pos[data-vector=k]').count(), T);
  const angles = await page.$$eval('figure[data-figure=rope] .rope-pos[data-vector=q]', (gs) => gs.map((g) => Number(g.dataset.angle)));
  assert.deepEqual(angles, [0, 1, 2, 3, 4, 5]); // pair 0: pos / 10000^0
  assert.ok(await page.isVisible('.block-controls [name=ropePair]'));

  // ALiBi: one bias matrix per head, and no rotation figure.
  await page.selectOption('.block-controls select[name=block-positions]', 'alibi');
  await page.waitForSelector('figure[data-figure=alibi]');
  const bias = await page.$$eval('figure[data-figure=alibi] figure[data-matrix=alibi] svg', (svgs) => svgs.map((v) => [Number(v.dataset.rows), Number(v.dataset.cols)]));
  assert.deepEqual(bias, Array(4).fill([T, T]));
  assert.equal(await page.locator('figure[data-figure=rope]').count(), 0);

  // No norm and no FFN: those stages stay in place, marked as skipped.
  await page.selectOption('.block-controls select[name=block-norm]', 'none');
  await page.selectOption('.block-controls select[name=block-ffn]', 'none');
  await page.waitForFunction(() => document.querySelectorAll('.view-block .block-stage[data-skipped]').length === 4);
  s = await shown(page);
  assert.deepEqual(s.skipped, ['norm1', 'ffn', 'add2', 'norm2']);
  assert.deepEqual(errors, []);
});

test('a bad value in a block link gets the banner, and the view still draws', async () => {
  const { page, errors } = await openReused(browser, `${srv.url}#view=block&block-norm=batchnorm&block-ffn=relu&seq-len=5`);
  await page.waitForSelector('.banner:not([hidden])');
  assert.match(await page.locator('.banner').textContent(), /block norm: "batchnorm" is not one of/);
  await drawn(page, 'pre');
  const s = await shown(page);
  assert.deepEqual(s.grids.find(([n]) => n === 'x').slice(1), [5, 32]);
  assert.deepEqual(errors, []);
});

test('the block view opens on a varied sample: random tokens for the repeat task, the task\'s own draw otherwise, typed ids as they are', async () => {
  const ids = (page) => page.$eval('.view-block .block-stages', (el) => el.dataset.ids);
  const { page, errors, context } = await openReused(browser, `${srv.url}#view=block`, { bypassCSP: true });
  await drawn(page, 'pre');
  await loadCoreInPage(page);
  const draw = (task, seed) => page.evaluate(({ task, seed }) => Array.from(window.__core.taskSample(task, 64, 12, seed)).join(' '), { task, seed });
  // The repeat task's own draw is one token twelve times; the block shows random tokens instead.
  assert.equal(new Set((await draw('repeat', 1)).split(' ')).size, 1);
  const shownIds = await ids(page);
  assert.equal(shownIds, await draw('shift', 1));
  assert.ok(new Set(shownIds.split(' ')).size > 6, `varied: ${shownIds}`);
  assert.doesNotMatch(await page.textContent('.block-stage[data-stage=x] .stage-text'), /Every token of this sample is the same id/);
  // Another task: its own draw; typed ids: as they are.
  const copy = await openReused(browser, `${srv.url}#view=block&task=copy&sample-seed=4`, { bypassCSP: true });
  await drawn(copy.page, 'pre');
  assert.equal(await ids(copy.page), await draw('copy', 4));
  await copy.context.close();
  const typed = await openReused(browser, `${srv.url}#view=block&sample=5%205%205`);
  await drawn(typed.page, 'pre');
  assert.equal(await ids(typed.page), '5 5 5');
  assert.match(await typed.page.textContent('.block-stage[data-stage=x] .stage-text'), /Every token of this sample is the same id/);
  await typed.context.close();
  assert.deepEqual(errors, []);
  await context.close();
});

test('the default block has a norm and an FFN: every stage has a figure, and x shows its token and position parts; the training view\'s model is left as it was', async () => {
  const { page, errors } = await openReused(browser, `${srv.url}#view=block`);
  await drawn(page, 'pre');
  const s = await shown(page);
  assert.deepEqual(s.order, ['x', 'norm1', 'attention', 'add1', 'norm2', 'ffn', 'add2']);
  assert.deepEqual(s.skipped, []);
  for (const id of s.order) assert.ok(await page.locator(`.block-stage[data-stage=${id}] figure[data-matrix] svg`).count() > 0, `${id}: a figure`);
  assert.match(await page.textContent('.block-stage[data-stage=norm1] h3'), /LayerNorm 1/);
  assert.match(await page.textContent('.block-stage[data-stage=ffn] h3'), /FFN \(gelu\)/);
  assert.match(page.url(), /[#&]block-norm=layernorm&block-ffn=gelu(&|$)/);
  assert.match(page.url(), /[#&]norm=none(&|$)/);
  assert.match(page.url(), /[#&]ffn=none(&|$)/);
  // Input x: the token part, the position part, their sum; the sentence says why they are apart.
  assert.deepEqual(s.grids.filter(([n]) => n.startsWith('x')).map(([n]) => n), ['xTokens', 'xPositions', 'x']);
  assert.match(await page.textContent('.block-stage[data-stage=x] .stage-text'), /times larger here, so in x itself their stripes hide the tokens/);
  // Under RoPE nothing is added to x: one grid.
  await page.selectOption('.block-controls select[name=block-positions]', 'rope');
  await page.waitForFunction(() => !document.querySelector('.block-stage[data-stage=x] figure[data-matrix=xTokens]') && document.querySelector('figure[data-figure=rope]'));
  assert.deepEqual((await shown(page)).grids.filter(([n]) => n.startsWith('x')).map(([n]) => n), ['x']);
  assert.deepEqual(errors, []);
});

test('previous and next walk the stages, from the keyboard too: the current stage is marked, scrolled to and its heading focused', async () => {
  const { page, errors } = await openReused(browser, `${srv.url}#view=block`, { height: 700 });
  await drawn(page, 'pre');
  const prev = page.locator('.block-nav [data-action=block-prev]');
  const next = page.locator('.block-nav [data-action=block-next]');
  assert.equal(await prev.textContent(), '← Previous stage');
  assert.equal(await next.textContent(), 'Next stage →');
  assert.equal(await page.getAttribute('.block-nav', 'aria-label'), 'Stages of the block');
  const label = () => page.textContent('.block-nav .block-stage-label');
  const current = () => page.$$eval('.block-stage[aria-current=step]', (ss) => ss.map((x) => x.dataset.stage));
  assert.equal(await label(), 'Stage 1 of 7: Input x');
  assert.deepEqual(await current(), ['x']);
  assert.equal(await prev.isDisabled(), true);
  await next.click();
  assert.equal(await label(), 'Stage 2 of 7: LayerNorm 1');
  assert.deepEqual(await current(), ['norm1']);
  assert.equal(await page.evaluate(() => document.activeElement.closest('.block-stage')?.dataset.stage), 'norm1');
  // The keyboard: Tab from the Previous button reaches Next; Enter presses it.
  await prev.focus();
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.dataset.action), 'block-next');
  await page.keyboard.press('Enter');
  assert.equal(await label(), 'Stage 3 of 7: Attention');
  await page.waitForFunction(() => {
    const r = document.querySelector('.block-stage[data-stage=attention]').getBoundingClientRect();
    return r.top >= 0 && r.top < innerHeight / 2;
  });
  for (let k = 0; k < 6; ++k) if (!(await next.isDisabled())) await next.click();
  assert.equal(await label(), 'Stage 7 of 7: Add (residual)');
  assert.equal(await next.isDisabled(), true);
  await prev.click();
  assert.deepEqual(await current(), ['ffn']);
  // A redraw (another setting) keeps the place.
  await page.selectOption('.block-controls select[name=block-ffn]', 'relu');
  await page.waitForFunction(() => /FFN \(relu\)/.test(document.querySelector('.block-stage[data-stage=ffn] h3').textContent));
  assert.deepEqual(await current(), ['ffn']);
  assert.deepEqual(errors, []);
});

test('on a phone (390 px) the default block fits the width, and a stage reached with Next lands below the sticky bar', async () => {
  const { page, errors } = await openReused(browser, `${srv.url}#view=block`, { width: 390, height: 844 });
  await drawn(page, 'pre');
  await page.waitForSelector('.block-tiled[data-max-difference]');
  assert.ok((await page.evaluate(() => document.documentElement.scrollWidth - innerWidth)) <= 0, 'no sideways scroll');
  await page.click('.block-nav [data-action=block-next]');
  await page.click('.block-nav [data-action=block-next]');
  await page.waitForFunction(() => {
    const bar = document.querySelector('.block-nav').getBoundingClientRect();
    const h3 = document.querySelector('.block-stage[data-stage=attention] h3').getBoundingClientRect();
    return h3.top >= bar.bottom && h3.top < innerHeight / 2;
  });
  assert.deepEqual(errors, []);
});
