// Loads the attention core (web/wasm/attention-core-{relaxed,simd,scalar}.js), choosing the
// relaxed-SIMD build where the engine runs relaxed SIMD, else the SIMD build where it runs
// WebAssembly SIMD, else the scalar one. Works on the main thread and in module workers.

// The smallest module using a SIMD instruction: (func (result v128) i32.const 0 i8x16.splat
// i8x16.popcnt). WebAssembly.validate accepts it only where SIMD is supported.
const SIMD_PROBE = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 10, 1, 8, 0, 65, 0, 253, 15,
  253, 98, 11,
]);

/** Whether this engine runs WebAssembly SIMD (fixed-width, 128-bit). */
export function detectSimd() {
  return WebAssembly.validate(SIMD_PROBE);
}

// The smallest module using the instruction the relaxed-SIMD build relies on, with its final
// opcode (0xfd 0x105; the prototype's 0xfd 0xaf was never shipped): (func (result v128)
// i32.const 0 i8x16.splat (three times) f32x4.relaxed_madd).
const RELAXED_SIMD_PROBE = new Uint8Array([
  0, 97, 115, 109, 1, 0, 0, 0, 1, 5, 1, 96, 0, 1, 123, 3, 2, 1, 0, 10, 19, 1, 17, 0, 65, 0, 253, 15,
  65, 0, 253, 15, 65, 0, 253, 15, 253, 133, 2, 11,
]);

/** Whether this engine runs relaxed SIMD (f32x4.relaxed_madd): Chromium 114+, Node 22+ (Node 20
 * under --experimental-wasm-relaxed-simd); not Firefox ESR 128 or 140, nor Safari. */
export function detectRelaxedSimd() {
  return WebAssembly.validate(RELAXED_SIMD_PROBE);
}

/** Imports one variant's ES module from files.js and instantiates it with the .wasm at files.wasm
 * (absolute URLs; they need not share a folder, as after a bundler renamed them). The threads
 * build also needs files.worker (its pthread worker) and options.threadPoolSize, the pthread
 * workers it starts with the module. */
export async function instantiateCore(files, options = {}) {
  const { default: createAttentionCore } = await import(/* @vite-ignore */ files.js);
  const locateFile = (path) => (path.endsWith('.wasm') ? files.wasm : path.endsWith('.worker.js') && files.worker ? files.worker : new URL(path, files.js).href);
  return createAttentionCore({ locateFile, ...(options.threadPoolSize !== undefined && { threadPoolSize: options.threadPoolSize }) });
}

/** Threads the threads build would run here: 0 where it cannot (the page is not cross-origin
 * isolated, so no SharedArrayBuffer can be shared with workers), else navigator.hardwareConcurrency
 * capped at maxThreads. */
export function threadsAvailable(maxThreads = 4) {
  if (!globalThis.crossOriginIsolated || typeof SharedArrayBuffer !== 'function') return 0;
  const cores = globalThis.navigator?.hardwareConcurrency ?? 1;
  return Math.max(1, Math.min(maxThreads, cores));
}

/** The threads build with n threads (n - 1 pthread workers and the calling thread), or null
 * when it cannot start here (then the caller loads the one-thread build; nothing is logged). */
export async function instantiateThreaded(files, n) {
  try {
    const core = await instantiateCore(files, { threadPoolSize: n - 1 });
    core.setThreads(n);
    return core;
  } catch {
    return null;
  }
}

/** The one-thread build to load here: 'relaxed' where the engine runs relaxed SIMD, else 'simd'
 * where it runs SIMD, else 'scalar'; force ('simd' or 'scalar') caps it. */
export function pickBuild(force) {
  if (force === 'scalar' || !detectSimd()) return 'scalar';
  return force !== 'simd' && detectRelaxedSimd() ? 'relaxed' : 'simd';
}

/** Imports the variant's ES module from wasmBase (a directory URL ending in '/', relative to the
 * page or worker when relative) and instantiates it; the .wasm is fetched from the same directory.
 * simd false: the scalar build; else relaxed (default: where the engine runs it) picks the
 * relaxed-SIMD build over the SIMD one. */
export async function loadAttentionCore(wasmBase, { simd = detectSimd(), relaxed = simd && detectRelaxedSimd() } = {}) {
  const base = new URL(wasmBase, globalThis.location?.href);
  const name = `attention-core-${!simd ? 'scalar' : relaxed ? 'relaxed' : 'simd'}`;
  return instantiateCore({ js: new URL(`${name}.js`, base).href, wasm: new URL(`${name}.wasm`, base).href });
}
