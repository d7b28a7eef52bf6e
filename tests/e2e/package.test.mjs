// The npm package as a course site's build uses it: `npm pack` makes the tarball, a fresh Vite app
// in a temp folder installs it, imports `attention-playground` (and `attention-playground/core`),
// puts <attention-playground> in its page and runs `vite build`; the built app is served and the
// element must reach `solved`, in Chromium and in Firefox. The package's types check in the app.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT, RECORD_EVENTS, launch, openRecorded, serve } from './harness.mjs';
import { launchFirefox, openFirefoxPage, waitFor } from './firefox.mjs';

const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'ap-pkg-'));
const app = path.join(work, 'lesson-app');
let tarball;
let srv;

const npm = (args, cwd) => execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, npm_config_fund: 'false', npm_config_audit: 'false', npm_config_update_notifier: 'false' } });

test.before(() => {
  // web/dist was just built by scripts/test-e2e; --ignore-scripts skips prepack's second build.
  const out = JSON.parse(npm(['pack', '--json', '--ignore-scripts', '--pack-destination', work], ROOT));
  tarball = path.join(work, out[0].filename);
});
test.after(async () => {
  await srv?.close();
});

test('npm pack: attention-playground-<version>.tgz with exports, types, files, sideEffects and a README', () => {
  assert.equal(path.basename(tarball), `attention-playground-${pkg.version}.tgz`);
  const listing = execFileSync('tar', ['-tzf', tarball], { encoding: 'utf8' }).split('\n').filter(Boolean);
  for (const f of ['package.json', 'README.md', 'web/dist/attention-playground.js', 'web/dist/core.js', 'web/dist/embed.html', 'web/dist/wasm/attention-core-simd.wasm', 'web/dist/wasm/attention-core-scalar.wasm', 'web/dist/reference/short.weights.safetensors', 'web/dist/types/element/index.d.ts', 'web/dist/types/element/element.d.ts', 'web/dist/types/core/index.d.ts', 'web/dist/types/core/attention-core.d.ts', 'web/dist/types/core/load-core.d.ts']) {
    assert.ok(listing.includes(`package/${f}`), `${f} is in the tarball`);
  }
  assert.ok(!listing.some((f) => /package\/(cpp|tests|bench|scripts)\//.test(f)), 'no sources or tests');
  assert.ok(!listing.some((f) => f.startsWith('package/web/dist/examples/')), 'no example pages');
  const shipped = JSON.parse(execFileSync('tar', ['-xzOf', tarball, 'package/package.json'], { encoding: 'utf8' }));
  assert.deepEqual(Object.keys(shipped.exports), ['.', './core', './embed.html', './package.json']);
  assert.equal(shipped.exports['.'].default, './web/dist/attention-playground.js');
  assert.equal(shipped.exports['./core'].default, './web/dist/core.js');
  assert.equal(shipped.exports['./embed.html'], './web/dist/embed.html');
  assert.ok(shipped.types && shipped.files && shipped.sideEffects);
  assert.equal(shipped.dependencies, undefined, 'everything is bundled: no runtime dependency');
});

test('a fresh Vite app installs the tarball, type-checks against it and builds', () => {
  fs.mkdirSync(path.join(app, 'src'), { recursive: true });
  fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'lesson-app', private: true, type: 'module', scripts: { build: 'vite build' } }, null, 2));
  fs.writeFileSync(
    path.join(app, 'index.html'),
    `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Lesson app</title><link rel="icon" href="data:,"></head>
<body><h1>Attention, lesson 3</h1>
<attention-playground id="pg" seed="3" solved-at="0.1" hide="timeline"></attention-playground>
<p id="core-check"></p>
<script type="module" src="/src/main.ts"></script></body></html>`,
  );
  fs.writeFileSync(
    path.join(app, 'src/main.ts'),
    `import 'attention-playground';
import type { AttentionPlaygroundElement, StepDetail } from 'attention-playground';
import { loadAttentionCore } from 'attention-playground/core';

const pg: AttentionPlaygroundElement = document.querySelector('attention-playground')!;
pg.addEventListener('solved', (e) => {
  const { step, loss } = (e as CustomEvent<StepDetail>).detail;
  document.title = \`solved at step \${step} (loss \${loss.toFixed(3)})\`;
});
// The core on its own, from the same package.
const core = await loadAttentionCore();
const trainer = new core.Trainer({ seed: 1 });
document.getElementById('core-check')!.textContent = \`core: loss at init \${trainer.peekLoss().toFixed(4)}\`;
trainer.delete();
`,
  );
  fs.writeFileSync(path.join(app, 'tsconfig.json'), JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'ESNext', moduleResolution: 'Bundler', lib: ['ES2022', 'DOM'], strict: true, noEmit: true, skipLibCheck: false }, include: ['src'] }, null, 2));
  // The same Vite as this repository's lockfile (from npm's cache when it is there).
  npm(['install', '--prefer-offline', '--no-audit', '--no-fund', tarball, `vite@${pkg.devDependencies.vite}`, `typescript@${pkg.devDependencies.typescript}`], app);
  execFileSync(path.join(app, 'node_modules/.bin/tsc'), ['-p', app], { stdio: 'pipe' });
  execFileSync(path.join(app, 'node_modules/.bin/vite'), ['build', '--logLevel', 'warn'], { cwd: app, stdio: 'pipe' });
  const built = fs.readdirSync(path.join(app, 'dist/assets'));
  assert.ok(built.some((f) => /^attention-core-simd-.*\.wasm$/.test(f)), `the bundler copied the wasm: ${built}`);
  assert.ok(built.some((f) => /^worker-.*\.js$/.test(f)), `the bundler copied the worker: ${built}`);
  assert.ok(built.some((f) => /^short\.expected-.*\.safetensors$/.test(f)), `the bundler copied the reference files: ${built}`);
});

/** Serves the app's dist at the site root, as `vite build` assumes by default. */
async function serveApp() {
  srv ??= await serve(path.join(app, 'dist'), { subPath: '/' });
  return srv.url;
}

test('the built app in Chromium: the element reaches solved, the core loads, no error', async () => {
  const url = await serveApp();
  const browser = await launch();
  const { page, errors } = await openRecorded(browser, url);
  await page.waitForFunction(() => window.__events.some((e) => e.type === 'ready'), null, { timeout: 30000 });
  await page.evaluate(() => document.getElementById('pg').play());
  await page.waitForFunction(() => window.__events.some((e) => e.type === 'solved'), null, { timeout: 60000 });
  assert.match(await page.title(), /^solved at step \d+ \(loss 0\.0\d\d\)$/);
  assert.match(await page.textContent('#core-check'), /^core: loss at init \d\.\d{4}$/);
  assert.ok(page.workers().every((w) => !w.url().startsWith('blob:')), 'same origin: no blob: bootstrap');
  assert.deepEqual(errors, []);
  await browser.close();
});

test('the built app in Firefox ESR (WebDriver BiDi): the element reaches solved, the core loads, no error', async () => {
  const url = await serveApp();
  const browser = await launchFirefox();
  try {
    const { page, errors } = await openFirefoxPage(browser, url, { init: RECORD_EVENTS });
    await waitFor(page, () => window.__events.some((e) => e.type === 'ready'));
    await page.evaluate(() => document.getElementById('pg').play());
    await waitFor(page, () => window.__events.some((e) => e.type === 'solved'));
    assert.match(await page.title(), /^solved at step \d+ \(loss 0\.0\d\d\)$/);
    assert.match(await page.$eval('#core-check', (el) => el.textContent), /^core: loss at init \d\.\d{4}$/);
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
  }
});
