// The core under Node: the page's own module, web/wasm/attention-core-<variant>.{js,wasm} (what
// scripts/build-wasm copies there and the page ships), loaded with import() and handed the .wasm's
// bytes, because Node's fetch() cannot read a file (scripts/README.md, Emscripten trap 5). Used by
// the JS API tests, the Vitest tests that drive the worker's code, the benchmarks and the soak run.
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import v8 from 'node:v8';
import { install as installWebWorker } from './web-worker.mjs';
import { detectRelaxedSimd } from '../../web/src/core/load-core.js';

/** Where scripts/build-wasm leaves the page's modules. */
export const WASM_DIR = fileURLToPath(new URL('../../web/wasm/', import.meta.url));

/** A new instance of the core of one variant ('simd', 'scalar', 'threads' or 'relaxed': node 20 runs
 * the last under --experimental-wasm-relaxed-simd) from dir (default
 * WASM_DIR). The threads build starts options.threads - 1 pthread workers (node worker_threads,
 * ./web-worker.mjs) and runs on options.threads threads (default 2). */
export async function createCore(variant = 'simd', dir = WASM_DIR, options = {}) {
  if (!['simd', 'scalar', 'threads', 'relaxed'].includes(variant)) throw new Error(`variant must be simd, scalar, threads or relaxed, got ${JSON.stringify(variant)}`);
  // Node 20 runs relaxed SIMD behind a V8 flag, which NODE_OPTIONS does not accept: set it here,
  // before the module is compiled (Node 22 has it on).
  if (variant === 'relaxed' && !detectRelaxedSimd()) v8.setFlagsFromString('--experimental-wasm-relaxed-simd');
  const glue = path.join(dir, `attention-core-${variant}.js`);
  if (!existsSync(glue)) throw new Error(`${glue} is missing: run scripts/build-wasm ${variant}`);
  // The glue is an ES module in a .js file: Node reads it as one inside web/ (its package.json
  // says "type": "module"), but elsewhere, e.g. a build folder compared by bench/ab.mjs, only
  // under a .mjs name. The threads build's workers import it again, so that copy stays.
  let url = pathToFileURL(glue).href;
  if (path.resolve(dir) !== path.resolve(WASM_DIR)) {
    const tmp = mkdtempSync(path.join(os.tmpdir(), 'attn-core-'));
    const copy = path.join(tmp, `attention-core-${variant}.mjs`);
    copyFileSync(glue, copy);
    url = pathToFileURL(copy).href;
    if (variant === 'threads') {
      copyFileSync(path.join(dir, 'attention-core-threads.worker.js'), path.join(tmp, 'attention-core-threads.worker.mjs'));
      process.once('exit', () => rmSync(tmp, { recursive: true, force: true }));
    } else {
      const { default: create } = await import(url);
      rmSync(tmp, { recursive: true, force: true });
      return create({ wasmBinary: readFileSync(path.join(dir, `attention-core-${variant}.wasm`)) });
    }
  }
  const { default: createAttentionCore } = await import(url);
  const wasmBinary = readFileSync(path.join(dir, `attention-core-${variant}.wasm`));
  if (variant !== 'threads') return createAttentionCore({ wasmBinary });
  installWebWorker();
  const threads = options.threads ?? 2;
  const worker = new URL(url.endsWith('.mjs') ? 'attention-core-threads.worker.mjs' : 'attention-core-threads.worker.js', url).href;
  // The pthread workers do not keep node alive (web-worker.mjs): a timer does while they load.
  const alive = setInterval(() => {}, 1 << 30);
  try {
    const core = await createAttentionCore({ wasmBinary, threadPoolSize: threads - 1, mainScriptUrlOrBlob: url, locateFile: (p) => (p.endsWith('.worker.js') ? worker : new URL(p, url).href) });
    core.setThreads(threads);
    return core;
  } finally {
    clearInterval(alive);
  }
}
