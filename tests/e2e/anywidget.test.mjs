// The anywidget front-end contract: Jupyter, marimo and the MyST {anywidget} directive import the
// module by URL and call its default export's render({model, el}). The model here is written to
// anywidget's documented interface (get, set, on, off, save_changes), as a Backbone model behaves:
// set() from the kernel side fires change:<trait>.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { launch, serveSite, CDN, DIST, expectWorkers, routeCdn } from './harness.mjs';

let browser;
let site;
test.before(async () => {
  browser = await launch();
  site = await serveSite({ 'notebook.html': '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Notebook</title><link rel="icon" href="data:,"></head><body><div id="output"></div></body></html>' });
});
test.after(async () => {
  await browser?.close();
  await site?.close();
});

test('render({model, el}) maps traits to attributes, follows change:<trait>, writes step/loss/solved back, and its cleanup ends the worker', async () => {
  const context = await browser.newContext();
  await routeCdn(context);
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  await page.goto(`${site.url}notebook.html`);

  // The notebook front end: import by URL, build a model, render into the output area.
  const exported = await page.evaluate(async (url) => {
    const mod = await import(url);
    const traits = { seed: 5, vocab_size: 16, d_model: 16, heads: 2, seq_len: 8, task: 'repeat', solved_at: 0.5, hide: 'timeline,ablation', theme: 'dark', step: 0, loss: null, solved: false };
    const handlers = new Map();
    const log = { saves: 0, sets: [] };
    const model = {
      get: (k) => traits[k],
      set: (k, v) => {
        traits[k] = v;
        log.sets.push(k);
      },
      on: (ev, f) => handlers.set(ev, [...(handlers.get(ev) ?? []), f]),
      off: (ev, f) => handlers.set(ev, (handlers.get(ev) ?? []).filter((g) => g !== f)),
      save_changes: () => log.saves++,
    };
    /** The kernel changes a trait: Backbone fires change:<name>. */
    window.__kernelSet = (k, v) => {
      traits[k] = v;
      for (const f of handlers.get(`change:${k}`) ?? []) f();
    };
    window.__widget = { traits, handlers, log };
    window.__cleanup = mod.default.render({ model, el: document.getElementById('output') });
    return { keys: Object.keys(mod).sort(), defaultKeys: Object.keys(mod.default), cleanup: typeof window.__cleanup };
  }, `${CDN}attention-playground.js`);
  assert.deepEqual(exported.defaultKeys, ['render']);
  assert.equal(exported.cleanup, 'function');
  // The module exports exactly the values its declarations (emitted from the sources) declare.
  const dts = fs.readFileSync(`${DIST}/types/element/index.d.ts`, 'utf8');
  const declared = [...dts.matchAll(/^export \{([^}]*)\} from/gm)]
    .flatMap((m) => m[1].split(','))
    .map((x) => x.trim())
    .filter((x) => x && !x.startsWith('type '))
    .concat(/^export default /m.test(dts) ? ['default'] : [])
    .sort();
  assert.deepEqual(exported.keys, declared);

  // Traits -> attributes -> the element's settings.
  await page.waitForFunction(() => document.querySelector('#output attention-playground')?.ready === true);
  const st = await page.evaluate(() => {
    const pg = document.querySelector('#output attention-playground');
    return { state: pg.state, attrs: Object.fromEntries([...pg.attributes].map((a) => [a.name, a.value])) };
  });
  assert.deepEqual([st.state.seed, st.state.vocabSize, st.state.dModel, st.state.nHeads, st.state.seqLen], [5, 16, 16, 2, 8]);
  assert.equal(st.attrs['solved-at'], '0.5');
  assert.equal(st.attrs.theme, 'dark');
  assert.equal(st.attrs.hide, 'timeline,ablation');
  assert.equal(st.attrs.step, undefined, 'write-back traits are not attributes');

  // change:<trait> follows: a new seed builds a new model.
  await page.evaluate(() => window.__kernelSet('seed', 9));
  await page.waitForFunction(() => document.querySelector('#output attention-playground').state.seed === 9);

  // The element writes step, loss and solved back, with save_changes.
  await page.evaluate(() => document.querySelector('#output attention-playground').play());
  await page.waitForFunction(() => window.__widget.traits.solved === true);
  await page.evaluate(() => document.querySelector('#output attention-playground').pause());
  const back = await page.evaluate(() => ({ ...window.__widget.traits, saves: window.__widget.log.saves }));
  assert.ok(back.step > 0 && back.loss < 0.5, `step ${back.step}, loss ${back.loss}`);
  assert.ok(back.saves > 0);

  // A reset starts a new run: solved goes back to false, step to 0.
  await page.evaluate(() => document.querySelector('#output attention-playground').reset());
  await page.waitForFunction(() => window.__widget.traits.step === 0 && window.__widget.traits.solved === false);

  // A bad trait value: the element's error comes back as the error trait.
  await page.evaluate(() => window.__kernelSet('theme', 'purple'));
  await page.waitForFunction(() => /theme/.test(window.__widget.traits.error ?? ''));

  // The cleanup removes the element and ends its worker, and stops following the model.
  assert.equal(page.workers().length, 1);
  await page.evaluate(() => window.__cleanup());
  await expectWorkers(page, 0);
  const left = await page.evaluate(() => ({ elements: document.querySelectorAll('attention-playground').length, handlers: [...window.__widget.handlers.values()].flat().length }));
  assert.deepEqual(left, { elements: 0, handlers: 0 });
  assert.deepEqual(errors, []);
  await context.close();
});
