// Where the builds of the core are, as new URL('…', import.meta.url) (Vite's ?url imports
// compile to that pattern): a bundler that installs the npm package copies the files, and a copy
// served from a CDN loads them from the CDN, never relative to the page.
import simdJs from '../../wasm/attention-core-simd.js?url';
import simdWasm from '../../wasm/attention-core-simd.wasm?url';
import scalarJs from '../../wasm/attention-core-scalar.js?url';
import scalarWasm from '../../wasm/attention-core-scalar.wasm?url';
import threadsJs from '../../wasm/attention-core-threads.js?url';
import threadsWasm from '../../wasm/attention-core-threads.wasm?url';
import threadsWorker from '../../wasm/attention-core-threads.worker.js?url';
import relaxedJs from '../../wasm/attention-core-relaxed.js?url';
import relaxedWasm from '../../wasm/attention-core-relaxed.wasm?url';
import type { CoreFiles } from './load-core.js';

/** An absolute URL (the dev server gives root-relative ones). */
export function absolute(url: string): string {
  return new URL(url, import.meta.url).href;
}

/** The SIMD and the scalar build of the core, the relaxed-SIMD build (fetched only where the
 * engine runs relaxed SIMD), and the threads build (SIMD with pthreads, for a
 * cross-origin-isolated page; nothing fetches its files elsewhere). */
export const CORE_FILES: { simd: CoreFiles; scalar: CoreFiles; relaxed: CoreFiles; threads: CoreFiles } = {
  simd: { js: absolute(simdJs), wasm: absolute(simdWasm) },
  relaxed: { js: absolute(relaxedJs), wasm: absolute(relaxedWasm) },
  scalar: { js: absolute(scalarJs), wasm: absolute(scalarWasm) },
  threads: { js: absolute(threadsJs), wasm: absolute(threadsWasm), worker: absolute(threadsWorker) },
};
