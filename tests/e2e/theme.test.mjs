// The element's theme attribute: auto follows the system's colour scheme, light and dark fix it
// (a course site's own dark toggle), the canvases redraw with the new colours, and the heatmap
// palette is the same perceptual one in both themes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { launch, lessonPage, openRecorded, screenshot, serveDistWith } from './harness.mjs';

const LIGHT = { bg: 'rgb(251, 251, 253)', fg: 'rgb(29, 31, 36)' };
const DARK = { bg: 'rgb(21, 23, 28)', fg: 'rgb(230, 232, 238)' };

let browser;
let srv;
test.before(async () => {
  srv = await serveDistWith({
    'lesson.html': lessonPage('./attention-playground.js', { attrs: 'seed="3" hide="timeline,ablation,backward,selftest,export"' }),
    'framed.html': '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Framed</title><link rel="icon" href="data:,"></head><body><iframe id="f" title="playground" style="width:900px;height:600px" src="embed.html#theme=dark&hide=timeline"></iframe></body></html>',
  });
  browser = await launch();
});
test.after(async () => {
  await browser?.close();
  await srv?.close();
});

/** The element's colours and the first heatmap's frame count and centre pixel. */
function look(page) {
  return page.evaluate(() => {
    const root = document.getElementById('pg').shadowRoot;
    const box = getComputedStyle(root.querySelector('.ap-root'));
    const canvas = root.querySelector('.heatmaps canvas');
    const px = canvas.getContext('2d').getImageData(Math.floor(canvas.width * 0.6), Math.floor(canvas.height * 0.6), 1, 1).data;
    return { bg: box.backgroundColor, fg: box.color, frames: Number(root.querySelector('.heatmaps').dataset.frames), pixel: [...px.slice(0, 3)] };
  });
}

for (const scheme of ['light', 'dark']) {
  test(`system scheme ${scheme}: auto follows it, light and dark fix the colours and redraw, the palette stays`, async () => {
    const { context, page, errors } = await openRecorded(browser, `${srv.url}lesson.html`, { colorScheme: scheme });
    await page.waitForFunction(() => window.__events.some((e) => e.type === 'ready'));
    await page.evaluate(() => document.getElementById('pg').step(50));
    await page.waitForFunction(() => window.__events.some((e) => e.type === 'step' && e.step === 50));
    await page.waitForFunction(() => Number(document.getElementById('pg').shadowRoot.querySelector('.heatmaps').dataset.frames) > 0);

    const auto = await look(page);
    assert.deepEqual({ bg: auto.bg, fg: auto.fg }, scheme === 'dark' ? DARK : LIGHT, 'auto follows the system');
    const other = scheme === 'dark' ? 'light' : 'dark';
    await page.evaluate((t) => document.getElementById('pg').setAttribute('theme', t), other);
    await page.waitForFunction((f) => Number(document.getElementById('pg').shadowRoot.querySelector('.heatmaps').dataset.frames) > f, auto.frames);
    const fixed = await look(page);
    assert.deepEqual({ bg: fixed.bg, fg: fixed.fg }, other === 'dark' ? DARK : LIGHT, `theme=${other} wins over the system`);
    await screenshot(page, `theme-${other}-on-${scheme}.png`);
    // The same weights give the same heatmap colour in both themes (one perceptual palette), and it
    // is a viridis colour, not the background.
    // Within 8 per channel: the sampled pixel can sit on a cell's anti-aliased edge, which blends
    // with the theme's background; another palette would be far more than that away.
    for (let c = 0; c < 3; c++) assert.ok(Math.abs(fixed.pixel[c] - auto.pixel[c]) <= 8, `heatmap pixel ${fixed.pixel} vs ${auto.pixel}`);
    assert.notDeepEqual(`rgb(${auto.pixel.join(', ')})`, auto.bg);

    await page.evaluate(() => document.getElementById('pg').setAttribute('theme', 'auto'));
    await page.waitForFunction((bg) => getComputedStyle(document.getElementById('pg').shadowRoot.querySelector('.ap-root')).backgroundColor === bg, auto.bg);

    // A value that is not a theme: one error naming the attribute, and auto.
    await page.evaluate(() => document.getElementById('pg').setAttribute('theme', 'sepia'));
    await page.waitForFunction(() => window.__events.some((e) => e.type === 'error'));
    const [err] = await page.evaluate(() => window.__events.filter((e) => e.type === 'error'));
    assert.equal(err.attribute, 'theme');
    assert.match(err.message, /^theme: "sepia" is not auto, light or dark; using auto$/);
    assert.deepEqual({ bg: (await look(page)).bg }, { bg: auto.bg });
    assert.deepEqual(errors, []);
    await context.close();
  });
}

test('the iframe page: theme in the hash, and a configure message changes it', async () => {
  const context = await browser.newContext({ colorScheme: 'light' });
  const page = await context.newPage();
  await page.goto(`${srv.url}framed.html`);
  const frame = page.frameLocator('#f');
  const bg = () => frame.locator('attention-playground').evaluate((el) => getComputedStyle(el.shadowRoot.querySelector('.ap-root')).backgroundColor);
  await frame.locator('.heatmaps canvas').first().waitFor();
  assert.equal(await bg(), DARK.bg, '#theme=dark');
  await page.evaluate(() => document.getElementById('f').contentWindow.postMessage({ type: 'configure', config: { theme: 'light' } }, location.origin));
  await frame.locator('attention-playground[theme=light]').waitFor();
  assert.equal(await bg(), LIGHT.bg, 'configure {theme: light}');
  await context.close();
});
