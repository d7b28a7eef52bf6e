// Types of load-core.js.
import type { AttentionCore } from './attention-core';

/** The files of one build of the core: the Emscripten ES module and its .wasm (absolute URLs),
 * and for the threads build its pthread worker. */
export interface CoreFiles {
  js: string;
  wasm: string;
  worker?: string;
}

/** Whether this engine runs WebAssembly SIMD (fixed-width, 128-bit). */
export function detectSimd(): boolean;

/** Whether this engine runs relaxed SIMD (f32x4.relaxed_madd). */
export function detectRelaxedSimd(): boolean;

/** A one-thread build of the core. */
export type CoreBuild = 'relaxed' | 'simd' | 'scalar';

/** The one-thread build to load here: 'relaxed' where the engine runs relaxed SIMD, else 'simd'
 * where it runs SIMD, else 'scalar'; force ('simd' or 'scalar') caps it. */
export function pickBuild(force?: 'simd' | 'scalar'): CoreBuild;

/** Imports files.js and instantiates it with the .wasm at files.wasm; the threads build starts
 * options.threadPoolSize pthread workers with the module. */
export function instantiateCore(files: CoreFiles, options?: { threadPoolSize?: number }): Promise<AttentionCore>;

/** Threads the threads build would run here: 0 unless the page is cross-origin isolated, else
 * navigator.hardwareConcurrency capped at maxThreads (default 4). */
export function threadsAvailable(maxThreads?: number): number;

/** The threads build running n threads, or null when it cannot start here. */
export function instantiateThreaded(files: CoreFiles, n: number): Promise<AttentionCore | null>;

/** Imports attention-core-{relaxed,simd,scalar}.js from wasmBase (a directory URL ending in '/',
 * relative to the page or worker when relative) and instantiates it: the scalar build unless simd
 * (default detectSimd()), then the relaxed-SIMD one if relaxed (default detectRelaxedSimd()). */
export function loadAttentionCore(
  wasmBase: string | URL,
  options?: { simd?: boolean; relaxed?: boolean },
): Promise<AttentionCore>;
