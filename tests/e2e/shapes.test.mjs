// The training view's shape contract shows the tensors' shapes for the live settings, and follows
// a change of the settings at once; the FFN's width and the parameter count are the core's
// (modelReport).
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
  await page.waitForSelector('.shape-contract .shape-box');
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

test("the FFN's hidden width and the parameter count come from the core, and follow the settings", async () => {
  const { page, context, errors } = await openReused(browser, `${srv.url}#vocab-size=32&d-model=16&heads=2&seq-len=8&batch=8&residual=1&ffn=gelu&ffn-mult=2&panel=shapes`);
  await waitReady(page);
  await page.waitForSelector('.shape-box[data-tensor=hidden]');
  assert.equal((await shown(page)).hidden.shape, '8,8,32');
  // token_emb (32,16); qkv (48,16)+(48); out (16,16)+(16); up (32,16)+(32); down (16,32)+(16);
  // lm_head (32,16)+(32): 512 + 816 + 272 + 544 + 528 + 544 in 11 tensors (attn train prints the same).
  assert.equal(await page.getAttribute('.shape-legend', 'data-params'), '3216');
  assert.match(await page.textContent('.shape-legend'), /FFN width 2D = 32,.*In all the model has 3,?216 parameters \(11 tensors/);

  // Three times as wide: the hidden box and the count follow (up and down grow by 16·16 + 16 and 16·16).
  await page.fill('[name=ffnMult]', '3');
  await page.press('[name=ffnMult]', 'Enter');
  await page.waitForFunction(() => document.querySelector('.shape-box[data-tensor=hidden]').dataset.shape === '8,8,48');
  await page.waitForFunction(() => document.querySelector('.shape-legend').dataset.params === String(3216 + 16 * 16 + 16 + 16 * 16));
  assert.match(await page.textContent('.shape-legend'), /FFN width 3D = 48/);
  assert.deepEqual(errors, []);
  await context.close();
});
