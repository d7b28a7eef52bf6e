// The core under Node: the page's own module, web/wasm/attention-core-<variant>.{js,wasm} (what
// scripts/build-wasm copies there and the page ships), loaded with import() and handed the .wasm's
// bytes, because Node's fetch() cannot read a file (scripts/README.md, Emscripten trap 5). Used by
// the JS API tests, the Vitest tests that drive the worker's code, the benchmarks and the soak run.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** Where scripts/build-wasm leaves the page's modules. */
export const WASM_DIR = fileURLToPath(new URL('../../web/wasm/', import.meta.url));

/** A new instance of the core of one variant ('simd' or 'scalar'), from dir (default WASM_DIR). */
export async function createCore(variant = 'simd', dir = WASM_DIR) {
  if (variant !== 'simd' && variant !== 'scalar') throw new Error(`variant must be simd or scalar, got ${JSON.stringify(variant)}`);
  const glue = path.join(dir, `attention-core-${variant}.js`);
  if (!existsSync(glue)) throw new Error(`${glue} is missing: run scripts/build-wasm ${variant}`);
  const { default: createAttentionCore } = await import(pathToFileURL(glue).href);
  return createAttentionCore({ wasmBinary: readFileSync(path.join(dir, `attention-core-${variant}.wasm`)) });
}
