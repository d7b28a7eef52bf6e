// The core under Node: the page's own module, web/wasm/attention-core-<variant>.{js,wasm} (what
// scripts/build-wasm copies there and the page ships), loaded with import() and handed the .wasm's
// bytes, because Node's fetch() cannot read a file (scripts/README.md, Emscripten trap 5). Used by
// the JS API tests, the Vitest tests that drive the worker's code, the benchmarks and the soak run.
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** Where scripts/build-wasm leaves the page's modules. */
export const WASM_DIR = fileURLToPath(new URL('../../web/wasm/', import.meta.url));

/** A new instance of the core of one variant ('simd' or 'scalar'), from dir (default WASM_DIR). */
export async function createCore(variant = 'simd', dir = WASM_DIR) {
  if (variant !== 'simd' && variant !== 'scalar') throw new Error(`variant must be simd or scalar, got ${JSON.stringify(variant)}`);
  const glue = path.join(dir, `attention-core-${variant}.js`);
  if (!existsSync(glue)) throw new Error(`${glue} is missing: run scripts/build-wasm ${variant}`);
  // The glue is an ES module in a .js file: Node reads it as one inside web/ (its package.json
  // says "type": "module"), but elsewhere, e.g. a build folder compared by bench/ab.mjs, only
  // under a .mjs name.
  let createAttentionCore;
  if (path.resolve(dir) === path.resolve(WASM_DIR)) {
    ({ default: createAttentionCore } = await import(pathToFileURL(glue).href));
  } else {
    const tmp = mkdtempSync(path.join(os.tmpdir(), 'attn-core-'));
    try {
      const copy = path.join(tmp, `attention-core-${variant}.mjs`);
      copyFileSync(glue, copy);
      ({ default: createAttentionCore } = await import(pathToFileURL(copy).href));
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }
  return createAttentionCore({ wasmBinary: readFileSync(path.join(dir, `attention-core-${variant}.wasm`)) });
}
