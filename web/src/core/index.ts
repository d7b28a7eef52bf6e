// Entry of the npm package's `attention-playground/core` (dist/core.js): the wasm core on its own,
// for code that calls the JS API directly (see cpp/wasm/README.md, "The JS API"). The .js and .wasm files are
// found next to this module, so a bundler copies them and a CDN serves them.
import type { AttentionCore } from './attention-core';
import { CORE_FILES } from './core-files';
import { detectSimd, instantiateCore } from './load-core.js';

export type * from './attention-core';
export { detectSimd };

/** Loads and instantiates the core: the SIMD build where the engine has WebAssembly SIMD, else
 * the scalar one (or the one `simd` asks for). */
export function loadAttentionCore(options: { simd?: boolean } = {}): Promise<AttentionCore> {
  const simd = options.simd ?? detectSimd();
  return instantiateCore(simd ? CORE_FILES.simd : CORE_FILES.scalar);
}

/** The same, as the default export. */
export default loadAttentionCore;
