// The training view's shape contract shows the tensors' shapes for the live settings, and follows
// a change of the settings at once.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openReused, useBrowser, waitReady } from './harness.mjs';

let srv;
let browser;
useBrowser((s, b) => {
  srv = s;
  browser = b;
});

const shown = (page) =>
  page.$$eval('.shape-contract .shape-box', (boxes) =>
    Object.fromEntries(boxes.map((b) => [b.dataset.tensor, { shape: b.dataset.shape, text: b.querySelector('.shape-numbers').textContent, dims: b.querySelector('.shape-dims').textContent }])),
  );

test('the shape contract: (B,T,D) -> (B,T,3D) -> (B,H,T,Dh) -> (B,H,T,T) -> (B,T,D) -> (B,T,V), with the numbers of the settings', async () => {
  const { page, context, errors } = await openReused(browser, `${srv.url}#vocab-size=32&d-model=16&heads=2&seq-len=8&batch=8&panel=shapes`);
  await waitReady(page);
  let s = await shown(page);
  assert.deepEqual(Object.keys(s), ['x', 'qkv', 'heads', 'scores', 'merged', 'logits']);
  assert.deepEqual(Object.fromEntries(Object.entries(s).map(([k, v]) => [k, v.shape])), {
    x: '8,8,16', qkv: '8,8,48', heads: '8,2,8,8', scores: '8,2,8,8', merged: '8,8,16', logits: '8,8,32',
  });
  assert.equal(s.heads.dims, '(B, H, T, Dh)');
  assert.equal(s.heads.text, '= (8, 2, 8, 8)');
  assert.equal(await page.locator('.shape-contract .shape-op').count(), 5, 'an operation between each pair');
  assert.match(await page.textContent('.shape-contract'), /qkv_proj: one fused Linear, D → 3D/);

  // Four heads: Dh halves, the scores get two more heads.
  await page.fill('[name=nHeads]', '4');
  await page.press('[name=nHeads]', 'Enter');
  await page.waitForFunction(() => document.querySelector('.shape-box[data-tensor=heads]').dataset.shape === '8,4,8,4');
  s = await shown(page);
  assert.equal(s.scores.shape, '8,4,8,8');
  assert.match(await page.textContent('.shape-legend'), /H = 4 heads of Dh = 4/);
  assert.deepEqual(errors, []);
  await context.close();
});
