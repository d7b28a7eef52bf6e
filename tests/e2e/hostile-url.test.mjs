// Hostile links, table-driven: URL hashes with huge numbers, negatives, NaN, Infinity,
// non-numeric strings, 100 KB strings, unknown keys, script fragments and unicode. For each,
// the page shows a corrected state and a message naming what was corrected before the core has
// loaded (the banner is up by DOMContentLoaded); nothing from the URL becomes markup (no element with script, image or frame power
// appears, and the flags that injected handlers would set stay unset); no console error; the
// hash written back is the canonical one, which needs no corrections (all of them are checked in
// one loaded page, through the page's hashchange handler: the same validator, stateFromHash, as at
// load, without a second page load per case); and the page still trains. The same for a hash
// edited on a loaded page: the banner is up once the hashchange event has been handled. (How many
// milliseconds that takes is a timing: bench/browser_bench.mjs.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HASH_ORDER } from './contract.mjs';
import { useBrowser, waitForStep, waitReady } from './harness.mjs';

let srv;
let browser;
useBrowser((s, b) => {
  srv = s;
  browser = b;
});

/** Each payload sets window.__pwned<N> if it ever runs. */
const XSS = [
  '<script>window.__pwned1=1</script>',
  '<img src=x onerror="window.__pwned2=1">',
  '<svg/onload=window.__pwned3=1>',
  '"><img src=x onerror=window.__pwned4=1>',
  "javascript:window.__pwned5=1",
  "'-alert(window.__pwned6=1)-'",
  '<iframe srcdoc="<script>parent.__pwned7=1</script>">',
  '{{constructor.constructor("window.__pwned8=1")()}}',
];
const enc = encodeURIComponent;
const KB100 = 100 * 1024;

/**
 * The table. hash: the URL fragment (without '#'); messages: regexes that must each match a
 * banner item (empty: the banner must stay hidden); controls: expected control values (subset).
 */
const CASES = [
  {
    name: 'huge numbers',
    hash: 'vocab-size=1e308&d-model=99999999999999999999&seq-len=1e400&batch=123456789&seed=18446744073709551616&dk=9007199254740993',
    messages: [
      /^vocab: 1e\+308 is above the maximum 512; using 512$/,
      /^d_model: 100000000000000000000 is above the maximum 256; using 256$/,
      /^seq_len: "1e400" is not a number; using 12$/,
      /^batch: 123456789 is above the maximum 64; using 64$/,
      /^seed: 18446744073709552000 is above the maximum 4294967295; using 4294967295$/,
      /^dk: 9007199254740992 is above the maximum 16; using 16$/,
    ],
    controls: { vocabSize: '512', dModel: '256', seqLen: '12', batchSize: '64', seed: '4294967295' },
  },
  {
    name: 'negatives',
    hash: 'vocab-size=-5&d-model=-32&heads=-1&seq-len=-0&batch=-64&lr=-0.01&seed=-1&attn-dropout=-0.5&out-dropout=-1e-9&dk=-3&stage=-1&sample=-3&sample-seed=-2',
    messages: [
      /^vocab: -5 is below the minimum 2; using 2$/,
      /^d_model: -32 is below the minimum 2; using 2$/,
      /^heads: -1 is below the minimum 1; using 1$/,
      /^seq_len: 0 is below the minimum 1; using 1$/,
      /^batch: -64 is below the minimum 1; using 1$/,
      /^learning rate: -0\.01 is not in \(0, 10\]; using 0\.005$/,
      /^seed: -1 is below the minimum 0; using 0$/,
      /^attention dropout: -0\.5 is below the minimum 0; using 0$/,
      /^output dropout: -1e-9 is below the minimum 0; using 0$/,
      /^dk: -3 is below the minimum 1; using 1$/,
      /^stage: -1 is below the minimum 0; using 0$/,
      /^sample sequence: "-3" is not a token id in \[0, 1\]; no token ids left; using 0 1 2/,
      /^sample seed: -2 is below the minimum 0; using 0$/,
    ],
    controls: { vocabSize: '2', dModel: '2', nHeads: '1', seqLen: '1', batchSize: '1', lr: '0.005', seed: '0', attnDropout: '0', outDropout: '0' },
  },
  {
    name: 'NaN and Infinity',
    hash: 'vocab-size=NaN&d-model=Infinity&heads=-Infinity&lr=NaN&attn-dropout=Infinity&out-dropout=-Infinity&seed=nan&logy=NaN&lesson-mask=Infinity&lr=Infinity',
    messages: [
      /^vocab: "NaN" is not a number; using 64$/,
      /^d_model: "Infinity" is not a number; using 32$/,
      /^heads: "-Infinity" is not a number; using 4$/,
      /^learning rate: "NaN" is not a number; using 0\.005$/,
      /^attention dropout: "Infinity" is not a number; using 0$/,
      /^output dropout: "-Infinity" is not a number; using 0$/,
      /^seed: "nan" is not a number; using 42$/,
      /^log scale: "NaN" is not 0 or 1; using 1$/,
      /^lesson mask: "Infinity" is not none, causal, window, blocks or rows of 0 and 1 such as 011\.001\.000; using none$/,
    ],
    controls: { vocabSize: '64', dModel: '32', nHeads: '4', lr: '0.005', seed: '42', attnDropout: '0' },
  },
  {
    name: 'lesson keys: a mask that is no mask, a drawn mask too large or not square, k, heads, positions, second sentence',
    hash: `lesson-mask=%3Cscript%3E&lesson-window=999&lesson-heads=9&lesson-positions=2&second-sentence=%00%01`,
    messages: [
      /^lesson mask: "<script>" is not none, causal, window, blocks or rows of 0 and 1 such as 011\.001\.000; using none$/,
      /^window k: 999 is above the maximum 32; using 32$/,
      /^lesson heads: 9 is above the maximum 4; using 4$/,
      /^lesson positions: "2" is not 0 or 1; using 0$/,
      /^second sentence: "\\u0000\\u0001" has no words; left empty$/,
    ],
    controls: {},
  },
  {
    name: 'lesson mask: drawn rows past the bound, and rows of unequal length',
    hash: `lesson-mask=${Array(33).fill('1'.repeat(33)).join('.')}`,
    messages: [/^lesson mask: "1{24}…" is not a square of at most 32 rows of 0 and 1; using none$/],
    controls: {},
  },
  {
    name: 'ablation keys: unknown mask, non-boolean scaling, head numbers out of range or not numbers',
    hash: 'heads=2&mask=triu&scale-scores=2&heads-off=0%2C2%2C99%2Cx&heads-frozen=-1%2C1%2C1',
    messages: [
      /^mask: "triu" is not one of causal, none, inverted; using causal$/,
      /^1\/sqrt\(dk\) scaling: "2" is not 0 or 1; using 1$/,
      /^heads switched off: "0" is not a head number in \[1, 64\]; "99" is not a head number in \[1, 64\]; "x" is not a head number in \[1, 64\]$/,
      /^frozen heads: "-1" is not a head number in \[1, 64\]$/,
    ],
    controls: { nHeads: '2' },
  },
  {
    name: 'ablation keys: a head past the model\'s head count',
    hash: 'heads=2&heads-off=1%2C3',
    messages: [/^heads switched off: "3" is not a head number in \[1, 2\] \(heads 2\)$/],
    controls: { nHeads: '2' },
  },
  {
    name: 'non-numeric strings',
    hash: 'vocab-size=abc&seq-len=12px&batch=&lr=five&seed=4.7&stage=3.5&heads=%20%20&view=TRAIN&task=bogus&dk=1%2C5',
    messages: [
      /^vocab: "abc" is not a number; using 64$/,
      /^seq_len: "12px" is not a number; using 12$/,
      /^batch: "" is not a number; using 16$/,
      /^learning rate: "five" is not a number; using 0\.005$/,
      /^seed: 4\.7 is not a whole number; using 5$/,
      /^stage: 3\.5 is not a whole number; using 4$/,
      /^heads: "  " is not a number; using 4$/,
      /^view: "TRAIN" is not one of train, lesson, block; using train$/,
      /^task: "bogus" is not one of repeat, shift, copy, reverse, sort, future, induction, text, markov, lag; using repeat$/,
      /^dk: "1,5" is not a number; using 4$/,
    ],
    controls: { vocabSize: '64', seqLen: '12', batchSize: '16', lr: '0.005', seed: '5', nHeads: '4' },
  },
  {
    name: 'a 100 KB sentence',
    hash: `sentence=${'ab '.repeat(KB100 / 3)}&vocab-size=7`,
    messages: [/^sentence: more than 16 tokens; keeping the first 16$/],
    controls: { vocabSize: '64' }, // vocab=7 lies past the 8 KB the page reads of a hash
  },
  {
    name: 'a 100 KB sample sequence',
    hash: `vocab-size=32&sample=${'7 '.repeat(KB100 / 2)}`,
    messages: [/^sample sequence: longer than 1024 characters; cut$/, /^sample sequence: only the first 12 ids fit \(seq_len 12\)$/],
    controls: { vocabSize: '32' },
    sample: '7 7 7 7 7 7 7 7 7 7 7 7',
  },
  {
    name: 'a 100 KB unknown key and value, after a bad value',
    hash: `vocab-size=3000&${'k'.repeat(KB100 / 2)}=${'v'.repeat(KB100 / 2)}`,
    messages: [/^vocab: 3000 is above the maximum 512; using 512$/, /^ignored unknown key: "k{24}…"$/],
    controls: { vocabSize: '512' },
  },
  {
    name: 'a near miss of a key: ignored, and the banner says which key it meant',
    hash: 'dModel=16&vocab-size=128',
    messages: [/^ignored unknown key: "dModel" \(did you mean d-model\?\)$/],
    controls: { vocabSize: '128', dModel: '32' },
  },
  {
    name: 'unknown keys (ignored and named in the banner) and no prototype pollution',
    hash: `__proto__[x]=1&__proto__=2&constructor=3&toString=4&hasOwnProperty=5&${enc(XSS[1])}=${enc(XSS[0])}&vocab-size=128`,
    messages: [/^ignored unknown keys: "__proto__\[x\]", "__proto__", "constructor", "toString", "hasOwnProperty" and 1 more$/],
    controls: { vocabSize: '128' },
  },
  {
    name: 'script fragments in every kind of field',
    hash:
      `sentence=${enc(XSS[0] + XSS[6])}&sample=${enc(XSS[1])}&view=${enc(XSS[2])}&task=${enc(XSS[3])}` +
      `&lr=${enc(XSS[4])}&logy=${enc(XSS[5])}&vocab-size=${enc(XSS[7])}&${enc(XSS[1])}=1`,
    messages: [
      /^view: "<svg\/onload=window\.__pw\w*…" is not one of train, lesson, block; using train$/,
      /^task: "\\"><img src=x onerror=win…" is not one of repeat, shift, copy, reverse, sort, future, induction, text, markov, lag; using repeat$/,
      /^learning rate: "javascript:window\.__pwne…" is not a number; using 0\.005$/,
      /^log scale: "'-alert\(window\.__pwned6=…" is not 0 or 1; using 1$/,
      /^vocab: "\{\{constructor\.constructo…" is not a number; using 64$/,
      /^sentence: more than 16 tokens; keeping the first 16$/,
      /^sample sequence: "<img" is not a token id in \[0, 63\]/,
    ],
    controls: { vocabSize: '64', lr: '0.005', task: 'repeat' },
  },
  {
    name: 'unicode: full-width and Arabic digits, accents, RTL override, emoji, NUL, bad UTF-8',
    hash:
      `vocab-size=${enc('１２８')}&seed=${enc('٣')}&view=${enc('tráin')}&task=repeat%00&batch=%ED%A0%80` +
      `&sentence=${enc('Ünïcödé 𝔘𝔫𝔦 \u202Eevil\u202C zero\u200Bwidth 日本語 🙂 e\u0301')}&heads=${enc('４')}`,
    messages: [
      /^vocab: "１２８" is not a number; using 64$/,
      /^seed: "٣" is not a number; using 42$/,
      /^view: "tráin" is not one of train, lesson, block; using train$/,
      /^task: "repeat\\u0000" is not one of repeat, shift, copy, reverse, sort, future, induction, text, markov, lag; using repeat$/,
      /^batch: "\uFFFD+" is not a number; using 16$/,
      /^heads: "４" is not a number; using 4$/,
    ],
    controls: { vocabSize: '64', seed: '42', batchSize: '16', nHeads: '4', task: 'repeat' },
  },
];

/** Page with guards installed before any of its scripts runs. */
async function open(url) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const errors = [];
  await context.addInitScript(() => {
    // What the banner and the readout show at DOMContentLoaded, i.e. right after the page's module
    // ran and before any reply from the worker could be handled.
    window.__atLoad = null;
    document.addEventListener('DOMContentLoaded', () => {
      const b = document.querySelector('.banner');
      window.__atLoad = {
        items: b && !b.hidden ? [...b.querySelectorAll('li')].map((li) => li.textContent) : [],
        status: document.querySelector('.readout')?.dataset.status ?? null,
      };
    });
    // Every element that could run script or load something, whenever it is added.
    window.__suspicious = [];
    const DANGEROUS = new Set(['IMG', 'SVG', 'IFRAME', 'FRAME', 'OBJECT', 'EMBED', 'VIDEO', 'AUDIO', 'SOURCE', 'BASE']);
    const check = (el) => {
      const tag = el.tagName?.toUpperCase();
      if (!tag) return;
      const ownScript = tag === 'SCRIPT' && el.src && new URL(el.src).origin === location.origin && !el.textContent;
      const ownLink = tag === 'LINK' && (!el.href || new URL(el.href, location.href).origin === location.origin || el.href.startsWith('data:'));
      const handlers = [...(el.attributes ?? [])].filter((a) => /^on/i.test(a.name) || /javascript:/i.test(a.value)).map((a) => a.name);
      const refresh = tag === 'META' && /refresh/i.test(el.httpEquiv || '');
      const posting = tag === 'FORM' && el.hasAttribute('action');
      if ((tag === 'SCRIPT' && !ownScript) || (tag === 'LINK' && !ownLink) || DANGEROUS.has(tag) || refresh || posting || handlers.length) {
        window.__suspicious.push(`${tag} ${handlers.join(' ')} ${(el.outerHTML || '').slice(0, 120)}`);
      }
    };
    new MutationObserver((records) => {
      for (const r of records) {
        for (const n of r.addedNodes) {
          if (n.nodeType !== 1) continue;
          check(n);
          n.querySelectorAll?.('*').forEach(check);
        }
        if (r.type === 'attributes' && r.target.nodeType === 1) check(r.target);
      }
    }).observe(document, { childList: true, subtree: true, attributes: true, attributeFilter: ['src', 'href', 'onerror', 'onload', 'srcdoc'] });
  });
  const page = await context.newPage();
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => errors.push(`pageerror: ${e.message}`));
  page.on('dialog', (d) => {
    errors.push(`dialog: ${d.message()}`);
    void d.dismiss();
  });
  await page.goto(url);
  return { page, context, errors };
}

/** The one page every test here loads its URL into. A load is a new document (the guards, the
 * flags an injected handler would set, the banner and the worker all start afresh), and it costs
 * about half the CPU of a new page, whose renderer process has to start (measured: 0.55 s against
 * 1.1 s of Chromium's CPU per load to ready). */
let shared = null; // its context closes with the browser (useBrowser's after())
let loads = 0;

/** Loads `#hash` into the shared page as a new document (a query that changes every time makes it
 * a real load, not a fragment navigation); errors lists what this document logs. */
async function load(hash) {
  shared ??= await open('about:blank');
  shared.errors.length = 0;
  await shared.page.goto(`${srv.url}?load=${++loads}#${hash}`);
  return shared;
}

const controlValues = (page) =>
  page.$$eval('.view-train .field[data-key] :is(input, select)', (els) => Object.fromEntries(els.map((e) => [e.name, e.value])));

/** What the page showed at DOMContentLoaded: {items (the banner's, [] if hidden), status (the
 * readout's)}. */
async function atLoad(page) {
  const h = await page.waitForFunction(() => window.__atLoad);
  return h.jsonValue();
}

/** Sets location.hash to hash; resolves to the banner's items as the page's own hashchange
 * listener left them (a listener added now runs after it), [] if the banner is hidden. */
function bannerAfterHashchange(page, hash) {
  return page.evaluate(
    (h) =>
      new Promise((resolve) => {
        window.addEventListener(
          'hashchange',
          () => {
            const b = document.querySelector('.banner');
            resolve(b.hidden ? [] : [...b.querySelectorAll('li')].map((li) => li.textContent));
          },
          { once: true },
        );
        location.hash = h;
      }),
    hash,
  );
}

async function checkClean(page, errors, what) {
  // A barrier for late handlers (an injected image's error, a frame's script): a sentinel image
  // request to the same server, after everything the page asked for so far, and its reply; then a
  // frame and a task, in which an error handler queued before would have run.
  const sentinel = await page.evaluate(
    () =>
      new Promise((resolve) => {
        const img = new Image();
        const after = (what) => () => requestAnimationFrame(() => setTimeout(() => resolve(what)));
        img.onload = after('load');
        img.onerror = after('error');
        img.src = `favicon.svg?sentinel=${Math.random()}`;
      }),
  );
  assert.equal(sentinel, 'load', 'the sentinel image loaded');
  const flags = await page.evaluate(() => Object.keys(window).filter((k) => /^__pwned/.test(k)));
  assert.deepEqual(flags, [], `${what}: an injected handler ran`);
  assert.deepEqual(await page.evaluate(() => window.__suspicious), [], `${what}: an element that can run script appeared`);
  assert.equal(await page.evaluate(() => ({}).x ?? Object.prototype.x ?? null), null, `${what}: Object.prototype polluted`);
  assert.deepEqual(errors, [], `${what}: console errors`);
}

/** The hash each case's page wrote back, by case name: the last test sets each on one page. */
const WRITTEN = new Map();

for (const c of CASES) {
  test(`hostile hash: ${c.name}`, async (t) => {
    const { page, errors } = await load(c.hash);
    if (c.messages.length > 0) {
      // Shown at once: the banner is up by DOMContentLoaded, while the core is still loading.
      const { items, status } = await atLoad(page);
      t.diagnostic(`banner at DOMContentLoaded (readout ${status}): ${items.length} items`);
      assert.ok(items.length > 0, 'the banner is up by DOMContentLoaded');
      assert.equal(status, 'loading', 'before the core has loaded');
      for (const re of c.messages) assert.ok(items.some((s) => re.test(s)), `banner has ${re}: ${JSON.stringify(items)}`);
      assert.ok(items.every((s) => s.length < 400), 'every message is short');
      assert.deepEqual(await page.locator('.banner li').allTextContents(), items, 'the banner stays');
    }
    await waitReady(page);
    if (c.messages.length === 0) assert.equal(await page.isHidden('.banner'), true, 'nothing to correct');
    const controls = await controlValues(page);
    for (const [k, v] of Object.entries(c.controls)) assert.equal(controls[k], v, `control ${k}`);
    if (c.sample) assert.equal(await page.inputValue('[name=sample]'), c.sample);

    // The hash written back is canonical: only known keys, short, and it needs no corrections.
    const written = await page.evaluate(() => location.hash);
    assert.ok(written.length < 2000, `written hash is ${written.length} chars`);
    // Every setting once, in the table's order, and nothing else.
    assert.deepEqual([...new URLSearchParams(written.slice(1)).keys()], HASH_ORDER.map((s) => s.hash));
    assert.ok(!/pwned|script|onerror/i.test(decodeURIComponent(written.replace(/^#/, '').split('&').filter((kv) => !/^(sentence|second-sentence)=/.test(kv)).join('&'))), 'no payload outside the sentence');
    // That it needs no correction is checked with the others' in one page, below.
    WRITTEN.set(c.name, written);

    // Text fields show the payload as text only; the lesson view tokenizes it as text.
    await page.click('[data-view=lesson]');
    await page.waitForSelector('.stage[data-stage=tokens] li');
    // And the page still trains.
    await page.click('[data-view=train]');
    await page.click('[data-action=step1]');
    await waitForStep(page, 1);
    assert.ok(Number.isFinite(Number(await page.getAttribute('.readout', 'data-loss'))));
    await checkClean(page, errors, c.name);
  });
}

test('hostile hashes typed into a loaded page (hashchange) are corrected at once too', async () => {
  const { page, errors } = await load('view=train');
  await waitReady(page);
  for (const c of CASES.filter((x) => x.messages.length > 0)) {
    // Dismiss the previous banner so that only this edit can show it.
    await page.evaluate(() => {
      const b = document.querySelector('.banner');
      b.hidden = true;
      b.querySelector('ul').replaceChildren();
    });
    // Shown at once: the banner is up when the page has handled the hashchange event.
    const items = await bannerAfterHashchange(page, c.hash);
    assert.ok(items.length > 0, `${c.name}: the banner is up after the hashchange`);
    for (const re of c.messages) assert.ok(items.some((s) => re.test(s)), `${c.name}: banner has ${re}: ${JSON.stringify(items)}`);
    await page.waitForFunction(() => location.hash.length < 2000 && /^#view=/.test(location.hash));
  }
  await waitReady(page);
  await checkClean(page, errors, 'hashchange');
});

test('the hashes written back are canonical: each, set on a loaded page, needs no correction and stays as written', async () => {
  assert.equal(WRITTEN.size, CASES.length, 'every case wrote its hash');
  // Cases may write the same hash; the handler ignores a hash equal to the one it wrote last (and
  // setting the same hash fires no event), so each distinct hash once, from a start state (seed
  // 123456) that none of them has.
  const hashes = [...new Set(WRITTEN.values())];
  const { page, errors } = await load('view=train&seed=123456');
  await waitReady(page);
  assert.ok(!hashes.includes(await page.evaluate(() => location.hash)), 'the start state is none of them');
  for (const written of hashes) {
    // Dismiss any earlier banner so that only this hash could show it.
    await page.evaluate(() => {
      const b = document.querySelector('.banner');
      b.hidden = true;
      b.querySelector('ul').replaceChildren();
    });
    assert.deepEqual(await bannerAfterHashchange(page, written), [], `${written.slice(0, 80)}…: needs no correction`);
    assert.equal(await page.evaluate(() => location.hash), written, 'the page keeps it as written');
  }
  // The last one's model is built, and nothing ran or failed on the way.
  await waitReady(page);
  await checkClean(page, errors, 'written hashes');
});
