// Loads the attention core (web/wasm/attention-core-{simd,scalar}.js), choosing the SIMD build when
// the engine supports WebAssembly SIMD. Works on the main thread and in module workers.

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

/** Imports one variant's ES module from files.js and instantiates it with the .wasm at files.wasm
 * (both absolute URLs; they need not share a folder, as after a bundler renamed them). */
export async function instantiateCore(files) {
  const { default: createAttentionCore } = await import(/* @vite-ignore */ files.js);
  return createAttentionCore({ locateFile: (path) => (path.endsWith('.wasm') ? files.wasm : new URL(path, files.js).href) });
}

/** Imports the variant's ES module from wasmBase (a directory URL ending in '/', relative to the
 * page or worker when relative) and instantiates it; the .wasm is fetched from the same directory. */
export async function loadAttentionCore(wasmBase, { simd = detectSimd() } = {}) {
  const base = new URL(wasmBase, globalThis.location?.href);
  const name = `attention-core-${simd ? 'simd' : 'scalar'}`;
  return instantiateCore({ js: new URL(`${name}.js`, base).href, wasm: new URL(`${name}.wasm`, base).href });
}
