// The text task in the page: the preset "Train a GPT on text" trains, the loss chart draws the validation
// curve and the unigram line, and the bits/char readout is the core's (a second Trainer in the
// page's main thread, same config and steps, gives the same number); a pasted text trains (its
// distinct characters are the vocabulary); each bad text or file gets one sentence and leaves the
// run untouched; the element trains on its slot's text. Runs stay a few hundred steps at most.
// Waits have timeouts as guards only; no duration is asserted.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { audit, chartInk, openReused, playTo, readout, serveDistWith, useBrowser, waitForStep, waitReady } from './harness.mjs';

/** The preset's config as the core gets it (presets.ts; the unit test pins its hash). */
const CONFIG = { dModel: 64, nHeads: 4, seqLen: 64, batchSize: 16, lr: 0.003, seed: 0, task: 'text', nLayers: 2, residual: true, positions: 'rope', norm: 'layernorm', normPosition: 'pre', ffn: 'gelu' };

let srv;
let browser;
useBrowser((s, b) => {
  srv = s;
  browser = b;
});

/** One sentence: ends with a full stop, no second sentence after it. */
const oneSentence = (t) => /\.$/.test(t) && !/[.!?] [A-Z]/.test(t);

test('the preset trains on the default text: validation and unigram lines, and the core\'s bits/char', async () => {
  const { page, context, errors } = await openReused(browser, `${srv.url}#view=train`, { bypassCSP: true });
  await waitReady(page);
  await page.click('a[data-preset=text]');
  await page.waitForFunction(() => location.hash.includes('task=text'));
  await waitForStep(page, 0);
  await page.waitForSelector('.text-readout:not([hidden])');
  // The vocab control shows the text's 35 characters, off, with why.
  const vocab = await page.$eval('input[name=vocabSize]', (el) => ({ value: el.value, disabled: el.disabled, note: el.closest('.field').querySelector('.vocab-note').textContent }));
  assert.deepEqual([vocab.value, vocab.disabled], ['35', true]);
  assert.match(vocab.note, /35 distinct characters/);
  // 50 steps: the validation loss is well below the unigram line by then (native CLI, seeds 0, 1
  // and 2: 2.94-2.95 bits/char at step 50 against 4.31), and the main thread trains them again.
  const step = await playTo(page, 50);
  await waitForStep(page, step, { sel: '.text-readout' });
  const shown = await page.$eval('.text-readout', (el) => ({ text: el.textContent, bits: Number(el.dataset.valBitsPerChar), unigram: Number(el.dataset.unigramBits) }));
  const ref = await page.evaluate(
    async ({ config, step }) => {
      const core = await (await import(new URL('wasm/attention-core-relaxed.js', document.baseURI).href)).default();
      const t = new core.Trainer(config);
      try {
        while (t.stepsDone() < step) t.step(Math.min(1000, step - t.stepsDone()));
        return t.evaluateText(4);
      } finally {
        t.delete();
      }
    },
    { config: CONFIG, step },
  );
  assert.equal(shown.bits, ref.valBitsPerChar, 'the readout is the core\'s evaluateText');
  assert.equal(shown.unigram, ref.unigramBits);
  assert.ok(shown.bits < shown.unigram, `below the unigram line at step ${step}: ${shown.text}`);
  assert.match(shown.text, new RegExp(`^validation: ${ref.valBitsPerChar.toFixed(2)} bits/char \\(unigram ${ref.unigramBits.toFixed(2)}\\)`));
  // Both extra lines are drawn, in bits per character like the readout.
  await page.waitForFunction(() => document.querySelector('.loss-panel .chart').dataset.validation.split(',').length >= 2);
  const unit = await page.$eval('.loss-panel .chart', (el) => ({ unit: el.dataset.unit, unigram: Number(el.dataset.unigram), axis: el.dataset.yLabel }));
  assert.equal(unit.unit, 'bits/char');
  assert.ok(Math.abs(unit.unigram - ref.unigramBits) < 1e-5, `the dashed line is the readout's unigram ${ref.unigramBits} bits: ${unit.unigram}`);
  assert.equal(unit.axis, 'loss (bits/char, log scale)');
  const ink = await chartInk(page.locator('.loss-panel .chart'));
  for (const label of ['validation', 'unigram entropy']) {
    const s = ink.series.find((x) => x.label === label);
    assert.ok(s && s.columns > 0, `${label} drawn: ${JSON.stringify(ink.series)}`);
  }
  assert.deepEqual(await audit(page), [], 'axe: the text view, its corpus box and readout');
  assert.deepEqual(errors, []);
  await context.close();
});

test('a pasted text trains (its characters are the vocabulary); each bad text or file gets one sentence and the run is untouched', async () => {
  const { page, context, errors } = await openReused(browser, `${srv.url}#view=train&task=text&seq-len=8`);
  await waitReady(page);
  await page.waitForSelector('fieldset.corpus:not([hidden])');
  const mine = 'a cab, a bead.\n'.repeat(20); // 9 distinct: a space c b , e d . newline
  await page.fill('textarea[name=corpus]', mine);
  await page.click('[data-action=use-text]');
  await page.waitForFunction(() => document.querySelector('fieldset.corpus').dataset.state === 'used');
  assert.equal(await page.$eval('fieldset.corpus', (el) => el.dataset.vocabSize), String(new Set(mine).size));
  assert.equal(await page.$eval('input[name=vocabSize]', (el) => el.value), String(new Set(mine).size));
  await page.click('[data-action=step10]');
  await waitForStep(page, 10);
  const before = await readout(page);
  assert.ok(Number.isFinite(before.loss));

  const reject = async (act, pattern) => {
    await page.$eval('fieldset.corpus', (el) => (el.dataset.state = ''));
    await act();
    await page.waitForFunction(() => document.querySelector('fieldset.corpus').dataset.state === 'rejected');
    const msg = await page.textContent('.corpus-msg');
    assert.match(msg, pattern);
    assert.ok(oneSentence(msg), `one sentence: "${msg}"`);
    assert.deepEqual(await readout(page), before, 'the run is untouched');
    assert.equal(await page.$eval('fieldset.corpus', (el) => el.dataset.vocabSize), String(new Set(mine).size));
  };
  const paste = (text) => async () => {
    await page.fill('textarea[name=corpus]', text);
    await page.click('[data-action=use-text]');
  };
  const file = (name, bytes) => () => page.setInputFiles('input[name=corpus-file]', { name, mimeType: 'text/plain', buffer: Buffer.from(bytes) });
  let wide = '';
  for (let i = 0; i < 300; ++i) wide += String.fromCodePoint(0x400 + i);
  await reject(paste(''), /empty/);
  await reject(paste('abc'), /too few/);
  await reject(file('bin.txt', Array.from({ length: 300 }, (_, i) => i % 256)), /binary/);
  await reject(file('bad.txt', Array.from({ length: 300 }, () => 0xff)), /UTF-8/);
  await reject(file('big.txt', new Uint8Array(2 * 1024 * 1024 + 1).fill(97)), /big\.txt is 2\.0 MB .*more than the 2 MB/);
  await reject(paste(wide.repeat(2)), /300 distinct characters/);
  assert.deepEqual(errors, []);
  await context.close();
});

test('the sample box of the text task takes and shows characters; one the text lacks gets the Generate panel\'s sentence', async () => {
  const { page, context, errors } = await openReused(browser, `${srv.url}#view=train&task=text&seq-len=8&panel=generate`, { bypassCSP: true });
  await waitReady(page);
  await page.waitForSelector('.sample-field[data-unit=characters]');
  assert.equal(await page.textContent('.sample-field label'), 'sample sequence (characters)');
  // The core on the page's main thread: the default text's vocabulary, and what it encodes.
  const core = (f, arg) => page.evaluate(async ({ f, arg }) => {
    window.__core ??= await (await import(new URL('wasm/attention-core-relaxed.js', document.baseURI).href)).default();
    const vocab = window.__core.textCorpus(window.__core.defaultCorpus(), 8).vocab;
    return f === 'encode' ? Array.from(window.__core.encodeText(vocab, arg)) : window.__core.decodeText(vocab, Int32Array.from(arg));
  }, { f, arg });
  // The drawn sample (the note gives its ids, the heatmaps' own): the box shows their characters.
  const drawn = (await page.$eval('.sample-field .sample-note', (el) => /\(ids ([\d ]+)\)/.exec(el.textContent)?.[1] ?? '')).split(' ').map(Number);
  assert.equal(drawn.length, 8);
  assert.equal(await page.inputValue('[name=sample]'), (await core('decode', drawn)).replace(/\n/g, '⏎'));
  // Typed characters: the heatmaps show them, and the link keeps their ids.
  await page.fill('[name=sample]', 'the cat');
  await page.press('[name=sample]', 'Enter');
  const ids = await core('encode', 'the cat');
  await page.waitForFunction((want) => new URLSearchParams(location.hash.slice(1)).get('sample') === want, ids.join(' '));
  await page.waitForFunction((want) => document.querySelector('.sample-field .sample-note').textContent.includes(`(ids ${want})`), ids.join(' '));
  assert.equal(await page.inputValue('[name=sample]'), 'the cat');
  assert.equal(await page.textContent('.sample-field .field-msg'), '');
  // A character the text lacks: the core's sentence, the one a prompt with it gets in the Generate panel.
  await page.fill('[name=gen-prompt]', 'the ☃');
  await page.click('[data-action=generate]');
  await page.waitForSelector('.generate-panel .problem:not([hidden])');
  const generated = await page.textContent('.generate-panel .problem');
  const why = /^Nothing was generated: (.*)$/.exec(generated)?.[1];
  assert.match(why ?? '', /☃/);
  await page.fill('[name=sample]', 'the ☃');
  await page.press('[name=sample]', 'Enter');
  await page.waitForFunction(() => document.querySelector('.sample-field .field-msg').textContent !== '');
  assert.equal(await page.textContent('.sample-field .field-msg'), `sample sequence: ${why}`);
  assert.equal(await page.getAttribute('[name=sample]', 'aria-invalid'), 'true');
  assert.equal(await page.inputValue('[name=sample]'), 'the ☃', 'what was typed stays');
  assert.equal(new URLSearchParams((await page.evaluate(() => location.hash)).slice(1)).get('sample'), ids.join(' '), 'the sample is unchanged');
  // More characters than seq_len: one sentence.
  await page.fill('[name=sample]', 'the cat s');
  await page.press('[name=sample]', 'Enter');
  await page.waitForFunction(() => /more than seq_len/.test(document.querySelector('.sample-field .field-msg').textContent));
  assert.equal(await page.textContent('.sample-field .field-msg'), 'sample sequence: 9 characters, more than seq_len (8); type at most 8');
  // Emptied: the text's own sample again.
  await page.fill('[name=sample]', '');
  await page.press('[name=sample]', 'Enter');
  await page.waitForFunction((want) => document.querySelector('.sample-field .sample-note').textContent.includes(`(ids ${want})`), drawn.join(' '));
  assert.equal(await page.textContent('.sample-field .field-msg'), '');
  assert.deepEqual(errors, []);
  await context.close();
});

test('the element trains on its slot\'s text; a bad slot text falls back to the default one; a bad corpus property fires one error and changes nothing', async () => {
  const text = 'the cat sat on the mat. '.repeat(12);
  const page = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>text</title><link rel="icon" href="data:,">
<script type="module" src="attention-playground.js"></script></head><body>
<attention-playground id="el" task="text" seq-len="8"><script type="text/plain" slot="corpus">${text}</script></attention-playground>
<attention-playground id="bad" task="text" seq-len="8"><script type="text/plain" slot="corpus">ab</script></attention-playground>
<script>window.__errors = []; document.getElementById('bad').addEventListener('error', (e) => window.__errors.push(e.detail));</script>
</body></html>`;
  const site = await serveDistWith({ 'text-element.html': page });
  const { page: p, context, errors } = await openReused(browser, `${site.url}text-element.html`);
  try {
    await p.waitForFunction(() => document.getElementById('el').ready);
    await p.waitForFunction(() => document.getElementById('el').shadowRoot.querySelector('fieldset.corpus')?.dataset.vocabSize);
    const vocab = await p.evaluate(() => document.getElementById('el').shadowRoot.querySelector('fieldset.corpus').dataset.vocabSize);
    assert.equal(vocab, String(new Set(text).size));
    await p.evaluate(() => document.getElementById('el').step(20));
    const before = await p.evaluate(() => document.getElementById('el').shadowRoot.querySelector('.readout').dataset.step);
    assert.equal(before, '20');
    // Each bad text, as the corpus property (a string, or a file's bytes): one error event naming
    // the problem, and the run untouched.
    const cases = [
      ['empty', /empty/],
      ['short', /too few/],
      ['binary', /binary/],
      ['latin1', /UTF-8/],
      ['big', /2097153 bytes, more than the 2097152-byte \(2 MB\) limit/],
      ['wide', /300 distinct characters/],
    ];
    for (const [name, pattern] of cases) {
      const error = await p.evaluate(
        (name) =>
          new Promise((resolve) => {
            const el = document.getElementById('el');
            el.addEventListener('error', (e) => resolve(e.detail), { once: true });
            let wide = '';
            for (let i = 0; i < 300; ++i) wide += String.fromCodePoint(0x400 + i);
            el.corpus = {
              empty: '',
              short: 'ab',
              binary: Uint8Array.from({ length: 300 }, (_, i) => i % 256),
              latin1: new Uint8Array(300).fill(0xe9),
              big: new Uint8Array(2 * 1024 * 1024 + 1).fill(97),
              wide,
            }[name];
          }),
        name,
      );
      assert.equal(error.attribute, 'corpus', name);
      assert.match(error.message, pattern, name);
      // The event carries the core's message: one clause, as every error event of the element.
      assert.ok(!/[.!?] [A-Z]/.test(error.message) && error.message.length < 300, `${name}: one sentence: "${error.message}"`);
      const after = await p.evaluate(() => ({ step: document.getElementById('el').shadowRoot.querySelector('.readout').dataset.step, vocab: document.getElementById('el').shadowRoot.querySelector('fieldset.corpus').dataset.vocabSize }));
      assert.deepEqual(after, { step: '20', vocab }, `${name}: the run is untouched`);
    }
    // The bad slot text: one error, and the model trains on the default text (35 characters).
    await p.waitForFunction(() => document.getElementById('bad').ready);
    await p.waitForFunction(() => document.getElementById('bad').shadowRoot.querySelector('fieldset.corpus')?.dataset.vocabSize === '35');
    const bad = await p.evaluate(() => window.__errors);
    assert.equal(bad.length, 1, JSON.stringify(bad));
    assert.match(bad[0].message, /^The text was not used, so the model trains on the default text: the text has 2 characters, too few/);
    assert.deepEqual(errors, []);
  } finally {
    await context.close();
    await site.close();
  }
});
