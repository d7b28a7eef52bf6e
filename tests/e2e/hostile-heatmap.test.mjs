// No NaN is ever drawn into a heatmap: a unit-level check of web/src/draw/heatmap.ts in Chromium.
// The module and what it imports from web/src/draw are transpiled from the sources with TypeScript and loaded in a blank
// page (the palette's virtual module resolved by an import map), then drawHeatmap is given NaN, +-Infinity and valid values.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { ROOT, launch } from './harness.mjs';
import { viridisModuleSource } from '../../web/viridis-lut.mjs';

// /name.js is web/src/draw/name.ts, with what it imports from its folder served the same way.
const DRAW = path.join(ROOT, 'web/src/draw');
/** The palette's virtual module, as the page's build makes it. */
const MODULES = { '/viridis-lut.js': viridisModuleSource() };
const PAGE = `<!doctype html><meta charset="utf-8"><link rel="icon" href="data:,">
<script type="importmap">{"imports": {"virtual:viridis-lut": "/viridis-lut.js"}}</script>
<canvas id="c"></canvas>
<script type="module">
  import * as heatmap from '/heatmap.js';
  import * as colormap from '/colormap.js';
  window.heatmap = heatmap; window.colormap = colormap; window.ready = true;
</script>`;

function transpile(file) {
  const src = fs.readFileSync(file, 'utf8');
  const out = ts.transpileModule(src, { compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext } }).outputText;
  return out.replace(/from '\.\/([\w-]+)'/g, "from '/$1.js'");
}

/** The draw module a path names, or null. */
function drawSource(p) {
  const m = /^\/([\w-]+)\.js$/.exec(p);
  const file = m && path.join(DRAW, `${m[1]}.ts`);
  return file && fs.existsSync(file) ? file : null;
}

let server;
let url;
let browser;
before(async () => {
  server = http.createServer((req, res) => {
    const p = new URL(req.url, 'http://x').pathname;
    if (p === '/') return res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
    if (MODULES[p]) return res.writeHead(200, { 'content-type': 'text/javascript' }).end(MODULES[p]);
    const file = drawSource(p);
    if (file) return res.writeHead(200, { 'content-type': 'text/javascript' }).end(transpile(file));
    res.writeHead(404).end();
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${server.address().port}/`;
  browser = await launch();
});
after(async () => {
  await browser?.close();
  await new Promise((r) => server?.close(r));
});

test('drawHeatmap refuses NaN and infinities and draws nothing; finite values get palette colours only', async () => {
  const page = await browser.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  await page.goto(url);
  await page.waitForFunction(() => window.ready === true);
  const r = await page.evaluate(() => {
    const { drawHeatmap } = window.heatmap;
    const { VIRIDIS_LUT } = window.colormap;
    const canvas = document.getElementById('c');
    const labels = ['a', 'b', 'c'];
    const input = (values) => ({ values: Float32Array.from(values), rows: 3, cols: 3, rowLabels: labels, colLabels: labels, causal: true });
    const pixels = () => Array.from(canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data);
    const good = [1, 0, 0, 0.5, 0.5, 0, 0.2, 0.3, 0.5];
    drawHeatmap(canvas, 120, input(good));
    const before = pixels();
    const refused = [];
    for (const bad of [NaN, Infinity, -Infinity]) {
      const v = good.slice();
      v[4] = bad;
      try {
        drawHeatmap(canvas, 120, input(v));
        refused.push(`drew ${bad}`);
      } catch (e) {
        refused.push(e.message);
      }
    }
    const unchanged = pixels().every((x, i) => x === before[i]);
    // Every pixel of the cells' interior is a viridis colour (no black NaN cell, no garbage):
    // sample the centre of each unmasked cell (the layout: 26 px margin, cell = (120-30)/3 = 30 px).
    const dpr = window.devicePixelRatio || 1;
    const g = canvas.getContext('2d');
    const lut = new Set();
    for (let k = 0; k < 256; ++k) lut.add(`${VIRIDIS_LUT[3 * k]},${VIRIDIS_LUT[3 * k + 1]},${VIRIDIS_LUT[3 * k + 2]}`);
    const off = [];
    for (let i = 0; i < 3; ++i)
      for (let j = 0; j <= i; ++j) {
        const d = g.getImageData(Math.round((26 + 30 * j + 15) * dpr), Math.round((26 + 30 * i + 15) * dpr), 1, 1).data;
        const key = `${d[0]},${d[1]},${d[2]}`;
        if (!lut.has(key)) off.push([i, j, key]);
      }
    return { refused, unchanged, off };
  });
  assert.deepEqual(r.refused, [
    'heatmap: value NaN at row 1, col 1 is not finite',
    'heatmap: value Infinity at row 1, col 1 is not finite',
    'heatmap: value -Infinity at row 1, col 1 is not finite',
  ]);
  assert.equal(r.unchanged, true, 'a refused draw leaves the canvas as it was');
  assert.deepEqual(r.off, [], 'every unmasked cell is a viridis colour');
  assert.deepEqual(errors, []);
  await page.close();
});
