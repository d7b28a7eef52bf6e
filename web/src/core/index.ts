// Entry of the npm package's `attention-playground/core` (dist/core.js): the wasm core on its own,
// for code that calls the JS API directly (see cpp/wasm/README.md, "The JS API"). The .js and .wasm files are
// found next to this module, so a bundler copies them and a CDN serves them.
import type { AttentionCore } from './attention-core';
import { CORE_FILES } from './core-files';
import { detectRelaxedSimd, detectSimd, instantiateCore } from './load-core.js';

export type * from './attention-core';
export { detectRelaxedSimd, detectSimd };

/** Loads and instantiates the core: the relaxed-SIMD build where the engine runs relaxed SIMD,
 * else the SIMD build where it has WebAssembly SIMD, else the scalar one (or the ones `simd` and
 * `relaxed` ask for). Only the chosen build is fetched. */
export function loadAttentionCore(options: { simd?: boolean; relaxed?: boolean } = {}): Promise<AttentionCore> {
  const simd = options.simd ?? detectSimd();
  const relaxed = simd && (options.relaxed ?? detectRelaxedSimd());
  return instantiateCore(!simd ? CORE_FILES.scalar : relaxed ? CORE_FILES.relaxed : CORE_FILES.simd);
}

/** The same, as the default export. */
export default loadAttentionCore;
