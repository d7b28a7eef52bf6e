// Types of load-core.js.
import type { AttentionCore } from './attention-core';

/** Whether this engine runs WebAssembly SIMD (fixed-width, 128-bit). */
export function detectSimd(): boolean;

/** Imports attention-core-{simd,scalar}.js from wasmBase (a directory URL ending in '/', relative
 * to the page or worker when relative) and instantiates it; simd defaults to detectSimd(). */
export function loadAttentionCore(
  wasmBase: string | URL,
  options?: { simd?: boolean },
): Promise<AttentionCore>;
