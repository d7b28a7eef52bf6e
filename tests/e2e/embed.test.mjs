// embed.html end to end: an iframe driven by postMessage from its parent, its events delivered to
// the parent, malformed messages ignored (and logged once), and messages from a wrong origin or
// from a window other than the parent ignored. The wrong origin is real: the parent page comes from
// a second server on another port, i.e. another origin than the frames.
import http from 'node:http';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GUARD_MS, openPage, useBrowser, waitForStep } from './harness.mjs';

/** Records the page's console warnings (frames included) as they reach node: {lines, until(f)}, where
 * until(f) resolves once f(lines) holds (a guard of GUARD_MS: it throws on a hang). */
function warningsOf(page) {
  const lines = [];
  const waiting = new Set();
  page.on('console', (m) => {
    if (m.type() !== 'warning') return;
    lines.push(m.text());
    for (const w of waiting) w();
  });
  const until = (f) =>
    new Promise((resolve, reject) => {
      const check = () => {
        if (!f(lines)) return;
        waiting.delete(check);
        clearTimeout(timer);
        resolve();
      };
      const timer = setTimeout(() => {
        waiting.delete(check);
        reject(new Error(`no such console warnings after ${GUARD_MS / 1000} s: ${JSON.stringify(lines)}`));
      }, GUARD_MS);
      waiting.add(check);
      check();
    });
  return { lines, until };
}

/** A barrier: each frame logs a sentinel warning; once node has them all, it has every warning
 * those frames logged before (a frame's console messages arrive in order). */
async function flushWarnings(frames, warnings) {
  const tag = `e2e sentinel ${Math.random()}`;
  for (const [i, f] of frames.entries()) await f.evaluate((t) => console.warn(t), `${tag} ${i}`);
  await warnings.until((lines) => frames.every((_, i) => lines.includes(`${tag} ${i}`)));
}

let srv;
let browser;
useBrowser((s, b) => {
  srv = s;
  browser = b;
});

/** The element inside a frame: its readout (step, status) and state. */
const frameState = (frame) =>
  frame.evaluate(() => {
    const el = document.querySelector('attention-playground');
    const r = el.shadowRoot.querySelector('.readout');
    return { ready: el.ready, step: r ? Number(r.dataset.step) : null, status: r?.dataset.status, seed: el.state.seed, hide: el.getAttribute('hide') };
  });

const logged = (page, type) => page.$$eval(`#frame-log [data-type=${type}]`, (lis) => lis.map((li) => JSON.parse(li.dataset.detail)));

test('the course page drives the iframe with postMessage; its events reach the parent', async () => {
  const { page, context, errors } = await openPage(browser, `${srv.url}examples/course-page.html`);
  await page.waitForSelector('#frame-log [data-type=ready]');
  const frame = page.frame({ url: /embed\.html/ });
  assert.deepEqual(await frameState(frame), { ready: true, step: 0, status: 'paused', seed: 3, hide: 'header,status,model,loss,legend,ablation,timeline,backward,selftest,export' });

  await page.click('[data-frame=step]');
  await page.waitForFunction(() => [...document.querySelectorAll('#frame-log [data-type=step]')].some((li) => JSON.parse(li.dataset.detail).step === 10));
  assert.equal((await frameState(frame)).step, 10);
  const s10 = (await logged(page, 'step')).at(-1);
  assert.ok(s10.loss > 0 && s10.loss < 5, JSON.stringify(s10));

  await page.click('[data-frame=play]');
  await page.waitForFunction(() => [...document.querySelectorAll('#frame-log [data-type=step]')].some((li) => JSON.parse(li.dataset.detail).step > 10));
  await page.click('[data-frame=pause]');
  await frame.waitForFunction(() => document.querySelector('attention-playground').shadowRoot.querySelector('.readout').dataset.status === 'paused');
  const played = (await frameState(frame)).step;
  assert.ok(played > 10, `played to step ${played}`);

  // configure: attributes by name; a new seed builds a new model (step 0, a step event).
  await page.click('[data-frame=seed]');
  await frame.waitForFunction(() => document.querySelector('attention-playground').state.seed === 4);
  await page.waitForFunction(() => JSON.parse([...document.querySelectorAll('#frame-log [data-type=step]')].at(-1).dataset.detail).step === 0);
  // solved mirrors the element's: raise the threshold so that a few steps solve it.
  await page.evaluate(() => document.getElementById('frame').contentWindow.postMessage({ type: 'configure', config: { 'solved-at': 4.1 } }, location.origin));
  await page.evaluate(() => document.getElementById('frame').contentWindow.postMessage({ type: 'step', n: 60 }, location.origin));
  await page.waitForFunction(() => [...document.querySelectorAll('#frame-log [data-type=solved]')].some((li) => JSON.parse(li.dataset.detail).threshold === 4.1));
  const solved = (await logged(page, 'solved')).at(-1);
  // Its step is the first of the 60 whose loss fell under 4.1 (from the loss history).
  assert.ok(solved.loss < 4.1 && solved.step >= 1 && solved.step <= 60 && solved.threshold === 4.1, JSON.stringify(solved));
  // error mirrors too: a bad attribute value reported by the frame.
  await page.evaluate(() => document.getElementById('frame').contentWindow.postMessage({ type: 'configure', config: { heads: 'many' } }, location.origin));
  await page.waitForSelector('#frame-log [data-type=error]');
  assert.match((await logged(page, 'error'))[0].message, /^heads: "many" is not a number; using 4/);
  await page.click('[data-frame=reset]');
  await waitForStep(frame, 0, { root: 'attention-playground' });
  assert.deepEqual(errors, []);
  await context.close();
});

test('malformed messages are ignored and logged once, with console.warn', async () => {
  const { page, context, errors } = await openPage(browser, `${srv.url}examples/course-page.html`);
  const warnings = warningsOf(page);
  await page.waitForSelector('#frame-log [data-type=ready]');
  const frame = page.frame({ url: /embed\.html/ });
  await page.evaluate(() => {
    const w = document.getElementById('frame').contentWindow;
    const bad = [
      'play', null, 42, ['play'], { type: 'explode' }, { type: 'play', extra: 1 }, { type: 'step', n: 0 }, { type: 'step', n: 1e9 },
      { type: 'step', n: '5' }, { type: 'step', n: 2.5 }, { type: 'configure', config: { 'd-model': { x: 1 } } }, { type: 'configure', config: { onclick: 'x' } },
      { type: 'configure', config: [] }, { type: 'play', source: 'someone-else' },
    ];
    for (const m of bad) w.postMessage(m, location.origin);
    // A valid one after them still works.
    w.postMessage({ source: 'attention-playground', type: 'step', n: 3 }, location.origin);
  });
  await waitForStep(frame, 3, { root: 'attention-playground' });
  // The frame handled every bad message before the valid one; the sentinel brings their warnings.
  await flushWarnings([frame], warnings);
  const malformed = warnings.lines.filter((w) => /malformed/.test(w));
  assert.equal(malformed.length, 1, `warned once: ${JSON.stringify(warnings.lines)}`);
  assert.match(malformed[0], /^attention-playground embed: ignored a malformed message \(.+\) \(logged once/);
  const st = await frameState(frame);
  assert.equal(st.seed, 3, 'no configure got through');
  assert.deepEqual(errors, []);
  await context.close();
});

/** A parent page on another origin than the frames, recording the messages it receives. */
const parentPage = (frames) => `<!doctype html><html><head><meta charset="utf-8"><title>parent</title></head><body>
${frames.map(([id, src]) => `<iframe id="${id}" src="${src}" width="900" height="500"></iframe>`).join('\n')}
<script>
  window.got = [];
  addEventListener('message', (e) => {
    const id = [...document.querySelectorAll('iframe')].find((f) => f.contentWindow === e.source)?.id;
    window.got.push({ id, origin: e.origin, type: e.data?.type, detail: e.data?.detail });
  });
</script></body></html>`;

test('a message from a wrong origin, or from a window other than the parent, is ignored; origin= allows one', async () => {
  const frameBase = `${srv.url}embed.html`;
  let body = '';
  const other = http.createServer((req, res) => res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(body));
  await new Promise((r) => other.listen(0, '127.0.0.1', r));
  const parentOrigin = `http://127.0.0.1:${other.address().port}`;
  body = parentPage([
    ['closed', `${frameBase}#view=train&seed=1`],
    ['open', `${frameBase}#view=train&seed=2&origin=${encodeURIComponent(`${parentOrigin},https://course.example,javascript:alert(1)`)}`],
  ]);
  const context = await browser.newContext({ viewport: { width: 1280, height: 1200 } });
  const page = await context.newPage();
  const errors = [];
  const warnings = warningsOf(page);
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  page.on('pageerror', (e) => errors.push(e.message));
  const url = `${parentOrigin}/lesson.html`;
  await page.goto(url);
  const closed = await (await page.waitForSelector('#closed')).contentFrame();
  const open = await (await page.waitForSelector('#open')).contentFrame();
  await closed.waitForFunction(() => document.querySelector('attention-playground')?.ready);
  await open.waitForFunction(() => document.querySelector('attention-playground')?.ready);
  await page.waitForFunction(() => window.got.some((m) => m.id === 'open' && m.type === 'ready'));

  // The parent (localhost) commands both frames (127.0.0.1).
  await page.evaluate((o) => {
    for (const id of ['closed', 'open']) document.getElementById(id).contentWindow.postMessage({ type: 'step', n: 5 }, o);
  }, new URL(frameBase).origin);
  await waitForStep(open, 5, { root: 'attention-playground' });
  await page.waitForFunction(() => window.got.some((m) => m.id === 'open' && m.type === 'step' && m.detail.step === 5));
  // A sibling frame (same origin as the frames, but not their parent) commands the open one.
  await closed.evaluate(() => parent.frames[1].postMessage({ type: 'step', n: 7 }, '*'));
  // Ignored, each with its warning; then a sentinel from each frame, after which a second warning
  // of either kind would have arrived.
  await warnings.until((lines) => lines.some((w) => /did not come from the parent window/.test(w)) && lines.some((w) => /not in the allowed origins/.test(w)));
  await flushWarnings([closed, open], warnings);
  assert.equal((await frameState(closed)).step, 0, 'the frame without origin= ignored the other origin');
  assert.equal((await frameState(open)).step, 5, 'the open frame ignored its sibling');
  const got = await page.evaluate(() => window.got);
  assert.ok(got.every((m) => m.id === 'open' && m.origin === new URL(m.origin).origin), `only the open frame reached the parent: ${JSON.stringify(got)}`);
  assert.ok(!got.some((m) => m.id === 'closed'), 'the closed frame posts only to its own origin, so the parent hears nothing');
  const warn = (re) => warnings.lines.filter((w) => re.test(w));
  assert.equal(warn(/not in the allowed origins/).length, 1, JSON.stringify(warnings.lines));
  assert.match(warn(/not in the allowed origins/)[0], new RegExp(`ignored a message from "${parentOrigin}"`));
  assert.equal(warn(/did not come from the parent window/).length, 1, JSON.stringify(warnings.lines));
  assert.equal(warn(new RegExp(`not sending events: the parent page's origin "${parentOrigin}" is not among the allowed origins`)).length, 1, JSON.stringify(warnings.lines));
  assert.equal(warn(/origin= entries that are not http\(s\) origins were dropped: "javascript:alert\(1\)"/).length, 1, JSON.stringify(warnings.lines));
  assert.deepEqual(errors, []);
  await context.close();
  await new Promise((r) => other.close(r));
});
