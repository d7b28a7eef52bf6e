import type { AttentionCore } from '../../web/src/core/attention-core';

/** Where scripts/build-wasm leaves the page's modules. */
export const WASM_DIR: string;
/** A new instance of the core of one variant, from dir (default WASM_DIR); the threads build runs
 * on options.threads threads (default 2). */
export function createCore(variant?: 'simd' | 'scalar' | 'threads', dir?: string, options?: { threads?: number }): Promise<AttentionCore>;
