// The Generate panel in the page. A small text model trained 100 steps generates 40 greedy
// characters; the text, a character's alternatives before and after the strategy and its attention
// rows are checked against a second path: the core loaded in the page's main thread, trained with
// the same config for the same steps (the core is deterministic), decoded with its own Decoder and
// Sampler. Then the KV cache's speed-up, the strip of samples while playing, a bad prompt, and the
// sentence on a task that is not text. Waits have timeouts as guards only; no duration is asserted.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { configWith } from './contract.mjs';
import { audit, openReused, pauseRun, serveDistWith, useBrowser, waitForStep, waitReady } from './harness.mjs';

const HASH = 'view=train&panel=generate&task=text&d-model=32&heads=2&seq-len=16&batch=8&lr=0.01&seed=3&layers=2&residual=1';
/** The page's config for HASH: every config key, the page's defaults for the ones HASH leaves out. */
const CONFIG = configWith({ dModel: 32, nHeads: 2, seqLen: 16, batchSize: 8, lr: 0.01, seed: 3, task: 'text', nLayers: 2, residual: true });
const STEPS = 100;
const PROMPT = 'The ';
const CHARS = 40;
/** The selected character. */
const AT = 5;

let srv;
let browser;
useBrowser((s, b) => {
  srv = s;
  browser = b;
});

/** The second path: a Trainer of CONFIG trained STEPS steps, CHARS greedy characters from PROMPT
 * with a Decoder and a Sampler(1), and the distributions and attention of character AT. */
function reference(page) {
  return page.evaluate(
    async ({ config, steps, prompt, chars, at }) => {
      const core = await (await import(new URL('wasm/attention-core-relaxed.js', document.baseURI).href)).default();
      const t = new core.Trainer(config);
      const d = new core.Decoder(t, { useCache: true });
      const sampler = new core.Sampler(1);
      try {
        t.step(steps);
        const vocab = t.corpus().vocab;
        let logits;
        for (const id of core.encodeText(vocab, prompt)) logits = d.push(id);
        const out = [];
        let detail = null;
        for (let i = 0; i < chars; ++i) {
          const after = core.nextTokenDistribution(logits, { temperature: 0 });
          out.push(sampler.draw(after));
          if (i === at) {
            const a = d.attention();
            detail = { before: Array.from(core.nextTokenDistribution(logits, {})), after: Array.from(after), rows: a.rows, cols: a.cols, row0: Array.from(a.data.subarray(0, a.cols)) };
          }
          if (i + 1 < chars) logits = d.push(out[i]);
        }
        return { text: core.decodeText(vocab, Int32Array.from(out)), detail };
      } finally {
        sampler.delete();
        d.delete();
        t.delete();
      }
    },
    { config: CONFIG, steps: STEPS, prompt: PROMPT, chars: CHARS, at: AT },
  );
}

test('Generate: greedy text, alternatives and attention are the core\'s; the cache speed-up; samples while playing; a bad prompt', async () => {
  const { page, context, errors } = await openReused(browser, `${srv.url}#${HASH}`, { bypassCSP: true });
  await waitReady(page);
  const panel = '.generate-panel';
  await page.waitForSelector(`${panel} .gen-body:not([hidden])`);
  // The strip's first sample, at step 0.
  await page.waitForSelector(`${panel} .gen-strip li[data-step="0"]`);
  for (let i = 0; i < STEPS / 10; ++i) {
    await page.click('[data-action=step10]');
    await waitForStep(page, (i + 1) * 10);
  }
  await page.fill('[name=gen-chars]', String(CHARS));
  await page.selectOption('[name=gen-strategy]', 'greedy');
  await page.fill('[name=gen-seed]', '1');
  await page.click('[data-action=generate]');
  await page.waitForSelector(`${panel}[data-state=done]`);
  const text = await page.$$eval(`${panel} .gen-char`, (els) => els.map((e) => e.textContent).join(''));
  const ref = await reference(page);
  assert.equal(text, ref.text);
  assert.equal([...text].length, CHARS);

  // A character: its alternatives before and after the strategy, and one attention row per head.
  await page.click(`${panel} .gen-char[data-index="${AT}"]`);
  await page.waitForSelector(`${panel} .gen-detail:not([hidden])`);
  const rows = await page.$$eval(`${panel} .gen-alternatives tbody tr`, (trs) => trs.map((tr) => [Number(tr.dataset.token), Number(tr.dataset.before), Number(tr.dataset.after)]));
  const order = ref.detail.before.map((p, i) => [p, i]).sort((a, b) => b[0] - a[0] || a[1] - b[1]).slice(0, 5).map((x) => x[1]);
  assert.deepEqual(rows.slice(0, 5), order.map((i) => [i, ref.detail.before[i], ref.detail.after[i]]));
  const attn = await page.$$eval(`${panel} .gen-attn-row`, (rs) => rs.map((r) => [r.querySelector('.gen-attn-label').textContent, Array.from(r.querySelectorAll('.key'), (k) => Number(k.dataset.weight))]));
  assert.equal(attn.length, ref.detail.rows);
  assert.equal(attn.length, 4, 'L*H = 2 layers x 2 heads');
  assert.deepEqual(attn.map((a) => a[0]), ['layer 1 · head 1', 'layer 1 · head 2', 'layer 2 · head 1', 'layer 2 · head 2']);
  assert.deepEqual(attn[0][1], ref.detail.row0);
  assert.equal(await page.$$eval(`${panel} .gen-attn-row:first-child .key.strong`, (k) => k.length), 3);
  // The arrow keys move to the next character.
  await page.keyboard.press('ArrowRight');
  await page.waitForFunction((i) => document.querySelector('.generate-panel').dataset.selected === String(i), AT + 1);

  // The KV cache's speed-up: two tokens/s and their ratio.
  await page.waitForSelector(`${panel} .gen-speed[data-ratio]`);
  const speed = await page.$eval(`${panel} .gen-speed`, (el) => ({ ...el.dataset, text: el.textContent }));
  for (const k of ['cached', 'uncached', 'ratio']) assert.ok(Number(speed[k]) > 0, `${k}: ${speed[k]}`);
  assert.match(speed.text, /With the KV cache: \d+ tokens\/s; without: \d+ tokens\/s, so [\d.]+× faster/);
  assert.deepEqual(await audit(page), [], 'axe: the Generate panel with a character open');

  // A character outside the corpus: one sentence from the core, the text stays.
  await page.fill('[name=gen-prompt]', 'The ☃');
  await page.click('[data-action=generate]');
  await page.waitForSelector(`${panel} .problem:not([hidden])`);
  assert.match(await page.textContent(`${panel} .problem`), /^Nothing was generated: .*☃/);
  assert.equal(await page.$$eval(`${panel} .gen-char`, (els) => els.map((e) => e.textContent).join('')), text);
  // An empty prompt and one over the limit: one sentence each, the text stays.
  for (const [prompt, pattern] of [['', /^The prompt is empty/], ['a'.repeat(1001), /^The prompt has 1001 characters; at most 1000 are taken\.$/]]) {
    await page.fill('[name=gen-prompt]', prompt);
    await page.click('[data-action=generate]');
    await page.waitForFunction((re) => new RegExp(re).test(document.querySelector('.generate-panel .problem').textContent), pattern.source);
    assert.equal(await page.$$eval(`${panel} .gen-char`, (els) => els.map((e) => e.textContent).join('')), text);
  }

  // While training plays, the strip takes samples (steps 200, 500, ...); newest last.
  await page.click('[data-action=play]');
  await page.waitForFunction(() => Number(document.querySelector('.generate-panel').dataset.samples) >= 3);
  await pauseRun(page);
  const strip = await page.$$eval(`${panel} .gen-strip li`, (lis) => lis.map((li) => [Number(li.dataset.step), li.textContent]));
  assert.ok(strip.length >= 3 && strip.length <= 8, JSON.stringify(strip));
  assert.ok(strip.every(([s, t], i) => t.startsWith(`step ${s}: `) && (i === 0 || s > strip[i - 1][0])), JSON.stringify(strip));
  assert.deepEqual(errors, []);
  await context.close();
});

test('Generate on a task that is not text: one sentence', async () => {
  const { page, context, errors } = await openReused(browser, `${srv.url}#view=train&panel=generate`);
  await waitReady(page);
  await page.waitForSelector('.generate-panel .gen-needs-text:not([hidden])');
  assert.match(await page.textContent('.generate-panel .gen-needs-text'), /needs the text task/);
  assert.equal(await page.isVisible('.generate-panel .gen-body'), false);
  assert.deepEqual(errors, []);
  await context.close();
});

test('Generate in the element: a prompt character the text lacks and an over-long prompt get one sentence each', async () => {
  const page = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>generate</title><link rel="icon" href="data:,">
<script type="module" src="attention-playground.js"></script></head><body>
<attention-playground id="el" task="text" panel="generate" seq-len="8" d-model="16" heads="2"></attention-playground>
</body></html>`;
  const site = await serveDistWith({ 'generate-element.html': page });
  const { page: p, context, errors } = await openReused(browser, `${site.url}generate-element.html`);
  try {
    await p.waitForFunction(() => document.getElementById('el').ready);
    const root = (sel) => `#el >> ${sel}`; // Playwright's CSS pierces the shadow root
    await p.waitForSelector(root('.generate-panel .gen-body:not([hidden])'));
    for (const [prompt, pattern] of [['The ☃', /^Nothing was generated: .*☃/], ['a'.repeat(1001), /^The prompt has 1001 characters; at most 1000 are taken\.$/]]) {
      await p.fill(root('[name=gen-prompt]'), prompt);
      await p.click(root('[data-action=generate]'));
      await p.waitForSelector(root('.generate-panel .problem:not([hidden])'));
      await p.waitForFunction((re) => new RegExp(re).test(document.getElementById('el').shadowRoot.querySelector('.generate-panel .problem').textContent), pattern.source);
      assert.equal(await p.$$eval(root('.gen-char'), (els) => els.length), 0, 'nothing was generated');
    }
    // The element still works.
    await p.evaluate(() => document.getElementById('el').step(5));
    await waitForStep(p, 5, { root: '#el' });
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
    await site.close();
  }
});
