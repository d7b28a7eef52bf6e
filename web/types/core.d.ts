// Types of `attention-playground/core` (web/dist/core.js, built from web/src/core/index.ts): the
// WebAssembly core on its own. The API itself is declared in attention-core.d.ts.
import type { AttentionCore } from '../src/core/attention-core';

export type * from '../src/core/attention-core';

/** Whether this engine runs WebAssembly SIMD. */
export declare function detectSimd(): boolean;

/** Loads the core from the files next to the module: the SIMD build where the engine has it,
 * else the scalar one (or the one `simd` asks for). */
export declare function loadAttentionCore(options?: { simd?: boolean }): Promise<AttentionCore>;
export default loadAttentionCore;
