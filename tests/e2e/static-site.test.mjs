// A plain static site: the lesson's markdown renders a placeholder
// (<div class="lesson-figure" data-figure="attention-playground">), and the few lines of
// web/examples/lesson-figures.js (given in web/docs/embed.md) turn every placeholder into the element,
// including one that appears after the page has loaded (client-side navigation).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT, launch, openRecorded, serveDistWith } from './harness.mjs';

const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Lesson (static site)</title><link rel="icon" href="data:,">
<script type="module" src="./examples/lesson-figures.js"></script></head>
<body><main id="content">
<h1>Attention</h1>
<p>The figure below trains on the shift task.</p>
<div class="lesson-figure" data-figure="attention-playground" id="fig-a" data-seed="4" data-task="shift" data-solved-at="0.5" data-hide="timeline"></div>
</main></body></html>`;

test('placeholders become elements with their data-* settings, also one added after load; web/docs/embed.md gives the same lines', async () => {
  const srv = await serveDistWith({ 'static.html': PAGE });
  const browser = await launch();
  try {
    const { page, errors } = await openRecorded(browser, `${srv.url}static.html`);
    await page.waitForFunction(() => window.__events.some((e) => e.type === 'ready'));
    const a = await page.evaluate(() => {
      const el = document.querySelector('#fig-a attention-playground');
      return { state: el.state, attrs: Object.fromEntries([...el.attributes].map((x) => [x.name, x.value])) };
    });
    assert.equal(a.state.seed, 4);
    assert.equal(a.state.task, 'shift');
    assert.deepEqual(a.attrs, { seed: '4', task: 'shift', 'solved-at': '0.5', hide: 'timeline' });

    // Client-side navigation adds a page with another placeholder.
    await page.evaluate(() => {
      const article = document.createElement('article');
      article.innerHTML = '<h2>Next page</h2><div class="lesson-figure" data-figure="attention-playground" id="fig-b" data-view="lesson" data-seed="9"></div>';
      document.getElementById('content').append(article);
    });
    await page.waitForFunction(() => document.querySelector('#fig-b attention-playground')?.ready === true);
    assert.deepEqual(await page.evaluate(() => document.querySelector('#fig-b attention-playground').state.view), 'lesson');
    assert.equal(await page.evaluate(() => document.querySelectorAll('attention-playground').length), 2);
    // A placeholder of another figure is left alone. The playground's placeholder after it is the
    // barrier: once the script has turned that one, it has looked at fig-c.
    await page.evaluate(() =>
      document.getElementById('content').insertAdjacentHTML('beforeend', '<div class="lesson-figure" data-figure="other" id="fig-c"></div><div class="lesson-figure" data-figure="attention-playground" id="fig-d" data-seed="2"></div>'),
    );
    await page.waitForFunction(() => document.querySelector('#fig-d attention-playground') !== null);
    assert.equal(await page.evaluate(() => document.getElementById('fig-c').children.length), 0);
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await srv.close();
  }
  // web/docs/embed.md's snippet is this file, with the CDN's URL in its import.
  const script = fs.readFileSync(path.join(ROOT, 'web/examples/lesson-figures.js'), 'utf8');
  const readme = fs.readFileSync(path.join(ROOT, 'web/docs/embed.md'), 'utf8');
  const body = script.slice(script.indexOf('const PLACEHOLDER')).trim();
  assert.ok(readme.includes(body), 'web/docs/embed.md gives the lines of web/examples/lesson-figures.js');
});
