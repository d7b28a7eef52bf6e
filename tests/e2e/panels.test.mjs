// The training view's panel picker: the loss and the heatmaps first, then one panel at a time
// chosen by tabs whose choice is in the hash; `panel=all` stacks them; a bad value is corrected.
// Also the block on the page: GQA captions on the heatmaps and the shapes of a whole block.
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import ts from 'typescript';
import { openReused, ROOT, useBrowser, waitForStep, waitReady } from './harness.mjs';

/** The panels of the registry (web/src/panels/registry.ts), in its order: name, tab label and hide
 * group, read from the source by TypeScript's parser. */
function registry() {
  const file = path.join(ROOT, 'web/src/panels/registry.ts');
  const source = ts.createSourceFile(file, fs.readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true);
  let list = null;
  const visit = (node) => {
    if (ts.isVariableDeclaration(node) && node.name.getText(source) === 'PANELS') {
      let init = node.initializer;
      while (init && !ts.isArrayLiteralExpression(init)) init = init.expression;
      list = init.elements.map((o) => Object.fromEntries(o.properties.map((p) => [p.name.getText(source), p.initializer.text])));
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return list.map((p) => ({ name: p.name, label: p.label, group: p.group ?? p.name }));
}

/** The panel names of today, in their order: public names (hash `panel=`, attribute `panel`) that
 * must stay, and stay in this order; a new panel may come after them. */
const NAMES_OF_TODAY = ['predictions', 'shapes', 'ablation', 'timeline', 'circuits', 'backward', 'selftest', 'longer', 'generate', 'inspect', 'export'];

let srv;
let browser;
useBrowser((s, b) => {
  srv = s;
  browser = b;
});

/** The panels shown (not hidden) under the picker, by their class. */
const shownPanels = (page) =>
  page.$$eval('.train-plots > section.panel', (els) =>
    els.filter((e) => !e.hidden && !['loss-panel', 'heat-panel', 'check-yourself'].some((c) => e.classList.contains(c))).map((e) => e.className.replace('panel ', '')),
  );

test('one panel at a time under the loss and the heatmaps; the choice is in the link; all stacks them', async () => {
  const { page, context, errors } = await openReused(browser, `${srv.url}#view=train`);
  await waitReady(page);
  // The loss and the heatmaps come first, then the picker.
  const order = await page.$$eval('.train-plots > *', (els) => els.slice(0, 3).map((e) => e.className));
  assert.deepEqual(order, ['panel loss-panel', 'panel heat-panel', 'picker']);
  const tabs = await page.$$eval('.panel-picker [role=tab]', (ts) => ts.map((t) => [t.dataset.panel, t.textContent, t.getAttribute('aria-selected')]));
  // The registry's panels, in its order, each with its label, then "All panels"; today's names all
  // there, in today's order.
  const panels = registry();
  assert.deepEqual(tabs.map((t) => [t[0], t[1]]), [...panels.map((p) => [p.name, p.label]), ['all', 'All panels']]);
  assert.deepEqual(panels.map((p) => p.name).slice(0, NAMES_OF_TODAY.length), NAMES_OF_TODAY);
  assert.deepEqual(tabs.filter((t) => t[2] === 'true').map((t) => t[0]), ['predictions']);
  assert.deepEqual(await shownPanels(page), ['predictions-panel']);

  // A click shows the timeline alone and writes it to the hash.
  await page.click('.panel-picker [data-panel=timeline]');
  await page.waitForFunction(() => /[#&]panel=timeline(&|$)/.test(location.hash));
  assert.deepEqual(await shownPanels(page), ['timeline-panel']);
  // A panel shown after training was paused catches up with the model: train, then show Ablation.
  await page.click('[data-action=step10]');
  await waitForStep(page, 10);
  // The arrow keys move between the tabs (timeline -> circuits -> ... ; left goes back).
  await page.focus('.panel-picker [data-panel=timeline]');
  await page.keyboard.press('ArrowLeft');
  await page.waitForFunction(() => /[#&]panel=ablation(&|$)/.test(location.hash));
  assert.equal(await page.evaluate(() => document.activeElement.dataset.panel), 'ablation');
  assert.deepEqual(await shownPanels(page), ['ablation-panel']);
  await waitForStep(page, 10, { sel: '.ablation-panel' });

  // The link opens the same panel.
  const url = await page.evaluate(() => location.href);
  const again = await openReused(browser, url);
  await waitReady(again.page);
  assert.deepEqual(await shownPanels(again.page), ['ablation-panel']);
  await again.context.close();

  // The panels the one-layer default cannot feed are marked; Circuits says what to set, and its
  // button sets it.
  assert.deepEqual(await page.$$eval('.panel-picker [role=tab].needs', (ts) => ts.map((t) => t.dataset.panel)), ['circuits', 'generate', 'speculative', 'fill']);
  await page.click('.panel-picker [data-panel=circuits]');
  await page.waitForSelector('.needs-note:not([hidden])');
  assert.match(await page.textContent('.needs-note'), /needs at least 2 layers/);
  await page.click('.needs-note .needs-fix');
  await page.waitForFunction(() => /[#&]layers=2(&|$)/.test(location.hash) && document.querySelector('.needs-note').hidden);
  assert.equal(await page.$eval('.panel-picker [data-panel=circuits]', (t) => t.classList.contains('needs')), false);

  // All: every panel, one after another.
  await page.click('.panel-picker [data-panel=all]');
  await page.waitForFunction(() => /[#&]panel=all(&|$)/.test(location.hash));
  assert.deepEqual(await shownPanels(page), panels.map((p) => `${p.group}-panel`));
  assert.deepEqual(panels.slice(0, NAMES_OF_TODAY.length).map((p) => p.group), [
    'predictions', 'shapes', 'ablation', 'timeline', 'composition', 'backward', 'selftest', 'longer', 'generate', 'inspect', 'export',
  ]);
  assert.deepEqual(errors, []);
  await context.close();
});

test('a bad panel in the link is corrected with the banner; the page works with the default panel', async () => {
  const { page, context, errors } = await openReused(browser, `${srv.url}#view=train&panel=%3Cb%3Eevil`);
  await waitReady(page);
  assert.match(await page.textContent('.banner'), /panel: "<b>evil" is not one of predictions, shapes, .*; using predictions/);
  assert.equal(await page.$('.banner b'), null, 'shown as text, never as markup');
  assert.deepEqual(await shownPanels(page), ['predictions-panel']);
  assert.deepEqual(errors, []);
  await context.close();
});

test('GQA: each heatmap says which K/V head it reads; the shapes panel draws the whole block', async () => {
  const hash = 'view=train&panel=shapes&d-model=16&heads=4&kv-heads=2&seq-len=8&batch=8&vocab-size=32&layers=2&residual=1&norm=rmsnorm&ffn=swiglu&ffn-mult=2&positions=rope';
  const { page, context, errors } = await openReused(browser, `${srv.url}#${hash}`);
  await waitReady(page);
  await page.waitForFunction(() => document.querySelector('.heatmaps').dataset.layers === '2');
  const groups = await page.$$eval('.heatmaps figure.head:not(.avg) .kv-group', (els) => els.map((e) => e.textContent));
  assert.deepEqual(groups, [
    'K/V 1, shared by heads 1–2', 'K/V 1, shared by heads 1–2', 'K/V 2, shared by heads 3–4', 'K/V 2, shared by heads 3–4',
    'K/V 1, shared by heads 1–2', 'K/V 1, shared by heads 1–2', 'K/V 2, shared by heads 3–4', 'K/V 2, shared by heads 3–4',
  ]);
  assert.match(await page.textContent('.gqa-note'), /4 query heads read 2 sets of keys and values/);
  const boxes = await page.$$eval('.shape-contract .shape-box', (bs) => bs.map((b) => [b.dataset.tensor, b.dataset.shape]));
  assert.deepEqual(boxes, [
    ['x', '8,8,16'], ['attn_in', '8,8,16'], ['qkv', '8,8,32'], ['heads', '8,4,8,4'], ['kv', '8,2,8,4'], ['scores', '8,4,8,8'],
    ['merged', '8,8,16'], ['attn_sum', '8,8,16'], ['hidden', '8,8,32'], ['ffn_sum', '8,8,16'], ['logits', '8,8,32'],
  ]);
  const text = await page.textContent('.shape-contract');
  assert.match(text, /RoPE rotates each pair/);
  assert.match(text, /final_norm: RMSNorm, then lm_head/);
  assert.match(await page.textContent('.shape-legend'), /G = 2 K\/V heads, FFN width 2D = 32/);
  // Post-norm from the controls: the sums are normed, no final norm.
  await page.selectOption('[name=normPosition]', 'post');
  await page.waitForFunction(() => document.querySelector('.shape-box[data-tensor=ffn_normed]') !== null);
  assert.doesNotMatch(await page.textContent('.shape-contract'), /final_norm/);
  // Without grouping the captions say nothing more.
  await page.fill('[name=kvHeads]', '0');
  await page.press('[name=kvHeads]', 'Enter');
  await page.waitForFunction(() => document.querySelectorAll('.heatmaps .kv-group').length === 0 && document.querySelector('.gqa-note').hidden);
  assert.deepEqual(errors, []);
  await context.close();
});
