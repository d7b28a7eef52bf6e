// The npm package as a course site's build uses it: `npm pack --json` makes the tarball (its prepack
// builds web/dist, and the JSON it prints parses), a fresh Vite app in a temp folder installs it,
// imports `attention-playground` (and `attention-playground/core`), puts <attention-playground> in
// its page and runs `vite build`; the built app is served and the element must reach `solved`, in
// Chromium and in Firefox. The package's types check in the app.
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
let packed;
let tarball;
let srv;

const npm = (args, cwd) => execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, npm_config_fund: 'false', npm_config_audit: 'false', npm_config_update_notifier: 'false' } });

/**
 * A copy of the working tree (the files git tracks or would track, and the built web/wasm) in dir,
 * with node_modules linked: `npm pack` runs its prepack there, so the build does not rewrite the
 * web/dist that the other test files are serving meanwhile. web/wasm is touched: the prepack packs
 * the wasm as built and never starts a wasm build.
 */
function copyTree(dir) {
  const listed = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' }).split('\0').filter(Boolean);
  for (const rel of listed) {
    const from = path.join(ROOT, rel);
    if (!fs.existsSync(from)) continue; // deleted in the working tree, not yet in the index
    fs.mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    fs.cpSync(from, path.join(dir, rel), { preserveTimestamps: true });
  }
  const wasm = path.join(ROOT, 'web/wasm');
  if (!fs.existsSync(path.join(wasm, 'attention-core-simd.wasm'))) throw new Error('web/wasm is not built; run scripts/build-web');
  fs.cpSync(wasm, path.join(dir, 'web/wasm'), { recursive: true });
  const now = new Date();
  for (const f of fs.readdirSync(path.join(dir, 'web/wasm'))) fs.utimesSync(path.join(dir, 'web/wasm', f), now, now);
  fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'));
}

test.before(() => {
  const tree = path.join(work, 'tree');
  copyTree(tree);
  // As a release tool runs it: prepack builds web/dist; stdout must be npm's JSON alone.
  packed = npm(['pack', '--json', '--pack-destination', work], tree);
});
test.after(async () => {
  await srv?.close();
});

test('npm pack --json prints only JSON (the prepack build logs to stderr), naming the tarball it wrote', () => {
  let out;
  assert.doesNotThrow(() => {
    out = JSON.parse(packed);
  }, `npm pack --json printed more than JSON: ${packed.slice(0, 300)}`);
  assert.equal(out.length, 1);
  assert.equal(out[0].name, pkg.name);
  assert.equal(out[0].version, pkg.version);
  assert.equal(out[0].filename, `attention-playground-${pkg.version}.tgz`);
  assert.ok(out[0].files.some((f) => f.path === 'web/dist/attention-playground.js'), 'the JSON lists the built files');
  tarball = path.join(work, out[0].filename);
  assert.ok(fs.statSync(tarball).size > 0, `${tarball} was written`);
});

test('npm pack: attention-playground-<version>.tgz with exports, types, files, sideEffects and a README', () => {
  assert.ok(tarball, 'npm pack --json named the tarball');
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
  // Closed on failure too: an open browser (or connection) would keep this file's process alive.
  try {
    const { page, errors } = await openRecorded(browser, url);
    await page.waitForFunction(() => window.__events.some((e) => e.type === 'ready'));
    await page.evaluate(() => document.getElementById('pg').play());
    await page.waitForFunction(() => window.__events.some((e) => e.type === 'solved'));
    assert.match(await page.title(), /^solved at step \d+ \(loss 0\.0\d\d\)$/);
    assert.match(await page.textContent('#core-check'), /^core: loss at init \d\.\d{4}$/);
    assert.ok(page.workers().every((w) => !w.url().startsWith('blob:')), 'same origin: no blob: bootstrap');
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
  }
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
