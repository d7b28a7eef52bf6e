// Types of load-core.js.
import type { AttentionCore } from './attention-core';

/** The two files of one build of the core: the Emscripten ES module and its .wasm (absolute URLs). */
export interface CoreFiles {
  js: string;
  wasm: string;
}

/** Whether this engine runs WebAssembly SIMD (fixed-width, 128-bit). */
export function detectSimd(): boolean;

/** Imports files.js and instantiates it with the .wasm at files.wasm. */
export function instantiateCore(files: CoreFiles): Promise<AttentionCore>;

/** Imports attention-core-{simd,scalar}.js from wasmBase (a directory URL ending in '/', relative
 * to the page or worker when relative) and instantiates it; simd defaults to detectSimd(). */
export function loadAttentionCore(
  wasmBase: string | URL,
  options?: { simd?: boolean },
): Promise<AttentionCore>;
